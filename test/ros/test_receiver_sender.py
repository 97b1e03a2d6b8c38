#!/usr/bin/env python3
"""rostest: the UDP bridge's two halves as classes, in this process (a real master, real sockets).

SimReceiver: a decoded packet is published through the stream's table entry, its counters say what happened (published, empty slots, wrong type,
decode errors, a moving ego at (0, 0)), stamps follow the simulator version.  CommandSender: the
per-stream build table, refusals that send nothing and change no state, the version's command
sign and size, the braking command on shutdown.
"""
import math
import time
import unittest

import rospy
import rostest

from morai_msgs.msg import CollisionData, CtrlCmd, EgoVehicleStatus, Lamps, ObjectStatusList

from harness import FakeSim, Waiter, wait_for, wait_for_subscribers
from morai_bridge.nodes import udp_bridge
from morai_bridge.ros.command_sender import CommandSender
from morai_bridge.ros.package_config import apply_sim_version, load_vehicle_profile
from morai_bridge.ros.params import load
from morai_bridge.ros.sim_receive import SimReceiver
from morai_bridge.wire import udp


def config(sim, ns, **over):
    """udp_bridge's parameters with the fake simulator's ports, topics under /ns, the version filled in."""
    values = dict(('%s_port' % n, p) for n, p in sim.rx_ports.items())
    values.update(('%s_port' % n, s.getsockname()[1]) for n, s in sim.cmd.items())
    values.update(emulator_sync=False, **over)
    for p in udp_bridge.PARAMS:
        if p.name.endswith('_topic'):
            values[p.name] = '/%s/%s' % (ns, p.default)
    return apply_sim_version(load(udp_bridge.PARAMS, lambda name, default: values.get(name, default)))


class ReceiverSenderTest(unittest.TestCase):

    def start_receiver(self, ns, **over):
        sim = FakeSim()
        cfg, version = config(sim, ns, **over)
        rx = SimReceiver(cfg, '127.0.0.1', '127.0.0.1', version=version)
        rx.start()
        self.addCleanup(rx.stop)
        return sim, cfg, rx

    def test_receiver_publishes_through_its_table(self):
        status = udp.make(udp.EgoVehicleStatus, 200, sec=10, nsec=5, ctrl_mode=2, gear=4, signed_vel=36.0,
                          pos_x=1.0, pos_y=2.0, vel_x=36.0, steer=-4.0)
        sim, cfg, rx = self.start_receiver('table')
        w = Waiter('/table/Ego_topic', EgoVehicleStatus)
        m = w.until(lambda: sim.send('ego_status', status), lambda m: m.header.stamp.secs == 10)
        self.assertIsNotNone(m)
        self.assertEqual((m.header.stamp.nsecs, m.position.x, m.wheel_angle), (5, 1.0, -4.0))
        self.assertAlmostEqual(m.velocity.x, 10.0, places=5)
        # counted by the receive thread after publish() returns: the message can arrive first
        self.assertTrue(wait_for(lambda: rx.stats['ego_status'].published >= 1, 5))

    def test_receiver_counts_what_it_does_not_publish(self):
        sim, cfg, rx = self.start_receiver('counts')
        st = rx.stats
        col = Waiter('/counts/CollisionData', CollisionData)
        empty = udp.CollisionRecord(-1, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        hit = udp.CollisionRecord(2, 9, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0)
        m = col.until(lambda: sim.send('collision', udp.make(udp.CollisionData, sec=3, nsec=0,
                                                             records=(empty, hit, empty))),
                      lambda m: m.header.stamp.secs == 3)
        self.assertEqual([(o.unique_id, o.type) for o in m.collision_object], [(9, 2)])
        # per packet: 2 obj_type -1 slots and 2 all-zero ones
        self.assertTrue(wait_for(lambda: st['collision'].empty_slots >= 4 and st['collision'].empty_slots % 4 == 0, 5))
        objs = Waiter('/counts/Object_topic', ObjectStatusList)
        car = udp.ObjectRecord(5, 1, 3.0, 4.0, 0, 0, 4.6, 1.9, 1.5, 0.9, 2.8, 0.9, 0, 0, 0, 0, 0, 0, 'L')
        ego = car._replace(obj_id=0, obj_type=-1)
        before = st['object_info'].empty_slots
        m = objs.until(lambda: sim.send('object_info', udp.make(udp.ObjectInfo, sec=4, nsec=0, objects=(ego, car))),
                       lambda m: m.header.stamp.secs == 4)
        self.assertEqual(m.num_of_npcs, 1)
        self.assertEqual((st['object_info'].empty_slots - before) % 19, 0)        # 18 zero + 1 type -1
        self.assertGreater(st['object_info'].empty_slots, before)
        # a status at exactly (0, 0) while moving; another message type on the port; garbage
        e = Waiter('/counts/Ego_topic', EgoVehicleStatus)
        e.until(lambda: sim.send('ego_status', udp.make(udp.EgoVehicleStatus, 200, sec=5, nsec=0, signed_vel=20.0)),
                lambda m: m.header.stamp.secs == 5)
        self.assertGreaterEqual(st['ego_status'].zero_position, 1)
        sim.send('ego_status', udp.make(udp.GetIntersectionStatus, intersection_index=1))
        sim.send('ego_status', b'#MoraiInfo$\x05\x00\x00\x00garbage')
        self.assertTrue(wait_for(lambda: st['ego_status'].wrong_type >= 1 and st['ego_status'].decode_errors >= 1, 5))

    def test_receiver_stamps_the_25_S4_imu_on_arrival(self):
        from sensor_msgs.msg import Imu
        for ns, version, want_packet_time in (('v25', '25.S4', False), ('v24', '24.R2', True)):
            sim, cfg, rx = self.start_receiver(ns, sim_version=version)
            w = Waiter('/%s/imu' % ns, Imu)
            before = rospy.Time.now()
            m = w.until(lambda: sim.send('imu', udp.make(udp.ImuData, sec=77, nsec=1, ori_w=1.0)))
            self.assertIsNotNone(m, ns)
            if want_packet_time:
                self.assertEqual((m.header.stamp.secs, m.header.stamp.nsecs), (77, 1))
            else:
                self.assertTrue(before <= m.header.stamp <= rospy.Time.now())

    def sender(self, ns, **over):
        sim = FakeSim()
        cfg, version = config(sim, ns, **over)
        tx = CommandSender(cfg, '127.0.0.1', '127.0.0.1', load_vehicle_profile(cfg.vehicle_profile))
        return sim, cfg, tx

    def test_sender_builds_per_stream_and_refuses_without_side_effects(self):
        sim, cfg, tx = self.sender('cmd')
        self.assertEqual(sorted(tx.build), sorted(n for n in tx.names if n not in ('sim_control', 'sync')))
        ctrl = rospy.Publisher('/cmd/ctrl_cmd', CtrlCmd, queue_size=1)
        lamps = rospy.Publisher('/cmd/lamps', Lamps, queue_size=1)
        wait_for_subscribers(ctrl)
        wait_for_subscribers(lamps)
        sim.drain('ctrl_cmd')
        ctrl.publish(CtrlCmd(longlCmdType=2, velocity=5.0, steering=0.1))
        c = sim.recv('ctrl_cmd')
        self.assertEqual(c.data_length, 23)                                        # 25.S4: 55 B
        self.assertAlmostEqual(c.steer, math.degrees(0.1) / 36.25, places=6)       # 25.S4: + left -> +
        lamps.publish(Lamps(turnSignal=1, emergencySignal=0))
        self.assertEqual(sim.recv('lamps').turn_signal, 1)
        self.assertTrue(wait_for(lambda: tx.lamps_state.turnSignal == 1, 2))
        refused = tx.tx_refused['lamps']
        lamps.publish(Lamps(turnSignal=7, emergencySignal=0))                      # out of range: refused
        self.assertTrue(wait_for(lambda: tx.tx_refused['lamps'] == refused + 1, 5))
        self.assertEqual(tx.lamps_state.turnSignal, 1, 'a refused Lamps message changed the lamp state')
        ctrl.publish(CtrlCmd(longlCmdType=2, velocity=float('nan')))
        self.assertTrue(wait_for(lambda: tx.tx_refused['ctrl_cmd'] == 1, 5))
        sim.drain('ctrl_cmd')
        tx.shutdown()
        last = sim.recv('ctrl_cmd')
        self.assertEqual((last.cmd_type, last.accel, last.brake), (1, 0.0, 1.0))

    def test_sender_follows_the_version(self):
        for ns, version, size, sign in (('s24', '24.R2', 23, -1), ('s26', '26.R1', 27, 1)):
            sim, cfg, tx = self.sender(ns, sim_version=version)
            pub = rospy.Publisher('/%s/ctrl_cmd' % ns, CtrlCmd, queue_size=1)
            wait_for_subscribers(pub)
            sim.drain('ctrl_cmd')
            pub.publish(CtrlCmd(longlCmdType=2, velocity=5.0, steering=0.1))
            c = sim.recv('ctrl_cmd')
            self.assertEqual(c.data_length, size, version)
            self.assertAlmostEqual(c.steer, sign * math.degrees(0.1) / 36.25, places=6)
            tx.shutdown()


if __name__ == '__main__':
    rospy.init_node('test_receiver_sender')
    time.sleep(0.1)
    rostest.rosrun('morai_msgs', 'test_receiver_sender', ReceiverSenderTest)
