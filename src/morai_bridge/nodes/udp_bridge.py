"""udp_bridge: the MORAI simulator's UDP interface as morai_msgs topics and services.

Node shell: declares the parameters and wires the parts together.
Receive -> publish: :mod:`morai_bridge.ros.udp_bridge.sim_receive`; topics -> packets:
:mod:`morai_bridge.ros.udp_bridge.command_sender`; simulator services:
:mod:`morai_bridge.ros.udp_bridge.sim_services`; traffic-light / vehicle / map information services:
:mod:`morai_bridge.ros.udp_bridge.info_services`; sync services (emulator only, opt-in):
:mod:`morai_bridge.ros.udp_bridge.sync_services`; /diagnostics:
:mod:`morai_bridge.ros.udp_bridge.diagnostics`.  Stream names and default ports:
:mod:`morai_bridge.wire.udp.streams`.  Parameters, topics and units: docs/ros_api.md.
"""
import rospy

from morai_bridge.link import transport
from morai_bridge.ros.udp_bridge import command_sender, info_services, sim_receive, sim_to_ros
from morai_bridge.ros import msg_set
from morai_bridge.ros.udp_bridge.diagnostics import BridgeDiagnostics
from morai_bridge.ros.supervision import make_updater
from morai_bridge.ros.udp_bridge.info_services import InfoServices
from morai_bridge.configuration.params import FROM_PROFILE, Param, ParamError
from morai_bridge.ros.params import init_node, load
from morai_bridge.ros.package_config import apply_map, apply_sim_version, load_vehicle_profile
from morai_bridge.wire.udp import streams
from morai_bridge.ros.udp_bridge.command_sender import CommandSender
from morai_bridge.ros.udp_bridge.sim_receive import SimReceiver
from morai_bridge.ros.udp_bridge.sim_services import SimServices
from morai_bridge.ros.supervision import FAULT_INJECTION, NodeSupervisor
from morai_bridge.ros.udp_bridge.sync_services import SyncServices
from morai_bridge.configuration import settings_plan, sim_settings_files
from morai_bridge.configuration.maps import MapError
from morai_bridge.configuration.sim_versions import VersionError
from morai_bridge.configuration.vehicle_profiles import ProfileError


PARAMS = [
    Param('sim_ip', '127.0.0.1', 'simulator host; datagrams from other hosts are dropped and counted '
          '(0.0.0.0 accepts any sender)'),
    Param('bind_ip', '127.0.0.1', 'local address the receive ports are bound to (0.0.0.0: all)'),
    Param('privileged_port_offset', 0, 'added to every port below 1024 once the sim_version\'s ports are in '
          '(909 -> 1909 with 1000), so that a normal user may bind them: set the simulator\'s ports to match '
          '(the demo gives sim_emulator the same value); 0: ports as given (docs/ros_api.md, "Ports below 1024")',
          minimum=0, maximum=64511),
] + sim_receive.PORT_PARAMS + command_sender.PORT_PARAMS + sim_receive.TOPIC_PARAMS + command_sender.TOPIC_PARAMS + [
    Param('sim_proc_service', 'Morai_SimProc', 'MoraiSimProcSrv: play / pause'),
    Param('scenario_service', 'Service_MoraiSL', 'MoraiScenarioLoadSrv'),
    Param('event_service', 'Service_MoraiEventCmd', 'MoraiEventCmdSrv: lamps, gear, control mode, pause'),
] + info_services.SERVICE_PARAMS + [
    Param('emulator_sync', False, 'offer the sync-mode services over our simulator emulator\'s lock-step '
          'extension (sync ports); the real simulator has no such UDP interface'),
    Param('sync_cmd_service', 'SyncModeCmd', 'MoraiSyncModeCmdSrv: start/stop lock-step mode (emulator_sync)'),
    Param('sync_tick_service', 'SyncModeWaitForTick', 'MoraiWaitForTickSrv: advance one frame (emulator_sync)'),
    Param('sync_ctrl_service', 'SyncModeCtrlCmd', 'MoraiSyncModeCtrlCmdSrv: command for the next frame'),
    Param('sync_gear_service', 'SyncModeSetGear', 'MoraiSyncModeSetGearSrv: gear for the next frames'),
    Param('sync_scenario_service', 'SyncModeScenarioLoad', 'MoraiSyncModeSLSrv: scenario load in sync mode'),
] + sim_receive.FRAME_PARAMS + command_sender.COMMAND_PARAMS + sim_receive.VERSION_PARAMS + [
    Param('publish_clock', False, 'publish /clock from the simulator time in ego status packets'),
] + sim_receive.OUTPUT_PARAMS + info_services.MAP_PARAMS + [
    Param('service_timeout', 1.0, 'how long services wait for the simulator to confirm [s]', minimum=0.0),
    FAULT_INJECTION,
    Param('settings', '', 'MORAI SIM sensor settings file (SensorInfo_<vehicle>.json): GPS / IMU ports, topics and '
          'frames come from it and override those parameters (none or "": off; docs/settings.md)', unset='none'),
    Param('network_settings', '', 'MORAI SIM network settings file (egoNetworkData): the ports of the streams it '
          'sends or receives over UDP come from it, streams it has switched off get port 0 (none or "": off; '
          'docs/settings.md)', unset='none'),
]


def apply_settings(cfg):
    """Overwrite ``cfg`` with the ports (and GPS / IMU topics, frames, addresses) that ``~settings``
    and ``~network_settings`` give udp_bridge (docs/settings.md)."""
    sensors = sim_settings_files.load_sensors(cfg.settings) if cfg.settings else None
    network = sim_settings_files.load_network(cfg.network_settings) if cfg.network_settings else None
    declared = {p.name: p for p in PARAMS}
    plan = settings_plan.plan(sensors, network, udp_bridge=True)
    for line in plan.warnings:
        rospy.logwarn('udp_bridge: %s', line)
    if plan.sim_version and cfg.sim_version != plan.sim_version:
        # a warning, not an override: ~sim_version may be meant (a profile file of this build, say)
        rospy.logwarn('udp_bridge: ~sim_version is %s, but the settings imply %s (%s): sim_version:=%s',
                      cfg.sim_version, plan.sim_version, plan.sim_version_why, plan.sim_version)
    for node in plan.nodes:
        if node.node == 'udp_bridge':
            for name, value in node.params.items():
                cfg[name] = declared[name].coerce(value)
            if node.bind_origin:
                transport.check_local_address(cfg.bind_ip, '~bind_ip', node.bind_origin)


class UdpBridge:
    """The bridge's parts (capture_replay uses the receive side alone: SimReceiver(live=False))."""

    def __init__(self, cfg, version=None, map_info=None):
        self.cfg = cfg
        self.version = version
        sim_ip = transport.resolve_host(cfg.sim_ip, '~sim_ip')
        bind_ip = transport.resolve_host(cfg.bind_ip, '~bind_ip')
        self.supervisor = NodeSupervisor('udp_bridge', cfg)
        self.rx = SimReceiver(cfg, sim_ip, bind_ip, log=self.supervisor.log, on_dead=self.supervisor.on_dead,
                              version=version, map_info=map_info)
        self.supervisor.watch(lambda: self.rx.workers)
        self.stats = self.rx.stats
        self.updater, self.timer = make_updater(f'morai_sim@{cfg.sim_ip}', self.supervisor)
        self.supervisor.add_to(self.updater)
        self.profile = load_vehicle_profile(cfg.vehicle_profile)
        self.tx = CommandSender(cfg, bind_ip, sim_ip, self.profile, self.supervisor)
        SimServices(cfg, self.rx, self.tx)
        InfoServices(cfg, self.rx, self.profile, self.tx.max_steering_deg)
        if cfg.emulator_sync and cfg.sync_port and cfg.sync_state_port:
            SyncServices(cfg, self.rx, self.tx)
        self.diagnostics = BridgeDiagnostics(cfg, self.updater, self.rx, self.tx)

    def start(self):
        self.rx.start()
        self.tx.start()

    def shutdown(self):
        self.tx.shutdown()
        self.rx.stop()


def main(argv=None):
    init_node('udp_bridge', PARAMS)
    try:
        loaded = load(PARAMS)
        given = type(loaded)(loaded)
        if given.settings or given.network_settings:
            apply_settings(given)           # MORAI SIM's saved settings, then the version's defaults
        cfg, version = apply_sim_version(given)
        cfg, map_info = apply_map(cfg)
        problems = sim_to_ros.message_set_problems()
        if problems:
            raise ParamError('this workspace\'s morai_msgs is none of the message sets %s: %s; build one with '
                             'catkin_make -DMORAI_MSGS_SET=... (docs/versions.md)'
                             % ('/'.join(msg_set.SETS), '; '.join(problems)))
        for k in cfg:               # what the settings and the version filled in, for rosparam get
            if cfg[k] != loaded[k]:
                rospy.set_param('~' + k, cfg[k])
        node = UdpBridge(cfg, version=version, map_info=map_info)
    except (ParamError, ProfileError, VersionError, MapError, transport.TransportError,
            sim_settings_files.SettingsError) as e:
        rospy.logfatal('udp_bridge: %s', e)
        raise SystemExit(2)
    rospy.on_shutdown(node.shutdown)
    node.start()
    rospy.loginfo('udp_bridge: receiving from %s on %s (%s), sending to %s', cfg.sim_ip, cfg.bind_ip,
                  ', '.join('%s:%d' % (n, cfg[streams.BY_NAME[n].param]) for n in node.rx.enabled), node.tx.host)
    rospy.loginfo('udp_bridge: simulator version %s (%s): wire steer + %s, status steer + %s, Ego Ctrl Cmd %d B; '
                  'steering_sign %d, status_steering_sign %d, ghost_steering_sign %d', version.name, version.path,
                  version.ctrl_steer_positive, version.status_steer_positive, cfg.ctrl_cmd_bytes, cfg.steering_sign,
                  cfg.status_steering_sign, cfg.ghost_steering_sign)
    rospy.loginfo('udp_bridge: map %s: GPSMessage offsets %.3f E, %.3f N%s', map_info.describe(), cfg.gps_east_offset,
                  cfg.gps_north_offset, '' if (cfg.gps_east_offset, cfg.gps_north_offset) == (map_info.east, map_info.north)
                  else ' (~gps_east_offset / ~gps_north_offset override the map)')
    rospy.loginfo('udp_bridge: morai_msgs message set %s%s', msg_set.NAME, msg_set.NOT_CARRIED)
    rospy.loginfo('udp_bridge: vehicle profile %s (%s): steering normalised by %.2f deg%s', node.profile.name,
                  node.profile.path, node.tx.max_steering_deg,
                  ' (~max_steering_deg overrides the profile)' if cfg.max_steering_deg > FROM_PROFILE else '')
    raise SystemExit(node.supervisor.spin())


if __name__ == '__main__':
    main()
