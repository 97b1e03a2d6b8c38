#!/usr/bin/env python3
"""rostest: the markers node between real topics: what it publishes for given morai_msgs inputs,
DELETE of a vanished object and of stale inputs, collision events, lights with and without a
position, its diagnostics, and its frame parameter."""
import threading
import time
import unittest

import rospy
import rostest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Vector3
from visualization_msgs.msg import Marker, MarkerArray

from morai_msgs.msg import CollisionData, EgoVehicleStatus, GetTrafficLightStatus, ObjectStatus, ObjectStatusList

TIMEOUT = 10.0


def obj(uid, otype, x, y):
    return ObjectStatus(unique_id=uid, type=otype, heading=0.0, position=Vector3(x, y, 0.0),
                        size=Vector3(4.0, 2.0, 1.5))


class Collector:
    def __init__(self):
        self.cond = threading.Condition()
        self.arrays = []
        self.sub = rospy.Subscriber('/viz/morai/markers', MarkerArray, self.cb, queue_size=100)

    def cb(self, m):
        with self.cond:
            self.arrays.append(m)
            self.cond.notify_all()

    def wait(self, pred, timeout=TIMEOUT, since=0):
        """The first array (from index ``since``) satisfying pred."""
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for a in self.arrays[since:]:
                    if pred(a):
                        return a
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def mark(self):
        with self.cond:
            return len(self.arrays)


def keys(arr, action=Marker.ADD):
    return {(m.ns, m.id) for m in arr.markers if m.action == action}


class MarkersNodeTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.out = Collector()
        cls.ego = rospy.Publisher('/viz/Ego_topic', EgoVehicleStatus, queue_size=10)
        cls.objs = rospy.Publisher('/viz/Object_topic', ObjectStatusList, queue_size=10)
        cls.light = rospy.Publisher('/viz/GetTrafficLightStatus', GetTrafficLightStatus, queue_size=10)
        cls.coll = rospy.Publisher('/viz/CollisionData', CollisionData, queue_size=10)
        end = time.monotonic() + TIMEOUT
        while time.monotonic() < end and min(p.get_num_connections() for p in (cls.ego, cls.objs, cls.light, cls.coll)) < 1:
            time.sleep(0.05)
        cls.stop = False
        cls.npcs = [obj(1, 1, 10.0, 0.0), obj(2, 1, 20.0, 0.0)]
        cls.thread = threading.Thread(target=cls.feed, daemon=True)
        cls.thread.start()

    @classmethod
    def feed(cls):
        """Ego and objects at 20 Hz, like the bridge (the lists can be changed by the tests)."""
        while not cls.stop and not rospy.is_shutdown():
            cls.ego.publish(EgoVehicleStatus(heading=90.0, position=Vector3(1.0, 2.0, 0.0),
                                             velocity=Vector3(5.0, 0.0, 0.0)))     # body frame: forward
            npcs = list(cls.npcs)
            cls.objs.publish(ObjectStatusList(num_of_npcs=len(npcs), num_of_pedestrian=1, num_of_obstacle=0,
                                              npc_list=npcs, pedestrian_list=[obj(101, 0, 0.0, 5.0)]))
            time.sleep(0.05)

    @classmethod
    def tearDownClass(cls):
        cls.stop = True
        cls.thread.join(2.0)

    def test_1_scene(self):
        want = {('ego', 0), ('ego_velocity', 0), ('npc', 1), ('npc', 2), ('npc_label', 1), ('npc_label', 2),
                ('pedestrian', 101), ('pedestrian_label', 101)}
        arr = self.out.wait(lambda a: want <= keys(a))
        self.assertIsNotNone(arr, 'no complete scene on /viz/morai/markers')
        self.assertTrue(all(m.header.frame_id == 'world' for m in arr.markers))
        ego = [m for m in arr.markers if m.ns == 'ego'][0]
        self.assertEqual((ego.scale.x, ego.scale.y, ego.scale.z), (3.0, 1.5, 1.2))   # ~ego_length etc.
        # the launch file's default ego_velocity_frame is body: 5 m/s forward at heading 90 points north
        a, b = [m for m in arr.markers if m.ns == 'ego_velocity'][0].points
        self.assertAlmostEqual(b.x - a.x, 0.0, places=6)
        self.assertAlmostEqual(b.y - a.y, 5.0, places=6)

    def test_2_vanished_object_is_deleted(self):
        self.assertIsNotNone(self.out.wait(lambda a: ('npc', 2) in keys(a)))
        n = self.out.mark()
        type(self).npcs = [obj(1, 1, 10.0, 0.0)]
        arr = self.out.wait(lambda a: ('npc', 2) in keys(a, Marker.DELETE), since=n)
        self.assertIsNotNone(arr, 'npc 2 left the list but was not deleted')
        self.assertIn(('npc_label', 2), keys(arr, Marker.DELETE))
        self.assertIn(('npc', 1), keys(arr))
        later = self.out.wait(lambda a: ('npc', 2) in keys(a, Marker.DELETE), since=self.out.mark(), timeout=1.0)
        self.assertIsNone(later, 'the DELETE is sent once')

    def test_3_lights(self):
        self.light.publish(GetTrafficLightStatus(trafficLightIndex='C119BS010007', trafficLightStatus=1))
        self.light.publish(GetTrafficLightStatus(trafficLightIndex='NOWHERE00001', trafficLightStatus=16))
        arr = self.out.wait(lambda a: any(m.ns == 'traffic_light_lamps' for m in a.markers if m.action == Marker.ADD))
        self.assertIsNotNone(arr, 'no traffic light marker')
        lamps = [m for m in arr.markers if m.ns == 'traffic_light_lamps']
        self.assertEqual(len(lamps), 1, 'only the light with a known position is shown')
        self.assertEqual((lamps[0].colors[0].r, lamps[0].colors[0].g), (1.0, 0.0))    # red head lit
        d = self.wait_diag(lambda v: v.get('traffic lights without a position') == 'NOWHERE00001')
        self.assertIsNotNone(d, 'the light without a position is reported')

    def test_4_collision_event(self):
        n = self.out.mark()
        self.coll.publish(CollisionData(collision_object=[obj(2, 1, 3.0, 4.0)]))
        arr = self.out.wait(lambda a: ('collision', 2) in keys(a), since=n)
        self.assertIsNotNone(arr)
        m = [m for m in arr.markers if m.ns == 'collision'][0]
        self.assertAlmostEqual(m.lifetime.to_sec(), 0.5)
        again = self.out.wait(lambda a: ('collision', 2) in keys(a), since=self.out.mark(), timeout=1.0)
        self.assertIsNone(again, 'a collision is published once, its lifetime removes it')

    def test_5_stale_inputs_are_deleted(self):
        self.assertIsNotNone(self.wait_diag(lambda v: v['level'] == 0))
        type(self).stop = True
        self.thread.join(2.0)
        n = self.out.mark()
        arr = self.out.wait(lambda a: {('ego', 0), ('npc', 1), ('pedestrian', 101)} <= keys(a, Marker.DELETE),
                            since=n, timeout=5.0)
        self.assertIsNotNone(arr, 'markers of silent inputs were not deleted after ~stale_s')
        d = self.wait_diag(lambda v: v['level'] == 1)
        self.assertIn('no recent message', d['message'])

    def wait_diag(self, pred, timeout=TIMEOUT):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            msg = rospy.wait_for_message('/diagnostics', DiagnosticArray, timeout=timeout)
            for s in msg.status:
                if s.name == 'viz/markers: RViz markers':
                    v = {kv.key: kv.value for kv in s.values}
                    v['level'] = ord(s.level) if isinstance(s.level, bytes) else s.level
                    v['message'] = s.message
                    if pred(v):
                        return v
        return None


if __name__ == '__main__':
    rospy.init_node('test_markers_node')
    rostest.rosrun('morai_msgs', 'test_markers_node', MarkersNodeTest)
