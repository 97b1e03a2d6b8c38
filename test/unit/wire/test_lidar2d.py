"""2D LiDAR codec: layout read back with struct at the spec's offsets
(shared/spec/sensors.md section 4), LaserScan ordering, no-hit handling, errors."""

import math
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morai_bridge.wire import lidar2d
from morai_bridge.wire.lidar2d import EncodeError, SensorDecodeError

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# sample i (wire order) at 1 m + i mm, intensity i % 256: every sample identifiable
RANGES = [1.0 + i / 1000.0 for i in range(360)]
INTENS = [i % 256 for i in range(360)]


def test_layout_at_spec_offsets():
    g = lidar2d.encode_scan(RANGES, INTENS, header=b"#ABCDEFG$", data_length=1080,
                            aux=(1.5, -2.0, 0.25), tail=b"\r\n")
    assert len(g) == 1107
    assert g[0:9] == b"#ABCDEFG$"
    assert struct.unpack("<i", g[9:13]) == (1080,)
    assert struct.unpack("<3f", g[13:25]) == (1.5, -2.0, 0.25)
    for i in (0, 1, 179, 359):
        assert struct.unpack("<HB", g[25 + 3 * i:28 + 3 * i]) == (1000 + i, i % 256)
    assert g[1105:1107] == b"\r\n"
    raw = lidar2d.decode_raw(g)
    assert raw.header == b"#ABCDEFG$" and raw.data_length == 1080 and raw.aux == (1.5, -2.0, 0.25)
    assert list(raw.ranges) == pytest.approx(RANGES, abs=1e-9)
    assert list(raw.intensities) == INTENS and raw.tail == b"\r\n"


def test_default_order_sample0_ahead_counter_clockwise():
    scan = lidar2d.decode_scan(lidar2d.encode_scan(RANGES, INTENS))
    assert scan.angle_min == pytest.approx(-math.pi)
    assert scan.angle_increment == pytest.approx(math.radians(1))
    assert scan.angle_max == pytest.approx(math.radians(179))
    assert len(scan.ranges) == len(scan.intensities) == 360
    # slot j is at -180 + j deg: sample 0 (0 deg, ahead) at slot 180, sample 90 (left) at 270
    assert scan.ranges[180] == pytest.approx(1.000)
    assert scan.ranges[270] == pytest.approx(1.090)
    assert scan.ranges[0] == pytest.approx(1.180)       # -180 deg = sample 180
    assert scan.ranges[179] == pytest.approx(1.359)     # -1 deg = sample 359
    assert scan.intensities[181] == 1.0
    assert scan.range_max == 65.535


def test_clockwise_and_origin_options():
    g = lidar2d.encode_scan(RANGES, INTENS)
    cw = lidar2d.decode_scan(g, direction=-1)
    # sample i at -i deg: +1 deg (slot 181) is sample 359, -1 deg (slot 179) sample 1
    assert cw.ranges[180] == pytest.approx(1.000)
    assert cw.ranges[181] == pytest.approx(1.359)
    assert cw.ranges[179] == pytest.approx(1.001)
    back = lidar2d.decode_scan(g, angle_origin_deg=180.0, angle_min_deg=0.0)
    # sample 0 straight back (180 deg): slot 0 (0 deg) is sample 180
    assert back.angle_min == 0.0
    assert back.ranges[0] == pytest.approx(1.180) and back.ranges[180] == pytest.approx(1.000)
    assert back.angle_max == pytest.approx(math.radians(359))
    for bad in (dict(direction=2), dict(angle_min_deg=-179.5)):
        with pytest.raises(ValueError):
            lidar2d.decode_scan(g, **bad)


def test_no_hit_convention():
    ranges = [10.0] * 360
    ranges[5] = 3.25
    ranges[6] = 0.0
    g = lidar2d.encode_scan(ranges)
    scan = lidar2d.decode_scan(g, range_max=10.0, angle_min_deg=0.0)
    assert scan.ranges[5] == 3.25 and scan.ranges[6] == 0.0
    assert all(math.isinf(r) and r > 0 for i, r in enumerate(scan.ranges) if i not in (5, 6))
    assert scan.range_max == 10.0
    kept = lidar2d.decode_scan(g, range_max=10.0, no_hit="keep", angle_min_deg=0.0)
    assert kept.ranges[0] == 10.0
    assert lidar2d.decode_scan(g, angle_min_deg=0.0).ranges[0] == 10.0   # no limit, no change
    with pytest.raises(ValueError):
        lidar2d.decode_scan(g, no_hit="nan")


def test_expected_header_and_tail():
    g = lidar2d.encode_scan(RANGES)
    assert lidar2d.decode_raw(g, expected_header=lidar2d.DEFAULT_HEADER, expected_tail=b"\r\n")
    with pytest.raises(SensorDecodeError) as info:
        lidar2d.decode_scan(g, expected_header=b"#Lidar3D$")
    assert info.value.reason == "header"
    with pytest.raises(SensorDecodeError) as info:
        lidar2d.decode_scan(g, expected_tail=b"EI")
    assert info.value.reason == "tail"
    # any header and tail are accepted by default
    assert lidar2d.decode_scan(b"\x00" * 9 + g[9:-2] + b"??").raw.header == b"\x00" * 9


def test_every_other_length_is_rejected():
    g = lidar2d.encode_scan(RANGES)
    for n in list(range(0, 1107)) + [1108, 1206, 1500]:
        data = (g * 2)[:n]
        with pytest.raises(SensorDecodeError) as info:
            lidar2d.decode_scan(data)
        assert info.value.reason == "length" and info.value.length == n


@SETTINGS
@given(st.binary(min_size=1107, max_size=1107))
def test_any_1107_bytes_decode(data):
    scan = lidar2d.decode_scan(data)
    assert all(r >= 0 for r in scan.ranges) and len(scan.ranges) == 360


@SETTINGS
@given(st.lists(st.integers(0, 65535), min_size=360, max_size=360),
       st.lists(st.integers(0, 255), min_size=360, max_size=360))
def test_round_trip_mm(mm, inten):
    g = lidar2d.encode_scan([v / 1000.0 for v in mm], inten)
    raw = lidar2d.decode_raw(g)
    assert [round(r * 1000) for r in raw.ranges] == mm and list(raw.intensities) == inten


def test_encoder_errors():
    for bad in (dict(ranges_m=[1.0] * 359), dict(ranges_m=[math.inf] * 360),
                dict(ranges_m=[math.nan] * 360), dict(ranges_m=[-1.0] * 360),
                dict(ranges_m=[70.0] * 360), dict(ranges_m=RANGES, intensities=[256] * 360),
                dict(ranges_m=RANGES, header=b"#short$"), dict(ranges_m=RANGES, tail=b"\r"),
                dict(ranges_m=RANGES, data_length=2 ** 31)):
        with pytest.raises(EncodeError):
            lidar2d.encode_scan(**bad)
    with pytest.raises(TypeError):
        lidar2d.decode_raw("x" * 1107)


def test_port_constant():
    assert lidar2d.DEFAULT_PORT == 0
