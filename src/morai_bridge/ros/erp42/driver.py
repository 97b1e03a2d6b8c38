"""ROS side of the ERP-42 driver: /ctrl_cmd into the serial link, PCU feedback out as
morai_msgs/ERP42Info, EgoVehicleStatus, TwistStamped, wheel Odometry, encoder counts,
and the link's and the PCU's state on /diagnostics.

Two parts:

* :class:`Erp42Core`: what the messages and the diagnostics say, without publishers,
  subscribers or a ROS clock (the stamp is an argument), so that it runs without a master
  (test/unit/ros/erp42/test_driver.py): a CtrlCmd handed to the link, a feedback frame turned into
  every message it produces, the diagnostics tasks.
* :class:`Erp42Ros`: the same, plus the topics (publishers, subscribers, throttled warnings);
  what nodes/erp42_serial.py builds.

The serial link itself (:class:`morai_bridge.link.serial_port.Erp42Link`) knows no ROS;
conversions of raw feedback are in :mod:`morai_bridge.wire.erp42`, the pose
integration in :class:`morai_bridge.kinematics.dead_reckoning.DeadReckoning`.
"""
import collections
import time

import rospy
from geometry_msgs.msg import Quaternion, TwistStamped
from nav_msgs.msg import Odometry
from std_msgs.msg import Bool, Int32

from morai_msgs.msg import CtrlCmd, EgoVehicleStatus, ERP42Info

from morai_bridge.kinematics.dead_reckoning import DeadReckoning
from morai_bridge.link.workers import ERROR, OK, WARN
from morai_bridge.ros import msg_set
from morai_bridge.wire import erp42
from morai_bridge.wire.erp42 import convert as erp42_convert
from morai_bridge.wire.units import yaw_quaternion

MODE_TEXT = {0: 'MANUAL', 1: 'AUTO'}
GEAR_TEXT = {erp42.GEAR_FORWARD: 'forward', erp42.GEAR_NEUTRAL: 'neutral', erp42.GEAR_BACKWARD: 'backward'}

#: The messages one feedback frame produces; ``encoder`` is None when ``encoder_enabled`` is false.
FeedbackMessages = collections.namedtuple('FeedbackMessages', 'info ego twist odom encoder')


def receive_stamp(t_mono, ros_now, mono_now):
    """The ROS time of ``t_mono`` (a frame's read time on the monotonic clock), given one instant
    read on both clocks (``ros_now``, ``mono_now``): ``ros_now`` minus the time since the read.

    The stamp is the host time at which the frame's last byte was read, not when the feedback
    thread got to it (up to 64 frames may wait for it; docs/erp42.md, "Feedback → message
    values").  A read time after
    ``mono_now`` gives ``ros_now``; the result is never before 0 (simulated time not started)."""
    delay = min(max(0.0, mono_now - t_mono), ros_now.to_sec())
    return ros_now - rospy.Duration.from_sec(delay)


class Erp42Core:
    """The driver's ROS logic around one :class:`Erp42Link` (``link``), without publishers or a
    ROS clock: :meth:`submit_ctrl`, :meth:`feedback_messages`, :meth:`diag_link`, :meth:`diag_pcu`.

    ``frame_id`` is the vehicle frame (EgoVehicleStatus, twist, the odometry's child frame),
    ``odom_frame_id`` the odometry's parent frame."""

    def __init__(self, params, frame_id='base_link', odom_frame_id='odom', link=None):
        self.params = params
        self.frame_id = frame_id
        self.odom_frame_id = odom_frame_id
        self.link = link
        self.truth = None
        self.prev_enc = None
        self.odom = DeadReckoning(params.wheelbase_m)
        self.last_reject = ''

    # -- inputs ------------------------------------------------------------

    def submit_ctrl(self, m):
        """Hand a morai_msgs/CtrlCmd to the link (``Erp42Link.set_ctrl``, which converts it
        at every frame with ``erp42_convert.ctrl_to_command``).  Returns None when accepted,
        else the :class:`erp42.CommandRejected` (nothing of it is sent; its text is kept in
        ``last_reject`` for the diagnostics)."""
        try:
            if msg_set.CTRL_FRONT_REAR and m.rear_steer:
                raise erp42.CommandRejected('rear_steer', 'CtrlCmd.rear_steer = %r: the ERP-42 has no rear steering'
                                            % m.rear_steer)
            self.link.set_ctrl(m.longlCmdType, m.accel, m.brake, msg_set.front_steering(m), m.velocity,
                               m.acceleration)
        except erp42.CommandRejected as e:
            self.last_reject = str(e)
            return e
        return None

    def on_truth(self, m):
        self.truth = m

    # -- outputs -----------------------------------------------------------

    def feedback_messages(self, fb, t_mono, stamp):
        """The messages of one feedback frame ``fb`` read at ``t_mono`` (monotonic seconds),
        stamped ``stamp``; advances the dead reckoning (and the encoder reference)."""
        p = self.params
        v = erp42_convert.feedback_to_values(fb, p)
        sending = self.link is not None and self.link.sending_fresh
        info = ERP42Info()
        info.longlCmdType = erp42.LONGL_CMD_VELOCITY if sending else 0
        info.velocity = v.velocity_kmh
        info.steering = v.steering_deg
        ego = EgoVehicleStatus()
        ego.header.stamp = stamp
        ego.header.frame_id = self.frame_id
        ego.velocity.x = v.velocity_mps
        msg_set.set_wheel_angles(ego, v.steering_deg)
        ego.brake = v.brake
        truth = self.truth
        if truth is not None:
            info.position_x, info.position_y, info.position_z = (
                truth.position.x, truth.position.y, truth.position.z)
            info.yaw = truth.heading
            ego.position = truth.position
            ego.heading = truth.heading
            ego.acceleration = truth.acceleration

        tw = TwistStamped()
        tw.header.stamp, tw.header.frame_id = stamp, self.frame_id
        tw.twist.linear.x = v.velocity_mps
        tw.twist.angular.z = self.odom.yaw_rate(v.velocity_mps, v.steering_deg)

        # Dead reckoning: travel from the encoder when there is one, else speed x dt.
        enc = None
        if p.encoder_enabled:
            enc = Int32(fb.enc)
            ds = 0.0 if self.prev_enc is None else erp42_convert.encoder_travel_m(
                erp42_convert.encoder_delta(self.prev_enc, fb.enc), p)
            self.prev_enc = fb.enc
            x, y, yaw = self.odom.update_encoder(t_mono, ds, v.steering_deg)
        else:
            x, y, yaw = self.odom.update_speed(t_mono, v.velocity_mps, v.steering_deg)
        od = Odometry()
        od.header.stamp, od.header.frame_id = stamp, self.odom_frame_id
        od.child_frame_id = self.frame_id
        od.pose.pose.position.x, od.pose.pose.position.y = x, y
        od.pose.pose.orientation = Quaternion(*yaw_quaternion(yaw))
        od.twist.twist = tw.twist
        return FeedbackMessages(info, ego, tw, od, enc)

    # -- diagnostics ---------------------------------------------------------

    def diag_link(self, stat, now=None):
        """The 'ERP-42 serial link' task; ``now``: monotonic time (default: the clock's)."""
        link = self.link
        s, f = link.stats, link.framer
        if not link.connected:
            stat.summary(ERROR, f'port {self.params.port} closed: {s.last_error}')
        else:
            fb = link.last_feedback
            age = None if fb is None else (time.monotonic() if now is None else now) - fb[1]
            if fb is None:
                if f.bytes_received:
                    stat.summary(ERROR, 'bytes but no valid frames: wrong baud rate or a '
                                 'different firmware variant?')
                else:
                    stat.summary(ERROR, 'no feedback from the PCU yet')
            elif age > 1.0:
                stat.summary(ERROR, f'feedback lost ({age:.1f} s old)')
            elif age > self.params.feedback_timeout_s:
                stat.summary(WARN, f'feedback stale ({age:.2f} s old)')
            elif link.sending_fresh:
                stat.summary(OK, 'sending commands')
            else:
                stat.summary(OK if s.commands_accepted == 0 else WARN,
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
        stat.add('TX deadlines missed', s.tx_overruns)
        stat.add('feedback callback errors', s.callback_errors)
        stat.add('feedback frames dropped (callback busy)', s.feedback_dropped)
        stat.add('write errors', s.write_errors)
        stat.add('read errors', s.read_errors)
        stat.add('reconnects', s.reconnects)
        stat.add('outages', s.outage_count)
        stat.add('outage durations [s]', ' '.join(f'{b - a:.2f}' if b else 'ongoing' for a, b in list(s.outages)[-10:]))
        stat.add('last error', s.last_error)
        return stat

    def diag_pcu(self, stat):
        """The 'ERP-42 PCU state' task: the mode flags and raw fields of the latest feedback."""
        fb = self.link.last_feedback
        if fb is None:
            stat.summary(WARN, 'no feedback yet')
            return stat
        fb = fb[0]
        if fb.estop:
            stat.summary(WARN, 'E-STOP active (or AUTO_FAIL)')
        elif fb.aorm == 0:
            stat.summary(WARN, 'PCU in MANUAL mode: commands are ignored (RC switch)')
        else:
            stat.summary(OK, 'AUTO')
        stat.add('mode', MODE_TEXT.get(fb.aorm, '?'))
        stat.add('e-stop', fb.estop)
        stat.add('gear', GEAR_TEXT.get(fb.gear, fb.gear))
        stat.add('speed raw', fb.speed)
        stat.add('steer raw', fb.steer)
        stat.add('brake raw', fb.brake)
        stat.add('encoder', fb.enc)
        stat.add('alive', fb.alive)
        return stat


class Erp42Ros(Erp42Core):
    """Topics and diagnostics around one :class:`Erp42Link` (``link``), built with
    ``on_feedback=self.on_feedback``: see :meth:`attach`."""

    def __init__(self, cfg, params):
        super().__init__(params, cfg.frame_id, cfg.odom_frame_id)
        self.cfg = cfg
        self.pub_info = rospy.Publisher(cfg.erp42_info_topic, ERP42Info, queue_size=1)
        self.pub_ego = rospy.Publisher(cfg.ego_status_topic, EgoVehicleStatus, queue_size=1)
        self.pub_enc = rospy.Publisher(cfg.encoder_topic, Int32, queue_size=1)
        self.pub_twist = rospy.Publisher(cfg.twist_topic, TwistStamped, queue_size=1)
        self.pub_odom = rospy.Publisher(cfg.odom_topic, Odometry, queue_size=1)

    def attach(self, link, updater):
        """Subscribe the inputs to ``link`` and add the diagnostics tasks to ``updater``."""
        self.link = link
        updater.add('ERP-42 serial link', self.diag_link)
        updater.add('ERP-42 PCU state', self.diag_pcu)
        rospy.Subscriber(self.cfg.ctrl_cmd_topic, CtrlCmd, self.on_ctrl, queue_size=1)
        rospy.Subscriber(self.cfg.estop_topic, Bool, lambda m: link.set_estop(m.data), queue_size=1)
        if self.cfg.ground_truth_topic:
            rospy.Subscriber(self.cfg.ground_truth_topic, EgoVehicleStatus, self.on_truth, queue_size=1)

    def on_ctrl(self, m):
        e = self.submit_ctrl(m)
        if e is not None:
            rospy.logwarn_throttle(2.0, f'erp42_serial: {e}')

    def on_feedback(self, fb, t_mono):
        msgs = self.feedback_messages(fb, t_mono, receive_stamp(t_mono, rospy.Time.now(), time.monotonic()))
        self.pub_info.publish(msgs.info)
        self.pub_ego.publish(msgs.ego)
        self.pub_twist.publish(msgs.twist)
        if msgs.encoder is not None:
            self.pub_enc.publish(msgs.encoder)
        self.pub_odom.publish(msgs.odom)
