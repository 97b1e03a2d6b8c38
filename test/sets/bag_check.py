#!/usr/bin/env python3
"""A bag of one message set, fixed for another: run in the target set's workspace.

    bag_check.py ORIGINAL FIXED

Checks that FIXED (what `morai_bag_fix ORIGINAL FIXED` wrote in this workspace) holds every message
of ORIGINAL, each in this workspace's classes (same type and md5, so `rosbag play` publishes it to
this set's subscribers), with what both definitions have unchanged: stamps, positions, headings,
the front wheel angle (wheel_angle <-> front_steer_angle) and the commanded front steer (steering
<-> front_steer).  Prints one line; exit status 1 on a difference.
"""
import sys

import genpy
import rosbag


# the recorded topics' types whose md5 differs between the sets (each must be in the bag)
MIGRATING = ('morai_msgs/EgoVehicleStatus', 'morai_msgs/CollisionData', 'morai_msgs/CtrlCmd')


def front_angle(m):
    return m.front_steer_angle if hasattr(m, 'front_steer_angle') else m.wheel_angle


def front_steer(m):
    return m.front_steer if hasattr(m, 'front_steer') else m.steering


def same_values(a, b):
    """What both definitions carry, equal (float32 fields compare exactly: nothing is recomputed)."""
    t = a._type
    if t == 'morai_msgs/EgoVehicleStatus':
        return (a.header.stamp, a.position.x, a.position.y, a.heading, a.velocity.x, a.accel, front_angle(a)) == \
            (b.header.stamp, b.position.x, b.position.y, b.heading, b.velocity.x, b.accel, front_angle(b))
    if t == 'morai_msgs/CollisionData':
        return (a.header.stamp, a.global_offset_x, [(o.unique_id, o.position.x) for o in a.collision_object]) == \
            (b.header.stamp, b.global_offset_x, [(o.unique_id, o.position.x) for o in b.collision_object])
    if t == 'morai_msgs/CtrlCmd':
        return (a.longlCmdType, a.velocity, front_steer(a)) == (b.longlCmdType, b.velocity, front_steer(b))
    return True


def main(original, fixed):
    orig = list(rosbag.Bag(original).read_messages())
    out = list(rosbag.Bag(fixed).read_messages())
    problems = []
    if len(orig) != len(out):
        problems.append(f'{len(orig)} messages in, {len(out)} out')
    types = {}
    for (topic_a, a, t_a), (topic_b, b, t_b) in zip(orig, out):
        system = genpy.message.get_message_class(b._type)
        if b._md5sum != system._md5sum:
            problems.append(f'{b._type} on {topic_b} has md5 {b._md5sum}, this workspace {system._md5sum}')
            break
        if (topic_a, t_a) != (topic_b, t_b) or not same_values(a, b):
            problems.append(f'{topic_a} at {t_a} differs after the fix')
            break
        types[b._type] = (a._md5sum[:8], b._md5sum[:8])
    missing = sorted(set(MIGRATING) - set(types))
    if missing:     # the bag must hold every type whose definition differs between the sets
        problems.append(f"the bag has no {', '.join(missing)}")
    print('bag_check: %d messages; %s; %s' % (len(out), ', '.join('%s %s -> %s' % (k.split('/')[1], v[0], v[1])
                                                                 for k, v in sorted(types.items())),
                                             '; '.join(problems) or 'values kept'))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], sys.argv[2]))
