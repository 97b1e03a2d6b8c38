#!/usr/bin/env python3
"""Used by `bash tools/dev.sh install-check` while `roslaunch morai_msgs demo.launch` runs from an
install space: /morai/markers must show one box per object of /Object_topic plus the ego.

Prints one line and exits 0 when it does within the timeout (seconds, argument 1; default 60)."""
import sys
import time

import rospy
from visualization_msgs.msg import Marker, MarkerArray

from morai_msgs.msg import ObjectStatusList

BOXES = {'ego': 'ego', 'npc': 'npc_list', 'pedestrian': 'pedestrian_list', 'obstacle': 'obstacle_list'}


def main():
    timeout = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    rospy.init_node('install_check_markers', anonymous=True)
    end = time.monotonic() + timeout
    last = 'nothing received'
    while time.monotonic() < end and not rospy.is_shutdown():
        try:
            objs = rospy.wait_for_message('/Object_topic', ObjectStatusList, timeout=10.0)
            arr = rospy.wait_for_message('/morai/markers', MarkerArray, timeout=10.0)
        except rospy.ROSException as e:
            last = str(e)
            continue
        boxes = {}
        for m in arr.markers:
            if m.action == Marker.ADD and m.type == Marker.CUBE and m.ns in BOXES:
                boxes[m.ns] = boxes.get(m.ns, 0) + 1
        want = {'ego': 1}
        for ns, field in BOXES.items():
            if ns != 'ego' and getattr(objs, field):
                want[ns] = len(getattr(objs, field))
        n_objects = sum(v for k, v in want.items() if k != 'ego')
        last = f'boxes {boxes}, expected {want}'
        if boxes == want and n_objects > 0:
            print('markers: %d boxes = %d objects + the ego (%s)' % (sum(boxes.values()), n_objects, boxes))
            return 0
        time.sleep(0.5)
    print(f'markers: not as expected within {timeout:.0f} s: {last}')
    return 1


if __name__ == '__main__':
    sys.exit(main())
