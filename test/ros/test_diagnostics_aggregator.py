#!/usr/bin/env python3
"""rostest: diagnostic_aggregator with config/diagnostics_aggregator.yaml on the demo publishes the
hierarchy rqt_robot_monitor shows: /MORAI, one group per node, the node's statuses inside."""
import time
import unittest

import rospy
import rostest
from diagnostic_msgs.msg import DiagnosticArray

EXPECTED = [
    '/MORAI',
    '/MORAI/UDP bridge',
    '/MORAI/UDP bridge/UDP ego_status (port 1909)',      # root namespace: the node prefix is removed; the demo's port
    '/MORAI/UDP bridge/UDP commands',
    '/MORAI/UDP bridge/Simulator control state',
    '/MORAI/Simulator emulator',
    '/MORAI/Simulator emulator/Simulator emulator',
    '/MORAI/Markers',
    '/MORAI/Markers/RViz markers',
    '/MORAI/Sensor bridge',                              # no sensor node runs: the group is there, empty
    '/MORAI/ERP-42 serial',
    '/MORAI/ERP-42 serial/erp erp42_serial: ERP-42 serial link',   # in /erp: "/" becomes " "
    '/MORAI/ERP-42 serial/erp erp42_serial: ERP-42 PCU state',
    '/MORAI/PCU emulator',
    '/MORAI/PCU emulator/erp pcu_emulator: ERP-42 PCU emulator',
]


class AggregatorTest(unittest.TestCase):

    def test_hierarchy(self):
        end = time.monotonic() + 45.0
        names, missing = set(), EXPECTED
        while time.monotonic() < end:
            msg = rospy.wait_for_message('/diagnostics_agg', DiagnosticArray, timeout=15.0)
            names = {s.name for s in msg.status}
            missing = [n for n in EXPECTED if n not in names]
            if not missing:
                break
        print(f'/diagnostics_agg: {sorted(names)}')
        self.assertEqual(missing, [], f'missing in /diagnostics_agg: {missing}; present: {sorted(names)}')
        # nothing of ours left over in /Other
        others = sorted(n for n in names if n.startswith('/Other/'))
        self.assertEqual(others, [], f'statuses no analyzer claimed: {others}')
        # every item under a group is the group's: each status of udp_bridge is under /MORAI/UDP bridge
        udp = [n for n in names if n.startswith('/MORAI/UDP bridge/UDP ')]
        self.assertGreaterEqual(len(udp), 10)


if __name__ == '__main__':
    rospy.init_node('test_diagnostics_aggregator')
    rostest.rosrun('morai_msgs', 'test_diagnostics_aggregator', AggregatorTest)
