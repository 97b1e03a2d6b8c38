#!/usr/bin/env python3
"""Runs inside the bridge's network namespace (see test_two_hosts.py): drives the
emulated ego through the bridge and reports what it saw as one JSON line."""
import json
import math
import sys
import time

import rospy
from diagnostic_msgs.msg import DiagnosticArray
from morai_msgs.msg import CtrlCmd, EgoVehicleStatus

rospy.init_node('two_hosts_checker')
out = {}
first = rospy.wait_for_message('/Ego_topic', EgoVehicleStatus, timeout=30.0)
out['stamp_secs'] = first.header.stamp.secs
pub = rospy.Publisher('/ctrl_cmd', CtrlCmd, queue_size=1)
end = time.monotonic() + 6.0
while time.monotonic() < end:
    pub.publish(CtrlCmd(longlCmdType=2, velocity=20.0, steering=0.0))
    time.sleep(0.05)
last = rospy.wait_for_message('/Ego_topic', EgoVehicleStatus, timeout=5.0)
out['moved_m'] = math.hypot(last.position.x - first.position.x, last.position.y - first.position.y)
out['speed_kmh'] = math.hypot(last.velocity.x, last.velocity.y) * 3.6
print('ready for foreign datagrams', flush=True)
sys.stdin.readline()          # the test sends them from the third address, then a newline
end = time.monotonic() + 10.0
while time.monotonic() < end:
    d = rospy.wait_for_message('/diagnostics', DiagnosticArray, timeout=5.0)
    for s in d.status:
        if s.name.startswith('udp_bridge: UDP ego_status'):
            v = {kv.key: kv.value for kv in s.values}
            out['foreign'] = int(v['from unexpected hosts'])
            out['last_foreign'] = v['last unexpected sender']
    if out.get('foreign'):
        break
print(json.dumps(out), flush=True)
