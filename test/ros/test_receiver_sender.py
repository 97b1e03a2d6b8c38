#!/usr/bin/env python3
"""rostest: the UDP bridge's two halves as classes, in this process (a real master, real sockets).

SimReceiver: a decoded packet is published through the stream's table entry, its counters say what happened (published, empty slots, wrong type,
decode errors, a moving ego at (0, 0)), stamps follow the simulator version.  CommandSender: the
per-stream build table, refusals that send nothing and change no state, the version's command
sign and size, the braking command on shutdown.
"""
import collections
import logging
import math
import os
import socket
import sys
import threading
import time
import unittest

import rospy
import rostest

from morai_msgs.msg import CollisionData, CtrlCmd, EgoVehicleStatus, Lamps, ObjectStatusList

from harness import FakeSim, Waiter, wait_for, wait_for_subscribers
from morai_bridge.nodes import udp_bridge
from morai_bridge.ros.udp_bridge.command_sender import CommandSender
from morai_bridge.ros.package_config import apply_sim_version, load_vehicle_profile
from morai_bridge.ros.params import load
from morai_bridge.ros.udp_bridge.sim_receive import SimReceiver
from morai_bridge.wire.udp import streams
from morai_bridge.wire import udp


def config(sim, ns, **over):
    """udp_bridge's parameters with the fake simulator's ports, topics under /ns, the version filled in."""
    values = {f'{n}_port': p for n, p in sim.rx_ports.items()}
    values.update((f'{n}_port', s.getsockname()[1]) for n, s in sim.cmd.items())
    values.update(emulator_sync=False, **over)
    for p in udp_bridge.PARAMS:
        if p.name.endswith('_topic'):
            values[p.name] = f'/{ns}/{p.default}'
    return apply_sim_version(load(udp_bridge.PARAMS, lambda name, default: values.get(name, default)))


def modules_run(fn, *args):
    """The project's modules (paths under src/morai_bridge) whose Python functions run while
    ``fn(*args)`` runs in this thread (sys.setprofile: every call, whatever its depth)."""
    root = os.path.dirname(os.path.abspath(udp_bridge.__file__ + '/..'))
    seen = set()

    def profile(frame, event, arg):
        if event == 'call' and frame.f_code.co_filename.startswith(root):
            seen.add(os.path.relpath(frame.f_code.co_filename, root))
    sys.setprofile(profile)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return sorted(seen)


def modules_run_in_started_threads(start, act, done, timeout=5.0):
    """The project's modules whose Python functions run in the threads ``start()`` starts, from
    ``act()`` until ``done()`` holds (threading.setprofile while they start; every call counted)."""
    root = os.path.dirname(os.path.abspath(udp_bridge.__file__ + '/..'))
    seen, threads, armed = set(), set(), threading.Event()

    def profile(frame, event, arg):
        if armed.is_set() and event == 'call' and frame.f_code.co_filename.startswith(root):
            seen.add(os.path.relpath(frame.f_code.co_filename, root))
            threads.add(threading.current_thread().name)
    threading.setprofile(profile)
    try:
        start()
    finally:
        threading.setprofile(None)
    armed.set()
    try:
        act()
        ok = wait_for(done, timeout)
    finally:
        armed.clear()
    assert ok, 'the datagram did not come through'
    return sorted(seen), sorted(threads)


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

    def test_newest_sample_rule(self):
        """Issue 50: a packet older than the last published (the link held it back) or with its time (a copy)
        is counted and not published; one older by ~reorder_window or more is the simulator's clock starting
        again: published.  The same for objects (every stream stamped from its packets)."""
        sim, cfg, rx = self.start_receiver('order', state_queue_size=100)
        w = Waiter('/order/Ego_topic', EgoVehicleStatus)
        first = w.until(lambda: sim.send('ego_status', udp.make(udp.EgoVehicleStatus, 200, sec=100, nsec=0)),
                        lambda m: m.header.stamp.secs == 100)
        self.assertIsNotNone(first)
        ms = 1000000
        for sec, nsec in ((100, 40 * ms), (100, 20 * ms), (100, 40 * ms), (100, 60 * ms), (99, 500 * ms),
                          (90, 0), (90, 20 * ms)):
            sim.send('ego_status', udp.make(udp.EgoVehicleStatus, 200, sec=sec, nsec=nsec))
        self.assertIsNotNone(w.wait(lambda m: (m.header.stamp.secs, m.header.stamp.nsecs) == (90, 20 * ms), 5))
        with w.cond:
            got = [(m.header.stamp.secs, m.header.stamp.nsecs // ms) for m in w.msgs]
        self.assertEqual(got[got.index((100, 0)):], [(100, 0), (100, 40), (100, 60), (90, 0), (90, 20)])
        counts = rx.stats['ego_status'].counts
        # (100, 20) and (99, 500) reordered, (100, 40) a copy (plus until()'s resends of (100, 0), if any)
        self.assertTrue(wait_for(lambda: (counts['reordered'], counts['clock_restarts']) == (2, 1), 5), counts)
        self.assertGreaterEqual(counts['duplicates'], 1)
        self.assertEqual(len(got), len(set(got)))

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
        self.assertTrue(wait_for(lambda: st['collision'].counts['empty_slots'] >= 4 and st['collision'].counts['empty_slots'] % 4 == 0, 5))
        objs = Waiter('/counts/Object_topic', ObjectStatusList)
        car = udp.ObjectRecord(5, 1, 3.0, 4.0, 0, 0, 4.6, 1.9, 1.5, 0.9, 2.8, 0.9, 0, 0, 0, 0, 0, 0, 'L')
        ego = car._replace(obj_id=0, obj_type=-1)
        before = st['object_info'].counts['empty_slots']
        m = objs.until(lambda: sim.send('object_info', udp.make(udp.ObjectInfo, sec=4, nsec=0, objects=(ego, car))),
                       lambda m: m.header.stamp.secs == 4)
        self.assertEqual(m.num_of_npcs, 1)
        self.assertEqual((st['object_info'].counts['empty_slots'] - before) % 19, 0)        # 18 zero + 1 type -1
        self.assertGreater(st['object_info'].counts['empty_slots'], before)
        # a status at exactly (0, 0) while moving; another message type on the port; garbage
        e = Waiter('/counts/Ego_topic', EgoVehicleStatus)
        e.until(lambda: sim.send('ego_status', udp.make(udp.EgoVehicleStatus, 200, sec=5, nsec=0, signed_vel=20.0)),
                lambda m: m.header.stamp.secs == 5)
        self.assertGreaterEqual(st['ego_status'].counts['zero_position'], 1)
        sim.send('ego_status', udp.make(udp.GetIntersectionStatus, intersection_index=1))
        sim.send('ego_status', b'#MoraiInfo$\x05\x00\x00\x00garbage')
        self.assertTrue(wait_for(lambda: st['ego_status'].wrong_type >= 1 and st['ego_status'].decode_errors >= 1, 5))

    def test_receiver_stamps_the_25_S4_imu_on_arrival(self):
        """Each resend carries a new packet time: the receiver drops an IMU packet whose time repeats
        (a catch-up burst), so resending one packet cannot make up for a first message published in
        the moment before rospy's publisher counts the new subscriber (seen on Debian 13 and 12 under
        load: the first packet published to nobody, the nine resends counted as duplicates)."""
        from sensor_msgs.msg import Imu
        for ns, version, want_packet_time in (('v25', '25.S4', False), ('v24', '24.R2', True)):
            sim, cfg, rx = self.start_receiver(ns, sim_version=version)
            w = Waiter(f'/{ns}/imu', Imu)
            before = rospy.Time.now()
            stamps = iter(range(1, 1000))
            m = w.until(lambda: sim.send('imu', udp.make(udp.ImuData, sec=77, nsec=next(stamps), ori_w=1.0)))
            self.assertIsNotNone(m, ns)
            self.assertEqual(rx.stats['imu'].counts['duplicates'], 0, ns)
            if want_packet_time:
                self.assertEqual(m.header.stamp.secs, 77)
                self.assertIn(m.header.stamp.nsecs, range(1, next(stamps)))     # one of the packets sent
            else:
                self.assertTrue(before <= m.header.stamp <= rospy.Time.now())

    def test_gps_blackout_is_no_fix(self):
        """25.S4 in a GPS blackout zone sends 0000.0000,N,00000.0000,E with RMC status A (AISW
        udp_bridge.py @c7798bc) and GGA quality 1 (hard-coded: the heven report @4d26e0e): published
        with NavSatFix STATUS_NO_FIX and GPSMessage.status 0, counted; a real position keeps its fix.
        The GGA and RMC of one fix time are one sample: one message (wire/udp/nmea.GpsSamples)."""
        from sensor_msgs.msg import NavSatFix, NavSatStatus
        from morai_msgs.msg import GPSMessage
        from morai_bridge.wire.udp import nmea
        sim, cfg, rx = self.start_receiver('gpsout')
        fixes = Waiter('/gpsout/gps/fix', NavSatFix)
        gps = Waiter('/gpsout/gps', GPSMessage)
        real = nmea.build('GP', 'GGA', ('044646.150', '3714.5407', 'N', '12646.4262', 'E', '1', '09', '1.0', '29.9',
                                        'M', '0.0', 'M', '', ''))
        m = fixes.until(lambda: sim.send('gps', nmea.encode(real)), lambda m: m.latitude > 37.0)
        self.assertEqual(m.status.status, NavSatStatus.STATUS_FIX)
        self.assertAlmostEqual(m.latitude, 37.2423, places=3)
        self.assertEqual(m.position_covariance_type, NavSatFix.COVARIANCE_TYPE_UNKNOWN)
        # one blackout sample, RMC first as the 2024 capture sends them: one message, with the GGA's altitude
        rmc = nmea.build('GP', 'RMC', ('044647.150', 'A', '0000.0000', 'N', '00000.0000', 'E', '000.0', '214.6',
                                       '010826', '000.0', 'E', 'A', ''))
        gga = nmea.build('GP', 'GGA', ('044647.150', '0000.0000', 'N', '00000.0000', 'E', '1', '09', '1.0',
                                       '0.0', 'M', '0.0', 'M', '', ''))
        st = rx.stats['gps']
        start = len(fixes.msgs)
        merged, no_fix = rx.gps_samples.merged, st.counts['no_fix']      # a real GGA still in flight changes neither
        sim.send('gps', nmea.encode(rmc))
        sim.send('gps', nmea.encode(gga))
        m = fixes.wait(lambda m: m.latitude == 0.0, start=start)
        self.assertIsNotNone(m)
        self.assertEqual(m.status.status, NavSatStatus.STATUS_NO_FIX)
        self.assertEqual((m.longitude, m.altitude), (0.0, 0.0))     # the sample's GGA's, not the last real one
        g = gps.wait(lambda m: m.latitude == 0.0)
        self.assertEqual(g.status, 0)
        self.assertTrue(wait_for(lambda: (rx.gps_samples.merged, st.counts['no_fix']) == (merged + 1, no_fix + 1)
                                 and st.counts['no_fix_now'], 5), (rx.gps_samples.merged - merged, st.counts['no_fix'] - no_fix))
        self.assertEqual(len([x for x in fixes.msgs[start:] if x.latitude == 0.0]), 1)   # one for the two sentences
        fixes.until(lambda: sim.send('gps', nmea.encode(real)), lambda m: m.latitude > 37.0)
        self.assertTrue(wait_for(lambda: not rx.stats['gps'].counts['no_fix_now'], 5))

    def test_other_egos_are_published_with_the_vehicles(self):
        """MORAI documents Object Info type -1 as "Ego vehicle" (MORAI-ROS_morai_msgs ObjectStatus.msg
        @115255c).  A -1 slot with a size away from our ego is another ego: in npc_list, type -1 kept; one
        at our ego's place is our own and the -1 slot without a size (heven-ad-2026's empty slot, id 0,
        zeros) is empty: both left out and counted; before any ego status no -1 slot is published."""
        sim, cfg, rx = self.start_receiver('multi')
        objs = Waiter('/multi/Object_topic', ObjectStatusList)
        car = udp.ObjectRecord(10, 1, -20.0, 5.0, 0, 0, 4.6, 1.9, 1.5, 0.9, 2.8, 0.9, 0, 0, 0, 0, 0, 0, 'L')
        other = car._replace(obj_id=2, obj_type=-1, pos_x=30.0, pos_y=0.0, size_x=4.635, link_id='')
        own = other._replace(obj_id=1, pos_x=100.4, pos_y=50.2)
        empty = udp.ObjectRecord(0, -1, *(0.0,) * 16, '')
        packet = udp.make(udp.ObjectInfo, sec=6, nsec=0, objects=(own, other, car, empty))
        m = objs.until(lambda: sim.send('object_info', packet), lambda m: m.header.stamp.secs == 6)
        self.assertEqual([o.unique_id for o in m.npc_list], [10])        # no ego status yet
        status = udp.make(udp.EgoVehicleStatus, 200, sec=7, nsec=0, pos_x=100.0, pos_y=50.0)
        Waiter('/multi/Ego_topic', EgoVehicleStatus).until(lambda: sim.send('ego_status', status),
                                                           lambda m: m.header.stamp.secs == 7)
        before = rx.stats['object_info'].counts['empty_slots']
        m = objs.until(lambda: sim.send('object_info', packet._replace(sec=8)), lambda m: m.header.stamp.secs == 8)
        self.assertEqual([(o.unique_id, o.type) for o in m.npc_list], [(2, -1), (10, 1)])
        self.assertEqual(m.num_of_npcs, 2)
        self.assertAlmostEqual(m.npc_list[0].size.x, 4.635, places=3)
        self.assertTrue(wait_for(lambda: rx.stats['object_info'].counts['empty_slots'] - before >= 18, 5))

    def imu_datagram(self, sec, nsec, gyro_z=0.0):
        """A 115-byte IMU datagram; nsec written as the unsigned 32 bits a C# uint would give."""
        import struct
        data = bytearray(udp.encode(udp.make(udp.ImuData, sec=sec, nsec=0, ori_w=1.0, ang_vel_z=gyro_z)))
        data[29:33] = struct.pack('<I', nsec)
        return bytes(data)

    def test_imu_catch_up_burst_is_one_message(self):
        """25.S4's catch-up bursts: packets under 2 ms apart with the same stamp (the heven report
        @4d26e0e section 6.6; on one host the noise differed between them: the stamp decides).
        Three with one stamp -> one message, two counted; with imu_duplicates:=true all three, the two
        still counted (the newest-sample rule, wire/sample_order.py, says what they are either way).
        The publisher keeps every message (state_queue_size): with the default depth of 1 rospy may
        drop one of three back-to-back messages before its writer thread sends it."""
        from sensor_msgs.msg import Imu
        for ns, keep, want in (('burst', False, 1), ('burst_kept', True, 3)):
            sim, cfg, rx = self.start_receiver(ns, imu_duplicates=keep, state_queue_size=100)
            w = Waiter(f'/{ns}/imu', Imu)
            stamps = iter(range(100000000, 300000000, 1000000))    # a new stamp per resend: no duplicate
            w.until(lambda: sim.send('imu', self.imu_datagram(1785560206, next(stamps), 5.0)),
                    lambda m: m.angular_velocity.z == 5.0)
            for noise in (0.1, 0.1, 0.2):                       # same stamp; the third with other noise
                sim.send('imu', self.imu_datagram(1785560206, 366000000, noise))
            sim.send('imu', self.imu_datagram(1785560206, 386000000, 9.0))
            self.assertIsNotNone(w.wait(lambda m: m.angular_velocity.z == 9.0, 5))
            with w.cond:
                got = [m.angular_velocity.z for m in w.msgs if m.angular_velocity.z != 5.0]
            self.assertEqual(len(got), want + 1, got)
            self.assertEqual(got[0], 0.1)
            self.assertTrue(wait_for(lambda: rx.stats['imu'].counts['duplicates'] == 2, 5),
                            rx.stats['imu'].counts['duplicates'])

    def test_imu_nsec_out_of_range_gives_a_valid_stamp(self):
        """The heven report's saved IMU sample had nsec 3,074,316,224 (> 1e9; negative as int32): the
        message is stamped on arrival, never with an invalid time, and the packet is counted."""
        from sensor_msgs.msg import Imu
        for ns, version in (('bad25', '25.S4'), ('bad24', '24.R2')):
            sim, cfg, rx = self.start_receiver(ns, sim_version=version)
            w = Waiter(f'/{ns}/imu', Imu)
            before = rospy.Time.now()
            m = w.until(lambda: sim.send('imu', self.imu_datagram(1785560206, 3074316224, 7.0)),
                        lambda m: m.angular_velocity.z == 7.0)
            self.assertIsNotNone(m, ns)
            self.assertTrue(0 <= m.header.stamp.nsecs < 1000000000)
            self.assertTrue(before <= m.header.stamp <= rospy.Time.now(), (ns, m.header.stamp))
            self.assertTrue(wait_for(lambda: rx.bad_stamps >= 1, 5), ns)

    def sender(self, ns, **over):
        sim = FakeSim()
        cfg, version = config(sim, ns, **over)
        tx = CommandSender(cfg, '127.0.0.1', '127.0.0.1', load_vehicle_profile(cfg.vehicle_profile))
        return sim, cfg, tx

    def test_sender_builds_per_stream_and_refuses_without_side_effects(self):
        sim, cfg, tx = self.sender('cmd')
        with_topic = sorted(s.name for s in streams.TO_SIM if s.topic)
        self.assertEqual(with_topic, sorted(n for n in tx.names if n not in ('sim_control', 'sync')))
        for name in with_topic:
            self.assertTrue(callable(tx._builder(streams.BY_NAME[name])), name)
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

    def test_the_documented_paths_run_through_few_modules(self):
        """docs/architecture.md: an ego status datagram becomes /Ego_topic through sim_receive, the
        codec, the newest-sample rule (wire/sample_order) and sim_to_ros; a /ctrl_cmd message becomes a datagram through command_sender,
        ros_to_sim, the codec and the socket (the thread and the socket's code aside: link/transport,
        and link/workers' LatestValue, which hands the ego status to the services that wait for one).
        First the live path: a real datagram on loopback, received by the socket worker's thread
        (link/transport's UdpReceiver run by a link/workers Worker), link/ counted; then the replay
        path (``feed``)."""
        live_sim = FakeSim()
        live_cfg, live_version = config(live_sim, 'livepath')
        live = SimReceiver(live_cfg, '127.0.0.1', '127.0.0.1', version=live_version)
        self.addCleanup(live.stop)
        got = Waiter('/livepath/Ego_topic', EgoVehicleStatus)
        wait_for_subscribers(live.pubs['ego_status'])
        datagram = udp.encode(udp.make(udp.EgoVehicleStatus, 200, sec=5, nsec=6, pos_x=2.0))
        ran, threads = modules_run_in_started_threads(
            live.start, lambda: live_sim.send('ego_status', datagram),
            lambda: live.stats['ego_status'].published >= 1)
        self.assertEqual(ran, ['link/transport.py', 'link/workers.py', 'ros/udp_bridge/sim_receive.py',
                               'ros/udp_bridge/sim_to_ros.py', 'wire/sample_order.py', 'wire/udp/codec.py'])
        self.assertEqual(threads, [w.name for w in live.workers])
        self.assertIsNotNone(got.wait(lambda m: m.header.stamp.secs == 5 and m.position.x == 2.0, 5))
        sim = FakeSim()
        cfg, version = config(sim, 'paths')
        rx = SimReceiver(cfg, '127.0.0.1', '127.0.0.1', live=False, version=version)
        data = udp.encode(udp.make(udp.EgoVehicleStatus, 200, sec=3, nsec=4, pos_x=1.0))
        w = Waiter('/paths/Ego_topic', EgoVehicleStatus)
        wait_for_subscribers(rx.pubs['ego_status'])
        ran = modules_run(rx.feed, cfg.ego_status_port, data)
        self.assertEqual([m for m in ran if m != 'link/workers.py'],      # LatestValue.put: thread hand-over
                         ['ros/udp_bridge/sim_receive.py', 'ros/udp_bridge/sim_to_ros.py', 'wire/sample_order.py',
                          'wire/udp/codec.py'])
        self.assertIsNotNone(w.wait(lambda m: m.header.stamp.secs == 3, 5))
        tx = CommandSender(cfg, '127.0.0.1', '127.0.0.1', load_vehicle_profile(cfg.vehicle_profile))
        sim.drain('ctrl_cmd')
        ran = modules_run(tx._make_cb(streams.BY_NAME['ctrl_cmd']), CtrlCmd(longlCmdType=2, velocity=5.0))
        self.assertEqual([m for m in ran if m != 'link/transport.py'],
                         ['ros/udp_bridge/command_sender.py', 'ros/udp_bridge/ros_to_sim.py', 'wire/udp/codec.py'])
        self.assertEqual(sim.recv('ctrl_cmd').velocity, 5.0)
        tx.shutdown()

    def test_publisher_queues_follow_the_state_queue_size(self):
        """~state_queue_size is the depth of every state topic, the derived NavSatFix and odometry included
        (bench_combined lost 41 /gps/fix messages at queue 100 while /gps/fix kept a fixed 1); event topics
        keep their own 100; a replay (live=False) queues 1000 everywhere."""
        sim = FakeSim()
        cfg, version = config(sim, 'queues', state_queue_size=7, publish_odom=True)
        rx = SimReceiver(cfg, '127.0.0.1', '127.0.0.1', version=version)
        rx.start()
        self.addCleanup(rx.stop)
        depth = {name: pub.impl.queue_size for name, pub in rx.pubs.items()}
        self.assertEqual(depth['ego_status'], 7)
        self.assertEqual(depth['collision'], streams.BY_NAME['collision'].queue)
        self.assertEqual((rx.navsat_pub.impl.queue_size, rx.odom_pub.impl.queue_size), (7, 7))
        replay = SimReceiver(cfg, '127.0.0.1', '127.0.0.1', live=False, version=version)
        self.assertEqual({replay.navsat_pub.impl.queue_size, replay.odom_pub.impl.queue_size,
                          replay.pubs['ego_status'].impl.queue_size}, {1000})

    def test_command_state_is_never_torn_and_counters_are_exact(self):
        """Two service threads switch gear and control mode together (Service_MoraiEventCmd's handler) while
        three subscriber threads send ctrl commands: every datagram carries a (gear, mode) pair that was set
        together, and the sent counter equals the datagrams that arrived."""
        from morai_msgs.msg import EventInfo
        from morai_msgs.srv import MoraiEventCmdSrvRequest
        from morai_bridge.ros.udp_bridge.sim_services import SimServices
        sim, cfg, tx = self.sender('hammer', event_service='/hammer/Service_MoraiEventCmd')
        rx = SimReceiver(cfg, '127.0.0.1', '127.0.0.1', live=False)
        services = SimServices(cfg, rx, tx)
        sock = sim.cmd['ctrl_cmd']
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        sock.settimeout(0.5)
        got, stop = [], threading.Event()

        def read():
            while not stop.is_set():
                try:
                    got.append(udp.decode(sock.recv(65535)))
                except socket.timeout:
                    pass
        # EventInfo codes -> wire: automode 3 -> 2 with gear D 4; keyboard 1 -> 1 with gear R 2
        settings = [EventInfo(option=3, ctrl_mode=3, gear=4), EventInfo(option=3, ctrl_mode=1, gear=2)]
        pairs = {(4, 2), (2, 1)}

        def switch(k):
            for i in range(150):
                services.event(MoraiEventCmdSrvRequest(request=settings[(i + k) % 2]))

        build = tx._make_cb(streams.BY_NAME['ctrl_cmd'])

        def command():
            for _ in range(200):
                build(CtrlCmd(longlCmdType=2, velocity=5.0))
                time.sleep(0.001)      # the reader keeps up: a datagram lost on loopback is not the bridge's
        reader = threading.Thread(target=read)
        reader.start()
        workers = [threading.Thread(target=switch, args=(k,)) for k in range(2)] + [
            threading.Thread(target=command) for _ in range(3)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        self.assertTrue(wait_for(lambda: len(got) >= tx.tx_counts['ctrl_cmd'], 10))
        stop.set()
        reader.join()
        torn = collections.Counter((c.gear, c.ctrl_mode) for c in got if (c.gear, c.ctrl_mode) not in pairs)
        self.assertEqual(torn, collections.Counter(), 'datagrams with a gear and a mode never set together')
        self.assertEqual(len(got), tx.tx_counts['ctrl_cmd'])
        self.assertEqual(len([c for c in got if c.velocity == 5.0]), 600)   # every command; the rest: brakes
        tx.shutdown()

    def test_shutdown_while_commands_arrive_brakes_last_and_logs_no_send_error(self):
        """Three subscriber threads send ctrl commands while the node shuts down (issue 48: 'sending ctrl_cmd
        failed: ... Bad file descriptor' on a clean shutdown): the final braking command is the last datagram
        the simulator gets, and no send failure is logged."""
        sim, cfg, tx = self.sender('closing')
        sock = sim.cmd['ctrl_cmd']
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        warnings = []

        class Collect(logging.Handler):
            def emit(self, record):
                warnings.append(record.getMessage())
        handler = Collect(logging.WARNING)
        logging.getLogger('rosout').addHandler(handler)
        self.addCleanup(logging.getLogger('rosout').removeHandler, handler)
        build = tx._make_cb(streams.BY_NAME['ctrl_cmd'])
        started, stop = threading.Barrier(4), threading.Event()

        def command():
            started.wait()
            while not stop.is_set():
                build(CtrlCmd(longlCmdType=2, velocity=5.0))
        workers = [threading.Thread(target=command) for _ in range(3)]
        for w in workers:
            w.start()
        started.wait()
        time.sleep(0.05)
        tx.shutdown()
        time.sleep(0.05)                 # the threads go on calling the callback after the close
        stop.set()
        for w in workers:
            w.join()
        got = []
        sock.settimeout(0.5)
        try:
            while True:
                got.append(udp.decode(sock.recv(65535)))
        except socket.timeout:
            pass
        self.assertGreater(len(got), 2)
        self.assertEqual((got[-1].cmd_type, got[-1].accel, got[-1].brake), (1, 0.0, 1.0), 'the brake was not last')
        self.assertEqual([w for w in warnings if 'failed' in w], [])
        self.assertEqual(tx.sender.errors, 0)

    def test_sender_follows_the_version(self):
        for ns, version, size, sign in (('s24', '24.R2', 23, -1), ('s26', '26.R1', 27, 1)):
            sim, cfg, tx = self.sender(ns, sim_version=version)
            pub = rospy.Publisher(f'/{ns}/ctrl_cmd', CtrlCmd, queue_size=1)
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
