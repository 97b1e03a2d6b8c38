"""Velodyne packet codec: vectorised decoder against a slow reference decoder
written here with ``struct`` and ``math`` from the spec's formulas
(shared/spec/sensors.md section 3), geometric checks, revolutions, cloud packing.

Random packets are built byte by byte here, not with the module's encoder.
"""

import math
import random
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morai_bridge.wire import velodyne as vel
from morai_bridge.wire.velodyne import (EncodeError, RevolutionAssembler, SensorDecodeError,
                                        VelodyneDecoder)

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Spec 3.3, packet order (typed again here on purpose).
VLP16_ELEV = [-15, 1, -13, 3, -11, 5, -9, 7, -7, 9, -5, 11, -3, 13, -1, 15]
HDL32_ELEV = [-30.67, -9.33, -29.33, -8.00, -28.00, -6.67, -26.67, -5.33, -25.33, -4.00, -24.00,
              -2.67, -22.67, -1.33, -21.33, 0.00, -20.00, 1.33, -18.67, 2.67, -17.33, 4.00,
              -16.00, 5.33, -14.67, 6.67, -13.33, 8.00, -12.00, 9.33, -10.67, 10.67]


# ----------------------------------------------------------------------------- reference

def ref_timing_us(model, block, slot, dual):
    """Firing time of (block, slot) inside a packet, per model (spec / manuals)."""
    if model in ("VLP16", "PUCK_HIRES"):
        first = (block - block % 2) if dual else 2 * block     # firing sequence of the block
        return (first + slot // 16) * 55.296 + (slot % 16) * 2.304
    if model == "HDL32E":
        return (block // 2 if dual else block) * 46.08 + slot * 1.152
    if model == "VLP32C":
        return (block // 2 if dual else block) * 55.296 + (slot // 2) * 2.304
    if model == "MORAI_64":
        return (block // 2) * 57.6 + (slot // 4) * 7.2 + (0.0, 1.3, 2.5, 3.7)[slot % 4]
    raise AssertionError(model)


def ref_packet_period_us(model, dual):
    period = {"VLP16": 24 * 55.296, "PUCK_HIRES": 24 * 55.296, "HDL32E": 12 * 46.08,
              "VLP32C": 12 * 55.296, "MORAI_64": 6 * 57.6}[model]
    return period / 2 if dual else period


def reference_decode(model_name, packets, interpolation="velodyne", dual=False, keep_zero=False):
    """Per point: (x, y, z, intensity, ring, time) lists, in packet/block/slot order."""
    m = vel.MODELS[model_name]
    elev = m.elevations_deg
    rings = sorted(range(m.lasers), key=lambda i: elev[i])
    ring_of = {laser: r for r, laser in enumerate(rings)}
    out = []
    for n, pkt in enumerate(packets):
        blocks = []
        for b in range(12):
            flag, az = struct.unpack_from("<HH", pkt, 100 * b)
            data = struct.unpack_from("<" + "HB" * 32, pkt, 100 * b + 4)
            blocks.append((flag, az, data[0::2], data[1::2]))
        # azimuth delta per block (VLP-16 style): next block (pair) minus this one
        step = 2 if dual else 1
        deltas = []
        for b in range(12):
            g = b - b % step
            if g + step < 12:
                deltas.append((blocks[g + step][1] - blocks[g][1]) % 36000)
            else:
                deltas.append((blocks[g][1] - blocks[g - step][1]) % 36000)
        for b, (flag, az, dists, refls) in enumerate(blocks):
            for k in range(32):
                dist, refl = dists[k], refls[k]
                if (dual and b % 2 == 1 and dist == blocks[b - 1][2][k]
                        and refl == blocks[b - 1][3][k]):
                    continue
                if dist == 0 and not keep_zero:
                    continue
                if m.lasers == 16:
                    laser, firing = k % 16, k // 16
                    if interpolation == "velodyne":
                        alpha = az + deltas[b] * (laser * 2.304 + firing * 55.296) / 110.592
                    else:
                        alpha = az + 20 * firing
                elif m.lasers == 64:
                    laser = k + (32 if flag == 0xDDFF else 0)
                    alpha = az
                else:
                    laser = k
                    alpha = az + 100 * m.azimuth_offsets_deg[k]
                a = math.radians(alpha / 100.0)
                w = math.radians(elev[laser])
                r = dist * m.distance_resolution_m
                # Velodyne frame (manual): x = R cos w sin a, y = R cos w cos a, z = R sin w
                xv = r * math.cos(w) * math.sin(a)
                yv = r * math.cos(w) * math.cos(a)
                zv = r * math.sin(w)
                if dist == 0:
                    xv = yv = zv = float("nan")
                t = (n * ref_packet_period_us(model_name, dual)
                     + ref_timing_us(model_name, b, k, dual)) * 1e-6
                out.append((yv, -xv, zv, float(refl), ring_of[laser], t))
    return out


def random_packets(model_name, count, seed, zero_fraction=0.2, mode=0x37, start_az=None):
    """Valid packets with random contents, built byte by byte (no encoder)."""
    rnd = random.Random(seed)
    m = vel.MODELS[model_name]
    az = rnd.randrange(36000) if start_az is None else start_az
    packets = []
    stamp = rnd.randrange(3600 * 10 ** 6)
    for _ in range(count):
        raw = bytearray()
        for b in range(12):
            flag = b"\xff\xdd" if (m.lasers == 64 and b % 2) else b"\xff\xee"
            if mode == 0x39 and b % 2:
                raw += flag + raw[-98:]          # dual: block 2j+1 starts as a copy of 2j
                blk = raw[-100:]
                for k in range(32):              # change some returns
                    if rnd.random() < 0.5:
                        blk[4 + 3 * k:7 + 3 * k] = struct.pack("<HB", rnd.randrange(1, 65536),
                                                               rnd.randrange(256))
                raw[-100:] = blk
                continue
            raw += flag + struct.pack("<H", az)
            for _k in range(32):
                dist = 0 if rnd.random() < zero_fraction else rnd.randrange(1, 65536)
                raw += struct.pack("<HB", dist, rnd.randrange(256))
            if m.lasers != 64 or b % 2:
                az = (az + rnd.randrange(15, 45)) % 36000
        raw += struct.pack("<IBB", stamp, mode, m.product_id or 0)
        stamp = (stamp + rnd.randrange(500, 700)) % (3600 * 10 ** 6)
        assert len(raw) == 1206
        packets.append(bytes(raw))
    return packets


def as_rows(points):
    return list(zip(points.x.tolist(), points.y.tolist(), points.z.tolist(),
                    points.intensity.tolist(), points.ring.tolist(), points.time.tolist()))


def assert_same(points, ref, tol=2e-3, ttol=1e-7):
    got = as_rows(points)
    assert len(got) == len(ref)
    for i, (g, r) in enumerate(zip(got, ref)):
        for j in range(3):
            if math.isnan(r[j]):
                assert math.isnan(g[j]), (i, g, r)
            else:
                assert abs(g[j] - r[j]) <= tol, (i, j, g, r)
        assert g[3] == r[3] and g[4] == r[4], (i, g, r)
        assert abs(g[5] - r[5]) <= ttol, (i, g, r)


# ----------------------------------------------------------------------------- vs reference

@pytest.mark.parametrize("model", list(vel.MODELS))
def test_decoder_matches_reference(model):
    packets = random_packets(model, 12, seed=len(model))
    dec = VelodyneDecoder(model, packet_time="nominal")
    pts = dec.decode(packets)
    assert pts.x.dtype == np.float32 and pts.time.dtype == np.float32
    assert pts.ring.dtype == np.uint16
    assert_same(pts, reference_decode(model, packets))
    # the same through an (N, 1206) array and one at a time
    arr = np.frombuffer(b"".join(packets), np.uint8).reshape(len(packets), 1206)
    assert as_rows(dec.decode(arr)) == as_rows(pts)
    one = dec.decode(packets[:1])
    assert np.allclose(np.array(as_rows(one)), np.array(as_rows(pts)[:len(one)]), atol=1e-5)


@pytest.mark.parametrize("model", ["VLP16", "PUCK_HIRES"])
def test_fixed_second_firing_offset_matches_reference(model):
    packets = random_packets(model, 4, seed=3)
    pts = VelodyneDecoder(model, interpolation="fixed", packet_time="nominal").decode(packets)
    assert_same(pts, reference_decode(model, packets, interpolation="fixed"))


@pytest.mark.parametrize("model", ["VLP16", "HDL32E", "VLP32C"])
def test_dual_return_matches_reference(model):
    packets = random_packets(model, 6, seed=11, mode=0x39)
    pts = VelodyneDecoder(model, packet_time="nominal").decode(packets)
    ref = reference_decode(model, packets, dual=True)
    assert_same(pts, ref)
    # without de-duplication every return of both blocks is kept
    everything = VelodyneDecoder(model, packet_time="nominal", dual_dedupe=False).decode(packets)
    assert len(everything) > len(pts)
    assert len(everything) == sum(1 for p in packets for b in range(12) for k in range(32)
                                  if struct.unpack_from("<H", p, 100 * b + 4 + 3 * k)[0])
    # return_mode='single' forces the single-return layout
    single = VelodyneDecoder(model, return_mode="single", packet_time="nominal").decode(packets)
    assert_same(single, reference_decode(model, packets, dual=False))


def test_dual_dedupe_needs_same_distance_and_intensity():
    az = [5.0 + 0.4 * (b // 2) for b in range(12)]
    cells = {(0, 0): (10.0, 50), (1, 0): (10.0, 50),      # one return: identical blocks
             (0, 1): (10.0, 50), (1, 1): (10.0, 60),      # same distance, other intensity
             (0, 2): (10.0, 50), (1, 2): (12.0, 50)}      # other distance
    pts = VelodyneDecoder("VLP16").decode([one_packet("VLP16", az, cells, mode=0x39)])
    assert pts.intensity.tolist() == [50, 50, 50, 60, 50]
    assert pts.ring.tolist() == [0, 8, 1, 8, 1]


def test_keep_zero_gives_nan_points():
    packets = random_packets("HDL32E", 3, seed=5, zero_fraction=0.5)
    pts = VelodyneDecoder("HDL32E", keep_zero=True, packet_time="nominal").decode(packets)
    assert len(pts) == 3 * 384
    assert_same(pts, reference_decode("HDL32E", packets, keep_zero=True))
    assert np.isnan(pts.x).sum() == sum(1 for p in packets for b in range(12) for k in range(32)
                                        if struct.unpack_from("<H", p, 100 * b + 4 + 3 * k)[0] == 0)


def test_range_limits():
    packets = random_packets("VLP16", 5, seed=9)
    pts = VelodyneDecoder("VLP16", packet_time="nominal").decode(packets)
    r = np.sqrt(pts.x.astype(np.float64) ** 2 + pts.y ** 2 + pts.z ** 2)
    lim = VelodyneDecoder("VLP16", min_range=20.0, max_range=100.0,
                          packet_time="nominal").decode(packets)
    keep = (r >= 20.0 - 1e-3) & (r <= 100.0 + 1e-3)
    assert len(lim) == int(keep.sum())
    assert np.allclose(lim.x, pts.x[keep]) and np.array_equal(lim.ring, pts.ring[keep])


# ----------------------------------------------------------------------------- geometry

def one_packet(model, block_azimuths_deg, cells, mode=0x37, stamp=0, product=None):
    """A packet from {(block, slot): (metres, intensity)}, built byte by byte."""
    m = vel.MODELS[model]
    raw = bytearray()
    for b in range(12):
        raw += b"\xff\xdd" if (m.lasers == 64 and b % 2) else b"\xff\xee"
        raw += struct.pack("<H", int(round(block_azimuths_deg[b] * 100)) % 36000)
        for k in range(32):
            metres, inten = cells.get((b, k), (0.0, 0))
            raw += struct.pack("<HB", int(round(metres / m.distance_resolution_m)), inten)
    raw += struct.pack("<IBB", stamp, mode, (m.product_id or 0) if product is None else product)
    return bytes(raw)


def expected_xyz(r, azimuth_deg, elevation_deg):
    a, w = math.radians(azimuth_deg), math.radians(elevation_deg)
    return r * math.cos(w) * math.cos(a), -r * math.cos(w) * math.sin(a), r * math.sin(w)


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


def test_rings_and_models_as_data():
    assert vel.MODELS["VLP16"].rings == tuple((k // 2) + 8 * (k % 2) for k in range(16))
    assert vel.MODELS["HDL32E"].rings == tuple((k // 2) + 16 * (k % 2) for k in range(32))
    assert list(vel.MODELS["VLP16"].elevations_deg) == VLP16_ELEV
    assert list(vel.MODELS["HDL32E"].elevations_deg) == HDL32_ELEV
    for m in vel.MODELS.values():
        assert sorted(m.rings) == list(range(m.lasers))
        assert len(m.elevations_deg) == len(m.azimuth_offsets_deg) == m.lasers
        assert len(m.vert_offsets_m) == m.lasers
        assert len(m.slot_times_us) == 32
    assert vel.MODELS["VLP32C"].distance_resolution_m == 0.004
    assert vel.MODELS["VLP32C"].azimuth_offsets_deg[:3] == (1.4, -4.2, 1.4)
    assert [vel.MODELS[n].product_id for n in ("HDL32E", "VLP16", "PUCK_HIRES", "VLP32C")] == \
        [0x21, 0x22, 0x24, 0x28]
    assert vel.model_from_product_id(0x22).name == "VLP16"
    assert vel.model_from_product_id(0x99) is None
    assert vel.get_model("32E").name == "HDL32E" and vel.get_model("vlp-16").name == "VLP16"
    assert vel.get_model("64E_S3").name == "MORAI_64"
    with pytest.raises(ValueError):
        vel.get_model("OS1-64")


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


# ----------------------------------------------------------------------------- times

def test_packet_time_sources():
    packets = random_packets("HDL32E", 4, seed=2, zero_fraction=0.0)
    stamps = [struct.unpack_from("<I", p, 1200)[0] for p in packets]
    first_slot = [i * 384 for i in range(4)]
    dev = VelodyneDecoder("HDL32E").decode(packets)            # auto -> device stamps
    steps = [(s - stamps[0]) % (3600 * 10 ** 6) * 1e-6 for s in stamps]
    assert np.allclose(dev.time[first_slot], steps, atol=1e-7)
    nom = VelodyneDecoder("HDL32E", packet_time="nominal").decode(packets)
    assert np.allclose(nom.time[first_slot], [i * 552.96e-6 for i in range(4)], atol=1e-7)
    host = VelodyneDecoder("HDL32E", packet_time="host").decode(packets,
                                                                 stamps=[5.0, 5.1, 5.2, 5.4])
    assert np.allclose(host.time[first_slot], [0, 0.1, 0.2, 0.4], atol=1e-6)
    # equal device stamps are not credible: auto falls back to nominal times
    flat = [p[:1200] + struct.pack("<I", 7) + p[1204:] for p in packets]
    assert np.allclose(VelodyneDecoder("HDL32E").decode(flat).time, nom.time)
    # the hour wraps
    hour = 3600 * 10 ** 6
    wrap = [p[:1200] + struct.pack("<I", (hour - 300 + 553 * i) % hour) + p[1204:]
            for i, p in enumerate(packets)]
    assert np.allclose(VelodyneDecoder("HDL32E").decode(wrap).time[first_slot],
                       [i * 553e-6 for i in range(4)], atol=1e-7)


# ----------------------------------------------------------------------------- encoder

@pytest.mark.parametrize("model", list(vel.MODELS))
def test_packets_from_ranges_round_trip(model):
    m = vel.MODELS[model]
    az, elev = vel.scan_pattern(model, rpm=600, start_azimuth_deg=12.0)
    rnd = np.random.default_rng(4)
    ranges = rnd.uniform(0.5, 120.0, az.shape)
    ranges[rnd.random(az.shape) < 0.1] = np.inf
    inten = rnd.integers(0, 256, az.shape)
    packets = vel.packets_from_ranges(model, ranges, inten, rpm=600, start_azimuth_deg=12.0,
                                      start_time_us=1000)
    cols = m.columns_per_packet()
    assert len(packets) == -(-az.shape[0] // cols)
    assert all(len(p) == 1206 and p[1204] == 0x37 and p[1205] == (m.product_id or 0)
               for p in packets)
    # independent read of the first block, and the reference decoder
    assert packets[0][0:2] == b"\xff\xee"
    assert struct.unpack_from("<H", packets[0], 2)[0] == 1200
    assert struct.unpack_from("<I", packets[1], 1200)[0] == 1000 + round(m.packet_period_us())
    pts = VelodyneDecoder(model).decode(packets)
    assert_same(pts, reference_decode(model, packets), ttol=2e-6)
    # every finite range comes back, along the ray scan_pattern announced
    finite = np.isfinite(ranges)
    assert len(pts) == int(finite.sum())
    r = np.sqrt(pts.x.astype(np.float64) ** 2 + pts.y ** 2 + pts.z ** 2)
    assert np.allclose(r, ranges[finite], atol=m.distance_resolution_m)   # same order
    lasers = np.broadcast_to(np.arange(m.lasers), az.shape)[finite]
    ex = np.array([expected_xyz(rr, a, elev[la]) for rr, a, la in
                   zip(np.rint(ranges[finite] / m.distance_resolution_m) * m.distance_resolution_m,
                       az[finite], lasers)])
    # azimuths are sent in 0.01 deg: <= 0.013 deg off after interpolation, 2.7 cm at 120 m
    assert np.allclose(np.stack([pts.x, pts.y, pts.z], 1), ex, atol=0.03)
    assert np.array_equal(pts.intensity, inten[finite].astype(np.float32))


def test_dual_encoder():
    az, _ = vel.scan_pattern("VLP16", columns=48)
    strong = np.full(az.shape, 10.0)
    last = strong.copy()
    last[:, 0] = 20.0
    packets = vel.packets_from_ranges("VLP16", strong, 5, last_ranges_m=last, last_intensities=5)
    assert len(packets) == 4 and all(p[1204] == 0x39 for p in packets)
    pts = VelodyneDecoder("VLP16").decode(packets)
    # laser 0 has two returns, every other laser one (identical blocks de-duplicated)
    assert len(pts) == 48 * 16 + 48
    with pytest.raises(EncodeError):
        vel.packets_from_ranges("MORAI_64", np.ones((6, 64)), last_ranges_m=np.ones((6, 64)))


def test_encoder_errors():
    with pytest.raises(EncodeError):
        vel.encode_packets("VLP16", [[0] * 12], [[[200.0] * 32] * 12])     # > 131.07 m
    with pytest.raises(EncodeError):
        vel.encode_packets("VLP16", [[0] * 12], [[[1.0] * 31] * 12])
    with pytest.raises(EncodeError):
        vel.encode_packets("VLP16", [[0] * 12], [[[1.0] * 32] * 12], intensities=300)
    with pytest.raises(EncodeError):
        vel.encode_packets("VLP16", [[0] * 12], [[[1.0] * 32] * 12], return_mode=256)
    with pytest.raises(EncodeError):
        vel.packets_from_ranges("HDL32E", np.ones((10, 16)))
    ok = vel.encode_packets("VLP32C", [[0] * 12], [[[200.0] * 32] * 12])    # 4 mm: 262 m
    assert struct.unpack_from("<H", ok[0], 4)[0] == 50000


# ----------------------------------------------------------------------------- datagrams

def test_check_datagrams():
    dec = VelodyneDecoder("VLP16")
    pkt = random_packets("VLP16", 1, seed=1)[0]
    assert dec.check(pkt) == pkt and dec.check(bytearray(pkt)) == pkt
    reasons = {}
    for name, data in {"short": pkt[:-1], "long": b"\x00" + pkt, "empty": b"",
                       "flag": pkt[:100] + b"\xff\xdd" + pkt[102:],
                       "azimuth": pkt[:2] + struct.pack("<H", 36000) + pkt[4:]}.items():
        with pytest.raises(SensorDecodeError) as info:
            VelodyneDecoder("VLP16", aux_header=False).check(data)
        reasons[name] = info.value.reason
    assert reasons == {"short": "length", "long": "length", "empty": "length", "flag": "flag",
                       "azimuth": "azimuth"}
    # auxiliary header: a FF EE payload start within the first 64 bytes
    assert dec.check(b"\x01" * 42 + pkt) == pkt
    assert dec.check(pkt + b"\x00") == pkt                      # trailing bytes
    assert dec.check(b"\xff\xee\x00" + pkt + b"tail") == pkt     # first FF EE is a false start
    with pytest.raises(SensorDecodeError):
        dec.check(b"\x01" * 65 + pkt)
    with pytest.raises(SensorDecodeError):
        VelodyneDecoder("VLP16", aux_header=False).check(b"\x01" * 42 + pkt)
    assert VelodyneDecoder("MORAI_64").check(one_packet("MORAI_64", [0] * 12, {}))
    with pytest.raises(SensorDecodeError):
        dec.decode([pkt, pkt[:-1]])
    with pytest.raises(TypeError):
        dec.check("text")


@SETTINGS
@given(st.binary(max_size=1400))
def test_fuzz_check_raises_only_its_error(data):
    for model in ("VLP16", "MORAI_64"):
        try:
            VelodyneDecoder(model).check(data)
        except SensorDecodeError:
            pass


@SETTINGS
@given(st.binary(min_size=1206, max_size=1206), st.sampled_from(list(vel.MODELS)))
def test_fuzz_decode_of_any_contents(data, model):
    raw = bytearray(data)
    for b in range(12):
        raw[100 * b:100 * b + 2] = b"\xff\xee"
        azimuth = struct.unpack_from("<H", raw, 100 * b + 2)[0] % 36000
        raw[100 * b + 2:100 * b + 4] = struct.pack("<H", azimuth)
    pts = VelodyneDecoder(model).decode([bytes(raw)])
    assert len(pts) <= 384 and not np.isnan(pts.x).any()
    assert all(len(a) == len(pts) for a in (pts.y, pts.z, pts.intensity, pts.ring, pts.time))
    assert (pts.ring < vel.MODELS[model].lasers).all()


# ----------------------------------------------------------------------------- revolutions

def stream_packets(model="VLP16", revolutions=3.5, start=100.0):
    m = vel.MODELS[model]
    step = vel.firing_step_deg(model)
    columns = int(revolutions * 360.0 / step)
    ranges = np.full((columns, m.lasers), 10.0)
    return vel.packets_from_ranges(model, ranges, start_azimuth_deg=start)


def first_az(pkt):
    return struct.unpack_from("<H", pkt, 2)[0] / 100.0


def test_revolutions_on_wrap():
    packets = stream_packets()
    asm = RevolutionAssembler(VelodyneDecoder("VLP16"))
    revs = [r for r in map(asm.add, packets) if r is not None]
    tail = asm.flush()
    assert [r.complete for r in revs] == [False, True, True] and not tail.complete
    assert sum(r.packets for r in revs) + tail.packets == len(packets)
    assert len(revs[0].points) == revs[0].packets * 384
    for r in revs[1:]:
        assert r.first_azimuth_deg < 4.8                    # a packet spans 24 x 0.199 deg
        assert r.packets in (75, 76)                        # 754 packets/s at 10 Hz
        assert r.points.time[0] == 0.0 and 0.098 < r.points.time[-1] < 0.102
    assert asm.counters()["revolutions"] == 4 and asm.counters()["pending"] == 0
    assert asm.flush() is None


def test_revolutions_on_cut_angle():
    packets = stream_packets(start=0.0)
    asm = RevolutionAssembler(VelodyneDecoder("VLP16"), cut_angle=90.0)
    revs = [r for r in map(asm.add, packets) if r is not None]
    assert len(revs) == 4                                   # cuts at 90, 450, 810, 1170 deg
    for r in revs[1:]:
        assert 90.0 <= r.first_azimuth_deg < 94.8
    # the packet just before each cut is below 90 deg
    starts = [i for i, p in enumerate(packets)
              if i and first_az(packets[i - 1]) < 90.0 <= first_az(p)]
    assert [revs[0].packets, revs[0].packets + revs[1].packets] == starts[:2]


def test_small_backward_azimuth_steps_are_not_a_wrap():
    pkts = [one_packet("HDL32E", [a] * 12, {(0, 0): (5.0, 1)})
            for a in (10.0, 20.0, 19.9, 30.0, 350.0, 359.0, 1.0, 2.0)]
    asm = RevolutionAssembler(VelodyneDecoder("HDL32E"))
    out = [asm.add(p) for p in pkts]
    assert [i for i, r in enumerate(out) if r is not None] == [6]
    assert out[6].packets == 6
    asm = RevolutionAssembler(VelodyneDecoder("HDL32E"), cut_angle=15.0)
    out = [asm.add(p) for p in pkts]
    assert [i for i, r in enumerate(out) if r is not None] == [1]   # 19.9 after 20 is no crossing


def test_revolution_assembler_counts_bad_datagrams():
    packets = stream_packets(revolutions=1.2)
    asm = RevolutionAssembler(VelodyneDecoder("VLP16"))
    bad = [b"", b"x" * 1206, packets[0][:-1],
           b"\x00" * 42 + packets[3][:100] + b"\xff\xdd" + packets[3][102:]]
    out = []
    for i, p in enumerate(packets):
        if i == 5:
            for b in bad:
                assert asm.add(b) is None
        out.append(asm.add(b"\x00" * 42 + p if i == 7 else p, stamp=i * 0.001))
    revs = [r for r in out if r is not None]
    c = asm.counters()
    assert c["bad"] == 4 and c["bad_length"] == 3 and c["bad_flag"] == 1 and c["aux_header"] == 1
    assert c["packets"] == len(packets) and asm.last_error
    assert len(revs) == 1 and revs[0].stamp == 0.0 and revs[0].device_time_us == 0


def test_max_packets_forces_a_cut():
    packets = stream_packets(revolutions=0.5)
    asm = RevolutionAssembler(VelodyneDecoder("VLP16"), max_packets=10)
    revs = [r for r in map(asm.add, packets) if r is not None]
    assert [r.packets for r in revs] == [10] * (len(packets) // 10 - (len(packets) % 10 == 0))
    assert asm.forced_cuts == len(revs) and not any(r.complete for r in revs)


# ----------------------------------------------------------------------------- predictive and burst cuts

def az_packet(block_az, seed=0, stamp=0, model="VLP16"):
    """One packet with the given 12 block azimuths (0.01 deg), random returns, built with struct."""
    rnd = random.Random(seed)
    raw = b""
    for az in block_az:
        raw += struct.pack("<HH", 0xEEFF, az % 36000)
        for _ in range(32):
            raw += struct.pack("<HB", rnd.randrange(0, 20000), rnd.randrange(256))
    return raw + struct.pack("<IBB", stamp % (3600 * 10 ** 6), 0x37, vel.MODELS[model].product_id)


def morai_bursts(count, start=0, packets=75, step=40, seed=0):
    """``count`` revolutions of a 25.S4-like VLP-16: 75 packets of 12 blocks 0.4 deg apart (0.2 deg
    firings), each revolution starting at ``start`` (0.01 deg) and covering 360 deg; every packet of a
    revolution carries the same device time (heven-ad-2026's test fixture)."""
    revs = []
    for r in range(count):
        revs.append([az_packet([start + (p * 12 + b) * step for b in range(12)], seed=seed + 1000 * r + p,
                               stamp=5000 + r * 100000) for p in range(packets)])
    return revs


def feed(asm, revs, burst_s=20e-6, period_s=0.1, t0=100.0, skip=()):
    """Send each revolution as a burst (packets ``burst_s`` apart, revolutions ``period_s`` apart);
    -> [(index of the packet whose add() returned it, Revolution)]."""
    out, i = [], 0
    for r, packets in enumerate(revs):
        for p, pkt in enumerate(packets):
            if (r, p) in skip:
                continue
            t = t0 + r * period_s + p * burst_s
            rev = asm.add(pkt, stamp=t, arrival=t)
            if rev is not None:
                out.append((i, rev))
            i += 1
    return out


def test_burst_is_cut_at_its_last_packet_with_the_points_of_the_next_packet_cut():
    revs = morai_bursts(4)
    flat = [p for r in revs for p in r]
    dec = VelodyneDecoder("VLP16", packet_time="nominal")
    got = feed(RevolutionAssembler(dec), revs)
    late = feed(RevolutionAssembler(dec, burst="off"), revs)
    # burst detection off: the next burst's first packet shows the wrap, as today (its last block + one
    # step reaches the cut only at l + s: no predictive cut); on: the burst's own last packet
    assert [i for i, _ in late] == [75, 150, 225]
    assert [i for i, _ in got] == [74, 149, 224, 299]
    assert [r.complete for _, r in got] == [False, True, True, True]      # the first start was not seen
    assert all(r.predicted and r.burst and r.packets == 75 for _, r in got)
    assert not any(r.snapshot for _, r in got)                            # nominal times asked for
    for (_, g), (_, w) in zip(got, late):                                 # same packets, same points
        assert g.packets == w.packets and g.stamp == w.stamp and g.first_azimuth_deg == w.first_azimuth_deg
        assert vel.pack_cloud(g.points).data == vel.pack_cloud(w.points).data
    for k, (_, g) in enumerate(got):                                      # = one batch of the burst
        assert vel.pack_cloud(g.points).data == vel.pack_cloud(dec.decode(flat[75 * k:75 * k + 75])).data


def test_burst_revolutions_get_snapshot_times_by_default():
    revs = morai_bursts(3)
    dec = VelodyneDecoder("VLP16")                                        # packet_time auto
    got = feed(RevolutionAssembler(dec), revs)
    assert len(got) == 3
    for k, (_, r) in enumerate(got):
        assert r.snapshot and len(r.points) > 0 and not r.points.time.any()
        want = dec.decode(revs[k], packet_time="snapshot")
        assert vel.pack_cloud(r.points).data == vel.pack_cloud(want).data
        nominal = dec.decode(revs[k], packet_time="nominal")               # only the times differ
        for f in ("x", "y", "z", "intensity", "ring"):
            assert np.array_equal(getattr(r.points, f), getattr(nominal, f))
        assert nominal.time.max() > 0.09
    # without arrival times nothing is detected: today's times and cut
    plain = RevolutionAssembler(VelodyneDecoder("VLP16"))
    outs = [plain.add(p) for r in revs for p in r]
    assert [i for i, r in enumerate(outs) if r is not None] == [75, 150]
    assert not plain.bursty and not any(r.snapshot for r in outs if r is not None)
    # forced on
    forced = RevolutionAssembler(VelodyneDecoder("VLP16"), burst="on")
    outs = [forced.add(p) for r in revs for p in r]
    assert [i for i, r in enumerate(outs) if r is not None] == [74, 149, 224]
    assert all(r.snapshot and r.predicted for r in outs if r is not None)


def test_bursts_that_do_not_start_at_the_cut_are_one_revolution_each():
    revs = morai_bursts(4, start=750)                  # 7.5 deg .. 367.1 deg: the wrap inside the last packet
    dec = VelodyneDecoder("VLP16", packet_time="nominal")
    got = feed(RevolutionAssembler(dec), revs)
    complete = [(i, r) for i, r in got if r.complete]
    assert [i for i, _ in complete] == [149, 224, 299]                   # each burst's last packet
    for k, (_, r) in enumerate(complete):
        assert r.packets == 75 and r.first_azimuth_deg == 7.5
        assert vel.pack_cloud(r.points).data == vel.pack_cloud(dec.decode(revs[k + 1])).data
    # a cut angle does not split a burst either
    got = feed(RevolutionAssembler(dec, cut_angle=180.0), revs)
    assert [(i, r.packets) for i, r in got if r.complete] == [(149, 75), (224, 75), (299, 75)]


def test_a_burst_with_a_lost_packet():
    revs = morai_bursts(4)
    dec = VelodyneDecoder("VLP16", packet_time="nominal")
    asm = RevolutionAssembler(dec)
    got = feed(asm, revs, skip={(1, 74), (2, 30)})     # burst 1 loses its last packet, burst 2 one inside
    by_index = [(i, r.packets, r.complete) for i, r in got]
    # burst 1 cannot tell it is over: emitted incomplete when burst 2 starts; burst 2 still covers 360 deg
    assert by_index == [(74, 75, False), (149, 74, False), (222, 74, True), (297, 75, True)]
    assert asm.burst_restarts == 1


def test_receiver_stall_inside_a_burst_does_not_split_it_unless_longer_than_the_gap():
    revs = morai_bursts(3)
    dec = VelodyneDecoder("VLP16", packet_time="nominal")
    for stall, want in ((0.015, [(149, 75, True), (224, 75, True)]),
                        (0.03, [(112, 37, False), (150, 38, False), (224, 75, True)])):
        asm = RevolutionAssembler(dec)
        out, i = [], 0
        for r, packets in enumerate(revs):
            for p, pkt in enumerate(packets):
                t = 100.0 + r * 0.1 + p * 20e-6 + (stall if (r, p) >= (1, 37) else 0.0)
                rev = asm.add(pkt, stamp=t, arrival=t)
                if rev is not None:
                    out.append((i, rev.packets, rev.complete))
                i += 1
        assert out[1:] == want


def paced_packets(count, start=0, step=40, jitter=None):
    """A paced VLP-16: consecutive packets continuing each other's azimuths (block step ``step``)."""
    az, out = start, []
    for p in range(count):
        blocks = []
        for b in range(12):
            blocks.append(az)
            az += step + (jitter(p, b) if jitter else 0)
        out.append(az_packet(blocks, seed=p, stamp=1000 + 1327 * p))
    return out


@pytest.mark.parametrize("cut,start,closing", [
    # the cut inside the packet's own blocks, or within half a block step after its last: closed at it
    (None, 35540, 0), (None, 35640, 0), (90.0, 8540, 0), (90.0, 8580, 0), (90.0, 8999, 0),
    # the next packet's first block would reach the cut only in (l + s/2, l + s]: the next packet closes it
    (None, 35520, 1), (None, 35539, 1), (90.0, 8520, 1), (90.0, 8539, 1),
])
def test_predictive_cut_of_a_paced_sender(cut, start, closing):
    """Packet 0 starts at ``start``; last block at start + 440, next first block at start + 480."""
    packets = paced_packets(3, start=start)
    asm = RevolutionAssembler(VelodyneDecoder("VLP16"), cut_angle=cut)
    asm.add(az_packet([(start - 480 + 40 * b) for b in range(12)]), stamp=0.0)   # the revolution's start
    outs = [asm.add(p, stamp=0.001 * (i + 1)) for i, p in enumerate(packets)]
    i = next(i for i, r in enumerate(outs) if r is not None)
    assert i == closing and sum(r is not None for r in outs) == 1
    assert outs[i].packets == 2 and outs[i].predicted == (closing == 0)
    assert asm.mispredicted == 0


def test_a_predictive_cut_the_next_packet_does_not_confirm():
    # packet 0: last block 89.80 deg, step 0.4: the cut at 90.0 is within half a step: closed at it; the
    # next packet then comes early (89.95 deg, a slowing rotor): it opens the next revolution, and the
    # cut is not counted again at the packet after it
    p0 = az_packet([8980 - 40 * (11 - b) for b in range(12)])
    p1 = az_packet([8995 + 10 * b for b in range(12)])
    p2 = az_packet([9115 + 40 * b for b in range(12)])
    rest = paced_packets(80, start=9595)
    asm = RevolutionAssembler(VelodyneDecoder("VLP16"), cut_angle=90.0)
    outs = [asm.add(p) for p in [p0, p1, p2] + rest]
    got = [(i, r.packets) for i, r in enumerate(outs) if r is not None]
    assert got[0] == (0, 1) and asm.mispredicted == 1
    assert got[1][1] > 70                                # the next revolution holds p1, p2 and the rest
    assert all(r.packets > 1 for r in outs[1:] if r is not None)


def test_paced_sender_with_arrival_times_is_cut_as_today():
    packets = stream_packets(revolutions=4.5)
    period = vel.get_model("VLP16").packet_period_us() * 1e-6
    dec = VelodyneDecoder("VLP16")
    asm = RevolutionAssembler(dec)
    got = [asm.add(p, stamp=i * period, arrival=i * period) for i, p in enumerate(packets)]
    assert asm.runs_paced >= 3 and asm.runs_bursty == 0 and not asm.bursty
    # today's rule, restated: a revolution starts at the packet whose first azimuth dropped > 180 deg
    wraps = [i for i in range(1, len(packets)) if first_az(packets[i]) < first_az(packets[i - 1]) - 180.0]
    closed = [i for i, r in enumerate(got) if r is not None]
    assert len(closed) == len(wraps) == 4
    # closed at the packet that passes the wrap, or one packet earlier (predictive cut)
    early = [c - w for c, w in zip(closed, wraps)]
    assert set(early) <= {-1, 0} and early.count(-1) == asm.predicted_cuts > 0
    starts = [0] + wraps
    for k, i in enumerate(closed):
        r = got[i]
        assert r.predicted == (early[k] == -1) and not r.snapshot and r.complete == (k > 0)
        want = dec.decode(packets[starts[k]:starts[k + 1]], [j * period for j in range(starts[k], starts[k + 1])])
        assert vel.pack_cloud(r.points).data == vel.pack_cloud(want).data


def test_burst_detection_switches_back_to_paced():
    revs = morai_bursts(3)
    dec = VelodyneDecoder("VLP16", packet_time="nominal")
    asm = RevolutionAssembler(dec)
    feed(asm, revs)
    assert asm.bursty
    period = vel.get_model("VLP16").packet_period_us() * 1e-6
    t = 101.0
    for r in range(2):                                    # the same revolutions, now paced
        for pkt in revs[0]:
            t += period
            asm.add(pkt, stamp=t, arrival=t)
    assert not asm.bursty and asm.runs_paced >= 1


def test_packet_time_snapshot_and_its_checks():
    packets = random_packets("HDL32E", 4, seed=3)
    dec = VelodyneDecoder("HDL32E", packet_time="snapshot")
    pts = dec.decode(packets)
    ref = VelodyneDecoder("HDL32E").decode(packets)
    assert not pts.time.any() and np.array_equal(pts.x, ref.x) and np.array_equal(pts.ring, ref.ring)
    assert VelodyneDecoder("HDL32E").decode(packets, packet_time="snapshot").time.max() == 0.0
    with pytest.raises(ValueError):
        VelodyneDecoder("HDL32E", packet_time="zero")
    with pytest.raises(ValueError):
        dec.decode(packets, packet_time="zero")
    with pytest.raises(ValueError):
        RevolutionAssembler(dec, burst="maybe")


# ----------------------------------------------------------------------------- PointCloud2

def test_pack_cloud_layout_of_velodyne_pointcloud():
    packets = random_packets("VLP16", 3, seed=8)
    pts = VelodyneDecoder("VLP16").decode(packets)
    cloud = vel.pack_cloud(pts)
    assert [tuple(f) for f in cloud.fields] == [("x", 0, 7, 1), ("y", 4, 7, 1), ("z", 8, 7, 1),
                                                ("intensity", 12, 7, 1), ("ring", 16, 4, 1),
                                                ("time", 18, 7, 1)]
    assert cloud.point_step == 22 and cloud.height == 1 and cloud.width == len(pts)
    assert cloud.row_step == 22 * len(pts) and len(cloud.data) == cloud.row_step
    assert cloud.is_bigendian is False and cloud.is_dense is True
    assert isinstance(cloud.data, bytes)
    rows = list(struct.iter_unpack("<ffffHf", cloud.data))
    assert rows == as_rows(pts)
    nan = vel.pack_cloud(VelodyneDecoder("VLP16", keep_zero=True).decode(packets))
    assert nan.is_dense is False and nan.width == 3 * 384
    empty = vel.pack_cloud(vel.Points.empty())
    assert empty.width == 0 and empty.data == b"" and empty.is_dense
    assert vel.pack_cloud(pts).data == cloud.data     # scratch buffer reused after a bigger one


def test_empty_batch():
    assert len(VelodyneDecoder("VLP16").decode([])) == 0


def test_port_constant():
    assert vel.DEFAULT_PORT == 2368         # spec 7: WeGo / SensorExample destination port


def test_scratch_buffers_are_per_thread_and_grow():
    import threading
    sets = [random_packets("VLP16", n, seed=n) for n in (1, 7, 20)]
    expected = [as_rows(VelodyneDecoder("VLP16", packet_time="nominal").decode(p)) for p in sets]
    dec = VelodyneDecoder("VLP16", packet_time="nominal")
    for p, e in zip(sets, expected):                 # capacity grows, then shrinks back
        assert as_rows(dec.decode(p)) == e
    assert as_rows(dec.decode(sets[0])) == expected[0]
    errors = []

    def worker(i):
        try:
            for _ in range(30):
                for j in (i % 3, (i + 1) % 3):
                    if as_rows(dec.decode(sets[j])) != expected[j]:
                        errors.append((i, j))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    # a non-contiguous array of packet records
    rec = np.frombuffer(b"".join(sets[2]), vel.PACKET_DTYPE)
    assert as_rows(dec.decode(rec[::2])) == as_rows(dec.decode(sets[2][::2]))
