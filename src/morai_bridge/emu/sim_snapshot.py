"""What :meth:`SimEmulator.snapshot` returns: immutable views of the emulated world.

Plain ``NamedTuple`` types (units in the comments); :class:`PortTally` is the
mutable counter behind one :class:`PortCounters`.  No ROS.
"""

from typing import Dict, NamedTuple, Tuple

__all__ = ["EgoSnapshot", "ObjectSnapshot", "LightSnapshot", "IntersectionSnapshot",
           "PortCounters", "SyncSnapshot", "SimStatusSnapshot", "SimSnapshot", "PortTally"]


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


class PortTally:
    """Mutable counters of one listening port (the emulator's lock protects them)."""

    __slots__ = ("received", "accepted", "ignored", "malformed", "wrong_type", "errors",
                 "last_error", "logged")

    def __init__(self):
        self.received = self.accepted = self.ignored = 0
        self.malformed = self.wrong_type = self.errors = 0
        self.last_error = ""
        self.logged = set()
