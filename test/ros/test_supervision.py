#!/usr/bin/env python3
"""rostest: a fault injected into each worker loop is reported on /diagnostics and the worker resumes."""
import os
import subprocess
import threading
import time
import unittest

import roslaunch
import rospy
import rostest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from std_msgs.msg import String

from morai_bridge.wire.udp import streams
from morai_msgs.msg import EgoVehicleStatus, ERP42Info
from harness import free_ports, wait_for

HERE = os.path.dirname(os.path.realpath(__file__))
LAUNCH = os.path.join(HERE, '..', '..', 'launch')
SIM_LINK = '/tmp/morai_rostest_supervision_sim'
PCU_LINK = '/tmp/morai_rostest_supervision_pcu'


class Counter:
    def __init__(self, topic, cls):
        self.n = 0
        rospy.Subscriber(topic, cls, self.cb, queue_size=50)

    def cb(self, _):
        self.n += 1


class SupervisionTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        names = [s.name for s in streams.STREAMS]
        ports = dict(zip(names, free_ports(len(names))))
        port_args = ['%s_port:=%d' % kv for kv in ports.items()]
        uuid = roslaunch.rlutil.get_or_generate_uuid(None, False)
        roslaunch.configure_logging(uuid)
        cls.launch = roslaunch.parent.ROSLaunchParent(uuid, [
            (os.path.join(LAUNCH, 'sim_emulator.launch'),
             port_args + ['scenario:=sample', f'erp42_link:={SIM_LINK}', 'fault_injection:=true', 'output:=log']),
            (os.path.join(LAUNCH, 'udp_bridge.launch'), port_args + ['fault_injection:=true', 'output:=log']),
            (os.path.join(LAUNCH, 'erp42_serial.launch'),
             [f'port:={SIM_LINK}', 'encoder_enabled:=false', 'fault_injection:=true', 'output:=log']),
            (os.path.join(LAUNCH, 'pcu_emulator.launch'), [f'link:={PCU_LINK}', 'fault_injection:=true',
                                                            'output:=log'])])
        cls.launch.start()
        cls.lock = threading.Lock()
        cls.diag = {}
        rospy.Subscriber('/diagnostics', DiagnosticArray, cls.on_diag, queue_size=50)
        cls.ego = Counter('/Ego_topic', EgoVehicleStatus)
        cls.info = Counter('/erp42_serial/erp42_info', ERP42Info)
        cls.pubs = {}

    @classmethod
    def tearDownClass(cls):
        cls.launch.shutdown()

    @classmethod
    def on_diag(cls, m):
        with cls.lock:
            for s in m.status:
                cls.diag[s.name] = (s.level, s.message, {kv.key: kv.value for kv in s.values})

    def entry(self, name):
        with self.lock:
            return self.diag.get(name)

    def inject(self, node, worker):
        pub = self.pubs.get(node)
        if pub is None:
            pub = self.pubs[node] = rospy.Publisher(f'/{node}/inject_fault', String, queue_size=1)
            self.assertTrue(wait_for(lambda: pub.get_num_connections() > 0, 15.0), 'no ~inject_fault on ' + node)
        pub.publish(String(worker))

    def check_worker(self, node, worker, flowing):
        """Inject a fault into ``worker`` of ``node``: ERROR with the restart counted, then running
        again, and ``flowing()`` (a counter of the worker's output) grows afterwards."""
        name = f'{node}: Workers'
        self.assertTrue(wait_for(lambda: self.entry(name) is not None and
                                 self.entry(name)[2].get(f'{worker} state') == 'running', 30.0),
                        f'{node} never reported worker {worker} running: {self.entry(name)!r}')
        before = int(self.entry(name)[2][f'{worker} restarts'])
        self.inject(node, worker)
        self.assertTrue(wait_for(lambda: int(self.entry(name)[2][f'{worker} restarts']) == before + 1, 10.0),
                        f'restart of {worker} not counted: {self.entry(name)!r}')
        level, message, values = self.entry(name)
        self.assertEqual(level, DiagnosticStatus.ERROR, message)
        self.assertIn(worker, message)
        self.assertIn('fault injected', values[f'{worker} last error'])
        self.assertTrue(wait_for(lambda: self.entry(name)[2][f'{worker} state'] == 'running', 5.0))
        n = flowing()
        self.assertTrue(wait_for(lambda: flowing() > n + 10, 10.0),
                        '%s: no output after the restart of %s (%d -> %d)' % (node, worker, n, flowing()))

    def pcu_feedback(self):
        e = self.entry('pcu_emulator: ERP-42 PCU emulator')
        return int(e[2]['feedback_sent']) if e else 0

    def test_1_udp_receiver(self):
        self.assertTrue(wait_for(lambda: self.ego.n > 20, 30.0), 'no /Ego_topic')
        self.check_worker('udp_bridge', 'udp_receiver', lambda: self.ego.n)

    def test_2_sim_emulator_loop(self):
        self.check_worker('sim_emulator', 'sim_emulator_loop', lambda: self.ego.n)

    def test_3_pcu_inside_the_sim_emulator(self):
        self.assertTrue(wait_for(lambda: self.info.n > 20, 30.0), 'no erp42_info')
        self.check_worker('sim_emulator', 'pcu_emulator_loop', lambda: self.info.n)

    def test_4_erp42_io(self):
        self.check_worker('erp42_serial', 'erp42_io', lambda: self.info.n)

    def test_5_erp42_feedback(self):
        self.check_worker('erp42_serial', 'erp42_feedback', lambda: self.info.n)

    def test_6_standalone_pcu_emulator(self):
        # feedback_sent is published once a second: ask for 3 more diagnostics rounds of output
        self.check_worker('pcu_emulator', 'pcu_emulator_loop', lambda: self.pcu_feedback() // 5)

    def test_7_a_worker_that_cannot_resume_ends_the_node_with_status_1(self):
        """Faults faster than the restart budget (5 per 60 s): the worker is dead and the node exits 1,
        so that roslaunch's respawn can act; it does not idle on without its loop."""
        proc = subprocess.Popen(['rosrun', 'morai_msgs', 'pcu_emulator', '__name:=pcu_dies',
                                 '_link:=/tmp/morai_rostest_supervision_dies', '_fault_injection:=true'],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            pub = rospy.Publisher('/pcu_dies/inject_fault', String, queue_size=1)
            self.assertTrue(wait_for(lambda: pub.get_num_connections() > 0, 20.0), 'pcu_dies never subscribed')
            end = time.monotonic() + 30.0
            while proc.poll() is None and time.monotonic() < end:
                pub.publish(String('pcu_emulator_loop'))
                time.sleep(0.3)
            self.assertEqual(proc.poll(), 1, 'the node did not exit with status 1 after its worker died')
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


if __name__ == '__main__':
    rospy.init_node('test_supervision')
    rostest.rosrun('morai_msgs', 'test_supervision', SupervisionTest)
