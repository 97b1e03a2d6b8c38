#!/usr/bin/env python3
"""rostest: sensor_bridge.launch (camera_bridge, lidar_bridge, lidar2d_bridge) on free ports, fed by a
fake simulator written here.

Every datagram is built in this file with struct, from the layouts of shared/spec/sensors.md (camera
"MOR" chunks and "BOX" objects sections 1-2, Velodyne VLP-16 packets and the elevation table of
section 3.3, the 2D LiDAR datagram of section 4), not with the project's encoders.  The test checks
what a user of MORAI's ROS mode relies on: the JPEG bytes and stamps, CameraInfo, one cloud per
revolution with every point where it was encoded, the scan, the boxes, the static TF, and that a
malformed datagram on each port is counted on /diagnostics while the next good one still comes out.
"""
import io
import math
import os
import socket
import struct
import threading
import time
import unittest
import xmlrpc.client

import numpy as np
import rosgraph
import roslaunch
import rospy
import rostest
import tf2_ros
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from PIL import Image as PILImage
from sensor_msgs.msg import CameraInfo, CompressedImage, Image, LaserScan, PointCloud2
from std_msgs.msg import String
from visualization_msgs.msg import Marker, MarkerArray

from harness import Collector, free_ports  # noqa: E402
from helpers import wait_for  # noqa: E402  (test/unit, on the path harness gives)

HERE = os.path.dirname(os.path.realpath(__file__))
LAUNCH = os.path.join(HERE, '..', '..', 'launch', 'sensor_bridge.launch')
T = 15.0

# ---------------------------------------------------------------------------- the fake simulator's encoders

MOR_DATAGRAM = 65000
MOR_MAX_CHUNK = 64979            # 65,000 - 19-byte header - 2-byte tail (spec 1.1)


def mor_datagrams(jpeg, sec, nsec, padded=True):
    """Camera chunks, 24.R1+ header: 'MOR', int32 sec, nsec, index, size, chunk, 'AI'/'EI'."""
    count = max(1, -(-len(jpeg) // MOR_MAX_CHUNK))
    out = []
    for i in range(count):
        piece = jpeg[i * MOR_MAX_CHUNK:(i + 1) * MOR_MAX_CHUNK]
        head = b'MOR' + struct.pack('<iiii', sec, nsec, i, len(piece))
        tail = b'EI' if i == count - 1 else b'AI'
        fill = bytes(MOR_DATAGRAM - len(head) - len(piece) - 2) if padded else b''
        out.append(head + piece + fill + tail)
    return out


def box_datagram(objects, sec, nsec):
    """'BOX', int32 sec, nsec, index 0, size; per object 8 corners xyz float32, xmin, ymin, xmax, ymax
    float32, group, class, subclass uint8 (115 bytes); zero fill to 65,000 bytes; 2-byte tail."""
    body = b''.join(struct.pack('<24f4f3B', *([v for c in o['corners'] for v in c] + list(o['box2d']) +
                                               list(o['codes']))) for o in objects)
    d = b'BOX' + struct.pack('<iiii', sec, nsec, 0, len(body)) + body
    return d + bytes(MOR_DATAGRAM - 2 - len(d)) + b'EO'


def box_count_datagram(objects, sec, nsec, seq=0):
    """The count form of eriverOoO/heven-ad-2026 @4d26e0e ad_morai_bridge_dev/.../codecs/camera.py:
    'BOX', sec, nsec, sequence, COUNT of objects, the 115-byte objects, CR LF; not padded.  sec and
    nsec written unsigned (Onlyti/MORAI_CPP_Networks reads uint32)."""
    body = b''.join(struct.pack('<24f4f3B', *([v for c in o['corners'] for v in c] + list(o['box2d']) +
                                               list(o['codes']))) for o in objects)
    return b'BOX' + struct.pack('<IIii', sec, nsec, seq, len(objects)) + body + b'\r\n'


VLP16_ELEV = [-15, 1, -13, 3, -11, 5, -9, 7, -7, 9, -5, 11, -3, 13, -1, 15]      # spec 3.3
PACKET_US = 1327                  # VLP-16 packet period: 24 firings x 55.296 us, rounded
BLOCK_STEP = 40                   # 0.4 deg per block (two firings of 0.2 deg at 600 rpm)
PACKETS_PER_REV = 75              # 36000 / (12 x 40)


def vlp16_packet(azimuths, counts, refl, stamp_us, flag=0xEEFF):
    out = b''
    for b in range(12):
        out += struct.pack('<HH', flag, azimuths[b])
        for k in range(32):
            out += struct.pack('<HB', counts[b][k], refl[b][k])
    return out + struct.pack('<IBB', stamp_us % 3600000000, 0x37, 0x22)


def rev_counts(rev, p):
    """Distance counts (2 mm) and intensities of packet p of revolution rev; slot 5 of block 0 no return."""
    counts = [[500 + (rev * 131 + p * 7 + b * 3 + k * 11) % 3000 for k in range(32)] for b in range(12)]
    counts[0][5] = 0
    refl = [[(rev + p + b * 5 + k) % 256 for k in range(32)] for b in range(12)]
    return counts, refl


def revolution(rev, start_us, packets=range(PACKETS_PER_REV)):
    """The packets of one revolution (azimuth 0 .. 359.6 deg) and the expected points of each:
    (x, y, z, intensity, ring, time), in packet, block, slot order, no-return slots left out."""
    datagrams, expected = [], []
    for p in packets:
        az = [(p * 12 + b) * BLOCK_STEP for b in range(12)]
        counts, refl = rev_counts(rev, p)
        datagrams.append(vlp16_packet(az, counts, refl, start_us + p * PACKET_US))
        for b in range(12):
            for k in range(32):
                if counts[b][k] == 0:
                    continue
                laser, firing = k % 16, k // 16
                # velodyne interpolation of the second firing and per laser (spec 3.1, VLP-16)
                a = math.radians((az[b] + BLOCK_STEP * (laser * 2.304 + firing * 55.296) / 110.592) / 100.0)
                w = math.radians(VLP16_ELEV[laser])
                r = counts[b][k] * 0.002
                t = (p - packets[0]) * PACKET_US * 1e-6 + b * 110.592e-6 + firing * 55.296e-6 + laser * 2.304e-6
                expected.append((r * math.cos(w) * math.cos(a), -r * math.cos(w) * math.sin(a), r * math.sin(w),
                                 refl[b][k], laser // 2 + 8 * (laser % 2), t))
    return datagrams, expected


def lidar2d_datagram(ranges_mm, intensities):
    """'#Lidar2D$' (9 bytes), int32 data_length, 3 float32 aux, 360 x (uint16 mm, uint8), '\\r\\n'."""
    body = b''.join(struct.pack('<HB', r, i) for r, i in zip(ranges_mm, intensities))
    return b'#Lidar2D$' + struct.pack('<i3f', 1080, 1.0, 2.0, 3.0) + body + b'\r\n'


def cloud_points(msg):
    rec = np.frombuffer(bytes(msg.data), dtype=np.dtype({
        'names': ['x', 'y', 'z', 'intensity', 'ring', 'time'],
        'formats': ['<f4', '<f4', '<f4', '<f4', '<u2', '<f4'],
        'offsets': [0, 4, 8, 12, 16, 18], 'itemsize': 22}))
    return rec


def jpeg_of(width, height, seed):
    rgb = (np.random.RandomState(seed).rand(height, width, 3) * 255).astype(np.uint8)
    buf = io.BytesIO()
    PILImage.fromarray(rgb).save(buf, 'JPEG', quality=95)
    return buf.getvalue()


def publisher_knows(node, topic):
    """Whether ``node`` has an outbound connection on ``topic`` (its bus info).  A rospy subscriber counts
    its connection before the TCP handshake, so a message published just then would be lost."""
    try:
        uri = rosgraph.Master('/test_sensor_bridge').lookupNode(node)
        code, _, info = xmlrpc.client.ServerProxy(uri).getBusInfo('/test_sensor_bridge')
    except Exception:  # noqa: BLE001 - not up yet
        return False
    return code == 1 and any(c[2] == 'o' and c[4] == topic for c in info)


MOUNT = {'camera': (1.5, 0.2, 1.3, 0.0, 10.0, 5.0), 'lidar': (0.5, 0.0, 1.9, 0.0, 0.0, 90.0),
         'lidar2d': (2.0, -0.3, 0.4, 180.0, 0.0, 0.0)}


class SensorBridgeTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.cam_port, cls.lidar_port, cls.l2d_port = free_ports(3)
        args = ['camera_port:=%d' % cls.cam_port, 'lidar_port:=%d' % cls.lidar_port,
                'lidar2d_port:=%d' % cls.l2d_port, 'publish_raw:=true', 'fault_injection:=true', 'output:=log']
        for sensor, pose in MOUNT.items():
            args += [f'{sensor}_{axis}:={v!r}' for axis, v in zip(('x', 'y', 'z', 'roll', 'pitch', 'yaw'), pose)]
        uuid = roslaunch.rlutil.get_or_generate_uuid(None, False)
        roslaunch.configure_logging(uuid)
        cls.launch = roslaunch.parent.ROSLaunchParent(uuid, [(LAUNCH, args)])
        cls.launch.start()
        cls.tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        cls.tx.bind(('127.0.0.1', 0))
        cls.images = Collector('/image_jpeg/compressed', CompressedImage)
        cls.infos = Collector('/image_jpeg/camera_info', CameraInfo)
        cls.raw = Collector('/image_raw', Image)
        cls.boxes = Collector('/camera/boxes', MarkerArray)
        cls.clouds = Collector('/velodyne_points', PointCloud2)
        cls.scans = Collector('/scan', LaserScan)
        cls.diag_lock = threading.Lock()
        cls.diag = {}
        rospy.Subscriber('/diagnostics', DiagnosticArray, cls.on_diag, queue_size=50)
        cls.tf = tf2_ros.Buffer()
        cls.tf_listener = tf2_ros.TransformListener(cls.tf)
        for c in (cls.images, cls.infos, cls.raw, cls.boxes, cls.clouds, cls.scans):
            assert wait_for(c.connected, 30.0), f'no publisher of {c.sub.name}'
        for node, topic in (('/camera_bridge', '/image_jpeg/compressed'), ('/camera_bridge', '/image_jpeg/camera_info'),
                            ('/camera_bridge', '/image_raw'), ('/camera_bridge', '/camera/boxes'),
                            ('/lidar_bridge', '/velodyne_points'), ('/lidar2d_bridge', '/scan')):
            assert wait_for(lambda: publisher_knows(node, topic), 30.0), f'{node} never accepted {topic}'
        cls.rev = 0

    @classmethod
    def tearDownClass(cls):
        cls.launch.shutdown()

    @classmethod
    def on_diag(cls, m):
        with cls.diag_lock:
            for s in m.status:
                cls.diag[s.name] = (s.level, s.message, {kv.key: kv.value for kv in s.values})

    def entry(self, prefix):
        with self.diag_lock:
            for name, e in self.diag.items():
                if name.startswith(prefix):
                    return e
        return None

    def value(self, prefix, key):
        e = self.entry(prefix)
        return None if e is None else e[2].get(key)

    def send(self, port, datagrams, gap=0.0):
        for d in datagrams:
            self.tx.sendto(d, ('127.0.0.1', port))
            if gap:
                time.sleep(gap)

    # ------------------------------------------------------------------ camera

    def send_frame(self, jpeg, sec, nsec, padded=True):
        self.send(self.cam_port, mor_datagrams(jpeg, sec, nsec, padded), gap=0.002)

    def test_camera_image_bytes_stamp_and_info(self):
        for padded, (w, h), seed in ((True, (800, 600), 1), (False, (320, 240), 2)):
            jpeg = jpeg_of(w, h, seed)
            n, ni, nr = self.images.count(), self.infos.count(), self.raw.count()
            sec, nsec = 1700000000 + seed, 123456789 + seed
            self.send_frame(jpeg, sec, nsec, padded)
            self.assertTrue(wait_for(lambda: self.images.count() > n and self.infos.count() > ni, T),
                            f'no image for a {len(mor_datagrams(jpeg, 0, 0))}-chunk frame (padded={padded})')
            img = self.images.since(n)[0]
            self.assertEqual(bytes(img.data), jpeg)
            self.assertEqual(img.format, 'jpeg')
            self.assertEqual((img.header.stamp.secs, img.header.stamp.nsecs), (sec, nsec))
            self.assertEqual(img.header.frame_id, 'camera_optical')
            info = self.infos.since(ni)[0]
            self.assertEqual((info.width, info.height), (w, h))
            self.assertEqual(info.header.stamp, img.header.stamp)
            self.assertEqual(info.header.frame_id, 'camera_optical')
            f = w / (2 * math.tan(math.radians(90.0) / 2))            # default ~fov_deg 90
            self.assertAlmostEqual(info.K[0], f)
            self.assertAlmostEqual(info.K[4], f)
            # principal point as in MORAI's saved settings: 320 / 240 for its 640 x 480 camera
            self.assertAlmostEqual(info.K[2], w / 2.0)
            self.assertAlmostEqual(info.K[5], h / 2.0)
            self.assertEqual(list(info.D), [0.0] * 5)
            # publish_raw: rgb8 of the same frame, decoded in the node's second worker
            self.assertTrue(wait_for(lambda: any(m.header.stamp == img.header.stamp for m in self.raw.since(nr)), T),
                            'no /image_raw for the frame')
            raw = [m for m in self.raw.since(nr) if m.header.stamp == img.header.stamp][0]
            ref = PILImage.open(io.BytesIO(jpeg)).convert('RGB')
            self.assertEqual((raw.width, raw.height, raw.encoding, raw.step), (w, h, 'rgb8', 3 * w))
            self.assertEqual(bytes(raw.data), ref.tobytes())

    def test_camera_malformed_and_lost_chunks_are_counted_then_frames_flow(self):
        name = 'camera_bridge: Camera'
        self.assertTrue(wait_for(lambda: self.entry(name) is not None, T), 'no camera diagnostics')
        mal0 = int(self.value(name, 'malformed'))
        jpeg = jpeg_of(640, 480, 3)
        chunks = mor_datagrams(jpeg, 1700000100, 0)
        self.assertGreater(len(chunks), 2)
        # a chunk whose size field does not fit the datagram; a frame with its chunk 1 lost
        bad = b'MOR' + struct.pack('<iiii', 1700000100, 0, 0, 70000) + bytes(100) + b'EI'
        n = self.images.count()
        self.send(self.cam_port, [bad] + [chunks[0]] + chunks[2:], gap=0.002)
        self.assertTrue(wait_for(lambda: int(self.value(name, 'malformed')) > mal0 and
                                 int(self.value(name, 'dropped missing_chunk') or 0) >= 1, T),
                        f'malformed chunk / lost chunk not counted: {self.entry(name)!r}')
        level, message, values = self.entry(name)
        self.assertGreaterEqual(int(values['malformed size']), 1)
        self.assertEqual(level, DiagnosticStatus.WARN, message)
        self.assertEqual(self.images.count(), n, 'a broken frame came out')
        self.send_frame(jpeg, 1700000101, 5)
        self.assertTrue(wait_for(lambda: any(bytes(m.data) == jpeg for m in self.images.since(n)), T),
                        'the next good frame did not come out')

    def test_camera_boxes(self):
        corners = [(-1.0 + 2.0 * (i & 1), -0.8 + 1.6 * ((i >> 1) & 1), 12.0 + 4.5 * ((i >> 2) & 1)) for i in range(8)]
        objects = [{'corners': corners, 'box2d': (100.5, 50.0, 300.0, 220.25), 'codes': (1, 7, 3)},
                   {'corners': [(c[0] + 5, c[1], c[2] + 10) for c in corners], 'box2d': (400, 60, 450, 90),
                    'codes': (2, 0, 1)}]
        n = self.boxes.count()
        self.send(self.cam_port, [box_datagram(objects, 1700000200, 42)])
        self.assertTrue(wait_for(lambda: self.boxes.count() > n, T), 'no /camera/boxes')
        arr = self.boxes.since(n)[0]
        self.assertEqual(arr.markers[0].action, Marker.DELETEALL)
        lines = [m for m in arr.markers if m.type == Marker.LINE_LIST]
        labels = [m for m in arr.markers if m.type == Marker.TEXT_VIEW_FACING]
        self.assertEqual(len(lines), 2)
        self.assertEqual(sorted(m.text for m in labels), ['1/7/3', '2/0/1'])
        first = [m for m in lines if m.id == 0][0]
        self.assertEqual(first.header.frame_id, 'camera_optical')
        self.assertEqual((first.header.stamp.secs, first.header.stamp.nsecs), (1700000200, 42))
        pts = [(p.x, p.y, p.z) for p in first.points]
        self.assertEqual(len(pts), 24)
        for p in pts:          # every line end is one of the 8 corners (float32 on the wire)
            self.assertTrue(any(all(abs(a - b) < 1e-5 for a, b in zip(p, c)) for c in corners), p)
        self.assertEqual(len({tuple(round(v, 4) for v in p) for p in pts}), 8)
        fields = dict(kv.split('=') for kv in first.text.split())
        self.assertEqual((fields['group'], fields['class'], fields['subclass']), ('1', '7', '3'))
        self.assertAlmostEqual(float(fields['xmin']), 100.5)
        self.assertAlmostEqual(float(fields['ymax']), 220.25)
        # a box datagram whose size field is not a multiple of 115 bytes: counted, next one comes out
        name = 'camera_bridge: Camera'
        bad = b'BOX' + struct.pack('<iiii', 1700000201, 0, 0, 100) + bytes(200) + b'EO'
        n = self.boxes.count()
        self.send(self.cam_port, [bad, box_datagram(objects[:1], 1700000202, 0)])
        self.assertTrue(wait_for(lambda: int(self.value(name, 'box errors size') or 0) >= 1, T), 'bad BOX not counted')
        self.assertTrue(wait_for(lambda: self.boxes.count() > n, T))
        self.assertEqual(self.boxes.since(n)[0].markers[1].header.stamp.secs, 1700000202)

    def test_camera_boxes_count_form_and_unsigned_stamp(self):
        corners = [(-1.0 + 2.0 * (i & 1), -0.8 + 1.6 * ((i >> 1) & 1), 12.0 + 4.5 * ((i >> 2) & 1)) for i in range(8)]
        objects = [{'corners': corners, 'box2d': (1, 2, 3, 4), 'codes': (3, 1, 0)},
                   {'corners': [(c[0] - 4, c[1], c[2]) for c in corners], 'box2d': (5, 6, 7, 8), 'codes': (3, 2, 0)},
                   {'corners': [(c[0] + 4, c[1], c[2]) for c in corners], 'box2d': (9, 9, 19, 19), 'codes': (3, 3, 0)}]
        name = 'camera_bridge: Camera'
        n = self.boxes.count()
        sec = 2 ** 31 + 5              # top bit set: negative as int32, a time as uint32
        self.send(self.cam_port, [box_count_datagram(objects, sec, 7, seq=9)])
        self.assertTrue(wait_for(lambda: self.boxes.count() > n, T), 'no /camera/boxes for a count-form datagram')
        arr = self.boxes.since(n)[0]
        # the sequence field (9) is not a datagram index: the set replaces the previous one
        self.assertEqual(arr.markers[0].action, Marker.DELETEALL)
        self.assertEqual(sorted(m.id for m in arr.markers if m.type == Marker.LINE_LIST), [0, 1, 2])
        self.assertEqual(sorted(m.text for m in arr.markers if m.type == Marker.TEXT_VIEW_FACING),
                         ['3/1/0', '3/2/0', '3/3/0'])
        self.assertEqual((arr.markers[1].header.stamp.secs, arr.markers[1].header.stamp.nsecs), (sec, 7))
        self.assertTrue(wait_for(lambda: (self.value(name, 'box size read as bytes / count') or '0 / 0')
                                 .split(' / ')[1] != '0', T), 'count reading not shown on /diagnostics')

    # ------------------------------------------------------------------ 3D LiDAR

    def send_revolutions(self, count, start_us, paced=False):
        """``count`` revolutions after a leading one, 10 per second.  As MORAI 25.S4 sends them (default):
        each revolution's 75 packets back to back, one burst per capture.  ``paced``: packet by packet at
        about the sensor's packet rate, and then the first packet of the next revolution, which shows the
        last one is over.  Returns the expected points and first-packet device time of each of the
        ``count`` revolutions; their clouds are told apart by stamp (the device time, ~stamp_source sim)
        from the leading revolution's, which the node may drop (the first one after start-up, or one
        during which it switches between paced and burst handling, starts unseen)."""
        cls = self.__class__
        rev0 = cls.rev
        cls.rev += count + 2
        out = []
        for r in range(count + 1):
            t0 = start_us + r * PACKETS_PER_REV * PACKET_US
            packets, expected = revolution(rev0 + r, t0)
            if r:
                out.append((expected, t0))
            if paced:
                self.send(self.lidar_port, packets, gap=PACKET_US * 1e-6)
            else:
                self.send(self.lidar_port, packets)
                time.sleep(0.1)
        if paced:
            close, _ = revolution(rev0 + count + 1, start_us + (count + 1) * PACKETS_PER_REV * PACKET_US, range(1))
            self.send(self.lidar_port, close)
        return out

    def clouds_of(self, n, revs):
        """The clouds of ``revs`` (sent after ``n`` clouds had arrived): exactly one per revolution, found by
        stamp; besides them at most the leading revolution's."""
        keys = [(t0 // 1000000, (t0 % 1000000) * 1000) for _, t0 in revs]

        def found():
            return [m for m in self.clouds.since(n) if (m.header.stamp.secs, m.header.stamp.nsecs) in keys]
        self.assertTrue(wait_for(lambda: len(found()) >= len(revs), T),
                        f'expected {len(revs)} clouds, got {len(found())}')
        time.sleep(0.3)
        got = found()
        self.assertEqual([(m.header.stamp.secs, m.header.stamp.nsecs) for m in got], keys,
                         'one cloud per revolution, in order')
        self.assertLessEqual(len(self.clouds.since(n)), len(revs) + 1, 'clouds of no revolution sent')
        return got

    def check_cloud(self, msg, expected, snapshot=True):
        pts = cloud_points(msg)
        self.assertEqual(msg.header.frame_id, 'velodyne')
        self.assertEqual((msg.height, msg.width, msg.point_step), (1, len(expected), 22))
        self.assertEqual([(f.name, f.offset, f.datatype) for f in msg.fields],
                         [('x', 0, 7), ('y', 4, 7), ('z', 8, 7), ('intensity', 12, 7), ('ring', 16, 4), ('time', 18, 7)])
        exp = np.array(expected)
        got = np.stack([pts['x'], pts['y'], pts['z']], axis=1).astype(np.float64)
        self.assertLess(np.max(np.abs(got - exp[:, :3])), 2e-4, 'points off their encoded position')
        rng = np.linalg.norm(got, axis=1)
        self.assertLess(np.max(np.abs(rng - np.linalg.norm(exp[:, :3], axis=1))), 1e-4)
        elev = np.degrees(np.arcsin(got[:, 2] / rng))
        self.assertLess(np.max(np.abs(elev - np.degrees(np.arcsin(exp[:, 2] / np.linalg.norm(exp[:, :3], axis=1))))),
                        1e-3)
        self.assertTrue(np.array_equal(pts['intensity'], exp[:, 3].astype(np.float32)), 'intensity')
        self.assertTrue(np.array_equal(pts['ring'], exp[:, 4].astype(np.uint16)), 'ring')
        if snapshot:     # MORAI's bursts: one capture instant, every point at the cloud's stamp
            self.assertTrue(np.array_equal(pts['time'], np.zeros(len(pts), np.float32)), 'snapshot point times')
        else:
            self.assertLess(np.max(np.abs(pts['time'] - exp[:, 5])), 2e-6, 'point times')

    def test_lidar_one_cloud_per_burst_at_its_last_packet_every_point_where_encoded(self):
        name = 'lidar_bridge: LiDAR'
        n = self.clouds.count()
        revs = self.send_revolutions(3, int(time.time() * 1e6))
        got = self.clouds_of(n, revs)
        for msg, (expected, t0) in zip(got, revs):
            self.assertEqual(len(expected), PACKETS_PER_REV * (12 * 32 - 1))
            self.check_cloud(msg, expected)
        self.assertTrue(wait_for(lambda: self.value(name, 'sender bursty (whole revolutions at once)') == 'True', T),
                        'diagnostics do not say bursty')
        # the last burst's cloud came without any packet after it: nothing else was sent since
        before = int(self.value(name, 'revolutions cut at their last packet (predicted or burst)'))
        n = self.clouds.count()
        revs = self.send_revolutions(1, int(time.time() * 1e6))
        self.check_cloud(self.clouds_of(n, revs)[0], revs[0][0])
        self.assertTrue(wait_for(lambda: int(self.value(name, 'revolutions cut at their last packet (predicted or '
                                                        'burst)')) >= before + 1, T))
        self.assertGreaterEqual(int(self.value(name, 'clouds with snapshot point times')), 4)
        # the kernel's count of what it dropped on this socket (its buffer full), read for this very socket
        self.assertEqual(self.value(name, 'dropped by the kernel (buffer full)'), '0')
        backlog = int(self.value(name, 'largest backlog read at once [bytes]'))
        self.assertTrue(1206 <= backlog <= PACKETS_PER_REV * 1206 * 4, backlog)

    def test_lidar_paced_sender_one_cloud_per_revolution_with_point_times(self):
        name = 'lidar_bridge: LiDAR'
        n = self.clouds.count()
        revs = self.send_revolutions(2, int(time.time() * 1e6), paced=True)
        got = self.clouds_of(n, revs)
        for msg, (expected, t0) in zip(got, revs):
            self.check_cloud(msg, expected, snapshot=False)      # device times, 1.327 ms per packet
            # stamp_source sim: the first packet's device time in the nearest hour = what was encoded
            self.assertEqual((msg.header.stamp.secs, msg.header.stamp.nsecs), (t0 // 1000000, (t0 % 1000000) * 1000))
        self.assertTrue(wait_for(lambda: self.value(name, 'sender bursty (whole revolutions at once)') == 'False', T),
                        'diagnostics still say bursty')          # (published once a second)
        # paced: decoded piece by piece as the packets came (~decode_chunk)
        self.assertTrue(wait_for(lambda: int(self.value(name, 'revolutions decoded piece by piece') or 0) >= 2, T))

    def test_lidar_implausible_device_time_falls_back_to_receive_time(self):
        name = 'lidar_bridge: LiDAR'
        n = self.clouds.count()
        far = int(self.value(name, 'device time too far from receive time') or 0)
        start = int(time.time() * 1e6) + 1800 * 1000000        # half an hour off
        t_send = time.time()
        revs = self.send_revolutions(1, start)
        self.assertTrue(wait_for(lambda: self.clouds.count() > n, T))
        time.sleep(0.5)
        got = self.clouds.since(n)
        self.assertIn(len(got), (1, 2), 'the checked revolution, and maybe the leading one')
        self.check_cloud(got[-1], revs[0][0])             # the points tell which revolution it is
        stamp = got[-1].header.stamp.to_sec()
        self.assertLess(abs(stamp - t_send), 1.0, f'stamp {stamp:.3f} is not the receive time {t_send:.3f}')
        self.assertTrue(wait_for(lambda: int(self.value(name, 'device time too far from receive time')) > far, T))
        level, message, _ = self.entry(name)
        self.assertEqual(level, DiagnosticStatus.WARN)
        self.assertIn('receive time used', message)

    def test_lidar_bad_datagrams_are_counted_then_clouds_flow(self):
        name = 'lidar_bridge: LiDAR'
        self.assertTrue(wait_for(lambda: self.entry(name) is not None, T), 'no LiDAR diagnostics')
        az = [b * BLOCK_STEP for b in range(12)]
        counts, refl = rev_counts(0, 0)
        bad_flag = vlp16_packet(az, counts, refl, 0, flag=0x1234)
        short = bytes(100)
        self.send(self.lidar_port, [bad_flag, short])
        self.assertTrue(wait_for(lambda: int(self.value(name, 'bad flag') or 0) >= 1 and
                                 int(self.value(name, 'bad length') or 0) >= 1, T),
                        f'bad datagrams not counted: {self.entry(name)!r}')
        self.assertEqual(self.entry(name)[0], DiagnosticStatus.WARN)
        n = self.clouds.count()
        revs = self.send_revolutions(1, int(time.time() * 1e6))
        self.check_cloud(self.clouds_of(n, revs)[0], revs[0][0])

    # ------------------------------------------------------------------ 2D LiDAR

    def test_scan(self):
        wire = [1000 + 10 * i for i in range(360)]
        inten = [(3 * i) % 256 for i in range(360)]
        n = self.scans.count()
        t_send = time.time()
        self.send(self.l2d_port, [lidar2d_datagram(wire, inten)])
        self.assertTrue(wait_for(lambda: self.scans.count() > n, T), 'no /scan')
        m = self.scans.since(n)[0]
        self.assertEqual(m.header.frame_id, 'laser')
        self.assertLess(abs(m.header.stamp.to_sec() - t_send), 1.0)
        self.assertEqual(len(m.ranges), 360)
        self.assertAlmostEqual(m.angle_min, -math.pi, places=6)
        self.assertAlmostEqual(m.angle_increment, math.radians(1.0), places=6)
        for j in range(360):     # defaults: sample 0 straight ahead, counter-clockwise
            self.assertAlmostEqual(m.ranges[j], wire[(j + 180) % 360] / 1000.0, places=5)
            self.assertEqual(m.intensities[j], inten[(j + 180) % 360])
        name = 'lidar2d_bridge: LiDAR 2D'
        self.assertTrue(wait_for(lambda: self.value(name, 'header seen') == repr(b'#Lidar2D$'), T))
        self.assertEqual(self.value(name, 'data_length seen'), '1080')
        # a datagram of the wrong length: counted, and the next scan still comes out
        n = self.scans.count()
        self.send(self.l2d_port, [bytes(500), lidar2d_datagram([2000] * 360, [9] * 360)])
        self.assertTrue(wait_for(lambda: int(self.value(name, 'malformed length') or 0) >= 1, T), 'not counted')
        self.assertTrue(wait_for(lambda: self.scans.count() > n, T))
        self.assertAlmostEqual(self.scans.since(n)[0].ranges[0], 2.0, places=5)
        self.assertEqual(self.scans.count(), n + 1, 'the malformed datagram became a scan')

    # ------------------------------------------------------------------ every node

    def test_datagrams_from_other_hosts_are_dropped_and_counted(self):
        other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        other.bind(('127.0.0.2', 0))          # another loopback address: not ~sim_ip
        try:
            n_scan, n_img = self.scans.count(), self.images.count()
            other.sendto(lidar2d_datagram([1500] * 360, [1] * 360), ('127.0.0.1', self.l2d_port))
            for d in mor_datagrams(jpeg_of(64, 48, 9), 1, 2):
                other.sendto(d, ('127.0.0.1', self.cam_port))
            other.sendto(bytes(1206), ('127.0.0.1', self.lidar_port))
            for name in ('lidar2d_bridge: LiDAR 2D', 'camera_bridge: Camera', 'lidar_bridge: LiDAR'):
                self.assertTrue(wait_for(lambda: int(self.value(name, 'from unexpected hosts') or 0) >= 1, T),
                                f'{name}: foreign datagram not counted')
                self.assertTrue(self.value(name, 'last unexpected sender').startswith('127.0.0.2:'))
            self.assertEqual((self.scans.count(), self.images.count()), (n_scan, n_img))
        finally:
            other.close()

    def test_static_transforms(self):
        for sensor, frame in (('camera', 'camera'), ('lidar', 'velodyne'), ('lidar2d', 'laser')):
            t = self.tf.lookup_transform('base_link', frame, rospy.Time(0), rospy.Duration(T))
            x, y, z, roll, pitch, yaw = MOUNT[sensor]
            v, q = t.transform.translation, t.transform.rotation
            self.assertEqual((round(v.x, 9), round(v.y, 9), round(v.z, 9)), (x, y, z))
            # yaw is the heading of the sensor's x axis; pitch + tilts it down (REP-103)
            fwd = (1 - 2 * (q.y * q.y + q.z * q.z), 2 * (q.x * q.y + q.w * q.z), 2 * (q.x * q.z - q.w * q.y))
            self.assertAlmostEqual(math.degrees(math.atan2(fwd[1], fwd[0])), yaw, places=6)
            self.assertAlmostEqual(math.degrees(-math.asin(fwd[2])), pitch, places=6)
        opt = self.tf.lookup_transform('camera', 'camera_optical', rospy.Time(0), rospy.Duration(T))
        q = opt.transform.rotation
        self.assertEqual([round(v, 9) for v in (q.x, q.y, q.z, q.w)], [-0.5, 0.5, -0.5, 0.5])

    def test_workers_are_supervised(self):
        for node, worker, counter in (('camera_bridge', 'camera_receiver', self.images),
                                      ('lidar2d_bridge', 'lidar2d_receiver', self.scans)):
            name = f'{node}: Workers'
            self.assertTrue(wait_for(lambda: self.value(name, f'{worker} state') == 'running', T), name)
            before = int(self.value(name, f'{worker} restarts'))
            pub = rospy.Publisher(f'/{node}/inject_fault', String, queue_size=1)
            self.assertTrue(wait_for(pub.get_num_connections, T))
            pub.publish(String(worker))
            self.assertTrue(wait_for(lambda: int(self.value(name, f'{worker} restarts')) == before + 1, T),
                            f'restart of {worker} not counted')
            self.assertEqual(self.entry(name)[0], DiagnosticStatus.ERROR)
            n = counter.count()
            if counter is self.images:
                self.send_frame(jpeg_of(64, 48, 5), 1700000300, 0)
            else:
                self.send(self.l2d_port, [lidar2d_datagram([1234] * 360, [0] * 360)])
            self.assertTrue(wait_for(lambda: counter.count() > n, T), f'{node}: no output after the restart')


if __name__ == '__main__':
    rospy.init_node('test_sensor_bridge')
    rostest.rosrun('morai_msgs', 'test_sensor_bridge', SensorBridgeTest)
