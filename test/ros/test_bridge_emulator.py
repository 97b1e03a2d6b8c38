#!/usr/bin/env python3
"""rostest: steering signs, vehicle profiles and the information services, end to end.

* A ROS user's steering reads back unchanged through the bridge and the simulator
  emulator (+ = left both ways), for CtrlCmd and for GhostMessage.
* Service_MoraiVehicleSpec answers the simulator's own ego size (from the status).
* A bridge started with ``vehicle_profile:=erp42`` normalises steering by 28.17 deg and
  answers the ERP-42 profile and the configured map origin.
"""
import math
import os
import sys
import time
import unittest

import roslaunch
import rospy
import rostest
from geometry_msgs.msg import Vector3

from morai_msgs.msg import CtrlCmd, EgoVehicleStatus, GhostMessage, MapSpecIndex, VehicleSpecIndex
from morai_msgs.srv import MoraiMapSpecSrv, MoraiVehicleSpecSrv
from morai_bridge.wire.udp import streams

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)
from harness import FakeSim  # noqa: E402
from harness import Latest, free_ports

LAUNCH = os.path.join(HERE, '..', '..', 'launch')
STREAMS = [s.name for s in streams.FROM_SIM]
COMMANDS = [s.name for s in streams.TO_SIM]
T = 15.0


class FidelityTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        ports = dict(zip(STREAMS + COMMANDS, free_ports(len(STREAMS) + len(COMMANDS))))
        port_args = ['%s_port:=%d' % kv for kv in ports.items()]
        uuid = roslaunch.rlutil.get_or_generate_uuid(None, False)
        roslaunch.configure_logging(uuid)
        cls.uuid = uuid
        cls.launch = roslaunch.parent.ROSLaunchParent(uuid, [
            (os.path.join(LAUNCH, 'sim_emulator.launch'), port_args + ['scenario:=', 'output:=log']),
            (os.path.join(LAUNCH, 'udp_bridge.launch'), port_args + ['output:=log'])])
        cls.launch.start()
        cls.ego = Latest('/Ego_topic', EgoVehicleStatus, timeout=T)
        cls.ctrl = rospy.Publisher('/ctrl_cmd', CtrlCmd, queue_size=1)
        cls.ghost = rospy.Publisher('/GhostCtrlCmd', GhostMessage, queue_size=1)
        assert cls.ego.wait(timeout=30.0) is not None, 'no ego status from the emulator through the bridge'

    @classmethod
    def tearDownClass(cls):
        cls.launch.shutdown()

    def test_a_ghost_steering_reads_back(self):
        """Before any ctrl command (the emulator then holds the ghost's wheel angle).  GhostMessage.steering_angle
        is in wheel_angle's convention (native ROS mode: - = left): -6 reads back -6 and turns left."""
        e = self.ego.wait()
        g = GhostMessage(position=Vector3(e.position.x, e.position.y, 0.0), rotation=Vector3(0.0, 0.0, e.heading),
                         velocity=0.0, steering_angle=-6.0)
        m = self.ego.wait(lambda m: abs(m.wheel_angle + 6.0) < 1e-3, during=lambda: self.ghost.publish(g))
        self.assertIsNotNone(m, f'ghost steering_angle -6 deg read back as {self.ego.msg.wheel_angle!r}')
        # placed moving at 20 km/h with the wheels 6 deg to the left, the ego coasts counter-clockwise
        h0 = m.heading
        g.velocity = 20.0
        self.ghost.publish(g)
        m = self.ego.wait(lambda m: (m.heading - h0 + 180.0) % 360.0 - 180.0 > 1.0, timeout=5.0)
        self.assertIsNotNone(m, 'a - (left) ghost steering angle must turn counter-clockwise; heading %r -> %r'
                             % (h0, self.ego.msg.heading))

    def test_b_ctrl_steering_reads_back_and_turns_left(self):
        h0 = self.ego.wait().heading
        cmd = CtrlCmd(longlCmdType=2, velocity=10.0, steering=0.2)
        # CtrlCmd.steering + left; wheel_angle as native ROS mode reports it: - for left
        m = self.ego.wait(lambda m: abs(m.wheel_angle + math.degrees(0.2)) < 1e-3,
                          during=lambda: self.ctrl.publish(cmd))
        self.assertIsNotNone(m, 'commanded +0.2 rad (%.2f deg left), read back %r' % (math.degrees(0.2),
                                                                                   self.ego.msg.wheel_angle))
        m = self.ego.wait(lambda m: (m.heading - h0 + 180.0) % 360.0 - 180.0 > 5.0,
                          during=lambda: self.ctrl.publish(cmd))
        self.assertIsNotNone(m, '+ steering must turn counter-clockwise')
        stop = CtrlCmd(longlCmdType=2, velocity=0.0, steering=0.0)
        self.ego.wait(lambda m: abs(m.wheel_angle) < 1e-3, during=lambda: self.ctrl.publish(stop))

    def test_c_vehicle_spec_is_the_simulators_ego(self):
        rospy.wait_for_service('/Service_MoraiVehicleSpec', T)
        r = rospy.ServiceProxy('/Service_MoraiVehicleSpec', MoraiVehicleSpecSrv)(VehicleSpecIndex()).response
        self.assertAlmostEqual(r.size.x, 4.6, places=5)            # the emulator's ego (sim_emulator ~length)
        self.assertAlmostEqual(r.wheel_base, 2.7, places=5)
        self.assertEqual(r.max_steering, 36.25)

    def test_d_erp42_profile_bridge(self):
        sim = FakeSim()
        bridge = roslaunch.parent.ROSLaunchParent(self.uuid, [(os.path.join(LAUNCH, 'udp_bridge.launch'), sim.args() + [
            'ns:=erp', 'output:=log', 'vehicle_profile:=erp42', 'gps_east_offset:=302459.942',
            'gps_north_offset:=4122635.537', 'map_origin_z:=28.991'])])
        bridge.start()
        try:
            rospy.wait_for_service('/erp/Service_MoraiVehicleSpec', T)
            r = rospy.ServiceProxy('/erp/Service_MoraiVehicleSpec', MoraiVehicleSpecSrv)(VehicleSpecIndex()).response
            self.assertEqual(r.max_steering, 28.17)
            self.assertAlmostEqual(r.wheel_base, 1.04, places=5)      # no ego status yet: the profile
            m = rospy.ServiceProxy('/erp/Service_MoraiMapSpec', MoraiMapSpecSrv)(MapSpecIndex()).response
            self.assertEqual((m.utm_num, m.utm_offset.x, m.utm_offset.y, m.utm_offset.z),
                             (52, 302459.942, 4122635.537, 28.991))
            pub = rospy.Publisher('/erp/ctrl_cmd', CtrlCmd, queue_size=1)
            end = time.monotonic() + T
            while pub.get_num_connections() < 1 and time.monotonic() < end:
                time.sleep(0.05)
            sim.drain('ctrl_cmd')
            pub.publish(CtrlCmd(longlCmdType=2, velocity=2.0, steering=math.radians(28.17 / 2)))
            c = sim.recv('ctrl_cmd')
            while c.velocity != 2.0:
                c = sim.recv('ctrl_cmd')
            self.assertAlmostEqual(c.steer, 0.5, places=5)           # 14.085 deg of 28.17; 25.S4: + left -> wire +
        finally:
            bridge.shutdown()


if __name__ == '__main__':
    rospy.init_node('test_bridge_emulator')
    rostest.rosrun('morai_msgs', 'test_bridge_emulator', FidelityTest)
