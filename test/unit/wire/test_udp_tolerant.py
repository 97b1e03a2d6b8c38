"""Tolerant decoding of datagrams with an unexpected data_length (fidelity item 6).

A datagram whose total length (with its CR LF tail) identifies exactly one variant
of its header but whose data_length disagrees - MORAI's own example writes
data_length 0 for the NPC vehicle collision - is decoded by
``udp.decode_tolerant`` with a warning naming the received and the expected
data_length; the strict ``udp.decode`` (fuzz and property guarantees) still
rejects it, and anything else stays a DecodeError.
"""

import struct

import pytest

from morai_bridge.wire import udp
from morai_bridge.wire.udp.codec import Protocol
from morai_bridge.wire.udp.schema import Field, Registry, Variant, define_message


def with_data_length(datagram: bytes, data_length: int) -> bytes:
    """``datagram`` with its data_length field overwritten."""
    end = datagram.index(b"$", 1) + 1
    return datagram[:end] + struct.pack("<I", data_length) + datagram[end + 4:]


# ----------------------------------------------------------------------------- item 6

def _npc_pair(k):
    rec = udp.NpcCollisionRecord(obj_type=1, obj_id=k, pos_x=1.5 * k, pos_y=-2.0, pos_z=0.25,
                                 heading=90.0, size_x=4.5, size_y=1.8, size_z=1.5,
                                 vel_x=36.0, vel_y=0.0, vel_z=0.0, acc_x=0.5, acc_y=0.0,
                                 acc_z=0.0)
    return (rec, rec._replace(obj_id=k + 100))


CASES = [
    # (message, wrong data_length) - as MORAI's NPC collision example sends it, and others
    (udp.make(udp.NpcVehicleCollision, pairs=(_npc_pair(1), _npc_pair(2))), 0),
    (udp.make(udp.ImuData, sec=5, nsec=7, ori_w=1.0, lin_acc_z=9.80665), 0),
    (udp.make(udp.ImuData, sec=5, nsec=7, ori_w=1.0), 99),
    (udp.make(udp.SimStatus, platform=2, stage=2, status=1, command_option="x"), 0),
    (udp.make(udp.GetIntersectionStatus, intersection_index=7, intersection_status=2), 0),
    (udp.make(udp.EgoVehicleStatus, sec=1, nsec=2, pos_x=3.0, link_id="A1"), 0),
    (udp.make(udp.EgoVehicleStatus, 152, sec=1, nsec=2, pos_x=3.0), 200),  # another variant's
    (udp.make(udp.CollisionData, sec=1, nsec=2), 148 + 4096),
    (udp.make(udp.GetTrafficLightStatus, traffic_light_index="C119BS010007",
              traffic_light_status=16), 0),
]


@pytest.mark.parametrize("msg,wrong", CASES)
def test_total_length_identifies_the_message(msg, wrong):
    good = udp.encode(msg)
    bad = with_data_length(good, wrong)
    with pytest.raises(udp.DecodeError):
        udp.decode(bad)                          # strict stays strict
    decoded, warning = udp.decode_tolerant(bad)
    assert decoded == udp.decode(good)
    assert isinstance(warning, udp.DataLengthMismatch)
    assert (warning.header, warning.data_length, warning.expected, warning.length) == \
        (msg.HEADER, wrong, msg.data_length, len(good))
    assert warning.type_name == msg.TYPE_NAME
    text = str(warning)
    assert f"data_length {wrong}" in text and f"expected {msg.data_length}" in text
    # bytearray / memoryview as for decode
    assert udp.decode_tolerant(bytearray(bad))[0] == decoded
    assert udp.decode_tolerant(memoryview(bad))[0] == decoded


def test_well_formed_datagrams_have_no_warning():
    for msg, _ in CASES:
        data = udp.encode(msg)
        assert udp.decode_tolerant(data) == (udp.decode(data), None)
    gga = b"$GPGGA,223047.5,3714.4040,N,12646.4377,E,1,09,1.0,29.1,M,0.0,M,,*5A\r\n"
    assert udp.decode_tolerant(gga) == (udp.decode(gga), None)


@pytest.mark.parametrize("bad", [
    with_data_length(udp.encode(udp.make(udp.NpcVehicleCollision)), 0)[:-2] + b"XX",  # no tail
    with_data_length(udp.encode(udp.make(udp.NpcVehicleCollision)), 0)[:1000] + b"\r\n",
    with_data_length(udp.encode(udp.make(udp.NpcVehicleCollision)), 0) + b"\r\n",
    udp.encode(udp.make(udp.EgoVehicleStatus))[:121],       # 94-variant length, no CR LF
    udp.encode(udp.make(udp.EgoVehicleStatus))[:100],
    b"#NoSuchHeader$" + bytes(20) + b"\r\n",
    b"#MoraiInfo$\x00\x00",
    b"", b"\x00" * 50, b"$GPGGA,x*00\r\n",
])
def test_otherwise_still_a_decode_error(bad):
    with pytest.raises(udp.DecodeError):
        udp.decode_tolerant(bad)


def test_two_variants_of_that_length_are_not_guessed():
    reg = Registry("test_fidelity_ambiguous")
    fields = (Field("a", "I", "-"), Field("b", "I", "-"))
    Amb = define_message("Amb", "amb", b"#Amb$", "sim->user", "Two variants of one size.",
                         [Variant(8, fields),
                          Variant(99, fields, prefix_outside_length=True)], current=8,
                         registry=reg)
    proto = Protocol("Amb", reg)
    good = proto.encode(Amb(a=1, b=2, data_length=8))
    assert len(good) == len(proto.encode(Amb(a=1, b=2, data_length=99)))
    with pytest.raises(udp.DecodeError):
        proto.decode_tolerant(with_data_length(good, 5))
    assert proto.decode_tolerant(good) == (Amb(1, 2, 8), None)
