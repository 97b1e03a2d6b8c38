#!/usr/bin/env python3
"""rostest: steering signs, vehicle profiles and the information services, end to end.

* A bridge started with ``vehicle_profile:=erp42`` normalises steering by 28.17 deg.
"""
import math
import os
import socket
import sys
import threading
import time
import unittest

import roslaunch
import rospy
import rostest

from morai_msgs.msg import CtrlCmd, EgoVehicleStatus
from morai_bridge.wire import streams

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)
from harness import FakeSim  # noqa: E402

LAUNCH = os.path.join(HERE, '..', '..', 'launch')
STREAMS = [s.name for s in streams.FROM_SIM]
COMMANDS = [s.name for s in streams.TO_SIM]
T = 15.0


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(('127.0.0.1', 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


class Latest(object):
    def __init__(self, topic, cls):
        self.msg = None
        self.cond = threading.Condition()
        rospy.Subscriber(topic, cls, self.cb, queue_size=10)

    def cb(self, m):
        with self.cond:
            self.msg = m
            self.cond.notify_all()

    def wait(self, pred=lambda m: True, timeout=T, during=None):
        """The latest message once it satisfies pred; ``during()`` is called every 50 ms meanwhile."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if during is not None:
                during()
            with self.cond:
                if self.msg is not None and pred(self.msg):
                    return self.msg
                self.cond.wait(0.05)
        return None


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
        cls.ego = Latest('/Ego_topic', EgoVehicleStatus)
        cls.ctrl = rospy.Publisher('/ctrl_cmd', CtrlCmd, queue_size=1)
        assert cls.ego.wait(timeout=30.0) is not None, 'no ego status from the emulator through the bridge'

    @classmethod
    def tearDownClass(cls):
        cls.launch.shutdown()

    def test_d_erp42_profile_bridge(self):
        sim = FakeSim()
        bridge = roslaunch.parent.ROSLaunchParent(self.uuid, [(os.path.join(LAUNCH, 'udp_bridge.launch'), sim.args() + [
            'ns:=erp', 'output:=log', 'vehicle_profile:=erp42'])])
        bridge.start()
        try:
            pub = rospy.Publisher('/erp/ctrl_cmd', CtrlCmd, queue_size=1)
            end = time.monotonic() + T
            while pub.get_num_connections() < 1 and time.monotonic() < end:
                time.sleep(0.05)
            sim.drain('ctrl_cmd')
            pub.publish(CtrlCmd(longlCmdType=2, velocity=2.0, steering=math.radians(28.17 / 2)))
            c = sim.recv('ctrl_cmd')
            while c.velocity != 2.0:
                c = sim.recv('ctrl_cmd')
            self.assertAlmostEqual(c.steer, -0.5, places=5)          # 14.085 deg of 28.17, + left -> wire -
        finally:
            bridge.shutdown()


if __name__ == '__main__':
    rospy.init_node('test_fidelity')
    rostest.rosrun('morai_msgs', 'test_fidelity', FidelityTest)
