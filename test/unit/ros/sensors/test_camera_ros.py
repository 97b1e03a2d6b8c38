"""The camera stream's ROS side (ros/sensors/camera_ros.py) without a master: CameraInfo math, JPEG size,
images (the box markers: test_box_markers.py).

Datagrams are built here with struct from the layouts in docs/sensors.md, not with the codecs'
encoders.
"""
import math
from io import BytesIO

import numpy as np
import pytest
from PIL import Image as PILImage

import rospy
from std_msgs.msg import Header
from morai_bridge.ros.sensors import camera_ros


def jpeg_of(width, height, progressive=False, seed=0):
    rgb = (np.random.RandomState(seed).rand(height, width, 3) * 255).astype(np.uint8)
    buf = BytesIO()
    PILImage.fromarray(rgb).save(buf, 'JPEG', quality=90, progressive=progressive)
    return buf.getvalue()


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
