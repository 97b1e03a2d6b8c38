"""Footprint overlap and UTM -> WGS-84 of the emulator (emu/sim/geo.py)."""

import math

import pytest

from morai_bridge.emu.sim.geo import boxes_overlap, utm_to_latlon


def test_boxes_overlap_separating_axis():
    a = (0.0, 0.0, 0.0, 4.0, 2.0)
    assert boxes_overlap(a, (3.9, 0.0, 0.0, 4.0, 2.0))
    assert not boxes_overlap(a, (4.1, 0.0, 0.0, 4.0, 2.0))
    # rotated 45 deg: the corner reaches 2 + sqrt(2) along x
    assert boxes_overlap(a, (3.3, 0.0, math.pi / 4, 2.0, 2.0))
    assert not boxes_overlap(a, (3.5, 0.0, math.pi / 4, 2.0, 2.0))
    # diagonal gap that an axis-aligned bounding-box test would miss
    assert not boxes_overlap((0.0, 0.0, math.pi / 4, 4.0, 0.5), (1.2, -1.2, math.pi / 4, 4.0, 0.5))


def test_utm_conversion_matches_the_capture():
    # CAP: parked ego at map (90.568, 1188.874) while GPS said 37.240067 N, 126.773962 E
    lat, lon = utm_to_latlon(302459.942 + 90.568, 4122635.537 + 1188.874, 52)
    assert lat == pytest.approx(37.240067, abs=5e-5) and lon == pytest.approx(126.773962,
                                                                              abs=5e-5)
