"""ros/wire_messages: what the bridge publishes with ~wire_serialize serializes to the same bytes as
genpy's serialize of the converters' messages (udp_convert), over the codec's samples, randomised
wire tuples (bench/check_convert.py) and the real captures; rospy's own serialize_message takes them
as it takes the genpy messages."""
import io
from pathlib import Path

import pytest

CAPTURES = Path(__file__).resolve().parents[2].parent / "shared" / "captures"


def test_samples_and_randomised_tuples(check_convert):
    n = check_convert.check_wire(check_convert.inputs() + check_convert.wire_inputs(seed=3, count=800))
    assert set(n) == set(c[0] for c in check_convert.WIRE_CASES)
    assert min(n.values()) >= 20, n


def test_randomised_lists_cover_every_size_and_type(check_convert):
    from morai_bridge.wire import udp
    ins = check_convert.wire_inputs(seed=3, count=800)
    sizes = set(len(m.objects) for m in ins if isinstance(m, udp.ObjectInfo))
    types = set(r.obj_type for m in ins if isinstance(m, udp.ObjectInfo) for r in m.objects)
    assert {0, 1, 20} <= sizes and {-1, 0, 1, 2, 3} <= types
    assert {0, 1, 20} <= set(len(m.records) for m in ins if isinstance(m, udp.CollisionData))
    gps = [m for m in ins if isinstance(m, udp.NmeaSentence)]
    assert any(m.altitude is None and m.latitude is not None and m.longitude is not None for m in gps)
    assert any(m.fix_quality == 0 for m in gps) and any(m.latitude is None for m in gps)


@pytest.mark.skipif(not (CAPTURES / "MORAI.pcap").is_file(), reason="real captures not available")
def test_real_captures(check_convert):
    from morai_bridge.wire import udp
    from morai_bridge.wire.capture import read_capture
    msgs = []
    for name in ("MORAI.pcap", "MORAI_909.pcap"):
        for _, _, _, p in read_capture(CAPTURES / name):
            if p[:1] in (b"#", b"$"):
                msgs.append(udp.decode(p))
    n = check_convert.check_wire(msgs)
    assert {'ego_status', 'object_list', 'collision', 'traffic_light', 'intersection', 'gps'} <= set(n)


def test_the_check_sees_a_difference(check_convert, monkeypatch):
    from morai_bridge.ros import wire_messages as wm
    real = wm.WireIntersection.serialize

    def broken(self, buff):
        b = io.BytesIO()
        real(self, b)
        buff.write(b.getvalue()[:-1] + b'\x01')
    monkeypatch.setattr(wm.WireIntersection, 'serialize', broken)
    with pytest.raises(AssertionError):
        check_convert.check_wire(check_convert.inputs())


def test_rospy_serialize_message_and_publish_argument(check_convert):
    """rospy's publish path: args_kwds_to_message returns the object itself (same md5sum),
    serialize_message sets header.seq and writes the same framed bytes as for the genpy message."""
    import rospy
    from rospy.msg import args_kwds_to_message, serialize_message
    from morai_msgs.msg import ObjectStatusList
    from morai_bridge.ros import udp_convert as conv
    from morai_bridge.ros import wire_messages as wm
    from morai_bridge.wire import udp
    w = next(m for m in check_convert.inputs() if isinstance(m, udp.ObjectInfo) and m.objects)
    stamp = rospy.Time(5, 6)
    mine = wm.object_list(w, stamp, 'map')
    assert args_kwds_to_message(ObjectStatusList, (mine,), {}) is mine
    a, b = io.BytesIO(), io.BytesIO()
    serialize_message(a, 42, conv.object_list(w, stamp, 'map'))
    serialize_message(b, 42, mine)
    assert a.getvalue() == b.getvalue() and mine.header.seq == 42
    # a new object per call: a latched or queued reference keeps its own packet
    assert wm.object_list(w, stamp, 'map') is not mine


def test_ego_status_genpy_form_for_the_service(check_convert):
    import rospy
    from morai_bridge.ros import udp_convert as conv
    from morai_bridge.ros import wire_messages as wm
    from morai_bridge.wire import udp
    w = next(m for m in check_convert.inputs() if isinstance(m, udp.EgoVehicleStatus))
    m = wm.ego_status(w, rospy.Time(1, 2), 'map', -1)
    m.header.seq = 9
    ref = conv.ego_status(w, rospy.Time(1, 2), 'map', -1)
    ref.header.seq = 9
    check_convert.same(ref, m.message(), 'ego')
