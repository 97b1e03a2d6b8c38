"""The EmuSync codec of the lock-step extension (wire/udp/lockstep.py): sizes, byte layouts, round trips,
encode and decode errors.  The emulator's sync mode over UDP: emu/sim/test_sync.py."""

import math
import struct

import pytest
from morai_bridge.wire.udp import lockstep
from morai_bridge.wire import udp
from morai_bridge.wire.udp.lockstep import EmuSyncCmd, EmuSyncState, EmuSyncTick

# ----------------------------------------------------------------------------- codec


def test_sizes_and_framing():
    expected = {EmuSyncCmd: (b"#EmuSyncCmd$", 35), EmuSyncTick: (b"#EmuSyncTick$", 31),
                EmuSyncState: (b"#EmuSyncState$", 55)}
    for cls, (header, dl) in expected.items():
        d = lockstep.encode(cls())
        h = len(header)
        assert d[:h] == header and struct.unpack_from("<I", d, h)[0] == dl
        assert d[h + 4:h + 16] == bytes(12) and d.endswith(b"\r\n")
        assert len(d) == h + 4 + 12 + dl + 2 == lockstep.HEADERS[header].length
        assert sum(size for _, _, _, size in lockstep.layout(cls)) == dl


def test_byte_layout_of_each_message():
    d = lockstep.encode(EmuSyncCmd(True, 100, "bridge"))
    assert d[28:] == b"\x01" + struct.pack("<I", 100) + b"bridge".ljust(30, b"\x00") + b"\r\n"
    d = lockstep.encode(EmuSyncTick(7, True, 4, 2, 20.0, 0.5, 0.25, 0.125, -0.5))
    assert d[29:-2] == struct.pack("<Q?bb5f", 7, True, 4, 2, 20.0, 0.5, 0.25, 0.125, -0.5)
    d = lockstep.encode(EmuSyncState(2, True, False, True, 2, 2 ** 40, 20, 12, 340_000_000, "u"))
    assert d[30:-2] == struct.pack("<B???BQIii30s", 2, True, False, True, 2, 2 ** 40, 20, 12,
                                   340_000_000, b"u")


@pytest.mark.parametrize("msg", [
    EmuSyncCmd(), EmuSyncCmd(True, 20, "x" * 30), EmuSyncTick(), EmuSyncTick(2 ** 64 - 1),
    EmuSyncTick(5, True, 2, 3, -1.5, 2.25, 1.0, 0.0, 1.0), EmuSyncState(),
    EmuSyncState(1, True, True, False, 0, 123, 100, -5, 999_999_999, "user 1"),
])
def test_round_trip(msg):
    assert lockstep.decode(lockstep.encode(msg)) == msg
    assert lockstep.classify(lockstep.encode(msg)) == type(msg).__name__


@pytest.mark.parametrize("msg,field", [
    (EmuSyncCmd(user_id="x" * 31), "user_id"), (EmuSyncCmd(user_id="ü"), "user_id"),
    (EmuSyncCmd(time_step_ms=-1), "time_step_ms"), (EmuSyncTick(frame=-1), "frame"),
    (EmuSyncTick(gear=200), "gear"), (EmuSyncTick(steer="0"), "steer"),
    (EmuSyncTick(velocity=1e39), "velocity"), (EmuSyncState(sync_on=2), "sync_on"),
])
def test_encode_errors_name_the_field(msg, field):
    with pytest.raises(udp.EncodeError) as e:
        lockstep.encode(msg)
    assert e.value.field == field


def test_nan_is_encoded_as_given():
    m = lockstep.decode(lockstep.encode(EmuSyncTick(steer=float("nan"))))
    assert math.isnan(m.steer)


GOOD = lockstep.encode(EmuSyncTick(3))


@pytest.mark.parametrize("data", [
    b"", b"x", b"#EmuSyncTick", b"#EmuSyncTick$", GOOD[:-1], GOOD + b"\x00",
    GOOD[:-2] + b"\n\r", GOOD[:13] + struct.pack("<I", 30) + GOOD[17:],
    b"#MoraiInfo$" + bytes(220), udp.encode(udp.make(udp.LampControl)),
])
def test_decode_errors(data):
    with pytest.raises(udp.DecodeError):
        lockstep.decode(data)


def test_decode_rejects_non_bytes():
    with pytest.raises(TypeError):
        lockstep.decode("text")
    with pytest.raises(TypeError):
        lockstep.encode(udp.make(udp.LampControl))


def test_layouts_are_declared_with_define_message_in_their_own_registry():
    from morai_bridge.wire.udp import schema as udp_schema
    assert lockstep.MESSAGE_CLASSES == (EmuSyncCmd, EmuSyncTick, EmuSyncState)
    assert all(c.__module__ == "morai_bridge.wire.udp.lockstep" for c in lockstep.MESSAGE_CLASSES)
    assert not any(c in lockstep.MESSAGE_CLASSES for c in udp.MESSAGE_CLASSES)
    assert not any(s.cls in lockstep.MESSAGE_CLASSES for s in udp_schema.SPECS)
    assert "data_length" not in EmuSyncCmd._fields
    assert (EmuSyncCmd().time_step_ms, EmuSyncTick().cmd_type) == (20, 1)
    assert lockstep.make(EmuSyncTick, frame=4) == EmuSyncTick(4)
    assert "time_step_ms (I): ms;" in EmuSyncCmd.__doc__
    for msg in (EmuSyncCmd(True, 100, "bridge"), EmuSyncTick(3), EmuSyncState()):
        with pytest.raises(udp.DecodeError, match="unknown header"):
            udp.decode(lockstep.encode(msg))    # not a MORAI packet
        assert udp.classify(lockstep.encode(msg)) is None


@pytest.mark.parametrize("msg,field", [
    (EmuSyncTick(gear=True), "gear"), (EmuSyncTick(frame=1.0), "frame"),
    (EmuSyncTick(velocity=True), "velocity"), (EmuSyncCmd(start=1.0), "start"),
    (EmuSyncTick(velocity=3.4028235e38), "velocity"), (EmuSyncCmd(user_id=b"x"), "user_id"),
])
def test_encode_is_strict_about_value_types(msg, field):
    with pytest.raises(udp.EncodeError) as e:
        lockstep.encode(msg)
    assert e.value.field == field
