"""udp_bridge: the MORAI simulator's UDP interface as morai_msgs topics and services.

Thin ROS shell: sockets from :mod:`morai_bridge.transport`, packets from
:mod:`morai_bridge.wire.udp`, messages from :mod:`morai_bridge.ros.udp_convert`.
Parameters, topics and units: docs/ros_api.md.
"""
import threading
import time

import rospy
import tf2_ros
from diagnostic_msgs.msg import DiagnosticStatus
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, NavSatFix

import diagnostic_updater
from morai_msgs.msg import (CollisionData, CtrlCmd, EgoVehicleStatus, EventInfo, GetTrafficLightStatus,
                            GhostMessage, GPSMessage, GVDirectCmd, GVStateCmd, IntersectionControl,
                            IntersectionStatus, Lamps, MoraiSimProcStatus, MoraiSrvResponse, MultiEgoSetting,
                            NpcGhostCmd, ObjectStatusList, SaveSensorData, ScenarioLoad, SensorPosControl,
                            SetTrafficLight, VehicleCollisionData)
from morai_msgs.msg import SyncModeCmdResponse, SyncModeResultResponse, WaitForTickResponse
from morai_msgs.srv import (MoraiEventCmdSrv, MoraiEventCmdSrvResponse, MoraiScenarioLoadSrv,
                            MoraiScenarioLoadSrvResponse, MoraiSimProcSrv, MoraiSimProcSrvResponse,
                            MoraiSyncModeCmdSrv, MoraiSyncModeCmdSrvResponse, MoraiSyncModeCtrlCmdSrv,
                            MoraiSyncModeCtrlCmdSrvResponse, MoraiSyncModeSetGearSrv,
                            MoraiSyncModeSetGearSrvResponse, MoraiSyncModeSLSrv, MoraiSyncModeSLSrvResponse,
                            MoraiWaitForTickSrv, MoraiWaitForTickSrvResponse)

from morai_bridge import transport
from morai_bridge.ros import udp_convert as conv
from morai_bridge.ros.params import Param, ParamError, load, port_param
from morai_bridge.wire import emu_sync, udp

# name, default port, topic param default, ROS type, wire class
RX_STREAMS = [
    ('ego_status', 909, 'Ego_topic', EgoVehicleStatus, udp.EgoVehicleStatus),
    ('object_info', 7505, 'Object_topic', ObjectStatusList, udp.ObjectInfo),
    ('traffic_light', 7502, 'GetTrafficLightStatus', GetTrafficLightStatus, udp.GetTrafficLightStatus),
    ('collision', 9092, 'CollisionData', CollisionData, udp.CollisionData),
    ('intersection', 9102, 'InsnStatus', IntersectionStatus, udp.GetIntersectionStatus),
    ('vehicle_collision', 9108, 'VehicleCollisionData', VehicleCollisionData, udp.NpcVehicleCollision),
    ('sim_status', 10326, 'sim/process/state/msg/MoraiSimProcStatus', MoraiSimProcStatus, udp.SimStatus),
    ('gps', 9091, 'gps', GPSMessage, udp.NmeaSentence),
    ('imu', 9110, 'imu', Imu, udp.ImuData),
    # our emulator's lock-step extension (docs/emulator.md); no topic: it answers the sync services
    ('sync_state', 9202, None, None, emu_sync.EmuSyncState),
]
# name, default port, topic default (None: no topic), ROS type
TX_STREAMS = [
    ('ctrl_cmd', 9093, 'ctrl_cmd', CtrlCmd),
    ('set_traffic_light', 7607, 'SetTrafficLight', SetTrafficLight),
    ('set_intersection', 9132, 'InsnControl', IntersectionControl),
    ('lamps', 9097, 'lamps', Lamps),
    ('scenario_load', 9099, 'ScenarioLoad', ScenarioLoad),
    ('save_sensor_data', 9105, 'SaveSensorData', SaveSensorData),
    ('sensor_control', 9103, 'SensorPosControl', SensorPosControl),
    ('npc_ghost', 9101, 'NpcGhostCmd', NpcGhostCmd),
    ('multi_ego', 7604, 'ego_setting', MultiEgoSetting),
    ('ego_ghost', 9095, 'GhostCtrlCmd', GhostMessage),
    ('gv_direct', 9111, 'gv_direct_cmd', GVDirectCmd),
    ('gv_state', 9112, 'gv_state_cmd', GVStateCmd),
    ('sim_control', 10508, None, None),
    ('sync', 9201, None, None),
]
# streams that only carry events: silence is normal, not stale
EVENT_STREAMS = ('vehicle_collision', 'sync_state')
# how deep the publisher queue is: state topics keep the latest, events keep all
QUEUE = {'collision': 100, 'vehicle_collision': 100}

PARAMS = [
    Param('sim_ip', '127.0.0.1', 'simulator host; datagrams from other hosts are dropped and counted '
          '(0.0.0.0 accepts any sender)'),
    Param('bind_ip', '127.0.0.1', 'local address the receive ports are bound to (0.0.0.0: all)'),
] + [port_param(n + '_port', p, 'receive ' + n) for n, p, _, _, _ in RX_STREAMS] \
  + [port_param(n + '_port', p, 'send ' + n + ' to the simulator') for n, p, _, _ in TX_STREAMS] \
  + [Param(n + '_topic', t, 'published ' + r._type) for n, _, t, r, _ in RX_STREAMS if t] \
  + [Param(n + '_topic', t, 'subscribed ' + r._type) for n, _, t, r in TX_STREAMS if t] + [
    Param('navsat_topic', 'gps/fix', 'published sensor_msgs/NavSatFix (from the GPS stream)'),
    Param('odom_topic', 'odom', 'published nav_msgs/Odometry when publish_odom'),
    Param('sim_proc_service', 'Morai_SimProc', 'MoraiSimProcSrv: play / pause'),
    Param('scenario_service', 'Service_MoraiSL', 'MoraiScenarioLoadSrv'),
    Param('event_service', 'Service_MoraiEventCmd', 'MoraiEventCmdSrv: lamps, gear, control mode, pause'),
    Param('sync_cmd_service', 'SyncModeCmd', 'MoraiSyncModeCmdSrv: start/stop lock-step mode (emulator)'),
    Param('sync_tick_service', 'SyncModeWaitForTick', 'MoraiWaitForTickSrv: advance one frame (emulator)'),
    Param('sync_ctrl_service', 'SyncModeCtrlCmd', 'MoraiSyncModeCtrlCmdSrv: command for the next frame'),
    Param('sync_gear_service', 'SyncModeSetGear', 'MoraiSyncModeSetGearSrv: gear for the next frames'),
    Param('sync_scenario_service', 'SyncModeScenarioLoad', 'MoraiSyncModeSLSrv: scenario load in sync mode'),
    Param('frame_id', 'map', 'header frame of ego status, objects, collisions, odometry parent'),
    Param('child_frame_id', 'base_link', 'odometry child frame and TF child'),
    Param('gps_frame_id', 'gps', 'header frame of GPS messages'),
    Param('imu_frame_id', 'imu', 'header frame of Imu messages'),
    Param('max_steering_deg', 36.25, 'vehicle maximum front wheel angle [deg] (normalises steering)',
          minimum=1.0, maximum=90.0),
    Param('steering_sign', -1, 'wire steer = sign x ROS steering (ROS: + left; MORAI UDP example: + right)',
          choices=(-1, 1)),
    Param('gear', 4, 'gear sent with ctrl commands: 1 P, 2 R, 3 N, 4 D', minimum=0, maximum=5),
    Param('ctrl_cmd_bytes', 55, 'Ego Ctrl Cmd packet size: 55 (front steer) or 59 (front + rear)',
          choices=(55, 59)),
    Param('set_traffic_light_bytes', 46, 'Set TrafficLight packet size: 46, or 47 for old builds',
          choices=(46, 47)),
    Param('stamp_source', 'sim', 'header stamps: sim (packet time) or ros (receive time)',
          choices=('sim', 'ros')),
    Param('publish_clock', False, 'publish /clock from the simulator time in ego status packets'),
    Param('publish_odom', False, 'publish nav_msgs/Odometry (SI, ENU)'),
    Param('publish_tf', False, 'broadcast TF frame_id -> child_frame_id'),
    Param('gps_east_offset', 0.0, 'GPSMessage.eastOffset: map origin east [m]'),
    Param('gps_north_offset', 0.0, 'GPSMessage.northOffset: map origin north [m]'),
    Param('stale_timeout', 1.0, 'a stream silent for this long is stale (diagnostics WARN) [s]', minimum=0.05),
    Param('service_timeout', 1.0, 'how long services wait for the simulator to confirm [s]', minimum=0.0),
]

GEAR_TEXT = {0: 'M', 1: 'P', 2: 'R', 3: 'N', 4: 'D', 5: 'L'}
MODE_TEXT = {1: 'keyboard', 2: 'automatic'}


class UdpBridge(object):
    """The bridge.  With ``live=False`` (capture replay) no socket is opened and
    no command topic or service is offered: datagrams come in through
    :meth:`feed` instead."""

    def __init__(self, cfg, live=True):
        self.cfg = cfg
        self.live = live
        self.sim_ip = transport.resolve_host(cfg.sim_ip, '~sim_ip')
        self.bind_ip = transport.resolve_host(cfg.bind_ip, '~bind_ip')
        self.ctrl_bytes = {55: 23, 59: 27}[cfg.ctrl_cmd_bytes]
        self.tl_bytes = {46: 14, 47: 15}[cfg.set_traffic_light_bytes]
        self.gear = cfg.gear
        self.ctrl_mode = 2
        self.lamps_state = Lamps()
        self.lock = threading.Lock()

        # receive side
        sockets = {}
        enabled = [name for name, _, _, _, _ in RX_STREAMS if cfg[name + '_port']]
        try:
            for name in enabled if live else ():
                sockets[name] = transport.bind_udp(self.bind_ip, cfg[name + '_port'], '~%s_port' % name)
        except transport.TransportError:
            for s in sockets.values():
                s.close()
            raise
        self.handlers = {}
        self.pubs = {}
        for name, _, _, rtype, wcls in RX_STREAMS:
            if name in enabled and rtype is None:
                self.handlers[name] = (wcls, getattr(self, '_on_' + name), emu_sync.decode)
            elif name in enabled:
                # live: state topics keep only the latest; replay as fast as possible must not drop
                depth = QUEUE.get(name, 1) if live else 1000
                self.pubs[name] = rospy.Publisher(cfg[name + '_topic'], rtype, queue_size=depth)
                self.handlers[name] = (wcls, getattr(self, '_on_' + name), udp.decode)
        if 'gps' in enabled:
            self.navsat_pub = rospy.Publisher(cfg.navsat_topic, NavSatFix, queue_size=1)
        self.odom_pub = rospy.Publisher(cfg.odom_topic, Odometry, queue_size=1) if cfg.publish_odom else None
        self.tf = tf2_ros.TransformBroadcaster() if cfg.publish_tf else None
        self.clock_pub = rospy.Publisher('/clock', Clock, queue_size=1) if cfg.publish_clock else None
        self.last_clock = None
        self.gps_alt = None
        self.status = None             # latest udp.EgoVehicleStatus
        self.sim_status = None         # latest udp.SimStatus
        self.sim_status_event = threading.Condition()
        self.last_sim_command = rospy.Time()
        self.bad_stamps = 0
        self.sync_state = None
        self.sync_cond = threading.Condition()
        self.sync_seq = 0
        self.sync_pending = None      # (frame, CtrlCmd) for the next tick
        self.sync_gear = None
        self.status_cond = threading.Condition()
        self.sim_status_t = 0.0
        self._cmd_sent_t = 0.0
        self.stats = dict((name, transport.StreamStats(name)) for name in enabled)
        self.receiver = transport.UdpReceiver(sockets, self.sim_ip, self._dispatch, self.stats)
        self.port_to_stream = dict((cfg[name + '_port'], name) for name in enabled)
        self.updater = diagnostic_updater.Updater()
        self.updater.setHardwareID('morai_sim@%s' % cfg.sim_ip)
        self._rates = {}
        for name in enabled:
            self.updater.add('UDP %s (port %d)' % (name, cfg[name + '_port']), self._diag_stream(name))
        self.diag_timer = rospy.Timer(rospy.Duration(1.0), lambda ev: self.updater.update())
        if not live:
            self.sender = None
            return

        # send side
        self.sender = transport.UdpSender(self.bind_ip if self.bind_ip != '' else '0.0.0.0', self.sim_ip
                                          if self.sim_ip not in ('', '0.0.0.0') else '127.0.0.1')
        self.tx_counts = dict((n, 0) for n, _, _, _ in TX_STREAMS)
        self.tx_refused = dict((n, 0) for n, _, _, _ in TX_STREAMS)
        self.last_refusal = ''
        self.ctrl_sent_t = None
        self.any_ctrl_sent = False
        for name, _, topic, rtype in TX_STREAMS:
            if topic and cfg[name + '_port']:
                rospy.Subscriber(cfg[name + '_topic'], rtype, self._make_tx_cb(name),
                                 queue_size=10 if name != 'ctrl_cmd' else 1)
        if cfg.sim_control_port:
            rospy.Service(cfg.sim_proc_service, MoraiSimProcSrv, self._srv_sim_proc)
        if cfg.scenario_load_port:
            rospy.Service(cfg.scenario_service, MoraiScenarioLoadSrv, self._srv_scenario)
        rospy.Service(cfg.event_service, MoraiEventCmdSrv, self._srv_event)
        if cfg.sync_port and cfg.sync_state_port:
            rospy.Service(cfg.sync_cmd_service, MoraiSyncModeCmdSrv, self._srv_sync_cmd)
            rospy.Service(cfg.sync_tick_service, MoraiWaitForTickSrv, self._srv_sync_tick)
            rospy.Service(cfg.sync_ctrl_service, MoraiSyncModeCtrlCmdSrv, self._srv_sync_ctrl)
            rospy.Service(cfg.sync_gear_service, MoraiSyncModeSetGearSrv, self._srv_sync_gear)
            if cfg.scenario_load_port:
                rospy.Service(cfg.sync_scenario_service, MoraiSyncModeSLSrv, self._srv_sync_scenario)

        self.updater.add('UDP commands', self._diag_commands)
        self.updater.add('Simulator control state', self._diag_control)

    def start(self):
        self.receiver.start()

    def feed(self, dst_port, data, src=('0.0.0.0', 0)):
        """Decode and publish one datagram as if it had arrived on dst_port.
        Returns False when no enabled stream listens on that port."""
        name = self.port_to_stream.get(dst_port)
        if name is None:
            return False
        st = self.stats[name]
        st.received += 1
        st.last_rx = time.monotonic()
        self._dispatch(name, data, src, st.last_rx)
        return True

    # ------------------------------------------------------------------ receive

    def _dispatch(self, name, data, addr, t):
        st = self.stats[name]
        wcls, handler, decode = self.handlers[name]
        try:
            msg = decode(data)
        except udp.DecodeError as e:
            st.decode_errors += 1
            st.last_error = str(e)
            rospy.logwarn_throttle(5.0, 'udp_bridge: malformed datagram on %s port from %s:%d: %s'
                                   % (name, addr[0], addr[1], e))
            return
        if type(msg) is not wcls:
            st.wrong_type += 1
            st.last_error = 'got %s on the %s port' % (type(msg).__name__, name)
            rospy.logwarn_throttle(5.0, 'udp_bridge: %s (check the simulator port settings)' % st.last_error)
            return
        handler(msg)
        st.published += 1

    def _stamp(self, sec, nsec):
        if self.cfg.stamp_source == 'sim' and sec is not None:
            s = conv.sim_stamp(sec, nsec)
            if s is not None:
                return s
            self.bad_stamps += 1
        return rospy.Time.now()

    def _on_ego_status(self, w):
        stamp = self._stamp(w.sec, w.nsec)
        msg = conv.ego_status(w, stamp, self.cfg.frame_id)
        with self.status_cond:
            self.status = w
            self.status_msg = msg
            self.status_cond.notify_all()
        self.pubs['ego_status'].publish(msg)
        if self.clock_pub is not None and w.sec is not None and stamp != self.last_clock:
            self.last_clock = stamp
            self.clock_pub.publish(Clock(stamp))
        if self.odom_pub is not None or self.tf is not None:
            odom, tf = conv.odometry(w, stamp, self.cfg.frame_id, self.cfg.child_frame_id)
            if self.odom_pub is not None:
                self.odom_pub.publish(odom)
            if self.tf is not None:
                self.tf.sendTransform(tf)

    def _on_object_info(self, w):
        self.pubs['object_info'].publish(conv.object_list(w, self._stamp(w.sec, w.nsec), self.cfg.frame_id))

    def _on_collision(self, w):
        self.pubs['collision'].publish(conv.collision(w, self._stamp(w.sec, w.nsec), self.cfg.frame_id))

    def _on_traffic_light(self, w):
        self.pubs['traffic_light'].publish(conv.traffic_light(w, rospy.Time.now(), self.cfg.frame_id))

    def _on_intersection(self, w):
        self.pubs['intersection'].publish(conv.intersection(w, rospy.Time.now(), self.cfg.frame_id))

    def _on_vehicle_collision(self, w):
        self.pubs['vehicle_collision'].publish(conv.npc_collision(w, rospy.Time.now(), self.cfg.frame_id))

    def _on_sim_status(self, w):
        with self.sim_status_event:
            self.sim_status = w
            self.sim_status_t = time.monotonic()
            self.sim_status_event.notify_all()
        self.pubs['sim_status'].publish(conv.sim_proc_status(w, rospy.Time.now(), self.last_sim_command))

    def _on_gps(self, w):
        if w.altitude is not None:
            self.gps_alt = w.altitude
        g, n = conv.gps(w, rospy.Time.now(), self.cfg.gps_frame_id, self.cfg.gps_east_offset,
                        self.cfg.gps_north_offset, self.gps_alt)
        if g is not None:
            self.pubs['gps'].publish(g)
            self.navsat_pub.publish(n)

    def _on_imu(self, w):
        self.pubs['imu'].publish(conv.imu(w, self._stamp(w.sec, w.nsec), self.cfg.imu_frame_id))

    # --------------------------------------------------------------------- send

    def _send(self, name, packet):
        ok = self.sender.send(self.cfg[name + '_port'], udp.encode(packet))
        if ok:
            self.tx_counts[name] += 1
        else:
            rospy.logwarn_throttle(5.0, 'udp_bridge: sending %s failed: %s' % (name, self.sender.last_error))
        return ok

    def _refuse(self, name, err):
        self.tx_refused[name] += 1
        self.last_refusal = str(err)
        rospy.logwarn_throttle(2.0, 'udp_bridge: %s' % err)

    def _build(self, name, m):
        if name == 'ctrl_cmd':
            return [conv.ctrl_cmd(m, self.gear, self.ctrl_mode, self.cfg.max_steering_deg,
                                  self.cfg.steering_sign, self.ctrl_bytes)]
        if name == 'set_traffic_light':
            return [conv.set_traffic_light(m, self.tl_bytes)]
        if name == 'sensor_control':
            return conv.sensor_control(m)
        if name == 'lamps':
            self.lamps_state = m
        fn = {'set_intersection': conv.set_intersection, 'lamps': conv.lamps,
              'scenario_load': conv.scenario_load, 'save_sensor_data': conv.save_sensor_data,
              'npc_ghost': conv.npc_ghost, 'multi_ego': conv.multi_ego, 'ego_ghost': conv.ego_ghost,
              'gv_direct': conv.gv_direct, 'gv_state': conv.gv_state}[name]
        return [fn(m)]

    def _make_tx_cb(self, name):
        def cb(m):
            try:
                packets = self._build(name, m)
            except (conv.CommandError, udp.EncodeError) as e:
                self._refuse(name, e)
                return
            for p in packets:
                self._send(name, p)
            if name == 'ctrl_cmd':
                self.ctrl_sent_t = time.monotonic()
                self.any_ctrl_sent = True
        return cb

    def _wait_sim_status(self, pred, timeout):
        """True when a SimStatus satisfying pred arrives within timeout; None when
        the simulator is not reporting status at all (nothing to wait for)."""
        st = self.stats.get('sim_status')
        if st is None or st.age() is None or st.age() > 2.0 + timeout:
            return None
        end = time.monotonic() + timeout
        with self.sim_status_event:
            while True:
                s = self.sim_status
                if s is not None and self.sim_status_t >= self._cmd_sent_t and pred(s):
                    return True
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self.sim_status_event.wait(left)

    def _send_sim_control(self, packet):
        self._cmd_sent_t = time.monotonic()
        self.last_sim_command = rospy.Time.now()
        return self._send('sim_control', packet)

    def _srv_sim_proc(self, req):
        h = req.request
        try:
            packet = conv.sim_proc_handle(h)
        except conv.CommandError as e:
            self._refuse('sim_control', e)
            return MoraiSimProcSrvResponse(MoraiSrvResponse(False))
        if not self._send_sim_control(packet):
            return MoraiSimProcSrvResponse(MoraiSrvResponse(False))
        want = conv.STATUS_PLAYING if packet.command == conv.SIM_PLAY else conv.STATUS_PAUSE
        ok = self._wait_sim_status(lambda s: s.status == want and s.command == packet.command,
                                   self.cfg.service_timeout)
        if ok is False:
            rospy.logwarn('udp_bridge: simulator did not confirm %s within %.1f s'
                          % ('play' if want == conv.STATUS_PLAYING else 'pause', self.cfg.service_timeout))
        return MoraiSimProcSrvResponse(MoraiSrvResponse(ok is not False))

    def _srv_scenario(self, req):
        try:
            packet = conv.scenario_load(req.request)
        except (conv.CommandError, udp.EncodeError) as e:
            self._refuse('scenario_load', e)
            return MoraiScenarioLoadSrvResponse(MoraiSrvResponse(False))
        return MoraiScenarioLoadSrvResponse(MoraiSrvResponse(self._send('scenario_load', packet)))

    def _srv_event(self, req):
        """EventInfo.option bits: 1 ctrl_mode, 2 gear, 4 lamps, 8 set_pause."""
        e = req.request
        opt = e.option
        if opt & 1:
            if e.ctrl_mode in (1, 2):
                self.ctrl_mode = e.ctrl_mode
            else:
                self._refuse('ctrl_cmd', conv.CommandError('EventInfo.ctrl_mode %r is not 1 or 2' % e.ctrl_mode))
        if opt & 2:
            if 0 <= e.gear <= 5:
                self.gear = e.gear
            else:
                self._refuse('ctrl_cmd', conv.CommandError('EventInfo.gear %r is not 0..5' % e.gear))
        if opt & 4 and self.cfg.lamps_port:
            try:
                self._send('lamps', conv.lamps(e.lamps))
                self.lamps_state = e.lamps
            except conv.CommandError as err:
                self._refuse('lamps', err)
        if opt & 8 and self.cfg.sim_control_port:
            self._send_sim_control(conv.sim_control(conv.SIM_PAUSE if e.set_pause else conv.SIM_PLAY))
            self._wait_sim_status(lambda s: s.status in (conv.STATUS_PAUSE, conv.STATUS_PLAYING),
                                  self.cfg.service_timeout)
        if opt & 3 and self.any_ctrl_sent and self.cfg.ctrl_cmd_port:
            # Gear and mode travel with ctrl commands: apply them now with a braking command.
            self._send('ctrl_cmd', conv.brake_cmd(self.gear, self.ctrl_mode, self.ctrl_bytes))
        r = EventInfo()
        r.option = opt
        r.ctrl_mode = self.ctrl_mode
        r.gear = self.gear
        r.lamps = self.lamps_state
        s = self.sim_status
        r.set_pause = bool(s is not None and s.status == conv.STATUS_PAUSE)
        return MoraiEventCmdSrvResponse(r)

    # ---------------------------------------------------------- sync (emulator)

    def _on_sync_state(self, w):
        with self.sync_cond:
            self.sync_state = w
            self.sync_seq += 1
            self.sync_cond.notify_all()

    def _sync_request(self, packet, reply_to):
        """Send an extension packet and wait for the emulator's EmuSyncState answer."""
        with self.sync_cond:
            seq = self.sync_seq
        self._sync_sent(packet)
        end = time.monotonic() + self.cfg.service_timeout
        with self.sync_cond:
            while True:
                st = self.sync_state
                if self.sync_seq != seq and st is not None and st.reply_to == reply_to:
                    return st
                left = end - time.monotonic()
                if left <= 0:
                    rospy.logwarn_throttle(5.0, 'udp_bridge: no answer to the sync request within %.1f s: is the '
                                           'emulator running with its sync port on %d?'
                                           % (self.cfg.service_timeout, self.cfg.sync_port))
                    return None
                self.sync_cond.wait(left)

    def _sync_sent(self, packet):
        if self.sender.send(self.cfg.sync_port, emu_sync.encode(packet)):
            self.tx_counts['sync'] += 1

    def _srv_sync_cmd(self, req):
        r = req.request
        out = SyncModeCmdResponse(user_id=r.user_id, frame=0, result=False, time_step=r.time_step)
        if r.start_sync_mode and (r.time_step <= 0 or r.time_step % 20):
            self._refuse('sync', conv.CommandError('SyncModeCmd.time_step %d ms is not a positive multiple of '
                                                   '20 ms: refused' % r.time_step))
            return MoraiSyncModeCmdSrvResponse(out)
        if len(r.user_id) > 30:
            self._refuse('sync', conv.CommandError('SyncModeCmd.user_id longer than 30 characters: refused'))
            return MoraiSyncModeCmdSrvResponse(out)
        st = self._sync_request(emu_sync.EmuSyncCmd(bool(r.start_sync_mode), r.time_step, r.user_id),
                                emu_sync.REPLY_CMD)
        if st is not None:
            out.frame, out.result, out.time_step = st.frame, st.result, st.time_step_ms or r.time_step
            if not st.result:
                rospy.logwarn('udp_bridge: sync mode request refused: %s',
                              emu_sync.REASON_NAMES.get(st.reason, st.reason))
        self.sync_pending = None
        return MoraiSyncModeCmdSrvResponse(out)

    def _srv_sync_ctrl(self, req):
        r = req.request
        try:
            conv.ctrl_cmd(r.command, self.gear, 2, self.cfg.max_steering_deg, self.cfg.steering_sign)
        except conv.CommandError as e:
            self._refuse('sync', e)
            return MoraiSyncModeCtrlCmdSrvResponse(SyncModeResultResponse(False))
        self.sync_pending = (r.frame, r.command)
        return MoraiSyncModeCtrlCmdSrvResponse(SyncModeResultResponse(True))

    def _srv_sync_gear(self, req):
        if not 0 <= req.request.gear <= 5:
            self._refuse('sync', conv.CommandError('SyncModeSetGear.gear %d is not 0..5' % req.request.gear))
            return MoraiSyncModeSetGearSrvResponse(SyncModeResultResponse(False))
        self.sync_gear = req.request.gear
        return MoraiSyncModeSetGearSrvResponse(SyncModeResultResponse(True))

    def _srv_sync_scenario(self, req):
        r = req.request
        sl = ScenarioLoad(file_name=r.file_name, load_network_connection_data=r.load_network_connection_data,
                          delete_all=r.delete_all, load_ego_vehicle_data=r.load_ego_vehicle_data,
                          load_surrounding_vehicle_data=r.load_surrounding_vehicle_data,
                          load_pedestrian_data=r.load_pedestrian_data, load_obstacle_data=r.load_obstacle_data,
                          set_pause=r.set_pause)
        try:
            ok = self._send('scenario_load', conv.scenario_load(sl))
        except (conv.CommandError, udp.EncodeError) as e:
            self._refuse('scenario_load', e)
            ok = False
        return MoraiSyncModeSLSrvResponse(SyncModeResultResponse(ok))

    def _srv_sync_tick(self, req):
        """Advance one frame (with the command stored by SyncModeCtrlCmd, if any) and
        answer with that frame's ego status."""
        r = req.request
        tick = emu_sync.EmuSyncTick(frame=r.frame)
        pending, self.sync_pending = self.sync_pending, None
        gear = self.sync_gear if self.sync_gear is not None else self.gear
        if pending is not None:
            c = conv.ctrl_cmd(pending[1], gear, 2, self.cfg.max_steering_deg, self.cfg.steering_sign)
            tick = tick._replace(has_ctrl=True, gear=c.gear, cmd_type=c.cmd_type, velocity=c.velocity,
                                 acceleration=c.acceleration, accel=c.accel, brake=c.brake, steer=c.steer)
        elif self.sync_gear is not None:
            tick = tick._replace(has_ctrl=True, gear=gear, cmd_type=1, brake=0.0)
        out = WaitForTickResponse()
        st = self._sync_request(tick, emu_sync.REPLY_TICK)
        if st is None:
            return MoraiWaitForTickSrvResponse(out)
        out.tick_status, out.pause_status, out.frame = st.result, st.paused, st.frame
        out.time = '%d.%09d' % (st.sec, st.nsec)
        if st.result and self.cfg.ego_status_port:
            # the frame's ego status is sent before the answer, but on another socket: wait for it
            end = time.monotonic() + self.cfg.service_timeout
            with self.status_cond:
                while (self.status is None or (self.status.sec, self.status.nsec) != (st.sec, st.nsec)) \
                        and time.monotonic() < end:
                    self.status_cond.wait(max(0.0, end - time.monotonic()))
                if self.status is not None and (self.status.sec, self.status.nsec) == (st.sec, st.nsec):
                    out.vehicle_status = self.status_msg
        elif not st.result:
            rospy.logwarn_throttle(2.0, 'udp_bridge: tick refused: %s' % emu_sync.REASON_NAMES.get(st.reason, st.reason))
        return MoraiWaitForTickSrvResponse(out)

    # -------------------------------------------------------------- diagnostics

    def _diag_stream(self, name):
        st = self.stats[name]

        def task(stat):
            now = time.monotonic()
            prev = self._rates.get(name)
            rate = 0.0
            if prev is not None and now > prev[1]:
                rate = (st.received - prev[0]) / (now - prev[1])
            self._rates[name] = (st.received, now)
            age = st.age(now)
            if age is None:
                level, text = ((DiagnosticStatus.OK, 'no event yet') if name in EVENT_STREAMS else
                               (DiagnosticStatus.WARN, 'no packet yet on port %d' % self.cfg[name + '_port']))
            elif age > self.cfg.stale_timeout and name not in EVENT_STREAMS:
                level, text = DiagnosticStatus.WARN, 'stale: last packet %.1f s ago' % age
            else:
                level, text = DiagnosticStatus.OK, '%.1f Hz' % rate
            if st.decode_errors or st.wrong_type:
                level = max(level, DiagnosticStatus.WARN)
                text += '; %d malformed, %d of another type' % (st.decode_errors, st.wrong_type)
            if st.foreign:
                level = max(level, DiagnosticStatus.WARN)
                text += '; %d from unexpected hosts' % st.foreign
            stat.summary(level, text)
            stat.add('port', self.cfg[name + '_port'])
            stat.add('rate [Hz]', '%.1f' % rate)
            stat.add('received', st.received)
            stat.add('published', st.published)
            stat.add('decode errors', st.decode_errors)
            stat.add('wrong type', st.wrong_type)
            stat.add('from unexpected hosts', st.foreign)
            stat.add('last unexpected sender', st.last_foreign)
            stat.add('age of last packet [s]', '' if age is None else '%.3f' % age)
            stat.add('last error', st.last_error)
            if name in ('ego_status', 'object_info', 'collision', 'imu'):
                stat.add('invalid packet stamps', self.bad_stamps)
            return stat
        return task

    def _diag_commands(self, stat):
        refused = sum(self.tx_refused.values())
        if refused:
            stat.summary(DiagnosticStatus.WARN, '%d commands refused (last: %s)' % (refused, self.last_refusal))
        elif self.sender.errors:
            stat.summary(DiagnosticStatus.WARN, 'send errors: %s' % self.sender.last_error)
        else:
            stat.summary(DiagnosticStatus.OK, '%d packets sent' % self.sender.sent)
        for n in self.tx_counts:
            stat.add('%s sent' % n, self.tx_counts[n])
            stat.add('%s refused' % n, self.tx_refused[n])
        stat.add('last refusal', self.last_refusal)
        stat.add('send errors', self.sender.errors)
        stat.add('gear sent', GEAR_TEXT.get(self.gear, self.gear))
        stat.add('ctrl_mode sent', MODE_TEXT.get(self.ctrl_mode, self.ctrl_mode))
        return stat

    def _diag_control(self, stat):
        """Why a command 'does nothing': the simulator's reported mode and gear."""
        s = self.status
        active = self.ctrl_sent_t is not None and time.monotonic() - self.ctrl_sent_t < 2.0
        if s is None:
            stat.summary(DiagnosticStatus.OK, 'no ego status yet')
            return stat
        problems = []
        if active and s.ctrl_mode != 2:
            problems.append('simulator is in %s control mode (ctrl_mode=%d): ctrl commands are ignored; '
                            'switch the ego to automatic mode in the simulator'
                            % (MODE_TEXT.get(s.ctrl_mode, '?'), s.ctrl_mode))
        if active and s.gear != self.gear and s.ctrl_mode == 2:
            problems.append('simulator reports gear %s but %s is commanded'
                            % (GEAR_TEXT.get(s.gear, s.gear), GEAR_TEXT.get(self.gear, self.gear)))
        if problems:
            stat.summary(DiagnosticStatus.WARN, '; '.join(problems))
        else:
            stat.summary(DiagnosticStatus.OK, 'commands active' if active else 'no ctrl command in the last 2 s')
        stat.add('reported ctrl_mode', '%d (%s)' % (s.ctrl_mode, MODE_TEXT.get(s.ctrl_mode, '?')))
        stat.add('reported gear', '%d (%s)' % (s.gear, GEAR_TEXT.get(s.gear, '?')))
        stat.add('commanded gear', '%d (%s)' % (self.gear, GEAR_TEXT.get(self.gear, '?')))
        stat.add('commanding', str(active))
        return stat

    # ----------------------------------------------------------------- shutdown

    def shutdown(self):
        if not self.live:
            return
        if self.any_ctrl_sent and self.cfg.ctrl_cmd_port:
            try:
                self._send('ctrl_cmd', conv.brake_cmd(self.gear, self.ctrl_mode, self.ctrl_bytes))
            except Exception as e:  # shutting down: report, never raise
                rospy.logwarn('udp_bridge: final brake command failed: %s', e)
        self.receiver.stop()
        self.sender.close()


def main(argv=None):
    rospy.init_node('udp_bridge')
    try:
        cfg = load(PARAMS)
        node = UdpBridge(cfg)
    except (ParamError, transport.TransportError) as e:
        rospy.logfatal('udp_bridge: %s', e)
        raise SystemExit(2)
    rospy.on_shutdown(node.shutdown)
    node.start()
    rospy.loginfo('udp_bridge: receiving from %s on %s (%s), sending to %s', cfg.sim_ip, cfg.bind_ip,
                  ', '.join('%s:%d' % (n, cfg[n + '_port']) for n in node.handlers), node.sender.host)
    rospy.spin()


if __name__ == '__main__':
    main()
