#!/usr/bin/env python3
"""rostest: morai_msgs types travel between two real nodes, including a peer
whose EgoVehicleStatus class is written independently of our generated code."""
import threading
import unittest

import rospy
import rostest
from std_msgs.msg import Float64MultiArray
from morai_msgs.msg import EgoVehicleStatus, ObjectStatusList, ScenarioLoad
from morai_msgs.srv import MoraiScenarioLoadSrv

from morai_bridge.ros import msg_set

TIMEOUT = 15.0


class InterfaceTest(unittest.TestCase):

    def test_ego_vehicle_status_between_nodes(self):
        m = rospy.wait_for_message('peer/ego', EgoVehicleStatus, timeout=TIMEOUT)
        self.assertEqual((m.header.stamp.secs, m.header.stamp.nsecs), (1726146361, 579000000))
        self.assertEqual(m.header.frame_id, 'map')
        self.assertEqual(m.unique_id, 7)
        self.assertEqual((m.position.x, m.position.y, m.position.z), (90.5, 1188.875, -0.375))
        self.assertEqual((m.velocity.x, m.velocity.y), (2.5, 1.0))
        self.assertEqual(m.acceleration.y, -0.25)
        self.assertAlmostEqual(m.heading, 154.84)
        self.assertEqual((m.accel, m.brake, msg_set.front_wheel_angle(m)), (0.5, 0.0, -3.5))

    def test_object_status_list_between_nodes(self):
        m = rospy.wait_for_message('peer/objects', ObjectStatusList, timeout=TIMEOUT)
        self.assertEqual((m.num_of_npcs, m.num_of_pedestrian, m.num_of_obstacle), (1, 1, 0))
        self.assertEqual([o.unique_id for o in m.npc_list], [11])
        self.assertEqual([o.unique_id for o in m.pedestrian_list], [12])
        self.assertEqual(m.obstacle_list, [])
        npc = m.npc_list[0]
        self.assertEqual((npc.type, npc.name, npc.heading), (1, 'npc', 90.0))
        self.assertEqual((npc.size.x, npc.size.y, npc.size.z), (4.5, 1.8, 1.5))
        self.assertEqual(npc.velocity.x, 36.0)
        self.assertEqual(m.pedestrian_list[0].position.x, 95.0)

    def test_scenario_load_service_between_nodes(self):
        rospy.wait_for_service('peer/Service_MoraiSL', timeout=TIMEOUT)
        call = rospy.ServiceProxy('peer/Service_MoraiSL', MoraiScenarioLoadSrv)
        good = ScenarioLoad(file_name='lattice', delete_all=True, load_ego_vehicle_data=True, set_pause=True)
        self.assertTrue(call(good).response.result)
        bad = ScenarioLoad(file_name='other', delete_all=True, load_ego_vehicle_data=True, set_pause=True)
        self.assertFalse(call(bad).response.result)

    def test_foreign_publisher_reaches_generated_subscriber(self):
        m = rospy.wait_for_message('interop/from_foreign', EgoVehicleStatus, timeout=TIMEOUT)
        self.assertEqual((m.header.stamp.secs, m.header.stamp.nsecs, m.header.frame_id), (42, 500, 'foreign'))
        self.assertEqual(m.unique_id, 3)
        self.assertEqual((m.acceleration.x, m.position.y, m.velocity.z), (1.0, 5.0, 9.0))
        self.assertEqual(m.heading, 123.5)
        self.assertEqual((m.accel, m.brake, msg_set.front_wheel_angle(m)), (0.25, 0.75, -12.5))

    def test_generated_publisher_reaches_foreign_subscriber(self):
        got = []
        done = threading.Event()

        def cb(msg):
            got.append(list(msg.data))
            done.set()

        sub = rospy.Subscriber('interop/foreign_seen', Float64MultiArray, cb)
        pub = rospy.Publisher('interop/to_foreign', EgoVehicleStatus, queue_size=1)
        m = EgoVehicleStatus()
        m.header.stamp = rospy.Time(5, 6)
        m.unique_id = 9
        m.position.x, m.velocity.y, m.heading = 11.0, -2.0, 45.0
        m.accel, m.brake = 0.125, 0.5
        msg_set.set_wheel_angles(m, 8.0)
        deadline = rospy.Time.now() + rospy.Duration(TIMEOUT)
        while not done.is_set() and rospy.Time.now() < deadline:
            pub.publish(m)
            done.wait(0.2)
        sub.unregister()
        self.assertTrue(got, 'the hand-written subscriber never received our message')
        d = got[0]
        self.assertEqual(d[:3], [5.0, 6.0, 9.0])
        self.assertEqual(d[3 + 3], 11.0)     # position.x
        self.assertEqual(d[3 + 7], -2.0)     # velocity.y
        self.assertEqual(d[3 + 9:3 + 13], [45.0, 0.125, 0.5, 8.0])
        self.assertEqual(d[3 + 13:], [0.0] * (len(d) - 16))     # what the set adds: not set here


if __name__ == '__main__':
    rospy.init_node('test_interface')
    rostest.rosrun('morai_msgs', 'test_interface', InterfaceTest)
