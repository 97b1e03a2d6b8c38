"""ERP-42 frame codec: every vector frame, error handling, round trips."""

import struct

import pytest
from hypothesis import given, strategies as st

import helpers
from morai_bridge.wire import erp42
from morai_bridge.wire.erp42 import (
    COMMAND_LEN, FEEDBACK_LEN, Command, Erp42Error, Feedback,
    decode_command, decode_feedback, encode_command, encode_feedback)

V = helpers.load_vectors("erp42")

CMD_FRAMES = [v for v in V["frames"] if v["direction"] == "upper_to_pcu"]
FB_FRAMES = [v for v in V["frames"] if v["direction"] == "pcu_to_upper"]
ids = lambda v: v["name"]  # noqa: E731


def test_vector_file_is_complete():
    assert len(CMD_FRAMES) == 9 and len(FB_FRAMES) == 9


def test_struct_formats_match_vectors():
    up, down = V["formats"]["upper_to_pcu"], V["formats"]["pcu_to_upper"]
    assert erp42.COMMAND_STRUCT.format == up["struct"]
    assert erp42.FEEDBACK_STRUCT.format == down["struct"]
    assert erp42.COMMAND_STRUCT.size == COMMAND_LEN == up["length"]
    assert erp42.FEEDBACK_STRUCT.size == FEEDBACK_LEN == down["length"]
    assert list(Command._fields) == up["fields"]
    assert list(Feedback._fields) == down["fields"]


@pytest.mark.parametrize("vec", CMD_FRAMES, ids=ids)
def test_command_vectors(vec):
    raw = bytes.fromhex(vec["hex"])
    cmd = Command(**vec["fields"])
    assert encode_command(cmd) == raw
    assert decode_command(raw) == cmd
    assert decode_command(bytearray(raw)) == cmd
    assert decode_command(memoryview(raw)) == cmd


@pytest.mark.parametrize("vec", FB_FRAMES, ids=ids)
def test_feedback_vectors(vec):
    raw = bytes.fromhex(vec["hex"])
    fb = Feedback(**vec["fields"])
    assert encode_feedback(fb) == raw
    assert decode_feedback(raw) == fb


def test_byte_order_differs_by_direction():
    # 10.0 km/h: big-endian 00 64 in a command, little-endian 64 00 in feedback.
    assert encode_command(Command(speed=100))[6:8] == b"\x00\x64"
    fb = Feedback(1, 0, 0, 100, 0, 1, 0, 0)
    assert encode_feedback(fb)[6:8] == b"\x64\x00"


def test_acceptance_example_bytes():
    c = Command(aorm=1, estop=0, gear=0, speed=100, steer=-407, brake=1, alive=0)
    raw = encode_command(c)
    assert raw[6:10] == struct.pack(">Hh", 100, -407) == b"\x00\x64\xfe\x69"


@pytest.mark.parametrize("field,value", [
    ("aorm", 2), ("estop", 2), ("gear", 3), ("gear", -1), ("speed", -1), ("speed", 65536),
    ("steer", 32768), ("steer", -32769), ("brake", 256), ("brake", -1), ("alive", 256),
    ("alive", -1), ("speed", 10.0), ("steer", "1"),
])
def test_encode_command_refuses(field, value):
    with pytest.raises(Erp42Error) as ei:
        encode_command(Command()._replace(**{field: value}))
    assert field in str(ei.value)


def test_encode_command_allows_out_of_protocol_range_that_fits_wire():
    # Protocol clamping is the mapping layer's job; the codec only guards the wire type.
    raw = encode_command(Command(speed=250, steer=-2500, brake=0))
    assert decode_command(raw) == Command(speed=250, steer=-2500, brake=0)


@pytest.mark.parametrize("field,value", [("enc", 2 ** 31), ("enc", -2 ** 31 - 1), ("gear", 5),
                                         ("alive", 300)])
def test_encode_feedback_refuses(field, value):
    fb = Feedback(1, 0, 0, 0, 0, 1, 0, 0)._replace(**{field: value})
    with pytest.raises(Erp42Error, match=field):
        encode_feedback(fb)


def test_erp42_error_is_value_error():
    assert issubclass(Erp42Error, ValueError)


def test_decode_errors_say_what_was_expected_and_what_arrived():
    good = bytes.fromhex(CMD_FRAMES[0]["hex"])
    with pytest.raises(Erp42Error, match="14 bytes, got 13"):
        decode_command(good[:-1])
    with pytest.raises(Erp42Error, match="header"):
        decode_command(b"ABC" + good[3:])
    with pytest.raises(Erp42Error, match="trailer 0d 00"):
        decode_command(good[:-1] + b"\x00")
    with pytest.raises(Erp42Error, match="AorM 2"):
        decode_command(good[:3] + b"\x02" + good[4:])
    with pytest.raises(Erp42Error, match="E-STOP 7"):
        decode_command(good[:4] + b"\x07" + good[5:])
    with pytest.raises(Erp42Error, match="GEAR 3"):
        decode_command(good[:5] + b"\x03" + good[6:])
    with pytest.raises(Erp42Error, match="18 bytes, got 14"):
        decode_feedback(good)


u8 = st.integers(0, 255)
flags = st.integers(0, 1)
gears = st.integers(0, 2)


@given(flags, flags, gears, st.integers(0, 0xFFFF), st.integers(-0x8000, 0x7FFF), u8, u8)
def test_command_round_trip(aorm, estop, gear, speed, steer, brake, alive):
    c = Command(aorm, estop, gear, speed, steer, brake, alive)
    raw = encode_command(c)
    assert len(raw) == COMMAND_LEN and raw[:3] == b"STX" and raw[-2:] == b"\r\n"
    assert decode_command(raw) == c


@given(flags, flags, gears, st.integers(0, 0xFFFF), st.integers(-0x8000, 0x7FFF), u8,
       st.integers(-2 ** 31, 2 ** 31 - 1), u8)
def test_feedback_round_trip(aorm, estop, gear, speed, steer, brake, enc, alive):
    fb = Feedback(aorm, estop, gear, speed, steer, brake, enc, alive)
    raw = encode_feedback(fb)
    assert len(raw) == FEEDBACK_LEN
    assert decode_feedback(raw) == fb
