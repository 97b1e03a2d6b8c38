#!/usr/bin/env python3
"""rostest: recording as docs/day_one.md says loses nothing.

The sensor demo (`demo.launch sensors:=true record:=true`: emulator, bridge, sensor bridges, driver, and
launch/record.launch with the real `rosbag record`) runs for RECORD_S seconds; the bag is then read back.
rospy numbers what a publisher sends in ``header.seq`` (its own counter: one per message sent while it
has a subscriber), so for every publisher of every recorded topic the bag must hold each number from its
first message to its last: count == last - first + 1.  A gap is a message the publisher sent and the bag
lacks; its place (which topic, which node, how many) is printed.  Every expected topic must be in the bag,
starting within START_S of the first message (not "subscribed a second late"), at its rate.

The bag then goes through the two tools docs/day_one.md gives a newcomer: ``morai_bag_check`` (exit status
0, and its table says for every publisher what the reading above found: its count, checked by header.seq,
0 lost, its first message) and ``launch/play.launch``, run as typed in the bag's directory (a relative
``bag:=``) with ``roslaunch -p``: roslaunch starts a master of its own on that port, nothing else is started,
and a subscriber there receives /Ego_topic, every message from the one it connected at to the bag's last;
roslaunch then ends by itself.
"""
import collections
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import rosbag
import rosgraph
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
        self.check_with_morai_bag_check(bags[0], seqs, first, start)
        self.play_back(bags[0], [s for (t, _), s in seqs.items() if t == '/Ego_topic'][0])

    def check_with_morai_bag_check(self, bag, seqs, first, start):
        """morai_bag_check on the bag: exit 0, and per publisher what the reading above found."""
        p = subprocess.run(['rosrun', 'morai_msgs', 'morai_bag_check', bag], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)
        print('\nmorai_bag_check %s:\n%s' % (bag, p.stdout))
        self.assertEqual(p.returncode, 0, p.stdout)
        rows = {}
        for line in p.stdout.splitlines():
            cells = line.split()
            if line.startswith('  /') and len(cells) >= 7:
                rows[(cells[0], cells[1])] = cells[2:]
        for (topic, node), s in seqs.items():
            self.assertEqual(rows[(topic, node)][0], str(len(s)), f'{topic} from {node}')
            self.assertEqual(rows[(topic, node)][-2:], ['header.seq', '0'], f'{topic} from {node}')
        for topic in EXPECTED:
            earliest = min(float(r[2]) for (t, _), r in rows.items() if t == topic)
            self.assertAlmostEqual(earliest, first[topic] - start, delta=0.006, msg=topic)
        self.assertEqual(rows[('/tf', '/udp_bridge')][-2:], ['intervals', '0'])
        self.assertTrue(all(r[-4:] == ['not', 'judged', '(irregular)', '-'] for (t, _), r in rows.items()
                            if t == '/tf_static'))
        self.assertIn('A late first message is not a loss', p.stdout)
        self.assertTrue(p.stdout.splitlines()[-1].startswith('result: no gap (publishers: %d by header.seq'
                                                             % len(seqs)), p.stdout.splitlines()[-1])

    def play_back(self, bag, ego_seqs):
        """launch/play.launch as docs/day_one.md types it, in the bag's directory, on a master roslaunch
        starts itself (-p: a port of its own, not this test's master)."""
        with socket.socket() as s:
            s.bind(('127.0.0.1', 0))
            port = s.getsockname()[1]
        here = os.path.dirname(bag)
        env = dict(os.environ, ROS_MASTER_URI=f'http://localhost:{port}', PWD=here)
        launch = subprocess.Popen(['roslaunch', '-p', str(port), 'morai_msgs', 'play.launch',
                                   'bag:=' + os.path.basename(bag), 'rate:=2', 'delay:=3'], cwd=here, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        echo = None
        try:
            master = rosgraph.Master('/test_recording_play', master_uri=env['ROS_MASTER_URI'])
            end = time.monotonic() + 30.0
            while time.monotonic() < end and not (master.is_online() and master.hasParam('/use_sim_time')):
                time.sleep(0.1)
            self.assertTrue(master.is_online(), 'play.launch started no master')
            self.assertIs(master.getParam('/use_sim_time'), True)
            echo = subprocess.Popen(['rostopic', 'echo', '-p', '/Ego_topic/header/seq'],
                                    env=dict(env, PYTHONUNBUFFERED='1'), stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, universal_newlines=True)
            log, _ = launch.communicate(timeout=90)         # ends with the bag (loop:=false)
        finally:
            if launch.poll() is None:
                launch.send_signal(signal.SIGINT)         # roslaunch stops its master and nodes
                try:
                    launch.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    launch.kill()
                    launch.wait()
            if echo is not None:
                echo.send_signal(signal.SIGINT)           # Ctrl-C
                received, _ = echo.communicate(timeout=30)
        self.assertEqual(launch.returncode, 0, log[-3000:])
        got = [int(line.split(',')[1]) for line in received.splitlines()[1:] if line[:1].isdigit()]
        print('\nplay.launch: /Ego_topic %d of the bag\'s %d received, header.seq %s..%s' % (
            len(got), len(ego_seqs), got[:1], got[-1:]))
        self.assertGreater(len(got), len(ego_seqs) // 2, received[-2000:])
        self.assertEqual(got, ego_seqs[-len(got):], 'not every message from the first received to the bag\'s last')


if __name__ == '__main__':
    rospy.init_node('test_recording')
    rostest.rosrun('morai_msgs', 'test_recording', RecordingTest)
