"""Public API of morai_bridge.wire.udp: registries, encode errors, immutability."""

import math
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import helpers
from morai_bridge.wire import udp

SRC = Path(helpers.ROOT) / "src"


def test_header_map():
    h = udp.HEADERS
    assert h[b"#MoraiInfo$"].types == {94: "ego_status", 132: "ego_status", 152: "ego_status",
                                      200: "ego_status", 216: "ego_status"}
    assert h[b"#MoraiInfo$"].lengths[200] == (229,)
    assert set(h[b"#MoraiInfo$"].lengths[94]) == {121, 123}
    assert h[b"#MoraiObjInfo$"].lengths == {2128: (2160,), 2120: (2152,)}
    assert h[b"#TrafficLight$"].types == {16: "traffic_light", 14: "set_traffic_light",
                                         15: "set_traffic_light"}
    assert h[b"#TrafficLight$"].data_lengths == {14, 15, 16}
    assert h[b"#CollisionData$"].lengths == {148: (181,), 140: (173,)}
    assert h[b"#IntStatus$"].lengths == {8: (37,)}
    assert h[b"#SimControl$"].aux_length == h[b"#SimStatus$"].aux_length == 20
    assert h[b"#SimControl$"].lengths == {103: (141,)}
    assert h[b"#SimStatus$"].lengths == {108: (145,)}
    assert h[b"#MultiEgoSetting$"].lengths == {648: (683,), 920: (961,)}
    assert h[b"#VehicleCollision$"].lengths == {1120: (1156,)}
    assert h[b"#IMUData$"].lengths == {88: (115,), 80: (107,)}      # with time (25.S4), without (manuals)
    assert all(info.aux_length == 12 for k, info in h.items()
               if k not in (b"#SimControl$", b"#SimStatus$"))
    with pytest.raises(TypeError):
        h[b"#New$"] = None  # read-only


def test_totals_follow_the_framing_rule():
    for info in udp.VARIANTS:
        if info.header is None or (info.cls, info.data_length) == (udp.MultiEgoSetting, 920):
            continue
        assert info.total_lengths[0] == len(info.header) + 4 + info.aux_length \
            + info.data_length + 2


def test_message_classes():
    # every message class of the protocol travels on a stream row, and every row's class (the emulator's
    # lock-step extension aside) is one of them: derived, so a new stream needs no edit here
    from morai_bridge.wire.udp import streams
    names = {c.__name__ for c in udp.message_classes()}
    assert names == {c.__name__ for st in streams.STREAMS if not st.extension for c in st.classes}
    assert {"EgoCtrlCmd", "EgoVehicleStatus", "ObjectInfo", "SimControl", "ImuData", "NmeaSentence"} <= names
    type_names = [c.TYPE_NAME for c in udp.message_classes()]
    assert len(set(type_names)) == len(type_names)
    for cls in udp.message_classes() + udp.RECORD_CLASSES:
        assert issubclass(cls, tuple) and hasattr(cls, "_fields")
        assert cls.__module__ in ("morai_bridge.wire.udp", "morai_bridge.wire.udp.nmea")
        assert cls.__doc__
        assert getattr(udp, cls.__name__) is cls


def test_docstrings_state_units():
    doc = udp.EgoVehicleStatus.__doc__
    assert "vel_x (f): km/h" in doc and "pos_x (f): m" in doc and "yaw (f): deg" in doc
    assert "ang_vel_x (f): deg/s" in doc
    assert "rad/s" in udp.ImuData.__doc__ and "m/s^2" in udp.ImuData.__doc__
    assert "m/s" in udp.GVStateCmd.__doc__


def test_messages_are_immutable():
    msg = udp.make(udp.EgoCtrlCmd)
    with pytest.raises(AttributeError):
        msg.steer = 1.0
    assert msg._replace(steer=0.5).steer == 0.5 and msg.steer == 0.0


def test_defaults_build_the_current_variant():
    cmd = udp.EgoCtrlCmd(ctrl_mode=2, gear=4, cmd_type=2, velocity=30.0)
    assert cmd.data_length == 23 and cmd.rear_steer is None
    data = udp.encode(cmd)
    assert len(data) == 55
    assert struct.unpack_from("<bbb5f", data, 30) == (2, 4, 2, 30.0, 0, 0, 0, 0)
    assert udp.decode(data) == cmd


def test_variant_specific_fields():
    cmd27 = udp.make(udp.EgoCtrlCmd, 27, steer=0.25, rear_steer=-0.125)
    assert len(udp.encode(cmd27)) == 59
    with pytest.raises(udp.EncodeError, match="rear_steer"):
        udp.encode(cmd27._replace(data_length=23))
    status = udp.make(udp.EgoVehicleStatus, 94)
    assert status.sec is None and status.link_id is None
    with pytest.raises(udp.EncodeError, match="sec"):
        udp.encode(status._replace(sec=1))


def test_encode_rejects_unknown_variant_and_objects():
    with pytest.raises(udp.EncodeError, match="data_length"):
        udp.encode(udp.make(udp.EgoCtrlCmd)._replace(data_length=24))
    with pytest.raises(TypeError):
        udp.encode(("not", "a", "message"))


@pytest.mark.parametrize("cls, field, limit", [
    (udp.SetTrafficLight, "traffic_light_index", 12),
    (udp.ScenarioLoad, "file_name", 30),
    (udp.SaveSensorData, "file_dir", 60),
    (udp.SimControl, "option", 99),
])
def test_too_long_text(cls, field, limit):
    ok = udp.make(cls, **{field: "x" * limit})
    udp.encode(ok)
    with pytest.raises(udp.EncodeError) as info:
        udp.encode(udp.make(cls, **{field: "x" * (limit + 1)}))
    assert field in str(info.value) and str(limit) in str(info.value)
    assert info.value.field == field


def test_text_in_records():
    rec = udp.NpcGhostRecord(unique_id=1, car_name="x" * 26)
    with pytest.raises(udp.EncodeError, match="car_name.*25"):
        udp.encode(udp.make(udp.NpcGhostCmd, npcs=(rec,)))
    with pytest.raises(udp.EncodeError, match="ASCII"):
        udp.encode(udp.make(udp.ScenarioLoad, file_name="무라이"))
    with pytest.raises(udp.EncodeError, match="str"):
        udp.encode(udp.make(udp.ScenarioLoad, file_name=b"bytes"))


def test_padding_choices():
    tl = udp.encode(udp.SetTrafficLight(traffic_light_index="C1", traffic_light_status=16))
    assert tl[30:42] == b"C1" + b" " * 10  # user->sim ids: spaces, like the official example
    status = udp.encode(udp.make(udp.EgoVehicleStatus, link_id="A1"))
    assert status[27 + 114:27 + 152] == b"A1" + bytes(36)  # sim->user: NUL, like the simulator
    ctl = udp.encode(udp.SimControl(platform=2, command=1, option="map/car"))
    assert ctl[36:39] == b"\x02\x01\x00" and ctl[39:139] == b"map/car$" + bytes(92)


def test_value_range_errors_name_the_field():
    with pytest.raises(udp.EncodeError, match="gear") as info:
        udp.encode(udp.make(udp.EgoCtrlCmd, gear=300))
    assert info.value.field == "gear"
    with pytest.raises(udp.EncodeError, match="position_x"):
        udp.encode(udp.make(udp.EgoGhostCmd, position_x=1e39))
    with pytest.raises(udp.EncodeError, match="obj_id"):
        udp.encode(udp.make(udp.ObjectInfo, objects=(udp.ObjectRecord(obj_id=40000),)))
    with pytest.raises(udp.EncodeError, match="intersection_index"):
        udp.encode(udp.make(udp.SetIntersectionStatus, intersection_index=1.5))


def test_record_errors():
    too_many = tuple(udp.CollisionRecord(obj_id=i + 1) for i in range(6))
    with pytest.raises(udp.EncodeError, match="at most 5"):
        udp.encode(udp.make(udp.CollisionData, records=too_many))
    with pytest.raises(udp.EncodeError, match="CollisionRecord"):
        udp.encode(udp.make(udp.CollisionData, records=(udp.ObjectRecord(obj_id=1),)))
    with pytest.raises(udp.EncodeError, match="2-tuple"):
        udp.encode(udp.make(udp.NpcVehicleCollision,
                            pairs=((udp.NpcCollisionRecord(obj_id=1),),)))
    with pytest.raises(udp.EncodeError, match="10 values"):
        udp.encode(udp.GVDirectCmd(steer_angle=(0.0,) * 9))


def test_nan_and_inf_are_encoded_as_given():
    cmd = udp.make(udp.EgoCtrlCmd, steer=float("nan"), velocity=float("inf"))
    back = udp.decode(udp.encode(cmd))
    assert math.isnan(back.steer) and back.velocity == float("inf")


def test_records_keep_order_and_skip_empty_slots():
    a = udp.ObjectRecord(obj_id=5, obj_type=1, pos_x=1.0)
    b = udp.ObjectRecord(obj_id=2, obj_type=0, pos_x=2.0)
    data = bytearray(udp.encode(udp.make(udp.ObjectInfo, objects=(a, b))))
    # move b from slot 1 to slot 7, leaving empty slots in between
    start = 30 + 8
    rec_b = data[start + 106:start + 212]
    data[start + 106:start + 212] = bytes(106)
    data[start + 7 * 106:start + 8 * 106] = rec_b
    assert udp.decode(bytes(data)).objects == (a, b)
    # a slot holding only -0.0 is not all-zero bytes, so it is occupied
    data[start + 3 * 106 + 4:start + 3 * 106 + 8] = struct.pack("<f", -0.0)
    objs = udp.decode(bytes(data)).objects
    assert len(objs) == 3 and objs[1].obj_id == 0 and math.copysign(1, objs[1].pos_x) < 0


def test_npc_collision_pairs():
    first = udp.NpcCollisionRecord(obj_type=1, obj_id=11)
    empty = udp.NpcCollisionRecord()
    msg = udp.make(udp.NpcVehicleCollision, pairs=((first, empty),))
    back = udp.decode(udp.encode(msg))
    assert back.pairs == ((first, empty),)  # a zero record inside a used pair is kept


def test_classify():
    assert udp.classify(udp.encode(udp.make(udp.EgoVehicleStatus))) == "ego_status"
    assert udp.classify(udp.encode(udp.make(udp.SetTrafficLight))) == "set_traffic_light"
    assert udp.classify(udp.encode(udp.make(udp.GetTrafficLightStatus))) == \
        "traffic_light"
    assert udp.classify(udp.encode(udp.GVStateCmd())) == "gv_state"
    assert udp.classify(b"$GPGGA,...") == "gps_nmea"
    assert udp.classify(b"#MoraiInfo$" + struct.pack("<I", 201)) is None
    assert udp.classify(b"") is None and udp.classify(b"MORAI") is None


def test_make_rejects_unknown_fields():
    with pytest.raises(TypeError, match="velocty"):
        udp.make(udp.EgoCtrlCmd, velocty=1.0)


def test_no_ros_imports():
    code = ("import sys; import morai_bridge.wire.udp, morai_bridge.wire.capture, "
            "morai_bridge.wire.udp.nmea; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('rospy', 'genpy', 'roslib', 'rosgraph', 'std_msgs', 'morai_msgs')]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": str(SRC)})


@pytest.mark.parametrize("version", [0x23, 0x24, 0x4F524F4D])  # '#', '$', 'MORO'
def test_ground_vehicle_header_version_cannot_confuse_dispatch(version):
    for msg in (udp.GVStateCmd(target_longitudinal_velocity=1.0, header_version=version),
                udp.GVDirectCmd(steer_type=2, header_version=version)):
        data = udp.encode(msg)
        assert udp.decode(data) == msg
        assert udp.classify(data) == msg.TYPE_NAME


# ----------------------------------------------------------------------------- docs/codec.md

def test_codec_doc_message_reference_matches_the_layouts():
    import importlib.util
    spec = importlib.util.spec_from_file_location('gen_launch', SRC.parent / 'tools' / 'gen_launch.py')
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    text = (SRC.parent / "docs" / "codec.md").read_text(encoding="utf-8")
    assert gen.codec_doc_with_reference(text) == text, (
        "docs/codec.md 'Message reference' is out of date: run bash tools/dev.sh regen")
