#!/usr/bin/env python3
"""rostest: Serial+UDP mode end to end.

/ctrl_cmd -> erp42_serial -> pty -> PCU emulator -> emulated ego -> UDP ->
udp_bridge -> /Ego_topic, with the bridge's own ctrl-cmd stream disabled.
"""
import math
import os
import time
import unittest

import roslaunch
import rosnode
import rospy
import rostest
from diagnostic_msgs.msg import DiagnosticArray

from morai_msgs.msg import CtrlCmd, EgoVehicleStatus, ERP42Info
from harness import Latest, wait_for

HERE = os.path.dirname(os.path.realpath(__file__))
LAUNCH = os.path.join(HERE, '..', '..', 'launch')
LINK = '/tmp/morai_rostest_serial_udp'


class SerialUdpTest(unittest.TestCase):

    def test_serial_commands_move_the_udp_ego(self):
        uuid = roslaunch.rlutil.get_or_generate_uuid(None, False)
        roslaunch.configure_logging(uuid)
        sim = roslaunch.parent.ROSLaunchParent(uuid, [(os.path.join(LAUNCH, 'sim_emulator.launch'), [
            f'erp42_link:={LINK}', 'scenario:=sample', 'output:=log', 'privileged_port_offset:=1000'])])
        sim.start()
        drv = roslaunch.parent.ROSLaunchParent(uuid, [(os.path.join(LAUNCH, 'erp42_serial_udp.launch'), [
            f'port:={LINK}', 'output:=log', 'privileged_port_offset:=1000'])])
        drv.start()
        diag = {}

        def on_diag(m):
            for s in m.status:
                diag[s.name] = {kv.key: kv.value for kv in s.values}
        rospy.Subscriber('/diagnostics', DiagnosticArray, on_diag)
        ego = Latest('/Ego_topic', EgoVehicleStatus)
        ego_count = [0]
        rospy.Subscriber('/Ego_topic', EgoVehicleStatus, lambda m: ego_count.__setitem__(0, ego_count[0] + 1))
        info = Latest('/erp42_serial/erp42_info', ERP42Info)
        ctrl = rospy.Publisher('/ctrl_cmd', CtrlCmd, queue_size=1)
        try:
            self.assertTrue(wait_for(lambda: ego.msg is not None and info.msg is not None, 30.0),
                            f'ego {ego.msg is not None!r}, erp42_info {info.msg is not None!r}')
            x0, y0 = ego.msg.position.x, ego.msg.position.y
            end = time.monotonic() + 6.0
            while time.monotonic() < end:
                ctrl.publish(CtrlCmd(longlCmdType=2, velocity=10.0, steering=0.0))
                time.sleep(0.05)
            v = math.hypot(ego.msg.velocity.x, ego.msg.velocity.y)
            self.assertAlmostEqual(v, 10.0 / 3.6, delta=0.4, msg=f'UDP ego speed {v:.2f} m/s')
            self.assertGreater(math.hypot(ego.msg.position.x - x0, ego.msg.position.y - y0), 5.0)
            self.assertAlmostEqual(info.msg.velocity, 10.0, delta=1.0)       # serial feedback, km/h
            self.assertAlmostEqual(info.msg.position_x, ego.msg.position.x, delta=1.0)   # ground truth
            # the UDP bridge's ctrl-cmd stream is off: the emulator got no UDP ctrl command
            self.assertTrue(wait_for(lambda: any(k.startswith('ctrl_cmd') for k in
                                                 diag.get('sim_emulator: Simulator emulator', {})), 5.0), diag)
            emu = diag['sim_emulator: Simulator emulator']
            key = [k for k in emu if k.startswith('ctrl_cmd')][0]
            self.assertTrue(emu[key].startswith('received 0,'), emu[key])
            self.assertEqual(emu['PCU mode'], 'AUTO')
            # the serial driver goes away (only it: the UDP bridge keeps reporting the ego):
            # stop frames, then the PCU's watchdog (AUTO_FAIL) holds the ego
            n = ego_count[0]
            self.assertEqual(rosnode.kill_nodes(['/erp42_serial'])[1], [])
            self.assertTrue(wait_for(lambda: math.hypot(ego.msg.velocity.x, ego.msg.velocity.y) < 0.05, 10.0),
                            'the ego kept moving after the serial driver stopped')
            self.assertGreater(ego_count[0], n + 50, 'the UDP ego status stopped flowing')
            self.assertTrue(wait_for(lambda: diag['sim_emulator: Simulator emulator'].get('PCU mode') ==
                                     'AUTO_FAIL', 6.0), diag.get('sim_emulator: Simulator emulator'))
        finally:
            drv.shutdown()
            sim.shutdown()


if __name__ == '__main__':
    rospy.init_node('test_serial_udp')
    rostest.rosrun('morai_msgs', 'test_serial_udp', SerialUdpTest)
