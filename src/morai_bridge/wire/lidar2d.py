"""MORAI SIM 2D LiDAR over UDP: one 1,107-byte datagram per 360-sample scan.

Facts and confidence tags ([C] confirmed, [S] single source, [I] inferred,
[?] unknown) are those of docs/sensors.md, "2D LiDAR".

Layout (little-endian, packed) [C]
----------------------------------
====  ====  =============  ===============================================
off   size  type           field
====  ====  =============  ===============================================
0     9     char[9]        header: literal unknown [?]
9     4     int32          data_length: meaning unknown, 1080 expected [I]
13    12    float32[3]     aux_data: meaning unknown [?]
25    1080  360 x (uint16  distance in mm [C], intensity [C]
            mm, uint8)
1105  2     char[2]        tail: value unknown [?]
====  ====  =============  ===============================================

One sample per degree [C].  Open questions made parameters (spec 4, 8 q7):

* ``expected_header`` / ``expected_tail``: None (default) accepts any; give bytes
  to enforce them.  The encoder writes ``#Lidar2D$`` (9 bytes in MORAI's
  ``#Name$`` style: a guess) and ``\\r\\n`` (the tail of MORAI's other packets).
* Angular origin and direction of sample 0 [?]: ``angle_origin_deg`` (default 0:
  straight ahead, x forward) and ``direction`` (+1 counter-clockwise, default;
  -1 clockwise).  Both defaults follow MORAI's viewer (sample i drawn at
  90 deg + i in an up = forward plot, counter-clockwise) and a third-party
  LaserScan publisher (rolled by 180 samples, angle_min = -pi); neither is
  confirmed.  Output is in LaserScan order (REP-103: counter-clockwise,
  increasing angle) starting at ``angle_min_deg`` (default -180), which must be
  a whole number of degrees away from the origin.
* No hit [S]: MORAI's viewer treats samples equal to the range limit (10 m in
  its setup) as no hit; the limit is not in the datagram.  With ``range_max`` (m)
  set, samples >= ``range_max`` become +inf (``no_hit='inf'``, REP-117) or are
  kept (``no_hit='keep'``).  Without it nothing is converted and the scan's
  ``range_max`` is the largest encodable range, 65.535 m.  A 0 mm sample is
  passed on as 0.0 (below any ``range_min``; consumers ignore it).

Ports: no MORAI default is known for the 2D LiDAR (MORAI's example uses a
placeholder, 1111): :data:`DEFAULT_PORT` = 0 means "off" [S].

Public API
----------
``decode_scan(datagram, angle_origin_deg=0.0, direction=1, angle_min_deg=-180.0,
range_max=None, no_hit='inf', expected_header=None, expected_tail=None) -> Scan``
``decode_raw(datagram, expected_header=None, expected_tail=None) -> RawScan``
``encode_scan(ranges_m, intensities=None, header=DEFAULT_HEADER, data_length=1080,
aux=(0, 0, 0), tail=DEFAULT_TAIL) -> bytes`` (samples in wire order)

Decoders raise only :class:`SensorDecodeError`; the encoder :class:`EncodeError`.
No ROS imports.
"""

import math
import struct
from typing import NamedTuple, Optional, Sequence, Tuple

from .sensor_errors import EncodeError, SensorDecodeError, check_bytes

__all__ = [
    "DEFAULT_PORT", "DATAGRAM_SIZE", "SAMPLES", "HEADER_SIZE", "DEFAULT_HEADER", "DEFAULT_TAIL",
    "DEFAULT_DATA_LENGTH", "MAX_RANGE_M", "RawScan", "Scan", "decode_raw", "decode_scan",
    "encode_scan", "SensorDecodeError", "EncodeError",
]

#: No default is known: 0 = stream off unless a port is configured.
DEFAULT_PORT = 0
SAMPLES = 360
HEADER_SIZE = 9
DATAGRAM_SIZE = 1107
DEFAULT_HEADER = b"#Lidar2D$"     # guess in MORAI's style [?]
DEFAULT_TAIL = b"\r\n"            # MORAI's usual tail [?]
DEFAULT_DATA_LENGTH = 1080        # [I]
MAX_RANGE_M = 65.535              # uint16 mm

_HEAD = struct.Struct("<9si3f")                 # 25 bytes
_SAMPLES = struct.Struct("<" + "HB" * SAMPLES)  # 1080 bytes
_TAIL_AT = _HEAD.size + _SAMPLES.size           # 1105
assert _TAIL_AT + 2 == DATAGRAM_SIZE


class RawScan(NamedTuple):
    """The datagram as sent: header, data_length, aux (3 floats), ranges in m and
    intensities in wire order (sample 0 first), tail."""

    header: bytes
    data_length: int
    aux: Tuple[float, float, float]
    ranges: Tuple[float, ...]
    intensities: Tuple[int, ...]
    tail: bytes


class Scan(NamedTuple):
    """A scan in LaserScan order: ``ranges[j]`` (m, float) and ``intensities[j]``
    are at angle ``angle_min + j * angle_increment`` (rad, counter-clockwise from
    x forward).  ``range_max`` is the configured limit or 65.535 m.  ``raw`` is
    the undecoded-order :class:`RawScan`."""

    angle_min: float
    angle_max: float
    angle_increment: float
    range_max: float
    ranges: Tuple[float, ...]
    intensities: Tuple[float, ...]
    raw: RawScan


def decode_raw(datagram, expected_header: Optional[bytes] = None,
               expected_tail: Optional[bytes] = None) -> RawScan:
    """Check the length (exactly 1,107 bytes) and the optional header/tail; wire order."""
    data = check_bytes(datagram)
    n = len(data)
    if n != DATAGRAM_SIZE:
        raise SensorDecodeError("2D LiDAR datagram of %d bytes, expected %d" % (n, DATAGRAM_SIZE),
                                "length", length=n, expected=(DATAGRAM_SIZE,), header=data[:9])
    header, data_length, a0, a1, a2 = _HEAD.unpack_from(data, 0)
    if expected_header is not None and header != expected_header:
        raise SensorDecodeError(f"2D LiDAR header {header!r}, expected {expected_header!r}",
                                "header", length=n, header=header)
    tail = data[_TAIL_AT:]
    if expected_tail is not None and tail != expected_tail:
        raise SensorDecodeError(f"2D LiDAR tail {tail!r}, expected {expected_tail!r}", "tail",
                                length=n)
    values = _SAMPLES.unpack_from(data, _HEAD.size)
    ranges = tuple(mm / 1000.0 for mm in values[0::2])
    return RawScan(header, data_length, (a0, a1, a2), ranges, values[1::2], tail)


def _order(angle_origin_deg: float, direction: int, angle_min_deg: float):
    """Wire index of each LaserScan slot j (angle_min + j degrees, CCW)."""
    if direction not in (1, -1):
        raise ValueError("direction must be +1 (counter-clockwise) or -1 (clockwise)")
    shift = angle_min_deg - angle_origin_deg
    steps = round(shift)
    if abs(shift - steps) > 1e-6:
        raise ValueError(f"angle_min_deg - angle_origin_deg must be a whole number of degrees, got {shift!r}")
    # sample i is at origin + direction * i; slot j at angle_min + j = origin + steps + j
    return [(direction * (steps + j)) % SAMPLES for j in range(SAMPLES)]


_ORDERS = {}


def decode_scan(datagram, angle_origin_deg: float = 0.0, direction: int = 1,
                angle_min_deg: float = -180.0, range_max: Optional[float] = None,
                no_hit: str = "inf", expected_header: Optional[bytes] = None,
                expected_tail: Optional[bytes] = None) -> Scan:
    """Decode a datagram into LaserScan order (module docstring for the options)."""
    if no_hit not in ("inf", "keep"):
        raise ValueError("no_hit must be 'inf' or 'keep'")
    key = (angle_origin_deg, direction, angle_min_deg)
    order = _ORDERS.get(key)
    if order is None:
        order = _ORDERS[key] = _order(angle_origin_deg, direction, angle_min_deg)
    raw = decode_raw(datagram, expected_header, expected_tail)
    ranges = [raw.ranges[i] for i in order]
    if range_max is not None and no_hit == "inf":
        limit = float(range_max) - 0.0005       # within half a millimetre of the limit
        ranges = [math.inf if r >= limit else r for r in ranges]
    intensities = tuple(float(raw.intensities[i]) for i in order)
    inc = math.radians(1.0)
    amin = math.radians(angle_min_deg)
    return Scan(amin, amin + inc * (SAMPLES - 1), inc,
                MAX_RANGE_M if range_max is None else float(range_max), tuple(ranges),
                intensities, raw)


def encode_scan(ranges_m: Sequence[float], intensities: Optional[Sequence[int]] = None,
                header: bytes = DEFAULT_HEADER, data_length: int = DEFAULT_DATA_LENGTH,
                aux: Sequence[float] = (0.0, 0.0, 0.0), tail: bytes = DEFAULT_TAIL) -> bytes:
    """A 2D LiDAR datagram from 360 ranges (m) in WIRE order (sample 0 first).

    Ranges are rounded to mm; inf / NaN / values above 65.535 m raise
    :class:`EncodeError` (an emulator writes its range limit for no hit, as MORAI
    does).  intensities: 360 values 0..255 (default 0).
    """
    if len(ranges_m) != SAMPLES:
        raise EncodeError("need %d ranges, got %d" % (SAMPLES, len(ranges_m)), field="ranges_m")
    if intensities is None:
        intensities = (0,) * SAMPLES
    if len(intensities) != SAMPLES:
        raise EncodeError("need %d intensities, got %d" % (SAMPLES, len(intensities)),
                          field="intensities")
    if not isinstance(header, bytes) or len(header) != HEADER_SIZE:
        raise EncodeError("header must be %d bytes, got %r" % (HEADER_SIZE, header), field="header")
    if not isinstance(tail, bytes) or len(tail) != 2:
        raise EncodeError(f"tail must be 2 bytes, got {tail!r}", field="tail")
    values = []
    for i, (r, inten) in enumerate(zip(ranges_m, intensities)):
        r = float(r)
        if not 0.0 <= r <= MAX_RANGE_M:
            raise EncodeError("range %d = %r m is not within 0..%.3f m" % (i, r, MAX_RANGE_M),
                              field="ranges_m")
        values.append(int(round(r * 1000.0)))
        values.append(inten)
    try:
        head = _HEAD.pack(header, data_length, *aux)
        body = _SAMPLES.pack(*values)
    except (struct.error, TypeError) as exc:
        raise EncodeError(f"cannot pack 2D LiDAR scan: {exc}") from None
    return head + body + tail
