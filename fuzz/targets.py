"""Fuzz targets: one function per decoder, each raising AssertionError when the
decoder misbehaves on the given bytes.  Driven by atheris (fuzz/run.py, the long
run) and by a seeded mutator in the unit suite (test/unit/project/test_fuzz_slice.py).

Rules checked:
* udp.decode / lockstep.decode: return a message or raise DecodeError; nothing
  else escapes, and a decoded message re-encodes to bytes that decode again and
  reach a fixed point;
* the ERP-42 framers: never raise, stay bounded, count every byte either in a
  frame, as discarded, or as still pending;
* the sensor codecs (camera chunk assembler, BOX, Velodyne revolution assembler,
  2D LiDAR): only SensorDecodeError leaves a decoder; the assemblers never
  raise for bytes input; what they return is consistent (a frame is the
  concatenation of its chunks, every valid Velodyne packet ends up in exactly one
  revolution, a decoded box datagram or scan re-encodes to a fixed point).

The sensor targets read their input as a small program (:func:`camera_datagrams`,
:func:`velodyne_datagrams`, ...) so that a few kilobytes describe many
datagrams, padded 65,000-byte ones included; :data:`SEEDS` makes seeds of that
form from the codecs' encoders.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'src'))

import struct  # noqa: E402

import numpy as np  # noqa: E402

from morai_bridge.wire import camera, erp42, lidar2d, udp, velodyne  # noqa: E402
from morai_bridge.wire.udp import lockstep
from morai_bridge.wire.sensor_errors import SensorDecodeError  # noqa: E402


def check_udp(data):
    try:
        m = udp.decode(data)
    except udp.DecodeError:
        return 'error'
    except Exception as e:  # noqa: BLE001 - the point of the check
        raise AssertionError(f'udp.decode raised {type(e).__name__}: {e} on {data[:64]!r}')
    if isinstance(m, udp.NmeaSentence):
        return 'nmea'
    try:
        again = udp.encode(m)
    except udp.EncodeError:
        # a decoded packet whose text has bytes outside ASCII cannot be re-encoded as is: fine
        return 'decoded'
    # What we encode must decode, and normalisation must reach a fixed point after one more
    # round (a slot whose values read as all zero re-encodes as an empty slot, so the first
    # round may pack records forward; bytes are compared because NaN never equals itself).
    once = udp.encode(udp.decode(again))
    if udp.encode(udp.decode(once)) != once:
        raise AssertionError(f're-encoding does not reach a fixed point for {data[:64]!r}')
    return 'decoded'


def check_emu_sync(data):
    try:
        lockstep.decode(data)
    except udp.DecodeError:
        return 'error'
    except Exception as e:  # noqa: BLE001
        raise AssertionError(f'lockstep.decode raised {type(e).__name__}: {e}')
    return 'decoded'


def check_framer(data, framer_cls=erp42.FeedbackFramer):
    f = framer_cls()
    n_frames = 0
    # feed in a few chunk sizes derived from the data itself
    step = (data[0] % 7 + 1) if data else 1
    for i in range(0, len(data), step):
        n_frames += len(f.feed(data[i:i + step]))
        if f.pending >= f.frame_len:
            raise AssertionError('framer keeps %d bytes, more than a frame' % f.pending)
    if n_frames * f.frame_len + f.bytes_discarded + f.pending != len(data):
        raise AssertionError('framer lost track of bytes: %d frames, %d discarded, %d pending, %d fed'
                             % (n_frames, f.bytes_discarded, f.pending, len(data)))
    return n_frames


def check_command_framer(data):
    return check_framer(data, erp42.CommandFramer)


TARGETS = {
    'udp': check_udp,
    'lockstep': check_emu_sync,
    'erp42_feedback': check_framer,
    'erp42_command': check_command_framer,
}


# ----------------------------------------------------------------------------- sensor codecs

def _untyped(what, e, data):
    return AssertionError(f'{what} raised {type(e).__name__}: {e} on {bytes(data[:64])!r}')


def camera_datagrams(data):
    """Datagrams of a camera input, at most 64: records of uint16 LE n, then n & 0x7fff bytes; bit 15
    set pads the datagram to 65,000 bytes keeping its last two bytes as the tail (at most 8 padded
    datagrams per input, so that an input stays cheap)."""
    out, i, padded = [], 0, 0
    while i + 2 <= len(data) and len(out) < 64:
        n, = struct.unpack_from('<H', data, i)
        i += 2
        d = data[i:i + (n & 0x7fff)]
        i += n & 0x7fff
        if n & 0x8000 and 2 <= len(d) <= camera.DATAGRAM_SIZE and padded < 8:
            d = d[:-2] + bytes(camera.DATAGRAM_SIZE - len(d)) + d[-2:]
            padded += 1
        out.append(d)
    return out


def check_camera(data):
    """FrameAssembler: never raises; counts every datagram once (chunk, malformed or duplicate);
    a frame is the concatenation of the chunks accepted since its chunk 0."""
    if not data:
        return 'empty'
    cfg = data[0]
    header = 'legacy' if cfg & 1 else 'v24'
    asm = camera.FrameAssembler(header, check_stamps=bool(cfg & 2), max_chunks=(cfg >> 2) % 8 + 1)
    grams = camera_datagrams(data[1:])
    accepted = []
    frames = 0
    for n, d in enumerate(grams, 1):
        try:
            chunk = camera.decode_chunk(d, header)
        except SensorDecodeError:
            chunk = None
        except Exception as e:  # noqa: BLE001
            raise _untyped('camera.decode_chunk', e, d)
        dup, bad = asm.duplicates, asm.malformed
        try:
            frame = asm.push(d)
        except Exception as e:  # noqa: BLE001
            raise _untyped('FrameAssembler.push', e, d)
        if asm.chunks + asm.malformed + asm.duplicates != n:
            raise AssertionError('assembler counted %d chunks + %d malformed + %d duplicates for %d datagrams'
                                 % (asm.chunks, asm.malformed, asm.duplicates, n))
        if (chunk is None) != (asm.malformed == bad + 1):
            raise AssertionError(f'decode_chunk and the assembler disagree on {d[:32]!r}')
        if chunk is not None and asm.duplicates == dup:
            accepted.append(chunk)
        if frame is not None:
            frames += 1
            if chunk is None or not 1 <= frame.chunks <= asm.max_chunks or not chunk.last:
                raise AssertionError('frame of %d chunks (max %d), last chunk %r'
                                     % (frame.chunks, asm.max_chunks, chunk))
            parts = accepted[-frame.chunks:]
            if [c.index for c in parts] != list(range(frame.chunks)) or \
                    frame.jpeg != b''.join(c.data for c in parts) or (frame.sec, frame.nsec) != \
                    (parts[0].sec, parts[0].nsec):
                raise AssertionError(f'frame is not its chunks: {frame[:2]!r}')
    if asm.frames != frames:
        raise AssertionError('%d frames counted, %d returned' % (asm.frames, frames))
    return 'frames' if frames else 'none'


_SKIPS = ('all_zero', 'box2d', 'class', 'none')


def box_datagram(data):
    """(form, skip, unit, datagram) of a BOX input: byte 0 = options (bit 7: pad to 65,000)."""
    cfg = data[0]
    form = 'legacy' if cfg & 1 else 'v24'
    skip = _SKIPS[(cfg >> 1) & 3]
    unit = camera.BOX_SIZE_UNITS[((cfg >> 3) & 3) % 3]
    d = data[1:]
    if cfg & 0x80 and 2 <= len(d) <= camera.DATAGRAM_SIZE:
        d = d[:-2] + bytes(camera.DATAGRAM_SIZE - len(d)) + d[-2:]
    return form, skip, unit, d


def check_boxes(data):
    """decode_boxes: only SensorDecodeError; a decoded datagram re-encodes (unpadded, same unit,
    index, stamp and tail) to bytes that decode to the same objects, reaching a fixed point."""
    if not data:
        return 'empty'
    form, skip, unit, d = box_datagram(data)
    try:
        p = camera.decode_boxes(d, form, skip, expected_tail=None, size_unit=unit)
    except SensorDecodeError:
        return 'error'
    except Exception as e:  # noqa: BLE001
        raise _untyped('camera.decode_boxes', e, d)
    bf = camera.BOX_FORMS[form]
    if p.size_unit not in ('bytes', 'count') or (unit != 'auto' and p.size_unit != unit):
        raise AssertionError(f'size read as {p.size_unit!r} with size_unit={unit!r}')
    if len(p.objects) * bf.object_size > len(d) - bf.header_size - 2:
        raise AssertionError(f'{len(p.objects)} objects from a {len(d)}-byte datagram')
    if len(p.objects) > bf.max_objects:
        return 'too many to re-encode'
    sec = p.sec if p.sec is not None else 0
    nsec = p.nsec if p.nsec is not None else 0

    def again(pkt):
        return camera.encode_boxes(pkt.objects, sec, nsec, form, padded=False, tail=pkt.tail,
                                   index=pkt.index, size_unit=pkt.size_unit)[0]

    try:
        once = again(p)
        p1 = camera.decode_boxes(once, form, skip, expected_tail=None, size_unit=p.size_unit)
        twice = again(p1)
        p2 = camera.decode_boxes(twice, form, skip, expected_tail=None, size_unit=p.size_unit)
    except Exception as e:  # noqa: BLE001
        raise _untyped('re-encoding a decoded box datagram', e, d)
    if again(p2) != twice or len(p1.objects) != len(p.objects):
        raise AssertionError(f'box re-encoding does not reach a fixed point for {d[:64]!r}')
    return 'decoded'


_MODEL_NAMES = sorted(velodyne.MODELS)


def _velodyne_template(start, step, seed, raw_azimuth, tail):
    pkt = bytearray(velodyne.PACKET_SIZE)
    body = bytes([seed, (seed * 7) & 0xff, (seed * 13) & 0xff]) * 32
    for b in range(velodyne.BLOCKS):
        az = start + b * step
        struct.pack_into('<2sH', pkt, 100 * b, b'\xff\xee', az & 0xffff if raw_azimuth else az % 36000)
        pkt[100 * b + 4:100 * b + 100] = body
    pkt[1200:1206] = tail
    return pkt


def velodyne_datagrams(data):
    """Datagrams of a Velodyne input, at most 48: records of a control byte c and its arguments.
    c & 3 = 0: a packet of 12 well-formed blocks (uint16 start azimuth, uint8 step, uint8 distance
    seed, 6 tail bytes), c & 4: azimuths not wrapped at 36000; 1: raw bytes (uint16 length mod
    1400, then that many bytes); 2: c >> 2 bytes of auxiliary header then a packet as for 0;
    3: a packet as for 0 with one byte overwritten (uint16 position mod 1206, uint8 value)."""
    out, i, n = [], 0, len(data)

    def take(k):
        nonlocal i
        chunk = data[i:i + k]
        i += k
        return chunk + bytes(k - len(chunk))

    while i < n and len(out) < 48:
        c = data[i]
        i += 1
        kind = c & 3
        if kind == 1:
            length, = struct.unpack('<H', take(2))
            out.append(bytes(take(length % 1400)))
            continue
        prefix = bytes(take(c >> 2)) if kind == 2 else b''
        start, step, seed = struct.unpack('<HBB', take(4))
        pkt = _velodyne_template(start, step, seed, bool(c & 4), take(6))
        if kind == 3:
            pos, value = struct.unpack('<HB', take(3))
            pkt[pos % velodyne.PACKET_SIZE] = value
        out.append(prefix + bytes(pkt))
    return out


def _revolutions(result):
    """What RevolutionAssembler.add / flush returned, as a list (None, one, or a sequence)."""
    if result is None:
        return []
    if isinstance(result, velodyne.Revolution):
        return [result]
    return list(result)


def check_velodyne(data):
    """RevolutionAssembler through its public API (constructor, add, flush): never raises for
    bytes; every packet the decoder's check accepts is in exactly one revolution, or counted as a duplicate or
    a late packet (a step back in azimuth: wire/velodyne/revolution.py); a revolution's
    points are at most 384 per packet, with finite coordinates (keep_zero off)."""
    if len(data) < 2:
        return 'empty'
    cfg, cfg2 = data[0], data[1]
    model = _MODEL_NAMES[cfg % len(_MODEL_NAMES)]
    decoder = velodyne.VelodyneDecoder(model, return_mode=('auto', 'single', 'dual')[(cfg >> 3) % 3],
                                       interpolation='fixed' if cfg & 0x20 else 'velodyne',
                                       packet_time=('auto', 'device', 'nominal', 'host')[(cfg >> 6) & 3])
    cut = None if cfg2 & 0x80 else (cfg2 & 0x7f) * 3.0
    asm = velodyne.RevolutionAssembler(decoder, cut_angle=cut, max_packets=(cfg2 & 0x0f) * 8 + 1)
    valid, revs = 0, []
    for k, d in enumerate(velodyne_datagrams(data[2:])):
        try:
            decoder.check(d)
            valid += 1
        except SensorDecodeError:
            pass
        except Exception as e:  # noqa: BLE001
            raise _untyped('VelodyneDecoder.check', e, d)
        try:
            revs += _revolutions(asm.add(d, 1000.0 + 0.001 * k))
        except Exception as e:  # noqa: BLE001
            raise _untyped('RevolutionAssembler.add', e, d)
    try:
        revs += _revolutions(asm.flush())
    except Exception as e:  # noqa: BLE001
        raise _untyped('RevolutionAssembler.flush', e, b'')
    got = sum(r.packets for r in revs)
    if got + asm.duplicate_packets + asm.late_packets != valid:
        raise AssertionError('%d valid packets, %d in revolutions, %d duplicates, %d late'
                             % (valid, got, asm.duplicate_packets, asm.late_packets))
    for r in revs:
        pts = r.points
        if len(pts) > 384 * r.packets:
            raise AssertionError('%d points from %d packets' % (len(pts), r.packets))
        for a in (pts.x, pts.y, pts.z, pts.time):
            if len(a) != len(pts):
                raise AssertionError('point arrays of different lengths')
        if not (np.all(np.isfinite(pts.x)) and np.all(np.isfinite(pts.y)) and np.all(np.isfinite(pts.z))):
            raise AssertionError('non-finite point coordinates')
    return 'revolutions' if revs else 'none'


def check_lidar2d(data):
    """decode_scan / decode_raw: only SensorDecodeError; a decoded scan has 360 ranges >= 0 (or
    +inf for no hit) and its raw fields re-encode to the same samples.  Byte 0 = options (bit 7:
    pad or cut the rest to 1,107 bytes)."""
    if not data:
        return 'empty'
    cfg = data[0]
    d = data[1:]
    if cfg & 0x80:
        d = (d + bytes(lidar2d.DATAGRAM_SIZE))[:lidar2d.DATAGRAM_SIZE]
    header = lidar2d.DEFAULT_HEADER if cfg & 1 else None
    tail = lidar2d.DEFAULT_TAIL if cfg & 2 else None
    range_max = (None, 10.0, 65.535, 0.5)[(cfg >> 2) & 3]
    no_hit = 'keep' if cfg & 0x10 else 'inf'
    origin, direction = (0.0, 90.0, 180.0, -45.0)[(cfg >> 5) & 3], (-1 if cfg & 0x21 == 0x21 else 1)
    try:
        scan = lidar2d.decode_scan(d, origin, direction, -180.0, range_max, no_hit, header, tail)
    except SensorDecodeError:
        return 'error'
    except Exception as e:  # noqa: BLE001
        raise _untyped('lidar2d.decode_scan', e, d)
    if len(scan.ranges) != 360 or len(scan.intensities) != 360:
        raise AssertionError(f'scan of {len(scan.ranges)} ranges')
    if any(not (r >= 0.0) for r in scan.ranges):
        raise AssertionError('negative or NaN range')
    raw = scan.raw
    try:
        again = lidar2d.encode_scan(raw.ranges, raw.intensities, raw.header, raw.data_length, raw.aux,
                                    raw.tail)
    except Exception as e:  # noqa: BLE001
        raise _untyped('lidar2d.encode_scan of a decoded scan', e, d)
    if again[:13] != d[:13] or again[25:] != d[25:]:
        raise AssertionError('2D scan does not re-encode to its samples')
    return 'decoded'


TARGETS.update({
    'camera': check_camera,
    'boxes': check_boxes,
    'velodyne': check_velodyne,
    'lidar2d': check_lidar2d,
})


# ----------------------------------------------------------------------------- seeds of the sensor targets

def _tiny_jpeg():
    return b'\xff\xd8' + bytes(range(40)) + b'\xff\xd9'


def _camera_input(cfg, grams, pad=False):
    out = bytearray([cfg])
    for g in grams:
        if pad:
            g = g[:-2].rstrip(b'\0') + g[-2:] if len(g) == camera.DATAGRAM_SIZE else g
        out += struct.pack('<H', len(g) | (0x8000 if pad else 0)) + g
    return bytes(out)


def camera_seeds():
    out = []
    j = _tiny_jpeg()
    for cfg, header in ((0x1e, 'v24'), (0x1f, 'legacy'), (0x02, 'v24')):
        grams = camera.encode_frame(j, 5, 6, header=header, padded=False, max_chunk=16)
        out.append(_camera_input(cfg, grams))
        out.append(_camera_input(cfg, grams[1:] + grams + grams[:2]))
        out.append(_camera_input(cfg, camera.encode_frame(j, 7, 8, header=header, padded=True,
                                                           max_chunk=30), pad=True))
    return out


def box_seeds():
    obj = camera.BoxObject(tuple((1.0 + k, -2.0, 3.5) for k in range(8)), 1.0, 2.0, 30.0, 40.0, 1, 2, 3,
                           tuple((float(k), 2.0) for k in range(8)))
    out = []
    for form, cfg in (('v24', 0x00), ('legacy', 0x01)):
        for unit, ubits in (('bytes', 0x08), ('count', 0x10)):
            for n in (0, 1, 3):
                for tail in (b'EO', b'\r\n'):
                    g = camera.encode_boxes([obj] * n, 1, 2, form, padded=False, tail=tail, size_unit=unit)[0]
                    out.append(bytes([cfg]) + g)              # auto
                    out.append(bytes([cfg | ubits]) + g)      # forced
                    out.append(bytes([cfg | 0x80]) + g)       # padded
    return out


def velodyne_seeds():
    out = []
    for cfg in range(len(_MODEL_NAMES)):
        prog = bytearray()
        for k in range(40):
            start = (k * 12 * 20) % 36000
            prog += bytes([0]) + struct.pack('<HBB', start, 20, 40 + k) + b'\0\0\0\0\x37\x22'
        prog += bytes([1]) + struct.pack('<H', 10) + b'0123456789'
        prog += bytes([2 | (12 << 2)]) + bytes(12) + struct.pack('<HBB', 100, 20, 9) + bytes(6)
        prog += bytes([3]) + struct.pack('<HBB', 200, 20, 9) + bytes(6) + struct.pack('<HB', 100, 0)
        out.append(bytes([cfg, 0x85]) + bytes(prog))
        out.append(bytes([cfg, 0x10 | 0x03]) + bytes(prog))
    return out


def lidar2d_seeds():
    scan = lidar2d.encode_scan([0.5 + 0.01 * i for i in range(360)], [i % 256 for i in range(360)])
    return [bytes([cfg]) + scan for cfg in (0x00, 0x03, 0x07, 0x1b, 0x64)] + [bytes([0x80]) + scan[:500]]


SEEDS = {'camera': camera_seeds, 'boxes': box_seeds, 'velodyne': velodyne_seeds, 'lidar2d': lidar2d_seeds}
#: libFuzzer -max_len per target (default 4096)
MAX_LEN = {'camera': 8192, 'boxes': 4096, 'velodyne': 2048, 'lidar2d': 2048}
