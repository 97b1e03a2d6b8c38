"""erp42_serial: drive an ERP-42 (or the simulator's ERP-42 serial mode) from /ctrl_cmd.

Node shell: reads the parameters, then wires the serial link
(:class:`morai_bridge.link.serial_port.Erp42Link`, no ROS) to its topics and
diagnostics (:class:`morai_bridge.ros.erp42.driver.Erp42Ros`).  The steering clamp
and the wheelbase come from the vehicle profile (``~vehicle_profile``, default
erp42) unless ``~max_steer_deg`` / ``~wheelbase_m`` are set.  Parameters and
topics: docs/ros_api.md.
"""
import dataclasses

import rospy

from morai_bridge.ros.supervision import make_updater
from morai_bridge.ros.erp42.driver import Erp42Ros
from morai_bridge.configuration.params import FROM_PROFILE, Config, Param, ParamError
from morai_bridge.ros.params import init_node, load
from morai_bridge.ros.supervision import FAULT_INJECTION, NodeSupervisor
from morai_bridge.ros.package_config import load_vehicle_profile
from morai_bridge.link.serial_port import Erp42Link
from morai_bridge.configuration import vehicle_profiles
from morai_bridge.wire import erp42
from morai_bridge.wire.erp42 import convert as erp42_convert

_D = erp42_convert.DEFAULT_PARAMS

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
    Param('vehicle_profile', 'erp42', 'vehicle profile: a name in config/vehicles or the path of a YAML file; '
          'gives max_steer_deg and wheelbase_m unless they are set'),
    Param('max_steer_deg', 0.0, 'steering command clamp [deg], <= 28.17; 0 = the vehicle profile\'s maximum',
          minimum=0.0),
    Param('steering_offset_deg', _D.steering_offset_deg, 'steering trim added to commands [deg, left +]'),
    Param('brake_min', _D.brake_min, 'BRAKE value meaning no braking'),
    Param('brake_max', _D.brake_max, 'BRAKE value meaning full braking (150 V3.0 firmware, 200 others)'),
    Param('feedback_steer_sign', _D.feedback_steer_sign, 'multiplies feedback STEER into the command sign',
          choices=(-1, 1)),
    Param('encoder_enabled', _D.encoder_enabled, 'false with the MORAI simulator (no encoder)'),
    Param('encoder_ppr', _D.encoder_ppr, 'encoder counts per wheel revolution'),
    Param('encoder_sign', _D.encoder_sign, '+1 if ENC grows when driving forward', choices=(-1, 1)),
    Param('wheel_radius_m', _D.wheel_radius_m, 'wheel radius [m]'),
    Param('wheelbase_m', 0.0, 'wheelbase [m]; 0 = the vehicle profile\'s', minimum=0.0),
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
    Param('ground_truth_topic', '', 'optional morai_msgs/EgoVehicleStatus (e.g. /Ego_topic) for position/yaw '
          '(none or "": not used)', unset='none'),
    FAULT_INJECTION,
]


def with_profile(cfg, profile):
    """``cfg`` with max_steer_deg and wheelbase_m taken from ``profile`` where they are 0 (not set)."""
    out = Config(cfg)
    out['max_steer_deg'] = vehicle_profiles.choose(cfg.max_steer_deg, profile.max_steering_deg)
    out['wheelbase_m'] = vehicle_profiles.choose(cfg.wheelbase_m, profile.wheelbase_m)
    if not cfg.max_steer_deg > FROM_PROFILE and out.max_steer_deg > erp42_convert.DEFAULT_PARAMS.max_steer_deg:
        raise ParamError('vehicle profile %s: maximum steering %.2f deg exceeds the ERP-42 protocol\'s %.2f deg '
                         '(STEER +-2000 = deg x 71): use an ERP-42 profile or set ~max_steer_deg'
                         % (profile.name, out.max_steer_deg, erp42_convert.DEFAULT_PARAMS.max_steer_deg))
    return out


class Erp42Node:

    def __init__(self, cfg):
        cfg = with_profile(cfg, load_vehicle_profile(cfg.vehicle_profile))
        known = {f.name for f in dataclasses.fields(erp42_convert.Erp42Params)}
        self.params = erp42_convert.Erp42Params.from_mapping({k: v for k, v in cfg.items() if k in known})
        self.ros = Erp42Ros(cfg, self.params)
        self.supervisor = NodeSupervisor('erp42_serial', cfg)
        self.link = Erp42Link(self.params, on_feedback=self.ros.on_feedback,
                              on_state=lambda text: rospy.logwarn('erp42_serial: %s', text),
                              throttle_mode=cfg.throttle_mode, log=self.supervisor.log,
                              on_dead=self.supervisor.on_dead)
        self.supervisor.watch(lambda: self.link.workers)
        self.updater, self.timer = make_updater(f'erp42:{cfg.port}', self.supervisor)
        self.ros.attach(self.link, self.updater)
        self.supervisor.add_to(self.updater)

    def start(self):
        self.link.start()
        if not self.link.connected:
            rospy.logwarn('erp42_serial: %s; waiting for it (retry up to every %.1f s)', self.link.stats.last_error,
                          self.params.reconnect_period_s)

    def shutdown(self):
        self.link.stop()


def main(argv=None):
    init_node('erp42_serial', PARAMS)
    try:
        node = Erp42Node(load(PARAMS))
    except (ParamError, vehicle_profiles.ProfileError, erp42.Erp42Error) as e:
        rospy.logfatal('erp42_serial: %s', e)
        raise SystemExit(2)
    rospy.on_shutdown(node.shutdown)
    node.start()
    raise SystemExit(node.supervisor.spin())


if __name__ == '__main__':
    main()
