"""Options of the simulator emulator: :class:`SimConfig`, one line of help per field, port tables.

Every default port comes from :data:`morai_bridge.wire.streams.STREAMS` (the one
place a MORAI port number is written); the vehicle defaults come from
:class:`~morai_bridge.emu.sim_vehicle.VehicleParams`.  The port tables the rest
of the emulator (and the tests) iterate over are built here from the streams:

* :data:`LISTEN_PORTS`: command name -> (config field, default port, message
  classes accepted there), user -> simulator;
* :data:`SEND_PORTS`: stream name -> (config field, default port, rate field or
  None for event streams), simulator -> user.

Both are in the order of the ``SimConfig`` fields.  ``EXTENSION_STREAMS`` names
the lock-step extension's ports (``sync``, ``sync_state``): they exist only with
``emulator_sync=True``.  No ROS.
"""

import math
import os
from typing import NamedTuple

from morai_bridge.configuration import sim_versions
from morai_bridge.configuration.params import DISABLED, EMULATOR_ANY_FREE_PORT, FROM_VERSION, Param
from morai_bridge.wire import camera as wire_camera
from morai_bridge.wire import udp
from morai_bridge.wire.enums import Gear
from morai_bridge.wire.streams import BY_NAME, STREAMS, USER_TO_SIM

from .sim_vehicle import VehicleParams

__all__ = ["SimConfig", "FIELD_DOCS", "PARAMS", "LISTEN_PORTS", "SEND_PORTS", "EXTENSION_STREAMS",
           "DEFAULT_SCENARIO_DIR", "SENSOR_PORT_FIELDS"]

DEFAULT_SCENARIO_DIR = os.path.normpath(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "config", "scenarios"))

_PORT = {s.name: s.port for s in STREAMS}       # default port per stream name
#: destination ports of the sensor streams (emu/sensors/): not MORAI UDP-protocol streams of
#: wire/streams.py; 0 = off (the simulator has no default sensor ports)
SENSOR_PORT_FIELDS = ("camera_port", "lidar_port", "lidar2d_port")
_VP = VehicleParams._field_defaults


class SimConfig(NamedTuple):
    """Every option of the emulator, with its default (documented in FIELD_DOCS)."""

    # network
    listen_ip: str = "127.0.0.1"
    user_ip: str = "127.0.0.1"
    allowed_sender_ip: str = ""
    emulator_sync: bool = False
    # the simulator release emulated (configuration.sim_versions): steering signs, IMU size, empty
    # collision slots, packet clock, default ports
    sim_version: str = sim_versions.DEFAULT
    # added to every port below 1024 (link.transport.shift_privileged), as the bridge does
    privileged_port_offset: int = 0
    # listening ports (user -> simulator)
    ctrl_cmd_port: int = _PORT["ctrl_cmd"]
    ego_ghost_port: int = _PORT["ego_ghost"]
    set_traffic_light_port: int = _PORT["set_traffic_light"]
    set_intersection_port: int = _PORT["set_intersection"]
    lamps_port: int = _PORT["lamps"]
    scenario_load_port: int = _PORT["scenario_load"]
    save_sensor_data_port: int = _PORT["save_sensor_data"]
    sensor_control_port: int = _PORT["sensor_control"]
    npc_ghost_port: int = _PORT["npc_ghost"]
    multi_ego_port: int = _PORT["multi_ego"]
    sim_control_port: int = _PORT["sim_control"]
    gv_direct_port: int = _PORT["gv_direct"]
    gv_state_port: int = _PORT["gv_state"]
    sync_port: int = _PORT["sync"]
    # destination ports (simulator -> user)
    ego_status_port: int = FROM_VERSION
    competition_status_port: int = FROM_VERSION
    object_info_port: int = _PORT["object_info"]
    traffic_light_port: int = _PORT["traffic_light"]
    intersection_port: int = _PORT["intersection"]
    collision_port: int = _PORT["collision"]
    vehicle_collision_port: int = _PORT["vehicle_collision"]
    sim_status_port: int = _PORT["sim_status"]
    gps_port: int = FROM_VERSION
    imu_port: int = _PORT["imu"]
    sync_state_port: int = _PORT["sync_state"]
    # rates (Hz, rounded to a whole number of steps; 0 disables)
    ego_status_hz: float = 50.0
    competition_status_hz: float = 50.0
    object_info_hz: float = 50.0
    traffic_light_hz: float = 10.0
    intersection_hz: float = 10.0
    sim_status_hz: float = 10.0
    gps_hz: float = 10.0
    imu_hz: float = 50.0
    imu_burst_every_s: float = 0.0
    imu_burst_copies: int = 3
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
    initial_gear: int = int(Gear.P)
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
    # sensors (emu/sensors/): off unless their destination port is set; mount poses on the ego
    camera_port: int = DISABLED
    camera_hz: float = 10.0
    camera_width: int = 640
    camera_height: int = 480
    camera_fov_deg: float = 90.0
    camera_header: str = "v24"
    camera_jpeg_quality: int = 80
    camera_x: float = 1.5
    camera_y: float = 0.0
    camera_z: float = 1.4
    camera_roll: float = 0.0
    camera_pitch: float = 0.0
    camera_yaw: float = 0.0
    lidar_port: int = DISABLED
    lidar_model: str = "VLP16"
    lidar_rpm: float = 600.0
    lidar_max_range: float = 100.0
    lidar_x: float = 0.0
    lidar_y: float = 0.0
    lidar_z: float = 1.9
    lidar_roll: float = 0.0
    lidar_pitch: float = 0.0
    lidar_yaw: float = 0.0
    lidar2d_port: int = DISABLED
    lidar2d_hz: float = 10.0
    lidar2d_range_max: float = 10.0
    lidar2d_x: float = 2.4
    lidar2d_y: float = 0.0
    lidar2d_z: float = 0.5
    lidar2d_roll: float = 0.0
    lidar2d_pitch: float = 0.0
    lidar2d_yaw: float = 0.0

    def vehicle_params(self) -> VehicleParams:
        return VehicleParams(*(getattr(self, f) for f in VehicleParams._fields))

    def sensors_enabled(self) -> bool:
        """True when at least one sensor stream (camera, 3D or 2D LiDAR) has a port."""
        return any(getattr(self, f) != DISABLED for f in SENSOR_PORT_FIELDS)

    def stream_enabled(self, name: str) -> bool:
        """False for the lock-step extension's ports unless ``emulator_sync`` is set."""
        return bool(self.emulator_sync) or name not in EXTENSION_STREAMS

    def check(self) -> None:
        """Raise ValueError naming the first unusable option."""
        for name, (field, _, _) in LISTEN_PORTS.items():
            v = getattr(self, field)
            if not isinstance(v, int) or isinstance(v, bool) or not EMULATOR_ANY_FREE_PORT <= v <= 65535:
                raise ValueError(f"{field}={v!r}: a listening port is -1 (ephemeral), "
                                 f"0 (disabled) or 1..65535")
        for name, (field, _, rate) in SEND_PORTS.items():
            v = getattr(self, field)
            low = FROM_VERSION if name in sim_versions.VERSIONED_PORTS else DISABLED
            if not isinstance(v, int) or isinstance(v, bool) or not low <= v <= 65535:
                raise ValueError(f"{field}={v!r}: a destination port is 0 (disabled) "
                                 f"or 1..65535" + (" (-1: the sim_version's)" if low else ""))
            if rate is not None:
                hz = getattr(self, rate)
                if not (isinstance(hz, (int, float)) and math.isfinite(hz) and hz >= 0):
                    raise ValueError(f"{rate}={hz!r}: must be a rate >= 0 Hz")
        if not isinstance(self.privileged_port_offset, int) or not 0 <= self.privileged_port_offset <= 64511:
            raise ValueError(f"privileged_port_offset={self.privileged_port_offset!r}: 0..64511")
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
        if self.initial_gear not in _START_GEARS:
            raise ValueError(f"initial_gear={self.initial_gear!r}: 1 P, 2 R, 3 N or 4 D")
        if self.velocity_frame not in ("map", "body"):
            raise ValueError(f"velocity_frame={self.velocity_frame!r}: 'map' or 'body'")
        if not -2 ** 31 <= self.map_data_id < 2 ** 31:
            raise ValueError(f"map_data_id={self.map_data_id!r} does not fit int32")
        if not 1 <= self.gps_utm_zone <= 60:
            raise ValueError(f"gps_utm_zone={self.gps_utm_zone!r}: 1..60")
        if not (math.isfinite(self.imu_burst_every_s) and self.imu_burst_every_s >= 0):
            raise ValueError(f"imu_burst_every_s={self.imu_burst_every_s!r}: >= 0 (0 = no bursts)")
        if not (isinstance(self.imu_burst_copies, int) and 1 <= self.imu_burst_copies <= 10):
            raise ValueError(f"imu_burst_copies={self.imu_burst_copies!r}: 1..10")
        if not (math.isfinite(self.light_hold_s) and self.light_hold_s >= 0):
            raise ValueError(f"light_hold_s={self.light_hold_s!r}: >= 0 (0 = until changed)")
        try:
            self.vehicle_params().check()
        except ValueError as e:
            raise ValueError(f"vehicle: {e}") from None
        self._check_sensors()

    def _check_sensors(self) -> None:
        for field in SENSOR_PORT_FIELDS:
            v = getattr(self, field)
            if not isinstance(v, int) or isinstance(v, bool) or not DISABLED <= v <= 65535:
                raise ValueError(f"{field}={v!r}: a destination port is 0 (disabled) "
                                 f"or 1..65535")
        for prefix in ("camera", "lidar", "lidar2d"):
            for axis in ("x", "y", "z", "roll", "pitch", "yaw"):
                v = getattr(self, f"{prefix}_{axis}")
                if not (isinstance(v, (int, float)) and math.isfinite(v)):
                    raise ValueError(f"{prefix}_{axis}={v!r}: must be a finite number")
        for field in ("camera_hz", "lidar2d_hz"):
            hz = getattr(self, field)
            if not (isinstance(hz, (int, float)) and math.isfinite(hz) and hz > 0):
                raise ValueError(f"{field}={hz!r}: must be a rate > 0 Hz")
        for field in ("camera_width", "camera_height"):
            v = getattr(self, field)
            if not isinstance(v, int) or isinstance(v, bool) or not 2 <= v <= 8192:
                raise ValueError(f"{field}={v!r}: 2..8192 pixels")
        if not 0 < self.camera_fov_deg < 180:
            raise ValueError(f"camera_fov_deg={self.camera_fov_deg!r}: between 0 and 180")
        if self.camera_header not in wire_camera.HEADER_FORMS:
            raise ValueError(f"camera_header={self.camera_header!r}: one of "
                             f"{', '.join(sorted(wire_camera.HEADER_FORMS))}")
        if not 1 <= self.camera_jpeg_quality <= 100:
            raise ValueError(f"camera_jpeg_quality={self.camera_jpeg_quality!r}: 1..100")
        if not (math.isfinite(self.lidar_rpm) and 60 <= self.lidar_rpm <= 1200):
            raise ValueError(f"lidar_rpm={self.lidar_rpm!r}: 60..1200")
        if not (math.isfinite(self.lidar_max_range) and self.lidar_max_range > 0):
            raise ValueError(f"lidar_max_range={self.lidar_max_range!r}: must be > 0 m")
        if self.lidar_port != DISABLED:
            from morai_bridge.wire import velodyne   # numpy: only when the LiDAR is on
            try:
                model = velodyne.get_model(self.lidar_model)
            except ValueError as e:
                raise ValueError(f"lidar_model: {e}") from None
            limit = 0xFFFF * model.distance_resolution_m
            if self.lidar_max_range > limit:
                raise ValueError(f"lidar_max_range={self.lidar_max_range!r}: at most "
                                 f"{limit:.2f} m for {model.name}")
        if not (math.isfinite(self.lidar2d_range_max) and 0 < self.lidar2d_range_max <= 65.535):
            raise ValueError(f"lidar2d_range_max={self.lidar2d_range_max!r}: "
                             f"in (0, 65.535] m (uint16 mm)")


_START_GEARS = (int(Gear.P), int(Gear.R), int(Gear.N), int(Gear.D))

# ------------------------------------------------------------------ port tables from the streams


def _port_fields():
    """(stream, config field) for every ``*_port`` field, in field order."""
    out = []
    for field in SimConfig._fields:
        if field.endswith("_port") and field not in SENSOR_PORT_FIELDS:
            out.append((BY_NAME[field[:-len("_port")]], field))
    return out


#: name -> (config field, default port, message classes accepted there)
LISTEN_PORTS = {s.name: (field, s.port, s.classes)
                for s, field in _port_fields() if s.direction == USER_TO_SIM}

#: name -> (port field, default port, rate field or None = event-driven)
SEND_PORTS = {s.name: (field, s.port, None if s.event else s.name + "_hz")
              for s, field in _port_fields() if s.direction != USER_TO_SIM}

#: the lock-step extension's ports (ours, not the simulator's): only with emulator_sync
EXTENSION_STREAMS = frozenset(s.name for s in STREAMS if s.extension)

assert {s.name for s in STREAMS} == set(LISTEN_PORTS) | set(SEND_PORTS), \
    "every stream of wire/streams.py needs a *_port field in SimConfig"

# ------------------------------------------------------------------ documentation

#: One line of documentation per option (CLI help; docs/emulator.md has the same table).
FIELD_DOCS = {
    "listen_ip": "address the command ports are bound to",
    "user_ip": "address the streams are sent to (where the bridge runs)",
    "allowed_sender_ip": "accept commands only from this address ('' = any); others are "
                         "counted as foreign and dropped",
    "emulator_sync": "enable the lock-step extension (ours, not the simulator's): listen on "
                     "sync_port and answer on sync_state_port",
    "sim_version": "simulator release emulated: a name in config/sim_versions (24.R2, 25.S4, "
                   "25.S4.MolitComp03, 26.R1) or a profile file's path (docs/versions.md)",
    "privileged_port_offset": "added to every port below 1024 once the sim_version's ports are in "
                              "(909 -> 1909 with 1000): give udp_bridge the same value (the demo "
                              "does); 0: ports as given",
    "ego_status_hz": "Ego Vehicle Status rate",
    "competition_status_hz": "competition status rate (only sent where the sim_version has a "
                             "competition status port)",
    "object_info_hz": "Object Info rate",
    "traffic_light_hz": "Get TrafficLight Status rate (one datagram per light)",
    "intersection_hz": "Get Intersection Status rate (one datagram per intersection)",
    "sim_status_hz": "SimStatus rate",
    "gps_hz": "GPS rate ($GPGGA + $GPRMC, one datagram each)",
    "imu_burst_every_s": "send an IMU catch-up burst this often: the IMU datagram imu_burst_copies times back to "
                         "back, same stamp and state, as 25.S4's sensor scheduler does (0 = never)",
    "imu_burst_copies": "datagrams in an IMU catch-up burst (the first included)",
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
    "camera_port": "destination port of the camera stream: JPEG chunks (MOR) and boxes (BOX) "
                   "(0 disabled; MORAI's examples use 1232)",
    "camera_hz": "camera frame rate, Hz of simulated time",
    "camera_width": "camera image width, pixels (640: MORAI's default camera)",
    "camera_height": "camera image height, pixels (480: MORAI's default camera)",
    "camera_fov_deg": "camera horizontal field of view, deg",
    "camera_header": "camera datagram form: v24 (19-byte header with stamp) or legacy (11 bytes)",
    "camera_jpeg_quality": "JPEG quality of the camera frames, 1..100",
    "camera_x": "camera mount on the ego: x forward of the reported position, m",
    "camera_y": "camera mount: y left, m",
    "camera_z": "camera mount: z above the ego's ground, m",
    "camera_roll": "camera mount: roll, deg",
    "camera_pitch": "camera mount: pitch, deg (+ = looking down)",
    "camera_yaw": "camera mount: yaw, deg (+ = to the left)",
    "lidar_port": "destination port of the 3D LiDAR stream, Velodyne 1206-byte packets "
                  "(0 disabled; MORAI's examples and Velodyne use 2368)",
    "lidar_model": "3D LiDAR model: VLP16, PUCK_HIRES, HDL32E, VLP32C or MORAI_64",
    "lidar_rpm": "3D LiDAR rotation rate, rpm (60..1200): one burst of whole packets per "
                 "revolution every 60/rpm s, as MORAI sends it",
    "lidar_max_range": "3D LiDAR range, m: farther targets give no return",
    "lidar_x": "3D LiDAR mount on the ego: x forward, m",
    "lidar_y": "3D LiDAR mount: y left, m",
    "lidar_z": "3D LiDAR mount: z up, m",
    "lidar_roll": "3D LiDAR mount: roll, deg",
    "lidar_pitch": "3D LiDAR mount: pitch, deg",
    "lidar_yaw": "3D LiDAR mount: yaw, deg",
    "lidar2d_port": "destination port of the 2D LiDAR stream, one 1107-byte scan per datagram "
                    "(0 disabled; no MORAI default)",
    "lidar2d_hz": "2D LiDAR scan rate, Hz of simulated time",
    "lidar2d_range_max": "2D LiDAR range, m; no hit is reported as this range (max 65.535)",
    "lidar2d_x": "2D LiDAR mount on the ego: x forward, m",
    "lidar2d_y": "2D LiDAR mount: y left, m",
    "lidar2d_z": "2D LiDAR mount: z up (height of the scan plane), m",
    "lidar2d_roll": "2D LiDAR mount: roll, deg",
    "lidar2d_pitch": "2D LiDAR mount: pitch, deg",
    "lidar2d_yaw": "2D LiDAR mount: yaw, deg",
}


def _only_with_sync(name):
    return "; only with emulator_sync" if name in EXTENSION_STREAMS else ""


for _name, (_field, _port, _classes) in LISTEN_PORTS.items():
    FIELD_DOCS[_field] = (f"listening port of {', '.join(c.__name__ for c in _classes)} "
                          f"(-1 ephemeral, 0 disabled{_only_with_sync(_name)})")
for _name, (_field, _port, _rate) in SEND_PORTS.items():
    FIELD_DOCS[_field] = (f"destination port of the {_name.replace('_', ' ')} stream "
                          f"(0 disabled{_only_with_sync(_name)}"
                          + ("; -1: the sim_version's" if _name in sim_versions.VERSIONED_PORTS else "") + ")")
del _name, _field, _port, _classes, _rate
assert set(FIELD_DOCS) == set(SimConfig._fields), set(SimConfig._fields) ^ set(FIELD_DOCS)

#: every option as a Param, in field order: the sim_emulator node's ~params, the program's options
PARAMS = [Param(f, SimConfig._field_defaults[f], FIELD_DOCS[f]) for f in SimConfig._fields]
