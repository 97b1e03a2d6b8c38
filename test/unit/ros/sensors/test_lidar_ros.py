"""The 3D LiDAR's ROS side (ros/sensors/lidar_ros.py) without a master: PointCloud2 construction (byte-identical
to the codec's pack_cloud), pieces of a cloud, device-time stamps.

Packets are built here with struct (velodyne_packets.py), except where the codec's own output is the
thing compared (pack_cloud).
"""
import math
import types
from io import BytesIO

import numpy as np
import pytest

import rospy
from sensor_msgs import point_cloud2
from sensor_msgs.msg import PointCloud2, PointField
from std_msgs.msg import Header
from morai_bridge.ros.sensors import lidar_ros
from morai_bridge.wire import velodyne as vel
from velodyne_packets import vlp16_packet


# ----------------------------------------------------------------------------- 3D LiDAR

def cloud_msg(cloud, header):
    """The reference: a sensor_msgs/PointCloud2 built with genpy from a CloudData, data untouched."""
    m = PointCloud2()
    m.header = header
    m.height = cloud.height
    m.width = cloud.width
    m.fields = [PointField(f.name, f.offset, f.datatype, f.count) for f in cloud.fields]
    m.is_bigendian = cloud.is_bigendian
    m.point_step = cloud.point_step
    m.row_step = cloud.row_step
    m.data = cloud.data
    m.is_dense = cloud.is_dense
    return m


def test_cloud_message_is_byte_identical_to_pack_cloud():
    rng = np.random.RandomState(3)
    packets = [vlp16_packet([(p * 1200 + b * 100) % 36000 for b in range(12)],
                            rng.randint(0, 20000, size=(12, 32)).tolist(),
                            rng.randint(0, 256, size=(12, 32)).tolist(), 1000 * p) for p in range(5)]
    points = vel.VelodyneDecoder('VLP16').decode(packets)
    cloud = vel.pack_cloud(points)
    h = Header(stamp=rospy.Time(7, 8), frame_id='velodyne')
    m = cloud_msg(cloud, h)
    assert m.data == cloud.data and len(m.data) == 22 * len(points)
    assert [(f.name, f.offset, f.datatype, f.count) for f in m.fields] == [
        ('x', 0, 7, 1), ('y', 4, 7, 1), ('z', 8, 7, 1), ('intensity', 12, 7, 1), ('ring', 16, 4, 1), ('time', 18, 7, 1)]
    assert (m.height, m.width, m.point_step, m.row_step, m.is_bigendian, m.is_dense) == (
        1, len(points), 22, 22 * len(points), False, True)
    # through ROS serialisation and sensor_msgs' own reader
    buf = BytesIO()
    m.serialize(buf)
    back = PointCloud2()
    back.deserialize(buf.getvalue())
    assert bytes(back.data) == cloud.data
    got = np.array(list(point_cloud2.read_points(back, field_names=('x', 'y', 'z', 'intensity', 'ring', 'time'))))
    assert np.allclose(got[:, 0], points.x) and np.allclose(got[:, 2], points.z)
    assert np.array_equal(got[:, 4], points.ring) and np.allclose(got[:, 5], points.time)


def test_cloud_points_at_the_encoded_range_and_elevation():
    """A packet written here: every point at its distance x 2 mm and the spec's elevation."""
    elev = [-15, 1, -13, 3, -11, 5, -9, 7, -7, 9, -5, 11, -3, 13, -1, 15]
    counts = [[1000 + 37 * b + k for k in range(32)] for b in range(12)]
    refl = [[(b * 32 + k) % 256 for k in range(32)] for b in range(12)]
    pkt = vlp16_packet([9000 + 40 * b for b in range(12)], counts, refl)
    cloud = vel.pack_cloud(vel.VelodyneDecoder('VLP16').decode([pkt]))
    rec = np.frombuffer(cloud_msg(cloud, Header()).data,
                        dtype=np.dtype({'names': ['x', 'y', 'z', 'i', 'r', 't'],
                                        'formats': ['<f4', '<f4', '<f4', '<f4', '<u2', '<f4'],
                                        'offsets': [0, 4, 8, 12, 16, 18], 'itemsize': 22}))
    assert len(rec) == 12 * 32
    n = 0
    for b in range(12):
        for k in range(32):
            p = rec[n]
            r = counts[b][k] * 0.002
            assert math.sqrt(p['x'] ** 2 + p['y'] ** 2 + p['z'] ** 2) == pytest.approx(r, rel=1e-5)
            assert math.degrees(math.asin(p['z'] / r)) == pytest.approx(elev[k % 16], abs=1e-3)
            assert p['r'] == (k % 16) // 2 + 8 * (k % 2) and p['i'] == refl[b][k]
            n += 1


@pytest.mark.parametrize('device_us,host,expected', [
    (1500 * 1000000 + 250, 7200.0 + 1500.2, (7200 + 1500, 250000)),       # same hour
    (3599 * 1000000 + 999999, 7200.0 + 0.5, (7200 - 1, 999999000)),        # device just before the hour
    (2 * 1000000, 7200.0 + 3599.0, (7200 + 3600 + 2, 0)),                  # device just after the hour
    (0, 1e9, (1000000800, 0)),                                             # 1e9 s is 2800 s past an hour: the next one is nearer
])
def test_device_stamp_nearest_hour(device_us, host, expected):
    assert lidar_ros.device_stamp(device_us, host) == expected


def test_revolution_stamp_device_time_or_receive_time():
    stub = types.SimpleNamespace(cfg=types.SimpleNamespace(stamp_source='sim', device_time_max_offset=1.0),
                                 device_stamps=0, receive_stamps=0, implausible=0, device_offset=None,
                                 fell_back=False)
    host = 1700000000.25                      # 1700000000 = hour 1699999200 + 800 s
    good = types.SimpleNamespace(device_time_us=800 * 1000000 + 200000, stamp=host)
    assert lidar_ros.LidarBridge.stamp_of(stub, good) == rospy.Time(1700000000, 200000000)
    assert stub.device_stamps == 1 and stub.device_offset == pytest.approx(-0.05, abs=1e-6) and not stub.fell_back
    zero = types.SimpleNamespace(device_time_us=0, stamp=host)       # device time 0: 800 s off
    assert lidar_ros.LidarBridge.stamp_of(stub, zero) == rospy.Time.from_sec(host)
    assert stub.implausible == 1 and stub.receive_stamps == 1 and stub.fell_back
    stub.cfg.stamp_source = 'ros'
    assert lidar_ros.LidarBridge.stamp_of(stub, good) == rospy.Time.from_sec(host)
    assert stub.receive_stamps == 2 and stub.device_stamps == 1


def test_serialized_cloud_is_the_joined_cloud_as_genpy_serializes_it():
    rng = np.random.RandomState(5)
    packets = [vlp16_packet([(p * 480 + b * 40) % 36000 for b in range(12)], rng.randint(0, 9000, size=(12, 32)).tolist(),
                            rng.randint(0, 256, size=(12, 32)).tolist(), 1327 * p) for p in range(6)]
    dec = vel.VelodyneDecoder('VLP16', keep_zero=True)
    whole = vel.pack_cloud(dec.decode(packets))
    pieces = [vel.pack_cloud(dec.decode(packets[:1])).data, vel.pack_cloud(dec.decode(packets[:4])).data[22 * 384:],
              b'', whole.data[22 * 4 * 384:]]
    assert b''.join(pieces) == whole.data
    h = Header(stamp=rospy.Time(11, 12), frame_id='velodyne')
    want, got = BytesIO(), BytesIO()
    cloud_msg(whole, h).serialize(want)
    body = vel.serialized_cloud(pieces, whole.width, whole.is_dense)
    assert all(any(part is p for part in body) for p in pieces if p), 'a piece was copied'
    m = lidar_ros.SerializedCloud(Header(stamp=rospy.Time(11, 12), frame_id='velodyne'), body)
    assert isinstance(m, PointCloud2) and m._md5sum == PointCloud2._md5sum and m._type == 'sensor_msgs/PointCloud2'
    m.serialize(got)
    assert got.getvalue() == want.getvalue()
    back = PointCloud2()
    back.deserialize(got.getvalue())
    assert bytes(back.data) == whole.data and back.width == whole.width and back.is_dense == whole.is_dense
    sparse = BytesIO()
    lidar_ros.SerializedCloud(h, vel.serialized_cloud(pieces, whole.width, False)).serialize(sparse)
    assert sparse.getvalue()[:-1] == want.getvalue()[:-1] and sparse.getvalue()[-1:] == b'\x00'


def test_serialized_cloud_through_rospy_publishing_serializer():
    """rospy's own publish-side serializer (which numbers the header) over a SerializedCloud."""
    from rospy.msg import serialize_message
    cloud = vel.pack_cloud(vel.VelodyneDecoder('VLP16').decode([vlp16_packet([100 * b for b in range(12)],
                                                                              [[500] * 32] * 12, [[9] * 32] * 12)]))
    h = Header(stamp=rospy.Time(3, 4), frame_id='v')
    got, want = BytesIO(), BytesIO()
    serialize_message(got, 41, lidar_ros.SerializedCloud(h, vel.serialized_cloud([cloud.data], cloud.width, True)))
    serialize_message(want, 41, cloud_msg(cloud, Header(stamp=rospy.Time(3, 4), frame_id='v')))
    assert got.getvalue() == want.getvalue() and len(got.getvalue()) > 22 * 384
