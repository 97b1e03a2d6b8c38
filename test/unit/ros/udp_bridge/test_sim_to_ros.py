"""ros/udp_bridge/sim_to_ros, the converters the bridge publishes: complete messages (every field set, of its
type, at every depth) that serialize and read back byte for byte, over the codec's samples,
randomised packets (convert_cases) and the real captures; what they mean, on hand-checked packets;
rospy's own publish path takes them."""
import io
from pathlib import Path

import pytest

import helpers
import convert_cases as cases

CAPTURES = Path(helpers.ROOT).parent / 'shared' / 'captures'


def test_samples_and_randomised_packets():
    n = cases.check_converters(cases.inputs() + cases.wire_inputs(seed=3, count=800))
    assert set(n) == {c[0] for c in cases.CASES}
    assert min(n.values()) >= 20, n


def test_randomised_lists_cover_every_size_and_type():
    from morai_bridge.wire import udp
    ins = cases.wire_inputs(seed=3, count=800)
    sizes = {len(m.objects) for m in ins if isinstance(m, udp.ObjectInfo)}
    types = {r.obj_type for m in ins if isinstance(m, udp.ObjectInfo) for r in m.objects}
    assert {0, 1, 20} <= sizes and {-1, 0, 1, 2, 3} <= types
    assert {0, 1, 20} <= {len(m.records) for m in ins if isinstance(m, udp.CollisionData)}
    gps = [m for m in ins if isinstance(m, udp.NmeaSentence)]
    assert any(m.altitude is None and m.latitude is not None and m.longitude is not None for m in gps)
    assert any(m.fix_quality == 0 for m in gps) and any(m.latitude is None for m in gps)


@pytest.mark.skipif(not (CAPTURES / 'MORAI.pcap').is_file(), reason='real captures not available')
def test_real_captures():
    from morai_bridge.wire import udp
    from morai_bridge.wire.capture import read_capture
    msgs = []
    for name in ('MORAI.pcap', 'MORAI_909.pcap'):
        for _, _, _, p in read_capture(CAPTURES / name):
            if p[:1] in (b'#', b'$'):
                msgs.append(udp.decode(p))
    n = cases.check_converters(msgs)
    assert {'ego_status', 'object_info', 'collision', 'traffic_light', 'intersection', 'gps'} <= set(n)


@pytest.mark.parametrize('fault', ['unset', 'wrong type'])
def test_the_check_sees_a_field_left_out_or_mistyped(monkeypatch, fault):
    from morai_bridge.ros.udp_bridge import sim_to_ros
    real = sim_to_ros.object_status

    def broken(r):
        o = real(r)
        if fault == 'unset':
            del o.size
        else:
            o.name = None
        return o
    monkeypatch.setattr(sim_to_ros, 'object_status', broken)
    with pytest.raises(AssertionError, match='size: not set' if fault == 'unset' else 'name: None'):
        cases.check_converters(cases.inputs())


def test_messages_equal_what_genpy_constructors_build():
    """Built on object.__new__, field by field: the same message as genpy's constructor given the
    same values (equality and bytes), and genpy's defaults where the converter writes zeros."""
    import rospy
    from geometry_msgs.msg import Vector3
    from std_msgs.msg import Header
    from morai_msgs.msg import EgoVehicleStatus, ObjectStatus
    from morai_bridge.ros import msg_set
    from morai_bridge.ros.udp_bridge import sim_to_ros
    from morai_bridge.wire.udp import samples as udp_samples
    s = udp_samples.per_stream()
    w = s['ego_status']
    m = sim_to_ros.ego_status(w, rospy.Time(1, 2), 'map', -1)
    # what the built message set adds (the sets test layer runs this file in every set's workspace):
    # the front angle's name, and the tyre block the 229-byte sample carries
    by_set = {'front_steer_angle' if msg_set.STATUS_FRONT_REAR else 'wheel_angle': -w.steer}
    if msg_set.STATUS_TYRES:
        by_set.update((n, getattr(w, n)) for n in sim_to_ros.TYRE_FIELDS)
    ref = EgoVehicleStatus(header=Header(stamp=rospy.Time(1, 2), frame_id='map'), acceleration=Vector3(
        w.acc_x, w.acc_y, w.acc_z), position=Vector3(w.pos_x, w.pos_y, w.pos_z), velocity=Vector3(
        w.vel_x / 3.6, w.vel_y / 3.6, w.vel_z / 3.6), heading=w.yaw, accel=w.accel, brake=w.brake,
        **by_set)
    assert m == ref and cases.serialized(m) == cases.serialized(ref)
    c = sim_to_ros.collision(s['collision'], rospy.Time(1, 2), 'map').collision_object[0]
    r = s['collision'].records[0]
    want = ObjectStatus(unique_id=r.obj_id, type=r.obj_type, position=Vector3(r.pos_x, r.pos_y, r.pos_z))
    assert c == want and cases.serialized(c) == cases.serialized(want)


def test_rospy_serialize_message_and_publish_argument():
    """rospy's publish path: args_kwds_to_message returns the message itself, serialize_message sets
    header.seq and writes the framed bytes; a new message per call."""
    import rospy
    from rospy.msg import args_kwds_to_message, serialize_message
    from morai_msgs.msg import ObjectStatusList
    from morai_bridge.ros.udp_bridge import sim_to_ros
    from morai_bridge.wire import udp
    w = next(m for m in cases.inputs() if isinstance(m, udp.ObjectInfo) and m.objects)
    stamp = rospy.Time(5, 6)
    mine = sim_to_ros.object_info(w, stamp, 'map')
    assert args_kwds_to_message(ObjectStatusList, (mine,), {}) is mine
    b = io.BytesIO()
    serialize_message(b, 42, mine)
    assert mine.header.seq == 42
    back = ObjectStatusList().deserialize(b.getvalue()[4:])
    assert back.header.seq == 42 and cases.serialized(back) == b.getvalue()[4:] == cases.serialized(mine)
    assert back.num_of_npcs + back.num_of_pedestrian + back.num_of_obstacle == len(w.objects) > 0
    # a new object per call: a latched or queued reference keeps its own packet
    assert sim_to_ros.object_info(w, stamp, 'map') is not mine


def test_converters_follow_the_message_definitions():
    """What the converters' messages say, field by field, for a hand-checked packet (values of
    wire.udp_samples.per_stream)."""
    import rospy
    from morai_bridge.ros import msg_set
    from morai_bridge.ros.udp_bridge import sim_to_ros
    from morai_bridge.wire.udp import samples as udp_samples
    s = udp_samples.per_stream()
    e = sim_to_ros.ego_status(s['ego_status'], rospy.Time(1, 2), 'map', -1)
    assert (e.position.x, e.position.y, e.heading, msg_set.front_wheel_angle(e)) == (120.5, -33.25, 87.0, -2.5)
    assert e.velocity.y == pytest.approx(35.9 / 3.6)
    o = sim_to_ros.object_info(s['object_info'], rospy.Time(1, 2), 'map')
    assert (o.num_of_npcs, o.num_of_pedestrian, o.num_of_obstacle) == (12, 5, 3)
    assert [x.unique_id for x in o.pedestrian_list] == [112, 113, 114, 115, 116]
    c = sim_to_ros.collision(s['collision'], rospy.Time(1, 2), 'map')
    assert [(x.unique_id, x.position.x) for x in c.collision_object] == [(300, 12.0), (301, 13.0)]
    assert c.global_offset_x == 302459.9
    p = sim_to_ros.sim_status(s['sim_status'], rospy.Time(1, 2), rospy.Time(3))
    assert (p.command_result, p.current_mode, p.current_status) == (0x01, 0x01, 0x01)   # playing: PLAY
