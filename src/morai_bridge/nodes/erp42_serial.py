"""erp42_serial: drive an ERP-42 (or the simulator's ERP-42 serial mode) from /ctrl_cmd.

Node shell: reads the parameters, then wires the serial link
(:class:`morai_bridge.serial_link.Erp42Link`, no ROS) to its topics and
diagnostics (:class:`morai_bridge.ros.erp42_ros.Erp42Ros`).  Parameters and
topics: docs/ros_api.md.
"""
import dataclasses

import rospy

from morai_bridge.ros.bridge_diagnostics import make_updater
from morai_bridge.ros.erp42_ros import Erp42Ros
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


class Erp42Node(object):

    def __init__(self, cfg):
        known = {f.name for f in dataclasses.fields(erp42.Erp42Params)}
        self.params = erp42.Erp42Params.from_mapping({k: v for k, v in cfg.items() if k in known})
        self.ros = Erp42Ros(cfg, self.params)
        self.link = Erp42Link(self.params, on_feedback=self.ros.on_feedback,
                              on_state=lambda text: rospy.logwarn('erp42_serial: %s', text),
                              throttle_mode=cfg.throttle_mode)
        self.updater, self.timer = make_updater('erp42:%s' % cfg.port)
        self.ros.attach(self.link, self.updater)

    def start(self):
        self.link.start()
        if not self.link.connected:
            rospy.logwarn('erp42_serial: %s; waiting for it (retry up to every %.1f s)', self.link.stats.last_error,
                          self.params.reconnect_period_s)

    def shutdown(self):
        self.link.stop()


def main(argv=None):
    rospy.init_node('erp42_serial')
    try:
        node = Erp42Node(load(PARAMS))
    except (ParamError, erp42.Erp42Error) as e:
        rospy.logfatal('erp42_serial: %s', e)
        raise SystemExit(2)
    rospy.on_shutdown(node.shutdown)
    node.start()
    rospy.spin()


if __name__ == '__main__':
    main()
