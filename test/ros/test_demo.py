#!/usr/bin/env python3
"""rostest: the demo brings up a moving vehicle within 30 s; the PCU emulator node
and the serial driver find each other through their launch files."""
import math
import time
import unittest

import rospy
import rostest
from diagnostic_msgs.msg import DiagnosticArray

from morai_msgs.msg import EgoVehicleStatus, ERP42Info, ObjectStatusList


class DemoTest(unittest.TestCase):

    def test_demo_vehicle_moves_within_30_s(self):
        t0 = time.monotonic()
        first = rospy.wait_for_message('/Ego_topic', EgoVehicleStatus, timeout=30.0)
        moving = None
        while time.monotonic() - t0 < 30.0:
            m = rospy.wait_for_message('/Ego_topic', EgoVehicleStatus, timeout=5.0)
            if math.hypot(m.position.x - first.position.x, m.position.y - first.position.y) > 5.0:
                moving = m
                break
        self.assertIsNotNone(moving, 'the demo vehicle did not move 5 m within 30 s')
        print(f'demo vehicle moving {time.monotonic() - t0:.1f} s after start')
        time.sleep(3.0)
        m = rospy.wait_for_message('/Ego_topic', EgoVehicleStatus, timeout=5.0)
        v = math.hypot(m.velocity.x, m.velocity.y) * 3.6
        self.assertAlmostEqual(v, 20.0, delta=2.0)
        # on its circle of radius 20 m around (0, 20)
        self.assertAlmostEqual(math.hypot(m.position.x, m.position.y - 20.0), 20.0, delta=2.0)
        objs = rospy.wait_for_message('/Object_topic', ObjectStatusList, timeout=5.0)
        # config/scenarios/demo.json: 3 NPCs, the walker, the cone, the box and eight guardrails
        self.assertEqual((objs.num_of_npcs, objs.num_of_pedestrian, objs.num_of_obstacle), (3, 1, 10))

    def test_pcu_emulator_node_and_serial_driver(self):
        info = rospy.wait_for_message('/erp/erp42_serial/erp42_info', ERP42Info, timeout=30.0)
        self.assertEqual(info.velocity, 0.0)          # no /erp/ctrl_cmd: stop frames, vehicle at rest
        # one subscription for the whole wait: several nodes publish /diagnostics, and a fresh
        # wait_for_message per round would see one random node's array each time
        modes = []
        sub = rospy.Subscriber('/diagnostics', DiagnosticArray, lambda d: modes.extend(
            {kv.key: kv.value for kv in s.values}.get('mode') for s in d.status
            if s.name.endswith('ERP-42 PCU emulator')), queue_size=50)
        end = time.monotonic() + 15.0
        while time.monotonic() < end and 'AUTO' not in modes:
            time.sleep(0.1)
        sub.unregister()
        mode = 'AUTO' if 'AUTO' in modes else (modes[-1] if modes else None)
        self.assertEqual(mode, 'AUTO', 'stop frames with a correct ALIVE keep the PCU in AUTO')


if __name__ == '__main__':
    rospy.init_node('test_demo')
    rostest.rosrun('morai_msgs', 'test_demo', DemoTest)
