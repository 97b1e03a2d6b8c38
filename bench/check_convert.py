#!/usr/bin/env python3
"""Check that the fast sim -> ROS converters of udp_convert build the same messages as the
generated constructors do, and so do the ones that fill the same message again (udp_convert.reusing);
and that the wire messages (ros/wire_messages, what the bridge publishes with ~wire_serialize)
serialize to the same bytes as the converters' messages.

Usage: /usr/bin/python3 bench/check_convert.py   (after `source <(bash tools/dev.sh env)`; no master needed)

udp_convert builds its messages with object.__new__ and direct slot assignment
(docs/benchmarks.md).  The reference below is the straightforward version with
the generated constructors (what udp_convert did before); both run on the
benchmark's samples, every codec sample and test vector, and randomised
records, and must give messages equal slot by slot (same value types too) and
byte by byte when serialized.  Exit status 1 on the first difference.
"""
import io
import json
import math
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import genpy  # noqa: E402
import rospy  # noqa: E402
from geometry_msgs.msg import Quaternion, Vector3  # noqa: E402
from sensor_msgs.msg import Imu, NavSatFix, NavSatStatus  # noqa: E402

from morai_msgs.msg import (CollisionData, EgoVehicleStatus, GetTrafficLightStatus, GPSMessage,  # noqa: E402
                            IntersectionStatus, MoraiSimProcStatus, ObjectStatus, ObjectStatusList,
                            VehicleCollision, VehicleCollisionData)
from morai_bridge.ros import udp_convert as fast  # noqa: E402
from morai_bridge.ros import wire_messages as wm  # noqa: E402
from morai_bridge.wire import udp  # noqa: E402
from morai_bridge.wire.enums import Platform, SimProc, SimState  # noqa: E402

import bench_codec  # noqa: E402
import e2e_streams  # noqa: E402

KMH = fast.KMH


# ------------------------------------------------------------------ reference (generated constructors)

def ref_sim_stamp(sec, nsec):
    if sec < 0 or not 0 <= nsec < 1000000000:
        return None
    return rospy.Time(sec, nsec)


def ref_ego_status(w, stamp, frame_id):
    m = EgoVehicleStatus()
    m.header.stamp = stamp
    m.header.frame_id = frame_id
    m.acceleration = Vector3(w.acc_x, w.acc_y, w.acc_z)
    m.position = Vector3(w.pos_x, w.pos_y, w.pos_z)
    m.velocity = Vector3(w.vel_x * KMH, w.vel_y * KMH, w.vel_z * KMH)
    m.heading, m.accel, m.brake, m.wheel_angle = w.yaw, w.accel, w.brake, w.steer
    return m


def ref_object(r):
    return ObjectStatus(r.obj_id, r.obj_type, '', r.heading,
                        Vector3(r.vel_x, r.vel_y, r.vel_z), Vector3(r.acc_x, r.acc_y, r.acc_z),
                        Vector3(r.size_x, r.size_y, r.size_z), Vector3(r.pos_x, r.pos_y, r.pos_z))


def ref_object_list(w, stamp, frame_id):
    m = ObjectStatusList()
    m.header.stamp, m.header.frame_id = stamp, frame_id
    lists = {1: m.npc_list, 0: m.pedestrian_list, 2: m.obstacle_list}
    for r in w.objects:
        if r.obj_type in lists:
            lists[r.obj_type].append(ref_object(r))
    m.num_of_npcs, m.num_of_pedestrian, m.num_of_obstacle = (
        len(m.npc_list), len(m.pedestrian_list), len(m.obstacle_list))
    return m


def ref_collision(w, stamp, frame_id):
    m = CollisionData()
    m.header.stamp, m.header.frame_id = stamp, frame_id
    if w.records:
        f = w.records[0]
        m.global_offset_x, m.global_offset_y, m.global_offset_z = (
            f.global_offset_x, f.global_offset_y, f.global_offset_z)
    for r in w.records:
        o = ObjectStatus()
        o.unique_id, o.type = r.obj_id, r.obj_type
        o.position = Vector3(r.pos_x, r.pos_y, r.pos_z)
        m.collision_object.append(o)
    return m


def ref_traffic_light(w, stamp, frame_id):
    m = GetTrafficLightStatus()
    m.header.stamp, m.header.frame_id = stamp, frame_id
    m.trafficLightIndex, m.trafficLightType, m.trafficLightStatus = (
        w.traffic_light_index, w.traffic_light_type, w.traffic_light_status)
    return m


def ref_intersection(w, stamp, frame_id):
    m = IntersectionStatus()
    m.header.stamp, m.header.frame_id = stamp, frame_id
    m.intersection_index, m.intersection_status, m.intersection_status_time = (
        w.intersection_index, w.intersection_status, w.intersection_status_time)
    return m


def ref_npc_collision(w, stamp, frame_id):
    m = VehicleCollisionData()
    m.header.stamp, m.header.frame_id = stamp, frame_id
    for pair in w.pairs:
        vc = VehicleCollision()
        vc.crashed_vehicles = [ref_object(r) for r in pair if r is not None]
        m.collisions.append(vc)
    return m


def ref_sim_proc_status(w, stamp, last_command_time):
    m = MoraiSimProcStatus()
    m.header.stamp = stamp
    m.latest_command_time = last_command_time
    m.command_result = 0 if w.result == 0 else (0x01 if w.result == 0x01 else 0x10)
    m.current_mode = 0x01
    sim = w.platform == Platform.SIMULATOR
    if sim and w.status & 0x0FFF == SimState.PAUSE:
        m.current_status = int(SimProc.PAUSE)
    elif sim and w.status & 0x0FFF == SimState.PLAYING:
        m.current_status = int(SimProc.PLAY)
    else:
        m.current_status = 0
    return m


def ref_gps(w, stamp, frame_id, east_offset=0.0, north_offset=0.0, altitude=None):
    if w.latitude is None or w.longitude is None:
        return None, None
    alt = w.altitude if w.altitude is not None else (altitude if altitude is not None else 0.0)
    fix = w.fix_quality if w.fix_quality is not None else (1 if w.status == 'A' else 0)
    g = GPSMessage()
    g.header.stamp, g.header.frame_id = stamp, frame_id
    g.latitude, g.longitude, g.altitude = w.latitude, w.longitude, alt
    g.eastOffset, g.northOffset, g.status = east_offset, north_offset, fix
    n = NavSatFix()
    n.header = g.header
    n.latitude, n.longitude, n.altitude = w.latitude, w.longitude, alt
    n.status.status = NavSatStatus.STATUS_FIX if fix > 0 else NavSatStatus.STATUS_NO_FIX
    n.status.service = NavSatStatus.SERVICE_GPS
    n.position_covariance_type = NavSatFix.COVARIANCE_TYPE_UNKNOWN
    return g, n


def ref_imu(w, stamp, frame_id):
    m = Imu()
    m.header.stamp, m.header.frame_id = stamp, frame_id
    m.orientation = Quaternion(w.ori_x, w.ori_y, w.ori_z, w.ori_w)
    m.angular_velocity = Vector3(w.ang_vel_x, w.ang_vel_y, w.ang_vel_z)
    m.linear_acceleration = Vector3(w.lin_acc_x, w.lin_acc_y, w.lin_acc_z)
    return m


# ------------------------------------------------------------------ comparison

def same(a, b, path):
    if type(a) is not type(b):
        raise AssertionError("%s: %s vs %s" % (path, type(a).__name__, type(b).__name__))
    if isinstance(a, (genpy.Message, genpy.TVal)):
        for s in a.__slots__:
            same(getattr(a, s), getattr(b, s), path + "." + s)
    elif isinstance(a, list):
        assert len(a) == len(b), "%s: %d vs %d items" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, "%s[%d]" % (path, i))
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), path
    else:
        assert a == b, "%s: %r vs %r" % (path, a, b)


def serialized(m):
    b = io.BytesIO()
    m.serialize(b)
    return b.getvalue()


CASES = [  # (converter name, wire class, extra arguments after the wire message)
    ("ego_status", udp.EgoVehicleStatus, ("map",)),
    ("object_list", udp.ObjectInfo, ("map",)),
    ("collision", udp.CollisionData, ("map",)),
    ("traffic_light", udp.GetTrafficLightStatus, ("map",)),
    ("intersection", udp.GetIntersectionStatus, ("map",)),
    ("npc_collision", udp.NpcVehicleCollision, ("map",)),
    ("sim_proc_status", udp.SimStatus, (rospy.Time(7, 8),)),
    ("gps", udp.NmeaSentence, ("gps", 1.0, 2.0, 33.0)),
    ("imu", udp.ImuData, ("imu",)),
]


def inputs():
    out = [m for _, m in bench_codec.sample_messages()] + list(e2e_streams.sample_messages().values())
    vectors = json.loads((HERE.parent / "test" / "data" / "udp_vectors.json").read_text())["vectors"]
    for v in vectors:
        try:
            out.append(udp.decode(bytes.fromhex(v["hex"])))
        except ValueError:
            pass
    rng = random.Random(7)

    def f():
        return rng.choice([0.0, -0.0, 1.5, -2.25, float("nan"), float("inf"), rng.uniform(-1e6, 1e6)])
    base = list(out)
    for _ in range(300):
        m = rng.choice(base)
        if hasattr(m, "_replace") and not isinstance(m, udp.NmeaSentence):
            m = m._replace(**dict((k, f()) for k in m._fields if isinstance(getattr(m, k), float)))
        if isinstance(m, udp.ObjectInfo):
            m = m._replace(objects=tuple(udp.ObjectRecord(
                obj_id=rng.randint(-5, 5), obj_type=rng.choice([-1, 0, 1, 2, 3]), pos_x=f(), heading=f(),
                vel_y=f(), size_z=f(), acc_x=f(), link_id="L") for _ in range(rng.randint(0, 20))))
        out.append(m)
    return out


# ------------------------------------------------------------------ wire messages

INT_EXTREMES = [0, -1, 1, 127, -128, 255, 32767, -32768, 65535, 2 ** 31 - 1, -2 ** 31, 2 ** 32 - 1]
FLOAT_ODD = [0.0, -0.0, 1.5, -2.25, float("nan"), -float("nan"), float("inf"), -float("inf"), 1e-310, 3.4e38,
             -3.5e38, 1e308, 5e-324]
NO_INT = ("sec", "nsec", "data_length")      # not in any published message


def wire_inputs(seed=11, count=600):
    """Randomised receive-side wire tuples: odd floats (NaN, -0.0, inf, subnormal, beyond float32),
    integer extremes (some beyond their message field: then genpy and the wire message must both
    refuse), 0 / 1 / 20 objects of every type (also -1 and unknown types, which are skipped),
    collision pairs with and without a second vehicle, GGA / RMC with and without altitude, fix
    and position."""
    rng = random.Random(seed)
    recv = (udp.EgoVehicleStatus, udp.ObjectInfo, udp.CollisionData, udp.GetTrafficLightStatus,
            udp.GetIntersectionStatus, udp.NpcVehicleCollision, udp.SimStatus, udp.NmeaSentence, udp.ImuData)
    base = [m for m in inputs() if isinstance(m, recv)]
    nmea = [m for m in base if isinstance(m, udp.NmeaSentence)]

    def f():
        return rng.choice(FLOAT_ODD + [rng.uniform(-1e6, 1e6), rng.uniform(-1e300, 1e300)])

    def i():
        return rng.choice(INT_EXTREMES + [rng.randint(-1000, 1000)])

    def fields(rec, floats_only=False):
        out = {}
        for k in rec._fields:
            v = getattr(rec, k)
            if isinstance(v, float) or (isinstance(v, int) and not isinstance(v, bool) and k not in NO_INT):
                if isinstance(v, float) or (rng.random() < 0.5 and k.startswith(("pos", "vel", "acc", "size",
                                                                                  "heading", "intersection_s"))):
                    out[k] = f() if rng.random() < 0.7 else v
                elif not floats_only and rng.random() < 0.3:
                    out[k] = i()
        return rec._replace(**out)

    def obj(cls, t=None):
        r = cls(*([0] * len(cls._fields)))
        kw = dict((k, f()) for k in cls._fields if k not in ("obj_id", "obj_type", "link_id"))
        kw["obj_id"] = rng.choice([rng.randint(-5, 5), rng.choice(INT_EXTREMES)])
        kw["obj_type"] = rng.choice([-1, 0, 1, 2, 3, 7]) if t is None else t
        if "link_id" in cls._fields:
            kw["link_id"] = rng.choice(["", "L", "A119BS010000"])
        return r._replace(**kw)
    out = []
    for k in range(count):
        m = fields(rng.choice(nmea if rng.random() < 0.1 else base), floats_only=rng.random() < 0.5)
        if isinstance(m, udp.ObjectInfo):
            n = rng.choice([0, 1, 2, 5, 20])
            t = rng.choice([None, -1, 0, 1, 2, 3])
            m = m._replace(objects=tuple(obj(udp.ObjectRecord, t) for _ in range(n)))
        elif isinstance(m, udp.CollisionData):
            n = rng.choice([0, 1, 2, 20])
            m = m._replace(records=tuple(udp.CollisionRecord(rng.choice([-1, 0, 1, 2, 5]), rng.choice(INT_EXTREMES),
                                                             f(), f(), f(), f(), f(), f()) for _ in range(n)))
        elif isinstance(m, udp.NpcVehicleCollision):
            n = rng.choice([0, 1, 2, 5])
            m = m._replace(pairs=tuple((obj(udp.NpcCollisionRecord), obj(udp.NpcCollisionRecord)
                                        if rng.random() < 0.6 else None) for _ in range(n)))
        elif isinstance(m, udp.GetTrafficLightStatus):
            m = m._replace(traffic_light_index=rng.choice(["", "C119BS010007", "x" * 12, "\u00e9t\u00e9"]))
        elif isinstance(m, udp.NmeaSentence):
            m = m._replace(sentence_type=rng.choice(["GGA", "RMC"]), latitude=rng.choice([None, f(), 37.5]),
                           longitude=rng.choice([None, f(), 127.0]), altitude=rng.choice([None, f(), 29.1]),
                           fix_quality=rng.choice([None, 0, 1, 2, 6]), status=rng.choice([None, "A", "V"]))
        out.append(m)
    return out


WIRE_CASES = [  # (converter name, wire class, variants of the arguments after the wire message and stamp)
    ("ego_status", udp.EgoVehicleStatus, [("map",), ("map", -1), ("", 1), ("\u00fcber/base", -1)]),
    ("object_list", udp.ObjectInfo, [("map",), ("",), ("\u00fcber",)]),
    ("collision", udp.CollisionData, [("map",), ("",)]),
    ("traffic_light", udp.GetTrafficLightStatus, [("map",), ("",)]),
    ("intersection", udp.GetIntersectionStatus, [("map",), ("",)]),
    ("npc_collision", udp.NpcVehicleCollision, [("map",), ("",)]),
    ("sim_proc_status", udp.SimStatus, [(rospy.Time(7, 8),), (rospy.Time(),), (genpy.Time(2 ** 32 - 1, 999999999),)]),
    ("gps", udp.NmeaSentence, [("gps", 1.0, 2.0, 33.0), ("gps",), ("", -0.0, float("nan"), None),
                               ("gps", 0.0, 0.0, float("inf"))]),
    ("imu", udp.ImuData, [("imu",), ("",)]),
]


def check_wire(messages, seqs=(0, 1, 4711, 2 ** 32 - 1)):
    """For every receive-side wire message: the wire message's serialize() == genpy serialize() of
    the converter's message (and of the reusing converter's), with the same header seq, stamp and
    frame id; or both refuse.  Returns {converter name: conversions compared}."""
    n = {}
    reused = dict((name, fast.reusing(name)) for name, _, _ in WIRE_CASES if name != "ego_status")
    k = 0
    for w in messages:
        for name, wcls, variants in WIRE_CASES:
            if type(w) is not wcls:
                continue
            for extra in variants:
                k += 1
                stamp = (rospy.Time(1, 2), genpy.Time(3, 4), rospy.Time(2 ** 32 - 1, 999999999))[k % 3]
                seq = seqs[k % len(seqs)]
                want = [getattr(fast, name)(w, stamp, *extra)]
                if name in reused:
                    want.append(reused[name](w, stamp, *extra))
                got = getattr(wm, name)(w, stamp, *extra)
                for a in want:
                    a_pair = a if name == "gps" else (a,)
                    b_pair = got if name == "gps" else (got,)
                    for x, y in zip(a_pair, b_pair):
                        if x is None:
                            assert y is None, "wire %s: a message where the converter gives none" % name
                            continue
                        assert y._md5sum == x._md5sum and y._type == x._type and y._has_header, name
                        x.header.seq = y.header.seq = seq
                        try:
                            ref, err = serialized(x), None
                        except Exception as e:   # genpy refuses (value beyond its field)
                            ref, err = None, e
                        try:
                            mine = serialized(y)
                        except Exception as e:
                            assert err is not None, "wire %s raised %r where genpy gives %r" % (name, e, ref)
                            continue
                        assert err is None, "wire %s serialized where genpy raised %r" % (name, err)
                        assert mine == ref, "wire %s differs for %r\n%r\n%r" % (name, w, ref, mine)
                        assert y.header.stamp is stamp and y.header.frame_id == x.header.frame_id, name
                    if name == "ego_status":
                        m = got.message()
                        same(a, m, "wire ego_status.message()")
                n[name] = n.get(name, 0) + 1
    return n


def main():
    n = {}
    # the converters that fill the same message again (udp_convert.reusing, what the bridge's
    # publishers use): one each, over every input in turn, so each call starts from the message
    # the previous input left (larger or smaller lists, other types); as rospy's publish() does,
    # the header's seq is overwritten after every call
    reused = dict((name, fast.reusing(name)) for name, _, _ in CASES if name != "ego_status")
    for w in inputs():
        for stamp in (rospy.Time(1, 2), genpy.Time(3, 4)):
            for name, wcls, extra in CASES:
                if type(w) is not wcls:
                    continue
                a = globals()["ref_" + name](w, stamp, *extra)
                for label, conv in (("", getattr(fast, name)), ("reusing ", reused.get(name))):
                    if conv is None:
                        continue
                    b = conv(w, stamp, *extra)
                    pairs = zip(a, b) if name == "gps" else [(a, b)]
                    for x, y in pairs:
                        if x is None:
                            assert y is None, label + name
                            continue
                        same(x, y, label + name)
                        assert serialized(x) == serialized(y), label + name
                    if name == "gps" and a[0] is not None:
                        assert (a[0].header is a[1].header) and (b[0].header is b[1].header), \
                            label + "gps: shared header"
                    if label and b is not None and (name != "gps" or b[0] is not None):
                        (b[0] if name == "gps" else b).header.seq = 4711
                n[name] = n.get(name, 0) + 1
    for sec, nsec in [(0, 0), (1, 999999999), (-1, 0), (5, -1), (5, 10 ** 9), (2 ** 31 - 1, 5)]:
        a, b = ref_sim_stamp(sec, nsec), fast.sim_stamp(sec, nsec)
        assert (a is None) == (b is None), (sec, nsec)
        if a is not None:
            same(a, b, "sim_stamp")
            assert a == b and hash(a) == hash(b) and str(a) == str(b)
    missing = [c[0] for c in CASES if c[0] not in n]
    assert not missing, "no input for %s" % missing
    print("udp_convert: same messages as the generated constructors in %d conversions (%s), "
          "also with the converters that fill the same message again (udp_convert.reusing)"
          % (sum(n.values()), ", ".join("%s %d" % kv for kv in sorted(n.items()))))
    n = check_wire(inputs() + wire_inputs())
    missing = [c[0] for c in WIRE_CASES if c[0] not in n]
    assert not missing, "no input for %s" % missing
    print("wire_messages: same bytes as the converters' messages in %d conversions (%s)"
          % (sum(n.values()), ", ".join("%s %d" % kv for kv in sorted(n.items()))))


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print("udp_convert differs from the reference: %s" % e)
        raise SystemExit(1)
