"""Send side of the UDP bridge: morai_msgs command topics -> simulator datagrams.

:class:`CommandSender` subscribes to every enabled command topic of
:data:`morai_bridge.wire.udp.streams.TO_SIM` (which declares each command's port, topic, message
type and queue), converts each message with the sender's method in its table
:attr:`CommandSender.METHODS` (``(m)``: a list of packets), for a command that needs the bridge's
parameters or state, or else with the stream's converter in :data:`.ros_to_sim.CONVERTERS`
(``converter(m)``: a packet or a list of them); every command with a topic is in exactly one of
the two tables;
``ros_to_sim`` refuses NaN, out-of-range and too-long values with a CommandError (nothing is
sent; what is mapped or clamped instead is counted).  It sends the packets to the simulator's port of
that stream, holds the command state that travels with control commands (gear, control mode,
lamps), sends one braking command when ``/ctrl_cmd`` falls silent for ``~ctrl_cmd_timeout`` (the
watchdog: the simulator is taken to hold the last command) and one on shutdown when control
commands were sent.
"""
import collections
import threading
import time
from typing import NamedTuple, Optional

import roslib.message
import rospy

from morai_msgs.msg import Lamps

from morai_bridge.configuration import vehicle_profiles
from morai_bridge.configuration.params import Param, port_param
from morai_bridge.link import transport
from morai_bridge.link.workers import Worker
from morai_bridge.ros.udp_bridge import ros_to_sim
from morai_bridge.wire import enums, udp
from morai_bridge.wire.udp import streams

PORT_PARAMS = [port_param(s.param, s.port, 'send ' + s.name + ' to the simulator' + s.note) for s in streams.TO_SIM]
TOPIC_PARAMS = [Param(s.topic_param, s.topic, 'subscribed ' + s.ros_type) for s in streams.TO_SIM if s.topic]
COMMAND_PARAMS = [
    Param('vehicle_profile', 'morai_sedan', 'vehicle profile: a name in config/vehicles (morai_sedan, erp42) or '
          'the path of a YAML file; gives the maximum steering angle, wheelbase and size'),
    Param('max_steering_deg', 0.0, 'maximum front wheel angle [deg] that normalises ctrl_cmd steering; '
          '0 = the vehicle profile\'s', minimum=0.0, maximum=90.0),
    Param('max_rear_steering_deg', 0.0, 'maximum rear wheel angle [deg] that normalises CtrlCmd.rear_steer (2026 '
          'message set, 59-byte command); 0 = the front maximum (no source gives the rear one)', minimum=0.0,
          maximum=90.0),
    Param('steering_sign', 0, 'wire steer = sign x CtrlCmd.steering (CtrlCmd is + left, as MORAI\'s native ROS mode; '
          'the wire is + left on 25.S4, + right on 24.R2); 0: the sim_version\'s', choices=(-1, 0, 1)),
    Param('ghost_steering_sign', 0, 'wire Ego Ghost steer_angle = sign x GhostMessage.steering_angle (taken as + '
          'right, like EgoVehicleStatus.wheel_angle); 0: the sim_version\'s', choices=(-1, 0, 1)),
    Param('gear', 4, 'gear sent with ctrl commands: 1 P, 2 R, 3 N, 4 D', minimum=0, maximum=5),
    Param('ctrl_cmd_bytes', 0, 'Ego Ctrl Cmd packet size: 55 (front steer) or 59 (front + rear; 26.R1); 0: the '
          'sim_version\'s', choices=(0, 55, 59)),
    Param('zero_longl_cmd_type', 1, 'Ego Ctrl Cmd cmd_type sent for a CtrlCmd whose longlCmdType is 0 (the '
          'field\'s default, which MORAI\'s own ROS examples leave and native ROS mode drives as pedal control): '
          '1 pedal (accel / brake / steering), 2 velocity, 3 acceleration; 0 refuses it', choices=(0, 1, 2, 3)),
    Param('ctrl_cmd_timeout', 0.5, 'when /ctrl_cmd has been silent this long [s], send one braking command '
          '(pedal mode, full brake) and say so on /diagnostics: the simulator is taken to hold the last command, so '
          'a planner that dies would leave the car driving; 0: off (hold the last command)', minimum=0.0),
    Param('set_traffic_light_bytes', 46, 'Set TrafficLight packet size: 46, or 47 for old builds',
          choices=(46, 47)),
]


#: what a longlCmdType of 0 is taken as, by ~zero_longl_cmd_type
ZERO_AS_NAMES = {0: 'refused', 1: 'pedal control: accel, brake, steering', 2: 'velocity control',
                 3: 'acceleration control'}


class State(NamedTuple):
    """One consistent view of :class:`CommandState`."""
    gear: int                   # wire gear sent with ctrl commands
    ctrl_mode: int              # wire control mode sent with them
    lamps: object               # the last morai_msgs/Lamps sent
    sync_gear: Optional[int]    # lock-step mode's gear (SyncModeSetGear); None: ``gear``


class CommandState:
    """What travels with the control commands -- gear, control mode (wire codes), the last lamps sent
    and lock-step mode's gear -- with one owner.  Readers take one :meth:`snapshot` per packet or
    diagnostic; writers go through :meth:`update` or, to plan a change from the state in force,
    :meth:`change`; nobody else takes :attr:`_lock`.  So a packet never carries the gear of one change
    and the mode of another.

    Lock order of the command side (outer first; a thread holding one never waits for one above it):
    ``CommandSender._ctrl_lock`` (a /ctrl_cmd callback, the watchdog, shutdown), then this state's
    ``_lock`` (held only while reading or writing these fields: never across a send), then
    ``CommandSender._count_lock`` (the counters, held only while counting)."""

    _FIELDS = ('gear', 'ctrl_mode', 'lamps', 'sync_gear')

    def __init__(self, gear, ctrl_mode, lamps, sync_gear=None):
        self._lock = threading.Lock()
        self._state = State(gear, ctrl_mode, lamps, sync_gear)

    def snapshot(self):
        """The :class:`State` in force."""
        with self._lock:
            return self._state

    def update(self, **values):
        """Set the fields given (not None; ``sync_gear`` may be set to a gear only); True when gear or
        control mode changed."""
        return self.change(lambda state: (values, None))[1]

    def change(self, plan):
        """Plan a change from the state in force and apply it as one step: ``plan(state)`` returns
        (fields to set, a result); returns (that result, True when gear or control mode changed).
        ``plan`` must not send or wait: it runs under the state's lock."""
        with self._lock:
            before = self._state
            values, result = plan(before)
            unknown = set(values) - set(self._FIELDS)
            if unknown:
                raise TypeError('CommandState has no field %s' % ', '.join(sorted(unknown)))
            self._state = before._replace(**{k: v for k, v in values.items() if v is not None})
            changed = (self._state.gear, self._state.ctrl_mode) != (before.gear, before.ctrl_mode)
        return result, changed

    gear = property(lambda self: self.snapshot().gear)
    ctrl_mode = property(lambda self: self.snapshot().ctrl_mode)
    lamps = property(lambda self: self.snapshot().lamps)


def data_length_of(cls, size):
    """The data_length of the variant of message class ``cls`` that is ``size`` bytes long."""
    for v in udp.variants_of(cls):
        if size in v.total_lengths:
            return v.data_length
    raise ValueError('no %s variant is %d bytes long' % (cls.__name__, size))


class CommandSender:
    """Command topics -> packets (see the module docstring)."""

    def __init__(self, cfg, bind_ip, sim_ip, profile, supervisor=None):
        """``supervisor`` (a NodeSupervisor, or None): watches the /ctrl_cmd watchdog's worker."""
        self.cfg = cfg
        self.profile = profile
        # ~max_steering_deg, when set, overrides the vehicle profile's maximum
        self.max_steering_deg = vehicle_profiles.choose(cfg.max_steering_deg, profile.max_steering_deg)
        # per command: cfg values read once here (Config attributes go through __getattr__)
        self.steering_sign = cfg.steering_sign
        self.max_rear_steering_deg = cfg.max_rear_steering_deg or None     # None: the front maximum
        self.ctrl_data_length = data_length_of(udp.EgoCtrlCmd, cfg.ctrl_cmd_bytes)
        self.tl_data_length = data_length_of(udp.SetTrafficLight, cfg.set_traffic_light_bytes)
        self.state = CommandState(cfg.gear, int(enums.CtrlMode.AUTO), Lamps())
        self.sender = transport.UdpSender(bind_ip if bind_ip != '' else '0.0.0.0',
                                          sim_ip if sim_ip not in ('', '0.0.0.0') else '127.0.0.1')
        self.names = [s.name for s in streams.TO_SIM]
        #: stream name -> the port its packets go to (read once: send runs per packet)
        self.ports = {s.name: cfg[s.param] for s in streams.TO_SIM}
        self.tx_counts = {n: 0 for n in self.names}
        self.tx_refused = {n: 0 for n in self.names}
        # the counters are written by subscriber, service and watchdog threads: one lock keeps them exact
        # (the innermost lock of the command side: CommandState says the order)
        self._count_lock = threading.Lock()
        self.adjusted = collections.Counter()   # 'what was mapped or clamped' -> commands sent so
        self.refused_t = {}            # stream -> monotonic time of its last refusal
        self.last_refusals = {}        # stream -> the text of its last refusal
        self.ctrl_sent_t = None        # monotonic time of the last ctrl command sent from /ctrl_cmd
        self.any_ctrl_sent = False
        self.watchdog_brakes = 0       # braking commands the watchdog sent
        self.watchdog_braked = False   # the last thing sent on ctrl_cmd was the watchdog's brake
        self.zero_as = cfg.zero_longl_cmd_type
        self._zero_logged = False
        # a /ctrl_cmd command and the watchdog's brake are sent under one lock: the brake never goes
        # out after a command that arrived while the watchdog was deciding (the outermost lock of the
        # command side: CommandState says the order)
        self._ctrl_lock = threading.Lock()
        self.watchdog = None
        if cfg.ctrl_cmd_timeout > 0 and cfg.ctrl_cmd_port:
            self._watchdog_period = min(0.1, cfg.ctrl_cmd_timeout / 5.0)
            log, on_dead = (supervisor.log, supervisor.on_dead) if supervisor is not None else (None, None)
            self.watchdog = Worker('ctrl_cmd_watchdog', self._watch, log=log, on_dead=on_dead)
            if supervisor is not None:
                supervisor.watch(lambda: [self.watchdog])
        self.methods = {name: method.__get__(self) for name, method in self.METHODS.items()}
        for s in streams.TO_SIM:
            if s.topic and cfg[s.param]:
                rospy.Subscriber(cfg[s.topic_param], roslib.message.get_message_class(s.ros_type),
                                 self._make_cb(s), queue_size=s.queue)

    @property
    def host(self):
        return self.sender.host

    # the state in force (read-only views; change it through self.state)
    gear = property(lambda self: self.state.gear)
    ctrl_mode = property(lambda self: self.state.ctrl_mode)
    lamps_state = property(lambda self: self.state.lamps)

    def send(self, name, packet, encode=udp.encode):
        """Encode and send one packet on stream ``name``; False (counted, logged) on a send error."""
        ok = self.sender.send(self.ports[name], encode(packet))
        if ok:
            with self._count_lock:
                self.tx_counts[name] += 1
        elif not self.sender.closed:         # closed: the node is shutting down, nothing goes out any more
            rospy.logwarn_throttle(5.0, f'udp_bridge: sending {name} failed: {self.sender.last_error}')
        return ok

    def refuse(self, name, err):
        """Count and log a command that was not sent, with the reason."""
        with self._count_lock:
            self.tx_refused[name] += 1
            self.last_refusals[name] = str(err)
            self.refused_t[name] = time.monotonic()
        rospy.logwarn_throttle(2.0, f'udp_bridge: {err}')

    @property
    def last_refusal(self):
        """The text of the newest refusal of any stream ('' before one)."""
        with self._count_lock:
            if not self.refused_t:
                return ''
            return self.last_refusals[max(self.refused_t, key=self.refused_t.get)]

    def refused_recently(self, name, window_s, now=None):
        """The text of stream ``name``'s last refusal when it came within ``window_s`` seconds, else ''."""
        t = self.refused_t.get(name)
        now = time.monotonic() if now is None else now
        return self.last_refusals[name] if t is not None and now - t < window_s else ''

    def ctrl_packet(self, m, ctrl_mode=None, gear=None):
        """The Ego Ctrl Cmd of CtrlCmd ``m`` with the gear and mode in force (one snapshot), or those given."""
        gear_now, mode_now = self.state.snapshot()[:2]
        notes = []
        packet = ros_to_sim.ctrl_cmd(m, gear_now if gear is None else gear,
                                     mode_now if ctrl_mode is None else ctrl_mode,
                                     self.max_steering_deg, self.steering_sign, self.ctrl_data_length,
                                     self.max_rear_steering_deg, self.zero_as, notes)
        if notes:
            with self._count_lock:
                self.adjusted.update(notes)
            if m.longlCmdType == 0 and not self._zero_logged:
                self._zero_logged = True
                rospy.loginfo('udp_bridge: CtrlCmd.longlCmdType 0 (unset) is sent as %d (%s), as native ROS mode '
                              'drives MORAI\'s own examples; ~zero_longl_cmd_type chooses (0 refuses)',
                              self.zero_as, ZERO_AS_NAMES[self.zero_as])
        return packet

    def brake_packet(self):
        """The safe command with the gear and mode in force."""
        gear, mode = self.state.snapshot()[:2]
        return ros_to_sim.brake_cmd(gear, mode, self.ctrl_data_length)

    def brake(self):
        """Apply gear and mode now with a braking command (only once control commands flow)."""
        if self.any_ctrl_sent and self.cfg.ctrl_cmd_port:
            self.send('ctrl_cmd', self.brake_packet())

    # ------------------------------------------------------------ commands that need more than their converter

    def _build_ctrl_cmd(self, m):
        return [self.ctrl_packet(m)]

    def _build_set_traffic_light(self, m):
        return [ros_to_sim.set_traffic_light(m, self.tl_data_length)]

    def _build_ego_ghost(self, m):
        return [ros_to_sim.ego_ghost(m, self.cfg.ghost_steering_sign)]

    def _build_lamps(self, m):
        packet = ros_to_sim.lamps(m)
        self.state.update(lamps=m)     # kept for the services' plans (turnSignal 3 keeps it)
        return [packet]

    def _build_gv_direct(self, m):
        notes = []
        packet = ros_to_sim.gv_direct(m, notes)
        if notes:
            with self._count_lock:
                self.adjusted.update(notes)
        return [packet]

    #: command stream name -> the method that builds its packets ``(m)``, for the commands that need the
    #: bridge's parameters or state (written out: a reader who greps a stream's name finds it here)
    METHODS = {
        'ctrl_cmd': _build_ctrl_cmd,
        'set_traffic_light': _build_set_traffic_light,
        'ego_ghost': _build_ego_ghost,
        'lamps': _build_lamps,
        'gv_direct': _build_gv_direct,
    }

    def _builder(self, s):
        """message -> [packets] of command stream ``s``: its method, or its converter."""
        build = self.methods.get(s.name)
        if build is not None:
            return build
        convert = ros_to_sim.CONVERTERS[s.name]

        def build(m):
            p = convert(m)
            return p if isinstance(p, list) else [p]
        return build

    def _make_cb(self, s):
        name, build = s.name, self._builder(s)

        def cb(m):
            """True when the message became packets (sent, or counted as send errors)."""
            try:
                packets = build(m)
            except (ros_to_sim.CommandError, udp.EncodeError) as e:
                self.refuse(name, e)
                return False
            for p in packets:
                self.send(name, p)
            return True

        def ctrl_cb(m):
            with self._ctrl_lock:
                if not cb(m):
                    return          # refused: the watchdog goes on counting from the last command sent
                self.ctrl_sent_t = time.monotonic()
                self.any_ctrl_sent = True
                self.watchdog_braked = False
        return ctrl_cb if name == 'ctrl_cmd' else cb

    # ------------------------------------------------------------ the /ctrl_cmd watchdog

    def start(self):
        """Start the /ctrl_cmd watchdog (with ``~ctrl_cmd_timeout`` > 0)."""
        if self.watchdog is not None:
            self.watchdog.start()

    def _watch(self):
        if not self.watchdog.wait(self._watchdog_period):
            self.check_watchdog()

    def check_watchdog(self, now=None):
        """Send the braking command once when /ctrl_cmd has been silent for ``~ctrl_cmd_timeout``;
        True when it did."""
        with self._ctrl_lock:
            t = self.ctrl_sent_t
            now = time.monotonic() if now is None else now
            if t is None or self.watchdog_braked or now - t < self.cfg.ctrl_cmd_timeout:
                return False
            self.watchdog_braked = True
            self.watchdog_brakes += 1
            rospy.logwarn('udp_bridge: no /ctrl_cmd for %.2f s (~ctrl_cmd_timeout): braking command sent; the '
                          'next command takes over', now - t)
            self.send('ctrl_cmd', self.brake_packet())
            return True

    def shutdown(self):
        """Stop the watchdog, send the final braking command and close the socket, both under the
        /ctrl_cmd lock: no command a subscriber thread still delivers can follow the brake, and the
        commands still arriving are dropped quietly (the sender is closed)."""
        if self.watchdog is not None:
            self.watchdog.stop()
        with self._ctrl_lock:
            try:
                self.brake()
            except Exception as e:  # shutting down: report, never raise
                rospy.logwarn('udp_bridge: final brake command failed: %s', e)
            self.sender.close()
