"""UDP wire objects <-> morai_msgs / standard ROS messages.

Units follow docs/units.md: morai_msgs fields keep MORAI's units (deg, km/h
where the message says so); EgoVehicleStatus.velocity is m/s (the wire
carries km/h); the standard messages added here (Odometry, Imu, NavSatFix,
TF) are SI and ENU (REP-103/REP-105).

Command conversions raise :class:`CommandError` (a ValueError) instead of
producing a packet when a value is NaN/inf or does not fit its wire field.
"""
import math
import time

import rospy
from geometry_msgs.msg import Quaternion, TransformStamped, Vector3
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, NavSatFix, NavSatStatus
from std_msgs.msg import Header

from morai_msgs.msg import (CollisionData, EgoVehicleStatus, GetTrafficLightStatus, GPSMessage,
                            IntersectionStatus, MapSpec, MoraiSimProcStatus, MoraiTLInfo, ObjectStatus,
                            ObjectStatusList, VehicleCollision, VehicleCollisionData, VehicleSpec)

from morai_bridge.wire import udp
from morai_bridge.wire.enums import MULTI_EGO_TO_WIRE_CTRL_MODE, Platform, SimCommand, SimProc, SimState
from morai_bridge.wire.units import (DEG_TO_RAD, KMH_TO_MPS, UTM_FALSE_EASTING, UTM_FALSE_NORTHING_NORTH,
                                     UTM_SCALE_FACTOR, quaternion_from_rpy, utm_central_meridian)

# plain ints on the per-packet path
KMH = KMH_TO_MPS
DEG = DEG_TO_RAD
_PLATFORM_SIMULATOR = int(Platform.SIMULATOR)
_STATUS_PAUSE = int(SimState.PAUSE)
_STATUS_PLAYING = int(SimState.PLAYING)


class CommandError(ValueError):
    """A ROS command that must not become a packet; the text says why."""


def _finite(what, **values):
    for name, v in values.items():
        if not math.isfinite(v):
            raise CommandError('%s.%s is %r: refused, nothing sent' % (what, name, v))


def _int_range(what, name, v, lo, hi):
    if not lo <= v <= hi:
        raise CommandError('%s.%s = %r does not fit the packet (%d..%d): refused' % (what, name, v, lo, hi))
    return v


def _text(what, name, v, limit):
    if len(v) > limit:
        raise CommandError('%s.%s is %d characters, the packet holds %d: refused' % (what, name, len(v), limit))
    try:
        v.encode('ascii')
    except UnicodeEncodeError:
        raise CommandError('%s.%s must be ASCII: refused' % (what, name)) from None
    return v


# Messages on the hot path (up to 120 Hz per stream) are made with
# object.__new__ and every slot assigned once: the same message as the
# generated constructor gives (positional or keyword), without its argument
# handling and without default sub-messages that would be replaced at once.
# A genpy message needs every slot set; where the packet has nothing, the value
# is the constructor's default.
_new = object.__new__
_Time = rospy.Time


def sim_stamp(sec, nsec):
    """rospy.Time from a packet's int32 pair, or None when it cannot be a time."""
    if sec < 0 or not 0 <= nsec < 1000000000:
        return None
    t = _new(_Time)       # == rospy.Time(sec, nsec): the pair is already canonical
    t.secs = sec
    t.nsecs = nsec
    return t


def receive_clock():
    """The function that stamps a packet without a time: ``rospy.Time.now``, or, when the
    node runs on the wall clock (no ``/use_sim_time``; rospy decides that once, in
    ``init_node``), the same rule as rospy's ``get_rostime`` written without its calls
    (secs = int(time.time()), nsecs = int of the rest x 1e9; the pair is canonical)."""
    if rospy.get_param('/use_sim_time', False) or not rospy.rostime.is_wallclock():
        return rospy.Time.now

    def wall_now(clock=time.time, new=_new, Time=_Time):
        f = clock()
        secs = int(f)
        t = new(Time)
        t.secs = secs
        t.nsecs = int((f - secs) * 1000000000)
        return t
    return wall_now


def _header(stamp, frame_id):
    h = _new(Header)
    h.seq = 0
    h.stamp = stamp
    h.frame_id = frame_id
    return h


def _vector3(x, y, z):
    v = _new(Vector3)
    v.x = x
    v.y = y
    v.z = z
    return v


# --------------------------------------------------------------------------
# simulator -> ROS
# --------------------------------------------------------------------------

def ego_status(w, stamp, frame_id, steer_sign=1, new=_new, Header=Header, Vector3=Vector3,
               EgoVehicleStatus=EgoVehicleStatus):
    """EgoVehicleStatus of a status packet; wheel_angle = steer_sign x the wire's steer.
    The bridge passes ``~status_steering_sign`` (default WIRE_STEERING_SIGN: the wire's
    + right becomes ROS + left, docs/units.md); 1 copies the wire's number."""
    m = new(EgoVehicleStatus)
    m.header = h = new(Header)
    h.seq = 0
    h.stamp = stamp
    h.frame_id = frame_id
    m.unique_id = 0
    m.acceleration = v = new(Vector3)
    v.x, v.y, v.z = w.acc_x, w.acc_y, w.acc_z
    m.position = v = new(Vector3)
    v.x, v.y, v.z = w.pos_x, w.pos_y, w.pos_z
    m.velocity = v = new(Vector3)
    v.x, v.y, v.z = w.vel_x * KMH, w.vel_y * KMH, w.vel_z * KMH
    m.heading = w.yaw
    m.accel = w.accel
    m.brake = w.brake
    m.wheel_angle = steer_sign * w.steer
    return m


def _object(r, new=_new, ObjectStatus=ObjectStatus, Vector3=Vector3):
    """ObjectStatus of an ObjectRecord or NpcCollisionRecord."""
    o = new(ObjectStatus)
    o.unique_id = r.obj_id
    o.type = r.obj_type
    o.name = ''
    o.heading = r.heading
    v = new(Vector3)
    v.x, v.y, v.z = r.vel_x, r.vel_y, r.vel_z
    o.velocity = v
    v = new(Vector3)
    v.x, v.y, v.z = r.acc_x, r.acc_y, r.acc_z
    o.acceleration = v
    v = new(Vector3)
    v.x, v.y, v.z = r.size_x, r.size_y, r.size_z
    o.size = v
    v = new(Vector3)
    v.x, v.y, v.z = r.pos_x, r.pos_y, r.pos_z
    o.position = v
    return o


# object_list unpacks ObjectRecords by position (up to 20 per packet, one UNPACK_SEQUENCE
# instead of 16 attribute reads each)
assert udp.ObjectRecord._fields == (
    'obj_id', 'obj_type', 'pos_x', 'pos_y', 'pos_z', 'heading', 'size_x', 'size_y', 'size_z', 'overhang',
    'wheelbase', 'rear_overhang', 'vel_x', 'vel_y', 'vel_z', 'acc_x', 'acc_y', 'acc_z', 'link_id')


def object_list(w, stamp, frame_id, new=_new, Header=Header, ObjectStatus=ObjectStatus, Vector3=Vector3,
                ObjectStatusList=ObjectStatusList):
    m = new(ObjectStatusList)
    m.header = h = new(Header)
    h.seq = 0
    h.stamp = stamp
    h.frame_id = frame_id
    npcs, peds, obst = [], [], []
    for r in w.objects:
        # r[:] is a plain tuple: unpacking it takes the fast path, a namedtuple's does not
        (obj_id, t, px, py, pz, heading, sx, sy, sz, _, _, _, vx, vy, vz, ax, ay, az, _) = r[:]
        if t == 1:
            append = npcs.append
        elif t == 0:
            append = peds.append
        elif t == 2:
            append = obst.append
        else:
            continue    # type -1 (the ego itself) and unknown types have no list
        o = new(ObjectStatus)
        o.unique_id = obj_id
        o.type = t
        o.name = ''
        o.heading = heading
        o.velocity = v = new(Vector3)
        v.x, v.y, v.z = vx, vy, vz
        o.acceleration = v = new(Vector3)
        v.x, v.y, v.z = ax, ay, az
        o.size = v = new(Vector3)
        v.x, v.y, v.z = sx, sy, sz
        o.position = v = new(Vector3)
        v.x, v.y, v.z = px, py, pz
        append(o)
    m.npc_list, m.pedestrian_list, m.obstacle_list = npcs, peds, obst
    m.num_of_npcs, m.num_of_pedestrian, m.num_of_obstacle = len(npcs), len(peds), len(obst)
    return m


def collision(w, stamp, frame_id, new=_new, Header=Header, ObjectStatus=ObjectStatus, Vector3=Vector3):
    m = new(CollisionData)
    m.header = h = new(Header)
    h.seq = 0
    h.stamp = stamp
    h.frame_id = frame_id
    records = w.records
    if records:
        first = records[0]
        m.global_offset_x, m.global_offset_y, m.global_offset_z = (
            first.global_offset_x, first.global_offset_y, first.global_offset_z)
    else:
        m.global_offset_x = m.global_offset_y = m.global_offset_z = 0.
    objects = []
    for r in records:
        o = new(ObjectStatus)
        o.unique_id, o.type = r.obj_id, r.obj_type
        o.name = ''
        o.heading = 0.
        o.velocity = v = new(Vector3)
        v.x = v.y = v.z = 0.
        o.acceleration = v = new(Vector3)
        v.x = v.y = v.z = 0.
        o.size = v = new(Vector3)
        v.x = v.y = v.z = 0.
        o.position = v = new(Vector3)
        v.x, v.y, v.z = r.pos_x, r.pos_y, r.pos_z
        objects.append(o)
    m.collision_object = objects
    return m


def traffic_light(w, stamp, frame_id, new=_new, Header=Header, GetTrafficLightStatus=GetTrafficLightStatus):
    m = new(GetTrafficLightStatus)
    m.header = h = new(Header)
    h.seq = 0
    h.stamp = stamp
    h.frame_id = frame_id
    m.trafficLightIndex = w.traffic_light_index
    m.trafficLightType = w.traffic_light_type
    m.trafficLightStatus = w.traffic_light_status
    return m


def intersection(w, stamp, frame_id, new=_new, Header=Header, IntersectionStatus=IntersectionStatus):
    m = new(IntersectionStatus)
    m.header = h = new(Header)
    h.seq = 0
    h.stamp = stamp
    h.frame_id = frame_id
    m.intersection_index = w.intersection_index
    m.intersection_status = w.intersection_status
    m.intersection_status_time = w.intersection_status_time
    return m


def npc_collision(w, stamp, frame_id, new=_new, Header=Header, VehicleCollision=VehicleCollision,
                  _object=_object):
    m = new(VehicleCollisionData)
    m.header = h = new(Header)
    h.seq = 0
    h.stamp = stamp
    h.frame_id = frame_id
    collisions = []
    for pair in w.pairs:
        vc = new(VehicleCollision)
        vc.crashed_vehicles = [_object(r) for r in pair if r is not None]
        collisions.append(vc)
    m.collisions = collisions
    return m


_SIM_PROC_PAUSE = int(SimProc.PAUSE)
_SIM_PROC_PLAY = int(SimProc.PLAY)


def sim_proc_status(w, stamp, last_command_time, new=_new, Header=Header):
    m = new(MoraiSimProcStatus)
    m.header = h = new(Header)
    h.seq = 0
    h.stamp = stamp
    h.frame_id = ''
    m.latest_command_time = last_command_time
    result = w.result
    m.command_result = 0 if result == 0 else (0x01 if result == 0x01 else 0x10)
    m.current_mode = 0x01
    if w.platform == _PLATFORM_SIMULATOR and w.status & 0x0FFF == _STATUS_PAUSE:
        m.current_status = _SIM_PROC_PAUSE
    elif w.platform == _PLATFORM_SIMULATOR and w.status & 0x0FFF == _STATUS_PLAYING:
        m.current_status = _SIM_PROC_PLAY
    else:
        m.current_status = 0
    return m


_STATUS_FIX = NavSatStatus.STATUS_FIX
_STATUS_NO_FIX = NavSatStatus.STATUS_NO_FIX
_SERVICE_GPS = NavSatStatus.SERVICE_GPS
_COVARIANCE_TYPE_UNKNOWN = NavSatFix.COVARIANCE_TYPE_UNKNOWN


def gps_fix(w, altitude=None):
    """(latitude, longitude, altitude, fix quality) of an NMEA sentence with a position, else None.

    ``altitude`` is used when the sentence has none (RMC): the last GGA's (0.0 before any).
    The fix quality is GGA's, else 1 for an RMC with status 'A' and 0 otherwise."""
    lat, lon = w.latitude, w.longitude
    if lat is None or lon is None:
        return None
    alt = w.altitude
    if alt is None:
        alt = altitude if altitude is not None else 0.0
    fix = w.fix_quality
    if fix is None:
        fix = 1 if w.status == 'A' else 0
    return lat, lon, alt, fix


def gps(w, stamp, frame_id, east_offset=0.0, north_offset=0.0, altitude=None, new=_new, Header=Header):
    """GPSMessage and NavSatFix from an NMEA sentence with a position, else (None, None).

    ``altitude`` is used when the sentence has none (RMC): the last GGA's.
    Both messages share one Header object.
    """
    p = gps_fix(w, altitude)
    if p is None:
        return None, None
    lat, lon, alt, fix = p
    g = new(GPSMessage)
    g.header = h = new(Header)
    h.seq = 0
    h.stamp = stamp
    h.frame_id = frame_id
    g.latitude, g.longitude, g.altitude = lat, lon, alt
    g.eastOffset, g.northOffset = east_offset, north_offset
    g.status = fix
    st = new(NavSatStatus)
    st.status = _STATUS_FIX if fix > 0 else _STATUS_NO_FIX
    st.service = _SERVICE_GPS
    n = new(NavSatFix)
    n.header = h
    n.status = st
    n.latitude, n.longitude, n.altitude = lat, lon, alt
    n.position_covariance = [0.] * 9
    n.position_covariance_type = _COVARIANCE_TYPE_UNKNOWN
    return g, n


def imu(w, stamp, frame_id, new=_new, Header=Header, Quaternion=Quaternion, Vector3=Vector3):
    m = new(Imu)
    m.header = h = new(Header)
    h.seq = 0
    h.stamp = stamp
    h.frame_id = frame_id
    m.orientation = q = new(Quaternion)
    q.x, q.y, q.z, q.w = w.ori_x, w.ori_y, w.ori_z, w.ori_w
    m.orientation_covariance = [0.] * 9
    m.angular_velocity = v = new(Vector3)
    v.x, v.y, v.z = w.ang_vel_x, w.ang_vel_y, w.ang_vel_z
    m.angular_velocity_covariance = [0.] * 9
    m.linear_acceleration = v = new(Vector3)
    v.x, v.y, v.z = w.lin_acc_x, w.lin_acc_y, w.lin_acc_z
    m.linear_acceleration_covariance = [0.] * 9
    return m


# --------------------------------------------------------------------------
# simulator -> ROS, for a publisher: the same message objects filled again
# --------------------------------------------------------------------------
# rospy serializes a message inside publish(); afterwards nothing holds it.  A
# stream whose messages are only published can therefore fill one message (and
# its ObjectStatus and Vector3 objects, as many as the largest packet so far
# needed) again for every packet, as the rospy floor of the benchmark republishes
# one message: no allocation, no deallocation, and the same memory serialized.
# reusing(name) gives such a converter for the converter ``name`` above; each
# call returns the same message, equal slot by slot and serialized to what the
# converter returns (bench/check_convert.py, test_convert_fast).  Not for ego
# status: the bridge keeps its latest message for the sync service.

def _zero_vector3(new=_new, Vector3=Vector3):
    v = new(Vector3)
    v.x = v.y = v.z = 0.
    return v


def _empty_object():
    o = _new(ObjectStatus)
    o.unique_id = o.type = 0
    o.name = ''
    o.heading = 0.
    o.velocity, o.acceleration, o.size, o.position = (_zero_vector3(), _zero_vector3(), _zero_vector3(),
                                                      _zero_vector3())
    return o


def _reused_header(m, new=_new, Header=Header):
    m.header = h = new(Header)
    h.seq, h.stamp, h.frame_id = 0, None, ''
    return h


def _reusing_object_list():
    m = _new(ObjectStatusList)
    pool = []       # (ObjectStatus, its velocity, acceleration, size, position)

    def object_list(w, stamp, frame_id, m=m, h=_reused_header(m), pool=pool, grow=pool.append):
        h.seq = 0
        h.stamp = stamp
        h.frame_id = frame_id
        npcs, peds, obst = [], [], []
        i, n = 0, len(pool)
        for r in w.objects:
            # r[:] is a plain tuple: unpacking it takes the fast path, a namedtuple's does not
            (obj_id, t, px, py, pz, heading, sx, sy, sz, _, _, _, vx, vy, vz, ax, ay, az, _) = r[:]
            if t == 1:
                append = npcs.append
            elif t == 0:
                append = peds.append
            elif t == 2:
                append = obst.append
            else:
                continue    # type -1 (the ego itself) and unknown types have no list
            if i < n:
                o, vel, acc, size, pos = pool[i]
            else:
                o = _empty_object()
                vel, acc, size, pos = o.velocity, o.acceleration, o.size, o.position
                grow((o, vel, acc, size, pos))
            i += 1
            o.unique_id = obj_id
            o.type = t
            o.name = ''
            o.heading = heading
            vel.x, vel.y, vel.z = vx, vy, vz
            acc.x, acc.y, acc.z = ax, ay, az
            size.x, size.y, size.z = sx, sy, sz
            pos.x, pos.y, pos.z = px, py, pz
            append(o)
        m.npc_list, m.pedestrian_list, m.obstacle_list = npcs, peds, obst
        m.num_of_npcs, m.num_of_pedestrian, m.num_of_obstacle = len(npcs), len(peds), len(obst)
        return m
    return object_list


def _reusing_collision():
    m = _new(CollisionData)
    pool = []

    def collision(w, stamp, frame_id, m=m, h=_reused_header(m), pool=pool, grow=pool.append):
        h.seq = 0
        h.stamp = stamp
        h.frame_id = frame_id
        records = w.records
        if records:
            first = records[0]
            m.global_offset_x, m.global_offset_y, m.global_offset_z = (
                first.global_offset_x, first.global_offset_y, first.global_offset_z)
        else:
            m.global_offset_x = m.global_offset_y = m.global_offset_z = 0.
        while len(pool) < len(records):
            grow(_empty_object())
        objects = pool[:len(records)]
        for o, r in zip(objects, records):
            o.unique_id, o.type = r.obj_id, r.obj_type
            o.name = ''
            o.heading = 0.
            for v in (o.velocity, o.acceleration, o.size):
                v.x = v.y = v.z = 0.
            v = o.position
            v.x, v.y, v.z = r.pos_x, r.pos_y, r.pos_z
        m.collision_object = objects
        return m
    return collision


assert udp.NpcCollisionRecord._fields == (
    'obj_type', 'obj_id', 'pos_x', 'pos_y', 'pos_z', 'heading', 'size_x', 'size_y', 'size_z', 'vel_x', 'vel_y',
    'vel_z', 'acc_x', 'acc_y', 'acc_z')


def _reusing_npc_collision():
    m = _new(VehicleCollisionData)
    pairs = []
    pool = []       # (ObjectStatus, its velocity, acceleration, size, position)

    def npc_collision(w, stamp, frame_id, m=m, h=_reused_header(m), pool=pool):
        h.seq = 0
        h.stamp = stamp
        h.frame_id = frame_id
        collisions = []
        k = 0
        for i, pair in enumerate(w.pairs):
            if i == len(pairs):
                pairs.append(_new(VehicleCollision))
            vc = pairs[i]
            crashed = []
            for r in pair:
                if r is None:
                    continue
                if k == len(pool):
                    o = _empty_object()
                    pool.append((o, o.velocity, o.acceleration, o.size, o.position))
                o, vel, acc, size, pos = pool[k]
                k += 1
                (t, obj_id, px, py, pz, heading, sx, sy, sz, vx, vy, vz, ax, ay, az) = r[:]
                o.unique_id = obj_id
                o.type = t
                o.name = ''
                o.heading = heading
                vel.x, vel.y, vel.z = vx, vy, vz
                acc.x, acc.y, acc.z = ax, ay, az
                size.x, size.y, size.z = sx, sy, sz
                pos.x, pos.y, pos.z = px, py, pz
                crashed.append(o)
            vc.crashed_vehicles = crashed
            collisions.append(vc)
        m.collisions = collisions
        return m
    return npc_collision


def _reusing_traffic_light():
    m = _new(GetTrafficLightStatus)

    def traffic_light(w, stamp, frame_id, m=m, h=_reused_header(m)):
        h.seq = 0
        h.stamp = stamp
        h.frame_id = frame_id
        m.trafficLightIndex = w.traffic_light_index
        m.trafficLightType = w.traffic_light_type
        m.trafficLightStatus = w.traffic_light_status
        return m
    return traffic_light


def _reusing_intersection():
    m = _new(IntersectionStatus)

    def intersection(w, stamp, frame_id, m=m, h=_reused_header(m)):
        h.seq = 0
        h.stamp = stamp
        h.frame_id = frame_id
        m.intersection_index = w.intersection_index
        m.intersection_status = w.intersection_status
        m.intersection_status_time = w.intersection_status_time
        return m
    return intersection


def _reusing_sim_proc_status():
    m = _new(MoraiSimProcStatus)

    def sim_proc_status(w, stamp, last_command_time, m=m, h=_reused_header(m)):
        h.seq = 0
        h.stamp = stamp
        h.frame_id = ''
        m.latest_command_time = last_command_time
        result = w.result
        m.command_result = 0 if result == 0 else (0x01 if result == 0x01 else 0x10)
        m.current_mode = 0x01
        if w.platform == _PLATFORM_SIMULATOR and w.status & 0x0FFF == _STATUS_PAUSE:
            m.current_status = _SIM_PROC_PAUSE
        elif w.platform == _PLATFORM_SIMULATOR and w.status & 0x0FFF == _STATUS_PLAYING:
            m.current_status = _SIM_PROC_PLAY
        else:
            m.current_status = 0
        return m
    return sim_proc_status


def _reusing_gps():
    g, n = _new(GPSMessage), _new(NavSatFix)
    n.header = _reused_header(g)
    n.status = _new(NavSatStatus)

    def gps(w, stamp, frame_id, east_offset=0.0, north_offset=0.0, altitude=None, g=g, n=n, h=g.header,
            st=n.status):
        p = gps_fix(w, altitude)
        if p is None:
            return None, None
        lat, lon, alt, fix = p
        h.seq = 0
        h.stamp = stamp
        h.frame_id = frame_id
        g.latitude, g.longitude, g.altitude = lat, lon, alt
        g.eastOffset, g.northOffset = east_offset, north_offset
        g.status = fix
        st.status = _STATUS_FIX if fix > 0 else _STATUS_NO_FIX
        st.service = _SERVICE_GPS
        n.latitude, n.longitude, n.altitude = lat, lon, alt
        n.position_covariance = [0.] * 9
        n.position_covariance_type = _COVARIANCE_TYPE_UNKNOWN
        return g, n
    return gps


def _reusing_imu():
    m = _new(Imu)
    m.orientation = _new(Quaternion)
    m.angular_velocity, m.linear_acceleration = _zero_vector3(), _zero_vector3()

    def imu(w, stamp, frame_id, m=m, h=_reused_header(m), q=m.orientation, av=m.angular_velocity,
            la=m.linear_acceleration):
        h.seq = 0
        h.stamp = stamp
        h.frame_id = frame_id
        q.x, q.y, q.z, q.w = w.ori_x, w.ori_y, w.ori_z, w.ori_w
        m.orientation_covariance = [0.] * 9
        av.x, av.y, av.z = w.ang_vel_x, w.ang_vel_y, w.ang_vel_z
        m.angular_velocity_covariance = [0.] * 9
        la.x, la.y, la.z = w.lin_acc_x, w.lin_acc_y, w.lin_acc_z
        m.linear_acceleration_covariance = [0.] * 9
        return m
    return imu


_REUSING = {'object_list': _reusing_object_list, 'collision': _reusing_collision,
            'npc_collision': _reusing_npc_collision, 'traffic_light': _reusing_traffic_light,
            'intersection': _reusing_intersection, 'sim_proc_status': _reusing_sim_proc_status,
            'gps': _reusing_gps, 'imu': _reusing_imu}


def reusing(name):
    """A converter like the function ``name`` of this module that fills the same message
    objects on every call (see above); for a publisher only."""
    return _REUSING[name]()


def odometry(w, stamp, frame_id, child_frame_id):
    """nav_msgs/Odometry (SI, ENU) and the matching TF from an ego status.

    Pose: map position, orientation from roll/pitch/yaw.  Twist in the
    child (body) frame: forward speed = signed_vel, yaw rate etc. from the
    angular velocity (deg/s -> rad/s) when the variant carries it.
    """
    q = quaternion_from_rpy(w.roll * DEG, w.pitch * DEG, w.yaw * DEG)
    o = Odometry()
    o.header.stamp = stamp
    o.header.frame_id = frame_id
    o.child_frame_id = child_frame_id
    p = o.pose.pose
    p.position.x, p.position.y, p.position.z = w.pos_x, w.pos_y, w.pos_z
    p.orientation = Quaternion(*q)
    o.twist.twist.linear.x = w.signed_vel * KMH
    if w.ang_vel_z is not None:
        o.twist.twist.angular = Vector3(w.ang_vel_x * DEG, w.ang_vel_y * DEG, w.ang_vel_z * DEG)
    t = TransformStamped()
    t.header = o.header
    t.child_frame_id = child_frame_id
    t.transform.translation = Vector3(w.pos_x, w.pos_y, w.pos_z)
    t.transform.rotation = p.orientation
    return o, t


# --------------------------------------------------------------------------
# ROS -> simulator
# --------------------------------------------------------------------------

def ctrl_cmd(m, gear, ctrl_mode, max_steering_deg, steering_sign, data_length=23):
    """EgoCtrlCmd from a CtrlCmd: steering rad -> deg / max -> clamp [-1, 1] x sign."""
    _finite('CtrlCmd', accel=m.accel, brake=m.brake, steering=m.steering, velocity=m.velocity,
            acceleration=m.acceleration)
    _int_range('CtrlCmd', 'longlCmdType', m.longlCmdType, 1, 3)
    steer = steering_sign * math.degrees(m.steering) / max_steering_deg
    steer = -1.0 if steer < -1.0 else 1.0 if steer > 1.0 else steer
    return udp.make(udp.EgoCtrlCmd, data_length=data_length, ctrl_mode=ctrl_mode, gear=gear,
                    cmd_type=m.longlCmdType, velocity=m.velocity, acceleration=m.acceleration,
                    accel=min(1.0, max(0.0, m.accel)), brake=min(1.0, max(0.0, m.brake)), steer=steer,
                    rear_steer=0.0 if data_length == 27 else None)


def brake_cmd(gear, ctrl_mode, data_length=23):
    """The safe command: pedal mode, no throttle, full brake."""
    return udp.make(udp.EgoCtrlCmd, data_length=data_length, ctrl_mode=ctrl_mode, gear=gear, cmd_type=1,
                    accel=0.0, brake=1.0, steer=0.0, rear_steer=0.0 if data_length == 27 else None)


def set_traffic_light(m, data_length=14):
    _int_range('SetTrafficLight', 'trafficLightStatus', m.trafficLightStatus, -32768, 32767)
    return udp.make(udp.SetTrafficLight, data_length=data_length,
                    traffic_light_index=_text('SetTrafficLight', 'trafficLightIndex', m.trafficLightIndex, 12),
                    traffic_light_status=m.trafficLightStatus, flag=True if data_length == 15 else None)


def set_intersection(m):
    _finite('IntersectionControl', intersection_status_time=m.intersection_status_time)
    return udp.make(udp.SetIntersectionStatus,
                    intersection_index=_int_range('IntersectionControl', 'intersection_index',
                                                  m.intersection_index, -32768, 32767),
                    intersection_status=m.intersection_status,
                    intersection_status_time=m.intersection_status_time)


def scenario_load(m):
    """ScenarioLoad (ROS field order differs from the packet's: mapped by name)."""
    name = m.file_name[:-5] if m.file_name.lower().endswith('.json') else m.file_name
    return udp.make(udp.ScenarioLoad, file_name=_text('ScenarioLoad', 'file_name', name, 30),
                    delete_all=m.delete_all, load_network=m.load_network_connection_data,
                    load_ego=m.load_ego_vehicle_data, load_npc=m.load_surrounding_vehicle_data,
                    load_pedestrian=m.load_pedestrian_data, load_object=m.load_obstacle_data,
                    set_pause=m.set_pause)


def save_sensor_data(m):
    return udp.make(udp.SaveSensorData, is_custom_file_name=m.is_custom_file_name,
                    custom_file_name=_text('SaveSensorData', 'custom_file_name', m.custom_file_name, 30),
                    file_dir=_text('SaveSensorData', 'file_dir', m.file_dir, 60))


def sensor_control(m):
    """One SensorControl packet per array entry; angles rad -> deg."""
    n = len(m.sensor_index)
    arrays = ('pose_x', 'pose_y', 'pose_z', 'roll', 'pitch', 'yaw')
    for a in arrays:
        if len(getattr(m, a)) != n:
            raise CommandError('SensorPosControl.%s has %d entries, sensor_index has %d: refused'
                               % (a, len(getattr(m, a)), n))
    out = []
    for k in range(n):
        v = dict((a, getattr(m, a)[k]) for a in arrays)
        _finite('SensorPosControl[%d]' % k, **v)
        out.append(udp.make(udp.SensorControl,
                            sensor_index=_int_range('SensorPosControl', 'sensor_index', m.sensor_index[k],
                                                    -32768, 32767),
                            pos_x=v['pose_x'], pos_y=v['pose_y'], pos_z=v['pose_z'],
                            roll=math.degrees(v['roll']), pitch=math.degrees(v['pitch']),
                            yaw=math.degrees(v['yaw'])))
    return out


def lamps(m):
    return udp.make(udp.LampControl,
                    turn_signal=_int_range('Lamps', 'turnSignal', m.turnSignal, 0, 2),
                    emergency_signal=_int_range('Lamps', 'emergencySignal', m.emergencySignal, 0, 1))


def ego_ghost(m, steer_sign=1):
    """EgoGhostCmd of a GhostMessage; steer_angle = steer_sign x steering_angle (deg).
    The bridge passes ``~ghost_steering_sign`` (default WIRE_STEERING_SIGN)."""
    v = dict(x=m.position.x, y=m.position.y, z=m.position.z, roll=m.rotation.x, pitch=m.rotation.y,
             yaw=m.rotation.z, velocity=m.velocity, steering_angle=m.steering_angle)
    _finite('GhostMessage', **v)
    return udp.make(udp.EgoGhostCmd, position_x=v['x'], position_y=v['y'], position_z=v['z'],
                    rotation_x=v['roll'], rotation_y=v['pitch'], rotation_z=v['yaw'],
                    speed=m.velocity, steer_angle=steer_sign * m.steering_angle)


def _multi_ego_ctrl_mode(v):
    """Wire ctrl_mode of a MultiEgoSetting.ctrl_mode: the ROS manual's 1 keyboard / 16 automode,
    and the wire's own 2 (automatic)."""
    wire = MULTI_EGO_TO_WIRE_CTRL_MODE.get(v)
    if wire is None:
        raise CommandError('MultiEgoSetting.ctrl_mode = %r: expected 1 (keyboard) or 16 (automode; 2 is also '
                           'taken as automatic): refused' % (v,))
    return int(wire)


def multi_ego(m):
    """MultiEgoSetting packet; ctrl_mode per ego: 1 keyboard, 16 (or 2) automatic -> wire 1 / 2."""
    n = m.number_of_ego_vehicle
    _int_range('MultiEgoSetting', 'number_of_ego_vehicle', n, 0, 20)
    arrays = ('ego_index', 'global_position_x', 'global_position_y', 'global_position_z', 'global_roll',
              'global_pitch', 'global_yaw', 'velocity', 'gear', 'ctrl_mode')
    for a in arrays:
        if len(getattr(m, a)) < n:
            raise CommandError('MultiEgoSetting.%s has %d entries for %d vehicles: refused'
                               % (a, len(getattr(m, a)), n))
    egos = []
    for k in range(n):
        v = dict((a, getattr(m, a)[k]) for a in arrays)
        _finite('MultiEgoSetting[%d]' % k, **dict((a, v[a]) for a in arrays[1:8]))
        egos.append(udp.MultiEgoRecord(
            _int_range('MultiEgoSetting', 'ego_index', v['ego_index'], -32768, 32767),
            v['global_position_x'], v['global_position_y'], v['global_position_z'],
            v['global_roll'], v['global_pitch'], v['global_yaw'], v['velocity'],
            _int_range('MultiEgoSetting', 'gear', v['gear'], 0, 5),
            _multi_ego_ctrl_mode(v['ctrl_mode'])))
    return udp.make(udp.MultiEgoSetting, num_of_ego=n, camera_index=m.camera_index, egos=tuple(egos))


def npc_ghost(m):
    if len(m.npc_list) > 20:
        raise CommandError('NpcGhostCmd has %d NPCs, the packet holds 20: refused' % len(m.npc_list))
    recs = []
    for k, n in enumerate(m.npc_list):
        _finite('NpcGhostCmd.npc_list[%d]' % k, x=n.position.x, y=n.position.y, z=n.position.z,
                roll=n.rpy.x, pitch=n.rpy.y, yaw=n.rpy.z)
        recs.append(udp.NpcGhostRecord(
            _int_range('NpcGhostInfo', 'unique_id', n.unique_id, -128, 127),
            _text('NpcGhostInfo', 'name', n.name, 25),
            n.position.x, n.position.y, n.position.z, n.rpy.x, n.rpy.y, n.rpy.z))
    return udp.make(udp.NpcGhostCmd, npcs=tuple(recs))


def gv_direct(m):
    _finite('GVDirectCmd', throttle=m.throttle, skidSteering=m.skidSteering)
    for k, a in enumerate(m.steerAngle):
        _finite('GVDirectCmd', **{'steerAngle[%d]' % k: a})
    clip = lambda v: -1.0 if v < -1.0 else 1.0 if v > 1.0 else v  # noqa: E731
    return udp.make(udp.GVDirectCmd, steer_type=_int_range('GVDirectCmd', 'steerType', m.steerType, 0, 2 ** 32 - 1),
                    throttle=clip(m.throttle), skid_steering=clip(m.skidSteering),
                    steer_angle=tuple(clip(a) for a in m.steerAngle))


def gv_state(m):
    _finite('GVStateCmd', targetLongitudinalVelocity=m.targetLongitudinalVelocity,
            targetAngularVelocity=m.targetAngularVelocity)
    return udp.make(udp.GVStateCmd, target_longitudinal_velocity=m.targetLongitudinalVelocity,
                    target_angular_velocity=m.targetAngularVelocity)


def sim_control(command, option=''):
    return udp.make(udp.SimControl, platform=_PLATFORM_SIMULATOR, command=int(command), option=option)


def sim_proc_handle(h):
    """SimControl for a MoraiSimProcHandle, or CommandError for what UDP cannot do."""
    if h.sim_process_status == SimProc.PLAY:
        return sim_control(SimCommand.PLAY)
    if h.sim_process_status == SimProc.PAUSE:
        return sim_control(SimCommand.PAUSE)
    raise CommandError('sim_process_status 0x%02x (replay control) has no UDP equivalent; only 0x01 play '
                       'and 0x10 pause can be sent' % h.sim_process_status)


# --------------------------------------------------------------------------
# information services
# --------------------------------------------------------------------------

def tl_info(idx, seen, frame_id):
    """MoraiTLInfo for light ``idx`` from ``seen`` = (status, type, receive stamp) of the last
    Get TrafficLight Status packet with that id, or None when the id never came: then the
    header stamp is zero (no data) and status 0."""
    m = MoraiTLInfo()
    m.idx = idx
    if seen is not None:
        m.status = seen[0]
        m.header.stamp = seen[2]
        m.header.frame_id = frame_id
    return m


def vehicle_spec(profile, max_steering_deg, status=None):
    """VehicleSpec: size, wheelbase and overhangs from the latest ego status when there is one
    (the simulator's own figures), else from the profile (unknown = 0); max steering from
    ``max_steering_deg`` (the profile's or the parameter overriding it)."""
    m = VehicleSpec()
    if status is not None:
        m.size.x, m.size.y, m.size.z = status.size_x, status.size_y, status.size_z
        m.wheel_base, m.overhang, m.rear_overhang = status.wheelbase, status.overhang, status.rear_overhang
    else:
        z = lambda v: 0.0 if v is None else v  # noqa: E731
        m.size.x, m.size.y, m.size.z = z(profile.length_m), z(profile.width_m), z(profile.height_m)
        m.wheel_base = profile.wheelbase_m
        m.overhang, m.rear_overhang = z(profile.front_overhang_m), z(profile.rear_overhang_m)
    m.max_steering = max_steering_deg
    return m


def map_spec(plane_coordinate_system, utm_zone, offset_x, offset_y, offset_z):
    """MapSpec of a map in UTM zone ``utm_zone`` (north, WGS84) whose origin is at the
    given UTM coordinates: the projection constants follow from the zone."""
    m = MapSpec()
    m.plane_coordinate_system = plane_coordinate_system
    m.utm_num = utm_zone
    m.utm_offset = _vector3(offset_x, offset_y, offset_z)
    m.ellipse = 'WGS84'
    m.central_latitude = 0.0
    m.central_meridian = utm_central_meridian(utm_zone)
    m.scale_factor = UTM_SCALE_FACTOR
    m.false_easting = UTM_FALSE_EASTING
    m.false_northing = UTM_FALSE_NORTHING_NORTH
    return m
