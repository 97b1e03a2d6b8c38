"""Camera stream of the MORAI SIM over UDP -> sensor_msgs, and its boxes -> MarkerArray.

One UDP port carries a camera's JPEG chunk datagrams (``MOR``) and its
bounding-box datagrams (``BOX``); :mod:`morai_bridge.wire.camera` decodes both
and reassembles frames.  :class:`CameraBridge` receives the port in a supervised
worker and publishes, per frame:

* ``sensor_msgs/CompressedImage`` (format ``jpeg``, data = the JPEG bytes as
  they arrived, untouched) and ``sensor_msgs/CameraInfo`` (ideal pinhole from
  the image size and the horizontal field of view, plumb_bob with zero
  distortion), both stamped alike, in the camera's optical frame;
* with ``~publish_raw`` and a subscriber, ``sensor_msgs/Image`` rgb8 decoded
  with PIL, and with ``~publish_annotated`` and a subscriber, the same image
  with the 2D boxes drawn: both in a second worker (``camera_publisher``) that
  always takes the newest frame, so JPEG decoding never holds up the receive
  loop (frames it had no time for are counted as skipped).

Boxes become a ``visualization_msgs/MarkerArray`` and are drawn on the
annotated image by :mod:`morai_bridge.ros.sensors.box_markers`.

Message building is pure functions (no master needed), tested in
test/unit/ros/sensors/test_camera_ros.py.
"""
import io
import math
import struct
import time
from collections import Counter

import rospy
from sensor_msgs.msg import CameraInfo, CompressedImage, Image, RegionOfInterest
from std_msgs.msg import Header
from visualization_msgs.msg import MarkerArray

from morai_bridge.configuration.params import Param, ParamError
from morai_bridge.link.measure import RateMeter, snapshot
from morai_bridge.link.workers import LatestSlot, Worker
from morai_bridge.ros.sensors.box_markers import annotate, box_markers
from morai_bridge.ros.sensors.sensor_bridge import WARN, SensorBridge, counted, optical_transform
from morai_bridge.ros.sensors.sensor_params import (STAMP_PARAM, mount_params, native_names_param, network_params,
                                            tail_params)
from morai_bridge.wire import camera
from morai_bridge.wire.sample_order import DUPLICATE, NEW, NOT_PUBLISHED, NS, REORDERED, RESTART, SampleOrder
from morai_bridge.wire.sensor_errors import SensorDecodeError


PARAMS = network_params(camera.DEFAULT_PORT, 'camera image (MOR) and box (BOX) datagrams (UDP port; 0: the '
                        'node refuses to start, sensor_bridge.launch leaves it out)', 8 << 20) + [
    Param('header', 'v24', 'datagram layout: v24 (24.R1 on: sec/nsec in every MOR and BOX header) or legacy '
          '(before: no stamp; BOX objects of 179 bytes in the world frame)', choices=('v24', 'legacy')),
    Param('check_stamps', True, 'drop a frame whose chunks carry different stamps (v24)'),
    Param('reorder_window', 1.0, 'v24: a whole frame stamped earlier than the last published one is dropped '
          '(counted; the same stamp: a duplicate), unless earlier by this much or more: the simulator\'s clock '
          'started again (docs/reliability.md, "A lossy link") [s]', minimum=0.001),
    Param('max_chunks', 64, 'drop a frame of more chunks than this without its last (EI) chunk',
          minimum=1, maximum=100000),
    STAMP_PARAM,
    Param('image_topic', 'image_jpeg/compressed', 'published sensor_msgs/CompressedImage (MORAI\'s ROS topic)'),
    Param('camera_info_topic', 'image_jpeg/camera_info', 'published sensor_msgs/CameraInfo'),
    native_names_param('none for the camera: image_jpeg/compressed is MORAI\'s name either way; accepted so '
                       'that one switch fits every sensor node'),
    Param('width', 0, 'CameraInfo width [px]; 0: the width in the JPEG header', minimum=0, maximum=65535),
    Param('height', 0, 'CameraInfo height [px]; 0: the height in the JPEG header', minimum=0, maximum=65535),
    Param('fov_deg', 90.0, 'horizontal field of view of the simulator\'s camera [deg] (CameraInfo K, P)',
          minimum=1.0, maximum=179.0),
    Param('fx', 0.0, 'CameraInfo focal length [px] (fx = fy; MORAI\'s focalLengthpixel); 0: from fov_deg and '
          'the width', minimum=0.0),
    Param('cx', -1.0, 'CameraInfo principal point x [px] (MORAI\'s principalPoint.x); negative: width / 2, as '
          'MORAI\'s settings show (320 at 640 px)'),
    Param('cy', -1.0, 'CameraInfo principal point y [px] (MORAI\'s principalPoint.y); negative: height / 2 (240 '
          'at 480 px)'),
    Param('publish_raw', False, 'also publish the decoded image (sensor_msgs/Image rgb8) while subscribed; '
          'needs python3-pil'),
    Param('raw_topic', 'image_raw', 'published sensor_msgs/Image (publish_raw)'),
    Param('boxes_topic', 'camera/boxes', 'published visualization_msgs/MarkerArray of the BOX datagrams'),
    Param('box_size_unit', 'auto', 'meaning of the BOX size field: auto (decided per datagram where only one '
          'reading fits), bytes (MORAI_CPP_Networks, DriveExample a2z) or count (heven-ad-2026 25.S4 codec)',
          choices=camera.BOX_SIZE_UNITS),
    Param('box_skip', 'all_zero', 'which box entries are padding: all_zero, box2d (2D box all zero), class '
          '(group, class, subclass all zero) or none', choices=('all_zero', 'box2d', 'class', 'none')),
    Param('box_lifetime', 0.3, 'lifetime of box markers [s] (the next BOX datagram replaces them; 0: '
          'forever)', minimum=0.0),
    Param('world_frame', 'map', 'frame of legacy boxes (their corners are world coordinates)'),
    Param('publish_annotated', False, 'also publish the image with the 2D boxes drawn while subscribed; '
          'needs python3-pil'),
    Param('annotated_topic', 'camera/boxes_image', 'published sensor_msgs/Image (publish_annotated)'),
] + mount_params('camera', 'camera body (x forward, y left, z up)') + [
    Param('optical_frame_id', 'camera_optical', 'optical frame (z forward, x right, y down; TF child of '
          'frame_id): header frame of images, camera info and v24 boxes'),
] + tail_params()

_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


# ----------------------------------------------------------------------------- pure functions

def jpeg_size(data):
    """(width, height) from a JPEG's SOF segment, or None when the bytes do not say."""
    if data[:2] != b'\xff\xd8':
        return None
    i, n = 2, len(data)
    while i + 4 <= n:
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:                      # fill byte
            i += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD8:   # TEM, RSTn, SOI: no length
            i += 2
            continue
        if marker in (0xD9, 0xDA):              # EOI or scan data before any frame header
            return None
        if marker in _SOF:
            if i + 9 > n:
                return None
            height, width = struct.unpack_from('>HH', data, i + 5)
            return width, height
        i += 2 + struct.unpack_from('>H', data, i + 2)[0]
    return None


def intrinsics(width, height, fov_deg, fx=0.0, cx=-1.0, cy=-1.0):
    """(fx, fy, cx, cy) of an ideal pinhole camera with square pixels, as MORAI's saved camera
    settings give them: focal length ``(width / 2) / tan(fov_deg / 2)`` (``fov_deg`` horizontal)
    unless ``fx`` > 0 is given; principal point ``(width / 2, height / 2)`` unless ``cx`` / ``cy``
    >= 0 are given (MORAI's 640 x 480, 90 deg camera: 320, 320, 320, 240; docs/sensors_ros.md)."""
    f = fx if fx > 0 else width / (2.0 * math.tan(math.radians(fov_deg) / 2.0))
    return (f, f, cx if cx >= 0 else width / 2.0, cy if cy >= 0 else height / 2.0)


def camera_info(width, height, fov_deg, header, fx=0.0, cx=-1.0, cy=-1.0):
    """sensor_msgs/CameraInfo: plumb_bob, zero distortion, R identity, P = [K | 0]."""
    fx, fy, cx, cy = intrinsics(width, height, fov_deg, fx, cx, cy)
    m = CameraInfo()
    m.header = header
    m.width = width
    m.height = height
    m.distortion_model = 'plumb_bob'
    m.D = [0.0, 0.0, 0.0, 0.0, 0.0]
    m.K = [fx, 0.0, cx, 0.0, fy, cy, 0.0, 0.0, 1.0]
    m.R = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    m.P = [fx, 0.0, cx, 0.0, 0.0, fy, cy, 0.0, 0.0, 0.0, 1.0, 0.0]
    m.roi = RegionOfInterest()
    return m


def compressed_image(jpeg, header):
    m = CompressedImage()
    m.header = header
    m.format = 'jpeg'
    m.data = jpeg
    return m


def _pil():
    from PIL import Image as PILImage     # optional (publish_raw, publish_annotated): imported when used
    return PILImage


def decode_jpeg(jpeg):
    """The JPEG as an RGB PIL image."""
    img = _pil().open(io.BytesIO(jpeg))
    img.load()
    return img if img.mode == 'RGB' else img.convert('RGB')


def image_msg(rgb, header):
    """sensor_msgs/Image rgb8 of an RGB PIL image."""
    w, h = rgb.size
    m = Image()
    m.header = header
    m.height = h
    m.width = w
    m.encoding = 'rgb8'
    m.is_bigendian = 0
    m.step = 3 * w
    m.data = rgb.tobytes()
    return m


# ----------------------------------------------------------------------------- the node's parts

class CameraBridge(SensorBridge):
    """Receive one camera port, publish images, camera info and boxes (module docstring)."""

    kind = 'camera'
    title = 'Camera'
    port_off = ('~port is 0: the camera stream is off, nothing to do (set ~port to the camera\'s destination port '
                'in the simulator, e.g. 1232)')
    problem_words = 'malformed or dropped datagrams'

    def setup(self, cfg, log, on_dead):
        if cfg.publish_raw or cfg.publish_annotated:
            try:
                _pil()
            except ImportError:
                raise ParamError('~publish_raw / ~publish_annotated need PIL (python3-pil)') from None
        self.form = camera.HEADER_FORMS[cfg.header]
        self.box_form = camera.BOX_FORMS[cfg.header]
        self.assembler = camera.FrameAssembler(cfg.header, cfg.check_stamps, cfg.max_chunks)
        self.order = SampleOrder(int(cfg.reorder_window * NS))    # the newest-sample rule on whole frames
        self.stale = Counter()         # frames not published by it: reordered / duplicates; clock restarts
        self.image_pub = rospy.Publisher(cfg.image_topic, CompressedImage, queue_size=2)
        self.info_pub = rospy.Publisher(cfg.camera_info_topic, CameraInfo, queue_size=2)
        self.box_pub = rospy.Publisher(cfg.boxes_topic, MarkerArray, queue_size=10)
        self.raw_pub = rospy.Publisher(cfg.raw_topic, Image, queue_size=1) if cfg.publish_raw else None
        self.annotated_pub = rospy.Publisher(cfg.annotated_topic, Image, queue_size=1) \
            if cfg.publish_annotated else None
        # counters (plain ints, written by the receive thread only)
        self.frames_published = 0
        self.box_packets = 0
        self.box_objects = 0
        self.box_errors = Counter()
        self.box_units = Counter()     # how the BOX size field was read: bytes / count
        self.traffic_light = 0         # legacy 'T' datagrams: classified, not decoded
        self.unknown = 0               # datagrams that are neither MOR nor BOX
        self.bad_stamps = 0            # stamp_source sim but the packet's sec/nsec is not a time
        self.size_mismatch = 0         # frames whose JPEG size differs from ~width/~height
        self.decode_errors = 0         # publisher: JPEGs PIL could not decode
        self.image_size = None         # (w, h) from the last JPEG header
        # self.timing: the last datagram of a frame read -> image and info published
        self._asm_error = None         # the assembler's last_error last copied to last_error
        self._chunk0_rx = None         # ROS time at which the current frame's chunk 0 arrived
        self._index_at = 11 if self.form.has_stamp else 3
        self._boxes = (None, [])       # (stamp, objects) of the newest box packet, for annotation
        self._rate = RateMeter()
        self._box_rate = RateMeter()
        self.slot = LatestSlot() if (self.raw_pub or self.annotated_pub) else None
        if self.slot is not None:
            self.extra_workers.append(Worker('camera_publisher', self._publish_step, log=log, on_dead=on_dead))

    def transforms(self):
        cfg = self.cfg
        return SensorBridge.transforms(self) + [optical_transform(cfg.frame_id, cfg.optical_frame_id)]

    # -------------------------------------------------------------- receive thread

    def on_datagram(self, name, data, addr, t):
        kind = camera.classify(data)
        if kind == 'image':
            i = self._index_at
            if data[i:i + 4] == b'\0\0\0\0':
                self._chunk0_rx = rospy.get_rostime()
            frame = self.assembler.push(data)
            if self.assembler.last_error is not self._asm_error:      # a new drop or malformed chunk
                self._asm_error = self.last_error = self.assembler.last_error
            if frame is not None:
                self._on_frame(frame, t)
        elif kind == 'box':
            self._on_boxes(data)
        elif kind == 'traffic_light':
            self.traffic_light += 1
        else:
            self.unknown += 1
            self.last_error = f'datagram of {len(data)} bytes starting {data[:3]!r} is neither MOR nor BOX'

    def _on_frame(self, frame, t):
        cfg = self.cfg
        if frame.sec is not None:
            verdict = self.order.check(frame.sec * NS + frame.nsec)
            if verdict is not NEW:
                self.stale[verdict] += 1
                if verdict in NOT_PUBLISHED:
                    self._chunk0_rx = None
                    return
        stamp = self.packet_stamp(frame.sec, frame.nsec, self._chunk0_rx)
        self._chunk0_rx = None
        size = jpeg_size(frame.jpeg)
        self.image_size = size
        self.image_pub.publish(compressed_image(frame.jpeg, Header(stamp=stamp, frame_id=cfg.optical_frame_id)))
        w, h = cfg.width, cfg.height
        if size is not None:
            if (w and w != size[0]) or (h and h != size[1]):
                self.size_mismatch += 1
            w, h = w or size[0], h or size[1]
        if w and h:
            self.info_pub.publish(camera_info(w, h, cfg.fov_deg, Header(stamp=stamp, frame_id=cfg.optical_frame_id),
                                              cfg.fx, cfg.cx, cfg.cy))
        self.frames_published += 1
        if self.slot is not None and ((self.raw_pub is not None and self.raw_pub.get_num_connections())
                                      or (self.annotated_pub is not None
                                          and self.annotated_pub.get_num_connections())):
            self.slot.put((stamp, frame.jpeg))
        self.timing.add(time.monotonic() - t)

    def _on_boxes(self, data):
        cfg = self.cfg
        try:
            pkt = camera.decode_boxes(data, cfg.header, cfg.box_skip, size_unit=cfg.box_size_unit)
        except SensorDecodeError as e:
            self.box_errors[e.reason] += 1
            self.last_error = f'box datagram: {e}'
            return
        self.box_units[pkt.size_unit] += 1
        stamp = self.packet_stamp(pkt.sec, pkt.nsec)
        # bytes form: the field at offset 11 numbers the datagrams of one packet (> 565 objects);
        # count form: heven-ad-2026's codec calls it a sequence and reads every datagram as the
        # whole set, so each one replaces the previous boxes
        index = max(0, pkt.index) if pkt.size_unit == 'bytes' else 0
        v24 = self.box_form.has_stamp
        frame_id = cfg.optical_frame_id if v24 else cfg.world_frame
        self.box_pub.publish(box_markers(pkt.objects, stamp, frame_id, index * self.box_form.max_objects,
                                         delete_all=index == 0, lifetime=cfg.box_lifetime, optical=v24))
        self.box_packets += 1
        self.box_objects += len(pkt.objects)
        if self.annotated_pub is not None:
            prev_stamp, prev = self._boxes
            objects = list(prev) + list(pkt.objects) if index > 0 and prev_stamp == stamp else list(pkt.objects)
            self._boxes = (stamp, objects)

    # -------------------------------------------------------------- publisher thread

    def _publish_step(self):
        item = self.slot.take(0.2)
        if item is None:
            return
        stamp, jpeg = item
        try:
            rgb = decode_jpeg(jpeg)
        except Exception as e:      # noqa: BLE001 - PIL raises many types for bad JPEG data
            self.decode_errors += 1
            self.last_error = f'JPEG not decodable: {type(e).__name__}: {e}'
            return
        frame_id = self.cfg.optical_frame_id
        if self.raw_pub is not None and self.raw_pub.get_num_connections():
            self.raw_pub.publish(image_msg(rgb, Header(stamp=stamp, frame_id=frame_id)))
        if self.annotated_pub is not None and self.annotated_pub.get_num_connections():
            box_stamp, objects = self._boxes
            if box_stamp is None or abs((box_stamp - stamp).to_sec()) > 0.1:
                objects = []        # boxes of another moment: draw none
            self.annotated_pub.publish(image_msg(annotate(rgb, objects), Header(stamp=stamp, frame_id=frame_id)))

    # -------------------------------------------------------------- diagnostics

    def report(self):
        cfg = self.cfg
        a = self.assembler
        dropped = snapshot(a.dropped)
        malformed = snapshot(a.malformed_reasons)
        box_errors = snapshot(self.box_errors)
        units = snapshot(self.box_units)
        rate = self._rate(a.frames)
        box_rate = self._box_rate(self.box_packets)
        text = f'{rate:.1f} Hz images'
        if self.box_packets:
            text += f', {box_rate:.1f} Hz boxes'
        problems = (a.malformed + sum(dropped.values()) + sum(box_errors.values()) + self.unknown
                    + self.bad_stamps + self.decode_errors)
        more = []
        if self.size_mismatch and self.image_size:
            more.append((WARN, 'images are %dx%d but CameraInfo says %dx%d (~width, ~height)' % (
                self.image_size[0], self.image_size[1], cfg.width or self.image_size[0],
                cfg.height or self.image_size[1])))
        values = [
            ('header form', cfg.header),
            ('rate [Hz]', f'{rate:.1f}'),
            ('frames published', self.frames_published),
            ('datagrams received', self.socket.stats.received),
            ('chunks', a.chunks),
            ('malformed', a.malformed),
        ] + counted('malformed ', malformed) + [
            ('frames dropped', sum(dropped.values())),
        ] + counted('dropped ', dropped) + [
            ('duplicate chunks ignored', a.duplicates),
            ('whole frames older than the last published (not published)', self.stale[REORDERED]),
            ('whole frames with the stamp of the last published (not published)', self.stale[DUPLICATE]),
            ('camera clock restarts (published)', self.stale[RESTART]),
            ('box rate [Hz]', f'{box_rate:.1f}'),
            ('box datagrams published', self.box_packets),
            ('box objects', self.box_objects),
            ('box size unit', cfg.box_size_unit),
            ('box size read as bytes / count', '%d / %d' % (units.get('bytes', 0), units.get('count', 0))),
            ('box decode errors', sum(box_errors.values())),
        ] + counted('box errors ', box_errors) + [
            ('legacy traffic-light datagrams ignored', self.traffic_light),
            ('unknown datagrams', self.unknown),
            ('stamp source', cfg.stamp_source),
            ('invalid packet stamps', self.bad_stamps),
            ('image size', '%dx%d' % self.image_size if self.image_size else ''),
            ('camera info size mismatches', self.size_mismatch),
            ('publish time p50 / p99 / max [ms]', self.timing.summary_ms()),
        ]
        if self.slot is not None:
            values += [('raw frames decoded', self.slot.taken),
                       ('raw frames skipped (decoder busy)', self.slot.skipped),
                       ('JPEG decode errors', self.decode_errors)]
        return text, problems, more, values
