#!/usr/bin/env python3
"""rostest: the real rviz, under Xvfb (Mesa software OpenGL), with rviz/morai.rviz on the live demo
with its sensors (emulator + bridge + sensor bridge + driver + markers).  The screenshot must not be
blank and must show the colours of the ego, the NPC vehicles, the pedestrian, the obstacles and lit
traffic light heads, the LiDAR cloud's points in the 3D view, and the camera image (its sky) in the
camera panel.

The screenshot is saved (also on failure) to $MORAI_SCREENSHOT, default
$ROS_HOME/morai_rviz_screenshot.png; tools/run_tests.py sets .ws/test_results/rviz_screenshot.png.
"""
import os
import shutil
import subprocess
import sys
import time
import unittest

import rospkg
import rospy
import rostest
import yaml
from sensor_msgs.msg import CompressedImage, Image as ImageMsg, PointCloud2
from visualization_msgs.msg import Marker, MarkerArray

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import screenshot  # noqa: E402  (test/ros/screenshot.py)
from morai_bridge.emu.sensors.camera import SKY  # noqa: E402
from morai_bridge.ros.marker_shapes import COLORS  # noqa: E402

CONFIG = os.path.join(rospkg.RosPack().get_path('morai_msgs'), 'rviz', 'morai.rviz')


def display_color(cls):
    """The flat colour (r, g, b) of the config's display of that class."""
    with open(CONFIG) as f:
        displays = yaml.safe_load(f)['Visualization Manager']['Displays']
    d = [d for d in displays if d['Class'] == cls][0]
    assert d['Color Transformer'] == 'FlatColor', d
    return tuple(int(v) for v in d['Color'].split(';'))


EXPECTED = {name: screenshot.to_rgb8(COLORS[name])
                for name in ('ego', 'npc', 'pedestrian', 'obstacle', 'red', 'yellow', 'green')}
EXPECTED['lidar points'] = display_color('rviz/PointCloud2')
# Boxes seen from above at the view's 6.5 px/m: ego 4.6 x 1.9 m (~370 px), three NPCs
# (~1100 px), the pedestrian 0.5 x 0.5 m (~10 px), obstacles 0.4 x 0.4 and 1.2 x 0.8 m (~45 px),
# traffic light heads 1 m (~30 px each, at least one lit per light).  The VLP-16 cloud: 2-pixel
# points of its rings on the ground and its hits on the objects around the ego.
MINIMUM = {'ego': 150, 'npc': 300, 'pedestrian': 3, 'obstacle': 12, ('red', 'yellow', 'green'): 20,
           'lidar points': 300}
# The camera panel (left dock) shows /image_raw scaled into it: the emulator's sky is the upper part
# of the picture (the camera looks level).  A panel with no image or in error has none of it.
OUTSIDE = {'camera sky': SKY}
OUTSIDE_MINIMUM = {'camera sky': 3000}
BOXES = ('ego', 'npc', 'pedestrian', 'obstacle')


def output_path():
    path = os.environ.get('MORAI_SCREENSHOT') or os.path.join(rospkg.get_ros_home(), 'morai_rviz_screenshot.png')
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return path


class RvizScreenshotTest(unittest.TestCase):

    def setUp(self):
        self.x = self.rviz = None

    def tearDown(self):
        if self.rviz is not None and self.rviz.poll() is None:
            self.rviz.terminate()
            try:
                self.rviz.wait(10)
            except subprocess.TimeoutExpired:
                self.rviz.kill()
                self.rviz.wait()
        if self.x is not None:
            self.x.close()

    def wait_for_scene(self, timeout=30.0):
        """Until /morai/markers holds the ego and the demo's six objects."""
        end = time.monotonic() + timeout
        kinds = {}
        while time.monotonic() < end:
            arr = rospy.wait_for_message('/morai/markers', MarkerArray, timeout=10.0)
            kinds = {}
            for m in arr.markers:
                if m.action == Marker.ADD and m.ns in BOXES:
                    kinds[m.ns] = kinds.get(m.ns, 0) + 1
            if kinds == {'ego': 1, 'npc': 3, 'pedestrian': 1, 'obstacle': 2}:
                return
        self.fail(f'the markers never showed the demo scene: {kinds!r}')

    def test_rviz_shows_the_demo(self):
        for exe in ('rviz', 'Xvfb'):
            self.assertIsNotNone(shutil.which(exe), f'{exe} is not installed (tools/deb-packages.txt)')
        self.wait_for_scene()
        for topic, kind in (('/velodyne_points', PointCloud2), ('/image_jpeg/compressed', CompressedImage),
                            ('/image_raw', ImageMsg)):
            rospy.wait_for_message(topic, kind, timeout=30.0)
        self.x = screenshot.HeadlessX(1280, 800)
        config = CONFIG
        env = dict(os.environ, DISPLAY=self.x.display, LIBGL_ALWAYS_SOFTWARE='1')
        log_path = output_path()[:-4] + '.rviz.log'
        log = open(log_path, 'w')
        t0 = time.monotonic()
        self.rviz = subprocess.Popen(['rviz', '-d', config], env=env, stdout=log, stderr=subprocess.STDOUT)
        problems, counts, img = ['no screenshot taken'], {}, None
        while time.monotonic() - t0 < 90.0:
            time.sleep(2.0)
            if self.rviz.poll() is not None:
                break
            img = self.x.screenshot()
            counts, area, problems = screenshot.analyse(img, EXPECTED, MINIMUM, OUTSIDE, OUTSIDE_MINIMUM)
            if not problems:
                # one more frame: the view is complete, keep a settled picture
                time.sleep(2.0)
                img = self.x.screenshot()
                counts, area, problems = screenshot.analyse(img, EXPECTED, MINIMUM, OUTSIDE, OUTSIDE_MINIMUM)
                if not problems:
                    break
        log.close()
        if img is not None:
            from PIL import Image
            Image.fromarray(img).save(output_path())
            print('screenshot: %s (%.1f s after rviz started); colour pixels: %s' % (
                output_path(), time.monotonic() - t0, counts))
        self.assertIsNone(self.rviz.poll(), f'rviz exited with {self.rviz.poll()} (log: {log_path})')
        self.assertEqual(problems, [], f"screenshot {output_path()}: {'; '.join(problems)}")

    def test_the_users_snapshot_tool(self):
        """docs/day_one.md's headless one-liner: tools/rviz_snapshot.py writes a PNG of rviz/morai.rviz
        showing the demo (its 3D view present, the picture not blank) and exits 0."""
        self.wait_for_scene()
        out = output_path()[:-4] + '.tool.png'
        if os.path.exists(out):
            os.unlink(out)
        p = subprocess.run([sys.executable, os.path.join(rospkg.RosPack().get_path('morai_msgs'), 'tools', 'rviz_snapshot.py'), out,
                            '--after', '20', '--size', '1024x700'], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120)
        text = p.stdout.decode(errors='replace')
        print(text)
        self.assertEqual(p.returncode, 0, text)
        from PIL import Image
        import numpy as np
        img = np.asarray(Image.open(out).convert('RGB'))
        self.assertEqual(img.shape, (700, 1024, 3))
        self.assertIsNotNone(screenshot.render_area(img), f'no 3D view in {out}')
        self.assertIn(f'rviz_snapshot: {out} (1024x700', text)


if __name__ == '__main__':
    rospy.init_node('test_rviz_screenshot')
    rostest.rosrun('morai_msgs', 'test_rviz_screenshot', RvizScreenshotTest)
