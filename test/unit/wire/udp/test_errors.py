"""Malformed input: decode raises DecodeError and nothing else."""

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers
import udp_reference
from morai_bridge.wire import udp

VECTORS = helpers.load_vectors("udp")["vectors"]
FRAMED = [v for v in VECTORS if v["framing"] != "binary33"]
IDS = [v["name"] for v in VECTORS]
FRAMED_IDS = [v["name"] for v in FRAMED]

CAPTURED_GGA = b"$GPGGA,223047.5,3714.4040,N,12646.4377,E,1,09,1.0,29.1,M,0.0,M,,*5A\r\n"
CAPTURED_RMC = (b"$GPRMC,223047.5,A,3714.4040,N,12646.4377,E,000.0,116.5,120924,000.0,E,A,*22"
                b"\r\n")


def data_of(vector):
    return bytes.fromhex(vector["hex"])


def decode_or_error(data):
    """Decode; only a message object or DecodeError is acceptable."""
    try:
        msg = udp.decode(data)
    except udp.DecodeError as exc:
        assert str(exc)
        return exc
    assert type(msg) in udp.MESSAGE_CLASSES
    return msg


def payload_offset(vector):
    return len(vector["header"]) + 4 + vector["aux_length"]


def test_empty():
    with pytest.raises(udp.DecodeError, match="empty"):
        udp.decode(b"")


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_every_truncation_is_rejected(vector):
    data = data_of(vector)
    for n in range(len(data)):
        if vector["name"] == "ego_status_94_legacy" and n == 121:
            continue  # the untailed 121-byte form of the legacy status is valid
        with pytest.raises(udp.DecodeError):
            udp.decode(data[:n])


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_over_long_is_rejected(vector):
    data = data_of(vector)
    for extra in (b"\x00", b"\r\n", bytes(100)):
        with pytest.raises(udp.DecodeError) as info:
            udp.decode(data + extra)
        assert str(len(data) + len(extra)) in str(info.value)


@pytest.mark.parametrize("vector", FRAMED, ids=FRAMED_IDS)
def test_wrong_tail_is_rejected(vector):
    data = data_of(vector)
    for tail in (b"\r\r", b"\n\r", b"\x00\x00", b"\n\n", b"\rX"):
        with pytest.raises(udp.DecodeError, match="CR LF"):
            udp.decode(data[:-2] + tail)


@pytest.mark.parametrize("vector", FRAMED, ids=FRAMED_IDS)
def test_wrong_data_length_is_rejected(vector):
    data = data_of(vector)
    h = len(vector["header"])
    dl = vector["data_length"]
    for wrong in (dl - 1, dl + 1, 0, 0xFFFFFFFF, dl + 0x100):
        bad = data[:h] + struct.pack("<I", wrong) + data[h + 4:]
        with pytest.raises(udp.DecodeError) as info:
            udp.decode(bad)
        text = str(info.value)
        assert vector["header"] in text and str(len(bad)) in text
        assert info.value.data_length == wrong
        # the message lists what the header accepts, including this vector's size
        assert f"{dl} -> " in text and str(vector["length"]) in text


def test_length_error_names_header_expected_and_received():
    vector = next(v for v in VECTORS if v["name"] == "captured_ego_status_200_parked")
    data = data_of(vector)
    bad = data[:-3] + b"\r\n"  # data_length 200 but 228 bytes
    with pytest.raises(udp.DecodeError) as info:
        udp.decode(bad)
    text = str(info.value)
    assert "#MoraiInfo$" in text and "229" in text and "228" in text
    assert info.value.expected == (229,)
    assert info.value.header == b"#MoraiInfo$" and info.value.length == 228


@pytest.mark.parametrize("data", [
    b"#NoSuchThing$" + struct.pack("<I", 4) + bytes(12) + bytes(4) + b"\r\n",
    b"#MoraiInfo" + bytes(300),                # no '$' at all
    b"#" + b"A" * 40 + b"$" + bytes(20),       # '$' beyond byte 31
    b"#\xff\xfe$" + bytes(20),                 # non-ASCII header
    b"#$",
    b"#MoraiInfo$",                            # header only
    b"#MoraiInfo$\xc8\x00",                    # half a data_length
    bytes(85),                                 # binary, msg_type 0
    b"\x00\x00\x00\x00A\x00\x00\x00" + bytes(10),  # msg_type 65, wrong length
    b"\x00\x00\x00\x00B\x00\x00\x00" + bytes(42),  # msg_type 66, wrong length
    b"MOR" + bytes(100) + b"AI",               # camera stream
    b"\x00",
    b"$",
    b"$GPGGA",
    b"$GPGGA,223047.5,3714.4040,N,12646.4377,E,1,09,1.0,29.1,M,0.0,M,,*5B\r\n",  # checksum
    b"$GPGGA,223047.5,3714.4040,N,12646.4377,E,1,09,1.0,29.1,M,0.0,M,,\r\n",  # none
    b"$GPZZZ,1,2,3*" + b"%02X\r\n" % 0,        # unknown sentence type
    b"$GPGGA,\xff\xfe*00\r\n",                 # non-ASCII
    CAPTURED_GGA + CAPTURED_RMC,               # two sentences in one datagram
    b"$\x00\x00\x00",
])
def test_garbage_is_rejected(data):
    with pytest.raises(udp.DecodeError):
        udp.decode(data)


def test_unknown_header_error_names_it():
    data = b"#NoSuchThing$" + struct.pack("<I", 4) + bytes(16) + b"\r\n"
    with pytest.raises(udp.DecodeError, match="NoSuchThing") as info:
        udp.decode(data)
    assert str(len(data)) in str(info.value)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2200))
def test_random_bytes(data):
    decode_or_error(data)


PREFIXES = sorted(udp.HEADERS) + [b"$GP", b"$", b"#"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PREFIXES), st.binary(max_size=300))
def test_random_bytes_after_a_known_prefix(prefix, rest):
    decode_or_error(prefix + rest)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(udp.HEADERS)), st.integers(0, 2200), st.binary(max_size=64))
def test_valid_header_and_length_random_payload(header, data_length, noise):
    info = udp.HEADERS[header]
    noise = noise or b"\0"       # an empty pattern would make an empty payload, not data_length bytes
    head = header + struct.pack("<I", data_length) + bytes(info.aux_length)
    # the payload is data_length bytes and a CR LF follows, except in a variant that says otherwise
    # (the legacy 961-byte Multi Ego Setting: data_length leaves out an 8-byte prefix, no CR LF)
    size, tail = data_length, b"\r\n"
    for v in udp.VARIANTS:
        if v.header == header and v.data_length == data_length:
            size = udp_reference.payload_size(v)
            tail = b"\r\n" if v.total_lengths[0] == len(head) + size + 2 else b""
    data = head + (noise * (size // len(noise) + 1))[:size] + tail
    result = decode_or_error(data)
    if data_length in info.types:
        assert not isinstance(result, udp.DecodeError)  # any payload bytes are valid


def flips(data):
    for i in range(len(data)):
        for bit in range(8):
            yield i, data[:i] + bytes([data[i] ^ (1 << bit)]) + data[i + 1:]


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_bit_flips(vector):
    data = data_of(vector)
    framed = vector["framing"] != "binary33"
    protected = payload_offset(vector) if framed else 8  # header (+ data_length/aux) or msg_type
    step = 1 if len(data) < 300 else 7  # sample the large packets to keep this fast
    for i, flipped in flips(data):
        if i % step and not (i < protected or i >= len(data) - 2):
            continue
        result = decode_or_error(flipped)
        in_header = i < len(vector["header"]) + 4 if framed else 4 <= i < 8
        in_tail = framed and i >= len(data) - 2
        if in_header or in_tail:
            assert isinstance(result, udp.DecodeError), (i, flipped[:40])


@pytest.mark.parametrize("sentence", [CAPTURED_GGA, CAPTURED_RMC])
def test_nmea_bit_flips(sentence):
    rejected = 0
    for i, flipped in flips(sentence):
        # A flip may still leave a valid sentence (e.g. 'A' -> 'a' in the
        # checksum); what matters is that only DecodeError escapes.
        result = decode_or_error(flipped)
        rejected += isinstance(result, udp.DecodeError)
        if i == 0:
            assert isinstance(result, udp.DecodeError)
    assert rejected > 0.9 * 8 * len(sentence)  # the checksum catches nearly all


def test_wrong_input_type_is_a_type_error():
    with pytest.raises(TypeError):
        udp.decode("#MoraiInfo$")
    with pytest.raises(TypeError):
        udp.decode(229)


def test_bytes_like_inputs_are_accepted():
    data = data_of(VECTORS[0])
    assert udp.decode(bytearray(data)) == udp.decode(memoryview(data)) == udp.decode(data)
