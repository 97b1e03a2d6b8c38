#!/usr/bin/env python3
"""rostest: the erp42_serial node against the PCU emulator on a real pty."""
import math
import os
import time
import unittest

import rospy
import rostest
from diagnostic_msgs.msg import DiagnosticArray
from morai_msgs.msg import CtrlCmd, EgoVehicleStatus, ERP42Info
from std_msgs.msg import Bool

from morai_bridge.emu.pcu import PcuEmulator
from morai_bridge.emu.pcu.vehicle import VehicleModel
from harness import Latest, wait_for

LINK = '/tmp/morai_rostest_erp42'


class Erp42SerialTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.pcu = PcuEmulator(link=LINK, init_s=0.0, vehicle=VehicleModel(), seed=1).start()
        cls.ctrl = rospy.Publisher('/ctrl_cmd', CtrlCmd, queue_size=1)
        cls.estop = rospy.Publisher('/erp42_serial/estop', Bool, queue_size=1, latch=True)
        cls.info = Latest('/erp42_serial/erp42_info', ERP42Info)
        cls.ego = Latest('/erp42_serial/ego_status', EgoVehicleStatus)
        cls.diag = Latest('/diagnostics', DiagnosticArray)
        cls.diag_link = {}
        rospy.Subscriber('/diagnostics', DiagnosticArray, cls._on_diag)
        ok = wait_for(lambda: cls.pcu.state.frames_ok > 10, 15.0)
        assert ok, 'the node never sent frames to the emulator'

    @classmethod
    def tearDownClass(cls):
        cls.pcu.close()

    @classmethod
    def _on_diag(cls, m):
        for s in m.status:
            if s.name.endswith('ERP-42 serial link'):
                cls.diag_link = {kv.key: kv.value for kv in s.values}
                cls.diag_link['_level'] = s.level
                cls.diag_link['_message'] = s.message

    def drive(self, velocity, steering, seconds, longl=2, accel=0.0, brake=0.0):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.ctrl.publish(CtrlCmd(longlCmdType=longl, velocity=velocity, steering=steering,
                                      accel=accel, brake=brake))
            time.sleep(0.05)

    def test_1_command_conversion_and_feedback(self):
        # Acceptance: 10 km/h, +0.1 rad (left) -> SPEED 100, STEER -407 on the wire.
        self.drive(10.0, 0.1, 2.5)
        c = self.pcu.state.command
        self.assertEqual((c.aorm, c.estop, c.gear, c.speed, c.steer, c.brake), (1, 0, 0, 100, -407, 1))
        st = self.pcu.state
        self.assertEqual(str(st.mode), 'AUTO')
        # feedback converted back: km/h and degrees, left positive
        self.assertIsNotNone(self.info.wait(timeout=5.0))
        self.assertTrue(wait_for(lambda: abs(self.info.msg.velocity - 10.0) < 0.5, 5.0),
                        f'ERP42Info.velocity {self.info.msg.velocity!r}')
        self.assertAlmostEqual(self.info.msg.steering, math.degrees(0.1), delta=0.05)
        self.assertAlmostEqual(self.ego.msg.velocity.x, self.info.msg.velocity / 3.6, delta=0.15)
        self.assertGreater(self.ego.msg.wheel_angle, 5.0)

    def test_2_cadence_and_alive(self):
        s0 = self.pcu.state
        t0 = time.monotonic()
        self.drive(5.0, 0.0, 2.0)
        s1 = self.pcu.state
        rate = (s1.frames_ok - s0.frames_ok) / (time.monotonic() - t0)
        self.assertTrue(35.0 < rate < 65.0, f'command frame rate {rate:.1f} Hz')
        self.assertEqual(s1.alive_errors, 0, 'ALIVE did not step by one')

    def test_3_reverse_and_throttle_mode(self):
        self.drive(0.0, 0.0, 3.0)                 # come to rest so the gear can change
        self.drive(-3.0, -0.05, 2.0)
        c = self.pcu.state.command
        self.assertEqual((c.gear, c.speed), (2, 30))
        self.assertEqual(c.steer, round(math.degrees(0.05) * 71))
        self.drive(0.0, 0.0, 3.0)
        self.drive(0.0, 0.0, 1.0, longl=1, accel=0.5, brake=0.0)   # half pedal of 20 km/h
        c = self.pcu.state.command
        self.assertEqual((c.gear, c.speed), (0, 100))

    def test_4_nan_refused_and_timeout_stops(self):
        # /ctrl_cmd is a queue-of-one on both ends (the latest command wins), so a second
        # command published straight after the first may replace it unseen: each bad
        # command is sent alone and its rejection counted before the next one.
        base = int(self.diag_link.get('commands rejected', 0))
        for n, bad in enumerate((CtrlCmd(longlCmdType=2, velocity=float('nan'), steering=0.0),
                                 CtrlCmd(longlCmdType=2, velocity=5.0, steering=float('inf'))), 1):
            self.drive(8.0, 0.0, 1.0)
            before = self.pcu.state.command
            self.ctrl.publish(bad)
            time.sleep(0.15)
            c = self.pcu.state.command
            self.assertEqual(c.speed, before.speed)  # the NaN/inf command changed nothing
            self.assertTrue(wait_for(lambda: int(self.diag_link.get('commands rejected', 0)) >= base + n,
                                     3.0), self.diag_link)
        self.assertIn('steering is inf', self.diag_link['last rejected command'])
        # then silence: after cmd_timeout_s (0.5 s) the node sends stop frames
        self.assertTrue(wait_for(lambda: self.pcu.state.command.speed == 0
                                 and self.pcu.state.command.brake == 150, 2.0))
        self.assertTrue(wait_for(lambda: int(self.diag_link.get('command timeouts', 0)) >= 1, 3.0),
                        self.diag_link)

    def test_5_estop_topic(self):
        self.estop.publish(Bool(True))
        self.drive(5.0, 0.0, 1.0)
        c = self.pcu.state.command
        self.assertEqual((c.estop, c.speed, c.brake), (1, 0, 150))
        self.estop.publish(Bool(False))
        self.drive(5.0, 0.0, 1.0)
        self.assertEqual(self.pcu.state.command.estop, 0)

    def test_5b_noise_false_headers_split_frames(self):
        self.drive(6.0, 0.0, 1.5)
        before = dict(self.diag_link)
        n = self.info.count
        self.pcu.noise_bytes, self.pcu.false_headers, self.pcu.split_writes = 7, True, 4
        try:
            self.drive(6.0, 0.0, 2.0)
        finally:
            self.pcu.noise_bytes, self.pcu.false_headers, self.pcu.split_writes = 0, False, 0
        got = self.info.count - n
        self.assertGreater(got, 60, 'only %d feedback messages in 2 s of noisy stream' % got)
        self.assertAlmostEqual(self.info.msg.velocity, 6.0, delta=0.5)
        self.assertTrue(wait_for(lambda: int(self.diag_link.get('bytes discarded', 0))
                                 > int(before.get('bytes discarded', 0)) + 100, 3.0), self.diag_link)
        self.assertTrue(int(self.diag_link['candidates rejected']) > int(before.get('candidates rejected', 0)))

    def test_6_unplug_replug_ten_times(self):
        recover = []
        base_outages = int(self.diag_link.get('outages', 0)) if self.diag_link else 0
        for i in range(10):
            self.pcu.unplug()
            self.assertFalse(os.path.exists(LINK))
            time.sleep(0.3)
            self.pcu.replug()
            t0 = time.monotonic()
            n0 = self.pcu.state.frames_ok
            ok = wait_for(lambda: self.pcu.state.frames_ok > n0 + 2, 5.0, step=0.005)
            self.assertTrue(ok, 'no recovery after replug %d' % (i + 1))
            recover.append(time.monotonic() - t0)
        print('recovery after replug [s]: %s' % ' '.join('%.3f' % r for r in recover))
        self.assertLess(max(recover), 1.0)
        self.assertTrue(wait_for(lambda: int(self.diag_link.get('outages', 0)) >= base_outages + 10, 3.0),
                        self.diag_link)
        # feedback flows again to the topics
        n = self.info.count
        self.assertTrue(wait_for(lambda: self.info.count > n + 10, 3.0))

    def test_7_alive_stepped_by_one_across_wraps(self):
        self.drive(3.0, 0.0, 1.0)
        st = self.pcu.state
        self.assertGreater(st.frames_ok, 600, 'too few frames to have wrapped ALIVE twice')
        self.assertEqual(st.alive_errors, 0)
        # nothing out of the protocol's range ever reached the PCU (NaN/inf commands were refused)
        self.assertEqual((st.clamped, st.soft_violations, st.frames_rejected), (0, 0, 0))


if __name__ == '__main__':
    rospy.init_node('test_erp42_serial')
    rostest.rosrun('morai_msgs', 'test_erp42_serial', Erp42SerialTest)
