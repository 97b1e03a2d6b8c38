#!/usr/bin/env python3
"""rostest: `demo.launch sensors:=true` publishes every sensor topic, with content that fits the
emulated scene (an image of the configured size, clouds with points on the ground, a scan), and GPS and
IMU from the UDP bridge, /gps one message per GPS sample (the emulator sends a GGA and an RMC per sample).

With the private parameter ~native (demo_native.test: `demo.launch sensors:=true native_names:=true`)
the topics are those of MORAI's native ROS mode, /lidar3D, /lidar2D, /gps, /imu,
/image_jpeg/compressed, and the ROS driver names (/velodyne_points, /scan) have no publisher."""
import io
import threading
import time
import unittest

import numpy as np
import rosgraph
import rospy
import rostest
from diagnostic_msgs.msg import DiagnosticArray
from morai_msgs.msg import GPSMessage
from PIL import Image
from sensor_msgs.msg import CameraInfo, CompressedImage, Imu, LaserScan, PointCloud2

WINDOW = 8.0
# the emulator's rates (docs/emulator.md): camera, LiDAR revolutions and 2D scans 10 Hz, GPS 10 samples/s, IMU 50 Hz
CAMERA = {'/image_jpeg/compressed': (CompressedImage, 10.0), '/image_jpeg/camera_info': (CameraInfo, 10.0)}
UDP = {'/gps': (GPSMessage, 10.0), '/imu': (Imu, 50.0)}
NAMES = {False: {'cloud': '/velodyne_points', 'scan': '/scan'},
         True: {'cloud': '/lidar3D', 'scan': '/lidar2D'}}


class DemoSensorsTest(unittest.TestCase):

    def setUp(self):
        self.native = bool(rospy.get_param('~native', False))
        self.names = NAMES[self.native]
        self.topics = dict(CAMERA, **UDP)
        self.topics[self.names['cloud']] = (PointCloud2, 10.0)
        self.topics[self.names['scan']] = (LaserScan, 10.0)

    def gps_counts(self, timeout=20.0):
        """(received, published) of udp_bridge's 'UDP gps' diagnostics entry: datagrams and messages."""
        got = []

        def cb(m):
            for s in m.status:
                values = {kv.key: kv.value for kv in s.values}
                if 'UDP gps (' in s.name and 'received' in values:     # not diagnostic_updater's 'starting up'
                    got.append((int(values['received']), int(values['published'])))
        sub = rospy.Subscriber('/diagnostics', DiagnosticArray, cb, queue_size=20)
        end = time.monotonic() + timeout
        while not got and time.monotonic() < end:
            time.sleep(0.1)
        sub.unregister()
        return got[-1] if got else None

    def test_sensor_topics_at_their_rates(self):
        lock = threading.Lock()
        got = {t: [] for t in self.topics}

        def cb(topic):
            def f(m):
                with lock:
                    got[topic].append((time.monotonic(), m))
            return f
        for t, (cls, _) in self.topics.items():
            rospy.Subscriber(t, cls, cb(t), queue_size=100)
        end = time.monotonic() + 40.0
        while time.monotonic() < end and not all(got.values()):
            time.sleep(0.1)
        self.assertTrue(all(got.values()), 'silent topics: %s' % [t for t, v in got.items() if not v])
        with lock:
            for v in got.values():
                del v[:]
        time.sleep(WINDOW)
        with lock:
            rates = {t: len(v) / WINDOW for t, v in got.items()}
            last = {t: v[-1][1] for t, v in got.items() if v}
        print('sensor topic rates [Hz] (%s names): %s' % ('native' if self.native else 'ROS driver',
                                                          ', '.join('%s %.1f' % kv for kv in sorted(rates.items()))))
        for t, (_, nominal) in self.topics.items():
            # a liveness check with a wide margin (this is not a benchmark): at least a third of the rate
            self.assertGreater(rates[t], nominal / 3.0, f'{t} at {rates[t]:.1f} Hz (nominal {nominal:.0f})')
        img = Image.open(io.BytesIO(bytes(last['/image_jpeg/compressed'].data)))
        info = last['/image_jpeg/camera_info']
        self.assertEqual(img.size, (info.width, info.height))
        self.assertEqual(img.size, (640, 480))   # the emulator: MORAI's default camera
        cloud = last[self.names['cloud']]
        self.assertGreater(cloud.width * cloud.height, 1000)
        names = [f.name for f in cloud.fields]
        self.assertEqual(names[:4], ['x', 'y', 'z', 'intensity'])
        xyz = np.frombuffer(bytes(cloud.data), dtype=np.float32).reshape(-1, cloud.point_step // 4) \
            if cloud.point_step % 4 == 0 else None
        if xyz is None:
            pts = np.ndarray((cloud.width * cloud.height,), dtype=np.dtype(
                {'names': ['z'], 'formats': ['<f4'], 'offsets': [8], 'itemsize': cloud.point_step}),
                buffer=bytes(cloud.data))
            z = pts['z']
        else:
            z = xyz[:, 2]
        # the sensor sits 1.9 m above the ground: most downward rays end on the ground, z ~ -1.9 in its frame
        self.assertTrue(np.any(np.abs(z + 1.9) < 0.1), 'no point on the ground plane')
        scan = last[self.names['scan']]
        self.assertEqual(len(scan.ranges), 360)
        self.assertGreater(last['/gps'].latitude, 30.0)           # K-City, from the emulated GGA

    def test_the_other_naming_has_no_publisher(self):
        """One switch, one set of names: the names of the other convention are not published."""
        other = NAMES[not self.native]
        end = time.monotonic() + 40.0
        published = set()
        while time.monotonic() < end and not {self.names['cloud'], self.names['scan']} <= published:
            published = {t for t, _ in rosgraph.Master('/test_demo_sensors').getPublishedTopics('/')}
            time.sleep(0.2)
        self.assertLessEqual({self.names['cloud'], self.names['scan'], '/gps', '/imu',
                              '/image_jpeg/compressed'}, published)
        self.assertFalse({other['cloud'], other['scan']} & published, sorted(published))

    def test_gps_is_one_message_per_sample(self):
        """The emulator sends each GPS sample as two datagrams ($GPGGA, $GPRMC); udp_bridge publishes one
        GPSMessage per sample, as native ROS mode does: its counters show twice as many datagrams received
        as messages published (a sample whose RMC is still on its way, read between the two: 2 at most)."""
        counts = None
        end = time.monotonic() + 40.0
        while time.monotonic() < end and (counts is None or counts[1] < 20):
            counts = self.gps_counts()
        self.assertIsNotNone(counts, 'no UDP gps entry on /diagnostics')
        received, published = counts
        self.assertGreaterEqual(published, 20)
        self.assertLessEqual(abs(received - 2 * published), 2, counts)


if __name__ == '__main__':
    rospy.init_node('test_demo_sensors')
    rostest.rosrun('morai_msgs', 'test_demo_sensors', DemoSensorsTest)
