"""wire/udp/framing.py: the dispatch tables of a compiled registry (Framing._index), and what is done with a
datagram the fast path does not take.  Refusals of every kind through the public API:
test_errors.py; decode_tolerant: test_udp_tolerant.py; truncated datagrams:
test_capture_truncated.py."""

import struct

import pytest

from morai_bridge.wire import udp
from morai_bridge.wire.udp.codec import Protocol
from morai_bridge.wire.udp.framing import TAIL, Framing, HeaderInfo
from morai_bridge.wire.udp.schema import Field, Registry, Variant, define_message

def registry(*messages):
    """A registry of ``(name, header, data_length, aux_length)`` messages of uint16 fields."""
    reg = Registry("test_framing", data_length_field=False)
    for name, header, dl, aux in messages:
        define_message(name, name.lower(), header, "user->sim", "A test message.",
                       [Variant(dl, tuple(Field(f"n{i}", "H", "count") for i in range(dl // 2)))], current=dl, aux_length=aux, registry=reg)
    return reg


def test_the_fast_path_table_holds_every_tailed_framed_variant_by_its_size():
    p = udp.PROTOCOL
    assert isinstance(p, Framing)
    for size, codecs in p._by_size.items():
        for c in codecs:
            assert c.spec.header is not None and c.totals[size] is True
    for c in p._by_key.values():
        for size, tailed in c.totals.items():
            assert (c in p._by_size.get(size, ())) == tailed
    assert {c.spec.msg_type for c in p._by_msg_type.values()} == {65, 66}


def test_headers_list_every_data_length_with_its_type_and_sizes():
    info = udp.HEADERS[b"#MoraiInfo$"]
    assert isinstance(info, HeaderInfo) and info.aux_length == 12
    assert info.types[200] == "ego_status" and info.lengths[200] == (229,)
    assert info.lengths[94] == (123, 121)                  # the untailed 22.R2 variant
    with pytest.raises(TypeError):
        info.types[1] = "x"                                 # read-only views


def test_a_registry_with_two_variants_of_one_key_or_two_aux_lengths_is_refused():
    with pytest.raises(ValueError, match="duplicate variant"):
        Protocol("Two", registry(("A", b"#Same$", 2, 12), ("B", b"#Same$", 2, 12)))
    with pytest.raises(ValueError, match="aux length differs"):
        Protocol("Aux", registry(("A", b"#Same$", 2, 12), ("B", b"#Same$", 4, 20)))
    p = Protocol("Both", registry(("A", b"#Same$", 2, 12), ("B", b"#Same$", 4, 12)))
    assert p.HEADERS[b"#Same$"].types == {2: "a", 4: "b"}


def test_a_datagram_of_no_framing_names_the_framings_the_protocol_takes():
    with pytest.raises(udp.DecodeError) as info:
        udp.decode(bytes(range(1, 10)))
    assert str(info.value) == ("not a MORAI datagram: starts with b'\\x01\\x02\\x03\\x04\\x05\\x06"
                               "\\x07\\x08' (expected '#NAME$' framing, '$' NMEA text, or a binary "
                               "header with msg_type 65/66); received 9 bytes")
    own = Protocol("Own", registry(("A", b"#A$", 2, 12)))
    with pytest.raises(udp.DecodeError, match=r"not an Own datagram: .*\(expected '#NAME\$' "
                                              r"framing\); received 3 bytes"):
        own.decode(b"xyz")


def test_refusals_carry_what_is_known():
    data = udp.encode(udp.make(udp.EgoVehicleStatus))
    with pytest.raises(udp.DecodeError) as info:
        udp.decode(data[:-1])
    e = info.value
    assert (e.header, e.data_length, e.length, e.expected) == (b"#MoraiInfo$", 200, 228, (229,))
    with pytest.raises(udp.DecodeError) as info:
        udp.decode(b"#MoraiInfo$" + struct.pack("<I", 7) + bytes(20) + TAIL)
    assert (info.value.header, info.value.data_length) == (b"#MoraiInfo$", 7)
    assert "200 -> 229 B" in str(info.value)


def test_header_of_and_classify_read_no_further_than_they_need():
    p = udp.PROTOCOL
    assert p.header_of(b"#MoraiInfo$xx") == b"#MoraiInfo$" == Protocol.header_of(b"#MoraiInfo$")
    assert p.header_of(123) is None and p.header_of(b"") is None and p.header_of(b"#" + bytes(40)) is None
    assert udp.classify(b"#MoraiInfo$" + struct.pack("<I", 200)) == "ego_status"    # no payload needed
    assert udp.classify(b"$GPGGA,1*00\r\n") == udp.NmeaSentence.TYPE_NAME
    assert udp.classify(object()) is None and udp.classify(b"") is None
