"""The fast path of simulator -> ROS: messages that serialize themselves, lazily, straight
from the decoded packet.

For the streams whose messages are only published, the bridge hands
``rospy.Publisher.publish`` one of the small objects below instead of a genpy message
(``~wire_serialize``, default true).  rospy accepts any object whose ``_md5sum`` is the
publisher's type's; it serializes only when the topic has subscribers
(``serialize_message``: it sets ``header.seq``, then calls ``serialize(buff)``), so without
subscribers nothing is built beyond this object.

Each object keeps the header fields (``seq``, ``stamp``, ``frame_id``; ``header`` is the
object itself) and the decoded packet with the conversion parameters, and its ``serialize``
writes exactly the bytes genpy's ``serialize`` writes for the message the same-named
converter of :mod:`.sim_to_ros` (the readable reference, where each stream's meaning is
written) builds from the same arguments; test/unit/test_lazy_messages.py compares them over
samples, the real captures and randomised packets.  The functions here have the converters'
signatures and return a new object per call (a latched publisher keeps the object it was
given).

genpy's layout: little-endian, header = uint32 seq, uint32 secs, uint32 nsecs, string
frame_id (uint32 byte length + UTF-8); an ObjectStatus = int32 unique_id, int32 type, string
name (always '' here: uint32 0), 13 float64; arrays of messages = uint32 count + the
elements; fixed arrays (covariances) without count.
"""
import struct

from sensor_msgs.msg import Imu, NavSatFix, NavSatStatus

from morai_msgs.msg import (CollisionData, EgoVehicleStatus, GetTrafficLightStatus, GPSMessage,
                            IntersectionStatus, MoraiSimProcStatus, ObjectStatusList, VehicleCollisionData)

from morai_bridge.ros import sim_to_ros
from morai_bridge.wire.units import KMH_TO_MPS as KMH

_new = object.__new__
_STATUS_FIX = NavSatStatus.STATUS_FIX
_STATUS_NO_FIX = NavSatStatus.STATUS_NO_FIX
_SERVICE_GPS = NavSatStatus.SERVICE_GPS
_COVARIANCE_TYPE_UNKNOWN = NavSatFix.COVARIANCE_TYPE_UNKNOWN

_I = struct.Struct('<I')
_3i = struct.Struct('<3i')
# one ObjectStatus: unique_id, type, len(name) = 0, heading, velocity, acceleration, size, position
_OBJECT = struct.Struct('<2iI13d')
# CollisionData's objects: only id, type and position are set (heading .. size are 10 zero doubles)
_COLLISION_OBJECT = struct.Struct('<2iI80x3d')
_HEAD = '<3II%ds'
_CACHE_LIMIT = 64


def _structs(body):
    """frame_id -> (Struct of header + body, the frame id's UTF-8 bytes), cached per frame id."""
    cache = {}

    def get(frame_id):
        try:
            return cache[frame_id]
        except KeyError:
            b = frame_id.encode('utf-8')
            v = (struct.Struct(_HEAD % len(b) + body), b)
            if len(cache) < _CACHE_LIMIT:
                cache[frame_id] = v
            return v
    return get


def _maker(cls):
    """The converter-signature function ``(w, stamp, frame_id) -> a new cls`` of a stream whose
    message needs nothing but the wire tuple and the header."""
    def make(w, stamp, frame_id, new=_new, cls=cls):
        m = new(cls)
        m.seq = 0
        m.stamp = stamp
        m.frame_id = frame_id
        m.w = w
        return m
    make.__name__ = make.__qualname__ = cls.__name__
    return make


class LazyMessage(object):
    """Base: the header fields and ``header`` (the object itself, what rospy's
    serialize_message sets seq on).  A subclass names its genpy type and the struct format
    of its fixed body after the header (``class X(LazyMessage, ros=Type, body='...')``),
    which gives it the type's identity (``_type``, ``_md5sum``, ``_full_text``) and ``_get``
    (frame_id -> header + body Struct); it writes ``serialize``."""
    __slots__ = ('seq', 'stamp', 'frame_id')
    _has_header = True

    def __init_subclass__(cls, ros, body, **kw):
        super().__init_subclass__(**kw)
        cls._type, cls._md5sum, cls._full_text = ros._type, ros._md5sum, ros._full_text
        cls._get = staticmethod(_structs(body))

    @property
    def header(self):
        return self

    def serialized(self):
        """The serialized bytes (for tests and checks)."""
        import io
        b = io.BytesIO()
        self.serialize(b)
        return b.getvalue()


# ---------------------------------------------------------------- ego status

class LazyEgoStatus(LazyMessage, ros=EgoVehicleStatus, body='i10d3f'):
    __slots__ = ('w', 'steer_sign')

    def serialize(self, buff):
        w = self.w
        s, fid = self._get(self.frame_id)
        t = self.stamp
        buff.write(s.pack(self.seq, t.secs, t.nsecs, len(fid), fid, 0, w.acc_x, w.acc_y, w.acc_z,
                          w.pos_x, w.pos_y, w.pos_z, w.vel_x * KMH, w.vel_y * KMH, w.vel_z * KMH,
                          w.yaw, w.accel, w.brake, self.steer_sign * w.steer))

    def message(self):
        """The genpy EgoVehicleStatus (sim_to_ros.ego_status), with this object's header seq."""
        m = sim_to_ros.ego_status(self.w, self.stamp, self.frame_id, self.steer_sign)
        m.header.seq = self.seq
        return m


def ego_status(w, stamp, frame_id, steer_sign=1, new=_new, cls=LazyEgoStatus):
    m = new(cls)
    m.seq = 0
    m.stamp = stamp
    m.frame_id = frame_id
    m.w = w
    m.steer_sign = steer_sign
    return m


# ---------------------------------------------------------------- object info

class LazyObjectList(LazyMessage, ros=ObjectStatusList, body=''):
    __slots__ = ('w',)

    def serialize(self, buff, pack=_OBJECT.pack, I=_I.pack, counts=_3i.pack):
        npcs, peds, obst = [], [], []
        for r in self.w.objects:
            (obj_id, t, px, py, pz, heading, sx, sy, sz, _, _, _, vx, vy, vz, ax, ay, az, _) = r[:]
            if t == 1:
                npcs.append(pack(obj_id, t, 0, heading, vx, vy, vz, ax, ay, az, sx, sy, sz, px, py, pz))
            elif t == 0:
                peds.append(pack(obj_id, t, 0, heading, vx, vy, vz, ax, ay, az, sx, sy, sz, px, py, pz))
            elif t == 2:
                obst.append(pack(obj_id, t, 0, heading, vx, vy, vz, ax, ay, az, sx, sy, sz, px, py, pz))
        s, fid = self._get(self.frame_id)
        t = self.stamp
        nn, np_, no = len(npcs), len(peds), len(obst)
        buff.write(b''.join((s.pack(self.seq, t.secs, t.nsecs, len(fid), fid), counts(nn, np_, no),
                             I(nn), *npcs, I(np_), *peds, I(no), *obst)))


object_list = _maker(LazyObjectList)


# ---------------------------------------------------------------- collision

class LazyCollision(LazyMessage, ros=CollisionData, body='3dI'):
    __slots__ = ('w',)

    def serialize(self, buff, pack=_COLLISION_OBJECT.pack):
        records = [r for r in self.w.records if r[0] >= 0]    # obj_type -1: an empty slot
        if records:
            f = records[0]
            gx, gy, gz = f.global_offset_x, f.global_offset_y, f.global_offset_z
        else:
            gx = gy = gz = 0.
        s, fid = self._get(self.frame_id)
        t = self.stamp
        buff.write(b''.join((s.pack(self.seq, t.secs, t.nsecs, len(fid), fid, gx, gy, gz, len(records)),
                             *[pack(r.obj_id, r.obj_type, 0, r.pos_x, r.pos_y, r.pos_z) for r in records])))


collision = _maker(LazyCollision)


# ---------------------------------------------------------------- traffic light

class LazyTrafficLight(LazyMessage, ros=GetTrafficLightStatus, body=''):
    __slots__ = ('w',)

    def serialize(self, buff, I=_I.pack, tail=struct.Struct('<2h').pack):
        w = self.w
        s, fid = self._get(self.frame_id)
        t = self.stamp
        index = w.traffic_light_index.encode('utf-8')
        buff.write(b''.join((s.pack(self.seq, t.secs, t.nsecs, len(fid), fid), I(len(index)), index,
                             tail(w.traffic_light_type, w.traffic_light_status))))


traffic_light = _maker(LazyTrafficLight)


# ---------------------------------------------------------------- intersection

class LazyIntersection(LazyMessage, ros=IntersectionStatus, body='ihf'):
    __slots__ = ('w',)

    def serialize(self, buff):
        w = self.w
        s, fid = self._get(self.frame_id)
        t = self.stamp
        buff.write(s.pack(self.seq, t.secs, t.nsecs, len(fid), fid, w.intersection_index,
                          w.intersection_status, w.intersection_status_time))


intersection = _maker(LazyIntersection)


# ---------------------------------------------------------------- NPC vehicle collision

class LazyNpcCollision(LazyMessage, ros=VehicleCollisionData, body='I'):
    __slots__ = ('w',)

    def serialize(self, buff, pack=_OBJECT.pack, I=_I.pack):
        pairs = self.w.pairs
        s, fid = self._get(self.frame_id)
        t = self.stamp
        parts = [s.pack(self.seq, t.secs, t.nsecs, len(fid), fid, len(pairs))]
        add = parts.append
        for pair in pairs:
            crashed = [r for r in pair if r is not None]
            add(I(len(crashed)))
            for r in crashed:
                (typ, obj_id, px, py, pz, heading, sx, sy, sz, vx, vy, vz, ax, ay, az) = r[:]
                add(pack(obj_id, typ, 0, heading, vx, vy, vz, ax, ay, az, sx, sy, sz, px, py, pz))
        buff.write(b''.join(parts))


npc_collision = _maker(LazyNpcCollision)


# ---------------------------------------------------------------- simulator status

class LazySimProcStatus(LazyMessage, ros=MoraiSimProcStatus, body='2I3B'):
    __slots__ = ('w', 'latest_command_time')

    def serialize(self, buff):
        w = self.w
        s, fid = self._get(self.frame_id)
        t, c = self.stamp, self.latest_command_time
        buff.write(s.pack(self.seq, t.secs, t.nsecs, len(fid), fid, c.secs, c.nsecs,
                          sim_to_ros.sim_proc_result(w.result), 0x01,
                          sim_to_ros.sim_proc_state(w.platform, w.status)))


def sim_proc_status(w, stamp, last_command_time, new=_new, cls=LazySimProcStatus):
    m = new(cls)
    m.seq = 0
    m.stamp = stamp
    m.frame_id = ''
    m.w = w
    m.latest_command_time = last_command_time
    return m


# ---------------------------------------------------------------- GPS

class LazyGps(LazyMessage, ros=GPSMessage, body='5dh'):
    """GPSMessage; latitude .. status as sim_to_ros.gps resolves them."""
    __slots__ = ('latitude', 'longitude', 'altitude', 'east', 'north', 'fix')

    def serialize(self, buff):
        s, fid = self._get(self.frame_id)
        t = self.stamp
        buff.write(s.pack(self.seq, t.secs, t.nsecs, len(fid), fid, self.latitude, self.longitude,
                          self.altitude, self.east, self.north, self.fix))


class LazyNavSatFix(LazyMessage, ros=NavSatFix, body='bH3d72xB'):
    """sensor_msgs/NavSatFix of the same sentence (covariance unknown, all zero)."""
    __slots__ = ('latitude', 'longitude', 'altitude', 'fix')

    def serialize(self, buff):
        s, fid = self._get(self.frame_id)
        t = self.stamp
        buff.write(s.pack(self.seq, t.secs, t.nsecs, len(fid), fid,
                          _STATUS_FIX if self.fix > 0 else _STATUS_NO_FIX, _SERVICE_GPS,
                          self.latitude, self.longitude, self.altitude, _COVARIANCE_TYPE_UNKNOWN))


def gps(w, stamp, frame_id, east_offset=0.0, north_offset=0.0, altitude=None, new=_new):
    """(GPSMessage, NavSatFix) wire messages of an NMEA sentence with a position, else (None, None);
    ``altitude`` as in sim_to_ros.gps."""
    p = sim_to_ros.gps_fix(w, altitude)
    if p is None:
        return None, None
    lat, lon, alt, fix = p
    g = new(LazyGps)
    g.seq = 0
    g.stamp = stamp
    g.frame_id = frame_id
    g.latitude, g.longitude, g.altitude, g.east, g.north, g.fix = lat, lon, alt, east_offset, north_offset, fix
    n = new(LazyNavSatFix)
    n.seq = 0
    n.stamp = stamp
    n.frame_id = frame_id
    n.latitude, n.longitude, n.altitude, n.fix = lat, lon, alt, fix
    return g, n


# ---------------------------------------------------------------- IMU

# body: orientation, its covariance (9 zero doubles), angular velocity, covariance, linear acceleration, covariance
class LazyImu(LazyMessage, ros=Imu, body='4d72x3d72x3d72x'):
    __slots__ = ('w',)

    def serialize(self, buff):
        w = self.w
        s, fid = self._get(self.frame_id)
        t = self.stamp
        buff.write(s.pack(self.seq, t.secs, t.nsecs, len(fid), fid, w.ori_x, w.ori_y, w.ori_z, w.ori_w,
                          w.ang_vel_x, w.ang_vel_y, w.ang_vel_z, w.lin_acc_x, w.lin_acc_y, w.lin_acc_z))


imu = _maker(LazyImu)


# converter name (as in sim_to_ros) -> the lazy-message function with its signature
CONVERTERS = {'ego_status': ego_status, 'object_list': object_list, 'collision': collision,
              'traffic_light': traffic_light, 'intersection': intersection, 'npc_collision': npc_collision,
              'sim_proc_status': sim_proc_status, 'gps': gps, 'imu': imu}
