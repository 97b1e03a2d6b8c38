"""wire.velodyne.decode, geometry: axes, single points of each model at known
ranges, azimuths and lasers against the spec's formulas; packets built byte by byte
(test/unit/velodyne_reference.one_packet)."""

import struct

import numpy as np
import pytest

from morai_bridge.wire import velodyne as vel
from morai_bridge.wire.velodyne import SensorDecodeError, VelodyneDecoder
from velodyne_reference import HDL32_ELEV, expected_xyz, one_packet

# ----------------------------------------------------------------------------- geometry

def test_axes_follow_ros_convention():
    # azimuth 0 = forward (+x), 90 = right (-y), 180 = back, 270 = left (+y); elevation up = +z
    azs = [0, 90, 180, 270] + [0] * 8
    pkt = one_packet("HDL32E", azs, {(0, 15): (10.0, 1), (1, 15): (10.0, 2), (2, 15): (10.0, 3),
                                     (3, 15): (10.0, 4), (4, 31): (10.0, 5)})
    pts = VelodyneDecoder("HDL32E").decode([pkt])
    xyz = np.stack([pts.x, pts.y, pts.z], axis=1)
    expected = [(10, 0, 0), (0, -10, 0), (-10, 0, 0), (0, 10, 0), expected_xyz(10, 0, 10.67)]
    assert np.allclose(xyz, expected, atol=1e-5)
    assert pts.intensity.tolist() == [1, 2, 3, 4, 5]
    assert pts.ring.tolist() == [23, 23, 23, 23, 31]      # (k // 2) + 16 * (k odd)


@pytest.mark.parametrize("r,az,slot,block", [(10.0, 30.0, 0, 0), (55.5, 359.99, 5, 3),
                                             (1.234, 181.5, 31, 11), (130.0, 0.01, 16, 6)])
def test_hdl32e_point(r, az, slot, block):
    azs = [az] * 12
    pkt = one_packet("HDL32E", azs, {(block, slot): (r, 77)})
    pts = VelodyneDecoder("HDL32E").decode([pkt])
    assert len(pts) == 1
    ex = expected_xyz(round(r / 0.002) * 0.002, round(az * 100) / 100.0, HDL32_ELEV[slot])
    assert np.allclose([pts.x[0], pts.y[0], pts.z[0]], ex, atol=2e-4)
    ring = sorted(range(32), key=lambda i: HDL32_ELEV[i]).index(slot)
    assert pts.ring[0] == ring and pts.intensity[0] == 77
    assert pts.time[0] == pytest.approx((block * 46.08 + slot * 1.152) * 1e-6, abs=1e-9)


def test_vlp16_second_firing_interpolation():
    azs = [10.0 + 0.4 * b for b in range(12)]
    pkt = one_packet("VLP16", azs, {(2, 3): (10.0, 1), (2, 19): (10.0, 2), (11, 31): (20.0, 3)})
    pts = VelodyneDecoder("VLP16").decode([pkt])
    assert len(pts) == 3
    a0 = 10.8 + 0.4 * (3 * 2.304) / 110.592
    a1 = 10.8 + 0.4 * (3 * 2.304 + 55.296) / 110.592
    a2 = 14.4 + 0.4 * (15 * 2.304 + 55.296) / 110.592     # last block reuses the previous delta
    got = np.stack([pts.x, pts.y, pts.z], axis=1)
    assert np.allclose(got, [expected_xyz(10, a0, 3), expected_xyz(10, a1, 3),
                             expected_xyz(20, a2, 15)], atol=1e-4)
    assert pts.ring.tolist() == [9, 9, 15]               # (k // 2) + 8 * (k odd), spec 3.3
    assert np.allclose(pts.time, [(4 * 55.296 + 3 * 2.304) * 1e-6, (5 * 55.296 + 3 * 2.304) * 1e-6,
                                  (23 * 55.296 + 15 * 2.304) * 1e-6], atol=1e-9)
    fixed = VelodyneDecoder("VLP16", interpolation="fixed").decode([pkt])
    assert np.allclose([fixed.x[1], fixed.y[1]], expected_xyz(10, 11.0, 3)[:2], atol=1e-4)


def test_vlp16_delta_across_wrap():
    azs = [(359.2 + 0.4 * b) % 360 for b in range(12)]
    pkt = one_packet("VLP16", azs, {(1, 16): (10.0, 1)})    # block 1 at 359.6, next at 0.0
    pts = VelodyneDecoder("VLP16").decode([pkt])
    assert np.allclose([pts.x[0], pts.y[0]], expected_xyz(10, 359.8, -15)[:2], atol=1e-4)


def test_vlp32c_azimuth_offset_and_4mm():
    pkt = one_packet("VLP32C", [100.0] * 12, {(0, 0): (10.0, 9), (0, 1): (10.0, 9)})
    pts = VelodyneDecoder("VLP32C").decode([pkt])
    assert np.allclose(np.stack([pts.x, pts.y, pts.z], 1),
                       [expected_xyz(10, 101.4, -25), expected_xyz(10, 95.8, -1)], atol=1e-4)
    assert struct.unpack_from("<H", pkt, 4)[0] == 2500


def test_morai_64_banks():
    cells = {(0, 0): (10.0, 1), (1, 0): (10.0, 2), (1, 6): (10.0, 3), (3, 31): (5.0, 4)}
    pkt = one_packet("MORAI_64", [50.0] * 12, cells)
    assert pkt[100:102] == b"\xff\xdd" and pkt[0:2] == b"\xff\xee"
    pts = VelodyneDecoder("MORAI_64").decode([pkt])
    elev = vel.MODELS["MORAI_64"].elevations_deg
    assert (elev[0], elev[32], elev[38], elev[63]) == (-7, -22.8, -24.8, -12.3)
    assert np.allclose(np.stack([pts.x, pts.y, pts.z], 1),
                       [expected_xyz(10, 50, -7), expected_xyz(10, 50, -22.8),
                        expected_xyz(10, 50, -24.8), expected_xyz(5, 50, -12.3)], atol=1e-4)
    rings = vel.MODELS["MORAI_64"].rings
    assert pts.ring.tolist() == [rings[0], rings[32], 0, rings[63]]
    assert rings[32] == 4 and rings[29] == 63      # -22.8 is the 5th lowest; +2 the highest
    # a lower-bank flag in a 16-laser model is a bad packet
    with pytest.raises(SensorDecodeError):
        VelodyneDecoder("VLP16").decode([pkt])
