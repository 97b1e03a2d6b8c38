"""The codec (wire.udp.decode) against the field-by-field test oracle (udp_reference.py, beside this file),
over every '#NAME$' and binary variant: random payload bytes (odd floats, text with padding and
stray bytes, empty slots anywhere in a record block, half-empty pairs), the codec's samples and
test vectors, and broken datagrams (cut, extended, wrong tail, wrong data_length).  The two must
give the same message or both refuse."""
import random
import struct

import pytest

import helpers
import udp_reference
from morai_bridge.wire import udp
from morai_bridge.wire.udp import samples as udp_samples

FRAMED = [i for i in udp.VARIANTS if i.header is not None]
BINARY = [i for i in udp.VARIANTS if i.header is None]


def outcome(decoder, data):
    try:
        return repr(decoder(data))          # repr: NaN compares equal to itself
    except udp.DecodeError:
        return 'DecodeError'


def same(data):
    a, b = outcome(udp.decode, data), outcome(udp_reference.decode, data)
    assert a == b, f'codec {a}\noracle {b}\nfor {data!r}'
    return a


def random_payload(rng, info):
    size = udp_reference.payload_size(info)
    fixed = size - (info.records.record_size * info.records.count if info.records is not None else 0)
    body = bytearray(rng.getrandbits(8) for _ in range(fixed))
    pos = 0
    for f in info.fields:                       # texts: ASCII, padded, sometimes with a stray byte
        if f.is_text:
            text = bytes(rng.choice(b'ABC019 $') for _ in range(rng.randint(0, f.size)))
            pad = rng.choice([b'\x00', b' '])
            body[pos:pos + f.size] = (text + pad * f.size)[:f.size]
        pos += f.size
    if info.records is not None:
        rs = info.records
        for k in range(rs.count):
            kind = rng.random()
            if kind < 0.4:
                rec = bytes(rs.record_size)
            elif kind < 0.5:                    # the first number zero, the rest not
                rec = bytes(4) + bytes(rng.getrandbits(8) for _ in range(rs.record_size - 4))
            else:
                rec = bytes(rng.getrandbits(8) for _ in range(rs.record_size))
            body += rec
    return bytes(body)


def framed(info, payload, tail=None):
    """The datagram of a framed variant; its CR LF tail where the variant's length has one."""
    head = info.header + struct.pack('<I', info.data_length) + bytes(info.aux_length)
    if tail is None:
        tail = b'\r\n' if info.total_lengths[0] == len(head) + len(payload) + 2 else b''
    return head + payload + tail


@pytest.mark.parametrize('info', FRAMED + BINARY, ids=lambda i: f'{i.cls.__name__}-{i.data_length or i.msg_type}')
def test_random_payloads_decode_the_same(info):
    rng = random.Random(hash((info.cls.__name__, info.data_length, info.msg_type)) & 0xFFFF)
    decoded = 0
    for _ in range(300):
        payload = random_payload(rng, info)
        if info.header is None:
            data = bytearray(payload)
            struct.pack_into('<I', data, 4, info.msg_type)
            data = bytes(data)
        else:
            data = framed(info, payload)
        decoded += same(data) != 'DecodeError'
        for broken in (data[:-1], data + b'\x00', data[:-2] + b'\n\r', data[:len(data) // 2]):
            same(broken)
    assert decoded == 300          # every well-formed datagram decodes


def test_untailed_and_wrong_data_length():
    for info in FRAMED:
        payload = bytes(udp_reference.payload_size(info))
        same(framed(info, payload, b''))            # accepted only where the variant allows it
        wrong = info.header + struct.pack('<I', info.data_length + 1) + bytes(info.aux_length) + payload + b'\r\n'
        same(wrong)


def test_samples_and_vectors():
    n = 0
    for _, m in udp_samples.per_variant() + list(udp_samples.per_stream().items()):
        if not isinstance(m, udp.NmeaSentence):
            assert same(udp.encode(m)) != 'DecodeError'
            n += 1
    for v in helpers.load_vectors('udp')['vectors']:
        data = bytes.fromhex(v['hex'])
        if data[:1] != b'$':
            same(data)
            n += 1
    assert n >= 2 * len(FRAMED + BINARY)


def test_the_check_sees_a_difference(monkeypatch):
    """A reference that reads one field wrongly is caught."""
    real = udp_reference.read_fields

    def off_by_one(fields, data, pos):
        values, end = real(fields, data, pos)
        if 'gear' in values:
            values['gear'] += 1
        return values, end
    monkeypatch.setattr(udp_reference, 'read_fields', off_by_one)
    m = udp_samples.per_stream()['ego_status']
    with pytest.raises(AssertionError):
        same(udp.encode(m))
