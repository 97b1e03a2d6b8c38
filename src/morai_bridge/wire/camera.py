"""MORAI SIM camera stream over UDP: JPEG chunk datagrams ("MOR") and boxes ("BOX").

One camera sensor sends, on one UDP port, its JPEG-compressed image cut into
datagrams of at most 65,000 bytes, and (when objects are in view) ground-truth
2D/3D bounding boxes.  Facts and confidence tags ([C] confirmed, [S] single
source, [I] inferred, [?] unknown) refer to ``shared/spec/sensors.md`` sections
1, 2 and 7.

Image chunk datagram ("MOR")
----------------------------
Two header forms, chosen by configuration (``header='v24'`` or ``'legacy'``):
they cannot be told apart from the bytes (spec 1.2 [I], open question 2).

=========  =====================================================  ============
form       layout (little-endian, packed)                          max chunk
=========  =====================================================  ============
``v24``    ``MOR`` uint32 sec, nsec, int32 index, int32 size        64,979 B [C]
           (19 bytes), ``size`` JPEG bytes, tail                   (24.R1+)
``legacy`` ``MOR`` int32 index, int32 size (11 bytes), chunk, tail   64,987 B [C]
=========  =====================================================  ============

* tail ``AI`` = more chunks follow, ``EI`` = last chunk of the frame [C].
* chunk ``index`` counts 0, 1, 2, ... within a frame; the frame is the
  concatenation of the chunks' ``size`` bytes; there is no total size [C].
* Datagram length [I]/[?] (open question 1): MORAI's own receiver needs every
  datagram padded to 65,000 bytes (tail at offset 64,998); other receivers take
  ``datagram[header:-2]``.  The decoder accepts both: the payload is always
  ``datagram[header:header + size]`` and the tail is the last two bytes, or the
  two bytes right after the payload.  The encoder pads by default.
* Timestamp [S]/[?]: whether every chunk of a frame carries the same stamp is
  not documented.  :class:`FrameAssembler` checks it by default
  (``check_stamps=True``: a chunk with another stamp drops the frame with
  reason ``stamp_mismatch``); switch it off if a simulator stamps chunks
  individually.  A frame's stamp is that of its chunk 0.

Box datagram ("BOX")
--------------------
``v24`` [C] (UDPNM, CPP): ``BOX`` uint32 sec, uint32 nsec, int32 index, int32
size, then N objects of 115 bytes (8 corners xyz float32, 2D box xmin, ymin,
xmax, ymax float32 px, group, class, subclass uint8), then a 2-byte tail whose
value is not documented [?] (any tail accepted by default; ``EO`` in A2Z's
older form, CR LF in heven-ad-2026's 25.S4 codec).
``legacy`` [S] (A2Z, Feb 2023): first byte ``B``, int32 index @3, int32 size
@7, objects of 179 bytes from offset 11 (8 world corners xyz, 8 projected image
corners xy, min_x, min_y, max_x, max_y float32, group, class, subclass uint8),
tail ``EO``.

The ``size`` field has two meanings in public decoders [S, disputed]:

* ``'bytes'``: bytes of object data, N x object size.  Onlyti/MORAI_CPP_Networks
  @46e10f1 ``src/sensors/camera.cpp`` (N = size / 115, datagram padded to
  65,000 bytes) and MORAI-DriveExample_UDP @9e0e459 (branch a2z)
  ``gen_udp/scripts/lib/cam_util.py`` (N = size / 179, tail ``EO``).
* ``'count'``: the number of objects.  eriverOoO/heven-ad-2026 @4d26e0e
  ``ad_morai_bridge_dev/ad_morai_bridge_dev/codecs/camera.py`` (a 25.S4
  development codec, never checked against a capture): header ``<iiii`` =
  sec, nsec, sequence, count; datagram exactly 19 + 115 x count + 2 bytes
  (unpadded), tail CR LF.

``size_unit='auto'`` (default) decides per datagram (``BoxPacket.size_unit``
says how): a reading fits when its objects end within the datagram with room
for the 2-byte tail (``bytes`` also needs ``size`` to be a multiple of the
object size).  If only one fits, it is used; if neither, the datagram is refused
(reason ``size``).  Both fit only when ``size`` = k x object size and the
datagram holds ``size`` objects, i.e. a padded datagram or a count-form one of
exactly k x object size objects: then the bytes between the two ends decide --
any non-zero byte there is object data (``count``); all zero, it is padding
(``bytes``), and the two readings give the same objects anyway, because all-zero
entries are padding (``skip='all_zero'``).  ``size`` 0 is no object either way.
``size_unit='bytes'`` or ``'count'`` forces one reading.  Datagrams may be padded
(any length, tail in the last two bytes) or not (tail right after the objects).

Object count [I]: empty entries are skipped
(``skip='all_zero'`` by default: an entry of only zero bytes is padding;
``'box2d'`` skips entries whose 2D box is all zero, as the C++ library does;
``'class'`` skips entries whose group, class and subclass are all zero, like
MORAI's Python example).  A datagram holds at most 565 (legacy: 363) objects
[C] arithmetic; more are sent as several datagrams with index 0, 1, ... by our
encoder [I] (MORAI's behaviour for > 565 objects is unknown [?]).  The group /
class / subclass code tables are not published [?]: the bytes are passed on.
Corner frame [I]: camera optical frame (x right, y down, z forward, m).

Stamps (``MOR`` and ``BOX``): read as **unsigned** 32-bit sec and nsec, as
Onlyti/MORAI_CPP_Networks does (``uint32_t``); MORAI's UDPNM declares them
``c_int``.  The two readings agree on every sec below 2^31 (until 2038-01-19 as
wall-clock time) and on every valid nsec (< 10^9 < 2^31); a sec with the top bit
set is negative, hence not a time, as int32, and a time after 2038 as uint32, so
the unsigned reading loses nothing.  The encoders take 0 <= sec, nsec < 2^32.

Both kinds arrive on the same port; :func:`classify` tells them apart by the
first bytes.  Legacy traffic-light boxes (first byte ``T``) are classified but
not decoded.

Ports [C] spec 7: the simulator's destination port is user-set; MORAI's WeGo and
SensorExample configurations use 1232 (:data:`DEFAULT_PORT`).

Public API
----------
``classify(datagram) -> 'image' | 'box' | 'traffic_light' | None``
``decode_chunk(datagram, header='v24') -> ImageChunk``
``FrameAssembler(header='v24', check_stamps=True, max_chunks=64)``
    ``.push(datagram) -> ImageFrame | None``, ``.add_chunk(chunk)``,
    ``.reset()``, ``.counters()``, ``.last_error``
``encode_frame(jpeg, sec=0, nsec=0, header='v24', padded=True, max_chunk=None) -> [bytes]``
``decode_boxes(datagram, form='v24', skip='all_zero', expected_tail=..., size_unit='auto') -> BoxPacket``
``encode_boxes(objects, sec=0, nsec=0, form='v24', padded=True, tail=b'EO', index=0,
size_unit='bytes') -> [bytes]``

Decoders raise only :class:`SensorDecodeError` (a ``ValueError``) for bytes
input of any length and content; encoders raise :class:`EncodeError`.
No ROS imports.
"""

import struct
from collections import Counter
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from .sensor_errors import EncodeError, SensorDecodeError, check_bytes

__all__ = [
    "DEFAULT_PORT", "DATAGRAM_SIZE", "TAIL_MORE", "TAIL_LAST", "HEADER_FORMS", "ChunkForm",
    "BOX_FORMS", "BoxForm", "ImageChunk", "ImageFrame", "BoxObject", "BoxPacket",
    "FrameAssembler", "classify", "decode_chunk", "encode_frame", "decode_boxes",
    "encode_boxes", "SensorDecodeError", "EncodeError", "DROP_REASONS", "BOX_SIZE_UNITS",
]

#: Destination port of MORAI's example configurations (WeGo, SensorExample) [C].
DEFAULT_PORT = 1232
#: Size of a padded datagram and of every MORAI example's receive buffer [C].
DATAGRAM_SIZE = 65000
TAIL_MORE = b"AI"
TAIL_LAST = b"EI"
_TAILS = (TAIL_MORE, TAIL_LAST)
_MOR = b"MOR"
_INT32_MIN, _INT32_MAX = -2 ** 31, 2 ** 31 - 1
_UINT32_MAX = 2 ** 32 - 1
#: meanings of the BOX ``size`` field (module docstring)
BOX_SIZE_UNITS = ("auto", "bytes", "count")


class ChunkForm(NamedTuple):
    """One header form of the image chunk datagram."""

    name: str
    header_size: int      # bytes before the JPEG chunk
    max_chunk: int        # largest chunk: DATAGRAM_SIZE - header_size - 2
    has_stamp: bool       # int32 sec, int32 nsec at offset 3


HEADER_FORMS = {
    "v24": ChunkForm("v24", 19, DATAGRAM_SIZE - 19 - 2, True),       # 64,979
    "legacy": ChunkForm("legacy", 11, DATAGRAM_SIZE - 11 - 2, False),  # 64,987
}

_V24_HEAD = struct.Struct("<2I2i")    # uint32 sec, nsec; int32 index, size at offset 3
_LEGACY_HEAD = struct.Struct("<2i")   # index, size at offset 3

#: Reasons for which :class:`FrameAssembler` drops a frame.
DROP_REASONS = (
    "missing_chunk",    # a chunk index was skipped (lost datagram)
    "out_of_order",     # a chunk index went backwards (reordered or duplicated datagram)
    "missing_last",     # a new frame (index 0) began before the EI chunk arrived
    "missing_first",    # chunks arrived for a frame whose chunk 0 was never seen
    "stamp_mismatch",   # a chunk's sec/nsec differ from chunk 0's (check_stamps=True)
    "too_many_chunks",  # more than max_chunks chunks without EI
)


def _form(header: str) -> ChunkForm:
    try:
        return HEADER_FORMS[header]
    except KeyError:
        raise ValueError("header must be one of %s, got %r"
                         % (sorted(HEADER_FORMS), header)) from None


# ----------------------------------------------------------------------------- demux

def classify(datagram) -> Optional[str]:
    """Kind of a datagram on a camera port, from its first bytes only.

    ``'image'`` (``MOR``), ``'box'`` (``BOX``, or any first byte ``B``: the legacy
    form was recognised by that byte alone), ``'traffic_light'`` (legacy ``T``
    boxes, not decoded here), or None.
    """
    head = bytes(datagram[:3])
    if head == _MOR:
        return "image"
    if head[:1] == b"B":
        return "box"
    if head[:1] == b"T":
        return "traffic_light"
    return None


# ----------------------------------------------------------------------------- image chunks

class ImageChunk(NamedTuple):
    """One decoded image datagram.

    index: 0-based chunk number in the frame.  last: True for tail ``EI``.
    data: the ``size`` JPEG bytes it carries.  sec, nsec: its timestamp
    (None in the legacy form).
    """

    index: int
    last: bool
    data: bytes
    sec: Optional[int] = None
    nsec: Optional[int] = None


class ImageFrame(NamedTuple):
    """A reassembled image: ``jpeg`` bytes, stamp of chunk 0 (None in the legacy form)
    and the number of datagrams it came in."""

    sec: Optional[int]
    nsec: Optional[int]
    jpeg: bytes
    chunks: int


def _tail(data: bytes, end: int) -> Optional[bytes]:
    """The tail: last two bytes, or the two right after the payload (``end``)."""
    tail = data[-2:]
    if tail in _TAILS:
        return tail
    tail = data[end:end + 2]
    if tail in _TAILS:
        return tail
    return None


def decode_chunk(datagram, header: str = "v24") -> ImageChunk:
    """Decode one ``MOR`` datagram (padded or short) of the given header form."""
    form = _form(header)
    data = check_bytes(datagram)
    n = len(data)
    hs = form.header_size
    if n < hs + 2:
        raise SensorDecodeError("image datagram of %d bytes: shorter than the %d-byte %s header + "
                                "2-byte tail" % (n, hs, form.name), "length", length=n,
                                header=data[:3])
    if data[:3] != _MOR:
        raise SensorDecodeError("image datagram starts %r, expected b'MOR'" % data[:3], "header",
                                length=n, header=data[:3])
    if form.has_stamp:
        sec, nsec, index, size = _V24_HEAD.unpack_from(data, 3)
    else:
        index, size = _LEGACY_HEAD.unpack_from(data, 3)
        sec = nsec = None
    if index < 0:
        raise SensorDecodeError("image chunk index %d is negative" % index, "index", length=n)
    if size < 0 or size > form.max_chunk or hs + size + 2 > n:
        raise SensorDecodeError(
            "image chunk size %d does not fit a %d-byte datagram (%s header %d bytes, at most "
            "%d chunk bytes, 2-byte tail)" % (size, n, form.name, hs, form.max_chunk),
            "size", length=n)
    end = hs + size
    tail = _tail(data, end)
    if tail is None:
        raise SensorDecodeError("image datagram has no AI/EI tail (last bytes %r, bytes after "
                                "the %d-byte chunk %r)" % (data[-2:], size, data[end:end + 2]),
                                "tail", length=n)
    return ImageChunk(index, tail == TAIL_LAST, data[hs:end], sec, nsec)


class FrameAssembler:
    """Reassembles JPEG frames from ``MOR`` datagrams of one camera.

    A frame is chunks 0, 1, 2, ... closed by the ``EI`` chunk.  A lost,
    duplicated or reordered chunk drops only the frame it belongs to (the
    assembler then waits for the next chunk 0); the reason is counted (see
    :data:`DROP_REASONS`).  With stamps (``v24``), a datagram identical to the
    one accepted just before (same index, stamp and bytes) is ignored and counted
    as ``duplicates`` instead of dropping the frame.  Frames lost entirely are
    not seen and not counted.

    Bytes are kept in a list and joined once per frame (linear in the frame
    size).  Not thread-safe: use one assembler per receiving thread.
    """

    def __init__(self, header: str = "v24", check_stamps: bool = True, max_chunks: int = 64):
        self.form = _form(header)
        self.header = header
        self.check_stamps = bool(check_stamps) and self.form.has_stamp
        if max_chunks < 1:
            raise ValueError("max_chunks must be >= 1")
        self.max_chunks = int(max_chunks)
        self.frames = 0          # frames completed
        self.chunks = 0          # valid chunks received
        self.malformed = 0       # datagrams that did not decode
        self.duplicates = 0      # identical repeated datagrams ignored
        self.dropped: Counter = Counter()   # reason -> frames dropped
        self.malformed_reasons: Counter = Counter()
        self.last_error: Optional[str] = None
        self.reset()

    def reset(self) -> None:
        """Forget any partial frame (counters are kept)."""
        self._parts: Optional[List[bytes]] = None   # None: no frame in progress
        self._stamp = (None, None)
        self._skipping = False    # dropping the rest of a broken frame until the next index 0
        self._last: Optional[ImageChunk] = None

    @property
    def frames_dropped(self) -> int:
        return sum(self.dropped.values())

    def counters(self) -> Dict[str, int]:
        """Snapshot for diagnostics: frames, chunks, malformed, duplicates,
        dropped and ``dropped_<reason>`` / ``malformed_<reason>`` per reason."""
        out = {"frames": self.frames, "chunks": self.chunks, "malformed": self.malformed,
               "duplicates": self.duplicates, "dropped": self.frames_dropped}
        for reason, count in self.dropped.items():
            out["dropped_" + reason] = count
        for reason, count in self.malformed_reasons.items():
            out["malformed_" + reason] = count
        return out

    def push(self, datagram) -> Optional[ImageFrame]:
        """Add one datagram; returns the frame it completes, else None.

        A datagram that does not decode is counted (``malformed``), described in
        ``last_error`` and otherwise ignored: it never raises for bytes input.
        """
        try:
            chunk = decode_chunk(datagram, self.header)
        except SensorDecodeError as exc:
            self.malformed += 1
            self.malformed_reasons[exc.reason] += 1
            self.last_error = str(exc)
            return None
        return self.add_chunk(chunk)

    def _drop(self, reason: str, detail: str) -> None:
        self.dropped[reason] += 1
        self.last_error = "image frame dropped (%s): %s" % (reason, detail)
        self._parts = None
        self._skipping = True

    def add_chunk(self, chunk: ImageChunk) -> Optional[ImageFrame]:
        """Add a decoded chunk; returns the frame it completes, else None."""
        last = self._last
        if (self.form.has_stamp and last is not None and chunk.index == last.index
                and chunk.sec == last.sec and chunk.nsec == last.nsec and chunk.data == last.data
                and chunk.last == last.last):
            self.duplicates += 1
            return None
        self.chunks += 1
        self._last = chunk
        index = chunk.index
        if index == 0:
            if self._parts is not None:
                self._drop("missing_last", "chunk 0 of a new frame arrived after chunk %d, "
                           "before the EI chunk" % (len(self._parts) - 1))
            self._skipping = False
            self._parts = [chunk.data]
            self._stamp = (chunk.sec, chunk.nsec)
        elif self._parts is None:
            if not self._skipping:
                self._drop("missing_first", "chunk %d arrived without chunk 0" % index)
            return None
        else:
            expected = len(self._parts)
            if index != expected:
                if index > expected:
                    self._drop("missing_chunk", "chunk %d arrived, expected %d" % (index, expected))
                else:
                    self._drop("out_of_order", "chunk %d arrived after chunk %d"
                               % (index, expected - 1))
                return None
            if self.check_stamps and (chunk.sec, chunk.nsec) != self._stamp:
                self._drop("stamp_mismatch", "chunk %d stamped %s.%09d, chunk 0 %s.%09d"
                           % (index, chunk.sec, chunk.nsec, self._stamp[0], self._stamp[1]))
                return None
            self._parts.append(chunk.data)
        if chunk.last:
            parts = self._parts
            self._parts = None
            self.frames += 1
            jpeg = parts[0] if len(parts) == 1 else b"".join(parts)
            return ImageFrame(self._stamp[0], self._stamp[1], jpeg, len(parts))
        if len(self._parts) >= self.max_chunks:
            self._drop("too_many_chunks", "%d chunks without EI" % len(self._parts))
        return None


def _check_int32(name: str, value) -> int:
    if (not isinstance(value, int) or isinstance(value, bool)
            or not _INT32_MIN <= value <= _INT32_MAX):
        raise EncodeError("%s must be an int32, got %r" % (name, value), field=name)
    return value


def _check_uint32(name: str, value) -> int:
    if (not isinstance(value, int) or isinstance(value, bool)
            or not 0 <= value <= _UINT32_MAX):
        raise EncodeError("%s must be a uint32 (0..%d), got %r" % (name, _UINT32_MAX, value),
                          field=name)
    return value


def encode_frame(jpeg, sec: int = 0, nsec: int = 0, header: str = "v24", padded: bool = True,
                 max_chunk: Optional[int] = None) -> List[bytes]:
    """Cut ``jpeg`` into ``MOR`` datagrams (index 0, 1, ...; ``EI`` on the last).

    ``padded=True`` (default) zero-fills every datagram to 65,000 bytes with the
    tail at offset 64,998, which every known receiver accepts; ``padded=False``
    sends header + chunk + tail.  ``max_chunk`` defaults to the form's maximum
    (64,979 / 64,987).  An empty ``jpeg`` gives one datagram with size 0.
    ``sec``/``nsec`` (uint32) are written in the ``v24`` form and ignored in ``legacy``.
    """
    form = _form(header)
    if not isinstance(jpeg, (bytes, bytearray, memoryview)):
        raise EncodeError("jpeg must be bytes, got %s" % type(jpeg).__name__, field="jpeg")
    jpeg = bytes(jpeg)
    if max_chunk is None:
        max_chunk = form.max_chunk
    if not isinstance(max_chunk, int) or not 1 <= max_chunk <= form.max_chunk:
        raise EncodeError("max_chunk must be 1..%d for the %s form, got %r"
                          % (form.max_chunk, form.name, max_chunk), field="max_chunk")
    if form.has_stamp:
        _check_uint32("sec", sec)
        _check_uint32("nsec", nsec)
    count = max(1, -(-len(jpeg) // max_chunk))
    hs = form.header_size
    out = []
    for index in range(count):
        piece = jpeg[index * max_chunk:(index + 1) * max_chunk]
        tail = TAIL_LAST if index == count - 1 else TAIL_MORE
        if form.has_stamp:
            head = _MOR + _V24_HEAD.pack(sec, nsec, index, len(piece))
        else:
            head = _MOR + _LEGACY_HEAD.pack(index, len(piece))
        if padded:
            buf = bytearray(DATAGRAM_SIZE)
            buf[0:hs] = head
            buf[hs:hs + len(piece)] = piece
            buf[DATAGRAM_SIZE - 2:] = tail
            out.append(bytes(buf))
        else:
            out.append(b"".join((head, piece, tail)))
    return out


# ----------------------------------------------------------------------------- boxes

class BoxForm(NamedTuple):
    """One layout of the box datagram."""

    name: str
    header_size: int      # 19 (v24) or 11 (legacy)
    object_size: int      # 115 or 179
    max_objects: int      # objects that fit one 65,000-byte datagram
    has_stamp: bool


BOX_FORMS = {
    "v24": BoxForm("v24", 19, 115, (DATAGRAM_SIZE - 21) // 115, True),        # 565
    "legacy": BoxForm("legacy", 11, 179, (DATAGRAM_SIZE - 13) // 179, False),  # 363
}

_BOX_V24 = struct.Struct("<24f4f3B")                # 115 bytes
_BOX_LEGACY = struct.Struct("<24f16f4f3B")          # 179 bytes
_ZERO_V24 = bytes(115)
_ZERO_LEGACY = bytes(179)
_SKIP_MODES = ("all_zero", "box2d", "class", "none")
_DEFAULT_TAIL = object()


class BoxObject(NamedTuple):
    """One bounding box.

    corners: 8 (x, y, z) float tuples, m; v24: camera optical frame [I]
    (x right, y down, z forward), binary cube order (edges 0-1, 0-2, 0-4, ...);
    legacy: world frame.  xmin, ymin, xmax, ymax: 2D box in image pixels.
    group_id, class_id, subclass_id: MORAI's codes (tables unpublished [?]).
    image_corners: legacy form only, the 8 projected corners (x, y) in pixels.
    """

    corners: Tuple[Tuple[float, float, float], ...]
    xmin: float
    ymin: float
    xmax: float
    ymax: float
    group_id: int
    class_id: int
    subclass_id: int
    image_corners: Optional[Tuple[Tuple[float, float], ...]] = None


class BoxPacket(NamedTuple):
    """A decoded box datagram: stamp (None in the legacy form), datagram
    ``index``, the non-empty ``objects`` in wire order, the ``tail`` bytes, and
    how ``size`` was read (``'bytes'`` or ``'count'``)."""

    sec: Optional[int]
    nsec: Optional[int]
    index: int
    objects: Tuple[BoxObject, ...]
    tail: bytes
    size_unit: str = "bytes"


def _triples(values: Sequence[float], size: int) -> tuple:
    return tuple(tuple(values[i:i + size]) for i in range(0, len(values), size))


def _is_empty(raw: bytes, values: tuple, zero: bytes, skip: str, box_at: int) -> bool:
    if skip == "all_zero":
        return raw == zero
    if skip == "box2d":
        return not any(values[box_at:box_at + 4])
    if skip == "class":
        return not any(values[-3:])
    return False


def _size_unit(data: bytes, size: int, hs: int, osz: int, unit: str) -> Tuple[str, int]:
    """(unit, number of object slots) of a box datagram's ``size`` field, or raises."""
    n = len(data)
    room = n - hs - 2                       # bytes available for objects before the tail
    as_bytes = size >= 0 and size % osz == 0 and size <= room
    as_count = 0 <= size <= room // osz
    if unit == "bytes":
        if as_bytes:
            return "bytes", size // osz
        raise SensorDecodeError(
            "box size field %d (read as bytes) is not a multiple of %d that fits a %d-byte datagram "
            "(%d-byte header, 2-byte tail)" % (size, osz, n, hs), "size", length=n)
    if unit == "count":
        if as_count:
            return "count", size
        raise SensorDecodeError(
            "box size field %d (read as a count of %d-byte objects) does not fit a %d-byte datagram "
            "(%d-byte header, 2-byte tail)" % (size, osz, n, hs), "size", length=n)
    if as_bytes and as_count:
        if size == 0:
            return "bytes", 0
        # the bytes between the end of the 'bytes' reading and the end of the 'count' one:
        # object data (count) or zero padding (bytes; both readings then give the same objects)
        if data[hs + size:hs + size * osz].count(0) == size * (osz - 1):
            return "bytes", size // osz
        return "count", size
    if as_bytes:
        return "bytes", size // osz
    if as_count:
        return "count", size
    raise SensorDecodeError(
        "box size field %d fits a %d-byte datagram neither as bytes (a multiple of %d, at most %d) nor "
        "as a count of %d-byte objects (at most %d)" % (size, n, osz, max(room, 0), osz,
                                                          max(room, 0) // osz), "size", length=n)


def decode_boxes(datagram, form: str = "v24", skip: str = "all_zero",
                 expected_tail=_DEFAULT_TAIL, size_unit: str = "auto") -> BoxPacket:
    """Decode one box datagram.

    ``form``: ``'v24'`` or ``'legacy'``.  ``skip``: which entries are padding
    (``'all_zero'``, ``'box2d'``, ``'class'`` or ``'none'``; module docstring).
    ``expected_tail``: bytes the tail must equal, or None for any; default None
    for ``v24`` (value undocumented) and ``b'EO'`` for ``legacy``.
    ``size_unit``: ``'auto'``, ``'bytes'`` or ``'count'`` (module docstring).
    """
    try:
        bf = BOX_FORMS[form]
    except KeyError:
        raise ValueError("form must be one of %s, got %r" % (sorted(BOX_FORMS), form)) from None
    if skip not in _SKIP_MODES:
        raise ValueError("skip must be one of %s, got %r" % (_SKIP_MODES, skip))
    if size_unit not in BOX_SIZE_UNITS:
        raise ValueError("size_unit must be one of %s, got %r" % (BOX_SIZE_UNITS, size_unit))
    if expected_tail is _DEFAULT_TAIL:
        expected_tail = None if bf.has_stamp else b"EO"
    data = check_bytes(datagram)
    n = len(data)
    hs = bf.header_size
    if n < hs + 2:
        raise SensorDecodeError("box datagram of %d bytes: shorter than the %d-byte %s header + "
                                "2-byte tail" % (n, hs, form), "length", length=n, header=data[:3])
    if bf.has_stamp:
        if data[:3] != b"BOX":
            raise SensorDecodeError("box datagram starts %r, expected b'BOX'" % data[:3], "header",
                                    length=n, header=data[:3])
        sec, nsec, index, size = _V24_HEAD.unpack_from(data, 3)
    else:
        if data[:1] != b"B":
            raise SensorDecodeError("legacy box datagram starts %r, expected b'B'" % data[:3],
                                    "header", length=n, header=data[:3])
        index, size = _LEGACY_HEAD.unpack_from(data, 3)
        sec = nsec = None
    osz = bf.object_size
    unit, slots = _size_unit(data, size, hs, osz, size_unit)
    end = hs + slots * osz
    tail = data[-2:]
    if expected_tail is not None and tail != expected_tail:
        after = data[end:end + 2]
        if after != expected_tail:
            raise SensorDecodeError("box tail %r (after the objects: %r), expected %r"
                                    % (tail, after, expected_tail), "tail", length=n)
        tail = after
    unpack = _BOX_V24.unpack_from if bf.has_stamp else _BOX_LEGACY.unpack_from
    zero = _ZERO_V24 if bf.has_stamp else _ZERO_LEGACY
    box_at = 24 if bf.has_stamp else 40
    objects = []
    for off in range(hs, end, osz):
        values = unpack(data, off)
        if skip != "none" and _is_empty(data[off:off + osz], values, zero, skip, box_at):
            continue
        if bf.has_stamp:
            image = None
        else:
            image = _triples(values[24:40], 2)
        objects.append(BoxObject(_triples(values[0:24], 3), values[box_at], values[box_at + 1],
                                 values[box_at + 2], values[box_at + 3], values[-3], values[-2],
                                 values[-1], image))
    return BoxPacket(sec, nsec, index, tuple(objects), tail, unit)


def _pack_object(bf: BoxForm, obj: BoxObject) -> bytes:
    try:
        corners = [float(v) for corner in obj.corners for v in corner]
        if len(corners) != 24:
            raise EncodeError("a box needs 8 corners of (x, y, z), got %d values" % len(corners),
                              field="corners")
        values = corners
        if not bf.has_stamp:
            image = [float(v) for corner in (obj.image_corners or ((0.0, 0.0),) * 8)
                     for v in corner]
            if len(image) != 16:
                raise EncodeError("a legacy box needs 8 image corners of (x, y)",
                                  field="image_corners")
            values = values + image
        values += [obj.xmin, obj.ymin, obj.xmax, obj.ymax, obj.group_id, obj.class_id,
                   obj.subclass_id]
        packer = _BOX_V24 if bf.has_stamp else _BOX_LEGACY
        return packer.pack(*values)
    except (struct.error, TypeError, ValueError) as exc:
        if isinstance(exc, EncodeError):
            raise
        raise EncodeError("cannot pack box %r: %s" % (obj, exc)) from None


def encode_boxes(objects: Iterable[BoxObject], sec: int = 0, nsec: int = 0, form: str = "v24",
                 padded: bool = True, tail: bytes = b"EO", index: int = 0,
                 size_unit: str = "bytes") -> List[bytes]:
    """Box datagram(s) for ``objects``.

    At most ``BOX_FORMS[form].max_objects`` objects per datagram; more objects
    give several datagrams with index ``index``, ``index + 1``, ... [I].  No
    objects give one datagram with size 0.  ``padded``: zero-fill to 65,000 bytes
    with the tail at 64,998 (default); otherwise the tail follows the objects.
    ``tail``: 2 bytes; the v24 value is undocumented [?], ``EO`` is the legacy one,
    CR LF heven-ad-2026's.  ``size_unit``: ``'bytes'`` (default; MORAI's C++ and
    A2Z decoders) or ``'count'`` (heven-ad-2026's 25.S4 codec: unpadded, CR LF).
    """
    try:
        bf = BOX_FORMS[form]
    except KeyError:
        raise EncodeError("form must be one of %s, got %r" % (sorted(BOX_FORMS), form),
                          field="form") from None
    if size_unit not in ("bytes", "count"):
        raise EncodeError("size_unit must be 'bytes' or 'count', got %r" % (size_unit,),
                          field="size_unit")
    if not isinstance(tail, bytes) or len(tail) != 2:
        raise EncodeError("tail must be 2 bytes, got %r" % (tail,), field="tail")
    if bf.has_stamp:
        _check_uint32("sec", sec)
        _check_uint32("nsec", nsec)
    packed = [_pack_object(bf, obj) for obj in objects]
    groups = [packed[i:i + bf.max_objects] for i in range(0, len(packed), bf.max_objects)] or [[]]
    out = []
    for number, group in enumerate(groups):
        body = b"".join(group)
        idx = _check_int32("index", index + number)
        size = len(body) if size_unit == "bytes" else len(group)
        if bf.has_stamp:
            head = b"BOX" + _V24_HEAD.pack(sec, nsec, idx, size)
        else:
            head = b"BOX" + _LEGACY_HEAD.pack(idx, size)
        datagram = head + body
        if padded:
            datagram = datagram + bytes(DATAGRAM_SIZE - 2 - len(datagram)) + tail
        else:
            datagram = datagram + tail
        out.append(datagram)
    return out
