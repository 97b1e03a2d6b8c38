#!/usr/bin/env python3
"""rostest: `demo.launch sensors:=true` publishes every sensor topic, with content that fits the
emulated scene (an image of the configured size, clouds with points on the ground, a scan)."""
import io
import threading
import time
import unittest

import numpy as np
import rospy
import rostest
from PIL import Image
from sensor_msgs.msg import CameraInfo, CompressedImage, LaserScan, PointCloud2

TOPICS = {
    '/image_jpeg/compressed': (CompressedImage, 10.0),
    '/image_jpeg/camera_info': (CameraInfo, 10.0),
    '/velodyne_points': (PointCloud2, 10.0),
    '/scan': (LaserScan, 10.0),
}
WINDOW = 8.0


class DemoSensorsTest(unittest.TestCase):

    def test_sensor_topics_at_their_rates(self):
        lock = threading.Lock()
        got = {t: [] for t in TOPICS}

        def cb(topic):
            def f(m):
                with lock:
                    got[topic].append((time.monotonic(), m))
            return f
        for t, (cls, _) in TOPICS.items():
            rospy.Subscriber(t, cls, cb(t), queue_size=50)
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
        print('sensor topic rates [Hz]: %s' % ', '.join('%s %.1f' % kv for kv in sorted(rates.items())))
        for t, (_, nominal) in TOPICS.items():
            # a liveness check with a wide margin (this is not a benchmark): at least a third of the rate
            self.assertGreater(rates[t], nominal / 3.0, f'{t} at {rates[t]:.1f} Hz (nominal {nominal:.0f})')
        img = Image.open(io.BytesIO(bytes(last['/image_jpeg/compressed'].data)))
        info = last['/image_jpeg/camera_info']
        self.assertEqual(img.size, (info.width, info.height))
        self.assertEqual(img.size, (640, 480))   # the emulator: MORAI's default camera
        cloud = last['/velodyne_points']
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
        scan = last['/scan']
        self.assertEqual(len(scan.ranges), 360)


if __name__ == '__main__':
    rospy.init_node('test_demo_sensors')
    rostest.rosrun('morai_msgs', 'test_demo_sensors', DemoSensorsTest)
