"""MORAI SIM camera bounding boxes over UDP: box datagrams ("BOX").

When objects are in view, a camera sensor sends ground-truth 2D/3D bounding
boxes on the port of its images (:mod:`morai_bridge.wire.camera.images`, which
holds what the two kinds share: the port, the datagram size, the header fields,
the unsigned reading of the stamps and :func:`~morai_bridge.wire.camera.images.classify`).
Facts and confidence tags ([C] confirmed, [S] single source, [I] inferred, [?]
unknown) are those of docs/sensors.md, "Camera".

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

Public API
----------
``decode_boxes(datagram, form='v24', skip='all_zero', expected_tail=..., size_unit='auto') -> BoxPacket``
``encode_boxes(objects, sec=0, nsec=0, form='v24', padded=True, tail=b'EO', index=0,
size_unit='bytes') -> [bytes]``

The decoder raises only :class:`SensorDecodeError` (a ``ValueError``) for bytes
input of any length and content; the encoder raises :class:`EncodeError`.
No ROS imports.
"""

import struct
from typing import Iterable, List, NamedTuple, Optional, Sequence, Tuple

from ..sensor_errors import EncodeError, SensorDecodeError, check_bytes
from .images import DATAGRAM_SIZE, LEGACY_HEAD, V24_HEAD, check_uint32

__all__ = [
    "BOX_FORMS", "BoxForm", "BoxObject", "BoxPacket", "decode_boxes", "encode_boxes",
    "BOX_SIZE_UNITS", "SensorDecodeError", "EncodeError",
]

_INT32_MIN, _INT32_MAX = -2 ** 31, 2 ** 31 - 1
#: meanings of the BOX ``size`` field (module docstring)
BOX_SIZE_UNITS = ("auto", "bytes", "count")


def _check_int32(name: str, value) -> int:
    if (not isinstance(value, int) or isinstance(value, bool)
            or not _INT32_MIN <= value <= _INT32_MAX):
        raise EncodeError(f"{name} must be an int32, got {value!r}", field=name)
    return value


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
        raise ValueError(f"form must be one of {sorted(BOX_FORMS)}, got {form!r}") from None
    if skip not in _SKIP_MODES:
        raise ValueError(f"skip must be one of {_SKIP_MODES}, got {skip!r}")
    if size_unit not in BOX_SIZE_UNITS:
        raise ValueError(f"size_unit must be one of {BOX_SIZE_UNITS}, got {size_unit!r}")
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
            raise SensorDecodeError(f"box datagram starts {data[:3]!r}, expected b'BOX'", "header",
                                    length=n, header=data[:3])
        sec, nsec, index, size = V24_HEAD.unpack_from(data, 3)
    else:
        if data[:1] != b"B":
            raise SensorDecodeError(f"legacy box datagram starts {data[:3]!r}, expected b'B'",
                                    "header", length=n, header=data[:3])
        index, size = LEGACY_HEAD.unpack_from(data, 3)
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
            raise EncodeError(f"a box needs 8 corners of (x, y, z), got {len(corners)} values",
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
        raise EncodeError(f"cannot pack box {obj!r}: {exc}") from None


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
        raise EncodeError(f"form must be one of {sorted(BOX_FORMS)}, got {form!r}",
                          field="form") from None
    if size_unit not in ("bytes", "count"):
        raise EncodeError(f"size_unit must be 'bytes' or 'count', got {size_unit!r}",
                          field="size_unit")
    if not isinstance(tail, bytes) or len(tail) != 2:
        raise EncodeError(f"tail must be 2 bytes, got {tail!r}", field="tail")
    if bf.has_stamp:
        check_uint32("sec", sec)
        check_uint32("nsec", nsec)
    packed = [_pack_object(bf, obj) for obj in objects]
    groups = [packed[i:i + bf.max_objects] for i in range(0, len(packed), bf.max_objects)] or [[]]
    out = []
    for number, group in enumerate(groups):
        body = b"".join(group)
        idx = _check_int32("index", index + number)
        size = len(body) if size_unit == "bytes" else len(group)
        if bf.has_stamp:
            head = b"BOX" + V24_HEAD.pack(sec, nsec, idx, size)
        else:
            head = b"BOX" + LEGACY_HEAD.pack(idx, size)
        datagram = head + body
        if padded:
            datagram = datagram + bytes(DATAGRAM_SIZE - 2 - len(datagram)) + tail
        else:
            datagram = datagram + tail
        out.append(datagram)
    return out
