"""ros/lazy_messages (the fast path the bridge publishes with ~wire_serialize) serializes to the same
bytes as genpy's serialize of the readable converters' messages (ros/sim_to_ros), over the codec's
samples, randomised packets (convert_cases) and the real captures; rospy's own serialize_message
takes them as it takes the genpy messages."""
import io
from pathlib import Path

import pytest

import convert_cases as cases

CAPTURES = Path(__file__).resolve().parents[2].parent / 'shared' / 'captures'


def test_samples_and_randomised_packets():
    n = cases.check_lazy(cases.inputs() + cases.wire_inputs(seed=3, count=800))
    assert set(n) == set(c[0] for c in cases.CASES)
    assert min(n.values()) >= 20, n


def test_randomised_lists_cover_every_size_and_type():
    from morai_bridge.wire import udp
    ins = cases.wire_inputs(seed=3, count=800)
    sizes = set(len(m.objects) for m in ins if isinstance(m, udp.ObjectInfo))
    types = set(r.obj_type for m in ins if isinstance(m, udp.ObjectInfo) for r in m.objects)
    assert {0, 1, 20} <= sizes and {-1, 0, 1, 2, 3} <= types
    assert {0, 1, 20} <= set(len(m.records) for m in ins if isinstance(m, udp.CollisionData))
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
    n = cases.check_lazy(msgs)
    assert {'ego_status', 'object_list', 'collision', 'traffic_light', 'intersection', 'gps'} <= set(n)


@pytest.mark.parametrize('where', ['lazy', 'readable'])
def test_the_check_sees_a_difference(monkeypatch, where):
    """A changed byte in the fast path, or a changed meaning in the readable converter alone,
    fails the check."""
    from morai_bridge.ros import lazy_messages, sim_to_ros
    if where == 'lazy':
        real = lazy_messages.LazyIntersection.serialize

        def broken(self, buff):
            b = io.BytesIO()
            real(self, b)
            buff.write(b.getvalue()[:-1] + b'\x01')
        monkeypatch.setattr(lazy_messages.LazyIntersection, 'serialize', broken)
    else:
        real = sim_to_ros.traffic_light

        def broken(w, stamp, frame_id):
            m = real(w, stamp, frame_id)
            m.trafficLightStatus += 1
            return m
        monkeypatch.setattr(sim_to_ros, 'traffic_light', broken)
    with pytest.raises(AssertionError):
        cases.check_lazy(cases.inputs())


def test_rospy_serialize_message_and_publish_argument():
    """rospy's publish path: args_kwds_to_message returns the object itself (same md5sum),
    serialize_message sets header.seq and writes the same framed bytes as for the genpy message."""
    import rospy
    from rospy.msg import args_kwds_to_message, serialize_message
    from morai_msgs.msg import ObjectStatusList
    from morai_bridge.ros import lazy_messages, sim_to_ros
    from morai_bridge.wire import udp
    w = next(m for m in cases.inputs() if isinstance(m, udp.ObjectInfo) and m.objects)
    stamp = rospy.Time(5, 6)
    mine = lazy_messages.object_list(w, stamp, 'map')
    assert args_kwds_to_message(ObjectStatusList, (mine,), {}) is mine
    a, b = io.BytesIO(), io.BytesIO()
    serialize_message(a, 42, sim_to_ros.object_list(w, stamp, 'map'))
    serialize_message(b, 42, mine)
    assert a.getvalue() == b.getvalue() and mine.header.seq == 42
    # a new object per call: a latched or queued reference keeps its own packet
    assert lazy_messages.object_list(w, stamp, 'map') is not mine


def test_ego_status_genpy_form_for_the_service():
    import rospy
    from morai_bridge.ros import lazy_messages, sim_to_ros
    from morai_bridge.wire import udp
    w = next(m for m in cases.inputs() if isinstance(m, udp.EgoVehicleStatus))
    m = lazy_messages.ego_status(w, rospy.Time(1, 2), 'map', -1)
    m.header.seq = 9
    ref = sim_to_ros.ego_status(w, rospy.Time(1, 2), 'map', -1)
    ref.header.seq = 9
    cases.same(ref, m.message(), 'ego')


def test_readable_converters_follow_the_message_definitions():
    """The readable converters' messages are what the generated constructors give, field by field,
    for a hand-checked packet (values of wire.udp_samples.per_stream)."""
    import rospy
    from morai_bridge.ros import sim_to_ros
    from morai_bridge.wire import udp_samples
    s = udp_samples.per_stream()
    e = sim_to_ros.ego_status(s['ego_status'], rospy.Time(1, 2), 'map', -1)
    assert (e.position.x, e.position.y, e.heading, e.wheel_angle) == (120.5, -33.25, 87.0, -2.5)
    assert e.velocity.y == pytest.approx(35.9 / 3.6)
    o = sim_to_ros.object_list(s['object_info'], rospy.Time(1, 2), 'map')
    assert (o.num_of_npcs, o.num_of_pedestrian, o.num_of_obstacle) == (12, 5, 3)
    assert [x.unique_id for x in o.pedestrian_list] == [112, 113, 114, 115, 116]
    c = sim_to_ros.collision(s['collision'], rospy.Time(1, 2), 'map')
    assert [(x.unique_id, x.position.x) for x in c.collision_object] == [(300, 12.0), (301, 13.0)]
    assert c.global_offset_x == 302459.9
    p = sim_to_ros.sim_proc_status(s['sim_status'], rospy.Time(1, 2), rospy.Time(3))
    assert (p.command_result, p.current_mode, p.current_status) == (0x01, 0x01, 0x01)   # playing: PLAY
