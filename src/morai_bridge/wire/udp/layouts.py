"""Byte layouts of every MORAI UDP message, as data.

Each table row is ``(name, struct code, unit / meaning)``; all formats are
little-endian and unpacked (``<``).  Section numbers refer to the project's UDP
specification (udp.md).  The classes defined here are re-exported by
:mod:`morai_bridge.wire.udp`, which compiles the tables into ``struct.Struct``
objects; do not import this module directly.
"""

from ..enums import (CtrlMode, Gear, GvSteerMode, ObjectType, Platform, SimCommand, SimResult,
                    SimState, TrafficLightBit, TrafficLightType, doc_of)
from .schema import (PAD_DOLLAR, PAD_NUL, PAD_SPACE, Records, Variant,
                         define_message, define_record, table)

__all__ = [
    "EgoCtrlCmd", "EgoGhostCmd", "SetTrafficLight", "SetIntersectionStatus",
    "ScenarioLoad", "SaveSensorData", "SensorControl", "LampControl",
    "MultiEgoSetting", "MultiEgoRecord", "NpcGhostCmd", "NpcGhostRecord",
    "GVDirectCmd", "GVStateCmd", "EgoVehicleStatus", "ObjectInfo", "ObjectRecord",
    "GetTrafficLightStatus", "CollisionData", "CollisionRecord",
    "GetIntersectionStatus", "NpcVehicleCollision", "NpcCollisionRecord",
    "SimControl", "SimStatus", "ImuData",
]

_GEAR = doc_of(Gear)
_CTRL_MODE = doc_of(CtrlMode) + " (AUTO = external control)"
_OBJ_TYPE = doc_of(ObjectType)
_TL_STATUS = doc_of(TrafficLightBit, "bit set") + "; -1 default/off"
_PLATFORM = doc_of(Platform)
_TIME = (("sec", "i", "s; timestamp seconds (simulator clock, section 4.3)"),
         ("nsec", "i", "ns; timestamp fraction"))


def _xyz(prefix: str, unit: str, what: str = ""):
    return tuple((f"{prefix}{axis}", "f", f"{unit}{'; ' + what if what else ''}")
                 for axis in "xyz")


# --------------------------------------------------------------------------- 3.1
_CTRL = (
    ("ctrl_mode", "b", _CTRL_MODE + " (a bridge sends 2)"),
    ("gear", "b", _GEAR),
    ("cmd_type", "b", "enum longCmdType: 1 throttle (accel/brake/steer), "
                      "2 velocity (velocity/steer), 3 acceleration (acceleration/steer)"),
    ("velocity", "f", "km/h; target speed, used when cmd_type = 2"),
    ("acceleration", "f", "m/s^2; target acceleration, used when cmd_type = 3"),
    ("accel", "f", "0..1; accelerator pedal, used when cmd_type = 1"),
    ("brake", "f", "0..1; brake pedal, used when cmd_type = 1"),
    ("steer", "f", "-1..1; front-wheel angle / vehicle maximum steering angle "
                   "(wire name front_steer in the 27-byte variant)"),
)
EgoCtrlCmd = define_message(
    "EgoCtrlCmd", "ctrl_cmd", b"#MoraiCtrlCmd$", "user->sim",
    "Ego Ctrl Cmd: longitudinal and steering command for the ego vehicle.",
    [Variant(23, table(_CTRL), note="55 B, documented by the manual, all official examples"),
     Variant(27, table(_CTRL + (("rear_steer", "f", "-1..1; rear-wheel angle, normalised"),)),
             note="59 B, newer official module with rear steering")],
    current=23)

# --------------------------------------------------------------------------- 3.2
EgoGhostCmd = define_message(
    "EgoGhostCmd", "ego_ghost", b"#EgoGhostCmd$", "user->sim",
    "Ego Ghost Cmd: places the ego vehicle at a pose (ghost mode).",
    [Variant(32, table(_xyz("position_", "m", "map frame") + (
        ("rotation_x", "f", "deg; roll"),
        ("rotation_y", "f", "deg; pitch"),
        ("rotation_z", "f", "deg; yaw"),
        ("speed", "f", "km/h; vehicle speed"),
        ("steer_angle", "f", "deg; front-wheel angle"),
    )), note="63 B")],
    current=32)

# --------------------------------------------------------------------------- 3.3
_TL_SET = (("traffic_light_index", "12s", "ASCII id, e.g. C119BS010007 (12 chars)"),
           ("traffic_light_status", "h", _TL_STATUS))
SetTrafficLight = define_message(
    "SetTrafficLight", "set_traffic_light", b"#TrafficLight$", "user->sim",
    "Set TrafficLight: forces one traffic light into a state.  Ids shorter than "
    "12 characters are space-padded, as the official example does.",
    [Variant(14, table(_TL_SET, PAD_SPACE), note="46 B, current"),
     Variant(15, table((("flag", "?", "bool; undocumented leading byte of old "
                                      "clients (they send True)"),) + _TL_SET, PAD_SPACE),
             note="47 B, legacy third-party layout")],
    current=14)

# --------------------------------------------------------------------------- 3.4
SetIntersectionStatus = define_message(
    "SetIntersectionStatus", "set_intersection", b"#SetIntStatus$", "user->sim",
    "Set Intersection Status: forces an intersection controller into a state.",
    [Variant(8, table((
        ("intersection_index", "h", "intersection id"),
        ("intersection_status", "h", "enum; state to set"),
        ("intersection_status_time", "f", "s; elapsed time to assume in that state"),
    )), note="40 B")],
    current=8)

# --------------------------------------------------------------------------- 3.5
ScenarioLoad = define_message(
    "ScenarioLoad", "scenario_load", b"#ScenarioLoad$", "user->sim",
    "Scenario Load: loads a saved scenario (file name without .json, space-padded).",
    [Variant(37, table((
        ("file_name", "30s", "ASCII; scenario name without .json"),
        ("delete_all", "?", "bool; remove everything but the ego, then load"),
        ("load_network", "?", "bool; load network-connection settings"),
        ("load_ego", "?", "bool; load ego vehicle data"),
        ("load_npc", "?", "bool; load surrounding (NPC) vehicles"),
        ("load_pedestrian", "?", "bool; load pedestrians"),
        ("load_object", "?", "bool; load objects/obstacles"),
        ("set_pause", "?", "bool; stay paused after loading"),
    ), PAD_SPACE), note="69 B")],
    current=37)

# --------------------------------------------------------------------------- 3.6
SaveSensorData = define_message(
    "SaveSensorData", "save_sensor_data", b"#SaveSensorData$", "user->sim",
    "Save Sensor Data: saves the current sensor data on the simulator host "
    "(strings space-padded).",
    [Variant(91, table((
        ("is_custom_file_name", "?", "bool; False = simulator's own SensorData folder"),
        ("custom_file_name", "30s", "ASCII; used when is_custom_file_name"),
        ("file_dir", "60s", "ASCII; directory on the simulator host"),
    ), PAD_SPACE), note="125 B")],
    current=91)

# --------------------------------------------------------------------------- 3.7
SensorControl = define_message(
    "SensorControl", "sensor_control", b"#SensorControl$", "user->sim",
    "Sensor Control: moves one sensor (angles in degrees on the wire).",
    [Variant(26, table((("sensor_index", "h", "sensor number in the sensor list"),)
                       + _xyz("pos_", "m", "mount position") + (
        ("roll", "f", "deg"),
        ("pitch", "f", "deg"),
        ("yaw", "f", "deg"),
    )), note="59 B")],
    current=26)

# --------------------------------------------------------------------------- 3.8
LampControl = define_message(
    "LampControl", "lamps", b"#LampControl$", "user->sim",
    "Turn Signal Lamp Control.",
    [Variant(2, table((
        ("turn_signal", "b", "enum: 0 none, 1 left, 2 right"),
        ("emergency_signal", "b", "enum: 0 off, 1 hazard lights"),
    )), note="33 B")],
    current=2)

# --------------------------------------------------------------------------- 3.9
_EGO_PREFIX = table((("num_of_ego", "i", "number of ego vehicles to set"),
                     ("camera_index", "i", "ego index the camera follows")))
_EGO_RECORD = table((("ego_index", "h", "ego vehicle index"),)
                    + _xyz("g_pos_", "m", "map frame") + (
    ("g_roll", "f", "deg"),
    ("g_pitch", "f", "deg"),
    ("g_yaw", "f", "deg"),
    ("speed", "f", "km/h"),
    ("gear", "b", _GEAR),
    ("ctrl_mode", "b", _CTRL_MODE),
))
_EGO_RECORD_LEGACY = table((
    ("ego_index", "i", "ego vehicle index"),
    ("g_pos_x", "d", "m; float64"),
    ("g_pos_y", "d", "m; float64"),
    ("g_pos_z", "d", "m; float64"),
    ("g_roll", "f", "deg"),
    ("g_pitch", "f", "deg"),
    ("g_yaw", "f", "deg"),
    ("speed", "f", "km/h"),
    ("gear", "B", _GEAR),
    ("ctrl_mode", "B", _CTRL_MODE),
))
MultiEgoRecord = define_record(
    "MultiEgoRecord", "One ego vehicle of Multi Ego Setting.", _EGO_RECORD)
MultiEgoSetting = define_message(
    "MultiEgoSetting", "multi_ego", b"#MultiEgoSetting$", "user->sim",
    "Multi Ego Setting: pose, speed, gear and control mode of up to 20 egos.  "
    "num_of_ego is sent as given (it is not derived from len(egos)).",
    [Variant(648, _EGO_PREFIX, Records("egos", MultiEgoRecord, _EGO_RECORD, 20),
             note="683 B, current (32-byte records, float32 positions)"),
     Variant(920, _EGO_PREFIX, Records("egos", MultiEgoRecord, _EGO_RECORD_LEGACY, 20),
             note="961 B, legacy: 46-byte records with float64 positions; "
                  "data_length does not count the 8-byte prefix and no CR LF follows; "
                  "never send it to a current simulator",
             tail=False, prefix_outside_length=True)],
    current=648)

# --------------------------------------------------------------------------- 3.10
_NPC_GHOST_RECORD = table((
    ("unique_id", "b", "NPC id (int8)"),
    ("car_name", "25s", "ASCII vehicle model, e.g. 2015_Kia_K5"),
) + _xyz("pos_", "m", "map frame") + (
    ("roll", "f", "deg"),
    ("pitch", "f", "deg"),
    ("yaw", "f", "deg"),
), PAD_SPACE)
NpcGhostRecord = define_record(
    "NpcGhostRecord", "One NPC of NPC Ghost Cmd (car_name space-padded).", _NPC_GHOST_RECORD)
NpcGhostCmd = define_message(
    "NpcGhostCmd", "npc_ghost", b"#NpcGhostCmd$", "user->sim",
    "NPC Ghost Cmd: places up to 20 NPC vehicles (play/replay mode).",
    [Variant(1000, (), Records("npcs", NpcGhostRecord, _NPC_GHOST_RECORD, 20),
             note="1031 B")],
    current=1000)

# --------------------------------------------------------------------------- 3.11
_GV_HEADER = (
    ("header_version", "I", "default 0"),
    ("msg_type", "I", "65 Direct Ctrl Cmd, 66 State Ctrl Cmd (fixed per class)"),
    ("msg_size", "I", "default 0"),
    ("protocol_type", "B", "default 0"),
    ("send_count", "H", "default 0"),
    ("msg_frames", "I", "default 0"),
    ("frame_size", "I", "default 0"),
    ("frame_pos", "I", "default 0"),
    ("frame_index", "I", "default 0"),
    ("reserved_01", "B", "default 0"),
    ("reserved_02", "B", "default 0"),
)
_GV_HEADER_NAMES = [row[0] for row in _GV_HEADER if row[0] != "msg_type"]


def _gv_header(msg_type: int):
    return tuple(row if row[0] != "msg_type" else row + ("", msg_type) for row in _GV_HEADER)


_GV_DIRECT = (
    ("steer_type", "I", doc_of(GvSteerMode)),
    ("throttle", "f", "-1..1; sign = direction (ZERO_TURN: + right), magnitude = throttle"),
    ("skid_steering", "f", "-1..1; SKID_STEERING only, + right"),
    ("steer_angle", "10f", "-1..1 per steerable axle; ACKERMANN only; angle / max angle, + right"),
)
GVDirectCmd = define_message(
    "GVDirectCmd", "gv_direct", None, "user->sim",
    "Ground Vehicle Direct Ctrl Cmd (85 B, no '#' framing; header defaults 0).  "
    "steer_angle is a tuple of exactly 10 floats.",
    [Variant(None, table(_gv_header(65) + _GV_DIRECT), note="85 B", tail=False)],
    current=None, msg_type=65,
    order=[row[0] for row in _GV_DIRECT] + _GV_HEADER_NAMES)

_GV_STATE = (
    ("target_longitudinal_velocity", "f", "m/s; target longitudinal speed"),
    ("target_angular_velocity", "f", "rad/s; target angular velocity"),
)
GVStateCmd = define_message(
    "GVStateCmd", "gv_state", None, "user->sim",
    "Ground Vehicle State Ctrl Cmd (41 B, no '#' framing; header defaults 0).",
    [Variant(None, table(_gv_header(66) + _GV_STATE), note="41 B", tail=False)],
    current=None, msg_type=66,
    order=[row[0] for row in _GV_STATE] + _GV_HEADER_NAMES)

# --------------------------------------------------------------------------- 3.12
_ST_HEAD = (
    ("ctrl_mode", "b", _CTRL_MODE),
    ("gear", "b", _GEAR),
    ("signed_vel", "f", "km/h; signed speed in the direction of travel"),
    ("map_data_id", "i", "0-9999 digital-twin map, 10000-19999 virtual map"),
    ("accel", "f", "0..1; accelerator pedal state"),
    ("brake", "f", "0..1; brake pedal state"),
    ("size_x", "f", "m; vehicle length"),
    ("size_y", "f", "m; vehicle width"),
    ("size_z", "f", "m; vehicle height"),
    ("overhang", "f", "m; front overhang"),
    ("wheelbase", "f", "m"),
    ("rear_overhang", "f", "m"),
    ("pos_x", "f", "m; map frame, East"),
    ("pos_y", "f", "m; map frame, North"),
    ("pos_z", "f", "m; map frame, Up"),
    ("roll", "f", "deg; not wrapped"),
    ("pitch", "f", "deg; not wrapped"),
    ("yaw", "f", "deg; heading, not wrapped"),
) + _xyz("vel_", "km/h", "velocity vector")
_ST_ANG = _xyz("ang_vel_", "deg/s", "angular velocity")
_ST_ACC = _xyz("acc_", "m/s^2", "acceleration vector")
_ST_STEER = (("steer", "f", "deg; front-wheel angle (wire name front_steer at 216)"),)
_ST_REAR = (("rear_steer", "f", "deg; rear-wheel angle"),)
_ST_LINK = (("link_id", "38s", "ASCII MGeo link id under the vehicle ('' = none)"),)
_ST_TYRES = tuple(
    (f"{quantity}_{wheel}", "f", f"{unit}; tyre block")
    for quantity, unit in (("tire_lateral_force", "N"), ("side_slip_angle", "deg"),
                           ("tire_cornering_stiffness", "N/deg"))
    for wheel in ("fl", "fr", "rl", "rr"))
_ST_LANE = (
    ("distance_left_lane_boundary", "f", "m"),
    ("distance_right_lane_boundary", "f", "m"),
    ("cross_track_error", "f", "m; distance from lane centre, right positive"),
)
EgoVehicleStatus = define_message(
    "EgoVehicleStatus", "ego_status", b"#MoraiInfo$", "sim->user",
    "Ego Vehicle Status.  Velocities are km/h on the wire (the ROS message is m/s).",
    [Variant(200, table(_TIME + _ST_HEAD + _ST_ANG + _ST_ACC + _ST_STEER + _ST_LINK
                        + _ST_TYRES, PAD_NUL),
             note="229 B, current: every captured packet; 152 + tyre block"),
     Variant(216, table(_TIME + _ST_HEAD + _ST_ANG + _ST_ACC + _ST_STEER + _ST_REAR
                        + _ST_LINK + _ST_TYRES + _ST_LANE, PAD_NUL),
             note="245 B, newer module: rear_steer, tyre block, lane distances"),
     Variant(152, table(_TIME + _ST_HEAD + _ST_ANG + _ST_ACC + _ST_STEER + _ST_LINK, PAD_NUL),
             note="181 B, manual 24.R2"),
     Variant(132, table(_ST_HEAD + _ST_ACC + _ST_STEER + _ST_LINK, PAD_NUL),
             note="161 B, ERP-42 era, no timestamp"),
     Variant(94, table(_ST_HEAD + _ST_ACC + _ST_STEER),
             note="123 B (also accepted: 121 B without CR LF), 22.R2 era",
             untailed_ok=True)],
    current=200)

# --------------------------------------------------------------------------- 3.13
_OBJECT_RECORD = table((
    ("obj_id", "h", "unique id (0 in an empty slot)"),
    ("obj_type", "h", _OBJ_TYPE),
) + _xyz("pos_", "m", "map frame") + (
    ("heading", "f", "deg"),
) + _xyz("size_", "m", "x = length") + (
    ("overhang", "f", "m; front overhang"),
    ("wheelbase", "f", "m"),
    ("rear_overhang", "f", "m"),
) + _xyz("vel_", "km/h", "velocity vector") + _xyz("acc_", "m/s^2", "acceleration vector") + (
    ("link_id", "38s", "ASCII MGeo link id (NPC vehicles only)"),
), PAD_NUL)
ObjectRecord = define_record(
    "ObjectRecord", "One surrounding object of Object Info.", _OBJECT_RECORD)
ObjectInfo = define_message(
    "ObjectInfo", "object_info", b"#MoraiObjInfo$", "sim->user",
    "Object Info: up to 20 surrounding objects, nearest first.  Empty (all-zero) "
    "slots are skipped; encode writes the objects into the leading slots.",
    [Variant(2128, table(_TIME), Records("objects", ObjectRecord, _OBJECT_RECORD, 20),
             note="2160 B, current (captured)"),
     Variant(2120, (), Records("objects", ObjectRecord, _OBJECT_RECORD, 20),
             note="2152 B, ERP-42 builds, no timestamp")],
    current=2128)

# --------------------------------------------------------------------------- 3.14
GetTrafficLightStatus = define_message(
    "GetTrafficLightStatus", "traffic_light", b"#TrafficLight$", "sim->user",
    "Get TrafficLight Status: state of one traffic light (no timestamp).",
    [Variant(16, table((
        ("traffic_light_index", "12s", "ASCII id, e.g. C119BS010007"),
        ("traffic_light_type", "h", doc_of(TrafficLightType)),
        ("traffic_light_status", "h", _TL_STATUS),
    ), PAD_NUL), note="48 B")],
    current=16)

# --------------------------------------------------------------------------- 3.15
_COLLISION_RECORD = table((
    ("obj_type", "h", _OBJ_TYPE + " (type before id)"),
    ("obj_id", "h", "object id"),
) + _xyz("pos_", "m", "position of the object hit")
  + _xyz("global_offset_", "m", "map offset of the coordinate system"))
CollisionRecord = define_record(
    "CollisionRecord", "One object colliding with the ego.", _COLLISION_RECORD)
CollisionData = define_message(
    "CollisionData", "collision", b"#CollisionData$", "sim->user",
    "Collision Data: up to 5 objects colliding with the ego.",
    [Variant(148, table(_TIME), Records("records", CollisionRecord, _COLLISION_RECORD, 5),
             note="181 B, current (captured)"),
     Variant(140, (), Records("records", CollisionRecord, _COLLISION_RECORD, 5),
             note="173 B, ERP-42 builds, no timestamp")],
    current=148)

# --------------------------------------------------------------------------- 3.16
GetIntersectionStatus = define_message(
    "GetIntersectionStatus", "intersection", b"#IntStatus$", "sim->user",
    "Get Intersection Status (no timestamp).",
    [Variant(8, table((
        ("intersection_index", "h", "intersection id"),
        ("intersection_status", "h", "enum; values undocumented (captured 1, 5)"),
        ("intersection_status_time", "f", "s; time spent in the current state"),
    )), note="37 B")],
    current=8)

# --------------------------------------------------------------------------- 3.17
_NPC_COLLISION_RECORD = table((
    ("obj_type", "h", _OBJ_TYPE),
    ("obj_id", "h", "object id"),
) + _xyz("pos_", "m", "map frame") + (
    ("heading", "f", "deg"),
) + _xyz("size_", "m") + _xyz("vel_", "km/h") + _xyz("acc_", "m/s^2"))
NpcCollisionRecord = define_record(
    "NpcCollisionRecord", "One vehicle of an NPC-NPC collision pair.", _NPC_COLLISION_RECORD)
NpcVehicleCollision = define_message(
    "NpcVehicleCollision", "vehicle_collision", b"#VehicleCollision$", "sim->user",
    "NPC Vehicle Collision Data: up to 10 pairs of colliding vehicles.  `pairs` "
    "holds 2-tuples (first, second) of NpcCollisionRecord; all-zero pairs are skipped.",
    [Variant(1120, (), Records("pairs", NpcCollisionRecord, _NPC_COLLISION_RECORD, 20,
                               group=2), note="1156 B")],
    current=1120)

# --------------------------------------------------------------------------- 3.19-3.20
SimControl = define_message(
    "SimControl", "sim_control", b"#SimControl$", "user->sim",
    "Simulator control (20-byte aux).  `option` is the argument text only: the "
    "codec appends '$' and NUL padding (at most 99 characters).",
    [Variant(103, table((
        ("platform", "B", _PLATFORM),
        ("command", "H", doc_of(SimCommand) + " (section 3.19)"),
        ("option", "100s", "ASCII argument text (without the '$' terminator)", PAD_DOLLAR),
    )), note="141 B")],
    current=103, aux_length=20)

SimStatus = define_message(
    "SimStatus", "sim_status", b"#SimStatus$", "sim->user",
    "Simulator status (20-byte aux).  `command_option` is decoded like SimControl.option.",
    [Variant(108, table((
        ("platform", "B", _PLATFORM + " (who reports)"),
        ("stage", "B", "enum: launcher 1 before / 2 after login; simulator 1 lobby / 2 play"),
        ("status", "H", doc_of(SimState) + "; 0x1000 bit = busy (section 3.20)"),
        ("command_platform", "B", "platform of the last command received (" + _PLATFORM + ")"),
        ("command", "H", "last command received (" + doc_of(SimCommand) + ")"),
        ("command_option", "100s", "ASCII option of the last command (without '$')",
         PAD_DOLLAR),
        ("result", "B", doc_of(SimResult) + ", other values = errors (section 3.20)"),
    )), note="145 B")],
    current=108, aux_length=20)

# --------------------------------------------------------------------------- IMU
_IMU = (
    ("ori_w", "d", "orientation quaternion w"),
    ("ori_x", "d", "orientation quaternion x"),
    ("ori_y", "d", "orientation quaternion y"),
    ("ori_z", "d", "orientation quaternion z"),
    ("ang_vel_x", "d", "rad/s; angular velocity"),
    ("ang_vel_y", "d", "rad/s; angular velocity"),
    ("ang_vel_z", "d", "rad/s; angular velocity"),
    ("lin_acc_x", "d", "m/s^2; linear acceleration"),
    ("lin_acc_y", "d", "m/s^2; linear acceleration"),
    ("lin_acc_z", "d", "m/s^2; linear acceleration"),
)
ImuData = define_message(
    "ImuData", "imu", b"#IMUData$", "sim->user",
    "IMU sensor stream: 115 B with sec/nsec (25.S4 live, MORAI's 24.R2.0 network module), or 107 B "
    "without (manuals 24.R2 / 24.R2.2 / 26.R1).",
    [Variant(88, table(_TIME + _IMU), note="115 B, with time (25.S4 live)"),
     Variant(80, table(_IMU), note="107 B, no time (manuals 24.R2, 24.R2.2, 26.R1)")],
    current=88)
