#!/usr/bin/env python3
"""rostest: recording as docs/day_one.md says loses nothing.

The sensor demo (`demo.launch sensors:=true record:=true`: emulator, bridge, sensor bridges, driver, and
launch/record.launch with the real `rosbag record`) runs for RECORD_S seconds; the bag is then read back.
rospy numbers what a publisher sends in ``header.seq`` (its own counter: one per message sent while it
has a subscriber), so for every publisher of every recorded topic the bag must hold each number from its
first message to its last: count == last - first + 1.  A gap is a message the publisher sent and the bag
lacks; its place (which topic, which node, how many) is printed.  Every expected topic must be in the bag,
starting within START_S of the first message (not "subscribed a second late"), at its rate.
"""
import collections
import glob
import os
import shutil
import sys
import tempfile
import time
import unittest

import rosbag
import roslaunch
import rospy
import rostest

HERE = os.path.dirname(os.path.realpath(__file__))
LAUNCH = os.path.join(HERE, '..', '..', 'launch')
sys.path.insert(0, HERE)

RECORD_S = 30.0
START_S = 3.0
#: topic -> the lowest rate it must reach in the bag [Hz] (the demo's rates: docs/ros_api.md)
EXPECTED = {'/Ego_topic': 40.0, '/Object_topic': 15.0, '/GetTrafficLightStatus': 5.0, '/gps': 5.0, '/imu': 40.0,
            '/gps/fix': 5.0, '/image_jpeg/compressed': 8.0, '/image_jpeg/camera_info': 8.0,
            '/velodyne_points': 8.0, '/scan': 8.0}


class RecordingTest(unittest.TestCase):

    def test_a_30_s_recording_of_the_sensor_demo_loses_nothing(self):
        out = tempfile.mkdtemp(prefix='morai_record_')
        try:
            self.record_and_check(out)
        finally:
            shutil.rmtree(out, ignore_errors=True)

    def record_and_check(self, out):
        uuid = roslaunch.rlutil.get_or_generate_uuid(None, False)
        roslaunch.configure_logging(uuid)
        launch = roslaunch.parent.ROSLaunchParent(uuid, [(os.path.join(LAUNCH, 'demo.launch'), [
            'sensors:=true', 'record:=true', 'record_prefix:=' + os.path.join(out, 'drive'), 'output:=log',
            'markers:=false'])])
        launch.start()
        try:
            end = time.monotonic() + 60.0
            while time.monotonic() < end and not glob.glob(os.path.join(out, '*.bag.active')):
                time.sleep(0.2)
            self.assertTrue(glob.glob(os.path.join(out, '*.bag.active')), 'rosbag record wrote no bag')
            time.sleep(RECORD_S)
        finally:
            launch.shutdown()
        end = time.monotonic() + 30.0
        while time.monotonic() < end and not glob.glob(os.path.join(out, '*.bag')):
            time.sleep(0.2)
        bags = glob.glob(os.path.join(out, '*.bag'))
        self.assertEqual(len(bags), 1, 'rosbag record did not close its bag: %s' % os.listdir(out))
        seqs = collections.defaultdict(list)     # (topic, publisher) -> header.seq in bag order
        first = {}
        with rosbag.Bag(bags[0]) as bag:
            for topic, msg, t, conn in bag.read_messages(return_connection_header=True):
                first.setdefault(topic, t.to_sec())
                if hasattr(msg, 'header'):
                    node = conn['callerid']            # bytes from rosbag's connection header
                    seqs[(topic, str(node, 'utf-8') if isinstance(node, bytes) else node)].append(msg.header.seq)
            start, length = bag.get_start_time(), bag.get_end_time() - bag.get_start_time()
        report, lost = [], 0
        for (topic, node), s in sorted(seqs.items()):
            sent = s[-1] - s[0] + 1
            missing = sent - len(set(s))
            lost += missing
            report.append('%-40s %-28s %6d in the bag, %6d sent (seq %d..%d), first %.2f s in, %d lost'
                          % (topic, node, len(s), sent, s[0], s[-1], first[topic] - start, missing))
            self.assertEqual(s, sorted(s), f'{topic} from {node}: out of order')
        print('\nrecording of %.1f s:\n  %s' % (length, '\n  '.join(report)))
        self.assertEqual(lost, 0, 'messages lost between the publishers and the bag:\n  ' + '\n  '.join(
            r for r in report if not r.endswith(' 0 lost')))
        counts = {t: sum(len(s) for (tt, _), s in seqs.items() if tt == t) for t in EXPECTED}
        for topic, hz in EXPECTED.items():
            self.assertIn(topic, first, f'{topic} is not in the bag')
            self.assertLess(first[topic] - start, START_S, f'{topic} began {first[topic] - start:.1f} s late')
            self.assertGreater(counts[topic], hz * (length - START_S), f'{topic}: {counts[topic]} in {length:.0f} s')


if __name__ == '__main__':
    rospy.init_node('test_recording')
    rostest.rosrun('morai_msgs', 'test_recording', RecordingTest)
