"""Geometry of the simulator emulator: footprints in the map plane, and the map <-> WGS-84 link.

* :func:`boxes_overlap`: separating-axis test of two oriented rectangles
  ``(cx, cy, yaw rad, length, width)`` (the ego's and actors' footprints).
* :func:`utm_to_latlon`: WGS-84 UTM (northern hemisphere) -> latitude and
  longitude, for the GPS stream (map x/y are UTM easting/northing minus the
  map offset).
* ``KNOTS_PER_MPS``: NMEA speed over ground.

Unit factors and quaternions are in :mod:`morai_bridge.wire.units`.  No ROS.
"""

import math
from typing import Tuple

__all__ = ["boxes_overlap", "utm_to_latlon", "KNOTS_PER_MPS"]

KNOTS_PER_MPS = 1.0 / 0.514444


def _corners(box):
    cx, cy, yaw, length, width = box
    c, s = math.cos(yaw), math.sin(yaw)
    hl, hw = length / 2.0, width / 2.0
    return [(cx + c * dx - s * dy, cy + s * dx + c * dy)
            for dx, dy in ((hl, hw), (hl, -hw), (-hl, -hw), (-hl, hw))]


def boxes_overlap(a, b, margin: float = 1e-9) -> bool:
    """Separating-axis test of two oriented rectangles ``(cx, cy, yaw, length, width)``.

    Touching edges (overlap below ``margin``) do not count as a collision.
    """
    # quick reject on the bounding circles
    ra = math.hypot(a[3], a[4]) / 2.0
    rb = math.hypot(b[3], b[4]) / 2.0
    if math.hypot(a[0] - b[0], a[1] - b[1]) > ra + rb:
        return False
    ca, cb = _corners(a), _corners(b)
    for yaw in (a[2], b[2]):
        for ax, ay in ((math.cos(yaw), math.sin(yaw)), (-math.sin(yaw), math.cos(yaw))):
            pa = [x * ax + y * ay for x, y in ca]
            pb = [x * ax + y * ay for x, y in cb]
            if min(max(pa), max(pb)) - max(min(pa), min(pb)) <= margin:
                return False
    return True


def utm_to_latlon(easting: float, northing: float, zone: int) -> Tuple[float, float]:
    """WGS-84 UTM (northern hemisphere) -> (lat, lon) in degrees (series to ~mm)."""
    a, f, k0 = 6378137.0, 1 / 298.257223563, 0.9996
    e2 = f * (2 - f)
    ep2 = e2 / (1 - e2)
    x, m = easting - 500000.0, northing / k0
    mu = m / (a * (1 - e2 / 4 - 3 * e2 ** 2 / 64 - 5 * e2 ** 3 / 256))
    e1 = (1 - math.sqrt(1 - e2)) / (1 + math.sqrt(1 - e2))
    p1 = (mu + (3 * e1 / 2 - 27 * e1 ** 3 / 32) * math.sin(2 * mu)
          + (21 * e1 ** 2 / 16 - 55 * e1 ** 4 / 32) * math.sin(4 * mu)
          + (151 * e1 ** 3 / 96) * math.sin(6 * mu) + (1097 * e1 ** 4 / 512) * math.sin(8 * mu))
    sin1, cos1, tan1 = math.sin(p1), math.cos(p1), math.tan(p1)
    c1, t1 = ep2 * cos1 ** 2, tan1 ** 2
    n1 = a / math.sqrt(1 - e2 * sin1 ** 2)
    r1 = a * (1 - e2) / (1 - e2 * sin1 ** 2) ** 1.5
    d = x / (n1 * k0)
    lat = p1 - (n1 * tan1 / r1) * (
        d ** 2 / 2 - (5 + 3 * t1 + 10 * c1 - 4 * c1 ** 2 - 9 * ep2) * d ** 4 / 24
        + (61 + 90 * t1 + 298 * c1 + 45 * t1 ** 2 - 252 * ep2 - 3 * c1 ** 2) * d ** 6 / 720)
    lon = (d - (1 + 2 * t1 + c1) * d ** 3 / 6
           + (5 - 2 * c1 + 28 * t1 - 3 * c1 ** 2 + 8 * ep2 + 24 * t1 ** 2) * d ** 5 / 120) / cos1
    return math.degrees(lat), (zone - 1) * 6 - 180 + 3 + math.degrees(lon)
