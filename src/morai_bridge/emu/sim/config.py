"""Options of the simulator emulator: :data:`PARAMS`, the :class:`SimConfig` made of them, port tables.

:data:`PARAMS` declares every option once (name, default, one line of doc), in
field order: the fields of :class:`SimConfig` (a named tuple, ``check()``
validates one), the ``sim_emulator`` node's ``~params`` and the program's
options (:mod:`.cli`).  The port and rate options are made from the rows of
:data:`morai_bridge.wire.udp.streams.STREAMS` (the one place a MORAI port number is
written): a listening port per user -> simulator stream, a destination port per
simulator -> user stream, and a ``<stream>_hz`` rate per stream with an ``emu_hz``;
the vehicle defaults come from
:class:`~morai_bridge.emu.sim.ego.VehicleParams`.  The port tables the rest
of the emulator (and the tests) iterate over are built here from the streams:

* :data:`LISTEN_PORTS`: command name -> (config field, default port, message
  classes accepted there), user -> simulator;
* :data:`SEND_PORTS`: stream name -> (config field, default port, rate field or
  None for event streams), simulator -> user.

Both are in the order of the ``SimConfig`` fields.  ``EXTENSION_STREAMS`` names
the lock-step extension's ports (``sync``, ``sync_state``): they exist only with
``emulator_sync=True``.  No ROS.
"""

import collections
import math
import os

from morai_bridge.configuration import maps, sim_versions
from morai_bridge.configuration.params import DISABLED, EMULATOR_ANY_FREE_PORT, FROM_VERSION, Param
from morai_bridge.wire import camera as wire_camera
from morai_bridge.wire import udp
from morai_bridge.wire.enums import Gear
from morai_bridge.wire.udp.streams import FROM_SIM, STREAMS, TO_SIM

from .ego import VehicleParams

__all__ = ["SimConfig", "PARAMS", "FIELD_DOCS", "LISTEN_PORTS", "SEND_PORTS", "EXTENSION_STREAMS",
           "DEFAULT_SCENARIO_DIR", "SENSOR_PORT_FIELDS", "VELOCITY_FRAMES"]

DEFAULT_SCENARIO_DIR = os.path.normpath(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "config", "scenarios"))

#: destination ports of the sensor streams (emu/sensors/): not MORAI UDP-protocol streams of
#: wire/udp/streams.py; 0 = off (the simulator has no default sensor ports)
SENSOR_PORT_FIELDS = ("camera_port", "lidar_port", "lidar2d_port")
_VP = VehicleParams._field_defaults
#: the frames the emulator can report velocity and acceleration vectors in: ``body`` (the simulator's, by the
#: captures and the manual: docs/units.md) or ``map`` (kept to reproduce a client that assumed it)
VELOCITY_FRAMES = ("body", "map")
#: the lock-step extension's ports (ours, not the simulator's): only with emulator_sync
EXTENSION_STREAMS = frozenset(s.name for s in STREAMS if s.extension)


def _only_with_sync(name):
    return "; only with emulator_sync" if name in EXTENSION_STREAMS else ""


def _listening_port(s):
    """The option of the port the emulator receives stream ``s`` on (user -> simulator)."""
    return Param(s.param, s.port, f"listening port of {', '.join(c.__name__ for c in s.classes)} "
                                  f"(-1 ephemeral, 0 disabled{_only_with_sync(s.name)})")


def _destination_port(s):
    """The option of the port the emulator sends stream ``s`` to (simulator -> user); the version's
    by default where versions differ."""
    versioned = s.name in sim_versions.VERSIONED_PORTS
    return Param(s.param, FROM_VERSION if versioned else s.port,
                 f"destination port of the {s.name.replace('_', ' ')} stream (0 disabled{_only_with_sync(s.name)}"
                 + ("; -1: the sim_version's" if versioned else "") + ")")


#: Every option of the emulator, with its default and one line of documentation (the program's help;
#: docs/emulator.md has the same table), in SimConfig's field order.
PARAMS = [
    # network
    Param("listen_ip", "127.0.0.1", "address the command ports are bound to"),
    Param("user_ip", "127.0.0.1", "address the streams are sent to (where the bridge runs)"),
    Param("allowed_sender_ip", "", "accept commands only from this address (any or '' = any); others are counted as "
          "foreign and dropped", unset="any"),
    Param("emulator_sync", False, "enable the lock-step extension (ours, not the simulator's): listen on sync_port "
          "and answer on sync_state_port"),
    # the simulator release emulated (configuration.sim_versions): steering signs, IMU size, empty
    # collision slots, packet clock, default ports
    Param("sim_version", sim_versions.DEFAULT, "simulator release emulated: a name in config/sim_versions (24.R2, "
          "25.S4, 25.S4.MolitComp03, 26.R1) or a profile file's path (docs/versions.md)"),
    # added to every port below 1024 (link.transport.shift_privileged), as the bridge does
    Param("privileged_port_offset", 0, "added to every port below 1024 once the sim_version's ports are in (909 -> "
          "1909 with 1000): give udp_bridge the same value (the demo does); 0: ports as given"),
    # listening ports (user -> simulator), destination ports (simulator -> user), from the streams' rows
    *[_listening_port(s) for s in TO_SIM],
    *[_destination_port(s) for s in FROM_SIM],
    # rates (Hz, rounded to a whole number of steps; 0 disables): the rows' emu_hz (event streams have none)
    *[Param(s.name + "_hz", s.emu_hz, s.emu_hz_doc) for s in FROM_SIM if s.emu_hz],
    Param("imu_burst_every_s", 0.0, "send an IMU catch-up burst this often: the IMU datagram imu_burst_copies times "
          "back to back, same stamp and state, as 25.S4's sensor scheduler does (0 = never)"),
    Param("imu_burst_copies", 3, "datagrams in an IMU catch-up burst (the first included)"),
    # packet variants
    Param("ego_status_data_length", 200, "Ego Vehicle Status variant: 200 (229 B), 216, 152, 132 or 94"),
    Param("object_info_data_length", 2128, "Object Info variant: 2128 (with timestamp) or 2120"),
    Param("collision_data_length", 148, "Collision Data variant: 148 (with timestamp) or 140"),
    # time
    Param("step_s", 0.02, "simulation step, s (whole milliseconds); also the loop period"),
    Param("deterministic", False, "clock starts at 0 and advances exactly step_s per step; random elements "
          "use the seed"),
    Param("seed", 0, "seed of the random elements (pedestrian drift)"),
    # control
    Param("keyboard_mode", False, "start in keyboard mode: network control commands are ignored"),
    Param("initial_gear", int(Gear.P), "gear at start: 1 P, 2 R, 3 N, 4 D"),
    Param("velocity_frame", "body", "frame of the reported velocity/acceleration vectors (ego status, objects, NPC "
          "collisions): body (each vehicle's own axes, x forward, y left: what MORAI sends, docs/units.md) or map "
          "(x East, y North)", choices=VELOCITY_FRAMES),
    # ego vehicle
    Param("ego_x", 0.0, "ego start x, m (used when the scenario has no ego)"),
    Param("ego_y", 0.0, "ego start y, m"),
    Param("ego_yaw_deg", 0.0, "ego start heading, deg, counter-clockwise from East"),
    # vehicle geometry and limits: defaults from VehicleParams, the single source
    Param("length", _VP["length"], "ego length, m"),
    Param("width", _VP["width"], "ego width, m"),
    Param("height", _VP["height"], "ego height, m"),
    Param("wheelbase", _VP["wheelbase"], "ego wheelbase, m"),
    Param("rear_overhang", _VP["rear_overhang"], "ego rear overhang, m (front overhang = length - wheelbase - rear)"),
    Param("max_steer_deg", _VP["max_steer_deg"], "front-wheel angle for steer = 1, deg"),
    Param("max_accel", _VP["max_accel"], "acceleration at full accelerator pedal, m/s^2"),
    Param("max_brake", _VP["max_brake"], "deceleration at full brake pedal (and the P-gear hold), m/s^2"),
    Param("drag_const", _VP["drag_const"], "constant drag (rolling resistance), m/s^2"),
    Param("drag_quad", _VP["drag_quad"], "quadratic drag coefficient, 1/m (a = drag_quad * v^2)"),
    Param("max_speed_kmh", _VP["max_speed_kmh"], "speed limit of the ego, km/h"),
    Param("vel_rate_up", _VP["vel_rate_up"], "velocity mode: speed-up rate limit, m/s^2"),
    Param("vel_rate_down", _VP["vel_rate_down"], "velocity mode: slow-down rate limit, m/s^2"),
    Param("steer_rate_deg_s", _VP["steer_rate_deg_s"], "front-wheel steering rate limit, deg/s (0 = instantaneous)"),
    Param("map_data_id", 0, "map_data_id reported in Ego Vehicle Status"),
    # world
    Param("scenario", "", "scenario loaded at start (none or '' = empty world)", unset="none"),
    Param("scenario_dir", DEFAULT_SCENARIO_DIR, "directory of <name>.json scenarios"),
    Param("light_hold_s", 10.0, "how long a Set TrafficLight status holds, s of simulated time "
          "(0 = until the next Set)"),
    Param("map_offset_x", 0.0, "global_offset_x reported in Collision Data, m"),
    Param("map_offset_y", 0.0, "global_offset_y reported in Collision Data, m"),
    Param("map_offset_z", 0.0, "global_offset_z reported in Collision Data, m"),
    # the map: the GPS origin (map x/y are UTM easting/northing minus it) and, from an MGeo folder, roads
    Param("map", maps.DEFAULT, "the map: a MORAI map name (config/maps; case-insensitive), an MGeo folder (its "
          "origin, and roads that NPC vehicles follow and lights stand on), a MORAI scenario file (its mapInfo), "
          "or none (origin 0); a MORAI scenario's mapInfo moves the origin to its map (docs/emulator.md)"),
    Param("gps_utm_zone", 0, "UTM zone (north) of the map frame for the GPS conversion; 0: the map's"),
    Param("gps_utm_offset_x", 0.0, "UTM easting of the map origin, m; 0: the map's"),
    Param("gps_utm_offset_y", 0.0, "UTM northing of the map origin, m; 0: the map's"),
    Param("gps_alt_offset", 0.0, "added to z for the GPS altitude, m"),
    Param("gps_mount_x", 0.0, "GPS antenna on the ego: x forward of the reported position, m (MORAI's sensor "
          "settings: the GPS sensor's pos)"),
    Param("gps_mount_y", 0.0, "GPS antenna: y left, m"),
    Param("gps_mount_z", 0.0, "GPS antenna: z up, m (added to the altitude)"),
    # sensors (emu/sensors/): off unless their destination port is set; mount poses on the ego
    Param("camera_port", DISABLED, "destination port of the camera stream: JPEG chunks (MOR) and boxes (BOX) "
          "(0 disabled; MORAI's examples use 1232)"),
    Param("camera_hz", 10.0, "camera frame rate, Hz of simulated time"),
    Param("camera_width", 640, "camera image width, pixels (640: MORAI's default camera)"),
    Param("camera_height", 480, "camera image height, pixels (480: MORAI's default camera)"),
    Param("camera_fov_deg", 90.0, "camera horizontal field of view, deg"),
    Param("camera_header", "v24", "camera datagram form: v24 (19-byte header with stamp) or legacy (11 bytes)"),
    Param("camera_jpeg_quality", 80, "JPEG quality of the camera frames, 1..100"),
    Param("camera_x", 1.5, "camera mount on the ego: x forward of the reported position, m"),
    Param("camera_y", 0.0, "camera mount: y left, m"),
    Param("camera_z", 1.4, "camera mount: z above the ego's ground, m"),
    Param("camera_roll", 0.0, "camera mount: roll, deg"),
    Param("camera_pitch", 0.0, "camera mount: pitch, deg (+ = looking down)"),
    Param("camera_yaw", 0.0, "camera mount: yaw, deg (+ = to the left)"),
    Param("lidar_port", DISABLED, "destination port of the 3D LiDAR stream, Velodyne 1206-byte packets (0 disabled; "
          "MORAI's examples and Velodyne use 2368)"),
    Param("lidar_model", "VLP16", "3D LiDAR model: VLP16, PUCK_HIRES, HDL32E, VLP32C or MORAI_64"),
    Param("lidar_rpm", 600.0, "3D LiDAR rotation rate, rpm (60..1200): one burst of whole packets per revolution "
          "every 60/rpm s, as MORAI sends it"),
    Param("lidar_max_range", 100.0, "3D LiDAR range, m: farther targets give no return"),
    Param("lidar_x", 0.0, "3D LiDAR mount on the ego: x forward, m"),
    Param("lidar_y", 0.0, "3D LiDAR mount: y left, m"),
    Param("lidar_z", 1.9, "3D LiDAR mount: z up, m"),
    Param("lidar_roll", 0.0, "3D LiDAR mount: roll, deg"),
    Param("lidar_pitch", 0.0, "3D LiDAR mount: pitch, deg"),
    Param("lidar_yaw", 0.0, "3D LiDAR mount: yaw, deg"),
    Param("lidar2d_port", DISABLED, "destination port of the 2D LiDAR stream, one 1107-byte scan per datagram "
          "(0 disabled; no MORAI default)"),
    Param("lidar2d_hz", 10.0, "2D LiDAR scan rate, Hz of simulated time"),
    Param("lidar2d_range_max", 10.0, "2D LiDAR range, m; no hit is reported as this range (max 65.535)"),
    Param("lidar2d_x", 2.4, "2D LiDAR mount on the ego: x forward, m"),
    Param("lidar2d_y", 0.0, "2D LiDAR mount: y left, m"),
    Param("lidar2d_z", 0.5, "2D LiDAR mount: z up (height of the scan plane), m"),
    Param("lidar2d_roll", 0.0, "2D LiDAR mount: roll, deg"),
    Param("lidar2d_pitch", 0.0, "2D LiDAR mount: pitch, deg"),
    Param("lidar2d_yaw", 0.0, "2D LiDAR mount: yaw, deg"),
]

#: option name -> its documentation
FIELD_DOCS = {p.name: p.doc for p in PARAMS}


_FIELDS = collections.namedtuple("SimConfig", [p.name for p in PARAMS], defaults=[p.default for p in PARAMS])


class SimConfig(_FIELDS):
    """Every option of the emulator (:data:`PARAMS`), with its default."""

    __slots__ = ()

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
        if self.velocity_frame not in VELOCITY_FRAMES:
            raise ValueError(f"velocity_frame={self.velocity_frame!r}: 'body' or 'map'")
        if not -2 ** 31 <= self.map_data_id < 2 ** 31:
            raise ValueError(f"map_data_id={self.map_data_id!r} does not fit int32")
        if not 0 <= self.gps_utm_zone <= 60:
            raise ValueError(f"gps_utm_zone={self.gps_utm_zone!r}: 1..60 (0: the map's)")
        for field in ("gps_mount_x", "gps_mount_y", "gps_mount_z", "gps_utm_offset_x", "gps_utm_offset_y"):
            v = getattr(self, field)
            if not (isinstance(v, (int, float)) and math.isfinite(v)):
                raise ValueError(f"{field}={v!r}: must be a finite number")
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

#: name -> (config field, default port, message classes accepted there)
LISTEN_PORTS = {s.name: (s.param, s.port, s.classes) for s in TO_SIM}

#: name -> (port field, default port, rate field or None = event-driven)
SEND_PORTS = {s.name: (s.param, s.port, s.name + "_hz" if s.emu_hz else None) for s in FROM_SIM}
