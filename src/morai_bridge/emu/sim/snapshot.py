"""What :meth:`SimEmulator.snapshot` returns: immutable views of the emulated world.

Plain ``NamedTuple`` types (units in the comments); :class:`PortTally` is the
mutable counter behind one :class:`PortCounters`; :func:`snapshot_diagnostics`
sums a snapshot up for /diagnostics.  No ROS.
"""

from typing import Dict, NamedTuple, Optional, Tuple

from morai_bridge.link.workers import OK, WARN

__all__ = ["EgoSnapshot", "ObjectSnapshot", "LightSnapshot", "IntersectionSnapshot",
           "PortCounters", "SyncSnapshot", "SimStatusSnapshot", "SimSnapshot",
           "PortTally", "snapshot_diagnostics"]


class EgoSnapshot(NamedTuple):
    x: float                 # m, map frame
    y: float
    z: float
    roll: float              # deg
    pitch: float             # deg
    yaw_deg: float           # deg, CCW from East, wrapped to [-180, 180)
    speed_kmh: float         # signed, + forward
    vel_x_kmh: float         # velocity vector in the map frame
    vel_y_kmh: float
    acc_long: float          # m/s^2, d(speed)/dt of the last step
    yaw_rate_deg_s: float    # deg/s, CCW positive
    steer_deg: float         # front-wheel angle, + RIGHT (wire convention)
    accel: float             # pedal 0..1
    brake: float             # pedal 0..1
    gear: int
    ctrl_mode: int           # 1 keyboard, 2 auto


class ObjectSnapshot(NamedTuple):
    id: int
    obj_type: int            # 0 pedestrian, 1 vehicle, 2 obstacle
    x: float
    y: float
    z: float
    yaw_deg: float
    length: float
    width: float
    height: float
    vel_x_kmh: float
    vel_y_kmh: float
    distance: float          # m, centre to centre from the ego
    name: str
    ghost: bool


class LightSnapshot(NamedTuple):
    id: str
    type: int
    status: int
    forced: bool


class IntersectionSnapshot(NamedTuple):
    index: int
    status: int
    time_s: float


class PortCounters(NamedTuple):
    port: int                # bound port
    received: int            # datagrams from an allowed sender
    accepted: int            # decoded and acted upon
    ignored: int             # well-formed but not applied (keyboard mode, unknown id, ...)
    malformed: int           # failed to decode
    wrong_type: int          # a valid message of a type this port does not take
    foreign: int             # from a sender other than allowed_sender_ip
    errors: int              # handler failures (bugs; logged with a traceback)
    last_error: str


class SyncSnapshot(NamedTuple):
    on: bool
    user_id: str
    frame: int
    time_step_ms: int


class SimStatusSnapshot(NamedTuple):
    status: int
    command_platform: int
    command: int
    option: str
    result: int


class SimSnapshot(NamedTuple):
    time_ns: int             # simulated clock (epoch or 0-based in deterministic mode)
    sec: int
    nsec: int
    steps: int               # physics steps made
    paused: bool
    ego: EgoSnapshot
    objects: Tuple[ObjectSnapshot, ...]   # nearest first, all of them
    lights: Tuple[LightSnapshot, ...]
    intersections: Tuple[IntersectionSnapshot, ...]
    collisions: Tuple[int, ...]           # ids of the objects touching the ego
    vehicle_collisions: Tuple[Tuple[int, int], ...]   # NPC-NPC pairs (ids)
    lamps: Tuple[int, int]                # (turn_signal, emergency_signal)
    sensors: Dict[int, Tuple[float, ...]]  # sensor_index -> (x, y, z, roll, pitch, yaw)
    scenario: str
    sim_status: SimStatusSnapshot
    sync: SyncSnapshot
    counters: Dict[str, PortCounters]
    sent: Dict[str, int]                  # datagrams sent per stream
    overruns: int       # loop ticks more than MAX_CATCHUP steps late: the clock fell behind
    late_steps: int = 0     # steps made (and sent) after their deadline, in a catch-up burst
    lost_periods: int = 0   # wall-clock step periods given up after overruns (clock lag, steps)
    # the sensor rig's counters (a sensors.rig.SensorsSnapshot), None: no sensor stream enabled
    sensor_streams: Optional["SensorsSnapshot"] = None  # noqa: F821 (the sensors need numpy; not imported here)


class PortTally:
    """Mutable counters of one listening port (the emulator's lock protects them)."""

    __slots__ = ("received", "accepted", "ignored", "malformed", "wrong_type", "errors",
                 "last_error", "logged")

    def __init__(self):
        self.received = self.accepted = self.ignored = 0
        self.malformed = self.wrong_type = self.errors = 0
        self.last_error = ""
        self.logged = set()


def snapshot_diagnostics(s: SimSnapshot, pcu_state=None):
    """The emulator's /diagnostics entry: ``(level, summary, [(key, value), ...])``.

    Level (as ``diagnostic_msgs/DiagnosticStatus``): WARN (1) when a listening
    port saw malformed, wrong-type or foreign datagrams, else OK (0).  Values:
    the ego, objects, collisions, per-port counters, datagrams sent, the loop's
    timing, the sensor streams' counters when any is enabled, and with
    ``pcu_state`` (a :class:`~morai_bridge.emu.pcu.protocol.PcuState`, Serial+UDP
    mode) the PCU's mode and frame counts.
    """
    bad = sum(c.malformed + c.wrong_type + c.foreign for c in s.counters.values())
    level = OK if not bad else WARN
    summary = '%s, sim time %d.%03d s%s' % ('paused' if s.paused else 'running', s.sec, s.nsec // 1000000,
                                             ', %d bad datagrams' % bad if bad else '')
    values = []

    def add(key, value):
        values.append((key, value))

    add('ego x, y [m]', f'{s.ego.x:.2f}, {s.ego.y:.2f}')
    add('ego speed [km/h]', f'{s.ego.speed_kmh:.1f}')
    add('ego gear / ctrl_mode', '%d / %d' % (s.ego.gear, s.ego.ctrl_mode))
    add('objects', len(s.objects))
    add('collisions', ' '.join(map(str, s.collisions)))
    for name, c in sorted(s.counters.items()):
        add('%s (port %d)' % (name, c.port), 'received %d, accepted %d, ignored %d, malformed %d, '
            'wrong type %d, foreign %d' % (c.received, c.accepted, c.ignored, c.malformed,
                                           c.wrong_type, c.foreign))
    add('sent', ', '.join('%s %d' % kv for kv in sorted(s.sent.items())))
    add('loop overruns', s.overruns)
    add('steps sent late (caught up)', s.late_steps)
    add('step periods given up (clock lag)', s.lost_periods)
    r = s.sensor_streams
    if r is not None:
        add('sensor ports', ', '.join('%s %d' % kv for kv in sorted(r.ports.items())))
        if 'camera' in r.ports:
            add('camera frames / datagrams / box datagrams',
                '%d / %d / %d' % (r.camera_frames, r.camera_datagrams, r.camera_box_datagrams))
            add('camera ms per frame (mean / max), skipped frames',
                '%.1f / %.1f, %d' % (r.camera_ms, r.camera_ms_max, r.camera_skipped))
        if 'lidar' in r.ports:
            add('lidar packets / revolutions / skipped packets',
                '%d / %d / %d' % (r.lidar_packets, r.lidar_revolutions, r.lidar_skipped))
            add('lidar ms per revolution, rpm', f'{r.lidar_ms_per_rev:.1f}, {r.lidar_rpm:.2f}')
        if 'lidar2d' in r.ports:
            add('lidar2d scans / skipped', '%d / %d' % (r.lidar2d_scans, r.lidar2d_skipped))
        add('sensor scenes replaced (renderer behind)', '%d of %d' % (r.scenes_replaced, r.scenes))
        if r.send_errors:
            add('sensor send errors', '%d (%s)' % (r.send_errors, r.last_error))
    if pcu_state is not None:
        add('PCU mode', str(pcu_state.mode))
        add('PCU frames ok / rejected', '%d / %d' % (pcu_state.frames_ok, pcu_state.frames_rejected))
    return level, summary, values
