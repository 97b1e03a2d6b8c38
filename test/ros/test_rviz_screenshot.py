#!/usr/bin/env python3
"""rostest: the documented headless view (tools/rviz_snapshot.py --demo sensors:=true: the sensor demo,
the real rviz under Xvfb with Mesa software OpenGL and rviz/morai.rviz).  The screenshot must not be
blank, must show the colours of the ego, the NPC vehicles, the pedestrian, the obstacles and lit
traffic light heads, the LiDAR cloud's points in the 3D view, and the camera image (its sky) in the
camera panel, and no display may be in error.

The screenshot is saved (also on failure) to $MORAI_SCREENSHOT, default
$ROS_HOME/morai_rviz_screenshot.png; tools/run_tests.py sets .ws/test_results/rviz_screenshot.png.
"""
import os
import shutil
import subprocess
import sys
import unittest

import rospkg
import rospy
import rostest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import screenshot  # noqa: E402  (test/ros/screenshot.py)
from morai_bridge.emu.sensors.camera import SKY  # noqa: E402
from morai_bridge.ros.markers.shapes import COLORS  # noqa: E402

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
EXPECTED['scan points'] = display_color('rviz/LaserScan')
# Boxes seen from above at the view's 6.5 px/m: ego 4.6 x 1.9 m (~370 px), three NPCs
# (~1100 px), the pedestrian 0.5 x 0.5 m (~10 px), obstacles 0.4 x 0.4 and 1.2 x 0.8 m (~45 px),
# eight guardrails 10 x 0.5 m (~200 px each),
# traffic light heads 1 m (~30 px each, at least one lit per light).  The VLP-16 cloud: 2-pixel
# points of its rings on the ground and its hits on the objects around the ego.  The 2D scan: pink
# points (6 px, half of each under the box whose side it hit) of its hits within 10 m, every scan 60 to 95 of
# 360 on the guardrails (README: "pink").
MINIMUM = {'ego': 150, 'npc': 300, 'pedestrian': 3, 'obstacle': 300, ('red', 'yellow', 'green'): 20,
           'lidar points': 300, 'scan points': 50}
# The camera panel (left dock) shows /image_raw scaled into it: the emulator's sky is the upper part
# of the picture (the camera looks level).  A panel with no image or in error has none of it.
OUTSIDE = {'camera sky': SKY}
OUTSIDE_MINIMUM = {'camera sky': 3000}


def output_path():
    path = os.environ.get('MORAI_SCREENSHOT') or os.path.join(rospkg.get_ros_home(), 'morai_rviz_screenshot.png')
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return path


class RvizScreenshotTest(unittest.TestCase):

    def test_the_documented_headless_command_shows_the_sensor_demo(self):
        """`bash tools/dev.sh snapshot view.png sensors:=true` (docs/day_one.md) is tools/rviz_snapshot.py
        --demo after the build: it starts demo.launch sensors:=true, rviz on its own Xvfb, takes the picture
        and stops the demo.  The picture shows every expected colour, and no display of the Displays panel
        is in error (the tool exits 1 when one is)."""
        for exe in ('rviz', 'Xvfb'):
            self.assertIsNotNone(shutil.which(exe), f'{exe} is not installed (tools/deb-packages.txt)')
        out = output_path()
        if os.path.exists(out):
            os.unlink(out)
        tool = os.path.join(rospkg.RosPack().get_path('morai_msgs'), 'tools', 'rviz_snapshot.py')
        p = subprocess.run([sys.executable, tool, '--demo', out, 'sensors:=true', '--after', '45'],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        text = p.stdout.decode(errors='replace')
        print(text)
        self.assertTrue(os.path.exists(out), text)
        from PIL import Image
        import numpy as np
        img = np.asarray(Image.open(out).convert('RGB'))
        counts, area, problems = screenshot.analyse(img, EXPECTED, MINIMUM, OUTSIDE, OUTSIDE_MINIMUM)
        print('screenshot: %s; colour pixels: %s' % (out, counts))
        self.assertEqual(p.returncode, 0, text)
        self.assertIn('Displays panel shows no error', text)
        self.assertEqual(problems, [], f"screenshot {out}: {'; '.join(problems)}")
        self.assertIn(f'rviz_snapshot: {out} (1280x800', text)
        # the demo it started is gone again
        self.assertFalse(any(t == '/Ego_topic' for t, _ in rospy.get_published_topics()), 'the demo was not stopped')


if __name__ == '__main__':
    rospy.init_node('test_rviz_screenshot')
    rostest.rosrun('morai_msgs', 'test_rviz_screenshot', RvizScreenshotTest)
