#!/usr/bin/env python3
"""rostest: rosbag round trip of the bridge's output.

The emulator runs with a deterministic clock (starts at 0, exactly 20 ms per
step) and drives into an obstacle so that collisions happen; the real
`rosbag record` records /Ego_topic, /Object_topic and /CollisionData; the bag
is read back with the rosbag API: counts, types, md5s, and header stamps that
are the simulator's own times (multiples of 20 ms, increasing).
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import rosbag
import roslaunch
import rospy
import rostest

from morai_msgs.msg import CtrlCmd, EgoVehicleStatus

from morai_bridge.ros import msg_set
from morai_bridge.wire.udp import streams

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from harness import free_ports  # noqa: E402

HERE = os.path.dirname(os.path.realpath(__file__))
LAUNCH = os.path.join(HERE, '..', '..', 'launch')
MD5 = json.load(open(os.path.join(HERE, '..', 'data', 'msg_sets', msg_set.NAME + '.json')))['types']  # the built set
TOPICS = {'/Ego_topic': 'morai_msgs/EgoVehicleStatus', '/Object_topic': 'morai_msgs/ObjectStatusList',
          '/CollisionData': 'morai_msgs/CollisionData'}
STEP_NS = 20000000


class RosbagRoundTrip(unittest.TestCase):

    def test_record_and_read_back(self):
        names = ['ego_status', 'object_info', 'collision', 'ctrl_cmd', 'scenario_load']
        ports = dict(zip(names, free_ports(len(names))))
        common = ['%s_port:=%d' % kv for kv in ports.items()]
        off = [f'{s.param}:=0' for s in streams.STREAMS if s.name not in names]   # every other stream (rows)
        uuid = roslaunch.rlutil.get_or_generate_uuid(None, False)
        roslaunch.configure_logging(uuid)
        launch = roslaunch.parent.ROSLaunchParent(uuid, [
            (os.path.join(LAUNCH, 'sim_emulator.launch'),
             common + off + ['deterministic:=true', 'scenario:=obstacle_ahead', 'output:=log']),
            (os.path.join(LAUNCH, 'udp_bridge.launch'), common + off + ['output:=log', 'state_queue_size:=50'])])
        launch.start()
        bag = os.path.join(tempfile.mkdtemp(), 'drive.bag')
        rec = None
        try:
            rospy.wait_for_message('/Ego_topic', EgoVehicleStatus, timeout=20.0)
            rec = subprocess.Popen(['rosbag', 'record', '-O', bag, '__name:=test_rosbag_record'] + sorted(TOPICS),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(3.0)        # let the recorder subscribe
            ctrl = rospy.Publisher('/ctrl_cmd', CtrlCmd, queue_size=1)
            end = time.monotonic() + 12.0
            while time.monotonic() < end:
                ctrl.publish(CtrlCmd(longlCmdType=2, velocity=20.0))
                time.sleep(0.05)
        finally:
            if rec is not None:
                rec.send_signal(signal.SIGINT)
                rec.wait(20)
            launch.shutdown()

        with rosbag.Bag(bag) as b:
            info = b.get_type_and_topic_info()
            for topic, typ in TOPICS.items():
                self.assertIn(topic, info.topics, f'topic {topic} missing from the bag')
                t = info.topics[topic]
                self.assertEqual(t.msg_type, typ)
                self.assertEqual(info.msg_types[typ], MD5[typ]['md5'])
            n_ego = info.topics['/Ego_topic'].message_count
            n_obj = info.topics['/Object_topic'].message_count
            n_col = info.topics['/CollisionData'].message_count
            self.assertGreater(n_ego, 400, 'about 50 Hz for > 10 s expected, got %d' % n_ego)
            self.assertGreater(n_obj, 400)
            self.assertGreater(n_col, 0, 'driving into the obstacle must be recorded as CollisionData')
            for topic in TOPICS:
                stamps = [m.header.stamp.to_nsec() for _, m, _ in b.read_messages(topics=[topic])]
                self.assertTrue(all(s % STEP_NS == 0 for s in stamps),
                                f'{topic}: stamps are not the emulator clock (multiples of 20 ms)')
                self.assertTrue(all(b2 > a for a, b2 in zip(stamps, stamps[1:])), f'{topic}: stamps not increasing')
                if topic != '/CollisionData':
                    # every simulator step is sent (late rather than skipped when the emulator's loop is late)
                    # and, with a publisher queue deeper than 1, none is dropped before rosbag gets it
                    steps = (stamps[-1] - stamps[0]) // STEP_NS + 1
                    gaps = [(b2 - a) // STEP_NS for a, b2 in zip(stamps, stamps[1:]) if b2 - a != STEP_NS]
                    print('%s: %d of %d simulator steps in the bag; gaps (in steps): %s'
                          % (topic, len(stamps), steps, gaps))
                    self.assertEqual(gaps, [], f'{topic}: simulator steps missing from the bag')
                    self.assertEqual(len(stamps), steps)
            # the same simulator instant is one stamp for ego, objects and collisions
            ego_stamps = {m.header.stamp.to_nsec() for _, m, _ in b.read_messages(topics=['/Ego_topic'])}
            col_stamps = [m.header.stamp.to_nsec() for _, m, _ in b.read_messages(topics=['/CollisionData'])]
            # (rosbag subscribes to each topic, and stops, at its own moment: a step at the very start or end
            # of the recording may be in one topic only; inside the ego's span every step is in both)
            lo, hi = min(ego_stamps), max(ego_stamps)
            inside = [s for s in col_stamps if lo <= s <= hi]
            self.assertGreater(len(inside), len(col_stamps) // 2, 'collisions mostly outside the ego span')
            self.assertEqual(sorted(set(inside) - ego_stamps), [], 'collision stamps that are no ego stamp')
            # the stream is periodic (one packet per status); the obstacle appears once it is hit, and the
            # empty slots of the other packets (25.S4: obj_type -1) are no collision
            cols = [m for _, m, _ in b.read_messages(topics=['/CollisionData'])]
            hits = [m for m in cols if m.collision_object]
            self.assertTrue(hits, 'driving into the obstacle must be recorded as a collision')
            self.assertEqual({o.type for m in hits for o in m.collision_object}, {2})
            self.assertGreater(len(cols), len(hits))


if __name__ == '__main__':
    rospy.init_node('test_rosbag_roundtrip')
    rostest.rosrun('morai_msgs', 'test_rosbag_roundtrip', RosbagRoundTrip)
