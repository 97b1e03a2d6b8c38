"""The Velodyne reference for the unit tests of wire/velodyne: a slow decoder written with ``struct``
and ``math`` from the spec's formulas (shared/spec/sensors.md section 3), and packets built byte by
byte (random contents, or given cells), not with the codec's encoder.  Used by
test/unit/wire/velodyne/test_*.py (moved there from wire/test_velodyne.py in issue 42)."""

import math
import random
import struct

from morai_bridge.wire import velodyne as vel

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
