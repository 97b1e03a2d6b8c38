"""The 2D LiDAR's ROS side (ros/sensors/lidar2d_ros.py) without a master: LaserScan fields, the header and
tail literals, the angle parameters checked at start.
"""
import math
import struct
from io import BytesIO
import pytest

import rospy
from std_msgs.msg import Header

from morai_bridge.nodes import lidar2d_bridge
from morai_bridge.ros.sensors import lidar2d_ros
from morai_bridge.configuration.params import ParamError
from morai_bridge.ros.params import load
from morai_bridge.wire import lidar2d


# ----------------------------------------------------------------------------- 2D LiDAR

def lidar2d_datagram(ranges_mm, intensities, header=b'#Lidar2D$', tail=b'\r\n'):
    body = b''.join(struct.pack('<HB', r, i) for r, i in zip(ranges_mm, intensities))
    return header + struct.pack('<i3f', 1080, 0.0, 0.0, 0.0) + body + tail


def test_laser_scan_fields():
    wire = [(1000 + i) if i != 90 else 10000 for i in range(360)]     # sample 90 at the 10 m limit
    inten = [i % 256 for i in range(360)]
    scan = lidar2d.decode_scan(lidar2d_datagram(wire, inten), range_max=10.0)
    m = lidar2d_ros.scan_msg(scan, Header(stamp=rospy.Time(3), frame_id='laser'), 0.01, 0.1)
    assert m.angle_min == pytest.approx(-math.pi) and m.angle_increment == pytest.approx(math.radians(1))
    assert m.angle_max == pytest.approx(math.radians(179))
    assert (m.range_min, m.range_max, m.scan_time, m.time_increment) == (0.01, 10.0, 0.1, 0.0)
    assert len(m.ranges) == len(m.intensities) == 360
    # defaults: sample 0 straight ahead, counter-clockwise; slot j at -180 + j deg = wire (j + 180) % 360
    for j in (0, 1, 179, 180, 181, 359):
        i = (j + 180) % 360
        if i == 90:
            assert m.ranges[j] == math.inf
        else:
            assert m.ranges[j] == pytest.approx(wire[i] / 1000.0)
        assert m.intensities[j] == inten[i]
    assert m.ranges[180] == pytest.approx(1.0)            # straight ahead = sample 0
    assert m.ranges[270] == math.inf                       # +90 deg (left) = sample 90
    buf = BytesIO()
    m.serialize(buf)


def test_header_and_tail_literals():
    assert lidar2d_ros.literal('', 9, 'expected_header') is None
    assert lidar2d_ros.literal('#Lidar2D$', 9, 'expected_header') == b'#Lidar2D$'
    assert lidar2d_ros.literal('\\r\\n', 2, 'expected_tail') == b'\r\n'
    assert lidar2d_ros.literal('\\x00\\xff', 2, 'expected_tail') == b'\x00\xff'
    with pytest.raises(ParamError, match='expected_tail'):
        lidar2d_ros.literal('EOF', 2, 'expected_tail')


def test_lidar2d_angle_parameters_are_checked_at_start():
    cfg = load(lidar2d_bridge.PARAMS, lambda n, d: {'port': 1, 'angle_min_deg': -179.5}.get(n, d))
    with pytest.raises(ParamError, match='angle'):
        lidar2d_ros.Lidar2dBridge(cfg)
