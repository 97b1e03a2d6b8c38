#!/usr/bin/env python3
"""Peer node for test_interface: publishes morai_msgs types, serves a
MoraiScenarioLoadSrv, and runs the hand-written EgoVehicleStatus peer."""
import os
import sys

import rospy
from geometry_msgs.msg import Vector3
from std_msgs.msg import Float64MultiArray
from morai_msgs.msg import EgoVehicleStatus, ObjectStatus, ObjectStatusList
from morai_msgs.srv import MoraiScenarioLoadSrv, MoraiScenarioLoadSrvResponse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from foreign_ego import N_VALUES, ForeignEgoVehicleStatus  # noqa: E402
from morai_bridge.ros import msg_set  # noqa: E402


def make_ego():
    m = EgoVehicleStatus()
    m.header.stamp = rospy.Time(1726146361, 579000000)
    m.header.frame_id = 'map'
    m.unique_id = 7
    m.acceleration = Vector3(0.5, -0.25, 0.0)
    m.position = Vector3(90.5, 1188.875, -0.375)
    m.velocity = Vector3(2.5, 1.0, 0.0)
    m.heading = 154.84
    m.accel, m.brake = 0.5, 0.0
    msg_set.set_wheel_angles(m, -3.5)
    return m


def make_objects():
    m = ObjectStatusList()
    m.header.stamp = rospy.Time(1726146361, 600000000)
    npc = ObjectStatus(unique_id=11, type=1, name='npc', heading=90.0,
                       velocity=Vector3(36.0, 0, 0), acceleration=Vector3(0.1, 0, 0),
                       size=Vector3(4.5, 1.8, 1.5), position=Vector3(100.0, 1190.0, 0.0))
    ped = ObjectStatus(unique_id=12, type=0, name='ped', heading=-90.0,
                       size=Vector3(0.5, 0.5, 1.7), position=Vector3(95.0, 1185.0, 0.0))
    m.npc_list, m.pedestrian_list = [npc], [ped]
    m.num_of_npcs, m.num_of_pedestrian, m.num_of_obstacle = 1, 1, 0
    return m


def main():
    rospy.init_node('interface_peer')
    ego_pub = rospy.Publisher('peer/ego', EgoVehicleStatus, queue_size=1, latch=True)
    obj_pub = rospy.Publisher('peer/objects', ObjectStatusList, queue_size=1, latch=True)
    foreign_pub = rospy.Publisher('interop/from_foreign', ForeignEgoVehicleStatus, queue_size=1, latch=True)
    seen_pub = rospy.Publisher('interop/foreign_seen', Float64MultiArray, queue_size=10)

    def on_scenario(req):
        r = req.request
        ok = (r.file_name == 'lattice' and r.delete_all and not r.load_network_connection_data
              and r.load_ego_vehicle_data and r.set_pause)
        return MoraiScenarioLoadSrvResponse(response=type(MoraiScenarioLoadSrvResponse().response)(result=ok))

    rospy.Service('peer/Service_MoraiSL', MoraiScenarioLoadSrv, on_scenario)

    def on_foreign_in(msg):
        seen_pub.publish(Float64MultiArray(data=[msg.secs, msg.nsecs, msg.unique_id] + msg.values))

    rospy.Subscriber('interop/to_foreign', ForeignEgoVehicleStatus, on_foreign_in, queue_size=10)

    ego_pub.publish(make_ego())
    obj_pub.publish(make_objects())
    foreign_pub.publish(ForeignEgoVehicleStatus(
        secs=42, nsecs=500, frame_id='foreign', unique_id=3,
        values=[1, 2, 3, 4, 5, 6, 7, 8, 9, 123.5, 0.25, 0.75, -12.5] + [0.0] * (N_VALUES - 13)))
    rospy.spin()


if __name__ == '__main__':
    main()
