"""Camera stream codec: MOR chunks, frame reassembly, BOX datagrams, demux.

Datagrams are also read back here with plain ``struct`` at the offsets of the
spec's tables (shared/spec/sensors.md sections 1 and 2), independently of the
module's own layout constants.
"""

import io
import random
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morai_bridge.wire import camera
from morai_bridge.wire.camera import (BoxObject, EncodeError, FrameAssembler, ImageChunk,
                                      SensorDecodeError)
from morai_bridge.wire.udp import DecodeError

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# An 8x8 baseline JPEG (made once with PIL, quality 50), so that a real JPEG goes
# through even where PIL is not installed.
TINY_JPEG = bytes.fromhex(
    "ffd8ffe000104a46494600010100000100010000ffdb004300100b0c0e0c0a100e0d0e1211101318281a1816"
    "16183123251d283a333d3c3933383740485c4e404457453738506d51575f626768673e4d71797064785c6567"
    "63ffdb0043011112121815182f1a1a2f634238426363636363636363636363636363636363636363636363"
    "636363636363636363636363636363636363636363636363636363ffc00011080008000803012200021101"
    "031101ffc4001f0000010501010101010100000000000000000102030405060708090a0bffc400b5100002"
    "010303020403050504040000017d01020300041105122131410613516107227114328191a1082342b1c115"
    "52d1f02433627282090a161718191a25262728292a3435363738393a434445464748494a53545556575859"
    "5a636465666768696a737475767778797a838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aa"
    "b2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6"
    "f7f8f9faffc4001f0100030101010101010101010000000000000102030405060708090a0bffc400b51100"
    "020102040403040705040400010277000102031104052131061241510761711322328108144291a1b1c109"
    "233352f0156272d10a162434e125f11718191a262728292a35363738393a434445464748494a5354555657"
    "58595a636465666768696a737475767778797a82838485868788898a92939495969798999aa2a3a4a5a6a7"
    "a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae2e3e4e5e6e7e8e9eaf2f3f4f5"
    "f6f7f8f9faffda000c03010002110311003f00c7a28a2b84fa83ffd9")

V24_MAX = 64979      # spec 1.1: 65,000 - 19 - 2
LEGACY_MAX = 64987   # spec 1.2: 65,000 - 11 - 2
FORMS = {"v24": (19, V24_MAX), "legacy": (11, LEGACY_MAX)}


def jpeg_like(size, seed=0):
    """``size`` bytes starting with SOI and ending with EOI (when there is room)."""
    body = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes()
    if size >= 4:
        body = b"\xff\xd8" + body[2:-2] + b"\xff\xd9"
    return body


def parse_independently(datagram, form):
    """(sec, nsec, index, size, payload, tail) read at the spec's offsets."""
    if form == "v24":
        assert datagram[0:3] == b"MOR"
        sec = struct.unpack("<I", datagram[3:7])[0]      # uint32 as Onlyti/MORAI_CPP_Networks
        nsec = struct.unpack("<I", datagram[7:11])[0]
        index = struct.unpack("<i", datagram[11:15])[0]
        size = struct.unpack("<i", datagram[15:19])[0]
        payload = datagram[19:19 + size]
    else:
        assert datagram[0:3] == b"MOR"
        sec = nsec = None
        index = struct.unpack("<i", datagram[3:7])[0]
        size = struct.unpack("<i", datagram[7:11])[0]
        payload = datagram[11:11 + size]
    return sec, nsec, index, size, payload, datagram[-2:]


# ----------------------------------------------------------------------------- chunking

SIZES = [0, 1, 2, 100, V24_MAX - 1, V24_MAX, V24_MAX + 1, 2 * V24_MAX, 2 * V24_MAX + 1,
         3 * V24_MAX - 1, 3 * V24_MAX, LEGACY_MAX, 3 * LEGACY_MAX, 200000]


@pytest.mark.parametrize("form", ["v24", "legacy"])
@pytest.mark.parametrize("padded", [True, False], ids=["padded", "short"])
@pytest.mark.parametrize("size", SIZES)
def test_chunking_and_reassembly(form, padded, size):
    hs, cmax = FORMS[form]
    jpeg = jpeg_like(size, seed=size)
    grams = camera.encode_frame(jpeg, sec=1700000000, nsec=123456789, header=form, padded=padded)
    assert len(grams) == max(1, -(-size // cmax))
    rebuilt = b""
    for i, g in enumerate(grams):
        sec, nsec, index, csize, payload, tail = parse_independently(g, form)
        assert index == i
        assert tail == (b"EI" if i == len(grams) - 1 else b"AI")
        assert csize == min(cmax, size - i * cmax)
        if form == "v24":
            assert (sec, nsec) == (1700000000, 123456789)
        if padded:
            assert len(g) == 65000 and g[64998:65000] == tail
            assert g[hs + csize:64998] == bytes(64998 - hs - csize)   # zero fill
        else:
            assert len(g) == hs + csize + 2
        rebuilt += payload
    assert rebuilt == jpeg

    asm = FrameAssembler(header=form)
    frames = [f for f in (asm.push(g) for g in grams) if f is not None]
    assert len(frames) == 1
    frame = frames[0]
    assert frame.jpeg == jpeg and frame.chunks == len(grams)
    assert (frame.sec, frame.nsec) == ((1700000000, 123456789) if form == "v24" else (None, None))
    assert asm.counters() == {"frames": 1, "chunks": len(grams), "malformed": 0,
                              "duplicates": 0, "dropped": 0}


def test_max_chunk_option_gives_three_chunks():
    jpeg = jpeg_like(2500)
    grams = camera.encode_frame(jpeg, max_chunk=1000, padded=False)
    assert [parse_independently(g, "v24")[3] for g in grams] == [1000, 1000, 500]
    asm = FrameAssembler()
    out = [asm.push(g) for g in grams]
    assert out[:2] == [None, None] and out[2].jpeg == jpeg and out[2].chunks == 3


def test_tiny_real_jpeg_round_trip():
    for form in ("v24", "legacy"):
        grams = camera.encode_frame(TINY_JPEG, sec=5, nsec=6, header=form, max_chunk=100)
        assert len(grams) == 7
        asm = FrameAssembler(header=form)
        frames = [f for f in map(asm.push, grams) if f]
        assert len(frames) == 1 and frames[0].jpeg == TINY_JPEG


def test_pil_jpeg_1280x720_round_trip():
    pil = pytest.importorskip("PIL.Image")
    noise = np.random.default_rng(7).integers(0, 256, 1280 * 720 * 3, dtype=np.uint8)
    img = pil.frombytes("RGB", (1280, 720), noise.tobytes())
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=90)
    jpeg = buf.getvalue()
    grams = camera.encode_frame(jpeg, sec=1, nsec=2)
    assert len(grams) >= 3
    asm = FrameAssembler()
    frames = [f for f in map(asm.push, grams) if f]
    assert len(frames) == 1 and frames[0].jpeg == jpeg
    back = pil.open(io.BytesIO(frames[0].jpeg))
    back.load()
    assert back.size == (1280, 720)
    assert back.tobytes() == pil.open(io.BytesIO(jpeg)).tobytes()


def test_decoder_accepts_tail_right_after_payload_with_trailing_bytes():
    # a short datagram followed by junk: the tail is found right after the payload
    g = camera.encode_frame(b"abc", padded=False)[0] + b"\x00\x00\x00"
    assert g[-2:] == b"\x00\x00"
    chunk = camera.decode_chunk(g)
    assert chunk == ImageChunk(0, True, b"abc", 0, 0)


def test_decoder_accepts_memoryview_and_bytearray():
    g = camera.encode_frame(b"xyz", sec=3, nsec=4)[0]
    assert camera.decode_chunk(memoryview(g)) == camera.decode_chunk(bytearray(g))
    with pytest.raises(TypeError):
        camera.decode_chunk("MOR")


# ----------------------------------------------------------------------------- loss

def stream(frames, form="v24", chunk=1000):
    """Datagram lists per frame: frame f is ``jpeg_like(2500 + f)`` at stamp (100 + f, f)."""
    return [camera.encode_frame(jpeg_like(2500 + f, seed=f), sec=100 + f, nsec=f, header=form,
                                max_chunk=chunk, padded=False) for f in range(frames)]


def run(asm, grams):
    return [f for f in map(asm.push, grams) if f is not None]


@pytest.mark.parametrize("form", ["v24", "legacy"])
def test_lost_chunk_drops_only_that_frame(form):
    a, b, c = stream(3, form)
    asm = FrameAssembler(header=form)
    frames = run(asm, a + [b[0], b[2]] + c)
    assert [f.jpeg for f in frames] == [jpeg_like(2500, 0), jpeg_like(2502, 2)]
    assert asm.dropped == {"missing_chunk": 1}
    assert asm.frames == 2 and asm.frames_dropped == 1


@pytest.mark.parametrize("form", ["v24", "legacy"])
def test_reordered_chunks_drop_only_that_frame(form):
    a, b, c = stream(3, form)
    asm = FrameAssembler(header=form)
    frames = run(asm, a + [b[0], b[2], b[1]] + c)
    assert [f.jpeg for f in frames] == [jpeg_like(2500, 0), jpeg_like(2502, 2)]
    assert asm.frames_dropped == 1


def test_duplicated_chunk_is_ignored_with_stamps():
    a, b, c = stream(3)
    asm = FrameAssembler()
    frames = run(asm, a + [b[0], b[1], b[1], b[2], b[2]] + c)
    assert [f.jpeg for f in frames] == [jpeg_like(2500 + i, i) for i in range(3)]
    assert asm.duplicates == 2 and asm.frames_dropped == 0


def test_duplicated_chunk_drops_the_frame_without_stamps():
    a, b, c = stream(3, "legacy")
    asm = FrameAssembler(header="legacy")
    frames = run(asm, a + [b[0], b[1], b[1], b[2]] + c)
    assert [f.jpeg for f in frames] == [jpeg_like(2500, 0), jpeg_like(2502, 2)]
    assert asm.dropped == {"out_of_order": 1}


def test_lost_first_chunk():
    a, b, c, d = stream(4)
    asm = FrameAssembler()
    frames = run(asm, a + b + c[1:] + d)         # C has no chunk 0
    assert [f.sec for f in frames] == [100, 101, 103]
    assert dict(asm.dropped) == {"missing_first": 1}   # counted once, not per chunk


def test_lost_last_chunk():
    a, b, c = stream(3)
    asm = FrameAssembler()
    frames = run(asm, a + b[:2] + c)             # B has no EI chunk
    assert [f.sec for f in frames] == [100, 102]
    assert dict(asm.dropped) == {"missing_last": 1}


def test_stamp_mismatch_and_option():
    a, b = stream(2)
    mixed = [a[0], b[1], b[2]]                   # chunk 0 of A, then B's chunks 1 and 2
    asm = FrameAssembler()
    assert run(asm, mixed) == []
    assert dict(asm.dropped) == {"stamp_mismatch": 1}
    asm = FrameAssembler(check_stamps=False)
    frames = run(asm, mixed)
    assert len(frames) == 1 and (frames[0].sec, frames[0].nsec) == (100, 0)


def test_too_many_chunks():
    grams = camera.encode_frame(jpeg_like(50), max_chunk=10, padded=False)
    asm = FrameAssembler(max_chunks=4)
    assert run(asm, grams) == []
    assert dict(asm.dropped) == {"too_many_chunks": 1}
    asm = FrameAssembler(max_chunks=5)
    assert len(run(asm, grams)) == 1


def test_single_chunk_frames_stream():
    asm = FrameAssembler()
    for i in range(50):
        frame = asm.push(camera.encode_frame(TINY_JPEG, sec=i, nsec=0)[0])
        assert frame is not None and frame.sec == i and frame.chunks == 1
    assert asm.frames == 50 and asm.chunks == 50


# ----------------------------------------------------------------------------- malformed

def test_malformed_lengths_and_fields():
    good = camera.encode_frame(b"0123456789", padded=False)[0]
    for n in range(len(good)):
        with pytest.raises(SensorDecodeError):
            camera.decode_chunk(good[:n] if n < 21 else good[:n - 2] + b"ZZ")
    reasons = {}
    for name, g in {
        "header": b"MOX" + good[3:],
        "index": good[:11] + struct.pack("<i", -1) + good[15:],
        "size": good[:15] + struct.pack("<i", 11) + good[19:],
        "size2": good[:15] + struct.pack("<i", -1) + good[19:],
        "size3": good[:15] + struct.pack("<i", V24_MAX + 1) + good[19:],
        "tail": good[:-2] + b"XI",
        "length": b"MOR",
    }.items():
        with pytest.raises(SensorDecodeError) as info:
            camera.decode_chunk(g)
        assert isinstance(info.value, DecodeError) and isinstance(info.value, ValueError)
        reasons[name] = info.value.reason
    assert reasons == {"header": "header", "index": "index", "size": "size", "size2": "size",
                       "size3": "size", "tail": "tail", "length": "length"}


def test_assembler_counts_malformed_and_keeps_going():
    asm = FrameAssembler()
    for junk in (b"", b"M", b"MOR" + bytes(30), b"BOX" + bytes(30), bytes(65000)):
        assert asm.push(junk) is None
    assert asm.malformed == 5 and asm.last_error
    assert asm.push(camera.encode_frame(b"ok")[0]).jpeg == b"ok"


def test_every_short_length_with_each_prefix():
    rnd = random.Random(3)
    for prefix in (b"MOR", b"BOX", b"B", b"M", b""):
        for n in range(0, 120):
            data = (prefix + bytes(rnd.getrandbits(8) for _ in range(n)))[:n]
            for form in ("v24", "legacy"):
                for decode in (camera.decode_chunk, camera.decode_boxes):
                    try:
                        decode(data, form)
                    except SensorDecodeError as exc:
                        assert exc.reason and str(exc)


@SETTINGS
@given(st.binary(max_size=200))
def test_fuzz_decoders_raise_only_their_error(data):
    for form in ("v24", "legacy"):
        try:
            camera.decode_chunk(data, form)
        except SensorDecodeError:
            pass
        try:
            camera.decode_boxes(data, form)
        except SensorDecodeError:
            pass
    FrameAssembler().push(data)


@SETTINGS
@given(st.integers(0, 30), st.binary(min_size=0, max_size=40), st.sampled_from(["AI", "EI"]),
       st.integers(-3, 60), st.integers(-3, 3))
def test_fuzz_headers_raise_only_their_error(index, payload, tail, size, extra):
    g = b"MOR" + struct.pack("<4i", 1, 2, index, size) + payload + tail.encode()
    g = g[:max(0, len(g) + extra)] if extra < 0 else g + bytes(extra)
    try:
        chunk = camera.decode_chunk(g)
    except SensorDecodeError:
        return
    assert chunk.data == g[19:19 + size] and len(chunk.data) == size


def test_encoder_errors():
    with pytest.raises(EncodeError):
        camera.encode_frame("text")
    for sec in (2 ** 32, -1, 1.5):
        with pytest.raises(EncodeError):
            camera.encode_frame(b"x", sec=sec)
    with pytest.raises(EncodeError):
        camera.encode_frame(b"x", nsec=2 ** 32)
    with pytest.raises(EncodeError):
        camera.encode_frame(b"x", max_chunk=V24_MAX + 1)
    with pytest.raises(EncodeError):
        camera.encode_frame(b"x", max_chunk=0)
    assert len(camera.encode_frame(b"x", header="legacy", max_chunk=LEGACY_MAX)) == 1
    with pytest.raises(ValueError):
        camera.encode_frame(b"x", header="v23")


# ----------------------------------------------------------------------------- boxes

def box(i, legacy=False):
    corners = tuple((i + 0.5, -i - 0.25, 2.0 * j) for j in range(8))
    image = tuple((float(j), float(-j)) for j in range(8)) if legacy else None
    return BoxObject(corners, 10.0 + i, 20.0, 30.5, 40.25, (i % 3) + 1, i % 256, 7, image)


@pytest.mark.parametrize("count", [0, 1, 2, 565])
@pytest.mark.parametrize("padded", [True, False], ids=["padded", "short"])
def test_boxes_round_trip(count, padded):
    objects = [box(i) for i in range(count)]
    grams = camera.encode_boxes(objects, sec=7, nsec=8, padded=padded)
    assert len(grams) == 1
    g = grams[0]
    assert len(g) == (65000 if padded else 21 + 115 * count)
    # independent read at the spec's offsets
    assert g[:3] == b"BOX"
    assert struct.unpack("<4i", g[3:19]) == (7, 8, 0, 115 * count)
    for i in range(count):
        rec = g[19 + 115 * i: 19 + 115 * (i + 1)]
        assert struct.unpack("<3f", rec[0:12]) == objects[i].corners[0]
        assert struct.unpack("<4f", rec[96:112]) == (10.0 + i, 20.0, 30.5, 40.25)
        assert tuple(rec[112:115]) == ((i % 3) + 1, i % 256, 7)
    packet = camera.decode_boxes(g)
    assert (packet.sec, packet.nsec, packet.index) == (7, 8, 0)
    assert packet.objects == tuple(objects)
    assert camera.classify(g) == "box"


def test_boxes_over_capacity_split_into_indexed_datagrams():
    objects = [box(i) for i in range(566)]
    grams = camera.encode_boxes(objects, sec=1, nsec=2)
    assert len(grams) == 2
    got = [camera.decode_boxes(g) for g in grams]
    assert [p.index for p in got] == [0, 1]
    assert got[0].objects + got[1].objects == tuple(objects)


def test_box_zero_entries_and_skip_modes():
    objs = [box(1), box(2)]
    empty = bytes(115)
    no_box2d = struct.pack("<24f4f3B", *([1.0] * 24 + [0.0] * 4 + [1, 2, 3]))
    no_class = struct.pack("<24f4f3B", *([1.0] * 24 + [1.0] * 4 + [0, 0, 0]))
    one = camera.encode_boxes([objs[0]], padded=False)[0][19:19 + 115]
    two = camera.encode_boxes([objs[1]], padded=False)[0][19:19 + 115]
    body = one + empty + no_box2d + no_class + two
    g = b"BOX" + struct.pack("<4i", 1, 2, 0, len(body)) + body + b"EO"
    g_pad = g[:-2] + bytes(65000 - len(g)) + b"EO"
    for data in (g, g_pad):
        assert len(camera.decode_boxes(data).objects) == 4              # all_zero
        assert len(camera.decode_boxes(data, skip="box2d").objects) == 3
        assert len(camera.decode_boxes(data, skip="class").objects) == 3
        assert len(camera.decode_boxes(data, skip="none").objects) == 5
    assert camera.decode_boxes(g).objects[0] == objs[0]
    assert camera.decode_boxes(g).objects[-1] == objs[1]
    # zero-filled padding beyond ``size`` is never read as objects
    g2 = b"BOX" + struct.pack("<4i", 1, 2, 0, 115) + one + two + b"EO"
    assert camera.decode_boxes(g2).objects == (objs[0],)


def test_legacy_boxes():
    objects = [box(i, legacy=True) for i in range(3)]
    for padded in (True, False):
        g = camera.encode_boxes(objects, form="legacy", padded=padded)[0]
        assert g[:1] == b"B" and g[-2:] == b"EO"
        assert struct.unpack("<2i", g[3:11]) == (0, 179 * 3)
        rec = g[11:11 + 179]
        assert struct.unpack("<2f", rec[96:104]) == (0.0, 0.0)               # image corner 0
        assert struct.unpack("<4f", rec[160:176]) == (10.0, 20.0, 30.5, 40.25)
        assert tuple(rec[176:179]) == (1, 0, 7)
        packet = camera.decode_boxes(g, form="legacy")
        assert packet.sec is None and packet.objects == tuple(objects)
    with pytest.raises(SensorDecodeError):
        camera.decode_boxes(g[:-2] + b"XX", form="legacy")
    assert camera.decode_boxes(g[:-2] + b"XX", form="legacy", expected_tail=None).tail == b"XX"
    many = camera.encode_boxes([box(0, True)] * 364, form="legacy")
    assert [len(camera.decode_boxes(x, form="legacy").objects) for x in many] == [363, 1]


def test_box_errors():
    g = camera.encode_boxes([box(1)], padded=False)[0]
    for bad in (g[:20], b"BOY" + g[3:], g[:15] + struct.pack("<i", 114) + g[19:],
                g[:15] + struct.pack("<i", 230) + g[19:]):
        with pytest.raises(SensorDecodeError):
            camera.decode_boxes(bad)
    with pytest.raises(SensorDecodeError):
        camera.decode_boxes(g, expected_tail=b"EI")
    assert camera.decode_boxes(g, expected_tail=b"EO").objects == (box(1),)
    with pytest.raises(EncodeError):
        camera.encode_boxes([box(1)._replace(group_id=256)])
    with pytest.raises(EncodeError):
        camera.encode_boxes([box(1)._replace(corners=((0.0, 0.0, 0.0),))])
    with pytest.raises(EncodeError):
        camera.encode_boxes([box(1)], tail=b"E")


def test_classify():
    assert camera.classify(camera.encode_frame(b"x")[0]) == "image"
    assert camera.classify(camera.encode_boxes([])[0]) == "box"
    assert camera.classify(b"B\x00\x00") == "box"
    assert camera.classify(b"TL....") == "traffic_light"
    assert camera.classify(b"") is None
    assert camera.classify(b"#IMUData$") is None
    assert camera.classify(b"MO") is None


def test_port_constant():
    assert camera.DEFAULT_PORT == 1232      # spec 7: WeGo / SensorExample destination port



# ----------------------------------------------------------------------------- BOX size: bytes or count
#
# Expected bytes are built here from the public decoders' layouts, not with encode_boxes:
# * bytes form, Onlyti/MORAI_CPP_Networks @46e10f1c83929a78d03f88bfed744d6353015af0
#   include/sensors/camera.hpp + src/sensors/camera.cpp: packed header uint8[3] "BOX", uint32 sec,
#   uint32 nsec, int32 index, int32 size; ObjectData {float bbox3d[24]; float bbox2d[4];
#   uint8 classTag[3]} x 565; tail[2]; the datagram must be at least the 65,000-byte struct;
#   number of objects = size / 115.
# * count form, eriverOoO/heven-ad-2026 @4d26e0e9a5bb1fb17255e2c9f656039577347700
#   ad_morai_bridge_dev/ad_morai_bridge_dev/codecs/camera.py: starts b"BOX", ends b"\r\n",
#   struct "<iiii" = sec, nsec, sequence, count at offset 3, records "<28fBBB" (115 bytes),
#   len(packet) == 3 + 16 + count * 115 + 2 exactly.
# * MORAI-DriveExample_UDP @9e0e45962f02e0f5c3d0d551bc8fb13427b7edb4 (branch a2z)
#   gen_udp/scripts/lib/cam_util.py: tail b"EO", range(size / 179) objects (size in bytes).

def record(i):
    """One 115-byte object record: 24 corner floats, 4 box floats, group, class, subclass."""
    corners = [float(i + 1 + k) * 0.25 for k in range(24)]
    box2d = [10.0 + i, 20.0 + i, 30.0 + i, 40.0 + i]
    return struct.pack("<28fBBB", *(corners + box2d + [1 + i % 3, i % 256, 9])), corners, box2d


def expected_object(i):
    _, corners, box2d = record(i)
    return BoxObject(tuple(tuple(corners[k:k + 3]) for k in range(0, 24, 3)), *box2d,
                     1 + i % 3, i % 256, 9)


def heven_count_datagram(sec, nsec, seq, n, tail=b"\r\n"):
    return (b"BOX" + struct.pack("<iiii", sec, nsec, seq, n)
            + b"".join(record(i)[0] for i in range(n)) + tail)


def cpp_bytes_datagram(sec, nsec, index, n, tail=b"EO", padded=True):
    body = b"".join(record(i)[0] for i in range(n))
    head = b"BOX" + struct.pack("<IIii", sec, nsec, index, len(body))
    if not padded:
        return head + body + tail
    return head + body + bytes(65000 - 2 - len(head) - len(body)) + tail


def count_padded(sec, nsec, seq, n, tail=b"\r\n"):
    d = heven_count_datagram(sec, nsec, seq, n, tail)
    return d[:-2] + bytes(65000 - len(d)) + tail


def heven_accepts(packet):
    """heven-ad-2026's checks of a count-form datagram (layout facts restated)."""
    if not packet.startswith(b"BOX") or packet[-2:] != b"\r\n" or len(packet) < 21:
        return False
    count = struct.unpack_from("<iiii", packet, 3)[3]
    return 0 <= count <= 575 and len(packet) == 3 + 16 + count * 115 + 2


def test_count_form_from_heven_layout():
    for n in (0, 1, 2, 7, 114, 115, 116, 230, 565):
        d = heven_count_datagram(1700000000, 5, 3, n)
        assert heven_accepts(d) and len(d) == 21 + 115 * n
        p = camera.decode_boxes(d)
        assert p.objects == tuple(expected_object(i) for i in range(n)), n
        assert (p.sec, p.nsec, p.index, p.tail) == (1700000000, 5, 3, b"\r\n")
        assert p.size_unit == ("bytes" if n == 0 else "count")
        assert camera.decode_boxes(d, size_unit="count").objects == p.objects
        if n % 115:
            with pytest.raises(SensorDecodeError) as info:
                camera.decode_boxes(d, size_unit="bytes")
            assert info.value.reason == "size"
        else:       # forced, the wrong reading fits too: the first n / 115 records
            assert camera.decode_boxes(d, size_unit="bytes").objects == p.objects[:n // 115]


def test_count_form_encoder_matches_heven_layout():
    objects = [expected_object(i) for i in range(4)]
    g = camera.encode_boxes(objects, sec=1700000000, nsec=5, padded=False, tail=b"\r\n",
                            index=3, size_unit="count")
    assert g == [heven_count_datagram(1700000000, 5, 3, 4)]
    assert heven_accepts(g[0])
    with pytest.raises(EncodeError):
        camera.encode_boxes(objects, size_unit="auto")


def test_bytes_form_from_cpp_layout():
    for n in (0, 1, 4, 115, 565):
        for padded in (True, False):
            d = cpp_bytes_datagram(7, 8, 0, n, padded=padded)
            assert len(d) == (65000 if padded else 21 + 115 * n)
            p = camera.decode_boxes(d)
            assert p.objects == tuple(expected_object(i) for i in range(n))
            assert p.size_unit == "bytes" and p.tail == b"EO"
            assert camera.decode_boxes(d, size_unit="bytes").objects == p.objects


@pytest.mark.parametrize("tail", [b"EO", b"\r\n"], ids=["EO", "CRLF"])
@pytest.mark.parametrize("padded", [True, False], ids=["padded", "unpadded"])
@pytest.mark.parametrize("unit", ["bytes", "count"])
@pytest.mark.parametrize("n", [1, 3, 4, 5, 115, 116, 231, 460, 565])
def test_every_combination_auto_and_forced(n, unit, padded, tail):
    if unit == "count":
        d = count_padded(1, 2, 0, n, tail) if padded else heven_count_datagram(1, 2, 0, n, tail)
    else:
        d = cpp_bytes_datagram(1, 2, 0, n, tail, padded)
    want = tuple(expected_object(i) for i in range(n))
    auto = camera.decode_boxes(d)
    assert auto.objects == want and auto.tail == tail
    assert auto.size_unit == unit
    assert camera.decode_boxes(d, size_unit=unit).objects == want
    assert camera.decode_boxes(d, expected_tail=tail).objects == want
    # the encoder writes the same bytes
    assert camera.encode_boxes(want, 1, 2, padded=padded, tail=tail, size_unit=unit) == [d]


def test_ambiguous_size_decided_by_the_bytes_between():
    # size 115 in a padded datagram: 1 object (bytes) or 115 objects (count)
    one = cpp_bytes_datagram(1, 2, 0, 1)
    assert struct.unpack_from("<i", one, 15)[0] == 115
    p = camera.decode_boxes(one)
    assert p.size_unit == "bytes" and len(p.objects) == 1
    # with skip='none' the all-zero region is not read as 114 empty objects either
    assert len(camera.decode_boxes(one, skip="none").objects) == 1
    # forced count: 115 slots, 114 of them zero padding (skipped by default, kept with 'none')
    assert len(camera.decode_boxes(one, size_unit="count").objects) == 1
    assert len(camera.decode_boxes(one, size_unit="count", skip="none").objects) == 115
    many = count_padded(1, 2, 0, 115)
    assert struct.unpack_from("<i", many, 15)[0] == 115
    p = camera.decode_boxes(many)
    assert p.size_unit == "count" and len(p.objects) == 115
    assert len(camera.decode_boxes(many, size_unit="bytes").objects) == 1
    # one non-zero byte in the region decides 'count'
    flip = bytearray(one)
    flip[19 + 115 * 100] = 1
    assert camera.decode_boxes(bytes(flip)).size_unit == "count"


def test_size_errors_name_both_readings():
    good = heven_count_datagram(1, 2, 0, 2)
    for size in (3, -1, 2 ** 31 - 1, 231):
        bad = good[:15] + struct.pack("<i", size) + good[19:]
        with pytest.raises(SensorDecodeError) as info:
            camera.decode_boxes(bad)
        assert info.value.reason == "size" and "bytes" in str(info.value) and "count" in str(info.value)
    with pytest.raises(ValueError):
        camera.decode_boxes(good, size_unit="objects")


# ----------------------------------------------------------------------------- unsigned stamps

@pytest.mark.parametrize("sec,nsec", [(0, 0), (2 ** 31 - 1, 999999999), (2 ** 31, 0),
                                      (2 ** 32 - 1, 999999999)])
def test_stamps_are_unsigned(sec, nsec):
    """sec/nsec are read as uint32 (Onlyti/MORAI_CPP_Networks camera.hpp ``uint32_t sec, nsec``):
    a sec with the top bit set is a time after 2038, not a negative number."""
    raw = struct.pack("<II", sec, nsec)
    chunk = b"MOR" + raw + struct.pack("<ii", 0, 2) + b"ok" + b"EI"
    c = camera.decode_chunk(chunk)
    assert (c.sec, c.nsec) == (sec, nsec)
    frame = FrameAssembler().push(chunk)
    assert (frame.sec, frame.nsec, frame.jpeg) == (sec, nsec, b"ok")
    box = b"BOX" + raw + struct.pack("<ii", 0, 0) + b"EO"
    p = camera.decode_boxes(box)
    assert (p.sec, p.nsec) == (sec, nsec)
    assert camera.encode_frame(b"ok", sec, nsec, padded=False) == [chunk]
    assert camera.encode_boxes([], sec, nsec, padded=False) == [box]
