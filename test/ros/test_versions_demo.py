#!/usr/bin/env python3
"""rostest: the demo's closed loop holds its circle under every simulator version profile.

For each of config/sim_versions, demo.launch sim_version:=V (the emulator emulating V, the bridge
expecting V, on V's default ports) must bring the example driver onto its circle (radius 20 m around
(0, 20), 20 km/h, counter-clockwise): the steering sign chain CtrlCmd -> wire -> simulator -> status
-> EgoVehicleStatus is right end to end, whatever V's wire signs are.  Also per version: no phantom
collision while nothing is hit (25.S4 fills unused collision slots with obj_type -1), the values in
force on the parameter server, and for the competition build the competition status on
/Competition_topic with its position withheld.
"""
import math
import os
import threading
import time
import unittest

import roslaunch
import rospy
import rostest

from morai_msgs.msg import CollisionData, EgoVehicleStatus

from morai_bridge.configuration import sim_versions
from morai_bridge.link.transport import shift_privileged

HERE = os.path.dirname(os.path.realpath(__file__))
DEMO = os.path.join(HERE, '..', '..', 'launch', 'demo.launch')
VERSIONS = sim_versions.available(sim_versions.search_dir_default())


class Watch:
    def __init__(self, topic, cls):
        self.msgs = []
        self.lock = threading.Lock()
        self.sub = rospy.Subscriber(topic, cls, self.cb, queue_size=200)

    def cb(self, m):
        with self.lock:
            self.msgs.append(m)

    def last(self):
        with self.lock:
            return self.msgs[-1] if self.msgs else None

    def close(self):
        self.sub.unregister()


def on_circle(m):
    r = math.hypot(m.position.x, m.position.y - 20.0)
    v = math.hypot(m.velocity.x, m.velocity.y) * 3.6
    return abs(r - 20.0) < 2.0 and abs(v - 20.0) < 2.0


class VersionsDemoTest(unittest.TestCase):

    def run_demo(self, version):
        uuid = roslaunch.rlutil.get_or_generate_uuid(None, False)
        roslaunch.configure_logging(uuid)
        launch = roslaunch.parent.ROSLaunchParent(uuid, [(DEMO, ['sim_version:=' + version, 'markers:=false',
                                                                 'output:=log'])])
        ego = Watch('/Ego_topic', EgoVehicleStatus)
        comp = Watch('/Competition_topic', EgoVehicleStatus)
        col = Watch('/CollisionData', CollisionData)
        launch.start()
        try:
            end = time.monotonic() + 60.0
            held = 0
            while time.monotonic() < end and held < 40:        # 2 s on the circle at 20 Hz checks
                m = ego.last()
                held = held + 1 if m is not None and on_circle(m) else 0
                time.sleep(0.05)
            m = ego.last()
            self.assertIsNotNone(m, f'{version}: no /Ego_topic')
            self.assertGreaterEqual(held, 40, '%s: the demo driver never held its circle (last: (%.1f, %.1f), '
                                    '%.1f km/h)' % (version, m.position.x, m.position.y,
                                                    math.hypot(m.velocity.x, m.velocity.y) * 3.6))
            # counter-clockwise around (0, 20): the heading leads the radius by +90 deg
            bearing = math.degrees(math.atan2(m.position.y - 20.0, m.position.x))
            lead = (m.heading - bearing + 180.0) % 360.0 - 180.0
            self.assertAlmostEqual(lead, 90.0, delta=20.0, msg=f'{version}: not driving counter-clockwise')
            # turning left on a CCW circle: wheel_angle is negative, as native ROS mode reports a left turn
            self.assertLess(m.wheel_angle, 0.0, f'{version}: wheel_angle {m.wheel_angle:.2f} for a left turn')
            with col.lock:
                msgs = list(col.msgs)
            self.assertGreater(len(msgs), 100, f'{version}: /CollisionData is periodic')
            self.assertEqual([c for c in msgs if c.collision_object], [], f'{version}: phantom collisions')
            v = sim_versions.load_version(version)
            signs = sim_versions.bridge_signs(v)
            self.assertEqual(rospy.get_param('/udp_bridge/steering_sign'), signs.steering_sign)
            self.assertEqual(rospy.get_param('/udp_bridge/ctrl_cmd_bytes'), v.ctrl_cmd_bytes)
            # the demo moves ports below 1024 by one offset, the same at both ends
            offset = rospy.get_param('/udp_bridge/privileged_port_offset')
            self.assertEqual(offset, rospy.get_param('/sim_emulator/privileged_port_offset'))
            self.assertEqual(rospy.get_param('/udp_bridge/ego_status_port'),
                             shift_privileged(v.port('ego_status'), offset))
            self.assertGreaterEqual(rospy.get_param('/udp_bridge/ego_status_port'), 1024)
            if v.port('competition_status'):
                c = comp.last()
                self.assertIsNotNone(c, f'{version}: no /Competition_topic')
                self.assertEqual((c.position.x, c.position.y, c.acceleration.x), (0.0, 0.0, 0.0))
                self.assertGreater(c.velocity.x, 4.0)
            else:
                self.assertIsNone(comp.last())
            print('%s: on the circle at (%.1f, %.1f), wheel_angle %.2f deg, %d collision messages'
                  % (version, m.position.x, m.position.y, m.wheel_angle, len(msgs)))
        finally:
            for w in (ego, comp, col):
                w.close()
            launch.shutdown()
            time.sleep(1.0)

    def test_every_version_holds_the_circle(self):
        self.assertEqual(VERSIONS, ['24.R2', '25.S4', '25.S4.MolitComp03', '26.R1'])
        for v in VERSIONS:
            self.run_demo(v)


if __name__ == '__main__':
    rospy.init_node('test_versions_demo')
    rostest.rosrun('morai_msgs', 'test_versions_demo', VersionsDemoTest)
