"""Simulator -> ROS: one converter per stream, from a decoded packet to its messages.

This module is where each stream's meaning lives (units, signs, which slots become objects), and
what the bridge publishes: there is no second path.

How the messages are built: every field of the message is assigned, in the order of its .msg
file, on an instance made with ``object.__new__``.  genpy's constructors would first give each
field its default (a new Header, three Vector3, ...) and check the arguments, which costs five
times the conversion itself (3.7 against 0.7 us for an EgoVehicleStatus, 95 against 16 us for an
Object Info of 20 objects: docs/benchmarks.md); the result is the same message, which rospy
serializes as usual, and test/unit/ros/udp_bridge/test_sim_to_ros.py checks that no converter leaves a field
unset and that the bytes equal genpy's own construction.

Units follow docs/units.md: morai_msgs fields keep MORAI's units (deg, km/h where the message
says so); EgoVehicleStatus.velocity is m/s (the wire carries km/h); the standard messages
(Odometry, Imu, NavSatFix, TF) are SI and ENU (REP-103/REP-105).

Signature of a converter: ``(w, stamp, frame_id, ...)``: the codec's message, the header
stamp (rospy.Time), the header frame id, then what the stream needs besides.
"""
import math

from geometry_msgs.msg import Point, Quaternion, TransformStamped, Vector3
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, NavSatFix, NavSatStatus
from std_msgs.msg import Header

from morai_msgs.msg import (CollisionData, CtrlCmd, EgoVehicleStatus, GetTrafficLightStatus, GPSMessage,
                            IntersectionStatus, MoraiSimProcStatus, ObjectStatus, ObjectStatusList,
                            VehicleCollision, VehicleCollisionData)

from morai_bridge.ros import msg_set
from morai_bridge.wire import udp
from morai_bridge.wire.enums import Platform, SimProc, SimState
from morai_bridge.wire.units import DEG_TO_RAD, KMH_TO_MPS, quaternion_from_rpy

_new = object.__new__
# ObjectStatus.type -> the ObjectStatusList list it goes to: 0 npc_list (type 1, vehicles),
# 1 pedestrian_list (type 0), 2 obstacle_list (type 2); other types (-1: the ego itself, unknown
# types) are not published
LIST_OF_TYPE = {1: 0, 0: 1, 2: 2}
_NO_COVARIANCE = (0.0,) * 9                   # sensor_msgs' "unknown" covariance
# EgoVehicleStatus's tyre block (2024 and 2026 sets): the status packet's fields of that name, in
# wire order, which is the .msg order
TYRE_FIELDS = tuple(n for n in udp.EgoVehicleStatus._fields if n.startswith(('tire_', 'side_slip_')))


def header(stamp, frame_id):
    """std_msgs/Header; seq 0 (rospy numbers the messages it publishes)."""
    h = _new(Header)
    h.seq = 0
    h.stamp = stamp
    h.frame_id = frame_id
    return h


def vector3(x, y, z):
    v = _new(Vector3)
    v.x = x
    v.y = y
    v.z = z
    return v


def ego_status(w, stamp, frame_id, steer_sign=1):
    """EgoVehicleStatus of a status packet, in the workspace's message set (:mod:`.msg_set`);
    velocity km/h -> m/s; the wheel angles are steer_sign x the wire's (the bridge passes
    ``~status_steering_sign``; 1 copies the wire's number).  What the packet does not carry (the
    tyre block before the 229-byte status, rear steer and lanes before the 245-byte one,
    lateral_offset always) is 0."""
    m = _new(EgoVehicleStatus)
    m.header = header(stamp, frame_id)
    m.unique_id = 0
    m.acceleration = vector3(w.acc_x, w.acc_y, w.acc_z)
    m.position = vector3(w.pos_x, w.pos_y, w.pos_z)
    m.velocity = vector3(w.vel_x * KMH_TO_MPS, w.vel_y * KMH_TO_MPS, w.vel_z * KMH_TO_MPS)
    m.heading = w.yaw
    m.accel = w.accel
    m.brake = w.brake
    if msg_set.STATUS_FRONT_REAR:
        m.front_steer_angle = steer_sign * w.steer
        m.rear_steer_angle = 0.0 if w.rear_steer is None else steer_sign * w.rear_steer   # not -0.0
    else:
        m.wheel_angle = steer_sign * w.steer
    if msg_set.STATUS_TYRES:
        m.lateral_offset = 0.0
        for name in TYRE_FIELDS:            # the same names on the wire and in the message
            setattr(m, name, getattr(w, name) or 0.0)
    if msg_set.STATUS_LANE:
        m.distance_left_lane_boundary = w.distance_left_lane_boundary or 0.0
        m.distance_right_lane_boundary = w.distance_right_lane_boundary or 0.0
        m.cross_track_error = w.cross_track_error or 0.0
    return m


def object_status(r, new=_new, ObjectStatus=ObjectStatus, Vector3=Vector3):
    """ObjectStatus of an Object Info record or an NPC vehicle collision record.  Twenty of these
    per Object Info packet: the four Vector3 are made in place rather than through vector3()."""
    o = new(ObjectStatus)
    o.unique_id = r.obj_id
    o.type = r.obj_type
    o.name = ''
    o.heading = r.heading
    o.velocity = v = new(Vector3)
    v.x, v.y, v.z = r.vel_x, r.vel_y, r.vel_z
    o.acceleration = v = new(Vector3)
    v.x, v.y, v.z = r.acc_x, r.acc_y, r.acc_z
    o.size = v = new(Vector3)
    v.x, v.y, v.z = r.size_x, r.size_y, r.size_z
    o.position = v = new(Vector3)
    v.x, v.y, v.z = r.pos_x, r.pos_y, r.pos_z
    return o


def other_ego(r, own, radius):
    """True when an Object Info record of obj_type -1 (MORAI's "Ego vehicle") is another ego:
    it has a size (an empty slot has none) and lies farther than ``radius`` m from ``own``, the
    (x, y) of this bridge's ego (None: not known yet, so not told from our own: False)."""
    return (own is not None and (r.size_x > 0.0 or r.size_y > 0.0)
            and math.hypot(r.pos_x - own[0], r.pos_y - own[1]) > radius)


def object_info(w, stamp, frame_id, own=None, own_radius=2.0):
    """ObjectStatusList of an Object Info packet: each record in the list of its type, in
    packet order; other ego vehicles (obj_type -1, :func:`other_ego`) with the vehicles,
    their type kept; empty slots (all zero, dropped by the codec, or obj_type -1 without a
    size), our own ego and records of unknown types are left out."""
    lists = ([], [], [])                    # npc_list, pedestrian_list, obstacle_list
    for r in w.objects:
        i = LIST_OF_TYPE.get(r.obj_type)
        if i is None and r.obj_type == -1 and other_ego(r, own, own_radius):
            i = 0
        if i is not None:
            lists[i].append(object_status(r))
    m = _new(ObjectStatusList)
    m.header = header(stamp, frame_id)
    m.num_of_npcs = len(lists[0])
    m.num_of_pedestrian = len(lists[1])
    m.num_of_obstacle = len(lists[2])
    m.npc_list, m.pedestrian_list, m.obstacle_list = lists
    return m


def collision_object(r):
    """ObjectStatus of a collision record: id, type and position; the rest zero."""
    o = _new(ObjectStatus)
    o.unique_id = r.obj_id
    o.type = r.obj_type
    o.name = ''
    o.heading = 0.0
    o.velocity = vector3(0.0, 0.0, 0.0)
    o.acceleration = vector3(0.0, 0.0, 0.0)
    o.size = vector3(0.0, 0.0, 0.0)
    o.position = vector3(r.pos_x, r.pos_y, r.pos_z)
    return o


def collision(w, stamp, frame_id):
    """CollisionData: one ObjectStatus (id, type, position) per record of a collision; the global
    offset is the first such record's.  Empty slots are left out: all-zero ones (the codec drops
    them) and obj_type -1 ones (25.S4 fills unused slots so, the first with the ego's position).
    A packet without a collision gives a message with no object and a zero offset: the stream is
    periodic (40-55 Hz) and so is the topic (docs/ros_api.md)."""
    records = [r for r in w.records if r.obj_type >= 0]
    first = records[0] if records else None
    m = _new(CollisionData)
    m.header = header(stamp, frame_id)
    m.global_offset_x = first.global_offset_x if first else 0.0
    m.global_offset_y = first.global_offset_y if first else 0.0
    m.global_offset_z = first.global_offset_z if first else 0.0
    m.collision_object = [collision_object(r) for r in records]
    if msg_set.COLLISION_SECOND_LIST:
        m.collision_objecta = []        # the UDP packet has one list
    return m


def traffic_light(w, stamp, frame_id):
    m = _new(GetTrafficLightStatus)
    m.header = header(stamp, frame_id)
    m.trafficLightIndex = w.traffic_light_index
    m.trafficLightType = w.traffic_light_type
    m.trafficLightStatus = w.traffic_light_status
    return m


def intersection(w, stamp, frame_id):
    m = _new(IntersectionStatus)
    m.header = header(stamp, frame_id)
    m.intersection_index = w.intersection_index
    m.intersection_status = w.intersection_status
    m.intersection_status_time = w.intersection_status_time
    return m


def vehicle_collision(w, stamp, frame_id):
    """VehicleCollisionData: one VehicleCollision per pair, with the vehicles the pair holds."""
    m = _new(VehicleCollisionData)
    m.header = header(stamp, frame_id)
    m.collisions = []
    for pair in w.pairs:
        c = _new(VehicleCollision)
        c.crashed_vehicles = [object_status(r) for r in pair if r is not None]
        m.collisions.append(c)
    return m


def sim_proc_result(result):
    """MoraiSimProcStatus.command_result of SimStatus.result: 0 none, 0x01 success, else 0x10 failure."""
    return 0 if result == 0 else (0x01 if result == 0x01 else 0x10)


def sim_proc_state(platform, status):
    """MoraiSimProcStatus.current_status of a SimStatus: play / pause when the simulator reports
    playing / paused (low 12 bits of its status), else 0."""
    if platform == Platform.SIMULATOR:
        state = status & 0x0FFF
        if state == SimState.PAUSE:
            return int(SimProc.PAUSE)
        if state == SimState.PLAYING:
            return int(SimProc.PLAY)
    return 0


def sim_status(w, stamp, last_command_time):
    """MoraiSimProcStatus of a SimStatus packet; latest_command_time is when the bridge last sent a
    simulator command; current_mode is always 0x01 (the UDP interface).  No frame id."""
    m = _new(MoraiSimProcStatus)
    m.header = header(stamp, '')
    m.latest_command_time = last_command_time
    m.command_result = sim_proc_result(w.result)
    m.current_mode = 0x01
    m.current_status = sim_proc_state(w.platform, w.status)
    return m


def gps_fix(w, altitude=None):
    """(latitude, longitude, altitude, fix quality) of an NMEA sentence with a position, else None.

    ``altitude`` is used when the sentence has none (RMC): the last GGA's (0.0 before any).
    The fix quality is GGA's, else 1 for an RMC with status 'A' and 0 otherwise; and 0 for the
    position 0/0, which MORAI sends in a GPS blackout zone with GGA quality 1 and RMC status A
    (docs/versions.md): the position is kept as sent, the fix is not."""
    if w.latitude is None or w.longitude is None:
        return None
    alt = w.altitude
    if alt is None:
        alt = altitude if altitude is not None else 0.0
    fix = w.fix_quality
    if fix is None:
        fix = 1 if w.status == 'A' else 0
    if w.latitude == 0.0 and w.longitude == 0.0:
        fix = 0
    return w.latitude, w.longitude, alt, fix


def gps(w, stamp, frame_id, east_offset=0.0, north_offset=0.0, altitude=None):
    """(GPSMessage, NavSatFix) of an NMEA sentence with a position, else (None, None).
    Both messages share one Header object; covariance unknown."""
    p = gps_fix(w, altitude)
    if p is None:
        return None, None
    lat, lon, alt, fix = p
    h = header(stamp, frame_id)
    g = _new(GPSMessage)
    g.header = h
    g.latitude = lat
    g.longitude = lon
    g.altitude = alt
    g.eastOffset = east_offset
    g.northOffset = north_offset
    g.status = fix
    s = _new(NavSatStatus)
    s.status = NavSatStatus.STATUS_FIX if fix > 0 else NavSatStatus.STATUS_NO_FIX
    s.service = NavSatStatus.SERVICE_GPS
    n = _new(NavSatFix)
    n.header = h
    n.status = s
    n.latitude = lat
    n.longitude = lon
    n.altitude = alt
    n.position_covariance = _NO_COVARIANCE
    n.position_covariance_type = NavSatFix.COVARIANCE_TYPE_UNKNOWN
    return g, n


def imu(w, stamp, frame_id):
    """sensor_msgs/Imu of an IMU packet (covariances unknown, all zero)."""
    q = _new(Quaternion)
    q.x, q.y, q.z, q.w = w.ori_x, w.ori_y, w.ori_z, w.ori_w
    m = _new(Imu)
    m.header = header(stamp, frame_id)
    m.orientation = q
    m.orientation_covariance = _NO_COVARIANCE
    m.angular_velocity = vector3(w.ang_vel_x, w.ang_vel_y, w.ang_vel_z)
    m.angular_velocity_covariance = _NO_COVARIANCE
    m.linear_acceleration = vector3(w.lin_acc_x, w.lin_acc_y, w.lin_acc_z)
    m.linear_acceleration_covariance = _NO_COVARIANCE
    return m


def odometry(w, stamp, frame_id, child_frame_id):
    """nav_msgs/Odometry (SI, ENU) and the matching TF from an ego status (genpy constructors:
    only with ~publish_odom / ~publish_tf).

    Pose: map position, orientation from roll/pitch/yaw.  Twist in the child (body) frame:
    forward speed = signed_vel, angular velocity (deg/s -> rad/s) when the variant carries it.
    """
    q = Quaternion(*quaternion_from_rpy(w.roll * DEG_TO_RAD, w.pitch * DEG_TO_RAD, w.yaw * DEG_TO_RAD))
    o = Odometry()
    o.header = header(stamp, frame_id)
    o.child_frame_id = child_frame_id
    o.pose.pose.position = Point(w.pos_x, w.pos_y, w.pos_z)
    o.pose.pose.orientation = q
    o.twist.twist.linear.x = w.signed_vel * KMH_TO_MPS
    if w.ang_vel_z is not None:
        o.twist.twist.angular = Vector3(w.ang_vel_x * DEG_TO_RAD, w.ang_vel_y * DEG_TO_RAD, w.ang_vel_z * DEG_TO_RAD)
    t = TransformStamped()
    t.header = o.header
    t.child_frame_id = child_frame_id
    t.transform.translation = Vector3(w.pos_x, w.pos_y, w.pos_z)
    t.transform.rotation = q
    return o, t


def message_set_problems():
    """What the workspace's morai_msgs has that the converters would leave unset or never read:
    [] for every set of :mod:`.msg_set` (the bridge refuses to start otherwise)."""
    problems = []
    for msg in (ego_status(udp.make(udp.EgoVehicleStatus, 216), None, ''),
                collision(udp.make(udp.CollisionData), None, '')):
        unset = msg_set.unfilled(msg)
        if unset:
            problems.append(f"{msg._type} has {', '.join(unset)}, which no morai_msgs set has")
    unread = set(CtrlCmd.__slots__) - {'longlCmdType', 'accel', 'brake', 'steering', 'front_steer', 'rear_steer',
                                       'velocity', 'acceleration'}
    if unread:
        problems.append(f"{CtrlCmd._type} has {', '.join(sorted(unread))}, which no morai_msgs set has")
    return problems


#: stream name -> its converter, for the received streams the receiver publishes as their converter makes
#: them, called ``(w, stamp, frame_id)``.  A stream that needs more (the receiver's state, counters, two
#: messages) has a method in ``SimReceiver.METHODS`` instead, which calls the converters above itself;
#: every received stream is in exactly one of the two tables (test_sim_receive_streams.py).
CONVERTERS = {
    'intersection': intersection,
    'vehicle_collision': vehicle_collision,
}
