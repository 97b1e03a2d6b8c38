#!/usr/bin/env python3
"""A client of the bridge that knows nothing of this repository: code built against upstream.

    upstream_client.py build SET WORKSPACE    a catkin workspace holding only a package morai_msgs
                                              made from upstream's field lists of the set
                                              (test/data/msg_sets/SET.fields.json), then catkin_make
    upstream_client.py drive SET              (in that workspace's environment) the client node:
                                              /Ego_topic, /Object_topic and /CollisionData arrive
                                              (rospy's md5 handshake accepts them), and the ego turns
                                              left under its /ctrl_cmd

The sets test layer runs `drive` against the emulator and the bridge of the set's own workspace
(demo.launch driver:=false): a team's code built from MORAI's morai_msgs at that commit must work
with the bridge unchanged.  `drive` imports nothing but rospy and the client's morai_msgs.
"""
import json
import math
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PACKAGE_XML = """<?xml version="1.0"?>
<package format="2">
  <name>morai_msgs</name>
  <version>0.0.0</version>
  <description>morai_msgs built from upstream's field lists (set {set}), for a test</description>
  <maintainer email="test@example.com">test</maintainer>
  <license>BSD</license>
  <buildtool_depend>catkin</buildtool_depend>
  <build_depend>message_generation</build_depend>
  <depend>std_msgs</depend>
  <depend>geometry_msgs</depend>
  <exec_depend>message_runtime</exec_depend>
</package>
"""

CMAKE = """cmake_minimum_required(VERSION 3.0.2)
project(morai_msgs)
find_package(catkin REQUIRED COMPONENTS std_msgs geometry_msgs message_generation)
add_message_files(FILES {msgs})
add_service_files(FILES {srvs})
generate_messages(DEPENDENCIES std_msgs geometry_msgs)
catkin_package(CATKIN_DEPENDS std_msgs geometry_msgs message_runtime)
"""


def build(set_name, ws, log):
    """Write the client's morai_msgs into ws/src and build it with catkin_make (env: ROS only)."""
    with open(os.path.join(ROOT, 'test', 'data', 'msg_sets', set_name + '.fields.json')) as f:
        types = json.load(f)['types']
    pkg = os.path.join(ws, 'src', 'morai_msgs')
    for kind in ('msg', 'srv'):
        os.makedirs(os.path.join(pkg, kind), exist_ok=True)
    for name, t in types.items():
        with open(os.path.join(pkg, t['kind'], name + '.' + t['kind']), 'w') as f:
            f.write(t['text'])
    with open(os.path.join(pkg, 'package.xml'), 'w') as f:
        f.write(PACKAGE_XML.format(set=set_name))
    with open(os.path.join(pkg, 'CMakeLists.txt'), 'w') as f:
        f.write(CMAKE.format(msgs=' '.join(sorted(n + '.msg' for n, t in types.items() if t['kind'] == 'msg')),
                             srvs=' '.join(sorted(n + '.srv' for n, t in types.items() if t['kind'] == 'srv'))))
    noetic = 'source /opt/ros/noetic/setup.bash; ' if os.path.exists('/opt/ros/noetic/setup.bash') else ''
    env = {'HOME': os.environ.get('HOME', '/tmp'), 'PATH': '/usr/bin:/bin:/usr/sbin:/sbin', 'LANG': 'C.UTF-8'}
    with open(log, 'w') as out:
        return subprocess.run(['bash', '-c', 'set -e; %scd %s && catkin_make -DPYTHON_EXECUTABLE=/usr/bin/python3'
                               % (noetic, ws)], env=env, stdout=out, stderr=subprocess.STDOUT, timeout=1200).returncode


def drive(set_name):
    import rospy
    from morai_msgs.msg import CollisionData, CtrlCmd, EgoVehicleStatus, ObjectStatusList
    rospy.init_node('upstream_client', anonymous=True)
    got = {'ego': [], 'objects': [], 'collision': []}
    subs = [rospy.Subscriber('/Ego_topic', EgoVehicleStatus, got['ego'].append, queue_size=100),
            rospy.Subscriber('/Object_topic', ObjectStatusList, got['objects'].append, queue_size=100),
            rospy.Subscriber('/CollisionData', CollisionData, got['collision'].append, queue_size=100)]
    pub = rospy.Publisher('/ctrl_cmd', CtrlCmd, queue_size=1)
    end = time.monotonic() + 40.0
    while time.monotonic() < end and not all(got.values()):
        time.sleep(0.1)
    missing = [k for k, v in got.items() if not v]
    if missing:
        print(f'upstream client (set {set_name}): nothing on {missing} within 40 s (md5 handshake refused?)')
        return 1
    first = got['ego'][-1]
    steer = 0.2                                    # rad, + left (MORAI's native ROS mode)
    t_end = time.monotonic() + 8.0
    while time.monotonic() < t_end:
        cmd = CtrlCmd(longlCmdType=2, velocity=15.0)
        if hasattr(cmd, 'front_steer'):
            cmd.front_steer = steer
        else:
            cmd.steering = steer
        pub.publish(cmd)
        time.sleep(0.05)
    last = got['ego'][-1]
    moved = math.hypot(last.position.x - first.position.x, last.position.y - first.position.y)
    turned = (last.heading - first.heading + 180.0) % 360.0 - 180.0
    wheel = last.front_steer_angle if hasattr(last, 'front_steer_angle') else last.wheel_angle
    ok = moved > 5.0 and turned > 10.0 and wheel < -1.0
    print('upstream client (set %s): %d status, %d object, %d collision messages; moved %.1f m, heading %+.1f deg, '
          'front wheel %+.1f deg (+ right): %s' % (set_name, len(got['ego']), len(got['objects']),
                                                   len(got['collision']), moved, turned, wheel,
                                                   'drives' if ok else 'FAILED to drive left'))
    for s in subs:
        s.unregister()
    return 0 if ok else 1


if __name__ == '__main__':
    if sys.argv[1:2] == ['build']:
        sys.exit(build(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else '/dev/null'))
    sys.exit(drive(sys.argv[2]))
