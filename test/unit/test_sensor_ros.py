"""The ROS side of the sensor streams without a master: CameraInfo math, JPEG size, box markers,
PointCloud2 construction (byte-identical to the codec's pack_cloud), device-time stamps, LaserScan
fields, mount / optical transforms, the small measurement helpers, the nodes' parameter tables and
sensor_bridge.launch's wiring.

Datagrams are built here with struct from the layouts in shared/spec/sensors.md, not with the
codecs' encoders, except where the codec's own output is the thing compared (pack_cloud).
"""
import math
import os
import struct
import types
import xml.etree.ElementTree as ET
from io import BytesIO

import numpy as np
import pytest
from PIL import Image as PILImage

import rospy
from sensor_msgs import point_cloud2
from sensor_msgs.msg import PointCloud2, PointField
from std_msgs.msg import Header
from visualization_msgs.msg import Marker

from morai_bridge.nodes import camera_bridge, lidar2d_bridge, lidar_bridge
from morai_bridge.ros import camera_ros, lidar2d_ros, lidar_ros, sensor_bridge
from morai_bridge.ros.params import ParamError, load
from morai_bridge.wire import camera, lidar2d
from morai_bridge.wire import velodyne as vel
from velodyne_packets import vlp16_packet

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def jpeg_of(width, height, progressive=False, seed=0):
    rgb = (np.random.RandomState(seed).rand(height, width, 3) * 255).astype(np.uint8)
    buf = BytesIO()
    PILImage.fromarray(rgb).save(buf, 'JPEG', quality=90, progressive=progressive)
    return buf.getvalue()


def rotate(q, v):
    """Vector v rotated by quaternion q = (x, y, z, w)."""
    x, y, z, w = q
    vx, vy, vz = v
    # v' = v + 2w (u x v) + 2 u x (u x v)
    cx, cy, cz = y * vz - z * vy, z * vx - x * vz, x * vy - y * vx
    ccx, ccy, ccz = y * cz - z * cy, z * cx - x * cz, x * cy - y * cx
    return (vx + 2 * (w * cx + ccx), vy + 2 * (w * cy + ccy), vz + 2 * (w * cz + ccz))


def q_of(t):
    r = t.transform.rotation
    return (r.x, r.y, r.z, r.w)


def close(a, b, tol=1e-9):
    return all(abs(p - q) <= tol for p, q in zip(a, b))


# ----------------------------------------------------------------------------- camera

def test_intrinsics_of_morais_default_camera():
    """MORAI's saved default camera (eriverOoO/heven-ad-2026 @4d26e0e, ad_data/morai/SaveFile/Sensor/
    25.S4.MolitComp03/SensorInfo_2023_Hyundai_Ioniq5.json, cameras 2 and 3): cameraResWidth 640,
    cameraResHeight 480, focalLengthpixel 320.0, principalPoint 320.0 / 240.0 (with cameraFOV 90,
    the FOV that gives 320 px at 640 px)."""
    assert camera_ros.intrinsics(640, 480, 90.0) == pytest.approx((320.0, 320.0, 320.0, 240.0))


@pytest.mark.parametrize('width,height,fov,fx', [(640, 480, 90.0, 320.0), (1280, 720, 90.0, 640.0),
                                                 (800, 600, 60.0, 400.0 / math.tan(math.radians(30)))])
def test_intrinsics_pinhole_from_horizontal_fov(width, height, fov, fx):
    got = camera_ros.intrinsics(width, height, fov)
    assert got == pytest.approx((fx, fx, width / 2.0, height / 2.0))
    f, _, cx, _ = got
    # the principal point at width / 2: the image edges 0 and width are at -/+ fov/2
    assert math.degrees(math.atan((width - cx) / f)) * 2 == pytest.approx(fov)
    assert math.degrees(math.atan((0 - cx) / f)) * 2 == pytest.approx(-fov)


def test_intrinsics_given_explicitly():
    # as a SensorInfo JSON gives them (focalLengthpixel, principalPoint): they win over the FOV
    assert camera_ros.intrinsics(1280, 720, 90.0, fx=320.0, cx=640.0, cy=360.0) == (320.0, 320.0, 640.0, 360.0)
    assert camera_ros.intrinsics(640, 480, 90.0, cx=319.5, cy=0.0) == pytest.approx((320.0, 320.0, 319.5, 0.0))


def test_camera_info_message():
    h = Header(stamp=rospy.Time(12, 345), frame_id='camera_optical')
    m = camera_ros.camera_info(1280, 720, 90.0, h)
    assert (m.width, m.height) == (1280, 720)
    assert m.header.frame_id == 'camera_optical' and m.header.stamp == rospy.Time(12, 345)
    assert m.distortion_model == 'plumb_bob' and list(m.D) == [0.0] * 5
    assert list(m.K) == pytest.approx([640.0, 0, 640.0, 0, 640.0, 360.0, 0, 0, 1])
    assert list(m.R) == [1, 0, 0, 0, 1, 0, 0, 0, 1]
    assert list(m.P) == pytest.approx([640.0, 0, 640.0, 0, 0, 640.0, 360.0, 0, 0, 0, 1, 0])
    # vertical field of view follows from square pixels: 2 atan(360 / 640) = 58.7 deg
    assert math.degrees(2 * math.atan((720 / 2.0) / m.K[4])) == pytest.approx(58.7155, abs=1e-3)
    buf = BytesIO()
    m.serialize(buf)         # a valid message of its type
    m = camera_ros.camera_info(640, 480, 130.0, h, fx=320.0, cx=320.0, cy=240.0)
    assert list(m.K) == [320.0, 0, 320.0, 0, 320.0, 240.0, 0, 0, 1]


def test_unsigned_camera_stamps_are_times():
    """The codec reads camera/BOX sec as uint32: every value is a ROS time (uint32 sec)."""
    from morai_bridge.ros.sensor_bridge import sim_stamp
    assert sim_stamp(2 ** 32 - 1, 999999999) == rospy.Time(2 ** 32 - 1, 999999999)
    assert sim_stamp(2 ** 31, 0) == rospy.Time(2 ** 31, 0)
    assert sim_stamp(5, 10 ** 9) is None
    buf = BytesIO()
    Header(stamp=sim_stamp(2 ** 32 - 1, 999999999)).serialize(buf)


@pytest.mark.parametrize('size', [(640, 480), (1280, 720), (17, 9), (1, 1)])
@pytest.mark.parametrize('progressive', [False, True])
def test_jpeg_size_from_the_frame_header(size, progressive):
    assert camera_ros.jpeg_size(jpeg_of(size[0], size[1], progressive)) == size


def test_jpeg_size_of_what_is_not_a_jpeg():
    j = jpeg_of(64, 32)
    assert camera_ros.jpeg_size(b'') is None
    assert camera_ros.jpeg_size(b'\x89PNG\r\n') is None
    assert camera_ros.jpeg_size(j[:20]) is None               # cut before the frame header
    assert camera_ros.jpeg_size(b'\xff\xd8\xff\xda\x00\x02') is None      # scan before any frame header
    assert camera_ros.jpeg_size(b'\xff\xd8\x00\x00\x00\x00') is None      # not a marker


def test_compressed_image_keeps_the_bytes():
    j = jpeg_of(40, 30)
    m = camera_ros.compressed_image(j, Header(frame_id='camera_optical'))
    buf = BytesIO()
    m.serialize(buf)
    back = type(m)()
    back.deserialize(buf.getvalue())
    assert back.format == 'jpeg' and bytes(back.data) == j


def test_raw_image_is_the_jpeg_decoded_rgb8():
    j = jpeg_of(33, 21)
    m = camera_ros.image_msg(camera_ros.decode_jpeg(j), Header(frame_id='x'))
    ref = PILImage.open(BytesIO(j)).convert('RGB')
    assert (m.width, m.height, m.encoding, m.step, m.is_bigendian) == (33, 21, 'rgb8', 99, 0)
    assert m.data == ref.tobytes()
    gray = BytesIO()
    PILImage.new('L', (8, 4), 77).save(gray, 'JPEG')
    g = camera_ros.image_msg(camera_ros.decode_jpeg(gray.getvalue()), Header())
    assert g.encoding == 'rgb8' and len(g.data) == 8 * 4 * 3


def cube(x0, y0, z0, dx, dy, dz):
    """Corners in binary cube order: bit 0 -> +dx, bit 1 -> +dy, bit 2 -> +dz."""
    return tuple((x0 + dx * (i & 1), y0 + dy * ((i >> 1) & 1), z0 + dz * ((i >> 2) & 1)) for i in range(8))


def test_box_edges_are_the_twelve_edges_of_a_cube():
    assert len(camera_ros.BOX_EDGES) == 12
    corners = cube(0, 0, 0, 1, 1, 1)
    for a, b in camera_ros.BOX_EDGES:
        d = [abs(p - q) for p, q in zip(corners[a], corners[b])]
        assert sorted(d) == [0, 0, 1], (a, b)
    assert len({frozenset(e) for e in camera_ros.BOX_EDGES}) == 12


def test_box_markers():
    a = camera.BoxObject(cube(-1.0, -0.5, 10.0, 2.0, 1.5, 4.0), 100.0, 50.0, 300.0, 200.0, 1, 2, 3)
    flat = camera.BoxObject(((0.0, 0.0, 0.0),) * 8, 5.0, 6.0, 7.0, 8.0, 9, 0, 4)   # 2D only
    stamp = rospy.Time(100, 5)
    arr = camera_ros.box_markers([a, flat], stamp, 'camera_optical', first_id=0, lifetime=0.3)
    m = arr.markers
    assert m[0].action == Marker.DELETEALL
    boxes = [x for x in m if x.ns == 'camera_boxes']
    labels = [x for x in m if x.ns == 'camera_box_labels']
    assert [b.id for b in boxes] == [0, 1] and [x.id for x in labels] == [0]     # no label for the 2D-only entry
    b = boxes[0]
    assert b.type == Marker.LINE_LIST and b.header.frame_id == 'camera_optical' and b.header.stamp == stamp
    assert b.lifetime == rospy.Duration(0.3) and b.pose.orientation.w == 1.0 and b.color.a == 1.0
    pts = [(p.x, p.y, p.z) for p in b.points]
    assert len(pts) == 24
    assert set(pts) == set(a.corners)
    for i, (ca, cb) in enumerate(camera_ros.BOX_EDGES):
        assert pts[2 * i] == a.corners[ca] and pts[2 * i + 1] == a.corners[cb]
    assert camera_ros.parse_box_text(b.text) == {'group': 1, 'class': 2, 'subclass': 3, 'xmin': 100.0,
                                                  'ymin': 50.0, 'xmax': 300.0, 'ymax': 200.0}
    assert camera_ros.parse_box_text(boxes[1].text)['group'] == 9
    lab = labels[0]
    assert lab.type == Marker.TEXT_VIEW_FACING and lab.text == '1/2/3'
    # above the box in the optical frame: y is down, so above = smaller y than the top face
    assert lab.pose.position.y < -0.5 and lab.pose.position.x == pytest.approx(0.0)
    assert lab.pose.position.z == pytest.approx(12.0)
    cont = camera_ros.box_markers([a], stamp, 'camera_optical', first_id=565, delete_all=False)
    assert cont.markers[0].id == 565 and all(x.action == Marker.ADD for x in cont.markers)
    world = camera_ros.box_markers([a], stamp, 'map', optical=False).markers[2]
    assert world.pose.position.z > 14.0            # z-up frame: label above the top face


def test_box_colours_differ_by_group_and_are_stable():
    colours = [camera_ros.box_color(g) for g in range(8)]
    assert len(set(colours)) == 8
    assert camera_ros.box_color(3) == camera_ros.box_color(3)
    assert all(0.0 <= c <= 1.0 for rgb in colours for c in rgb)


def test_annotate_draws_the_2d_box():
    img = PILImage.new('RGB', (100, 80), (0, 0, 0))
    obj = camera.BoxObject(((0.0, 0.0, 0.0),) * 8, 10.0, 20.0, 60.0, 70.0, 2, 0, 0)
    out = camera_ros.annotate(img, [obj])
    colour = tuple(int(round(c * 255)) for c in camera_ros.box_color(2))
    assert out.getpixel((10, 45)) == colour and out.getpixel((60, 45)) == colour   # left and right edges
    assert out.getpixel((35, 20)) == colour and out.getpixel((35, 70)) == colour   # top and bottom
    assert out.getpixel((35, 45)) == (0, 0, 0)                                       # inside untouched
    assert img.getpixel((10, 45)) == (0, 0, 0)                                       # a copy was drawn on


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


# ----------------------------------------------------------------------------- TF

def test_mount_transform_rep103():
    t = sensor_bridge.mount_transform('base_link', 'velodyne', 1.0, 2.0, 3.0, 0.0, 0.0, 90.0)
    assert (t.header.frame_id, t.child_frame_id) == ('base_link', 'velodyne')
    v = t.transform.translation
    assert (v.x, v.y, v.z) == (1.0, 2.0, 3.0)
    assert close(rotate(q_of(t), (1, 0, 0)), (0, 1, 0))                  # yaw +90: forward turns left
    pitch = sensor_bridge.mount_transform('a', 'b', 0, 0, 0, 0.0, 30.0, 0.0)
    fwd = rotate(q_of(pitch), (1, 0, 0))
    assert fwd[2] == pytest.approx(-0.5)                                 # pitch +: nose down
    roll = sensor_bridge.mount_transform('a', 'b', 0, 0, 0, 90.0, 0.0, 0.0)
    assert close(rotate(q_of(roll), (0, 1, 0)), (0, 0, 1))               # roll +90: left turns up
    both = sensor_bridge.mount_transform('a', 'b', 0, 0, 0, 90.0, 0.0, 90.0)
    # fixed axes: roll first, then yaw: y -> z (roll), z stays under yaw
    assert close(rotate(q_of(both), (0, 1, 0)), (0, 0, 1))
    assert close(rotate(q_of(both), (1, 0, 0)), (0, 1, 0))


def test_optical_frame_axes():
    t = sensor_bridge.optical_transform('camera', 'camera_optical')
    assert (t.header.frame_id, t.child_frame_id) == ('camera', 'camera_optical')
    q = q_of(t)
    assert close(rotate(q, (0, 0, 1)), (1, 0, 0))        # optical z (forward) = body x
    assert close(rotate(q, (1, 0, 0)), (0, -1, 0))       # optical x (right) = body -y
    assert close(rotate(q, (0, 1, 0)), (0, 0, -1))       # optical y (down) = body -z


# ----------------------------------------------------------------------------- helpers

# ----------------------------------------------------------------------------- parameter tables

def defaults(node):
    return dict((p.name, p.default) for p in node.PARAMS)


def test_node_defaults():
    cam, lid, l2d = defaults(camera_bridge), defaults(lidar_bridge), defaults(lidar2d_bridge)
    assert (cam['port'], lid['port'], l2d['port']) == (1232, 2368, 0)
    assert cam['image_topic'] == 'image_jpeg/compressed' and lid['topic'] == 'velodyne_points'
    assert l2d['topic'] == 'scan'
    assert (cam['frame_id'], cam['optical_frame_id'], lid['frame_id'], l2d['frame_id']) == (
        'camera', 'camera_optical', 'velodyne', 'laser')
    for d in (cam, lid, l2d):
        assert d['parent_frame'] == 'base_link' and d['sim_ip'] == '127.0.0.1' and d['publish_tf'] is True
        for k in ('mount_x', 'mount_y', 'mount_z', 'mount_roll', 'mount_pitch', 'mount_yaw'):
            assert d[k] == 0.0
    assert 'stamp_source' in cam and 'stamp_source' in lid and 'stamp_source' not in l2d
    models = [p for p in lidar_bridge.PARAMS if p.name == 'model'][0].choices
    assert set(models) == {'VLP16', 'PUCK_HIRES', 'HDL32E', 'VLP32C', 'MORAI_64'}


def test_params_are_checked():
    with pytest.raises(ParamError, match='stamp_source'):
        load(lidar_bridge.PARAMS, lambda n, d: 'gps' if n == 'stamp_source' else d)
    with pytest.raises(ParamError, match='model'):
        load(lidar_bridge.PARAMS, lambda n, d: 'HDL64' if n == 'model' else d)
    with pytest.raises(ParamError, match='port'):
        load(camera_bridge.PARAMS, lambda n, d: 70000 if n == 'port' else d)


def test_port_zero_is_refused():
    for mod, cls in ((camera_bridge, camera_ros.CameraBridge), (lidar_bridge, lidar_ros.LidarBridge),
                     (lidar2d_bridge, lidar2d_ros.Lidar2dBridge)):
        cfg = load(mod.PARAMS, lambda n, d: 0 if n == 'port' else d)
        with pytest.raises(ParamError, match='~port is 0'):
            cls(cfg)


def test_lidar2d_angle_parameters_are_checked_at_start():
    cfg = load(lidar2d_bridge.PARAMS, lambda n, d: {'port': 1, 'angle_min_deg': -179.5}.get(n, d))
    with pytest.raises(ParamError, match='angle'):
        lidar2d_ros.Lidar2dBridge(cfg)


# ----------------------------------------------------------------------------- sensor_bridge.launch

def test_sensor_bridge_launch_wiring():
    root = ET.parse(os.path.join(ROOT, 'launch', 'sensor_bridge.launch')).getroot()
    args = dict((a.get('name'), a.get('default')) for a in root.findall('arg'))
    for name, default in (('camera_port', '1232'), ('lidar_port', '2368'), ('lidar_model', 'VLP16'),
                          ('lidar2d_port', '0'), ('sim_ip', '127.0.0.1'), ('bind_ip', '127.0.0.1'),
                          ('stamp_source', 'sim'), ('output', 'screen')):
        assert args.get(name) == default, name
    includes = dict((os.path.basename(i.get('file')), i) for i in root.findall('include'))
    assert set(includes) == {'camera_bridge.launch', 'lidar_bridge.launch', 'lidar2d_bridge.launch'}
    for launch, prefix, port in (('camera_bridge.launch', 'camera', 'camera_port'),
                                 ('lidar_bridge.launch', 'lidar', 'lidar_port'),
                                 ('lidar2d_bridge.launch', 'lidar2d', 'lidar2d_port')):
        inc = includes[launch]
        # settings:= (MORAI's saved sensor settings, docs/settings.md) includes every node
        assert inc.get('if') == "$(eval %s != 0 or settings != '')" % port
        passed = dict((a.get('name'), a.get('value')) for a in inc.findall('arg'))
        assert (passed['settings'], passed['settings_sensor']) == ('$(arg settings)', '$(arg %s_sensor)' % prefix)
        assert passed['port'] == '$(arg %s)' % port
        assert passed['sim_ip'] == '$(arg sim_ip)' and passed['bind_ip'] == '$(arg bind_ip)'
        for axis in ('x', 'y', 'z', 'roll', 'pitch', 'yaw'):
            assert passed['mount_' + axis] == '$(arg %s_%s)' % (prefix, axis)
            assert args['%s_%s' % (prefix, axis)] == '0.0'
        # every arg passed exists in the included (generated) launch file
        inner = ET.parse(os.path.join(ROOT, 'launch', launch)).getroot()
        names = {a.get('name') for a in inner.findall('arg')}
        assert set(passed) <= names, set(passed) - names
    assert dict((a.get('name'), a.get('value')) for a in includes['lidar_bridge.launch'].findall('arg'))[
        'model'] == '$(arg lidar_model)'
    assert dict((a.get('name'), a.get('value')) for a in includes['lidar2d_bridge.launch'].findall('arg'))[
        'range_max'] == '$(arg lidar2d_range_max)' and args['lidar2d_range_max'] == '0.0'
