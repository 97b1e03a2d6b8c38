"""MORAI SIM camera images over UDP: JPEG chunk datagrams ("MOR"), and what the
camera port's two datagram kinds share: the port, the datagram size, the header
forms and stamps, and :func:`classify`.

One camera sensor sends, on one UDP port, its JPEG-compressed image cut into
datagrams of at most 65,000 bytes, and (when objects are in view) ground-truth
2D/3D bounding boxes (:mod:`morai_bridge.wire.camera.boxes`).  Facts and
confidence tags ([C] confirmed, [S] single source, [I] inferred, [?] unknown)
are those of docs/sensors.md, "Camera".

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

Decoders raise only :class:`SensorDecodeError` (a ``ValueError``) for bytes
input of any length and content; encoders raise :class:`EncodeError`.
No ROS imports.
"""

import struct
from collections import Counter
from typing import Dict, List, NamedTuple, Optional

from ..sensor_errors import EncodeError, SensorDecodeError, check_bytes

__all__ = [
    "DEFAULT_PORT", "DATAGRAM_SIZE", "TAIL_MORE", "TAIL_LAST", "HEADER_FORMS", "ChunkForm",
    "ImageChunk", "ImageFrame", "FrameAssembler", "classify", "decode_chunk", "encode_frame",
    "SensorDecodeError", "EncodeError", "DROP_REASONS",
]

#: Destination port of MORAI's example configurations (WeGo, SensorExample) [C].
DEFAULT_PORT = 1232
#: Size of a padded datagram and of every MORAI example's receive buffer [C].
DATAGRAM_SIZE = 65000
TAIL_MORE = b"AI"
TAIL_LAST = b"EI"
_TAILS = (TAIL_MORE, TAIL_LAST)
_MOR = b"MOR"
_UINT32_MAX = 2 ** 32 - 1


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

# the fields after the 3-byte magic, in "MOR" and "BOX" datagrams alike
V24_HEAD = struct.Struct("<2I2i")    # uint32 sec, nsec; int32 index, size at offset 3
LEGACY_HEAD = struct.Struct("<2i")   # index, size at offset 3

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
        raise ValueError(f"header must be one of {sorted(HEADER_FORMS)}, got {header!r}") from None


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
        raise SensorDecodeError(f"image datagram starts {data[:3]!r}, expected b'MOR'", "header",
                                length=n, header=data[:3])
    if form.has_stamp:
        sec, nsec, index, size = V24_HEAD.unpack_from(data, 3)
    else:
        index, size = LEGACY_HEAD.unpack_from(data, 3)
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
        self.last_error = f"image frame dropped ({reason}): {detail}"
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
            self._drop("too_many_chunks", f"{len(self._parts)} chunks without EI")
        return None


def check_uint32(name: str, value) -> int:
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
        raise EncodeError(f"jpeg must be bytes, got {type(jpeg).__name__}", field="jpeg")
    jpeg = bytes(jpeg)
    if max_chunk is None:
        max_chunk = form.max_chunk
    if not isinstance(max_chunk, int) or not 1 <= max_chunk <= form.max_chunk:
        raise EncodeError("max_chunk must be 1..%d for the %s form, got %r"
                          % (form.max_chunk, form.name, max_chunk), field="max_chunk")
    if form.has_stamp:
        check_uint32("sec", sec)
        check_uint32("nsec", nsec)
    count = max(1, -(-len(jpeg) // max_chunk))
    hs = form.header_size
    out = []
    for index in range(count):
        piece = jpeg[index * max_chunk:(index + 1) * max_chunk]
        tail = TAIL_LAST if index == count - 1 else TAIL_MORE
        if form.has_stamp:
            head = _MOR + V24_HEAD.pack(sec, nsec, index, len(piece))
        else:
            head = _MOR + LEGACY_HEAD.pack(index, len(piece))
        if padded:
            buf = bytearray(DATAGRAM_SIZE)
            buf[0:hs] = head
            buf[hs:hs + len(piece)] = piece
            buf[DATAGRAM_SIZE - 2:] = tail
            out.append(bytes(buf))
        else:
            out.append(b"".join((head, piece, tail)))
    return out
