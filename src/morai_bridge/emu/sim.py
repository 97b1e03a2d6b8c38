"""MORAI simulator emulator: the simulator's side of the UDP protocol, in Python.

It listens where the simulator listens (Ego Ctrl Cmd, Set TrafficLight, Scenario
Load, SimControl, ...) and sends what the simulator sends (Ego Vehicle Status,
Object Info, traffic lights, collisions, SimStatus, GPS NMEA, IMU) so that the
bridge, the demo and the tests run without the Windows simulator.  Every packet
is built and parsed with :mod:`morai_bridge.wire.udp`; the lock-step extension
uses :mod:`morai_bridge.wire.emu_sync`.

Library use::

    from morai_bridge.emu.sim import SimConfig, SimEmulator
    with SimEmulator(SimConfig(scenario="sample")) as sim:
        sim.start()                 # real-time loop in a thread
        ...
        sim.snapshot().ego.x

    # tests: no thread, manual stepping, ephemeral listening ports
    sim = SimEmulator(SimConfig(deterministic=True, ctrl_cmd_port=-1, ...))
    sim.ports["ctrl_cmd"]           # the port actually bound
    sim.poll(0.5); sim.step(100)

Program use (``src`` on ``PYTHONPATH``)::

    python3 -m morai_bridge.emu.sim --scenario sample

Ports: a listening port of 0 disables that command, -1 binds an ephemeral port
(read it back from :attr:`SimEmulator.ports`); a destination port of 0 (or a
rate of 0) disables that stream.  Steering sign: Ego Ctrl Cmd ``steer`` > 0
turns RIGHT, so the heading (yaw, counter-clockwise) decreases.

See docs/emulator.md for every option, the scenario format, the vehicle model
and the synchronous-mode packets.  No ROS imports.
"""

import argparse
import datetime
import logging
import math
import os
import signal
import sys
import threading
import time
from typing import Dict, NamedTuple, Optional, Tuple

from morai_bridge.transport import UdpReceiver, UdpSender, bind_udp, resolve_host
from morai_bridge.wire import emu_sync, nmea, udp

from .scenario import (OBJ_VEHICLE, Actor, ActorSpec, Scenario, ScenarioError,
                       boxes_overlap, load_scenario)
from .sim_signals import (DEFAULT_INTERSECTIONS, DEFAULT_LIGHTS, Intersection, TrafficLight)
from .sim_vehicle import (CMD_ACCELERATION, CMD_EXTERNAL, CMD_THROTTLE, CMD_VELOCITY, GEAR_D,
                          GEAR_P, GEAR_R, Drive, EgoModel, VehicleParams, wrap_deg)

__all__ = ["SimConfig", "SimEmulator", "SimSnapshot", "EgoSnapshot", "ObjectSnapshot",
           "LightSnapshot", "IntersectionSnapshot", "PortCounters", "SyncSnapshot",
           "SimStatusSnapshot", "LISTEN_PORTS", "SEND_PORTS", "FIELD_DOCS", "main",
           "DEFAULT_SCENARIO_DIR"]

log = logging.getLogger(__name__)

NS = 1_000_000_000
KMH = 3.6
KNOTS_PER_MPS = 1.0 / 0.514444

DEFAULT_SCENARIO_DIR = os.path.normpath(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "config", "scenarios"))

# SimControl / SimStatus values (spec 3.19, 3.20)
PLATFORM_LAUNCHER, PLATFORM_SIMULATOR = 0x01, 0x02
STAGE_PLAY = 0x02
STATUS_PLAYING, STATUS_PAUSE = 0x0001, 0x0002
CMD_MAP_VEHICLE_SELECT, CMD_SIM_PAUSE, CMD_SIM_PLAY = 0x0001, 0x0002, 0x0003
CMD_NET_SETTING, CMD_SEN_SETTING, CMD_SCEN_SETTING = 0x0011, 0x0012, 0x0013
RESULT_NONE, RESULT_SUCCESS = 0x00, 0x01
RESULT_INVALID_PLATFORM, RESULT_INVALID_STAGE = 0x11, 0x12
RESULT_NET_LOAD_ERROR, RESULT_SENSOR_LOAD_ERROR, RESULT_SCENARIO_LOAD_ERROR = 0x33, 0x35, 0x37
# SCEN_SETTING option flags (spec 3.19)
SCEN_DELETE_ALL, SCEN_EGO, SCEN_NPC, SCEN_PEDESTRIAN, SCEN_OBSTACLE, SCEN_PAUSE = (
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20)

CTRL_KEYBOARD, CTRL_AUTO = 1, 2

# -------------------------------------------------------------------- configuration

#: name -> (config field, default port, message classes accepted there)
LISTEN_PORTS = {
    "ctrl_cmd": ("ctrl_cmd_port", 9093, (udp.EgoCtrlCmd,)),
    "ego_ghost": ("ego_ghost_port", 9095, (udp.EgoGhostCmd,)),
    "set_traffic_light": ("set_traffic_light_port", 7607, (udp.SetTrafficLight,)),
    "set_intersection": ("set_intersection_port", 9132, (udp.SetIntersectionStatus,)),
    "lamps": ("lamps_port", 9097, (udp.LampControl,)),
    "scenario_load": ("scenario_load_port", 9099, (udp.ScenarioLoad,)),
    "save_sensor_data": ("save_sensor_data_port", 9105, (udp.SaveSensorData,)),
    "sensor_control": ("sensor_control_port", 9103, (udp.SensorControl,)),
    "npc_ghost": ("npc_ghost_port", 9101, (udp.NpcGhostCmd,)),
    "multi_ego": ("multi_ego_port", 7604, (udp.MultiEgoSetting,)),
    "sim_control": ("sim_control_port", 10508, (udp.SimControl,)),
    "gv_direct": ("gv_direct_port", 9111, (udp.GVDirectCmd,)),
    "gv_state": ("gv_state_port", 9112, (udp.GVStateCmd,)),
    "sync": ("sync_port", 9201, (emu_sync.EmuSyncCmd, emu_sync.EmuSyncTick)),
}

#: name -> (port field, default port, rate field or None = event-driven)
SEND_PORTS = {
    "ego_status": ("ego_status_port", 909, "ego_status_hz"),
    "object_info": ("object_info_port", 7505, "object_info_hz"),
    "traffic_light": ("traffic_light_port", 7502, "traffic_light_hz"),
    "intersection": ("intersection_port", 9102, "intersection_hz"),
    "collision": ("collision_port", 9092, None),
    "vehicle_collision": ("vehicle_collision_port", 9108, None),
    "sim_status": ("sim_status_port", 10326, "sim_status_hz"),
    "gps": ("gps_port", 9091, "gps_hz"),
    "imu": ("imu_port", 9110, "imu_hz"),
    "sync_state": ("sync_state_port", 9202, None),
}


_VP = VehicleParams._field_defaults


class SimConfig(NamedTuple):
    """Every option of the emulator, with its default (documented in FIELD_DOCS)."""

    # network
    listen_ip: str = "127.0.0.1"
    user_ip: str = "127.0.0.1"
    allowed_sender_ip: str = ""
    # listening ports (user -> simulator)
    ctrl_cmd_port: int = 9093
    ego_ghost_port: int = 9095
    set_traffic_light_port: int = 7607
    set_intersection_port: int = 9132
    lamps_port: int = 9097
    scenario_load_port: int = 9099
    save_sensor_data_port: int = 9105
    sensor_control_port: int = 9103
    npc_ghost_port: int = 9101
    multi_ego_port: int = 7604
    sim_control_port: int = 10508
    gv_direct_port: int = 9111
    gv_state_port: int = 9112
    sync_port: int = 9201
    # destination ports (simulator -> user)
    ego_status_port: int = 909
    object_info_port: int = 7505
    traffic_light_port: int = 7502
    intersection_port: int = 9102
    collision_port: int = 9092
    vehicle_collision_port: int = 9108
    sim_status_port: int = 10326
    gps_port: int = 9091
    imu_port: int = 9110
    sync_state_port: int = 9202
    # rates (Hz, rounded to a whole number of steps; 0 disables)
    ego_status_hz: float = 50.0
    object_info_hz: float = 50.0
    traffic_light_hz: float = 10.0
    intersection_hz: float = 10.0
    sim_status_hz: float = 10.0
    gps_hz: float = 10.0
    imu_hz: float = 50.0
    # packet variants
    ego_status_data_length: int = 200
    object_info_data_length: int = 2128
    collision_data_length: int = 148
    # time
    step_s: float = 0.02
    deterministic: bool = False
    seed: int = 0
    # control
    keyboard_mode: bool = False
    initial_gear: int = GEAR_P
    velocity_frame: str = "map"
    # ego vehicle
    ego_x: float = 0.0
    ego_y: float = 0.0
    ego_yaw_deg: float = 0.0
    # vehicle geometry and limits: defaults from VehicleParams, the single source
    length: float = _VP["length"]
    width: float = _VP["width"]
    height: float = _VP["height"]
    wheelbase: float = _VP["wheelbase"]
    rear_overhang: float = _VP["rear_overhang"]
    max_steer_deg: float = _VP["max_steer_deg"]
    max_accel: float = _VP["max_accel"]
    max_brake: float = _VP["max_brake"]
    drag_const: float = _VP["drag_const"]
    drag_quad: float = _VP["drag_quad"]
    max_speed_kmh: float = _VP["max_speed_kmh"]
    vel_rate_up: float = _VP["vel_rate_up"]
    vel_rate_down: float = _VP["vel_rate_down"]
    steer_rate_deg_s: float = _VP["steer_rate_deg_s"]
    map_data_id: int = 0
    # world
    scenario: str = ""
    scenario_dir: str = DEFAULT_SCENARIO_DIR
    light_hold_s: float = 10.0
    map_offset_x: float = 0.0
    map_offset_y: float = 0.0
    map_offset_z: float = 0.0
    # GPS: map x/y are UTM easting/northing minus this offset (K-City by default)
    gps_utm_zone: int = 52
    gps_utm_offset_x: float = 302459.942
    gps_utm_offset_y: float = 4122635.537
    gps_alt_offset: float = 0.0

    def vehicle_params(self) -> VehicleParams:
        return VehicleParams(*(getattr(self, f) for f in VehicleParams._fields))

    def check(self) -> None:
        """Raise ValueError naming the first unusable option."""
        for name, (field, _, _) in LISTEN_PORTS.items():
            v = getattr(self, field)
            if not isinstance(v, int) or isinstance(v, bool) or not -1 <= v <= 65535:
                raise ValueError(f"{field}={v!r}: a listening port is -1 (ephemeral), "
                                 f"0 (disabled) or 1..65535")
        for name, (field, _, rate) in SEND_PORTS.items():
            v = getattr(self, field)
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 65535:
                raise ValueError(f"{field}={v!r}: a destination port is 0 (disabled) "
                                 f"or 1..65535")
            if rate is not None:
                hz = getattr(self, rate)
                if not (isinstance(hz, (int, float)) and math.isfinite(hz) and hz >= 0):
                    raise ValueError(f"{rate}={hz!r}: must be a rate >= 0 Hz")
        step_ms = self.step_s * 1000.0
        if not (math.isfinite(step_ms) and step_ms >= 1 and abs(step_ms - round(step_ms)) < 1e-6):
            raise ValueError(f"step_s={self.step_s!r}: must be a whole number of "
                             f"milliseconds, at least 0.001")
        variants = {"ego_status_data_length": udp.EgoVehicleStatus,
                    "object_info_data_length": udp.ObjectInfo,
                    "collision_data_length": udp.CollisionData}
        for field, cls in variants.items():
            allowed = sorted(v.data_length for v in udp.variants_of(cls))
            if getattr(self, field) not in allowed:
                raise ValueError(f"{field}={getattr(self, field)!r}: one of {allowed}")
        if self.initial_gear not in (1, 2, 3, 4):
            raise ValueError(f"initial_gear={self.initial_gear!r}: 1 P, 2 R, 3 N or 4 D")
        if self.velocity_frame not in ("map", "body"):
            raise ValueError(f"velocity_frame={self.velocity_frame!r}: 'map' or 'body'")
        if not -2 ** 31 <= self.map_data_id < 2 ** 31:
            raise ValueError(f"map_data_id={self.map_data_id!r} does not fit int32")
        if not 1 <= self.gps_utm_zone <= 60:
            raise ValueError(f"gps_utm_zone={self.gps_utm_zone!r}: 1..60")
        if not (math.isfinite(self.light_hold_s) and self.light_hold_s >= 0):
            raise ValueError(f"light_hold_s={self.light_hold_s!r}: >= 0 (0 = until changed)")
        try:
            self.vehicle_params().check()
        except ValueError as e:
            raise ValueError(f"vehicle: {e}") from None


#: One line of documentation per option (CLI help; docs/emulator.md has the same table).
FIELD_DOCS = {
    "listen_ip": "address the command ports are bound to",
    "user_ip": "address the streams are sent to (where the bridge runs)",
    "allowed_sender_ip": "accept commands only from this address ('' = any); others are "
                         "counted as foreign and dropped",
    "ego_status_hz": "Ego Vehicle Status rate",
    "object_info_hz": "Object Info rate",
    "traffic_light_hz": "Get TrafficLight Status rate (one datagram per light)",
    "intersection_hz": "Get Intersection Status rate (one datagram per intersection)",
    "sim_status_hz": "SimStatus rate",
    "gps_hz": "GPS rate ($GPGGA + $GPRMC, one datagram each)",
    "imu_hz": "#IMUData$ rate",
    "ego_status_data_length": "Ego Vehicle Status variant: 200 (229 B), 216, 152, 132 or 94",
    "object_info_data_length": "Object Info variant: 2128 (with timestamp) or 2120",
    "collision_data_length": "Collision Data variant: 148 (with timestamp) or 140",
    "step_s": "simulation step, s (whole milliseconds); also the loop period",
    "deterministic": "clock starts at 0 and advances exactly step_s per step; random "
                     "elements use the seed",
    "seed": "seed of the random elements (pedestrian drift)",
    "keyboard_mode": "start in keyboard mode: network control commands are ignored",
    "initial_gear": "gear at start: 1 P, 2 R, 3 N, 4 D",
    "velocity_frame": "frame of the reported ego velocity/acceleration vectors: map or body",
    "ego_x": "ego start x, m (used when the scenario has no ego)",
    "ego_y": "ego start y, m",
    "ego_yaw_deg": "ego start heading, deg, counter-clockwise from East",
    "length": "ego length, m",
    "width": "ego width, m",
    "height": "ego height, m",
    "wheelbase": "ego wheelbase, m",
    "rear_overhang": "ego rear overhang, m (front overhang = length - wheelbase - rear)",
    "max_steer_deg": "front-wheel angle for steer = 1, deg",
    "max_accel": "acceleration at full accelerator pedal, m/s^2",
    "max_brake": "deceleration at full brake pedal (and the P-gear hold), m/s^2",
    "drag_const": "constant drag (rolling resistance), m/s^2",
    "drag_quad": "quadratic drag coefficient, 1/m (a = drag_quad * v^2)",
    "max_speed_kmh": "speed limit of the ego, km/h",
    "vel_rate_up": "velocity mode: speed-up rate limit, m/s^2",
    "vel_rate_down": "velocity mode: slow-down rate limit, m/s^2",
    "steer_rate_deg_s": "front-wheel steering rate limit, deg/s (0 = instantaneous)",
    "map_data_id": "map_data_id reported in Ego Vehicle Status",
    "scenario": "scenario loaded at start ('' = empty world)",
    "scenario_dir": "directory of <name>.json scenarios",
    "light_hold_s": "how long a Set TrafficLight status holds, s of simulated time "
                    "(0 = until the next Set)",
    "map_offset_x": "global_offset_x reported in Collision Data, m",
    "map_offset_y": "global_offset_y reported in Collision Data, m",
    "map_offset_z": "global_offset_z reported in Collision Data, m",
    "gps_utm_zone": "UTM zone (north) of the map frame for the GPS conversion",
    "gps_utm_offset_x": "UTM easting of the map origin, m (K-City: 302459.942)",
    "gps_utm_offset_y": "UTM northing of the map origin, m (K-City: 4122635.537)",
    "gps_alt_offset": "added to z for the GPS altitude, m",
}
for _name, (_field, _port, _classes) in LISTEN_PORTS.items():
    FIELD_DOCS[_field] = (f"listening port of {', '.join(c.__name__ for c in _classes)} "
                          f"(-1 ephemeral, 0 disabled)")
for _name, (_field, _port, _rate) in SEND_PORTS.items():
    FIELD_DOCS[_field] = f"destination port of the {_name.replace('_', ' ')} stream (0 disabled)"
del _name, _field, _port, _classes, _rate
assert set(FIELD_DOCS) == set(SimConfig._fields), set(SimConfig._fields) ^ set(FIELD_DOCS)


# -------------------------------------------------------------------- snapshot types

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
    overruns: int                         # loop ticks that started late (steps skipped)


class _Counter:
    __slots__ = ("received", "accepted", "ignored", "malformed", "wrong_type", "errors",
                 "last_error", "logged")

    def __init__(self):
        self.received = self.accepted = self.ignored = 0
        self.malformed = self.wrong_type = self.errors = 0
        self.last_error = ""
        self.logged = set()


# -------------------------------------------------------------------- GPS helper

def utm_to_latlon(easting: float, northing: float, zone: int) -> Tuple[float, float]:
    """WGS-84 UTM (northern hemisphere) -> (lat, lon) in degrees (series to ~mm)."""
    a, f, k0 = 6378137.0, 1 / 298.257223563, 0.9996
    e2 = f * (2 - f)
    ep2 = e2 / (1 - e2)
    x, m = easting - 500000.0, northing / k0
    mu = m / (a * (1 - e2 / 4 - 3 * e2 ** 2 / 64 - 5 * e2 ** 3 / 256))
    e1 = (1 - math.sqrt(1 - e2)) / (1 + math.sqrt(1 - e2))
    p1 = (mu + (3 * e1 / 2 - 27 * e1 ** 3 / 32) * math.sin(2 * mu)
          + (21 * e1 ** 2 / 16 - 55 * e1 ** 4 / 32) * math.sin(4 * mu)
          + (151 * e1 ** 3 / 96) * math.sin(6 * mu) + (1097 * e1 ** 4 / 512) * math.sin(8 * mu))
    sin1, cos1, tan1 = math.sin(p1), math.cos(p1), math.tan(p1)
    c1, t1 = ep2 * cos1 ** 2, tan1 ** 2
    n1 = a / math.sqrt(1 - e2 * sin1 ** 2)
    r1 = a * (1 - e2) / (1 - e2 * sin1 ** 2) ** 1.5
    d = x / (n1 * k0)
    lat = p1 - (n1 * tan1 / r1) * (
        d ** 2 / 2 - (5 + 3 * t1 + 10 * c1 - 4 * c1 ** 2 - 9 * ep2) * d ** 4 / 24
        + (61 + 90 * t1 + 298 * c1 + 45 * t1 ** 2 - 252 * ep2 - 3 * c1 ** 2) * d ** 6 / 720)
    lon = (d - (1 + 2 * t1 + c1) * d ** 3 / 6
           + (5 - 2 * c1 + 28 * t1 - 3 * c1 ** 2 + 8 * ep2 + 24 * t1 ** 2) * d ** 5 / 120) / cos1
    return math.degrees(lat), (zone - 1) * 6 - 180 + 3 + math.degrees(lon)


def _quaternion(roll_deg: float, pitch_deg: float, yaw_rad: float):
    cr, sr = math.cos(math.radians(roll_deg) / 2), math.sin(math.radians(roll_deg) / 2)
    cp, sp = math.cos(math.radians(pitch_deg) / 2), math.sin(math.radians(pitch_deg) / 2)
    cy, sy = math.cos(yaw_rad / 2), math.sin(yaw_rad / 2)
    return (cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy)


def _finite(*values) -> bool:
    return all(math.isfinite(v) for v in values)


# -------------------------------------------------------------------- the emulator

class SimEmulator:
    """The simulator side of the MORAI UDP protocol (see the module docstring).

    Thread safety: every public method may be called from any thread.  With
    :meth:`start`, one loop thread receives datagrams and runs the steps; without
    it, :meth:`step` and :meth:`poll` do that work in the caller's thread.
    """

    def __init__(self, config: Optional[SimConfig] = None, **overrides):
        cfg = (config or SimConfig())._replace(**overrides)
        cfg.check()
        self.config = cfg
        self._lock = threading.RLock()
        self._step_ns = int(round(cfg.step_s * 1000)) * 1_000_000
        self._step_s = self._step_ns / NS
        listen_ip = resolve_host(cfg.listen_ip, "listen_ip")
        self._user_ip = resolve_host(cfg.user_ip, "user_ip")
        allowed = cfg.allowed_sender_ip
        allowed = resolve_host(allowed, "allowed_sender_ip") if allowed else ""

        # sockets
        socks = {}
        try:
            for name, (field, _, _) in LISTEN_PORTS.items():
                port = getattr(cfg, field)
                if port != 0:
                    socks[name] = bind_udp(listen_ip, 0 if port == -1 else port, field)
            self._sender = UdpSender(listen_ip, self._user_ip)
        except Exception:
            for s in socks.values():
                s.close()
            raise
        #: listening port actually bound, per command name (enabled ones only)
        self.ports: Dict[str, int] = {n: s.getsockname()[1] for n, s in socks.items()}
        #: destination port per stream (enabled ones only)
        self.dst_ports: Dict[str, int] = {
            n: getattr(cfg, f) for n, (f, _, r) in SEND_PORTS.items()
            if getattr(cfg, f) != 0 and (r is None or getattr(cfg, r) > 0)}
        self._periods = {n: max(1, int(round(1.0 / (getattr(cfg, r) * self._step_s))))
                         for n, (f, _, r) in SEND_PORTS.items()
                         if r is not None and n in self.dst_ports}
        self._rx = UdpReceiver(socks, allowed, self._on_datagram)
        self._counters = {n: _Counter() for n in socks}
        self._sent = {n: 0 for n in SEND_PORTS}
        self._handlers = {
            "ctrl_cmd": self._on_ctrl_cmd, "ego_ghost": self._on_ego_ghost,
            "set_traffic_light": self._on_set_light, "set_intersection": self._on_set_intersection,
            "lamps": self._on_lamp, "scenario_load": self._on_scenario_load,
            "save_sensor_data": self._on_save_sensor_data,
            "sensor_control": self._on_sensor_control, "npc_ghost": self._on_npc_ghost,
            "multi_ego": self._on_multi_ego, "sim_control": self._on_sim_control,
            "gv_direct": self._on_gv_direct, "gv_state": self._on_gv_state,
        }

        # world state
        self._ego = EgoModel(cfg.vehicle_params(), cfg.initial_gear)
        self._ego.set_pose(cfg.ego_x, cfg.ego_y, 0.0, cfg.ego_yaw_deg)
        self._ctrl_mode = CTRL_KEYBOARD if cfg.keyboard_mode else CTRL_AUTO
        self._drive: Optional[Drive] = None
        self._external: Optional[Drive] = None
        self._actors: Dict[int, Actor] = {}
        self._lights = [TrafficLight(s) for s in DEFAULT_LIGHTS]
        self._intersections = [Intersection(s) for s in DEFAULT_INTERSECTIONS]
        self._contacts: Tuple[int, ...] = ()
        self._npc_pairs: Tuple[Tuple[int, int], ...] = ()
        self._lamps = (0, 0)
        self._sensors: Dict[int, Tuple[float, ...]] = {}
        self._scenario_name = ""
        self._paused = False
        self._time_ns = 0 if cfg.deterministic else time.time_ns() // 1_000_000 * 1_000_000
        self._elapsed_ns = 0
        self._steps = 0
        self._ticks = 0
        self._overruns = 0
        self._status = SimStatusSnapshot(STATUS_PLAYING, 0, 0, "", RESULT_NONE)
        self._sync_on = False
        self._sync_user = ""
        self._sync_step_ms = 0
        self._frame = 0
        self._templates = {
            "ego_status": udp.make(udp.EgoVehicleStatus, cfg.ego_status_data_length),
            "object_info": udp.make(udp.ObjectInfo, cfg.object_info_data_length),
            "collision": udp.make(udp.CollisionData, cfg.collision_data_length),
        }
        self._has_stamp = {k: getattr(t, "sec", None) is not None
                           for k, t in self._templates.items()}
        self._status_fields = frozenset(
            f for f in udp.EgoVehicleStatus._fields
            if getattr(self._templates["ego_status"], f) is not None)
        self._thread: Optional[threading.Thread] = None
        self._stop = threading.Event()
        self._closed = False
        try:
            if cfg.scenario:
                sc = load_scenario(cfg.scenario_dir, cfg.scenario)
                with self._lock:
                    self._apply_scenario(sc, True, True, True, True, True, False)
            with self._lock:
                self._contacts, self._npc_pairs = self._detect()
        except Exception:
            self.close()
            raise

    # ------------------------------------------------------------ lifecycle
    def start(self) -> "SimEmulator":
        """Run the real-time loop (receive + fixed-step ticks) in a daemon thread."""
        if self._closed:
            raise RuntimeError("emulator is closed")
        if self._thread is None:
            if not self.config.deterministic:
                with self._lock:   # stamps follow the wall clock from here on
                    self._time_ns = max(self._time_ns,
                                        time.time_ns() // 1_000_000 * 1_000_000)
            self._thread = threading.Thread(target=self._run, name="morai_sim_emulator",
                                            daemon=True)
            self._thread.start()
        return self

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def close(self) -> None:
        """Stop the loop and close every socket (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)
        self._rx.stop()
        self._sender.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _run(self) -> None:
        period = self._step_ns
        deadline = time.monotonic_ns() + period
        max_catchup = 5
        while not self._stop.is_set():
            try:
                self._rx.poll(max(0, deadline - time.monotonic_ns()) / NS)
                now = time.monotonic_ns()
                if now < deadline:
                    continue
                late = (now - deadline) // period           # whole periods missed
                if late > max_catchup:
                    self._overruns += 1
                deadline += (1 + late) * period              # absolute deadlines: no drift
                with self._lock:
                    self._tick(1 + min(late, max_catchup), advance=not self._sync_on)
            except Exception:
                if self._stop.is_set():
                    return                                   # sockets closed under us
                log.exception("emulator loop: unexpected error (continuing)")
                time.sleep(self._step_s)

    # ------------------------------------------------------------ manual drive
    def poll(self, timeout: float = 0.0) -> None:
        """Handle the datagrams that arrive within ``timeout`` s (no-op while running)."""
        if self._thread is None and not self._closed:
            end = time.monotonic() + timeout
            while True:
                self._rx.poll(max(0.0, end - time.monotonic()))
                if time.monotonic() >= end:
                    break

    def step(self, n: int = 1) -> None:
        """Advance ``n`` steps by hand: handle pending datagrams, step, send due streams.

        Works in every mode (also in sync mode, where it does not count frames); a
        paused simulation does not advance but still sends its streams.
        """
        for _ in range(n):
            if self._thread is None and not self._closed:
                self._rx.poll(0)
            with self._lock:
                self._tick(1, advance=True)

    def wait_for(self, predicate, timeout: float = 2.0) -> bool:
        """Poll (or wait for the loop) until ``predicate(snapshot())`` is true."""
        end = time.monotonic() + timeout
        while True:
            if predicate(self.snapshot()):
                return True
            if time.monotonic() >= end:
                return False
            if self._thread is None:
                self.poll(0.01)
            else:
                time.sleep(0.005)

    # ------------------------------------------------------------ knobs
    def set_ctrl_mode(self, mode: int) -> None:
        """1 = keyboard (network control ignored), 2 = auto (external control)."""
        if mode not in (CTRL_KEYBOARD, CTRL_AUTO):
            raise ValueError(f"ctrl_mode must be 1 (keyboard) or 2 (auto), got {mode!r}")
        with self._lock:
            self._set_ctrl_mode(mode)

    def drive_external(self, speed_kmh: float, gear: int, steer: float,
                       brake: float = 0.0) -> None:
        """Let another model drive the ego (Serial+UDP mode: the ERP-42 PCU emulator).

        ``speed_kmh`` (>= 0) is imposed at once in the direction of ``gear`` (1 P,
        2 R, 3 N, 4 D); ``steer`` is normalised -1..1, + = right; ``brake`` 0..1 is
        reported.  It takes precedence over network control, in either ctrl_mode,
        until :meth:`clear_external`; network commands are still counted.
        """
        drive = Drive(CMD_EXTERNAL, gear, float(speed_kmh), 0.0, 0.0, float(brake), float(steer))
        if gear not in (1, 2, 3, 4) or not drive.finite():
            raise ValueError(f"drive_external: gear 1..4 and finite values needed, got "
                             f"speed {speed_kmh!r}, gear {gear!r}, steer {steer!r}, "
                             f"brake {brake!r}")
        with self._lock:
            self._external = drive

    def clear_external(self) -> None:
        """End :meth:`drive_external`: network control (if in auto mode) applies again."""
        with self._lock:
            self._external = None

    def set_paused(self, paused: bool) -> None:
        with self._lock:
            self._paused = bool(paused)

    def load_scenario(self, name: str, delete_all: bool = True, load_ego: bool = True,
                      load_npc: bool = True, load_pedestrian: bool = True,
                      load_object: bool = True, set_pause: bool = False) -> int:
        """Load ``<scenario_dir>/<name>.json``; returns the SimStatus result (1 or 0x37)."""
        with self._lock:
            return self._load(name, delete_all, load_ego, load_npc, load_pedestrian,
                              load_object, set_pause)

    # ------------------------------------------------------------ snapshot
    def snapshot(self) -> SimSnapshot:
        with self._lock:
            e = self._ego
            vx, vy = e.velocity("map")
            ego = EgoSnapshot(e.x, e.y, e.z, e.roll, e.pitch, e.yaw_deg, e.v * KMH,
                              vx * KMH, vy * KMH, e.a_long, math.degrees(e.yaw_rate),
                              e.steer_deg, e.accel_pedal, e.brake_pedal, e.gear,
                              self._ctrl_mode)
            objects = tuple(ObjectSnapshot(a.id, a.obj_type, a.x, a.y, a.z,
                                           wrap_deg(math.degrees(a.yaw)), a.length, a.width,
                                           a.height, a.vx * KMH, a.vy * KMH, d, a.name, a.ghost)
                            for d, a in self._sorted_actors())
            lights = tuple(LightSnapshot(lt.id, lt.type, lt.status(self._elapsed_ns),
                                         lt.forced is not None) for lt in self._lights)
            inters = tuple(IntersectionSnapshot(i.index, i.status, i.time_s)
                           for i in self._intersections)
            foreign = {n: st.foreign for n, st in self._rx.stats.items()}
            counters = {n: PortCounters(self.ports[n], c.received, c.accepted, c.ignored,
                                        c.malformed, c.wrong_type, foreign.get(n, 0), c.errors,
                                        c.last_error)
                        for n, c in self._counters.items()}
            sec, nsec = divmod(self._time_ns, NS)
            return SimSnapshot(
                self._time_ns, sec, nsec, self._steps, self._paused, ego, objects, lights,
                inters, self._contacts, self._npc_pairs, self._lamps, dict(self._sensors),
                self._scenario_name, self._status_snapshot(),
                SyncSnapshot(self._sync_on, self._sync_user, self._frame, self._sync_step_ms),
                counters, dict(self._sent), self._overruns)

    # ------------------------------------------------------------ simulation
    def _tick(self, steps: int, advance: bool) -> None:
        """One loop tick (lock held): ``steps`` physics steps, then the due streams."""
        if advance and not self._paused:
            for _ in range(steps):
                self._advance()
        if self._sync_on:
            # lock-step: the data goes out after each frame; only the status keeps its rate
            self._publish({"sim_status"} & self._due())
        else:
            self._publish(self._due() | {"collision", "vehicle_collision"})
        self._ticks += 1

    def _due(self) -> set:
        return {n for n, period in self._periods.items() if self._ticks % period == 0}

    def _advance(self) -> None:
        """One physics step of step_s (lock held)."""
        dt = self._step_s
        drive = self._external or (self._drive if self._ctrl_mode == CTRL_AUTO else None)
        e = self._ego
        blocked = set()
        heading = (math.cos(e.yaw), math.sin(e.yaw))
        for oid in self._contacts:
            a = self._actors.get(oid)
            if a is not None:
                ahead = (a.x - e.x) * heading[0] + (a.y - e.y) * heading[1]
                blocked.add(1 if ahead >= 0 else -1)
        e.step(dt, drive, frozenset(blocked))
        for a in self._actors.values():
            a.update(dt)
        for i in self._intersections:
            i.advance(self._step_ns)
        self._time_ns += self._step_ns
        self._elapsed_ns += self._step_ns
        self._steps += 1
        contacts, self._npc_pairs = self._detect()
        if set(contacts) - set(self._contacts):
            e.stop()   # first touch of an object: the ego stops dead
        self._contacts = contacts

    def _sorted_actors(self):
        e = self._ego
        return sorted(((math.hypot(a.x - e.x, a.y - e.y), a) for a in self._actors.values()),
                      key=lambda t: (t[0], t[1].id))

    def _detect(self):
        ego_box = self._ego.box()
        contacts = tuple(a.id for _, a in self._sorted_actors() if boxes_overlap(ego_box, a.box()))
        vehicles = sorted((a for a in self._actors.values() if a.obj_type == OBJ_VEHICLE),
                          key=lambda a: a.id)
        pairs = []
        for k, a in enumerate(vehicles):
            for b in vehicles[k + 1:]:
                if boxes_overlap(a.box(), b.box()):
                    pairs.append((a.id, b.id))
        return contacts, tuple(pairs)

    def _set_ctrl_mode(self, mode: int) -> None:
        if mode != self._ctrl_mode:
            log.info("ctrl_mode %d -> %d", self._ctrl_mode, mode)
            self._ctrl_mode = mode
            self._drive = None   # the held network command does not survive a mode change

    # ------------------------------------------------------------ scenarios
    def _load(self, name, delete_all, load_ego, load_npc, load_ped, load_obj, set_pause) -> int:
        flags = ((SCEN_DELETE_ALL if delete_all else 0) | (SCEN_EGO if load_ego else 0)
                 | (SCEN_NPC if load_npc else 0) | (SCEN_PEDESTRIAN if load_ped else 0)
                 | (SCEN_OBSTACLE if load_obj else 0) | (SCEN_PAUSE if set_pause else 0))
        try:
            sc = load_scenario(self.config.scenario_dir, name)
        except ScenarioError as e:
            log.error("scenario load failed: %s", e)
            result = RESULT_SCENARIO_LOAD_ERROR
        else:
            self._apply_scenario(sc, delete_all, load_ego, load_npc, load_ped, load_obj,
                                 set_pause)
            log.info("scenario %r loaded (flags 0x%02x): %d objects", sc.name, flags,
                     len(self._actors))
            result = RESULT_SUCCESS
        self._record_command(PLATFORM_SIMULATOR, CMD_SCEN_SETTING, f"{name}/{flags}", result)
        return result

    def _apply_scenario(self, sc: Scenario, delete_all, load_ego, load_npc, load_ped,
                        load_obj, set_pause) -> None:
        if delete_all:
            self._actors.clear()
            load_ego = load_npc = load_ped = load_obj = True
        if load_ego and sc.ego is not None:
            g = sc.ego
            self._ego.set_pose(g.x, g.y, g.z, g.yaw_deg, g.speed_kmh, steer_deg=0.0)
            if g.gear is not None:
                self._ego.gear = g.gear
        groups = ((load_npc, sc.vehicles), (load_ped, sc.pedestrians), (load_obj, sc.obstacles))
        for selected, specs in groups:
            if selected:
                for spec in specs:
                    self._actors[spec.id] = Actor(spec, self.config.seed)
        if sc.traffic_lights is not None:
            self._lights = [TrafficLight(s) for s in sc.traffic_lights]
        if sc.intersections is not None:
            self._intersections = [Intersection(s) for s in sc.intersections]
        self._scenario_name = sc.name
        self._paused = bool(set_pause)
        self._contacts, self._npc_pairs = self._detect()

    # ------------------------------------------------------------ SimStatus
    def _record_command(self, platform, command, option, result) -> None:
        self._status = SimStatusSnapshot(self._status.status, platform, command,
                                         option[:99], result)

    def _status_snapshot(self) -> SimStatusSnapshot:
        return self._status._replace(status=STATUS_PAUSE if self._paused else STATUS_PLAYING)

    # ------------------------------------------------------------ receiving
    def _on_datagram(self, name, data, addr, t) -> None:
        c = self._counters[name]
        c.received += 1
        codec, other = (emu_sync, udp) if name == "sync" else (udp, emu_sync)
        try:
            msg = codec.decode(data)
        except udp.DecodeError as e:
            try:
                msg = other.decode(data)      # well-formed, but for another port?
            except udp.DecodeError:
                self._count_bad(name, c, "malformed", str(e),
                                (e.header, e.data_length, e.length))
                return
        except Exception as e:  # a codec bug must not stop the emulator
            c.malformed += 1
            c.last_error = f"decoder failed: {type(e).__name__}: {e}"
            log.exception("%s: decoder raised on %r", name, bytes(data[:64]))
            return
        if type(msg) not in LISTEN_PORTS[name][2]:
            self._count_bad(name, c, "wrong_type",
                            f"{type(msg).__name__} is not accepted on this port", type(msg))
            return
        try:
            with self._lock:
                if name == "sync":
                    ok = self._on_sync(msg)
                else:
                    ok = self._handlers[name](msg)
        except Exception as e:  # a bug: keep running, but say so loudly
            c.errors += 1
            c.last_error = f"{type(e).__name__}: {e}"
            log.exception("%s: handler failed on %r", name, msg)
            return
        if ok:
            c.accepted += 1
        else:
            c.ignored += 1

    def _count_bad(self, name, c, kind, text, key) -> None:
        setattr(c, kind, getattr(c, kind) + 1)
        c.last_error = text
        if (kind, key) not in c.logged and len(c.logged) < 32:
            c.logged.add((kind, key))
            log.warning("%s port %d: %s datagram dropped: %s", name, self.ports[name], kind, text)
        else:
            log.debug("%s: %s datagram dropped: %s", name, kind, text)

    def _ignore(self, what: str) -> bool:
        log.debug("ignored: %s", what)
        return False

    def _accept_drive(self, drive: Drive) -> bool:
        if self._ctrl_mode != CTRL_AUTO:
            return self._ignore("control command in keyboard mode")
        if drive.cmd_type not in (CMD_THROTTLE, CMD_VELOCITY, CMD_ACCELERATION):
            return self._ignore(f"cmd_type {drive.cmd_type}")
        if not 0 <= drive.gear <= 5 or not drive.finite():
            return self._ignore("gear out of range or non-finite value")
        self._drive = drive
        return True

    def _on_ctrl_cmd(self, m) -> bool:
        if m.ctrl_mode != CTRL_AUTO:
            return self._ignore(f"Ego Ctrl Cmd with ctrl_mode {m.ctrl_mode} (needs 2)")
        return self._accept_drive(Drive(m.cmd_type, m.gear, m.velocity, m.acceleration,
                                        m.accel, m.brake, m.steer))

    def _on_gv_direct(self, m) -> bool:
        if m.steer_type != 2:
            return self._ignore(f"GV Direct steer_type {m.steer_type}: the ego is an "
                                f"Ackermann car, only 2 is applied")
        if not _finite(m.throttle, m.steer_angle[0]):
            return self._ignore("non-finite GV Direct")
        gear = GEAR_R if m.throttle < 0 else GEAR_D
        return self._accept_drive(Drive(CMD_THROTTLE, gear, accel=abs(m.throttle),
                                        steer=m.steer_angle[0]))

    def _on_gv_state(self, m) -> bool:
        v, w = m.target_longitudinal_velocity, m.target_angular_velocity
        if not _finite(v, w):
            return self._ignore("non-finite GV State")
        steer = 0.0
        if abs(v) > 0.1:
            wheel = math.degrees(math.atan(self.config.wheelbase * w / v))   # + left
            steer = max(-1.0, min(1.0, -wheel / self.config.max_steer_deg))
        return self._accept_drive(Drive(CMD_VELOCITY, GEAR_R if v < 0 else GEAR_D,
                                        velocity_kmh=abs(v) * KMH, steer=steer))

    def _on_ego_ghost(self, m) -> bool:
        if self._ctrl_mode != CTRL_AUTO:
            return self._ignore("Ego Ghost Cmd in keyboard mode")
        if not _finite(*m[:8]):
            return self._ignore("non-finite Ego Ghost Cmd")
        self._ego.set_pose(m.position_x, m.position_y, m.position_z, m.rotation_z, m.speed,
                           steer_deg=m.steer_angle, roll=m.rotation_x, pitch=m.rotation_y)
        self._contacts, self._npc_pairs = self._detect()
        return True

    def _on_multi_ego(self, m) -> bool:
        rec = next((r for r in m.egos if r.ego_index == 0), None)
        if rec is None:
            return self._ignore("Multi Ego Setting without ego_index 0 (one ego is emulated)")
        if not _finite(rec.g_pos_x, rec.g_pos_y, rec.g_pos_z, rec.g_roll, rec.g_pitch,
                       rec.g_yaw, rec.speed):
            return self._ignore("non-finite Multi Ego Setting")
        if rec.ctrl_mode in (CTRL_KEYBOARD, CTRL_AUTO):
            self._set_ctrl_mode(rec.ctrl_mode)
        speed = rec.speed
        if rec.gear in (1, 2, 3, 4):
            self._ego.gear = rec.gear
            if rec.gear == GEAR_R:
                speed = -abs(speed)
            elif rec.gear == GEAR_P:
                speed = 0.0
        self._ego.set_pose(rec.g_pos_x, rec.g_pos_y, rec.g_pos_z, rec.g_yaw, speed,
                           roll=rec.g_roll, pitch=rec.g_pitch)
        self._contacts, self._npc_pairs = self._detect()
        return True

    def _on_npc_ghost(self, m) -> bool:
        applied = 0
        for r in m.npcs:
            if not _finite(r.pos_x, r.pos_y, r.pos_z, r.yaw):
                continue
            actor = self._actors.get(r.unique_id)
            if actor is None:
                actor = Actor(ActorSpec(r.unique_id, OBJ_VEHICLE, (4.6, 1.9, 1.5),
                                        name=r.car_name, wheelbase=2.7))
                self._actors[r.unique_id] = actor
            actor.set_ghost_pose(r.pos_x, r.pos_y, r.pos_z, r.yaw)
            applied += 1
        self._contacts, self._npc_pairs = self._detect()
        return applied > 0

    def _on_set_light(self, m) -> bool:
        for lt in self._lights:
            if lt.id == m.traffic_light_index:
                lt.force(m.traffic_light_status, self._elapsed_ns, self.config.light_hold_s)
                return True
        return self._ignore(f"Set TrafficLight for unknown id {m.traffic_light_index!r}")

    def _on_set_intersection(self, m) -> bool:
        if not _finite(m.intersection_status_time):
            return self._ignore("non-finite intersection_status_time")
        for i in self._intersections:
            if i.index == m.intersection_index:
                i.set(m.intersection_status, m.intersection_status_time)
                return True
        return self._ignore(f"Set Intersection for unknown index {m.intersection_index}")

    def _on_lamp(self, m) -> bool:
        self._lamps = (m.turn_signal, m.emergency_signal)
        return True

    def _on_scenario_load(self, m) -> bool:
        result = self._load(m.file_name, m.delete_all, m.load_ego, m.load_npc,
                            m.load_pedestrian, m.load_object, m.set_pause)
        return result == RESULT_SUCCESS

    def _on_save_sensor_data(self, m) -> bool:
        log.info("Save Sensor Data requested (nothing to save in the emulator)")
        return True

    def _on_sensor_control(self, m) -> bool:
        self._sensors[m.sensor_index] = (m.pos_x, m.pos_y, m.pos_z, m.roll, m.pitch, m.yaw)
        return True

    def _on_sim_control(self, m) -> bool:
        result = RESULT_SUCCESS
        if m.platform != PLATFORM_SIMULATOR:
            result = RESULT_INVALID_PLATFORM
        elif m.command == CMD_SIM_PAUSE:
            self._paused = True
        elif m.command == CMD_SIM_PLAY:
            self._paused = False
        elif m.command == CMD_SCEN_SETTING:
            name, _, flags = m.option.partition("/")
            try:
                f = int(flags) if flags else SCEN_DELETE_ALL
            except ValueError:
                f = -1
            if f < 0:
                log.error("SCEN_SETTING option %r: expected name/flags", m.option)
                result = RESULT_SCENARIO_LOAD_ERROR
            else:
                result = self._load(name, bool(f & SCEN_DELETE_ALL), bool(f & SCEN_EGO),
                                    bool(f & SCEN_NPC), bool(f & SCEN_PEDESTRIAN),
                                    bool(f & SCEN_OBSTACLE), bool(f & SCEN_PAUSE))
        elif m.command == CMD_NET_SETTING:
            result = RESULT_NET_LOAD_ERROR
        elif m.command == CMD_SEN_SETTING:
            result = RESULT_SENSOR_LOAD_ERROR
        else:  # map/vehicle selection, saving, quitting: not possible in the emulator's play stage
            result = RESULT_INVALID_STAGE
        self._record_command(m.platform, m.command, m.option, result)
        return result == RESULT_SUCCESS

    # ------------------------------------------------------------ sync extension
    def _on_sync(self, m) -> bool:
        if isinstance(m, emu_sync.EmuSyncCmd):
            reply = self._sync_cmd(m)
        else:
            reply = self._sync_tick(m)
        if "sync_state" in self.dst_ports:
            self._send("sync_state", emu_sync.encode(reply))
        return reply.result

    def _sync_state(self, reply_to, result, reason) -> emu_sync.EmuSyncState:
        sec, nsec = divmod(self._time_ns, NS)
        return emu_sync.EmuSyncState(reply_to, self._sync_on, result, self._paused, reason,
                                     self._frame, self._sync_step_ms if self._sync_on else 0,
                                     sec, nsec, self._sync_user if self._sync_on else "")

    def _sync_cmd(self, m) -> emu_sync.EmuSyncState:
        refuse = lambda reason: self._sync_state(emu_sync.REPLY_CMD, False, reason)  # noqa: E731
        if self._sync_on and m.user_id != self._sync_user:
            return refuse(emu_sync.REASON_OTHER_USER)
        if m.start:
            step_ms = self._step_ns // 1_000_000
            if m.time_step_ms < step_ms or m.time_step_ms % step_ms:
                return refuse(emu_sync.REASON_BAD_TIME_STEP)
            self._sync_on, self._sync_user = True, m.user_id
            self._sync_step_ms = m.time_step_ms
            log.info("sync mode on for %r: frame %d, time_step %d ms", m.user_id, self._frame,
                     m.time_step_ms)
        elif self._sync_on:
            self._sync_on = False
            log.info("sync mode off at frame %d: back to real time", self._frame)
        return self._sync_state(emu_sync.REPLY_CMD, True, emu_sync.REASON_OK)

    def _sync_tick(self, m) -> emu_sync.EmuSyncState:
        refuse = lambda reason: self._sync_state(emu_sync.REPLY_TICK, False, reason)  # noqa: E731
        if not self._sync_on:
            return refuse(emu_sync.REASON_NOT_SYNC)
        if self._paused:
            return refuse(emu_sync.REASON_PAUSED)
        if m.frame != 0 and m.frame != self._frame + 1:
            return refuse(emu_sync.REASON_WRONG_FRAME)
        if m.has_ctrl:
            gear = m.gear if m.gear else self._ego.gear
            self._accept_drive(Drive(m.cmd_type, gear, m.velocity, m.acceleration, m.accel,
                                     m.brake, m.steer))
        for _ in range(self._sync_step_ms * 1_000_000 // self._step_ns):
            self._advance()
        self._frame += 1
        self._publish(set(self._periods) | {"collision", "vehicle_collision"})
        return self._sync_state(emu_sync.REPLY_TICK, True, emu_sync.REASON_OK)

    # ------------------------------------------------------------ sending
    def _send(self, stream: str, data: bytes) -> None:
        if self._sender.send(self.dst_ports[stream], data):
            self._sent[stream] += 1

    def _publish(self, streams) -> None:
        """Send the given streams for the current state (lock held)."""
        streams = set(streams) & set(self.dst_ports)
        if not streams:
            return
        sec, nsec = divmod(self._time_ns, NS)
        if "ego_status" in streams:
            self._send("ego_status", udp.encode(self._ego_status(sec, nsec)))
        if "object_info" in streams:
            self._send("object_info", udp.encode(self._object_info(sec, nsec)))
        if "collision" in streams and self._contacts:
            self._send("collision", udp.encode(self._collision(sec, nsec)))
        if "vehicle_collision" in streams and self._npc_pairs:
            self._send("vehicle_collision", udp.encode(self._npc_collision()))
        if "traffic_light" in streams:
            for lt in self._lights:
                self._send("traffic_light", udp.encode(udp.make(
                    udp.GetTrafficLightStatus, traffic_light_index=lt.id,
                    traffic_light_type=lt.type,
                    traffic_light_status=lt.status(self._elapsed_ns))))
        if "intersection" in streams:
            for i in self._intersections:
                self._send("intersection", udp.encode(udp.make(
                    udp.GetIntersectionStatus, intersection_index=i.index,
                    intersection_status=i.status, intersection_status_time=i.time_s)))
        if "sim_status" in streams:
            st = self._status_snapshot()
            self._send("sim_status", udp.encode(udp.make(
                udp.SimStatus, platform=PLATFORM_SIMULATOR, stage=STAGE_PLAY, status=st.status,
                command_platform=st.command_platform, command=st.command,
                command_option=st.option, result=st.result)))
        if "gps" in streams:
            for sentence in self._gps():
                self._send("gps", udp.encode(sentence))
        if "imu" in streams:
            self._send("imu", udp.encode(self._imu(sec, nsec)))

    def _ego_status(self, sec, nsec):
        e, cfg = self._ego, self.config
        frame = cfg.velocity_frame
        vx, vy = e.velocity(frame)
        ax, ay = e.acceleration(frame)
        p = e.p
        values = dict(
            sec=sec, nsec=nsec, ctrl_mode=self._ctrl_mode, gear=e.gear, signed_vel=e.v * KMH,
            map_data_id=cfg.map_data_id, accel=e.accel_pedal, brake=e.brake_pedal,
            size_x=p.length, size_y=p.width, size_z=p.height, overhang=p.front_overhang,
            wheelbase=p.wheelbase, rear_overhang=p.rear_overhang, pos_x=e.x, pos_y=e.y,
            pos_z=e.z, roll=e.roll, pitch=e.pitch, yaw=e.yaw_deg, vel_x=vx * KMH,
            vel_y=vy * KMH, vel_z=0.0, ang_vel_x=0.0, ang_vel_y=0.0,
            ang_vel_z=math.degrees(e.yaw_rate), acc_x=ax, acc_y=ay, acc_z=0.0,
            steer=e.steer_deg, rear_steer=0.0, link_id="")
        return self._templates["ego_status"]._replace(
            **{k: v for k, v in values.items() if k in self._status_fields})

    def _object_info(self, sec, nsec):
        recs = tuple(udp.ObjectRecord(
            a.id, a.obj_type, a.x, a.y, a.z, wrap_deg(math.degrees(a.yaw)), a.length, a.width,
            a.height, a.overhang, a.wheelbase, a.rear_overhang, a.vx * KMH, a.vy * KMH, 0.0,
            a.ax, a.ay, 0.0, a.link_id if a.obj_type == OBJ_VEHICLE else "")
            for _, a in self._sorted_actors()[:20])
        t = self._templates["object_info"]
        if self._has_stamp["object_info"]:
            return t._replace(sec=sec, nsec=nsec, objects=recs)
        return t._replace(objects=recs)

    def _collision(self, sec, nsec):
        cfg = self.config
        recs = []
        for oid in self._contacts[:5]:
            a = self._actors[oid]
            recs.append(udp.CollisionRecord(a.obj_type, a.id, a.x, a.y, a.z, cfg.map_offset_x,
                                            cfg.map_offset_y, cfg.map_offset_z))
        t = self._templates["collision"]
        if self._has_stamp["collision"]:
            return t._replace(sec=sec, nsec=nsec, records=tuple(recs))
        return t._replace(records=tuple(recs))

    def _npc_collision(self):
        def rec(a):
            return udp.NpcCollisionRecord(a.obj_type, a.id, a.x, a.y, a.z,
                                          wrap_deg(math.degrees(a.yaw)), a.length, a.width,
                                          a.height, a.vx * KMH, a.vy * KMH, 0.0, a.ax, a.ay, 0.0)
        pairs = tuple((rec(self._actors[i]), rec(self._actors[j]))
                      for i, j in self._npc_pairs[:10])
        return udp.make(udp.NpcVehicleCollision, pairs=pairs)

    def _gps(self):
        cfg, e = self.config, self._ego
        lat, lon = utm_to_latlon(e.x + cfg.gps_utm_offset_x, e.y + cfg.gps_utm_offset_y,
                                 cfg.gps_utm_zone)
        when = (datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
                + datetime.timedelta(microseconds=self._time_ns // 1000))
        vx, vy = e.velocity("map")
        course = (90.0 - math.degrees(math.atan2(vy, vx))) % 360.0 if (vx or vy) else \
            (90.0 - e.yaw_deg) % 360.0
        utc = when.time().replace(tzinfo=None)
        return (nmea.make_gga(utc, lat, lon, e.z + cfg.gps_alt_offset),
                nmea.make_rmc(utc, when.date(), lat, lon, abs(e.v) * KNOTS_PER_MPS,
                              round(course, 1) % 360.0))

    def _imu(self, sec, nsec):
        e = self._ego
        w, x, y, z = _quaternion(e.roll, e.pitch, e.yaw)
        along, alat = e.acceleration("body")
        return udp.make(udp.ImuData, sec=sec, nsec=nsec, ori_w=w, ori_x=x, ori_y=y, ori_z=z,
                        ang_vel_x=0.0, ang_vel_y=0.0, ang_vel_z=e.yaw_rate,
                        lin_acc_x=along, lin_acc_y=alat, lin_acc_z=9.80665)


# -------------------------------------------------------------------- program

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python3 -m morai_bridge.emu.sim",
        description="MORAI simulator emulator: the simulator side of the UDP protocol "
                    "(see docs/emulator.md). Ctrl-C stops it.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    for field, default in SimConfig._field_defaults.items():
        flag = "--" + field.replace("_", "-")
        doc = FIELD_DOCS[field]
        if isinstance(default, bool):
            p.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=doc)
        else:
            p.add_argument(flag, type=type(default), default=default, help=doc,
                           metavar=type(default).__name__.upper())
    p.add_argument("--status-s", type=float, default=5.0,
                   help="print a status line every this many seconds (0 = never)")
    p.add_argument("--list-scenarios", action="store_true",
                   help="list the scenarios in --scenario-dir and exit")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.list_scenarios:
        try:
            names = sorted(f[:-5] for f in os.listdir(args.scenario_dir) if f.endswith(".json"))
        except OSError as e:
            print(f"cannot list {args.scenario_dir}: {e}", file=sys.stderr)
            return 2
        print("\n".join(names))
        return 0
    cfg = SimConfig(**{f: getattr(args, f) for f in SimConfig._fields})
    try:
        sim = SimEmulator(cfg)
    except (ValueError, RuntimeError, OSError) as e:
        print(f"morai sim emulator: {e}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with sim:
        sim.start()
        log.info("listening on %s: %s", cfg.listen_ip,
                 ", ".join(f"{n} {p}" for n, p in sim.ports.items()))
        log.info("sending to %s: %s", cfg.user_ip,
                 ", ".join(f"{n} {p}" for n, p in sim.dst_ports.items()))
        while not stop.wait(args.status_s if args.status_s > 0 else 3600):
            s = sim.snapshot()
            e = s.ego
            log.info("t=%d.%03d %s ego (%.1f, %.1f) yaw %.1f v %.1f km/h gear %d mode %d, "
                     "%d objects, contacts %s%s", s.sec, s.nsec // 1_000_000,
                     "PAUSED" if s.paused else "playing", e.x, e.y, e.yaw_deg, e.speed_kmh,
                     e.gear, e.ctrl_mode, len(s.objects), list(s.collisions) or "none",
                     f", sync frame {s.sync.frame}" if s.sync.on else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
