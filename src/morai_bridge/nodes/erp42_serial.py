"""erp42_serial: drive an ERP-42 (or the simulator's ERP-42 serial mode) from /ctrl_cmd.

Thin ROS shell over :class:`morai_bridge.serial_link.Erp42Link`; parameters
and topics are documented in docs/ros_api.md.
"""
import dataclasses
import math
import time

import rospy
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import Quaternion, TwistStamped
from nav_msgs.msg import Odometry
from std_msgs.msg import Bool, Int32

import diagnostic_updater
from morai_msgs.msg import CtrlCmd, EgoVehicleStatus, ERP42Info

from morai_bridge.ros.params import Param, ParamError, load
from morai_bridge.serial_link import Erp42Link
from morai_bridge.wire import erp42

_D = erp42.DEFAULT_PARAMS

PARAMS = [
    Param('port', _D.port, 'serial device of the PCU (prefer /dev/serial/by-id/...)'),
    Param('baud', _D.baud, 'baud rate (115200 by protocol)', minimum=1),
    Param('rate_hz', _D.rate_hz, 'command frame rate [Hz]', minimum=1.0, maximum=200.0),
    Param('cmd_timeout_s', _D.cmd_timeout_s, 'send stop frames when no command came for this long [s]',
          minimum=0.02, maximum=0.9),
    Param('feedback_timeout_s', _D.feedback_timeout_s, 'feedback older than this is stale [s]', minimum=0.01),
    Param('reconnect_period_s', _D.reconnect_period_s, 'longest retry interval when the device exists but fails to open [s]', minimum=0.05),
    Param('shutdown_stop_s', _D.shutdown_stop_s, 'stop frames sent on shutdown for this long [s]', minimum=0.0),
    Param('shutdown_estop', _D.shutdown_estop, 'set E-STOP in the shutdown frames'),
    Param('max_speed_kmh', _D.max_speed_kmh, 'speed command clamp [km/h], <= 20'),
    Param('max_steer_deg', _D.max_steer_deg, 'steering command clamp [deg], <= 28.17'),
    Param('steering_offset_deg', _D.steering_offset_deg, 'steering trim added to commands [deg, left +]'),
    Param('brake_min', _D.brake_min, 'BRAKE value meaning no braking'),
    Param('brake_max', _D.brake_max, 'BRAKE value meaning full braking (150 V3.0 firmware, 200 others)'),
    Param('feedback_steer_sign', _D.feedback_steer_sign, 'multiplies feedback STEER into the command sign',
          choices=(-1, 1)),
    Param('encoder_enabled', _D.encoder_enabled, 'false with the MORAI simulator (no encoder)'),
    Param('encoder_ppr', _D.encoder_ppr, 'encoder counts per wheel revolution'),
    Param('encoder_sign', _D.encoder_sign, '+1 if ENC grows when driving forward', choices=(-1, 1)),
    Param('wheel_radius_m', _D.wheel_radius_m, 'wheel radius [m]'),
    Param('wheelbase_m', _D.wheelbase_m, 'wheelbase [m]'),
    Param('gear_interlock', _D.gear_interlock, 'change direction only at standstill'),
    Param('throttle_mode', True, 'accept longlCmdType 1 as a speed of accel x max_speed_kmh'),
    Param('frame_id', 'base_link', 'frame of ego_status and twist'),
    Param('odom_frame_id', 'odom', 'parent frame of the wheel odometry'),
    Param('ctrl_cmd_topic', 'ctrl_cmd', 'morai_msgs/CtrlCmd input'),
    Param('estop_topic', '~estop', 'std_msgs/Bool: true holds E-STOP'),
    Param('erp42_info_topic', '~erp42_info', 'morai_msgs/ERP42Info output'),
    Param('ego_status_topic', '~ego_status', 'morai_msgs/EgoVehicleStatus output'),
    Param('encoder_topic', '~encoder', 'std_msgs/Int32 raw encoder count'),
    Param('twist_topic', '~twist', 'geometry_msgs/TwistStamped from speed and steering'),
    Param('odom_topic', '~odom', 'nav_msgs/Odometry, dead reckoning from encoder (or speed) and steering'),
    Param('ground_truth_topic', '', 'optional morai_msgs/EgoVehicleStatus (e.g. /Ego_topic) for position/yaw'),
]

MODE_TEXT = {0: 'MANUAL', 1: 'AUTO'}
GEAR_TEXT = {0: 'forward', 1: 'neutral', 2: 'backward'}


class Erp42Node(object):

    def __init__(self, cfg):
        self.cfg = cfg
        known = {f.name for f in dataclasses.fields(erp42.Erp42Params)}
        self.params = erp42.Erp42Params.from_mapping({k: v for k, v in cfg.items() if k in known})
        self.pub_info = rospy.Publisher(cfg.erp42_info_topic, ERP42Info, queue_size=1)
        self.pub_ego = rospy.Publisher(cfg.ego_status_topic, EgoVehicleStatus, queue_size=1)
        self.pub_enc = rospy.Publisher(cfg.encoder_topic, Int32, queue_size=1)
        self.pub_twist = rospy.Publisher(cfg.twist_topic, TwistStamped, queue_size=1)
        self.pub_odom = rospy.Publisher(cfg.odom_topic, Odometry, queue_size=1)
        self.truth = None
        self.prev_enc = None
        self.odom = [0.0, 0.0, 0.0]   # x, y, yaw (rad)
        self.prev_t = None
        self.last_reject = ''
        self.link = Erp42Link(self.params, on_feedback=self.on_feedback, on_state=self.on_state,
                              throttle_mode=cfg.throttle_mode)
        self.updater = diagnostic_updater.Updater()
        self.updater.setHardwareID('erp42:%s' % cfg.port)
        self.updater.add('ERP-42 serial link', self.diag_link)
        self.updater.add('ERP-42 PCU state', self.diag_pcu)
        rospy.Subscriber(cfg.ctrl_cmd_topic, CtrlCmd, self.on_ctrl, queue_size=1)
        rospy.Subscriber(cfg.estop_topic, Bool, lambda m: self.link.set_estop(m.data), queue_size=1)
        if cfg.ground_truth_topic:
            rospy.Subscriber(cfg.ground_truth_topic, EgoVehicleStatus, self.on_truth, queue_size=1)
        self.timer = rospy.Timer(rospy.Duration(1.0), lambda ev: self.updater.update())

    def start(self):
        self.link.start()
        if not self.link.connected:
            rospy.logwarn('erp42_serial: %s; waiting for it (retry up to every %.1f s)', self.link.stats.last_error,
                          self.params.reconnect_period_s)

    # -- inputs ------------------------------------------------------------

    def on_ctrl(self, m):
        try:
            self.link.set_ctrl(m.longlCmdType, m.accel, m.brake, m.steering, m.velocity, m.acceleration)
        except erp42.CommandRejected as e:
            self.last_reject = str(e)
            rospy.logwarn_throttle(2.0, 'erp42_serial: %s' % e)

    def on_truth(self, m):
        self.truth = m

    def on_state(self, text):
        rospy.logwarn('erp42_serial: %s', text)

    # -- outputs -----------------------------------------------------------

    def on_feedback(self, fb, t_mono):
        p = self.params
        v = erp42.feedback_to_values(fb, p)
        stamp = rospy.Time.now()
        info = ERP42Info()
        info.longlCmdType = erp42.LONGL_CMD_VELOCITY if self.link._sending_fresh else 0
        info.velocity = v.velocity_kmh
        info.steering = v.steering_deg
        ego = EgoVehicleStatus()
        ego.header.stamp = stamp
        ego.header.frame_id = self.cfg.frame_id
        ego.velocity.x = v.velocity_mps
        ego.wheel_angle = v.steering_deg
        ego.brake = v.brake
        truth = self.truth
        if truth is not None:
            info.position_x, info.position_y, info.position_z = (
                truth.position.x, truth.position.y, truth.position.z)
            info.yaw = truth.heading
            ego.position = truth.position
            ego.heading = truth.heading
            ego.acceleration = truth.acceleration
        self.pub_info.publish(info)
        self.pub_ego.publish(ego)

        yaw_rate = v.velocity_mps * math.tan(math.radians(v.steering_deg)) / p.wheelbase_m
        tw = TwistStamped()
        tw.header.stamp, tw.header.frame_id = stamp, self.cfg.frame_id
        tw.twist.linear.x = v.velocity_mps
        tw.twist.angular.z = yaw_rate
        self.pub_twist.publish(tw)

        # Dead reckoning: travel from the encoder when there is one, else speed x dt.
        if p.encoder_enabled:
            self.pub_enc.publish(Int32(fb.enc))
            ds = 0.0 if self.prev_enc is None else erp42.encoder_travel_m(
                erp42.encoder_delta(self.prev_enc, fb.enc), p)
            self.prev_enc = fb.enc
        else:
            ds = 0.0 if self.prev_t is None else v.velocity_mps * (t_mono - self.prev_t)
        self.prev_t = t_mono
        x, y, yaw = self.odom
        dyaw = ds * math.tan(math.radians(v.steering_deg)) / p.wheelbase_m
        x += ds * math.cos(yaw + dyaw / 2.0)
        y += ds * math.sin(yaw + dyaw / 2.0)
        yaw = math.atan2(math.sin(yaw + dyaw), math.cos(yaw + dyaw))
        self.odom = [x, y, yaw]
        od = Odometry()
        od.header.stamp, od.header.frame_id = stamp, self.cfg.odom_frame_id
        od.child_frame_id = self.cfg.frame_id
        od.pose.pose.position.x, od.pose.pose.position.y = x, y
        od.pose.pose.orientation = Quaternion(0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0))
        od.twist.twist = tw.twist
        self.pub_odom.publish(od)

    def diag_link(self, stat):
        s, f, link = self.link.stats, self.link.framer, self.link
        if not link.connected:
            stat.summary(DiagnosticStatus.ERROR, 'port %s closed: %s' % (self.params.port, s.last_error))
        else:
            fb = link.last_feedback
            age = None if fb is None else time.monotonic() - fb[1]
            if fb is None:
                if f.bytes_received:
                    stat.summary(DiagnosticStatus.ERROR, 'bytes but no valid frames: wrong baud rate or a '
                                 'different firmware variant?')
                else:
                    stat.summary(DiagnosticStatus.ERROR, 'no feedback from the PCU yet')
            elif age > 1.0:
                stat.summary(DiagnosticStatus.ERROR, 'feedback lost (%.1f s old)' % age)
            elif age > self.params.feedback_timeout_s:
                stat.summary(DiagnosticStatus.WARN, 'feedback stale (%.2f s old)' % age)
            elif link._sending_fresh:
                stat.summary(DiagnosticStatus.OK, 'sending commands')
            else:
                stat.summary(DiagnosticStatus.OK if s.commands_accepted == 0 else DiagnosticStatus.WARN,
                             'no fresh command: sending stop frames (speed 0, full brake)')
        stat.add('port', self.params.port)
        stat.add('connected', str(link.connected))
        stat.add('frames sent', s.frames_sent)
        stat.add('stop frames sent', s.stop_frames_sent)
        stat.add('command timeouts', s.timeouts)
        stat.add('commands accepted', s.commands_accepted)
        stat.add('commands rejected', s.commands_rejected)
        stat.add('last rejected command', self.last_reject)
        stat.add('feedback frames', f.frames_ok)
        stat.add('bytes received', f.bytes_received)
        stat.add('bytes discarded', f.bytes_discarded)
        stat.add('candidates rejected', f.candidates_rejected)
        stat.add('soft-check violations', f.soft_violations)
        stat.add('feedback ALIVE gaps', f.alive_gaps)
        stat.add('write errors', s.write_errors)
        stat.add('read errors', s.read_errors)
        stat.add('reconnects', s.reconnects)
        stat.add('outages', len(s.outages))
        stat.add('outage durations [s]', ' '.join('%.2f' % (b - a) if b else 'ongoing' for a, b in s.outages[-10:]))
        stat.add('last error', s.last_error)
        return stat

    def diag_pcu(self, stat):
        fb = self.link.last_feedback
        if fb is None:
            stat.summary(DiagnosticStatus.WARN, 'no feedback yet')
            return stat
        fb = fb[0]
        mode = MODE_TEXT.get(fb.aorm, '?')
        if fb.estop:
            stat.summary(DiagnosticStatus.WARN, 'E-STOP active (or AUTO_FAIL)')
        elif fb.aorm == 0:
            stat.summary(DiagnosticStatus.WARN, 'PCU in MANUAL mode: commands are ignored (RC switch)')
        else:
            stat.summary(DiagnosticStatus.OK, 'AUTO')
        stat.add('mode', mode)
        stat.add('e-stop', fb.estop)
        stat.add('gear', GEAR_TEXT.get(fb.gear, fb.gear))
        stat.add('speed raw', fb.speed)
        stat.add('steer raw', fb.steer)
        stat.add('brake raw', fb.brake)
        stat.add('encoder', fb.enc)
        stat.add('alive', fb.alive)
        return stat

    def shutdown(self):
        self.link.stop()


def main(argv=None):
    rospy.init_node('erp42_serial')
    try:
        cfg = load(PARAMS)
        node = Erp42Node(cfg)
    except (ParamError, erp42.Erp42Error) as e:
        rospy.logfatal('erp42_serial: %s', e)
        raise SystemExit(2)
    rospy.on_shutdown(node.shutdown)
    node.start()
    rospy.spin()


if __name__ == '__main__':
    main()
