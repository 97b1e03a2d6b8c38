#!/usr/bin/env python3
"""rostest: udp_bridge black-box, started by its launch file on ports chosen at run time.

The test plays the simulator with plain sockets on 127.0.0.1: it sends packets
built with the codec to the bridge's receive ports and receives the bridge's
commands on sockets it bound itself.  Two bridge instances run side by side
in the namespaces /sim_a and /sim_b.
"""
import math
import os
import random
import sys
import socket
import time
import unittest

import roslaunch
import rospy
import rostest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Vector3
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, NavSatFix

from morai_msgs.msg import (CollisionData, CtrlCmd, EgoVehicleStatus, EventInfo, GetTrafficLightStatus,
                            GhostMessage, GPSMessage, GVDirectCmd, GVStateCmd, IntersectionControl,
                            IntersectionStatus, Lamps, MapSpecIndex, MoraiSimProcHandle, MoraiSimProcStatus,
                            MoraiTLIndex, MultiEgoSetting, NpcGhostCmd, NpcGhostInfo, ObjectStatusList,
                            SaveSensorData, ScenarioLoad, SensorPosControl, SetTrafficLight, VehicleCollisionData,
                            VehicleSpecIndex)
from morai_msgs.srv import (MoraiEventCmdSrv, MoraiMapSpecSrv, MoraiScenarioLoadSrv, MoraiSimProcSrv,
                            MoraiTLInfoSrv, MoraiVehicleSpecSrv)

from morai_bridge.wire import udp

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from harness import LAUNCH, RX, TIMEOUT, FakeSim, Waiter, wait_for_subscribers  # noqa: E402


class UdpBridgeTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.sim = FakeSim()
        cls.sim_b = FakeSim()
        uuid = roslaunch.rlutil.get_or_generate_uuid(None, False)
        roslaunch.configure_logging(uuid)
        cls.launch_a = roslaunch.parent.ROSLaunchParent(
            uuid, [(LAUNCH, cls.sim.args() + ['node_name:=udp_bridge', 'output:=log', 'publish_odom:=true',
                                              'publish_tf:=true', 'publish_clock:=false'])])
        cls.launch_a.start()
        # second instance, in the namespace /sim_b, started by a roslaunch of its own
        cls.launch_b = roslaunch.parent.ROSLaunchParent(
            uuid, [(LAUNCH, cls.sim_b.args() + ['ns:=sim_b', 'output:=log', 'sim_version:=24.R2', 'map:=none'])])
        cls.launch_b.start()
        cls.diag = {}
        rospy.Subscriber('/diagnostics', DiagnosticArray, cls._on_diag, queue_size=50)
        cls.pubs = {}

    @classmethod
    def tearDownClass(cls):
        cls.launch_a.shutdown()

    @classmethod
    def _on_diag(cls, m):
        for s in m.status:
            d = {kv.key: kv.value for kv in s.values}
            d['_level'], d['_message'] = s.level, s.message
            cls.diag[s.name] = d

    def diag_value(self, name_part, key, pred, timeout=TIMEOUT):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for name, d in list(self.diag.items()):
                if name.startswith('udp_bridge:') and name_part in name and key in d and pred(d[key]):
                    return d
            time.sleep(0.1)
        self.fail('diagnostics %r/%r never satisfied the check; last: %r'
                  % (name_part, key, [d for n, d in self.diag.items() if name_part in n]))

    def pub(self, topic, cls):
        if topic not in self.pubs:
            p = rospy.Publisher(topic, cls, queue_size=10)
            wait_for_subscribers(p)
            self.pubs[topic] = p
        return self.pubs[topic]

    # --------------------------------------------------------------- publications

    def ego_packet(self, **kw):
        v = dict(sec=1726146361, nsec=579000000, ctrl_mode=2, gear=4, signed_vel=36.0, map_data_id=7,
                 accel=0.25, brake=0.0, size_x=4.845, size_y=1.835, size_z=1.455, overhang=0.9,
                 wheelbase=2.795, rear_overhang=1.1, pos_x=90.5, pos_y=1188.875, pos_z=-0.375,
                 roll=0.5, pitch=-1.0, yaw=154.84, vel_x=36.0, vel_y=-18.0, vel_z=0.0,
                 ang_vel_x=0.0, ang_vel_y=0.0, ang_vel_z=10.0, acc_x=1.5, acc_y=-0.5, acc_z=0.0,
                 steer=-5.5, link_id='A219BS010391')
        data_length = kw.pop('data_length', 200)
        v.update(kw)
        return udp.make(udp.EgoVehicleStatus, data_length=data_length, **v)

    def test_ego_status_fields_units_stamp(self):
        w = Waiter('/Ego_topic', EgoVehicleStatus)
        odom = Waiter('/odom', Odometry)
        pkt = self.ego_packet()
        m = w.until(lambda: self.sim.send('ego_status', pkt), lambda m: m.header.stamp.secs == 1726146361)
        self.assertIsNotNone(m, 'no EgoVehicleStatus')
        f = udp.to_wire_precision(pkt)
        self.assertEqual((m.header.stamp.secs, m.header.stamp.nsecs), (1726146361, 579000000))
        self.assertEqual(m.header.frame_id, 'map')
        self.assertEqual((m.position.x, m.position.y, m.position.z), (f.pos_x, f.pos_y, f.pos_z))
        self.assertAlmostEqual(m.velocity.x, 10.0, places=5)      # 36 km/h
        self.assertAlmostEqual(m.velocity.y, -5.0, places=5)      # -18 km/h
        self.assertEqual((m.acceleration.x, m.acceleration.y), (1.5, -0.5))
        self.assertAlmostEqual(m.heading, f.yaw, places=4)
        self.assertEqual((m.accel, m.brake), (0.25, 0.0))
        self.assertAlmostEqual(m.wheel_angle, -5.5, places=5)     # native ROS mode: the wire's number (- = left)
        o = odom.until(lambda: self.sim.send('ego_status', pkt))
        self.assertIsNotNone(o, 'no Odometry although publish_odom is true')
        self.assertAlmostEqual(o.twist.twist.linear.x, 10.0, places=5)
        q = o.pose.pose.orientation
        yaw = math.degrees(math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z)))
        self.assertAlmostEqual(yaw, f.yaw, places=3)
        self.assertAlmostEqual(o.twist.twist.angular.z, math.radians(10.0), places=5)

    def test_ego_status_181_variant_and_ros_stamp_never_negative(self):
        w = Waiter('/Ego_topic', EgoVehicleStatus)
        pkt = self.ego_packet(sec=1000, nsec=5, pos_x=1.0)
        pkt = udp.make(udp.EgoVehicleStatus, data_length=152,
                       **{k: getattr(pkt, k) for k in pkt._fields
                              if k != 'data_length' and getattr(pkt, k) is not None
                              and not k.startswith(('tire_', 'side_slip'))})
        self.assertEqual(len(udp.encode(pkt)), 181)
        m = w.until(lambda: self.sim.send('ego_status', pkt), lambda m: m.header.stamp.secs == 1000)
        self.assertIsNotNone(m)
        self.assertEqual(m.header.stamp.nsecs, 5)
        self.assertEqual(m.position.x, 1.0)
        # an impossible stamp (negative seconds) falls back to receive time
        bad = self.ego_packet(sec=-5, nsec=0, pos_x=2.0)
        self.sim.send('ego_status', bad)
        m = w.wait(lambda m: m.position.x == 2.0)
        self.assertIsNotNone(m)
        self.assertGreater(m.header.stamp.secs, 1000000)

    def test_object_info_split_by_type(self):
        # our ego at (1, 2): the type -1 record there (id 14) is our own, left out (another ego would be
        # published with the vehicles: test_receiver_sender)
        e = Waiter('/Ego_topic', EgoVehicleStatus)
        self.assertIsNotNone(e.until(lambda: self.sim.send('ego_status', self.ego_packet(sec=49, pos_x=1.0, pos_y=2.0)),
                                     lambda m: m.header.stamp.secs == 49))
        w = Waiter('/Object_topic', ObjectStatusList)
        rec = lambda i, t, x: udp.ObjectRecord(i, t, x, 2.0, 0.0, 90.0, 4.5, 1.8, 1.5, 1.0, 2.7, 0.8,  # noqa
                                                36.0, 0.0, 0.0, 0.5, 0.0, 0.0, 'L1' if t == 1 else '')
        pkt = udp.make(udp.ObjectInfo, sec=50, nsec=20000000,
                       objects=(rec(11, 1, 10.0), rec(12, 0, 12.0), rec(13, 2, 14.0), rec(14, -1, 1.0),
                                rec(15, 1, 16.0)))
        data = bytearray(udp.encode(pkt))
        # move record #2 (id 13) to slot 7, leaving an empty slot in the middle
        start = 30 + 8
        slot = lambda k: slice(start + 106 * k, start + 106 * (k + 1))  # noqa
        data[slot(7)] = data[slot(2)]
        data[slot(2)] = bytes(106)
        m = w.until(lambda: self.sim.send('object_info', bytes(data)), lambda m: m.header.stamp.secs == 50)
        self.assertIsNotNone(m)
        self.assertEqual(m.header.stamp.nsecs, 20000000)
        self.assertEqual((m.num_of_npcs, m.num_of_pedestrian, m.num_of_obstacle), (2, 1, 1))
        self.assertEqual([o.unique_id for o in m.npc_list], [11, 15])
        self.assertEqual([o.unique_id for o in m.pedestrian_list], [12])
        self.assertEqual([o.unique_id for o in m.obstacle_list], [13])
        o = m.npc_list[0]
        self.assertEqual((o.type, o.heading, o.velocity.x), (1, 90.0, 36.0))   # km/h, not converted
        self.assertEqual((o.position.x, o.position.y), (10.0, 2.0))
        self.assertAlmostEqual(o.size.y, 1.8, places=5)
        self.assertEqual(o.acceleration.x, 0.5)

    def test_collision_events_never_dropped(self):
        w = Waiter('/CollisionData', CollisionData)
        recs = (udp.CollisionRecord(1, 21, 5.0, 6.0, 0.0, 100.0, 200.0, 0.0),
                udp.CollisionRecord(2, 22, 7.0, 8.0, 0.0, 100.0, 200.0, 0.0))
        prime = udp.make(udp.CollisionData, sec=59, nsec=0, records=recs)
        self.assertIsNotNone(w.until(lambda: self.sim.send('collision', prime), lambda m: m.header.stamp.secs == 59))
        for k in range(30):   # a burst: every one must arrive
            self.sim.send('collision', udp.make(udp.CollisionData, sec=60 + k, nsec=0, records=recs))
        m = w.wait(lambda m: m.header.stamp.secs == 89)
        self.assertIsNotNone(m, 'received stamps: %r' % [x.header.stamp.secs for x in w.msgs])
        got = sorted({x.header.stamp.secs for x in w.msgs if 60 <= x.header.stamp.secs < 90})
        self.assertEqual(got, list(range(60, 90)))
        self.assertEqual([(o.unique_id, o.type) for o in m.collision_object], [(21, 1), (22, 2)])
        self.assertEqual((m.global_offset_x, m.global_offset_y), (100.0, 200.0))
        self.assertEqual(m.collision_object[1].position.x, 7.0)

    def test_traffic_light_intersection_npc_collision(self):
        before = time.time()
        tl = Waiter('/GetTrafficLightStatus', GetTrafficLightStatus)
        ins = Waiter('/InsnStatus', IntersectionStatus)
        vc = Waiter('/VehicleCollisionData', VehicleCollisionData)
        m = tl.until(lambda: self.sim.send('traffic_light', udp.make(
            udp.GetTrafficLightStatus, traffic_light_index='C119BS010007', traffic_light_type=2,
            traffic_light_status=33)))
        self.assertIsNotNone(m)
        self.assertEqual((m.trafficLightIndex, m.trafficLightType, m.trafficLightStatus), ('C119BS010007', 2, 33))
        # receive time (no stamp on the wire), the wall clock here: a canonical pair within the exchange
        stamp = m.header.stamp
        self.assertTrue(0 <= stamp.nsecs < 1000000000, stamp)
        self.assertTrue(before <= stamp.to_sec() <= time.time(), (before, stamp.to_sec()))
        m = ins.until(lambda: self.sim.send('intersection', udp.make(
            udp.GetIntersectionStatus, intersection_index=7, intersection_status=5, intersection_status_time=3.75)))
        self.assertEqual((m.intersection_index, m.intersection_status, m.intersection_status_time), (7, 5, 3.75))
        r = lambda i: udp.NpcCollisionRecord(1, i, 1.0 * i, 2.0, 0.0, 90.0, 4.5, 1.8, 1.5, 18.0, 0, 0, 0, 0, 0)  # noqa
        m = vc.until(lambda: self.sim.send('vehicle_collision', udp.make(udp.NpcVehicleCollision,
                                                                         pairs=((r(31), r(32)),))))
        self.assertEqual(len(m.collisions), 1)
        self.assertEqual([o.unique_id for o in m.collisions[0].crashed_vehicles], [31, 32])
        self.assertEqual(m.collisions[0].crashed_vehicles[0].velocity.x, 18.0)

    def test_gps_and_imu(self):
        g = Waiter('/gps', GPSMessage)
        n = Waiter('/gps/fix', NavSatFix)
        imu = Waiter('/imu', Imu)
        gga = b'$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47\r\n'
        m = g.until(lambda: self.sim.send('gps', gga))
        self.assertIsNotNone(m)
        self.assertAlmostEqual(m.latitude, 48.1173, places=6)
        self.assertAlmostEqual(m.longitude, 11.0 + 31.0 / 60.0, places=6)
        self.assertAlmostEqual(m.altitude, 545.4, places=6)
        self.assertEqual(m.status, 1)
        # no ~map given: the default map's origin, as native ROS mode fills it (R_KR_PR_K-city_2025)
        self.assertEqual((m.eastOffset, m.northOffset), (302595.0, 4124145.0))
        d = self.diag_value('UDP gps', 'map', lambda v: 'R_KR_PR_K-city_2025' in v)
        self.assertEqual(d['offsets east / north [m]'], '302595.000 / 4124145.000')
        self.assertAlmostEqual(n.until(lambda: self.sim.send('gps', gga)).latitude, 48.1173, places=6)
        before = rospy.Time.now()
        # a new packet time per resend: the bridge drops an IMU packet whose time repeats, so a resent
        # copy cannot replace a first one published before the bridge counted this subscriber
        stamps = iter(range(1, 1000))
        m = imu.until(lambda: self.sim.send('imu', udp.make(udp.ImuData, sec=70, nsec=next(stamps), ori_w=1.0,
                                                            ang_vel_z=0.5, lin_acc_x=9.0)))
        self.assertIsNotNone(m)
        # 25.S4 (the default): the IMU's seconds are the simulator host's local time: stamped on arrival
        self.assertTrue(before <= m.header.stamp <= rospy.Time.now(), m.header.stamp)
        self.assertEqual(m.header.frame_id, 'imu')
        self.assertEqual((m.orientation.w, m.angular_velocity.z, m.linear_acceleration.x), (1.0, 0.5, 9.0))
        # the manuals' 107-byte IMU (no time) is published too, stamped on arrival
        short = udp.make(udp.ImuData, 80, ori_w=0.5, ang_vel_z=-0.25, lin_acc_z=9.8)
        self.assertEqual(len(udp.encode(short)), 107)
        before = rospy.Time.now()
        m = imu.until(lambda: self.sim.send('imu', short), lambda m: m.orientation.w == 0.5)
        self.assertIsNotNone(m, 'the 107-byte IMU was not published')
        self.assertEqual((m.angular_velocity.z, m.linear_acceleration.z), (-0.25, 9.8))
        self.assertTrue(before <= m.header.stamp <= rospy.Time.now())
        # 24.R2 (the second instance): the packet's time
        imu_b = Waiter('/sim_b/imu', Imu)
        stamps = iter(range(1, 1000))
        m = imu_b.until(lambda: self.sim_b.send('imu', udp.make(udp.ImuData, sec=70, nsec=next(stamps), ori_w=1.0)))
        self.assertIsNotNone(m)
        self.assertEqual(m.header.stamp.secs, 70)
        self.assertIn(m.header.stamp.nsecs, range(1, next(stamps)))     # one of the packets sent

    def test_sim_status_and_sim_proc_service(self):
        st = Waiter('/sim/process/state/msg/MoraiSimProcStatus', MoraiSimProcStatus)
        m = st.until(lambda: self.sim.send('sim_status', udp.make(
            udp.SimStatus, platform=2, stage=2, status=2, command_platform=2, command=2, command_option='',
            result=1)))
        self.assertIsNotNone(m)
        self.assertEqual((m.current_status, m.command_result, m.current_mode), (0x10, 0x01, 0x01))
        rospy.wait_for_service('/Morai_SimProc', TIMEOUT)
        call = rospy.ServiceProxy('/Morai_SimProc', MoraiSimProcSrv)
        self.sim.drain('sim_control')
        r = call(MoraiSimProcHandle(sim_process_status=0x01))
        p = self.sim.recv('sim_control')
        self.assertEqual((p.platform, p.command, p.option), (2, 0x0003, ''))
        self.assertIsInstance(r.response.result, bool)
        r = call(MoraiSimProcHandle(sim_process_status=0x20))
        self.assertFalse(r.response.result)

    def test_malformed_datagrams_counted_and_node_alive(self):
        rng = random.Random(7)
        sent = 0
        valid = udp.encode(self.ego_packet(sec=4242))
        for _ in range(50):
            self.sim.send('ego_status', bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 300))))
            self.sim.send('ego_status', valid[:rng.randint(0, len(valid) - 1)])
            sent += 2
        for stream in RX:
            self.sim.send(stream, b'#garbage$' + bytes(20))
        w = Waiter('/Ego_topic', EgoVehicleStatus)
        self.assertIsNotNone(w.until(lambda: self.sim.send('ego_status', valid), lambda m: m.header.stamp.secs == 4242),
                             'node stopped publishing')
        self.diag_value('ego_status', 'decode errors', lambda v: int(v) >= sent + 1)
        for stream in RX:
            self.diag_value(f'UDP {stream} ', 'decode errors', lambda v: int(v) >= 1)

    def test_foreign_sender_ignored_and_counted(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(('127.0.0.2', 0))
        w = Waiter('/Ego_topic', EgoVehicleStatus)
        for _ in range(5):
            s.sendto(udp.encode(self.ego_packet(sec=777)), ('127.0.0.1', self.sim.rx_ports['ego_status']))
        time.sleep(0.5)
        self.assertIsNone(w.wait(lambda m: m.header.stamp.secs == 777, timeout=0.5))
        self.diag_value('ego_status', 'from unexpected hosts', lambda v: int(v) >= 5)
        s.close()

    # -------------------------------------------------------------- subscriptions

    def test_ctrl_cmd_packet(self):
        p = self.pub('/ctrl_cmd', CtrlCmd)
        self.sim.drain('ctrl_cmd')
        p.publish(CtrlCmd(longlCmdType=2, accel=0.0, brake=0.0, steering=0.1, velocity=20.0, acceleration=0.0))
        c = self.sim.recv('ctrl_cmd')
        self.assertEqual(c.data_length, 23)
        self.assertEqual((c.ctrl_mode, c.gear, c.cmd_type), (2, 4, 2))
        self.assertEqual(c.velocity, 20.0)
        self.assertAlmostEqual(c.steer, math.degrees(0.1) / 36.25, places=6)    # 25.S4: + left -> wire + (left)
        p.publish(CtrlCmd(longlCmdType=1, accel=0.5, brake=0.25, steering=-2.0))
        c = self.sim.recv('ctrl_cmd')
        while c.brake == 1.0:                       # the watchdog's brake, if this machine was slow
            c = self.sim.recv('ctrl_cmd')
        self.assertEqual((c.cmd_type, c.accel, c.brake, c.steer), (1, 0.5, 0.25, -1.0))   # clamped
        # NaN / inf: never on the wire, counted
        for bad in (CtrlCmd(longlCmdType=2, velocity=float('nan')), CtrlCmd(longlCmdType=1, steering=float('inf')),
                    CtrlCmd(longlCmdType=3, acceleration=-float('inf')), CtrlCmd(longlCmdType=9)):
            p.publish(bad)
            time.sleep(0.1)    # the bridge keeps only the latest ctrl command (queue 1)
        # nothing of them on the wire; ~ctrl_cmd_timeout after the last command sent, the watchdog's one
        # braking command (refused commands do not count as a live planner)
        got = []
        try:
            while True:
                got.append(self.sim.recv('ctrl_cmd', timeout=1.5))
        except socket.timeout:
            pass
        self.assertEqual([(c.cmd_type, c.accel, c.brake, c.steer) for c in got], [(1, 0.0, 1.0, 0.0)])
        self.diag_value('UDP commands', 'ctrl_cmd refused', lambda v: int(v) >= 4)
        d = self.diag_value('Simulator control state', '_message', lambda v: 'watchdog' in v)
        self.assertEqual(d['_level'], 1)

    def test_ctrl_cmd_longl_cmd_type_zero_is_pedal_control(self):
        """MORAI's own ROS examples never set longlCmdType; native ROS mode drives them with the pedals."""
        p = self.pub('/ctrl_cmd', CtrlCmd)
        self.sim.drain('ctrl_cmd')
        p.publish(CtrlCmd(accel=0.375, brake=0.0, steering=0.1))
        c = self.sim.recv('ctrl_cmd')
        self.assertEqual((c.cmd_type, c.accel, c.brake), (1, 0.375, 0.0))
        self.assertAlmostEqual(c.steer, math.degrees(0.1) / 36.25, places=6)
        self.diag_value('UDP commands', 'longlCmdType 0 sent as 1', lambda v: int(v) >= 1)
        self.diag_value('Simulator control state', 'longlCmdType 0 taken as', lambda v: v.startswith('1 (pedal'))

    def test_ctrl_cmd_refusals_turn_the_control_state_warn(self):
        p = self.pub('/ctrl_cmd', CtrlCmd)
        end = time.monotonic() + TIMEOUT
        d = None
        while time.monotonic() < end:
            p.publish(CtrlCmd(longlCmdType=7))
            d = self.diag.get('udp_bridge: Simulator control state')
            if d and 'longlCmdType = 7' in d.get('_message', ''):
                break
            time.sleep(0.2)
        self.assertIn('ctrl commands refused', d['_message'])
        self.assertIn('longlCmdType = 7', d['_message'])
        self.assertEqual(d['_level'], 1)

    def test_command_topics_to_packets(self):
        cases = [
            ('/SetTrafficLight', SetTrafficLight(trafficLightIndex='C119BS010007', trafficLightStatus=16),
             'set_traffic_light', dict(traffic_light_index='C119BS010007', traffic_light_status=16, data_length=14)),
            ('/InsnControl', IntersectionControl(intersection_index=7, intersection_status=2,
                                                 intersection_status_time=10.0),
             'set_intersection', dict(intersection_index=7, intersection_status=2, intersection_status_time=10.0)),
            ('/lamps', Lamps(turnSignal=2, emergencySignal=1), 'lamps', dict(turn_signal=2, emergency_signal=1)),
            ('/ScenarioLoad', ScenarioLoad(file_name='lattice.json', load_network_connection_data=True,
                                           delete_all=False, load_ego_vehicle_data=False,
                                           load_surrounding_vehicle_data=True, load_pedestrian_data=False,
                                           load_obstacle_data=True, set_pause=True),
             'scenario_load', dict(file_name='lattice', delete_all=False, load_network=True, load_ego=False,
                                   load_npc=True, load_pedestrian=False, load_object=True, set_pause=True)),
            ('/SaveSensorData', SaveSensorData(is_custom_file_name=True, custom_file_name='run1',
                                               file_dir='D:/data'),
             'save_sensor_data', dict(is_custom_file_name=True, custom_file_name='run1', file_dir='D:/data')),
            ('/GhostCtrlCmd', GhostMessage(position=Vector3(1.0, 2.0, 3.0), rotation=Vector3(0.0, 0.0, 90.0),
                                           velocity=20.0, steering_angle=-4.0),
             'ego_ghost', dict(position_x=1.0, position_y=2.0, position_z=3.0, rotation_z=90.0, speed=20.0,
                               steer_angle=-4.0)),         # wheel_angle's convention, copied
            ('/gv_state_cmd', GVStateCmd(latCtrlType=1, targetLongitudinalVelocity=1.5, targetAngularVelocity=-0.25),
             'gv_state', dict(target_longitudinal_velocity=1.5, target_angular_velocity=-0.25)),
            ('/gv_direct_cmd', GVDirectCmd(steerType=2, throttle=0.5, brake=0.0, skidSteering=0.0,
                                           steerAngle=[0.25, -0.5] + [0.0] * 8),
             'gv_direct', dict(steer_type=2, throttle=0.5, steer_angle=(0.25, -0.5) + (0.0,) * 8)),
        ]
        for topic, msg, stream, fields in cases:
            self.sim.drain(stream)
            self.pub(topic, type(msg)).publish(msg)
            p = self.sim.recv(stream)
            for k, v in fields.items():
                self.assertEqual(getattr(p, k), v, f'{stream}.{k}')

    def test_sensor_multi_ego_npc_ghost(self):
        self.sim.drain('sensor_control')
        self.pub('/SensorPosControl', SensorPosControl).publish(SensorPosControl(
            sensor_index=[1, 3], pose_x=[1.0, 2.0], pose_y=[0.0, 0.5], pose_z=[1.5, 2.0], roll=[0.0, 0.0],
            pitch=[0.0, math.pi / 4], yaw=[math.pi / 2, 0.0]))
        a, b = self.sim.recv('sensor_control'), self.sim.recv('sensor_control')
        self.assertEqual((a.sensor_index, a.pos_x, b.sensor_index, b.pos_y), (1, 1.0, 3, 0.5))
        self.assertAlmostEqual(a.yaw, 90.0, places=4)      # rad -> deg
        self.assertAlmostEqual(b.pitch, 45.0, places=4)
        self.sim.drain('multi_ego')
        self.pub('/ego_setting', MultiEgoSetting).publish(MultiEgoSetting(
            number_of_ego_vehicle=2, camera_index=1, ego_index=[0, 1], global_position_x=[1.0, 2.0],
            global_position_y=[3.0, 4.0], global_position_z=[0.0, 0.0], global_roll=[0.0, 0.0],
            global_pitch=[0.0, 0.0], global_yaw=[90.0, 180.0], velocity=[10.0, 0.0], gear=[4, 1],
            ctrl_mode=[2, 1]))
        p = self.sim.recv('multi_ego')
        self.assertEqual((p.num_of_ego, p.camera_index, len(p.egos)), (2, 1, 2))
        self.assertEqual(tuple(p.egos[1]), (1, 2.0, 4.0, 0.0, 0.0, 0.0, 180.0, 0.0, 1, 1))
        self.sim.drain('npc_ghost')
        self.pub('/NpcGhostCmd', NpcGhostCmd).publish(NpcGhostCmd(npc_list=[
            NpcGhostInfo(unique_id=5, name='2015_Kia_K5', position=Vector3(10.0, 20.0, 0.0),
                         rpy=Vector3(0.0, 0.0, 45.0))]))
        p = self.sim.recv('npc_ghost')
        self.assertEqual(tuple(p.npcs[0]), (5, '2015_Kia_K5', 10.0, 20.0, 0.0, 0.0, 0.0, 45.0))
        # out-of-range values are refused, not truncated onto the wire
        self.pub('/NpcGhostCmd', NpcGhostCmd).publish(NpcGhostCmd(npc_list=[
            NpcGhostInfo(unique_id=500, name='x', position=Vector3(float('nan'), 0.0, 0.0))]))
        with self.assertRaises(socket.timeout):
            self.sim.recv('npc_ghost', timeout=0.7)

    # ------------------------------------------------------------------ services

    def test_scenario_and_event_services(self):
        rospy.wait_for_service('/Service_MoraiSL', TIMEOUT)
        sl = rospy.ServiceProxy('/Service_MoraiSL', MoraiScenarioLoadSrv)
        self.sim.drain('scenario_load')
        r = sl(ScenarioLoad(file_name='sample', delete_all=True, set_pause=False))
        self.assertTrue(r.response.result)
        p = self.sim.recv('scenario_load')
        self.assertEqual((p.file_name, p.delete_all, p.set_pause), ('sample', True, False))
        r = sl(ScenarioLoad(file_name='x' * 31))
        self.assertFalse(r.response.result)                 # too long for the packet
        ev = rospy.ServiceProxy('/Service_MoraiEventCmd', MoraiEventCmdSrv)
        self.sim.drain('lamps')
        r = ev(EventInfo(option=4 | 2, gear=2, lamps=Lamps(turnSignal=1, emergencySignal=0)))
        self.assertEqual((r.response.gear, r.response.lamps.turnSignal), (2, 1))
        lp = self.sim.recv('lamps')
        self.assertEqual((lp.turn_signal, lp.emergency_signal), (1, 0))
        # the gear now travels with ctrl commands
        self.sim.drain('ctrl_cmd')
        self.pub('/ctrl_cmd', CtrlCmd).publish(CtrlCmd(longlCmdType=2, velocity=5.0))
        c = self.sim.recv('ctrl_cmd')
        while c.velocity != 5.0:
            c = self.sim.recv('ctrl_cmd')
        self.assertEqual(c.gear, 2)
        r = ev(EventInfo(option=2, gear=4))
        self.assertEqual(r.response.gear, 4)

    # ------------------------------------------------- meaning at the edges (MORAI's ROS manual)

    def next_ctrl(self, velocity=3.0):
        """The ctrl command packet sent for a CtrlCmd published now (braking packets skipped)."""
        self.sim.drain('ctrl_cmd')
        self.pub('/ctrl_cmd', CtrlCmd).publish(CtrlCmd(longlCmdType=2, velocity=velocity))
        c = self.sim.recv('ctrl_cmd')
        while c.velocity != velocity:
            c = self.sim.recv('ctrl_cmd')
        return c

    def test_fidelity_multi_ego_ctrl_mode_16_is_automode(self):
        self.sim.drain('multi_ego')
        self.pub('/ego_setting', MultiEgoSetting).publish(MultiEgoSetting(
            number_of_ego_vehicle=3, camera_index=0, ego_index=[0, 1, 2], global_position_x=[1.0, 2.0, 3.0],
            global_position_y=[0.0] * 3, global_position_z=[0.0] * 3, global_roll=[0.0] * 3,
            global_pitch=[0.0] * 3, global_yaw=[0.0] * 3, velocity=[0.0] * 3, gear=[4, 4, 4],
            ctrl_mode=[16, 1, 2]))
        p = self.sim.recv('multi_ego')
        self.assertEqual([e.ctrl_mode for e in p.egos], [2, 1, 2])     # ROS 16 (automode) = wire 2

    def test_fidelity_event_codes_of_the_ros_manual(self):
        rospy.wait_for_service('/Service_MoraiEventCmd', TIMEOUT)
        ev = rospy.ServiceProxy('/Service_MoraiEventCmd', MoraiEventCmdSrv)
        try:
            r = ev(EventInfo(option=1, ctrl_mode=1))                  # 1 Keyboard
            self.assertEqual(r.response.ctrl_mode, 1)
            self.assertEqual(self.next_ctrl().ctrl_mode, 1)
            for mode in (2, 4):                                       # GameWheel, cruisemode: no UDP form
                r = ev(EventInfo(option=1, ctrl_mode=mode))
                self.assertEqual(r.response.ctrl_mode, 1, 'the response reports the mode in force')
                self.assertEqual(self.next_ctrl().ctrl_mode, 1)
            self.diag_value('UDP commands', 'last refusal', lambda v: 'CRUISE' in v and 'no UDP form' in v)
            r = ev(EventInfo(option=1, ctrl_mode=3))                  # 3 automode
            self.assertEqual(r.response.ctrl_mode, 3)
            self.assertEqual(self.next_ctrl().ctrl_mode, 2)
            r = ev(EventInfo(option=2, gear=2))
            self.assertEqual(r.response.gear, 2)
            r = ev(EventInfo(option=2, gear=-1))                      # keep the previous gear
            self.assertEqual(r.response.gear, 2)
            self.assertEqual(self.next_ctrl().gear, 2)
            self.sim.drain('lamps')
            r = ev(EventInfo(option=4, lamps=Lamps(turnSignal=1, emergencySignal=0)))
            lp = self.sim.recv('lamps')
            self.assertEqual((lp.turn_signal, lp.emergency_signal), (1, 0))
            r = ev(EventInfo(option=4, lamps=Lamps(turnSignal=3, emergencySignal=1)))   # keep the turn signal
            lp = self.sim.recv('lamps')
            self.assertEqual((lp.turn_signal, lp.emergency_signal), (1, 1))
            self.assertEqual((r.response.lamps.turnSignal, r.response.lamps.emergencySignal), (1, 1))
        finally:
            ev(EventInfo(option=1 | 2 | 4, ctrl_mode=3, gear=4, lamps=Lamps(turnSignal=0, emergencySignal=0)))

    def test_signs_of_the_default_version_and_of_24_R2(self):
        """25.S4 (default): + CtrlCmd.steering leaves as + (AISW measured + = left on the wire), the status
        steer and the ghost angle are copied (native ROS mode: wheel_angle - for left).  The second
        instance runs sim_version:=24.R2: the command sign of MORAI's 24.R2 examples (negated)."""
        w = Waiter('/Ego_topic', EgoVehicleStatus)
        m = w.until(lambda: self.sim.send('ego_status', self.ego_packet(sec=5151, steer=7.25)),
                    lambda m: m.header.stamp.secs == 5151)
        self.assertIsNotNone(m)
        self.assertAlmostEqual(m.wheel_angle, 7.25, places=5)
        self.sim.drain('ego_ghost')
        self.pub('/GhostCtrlCmd', GhostMessage).publish(GhostMessage(steering_angle=3.5, velocity=1.0))
        self.assertAlmostEqual(self.sim.recv('ego_ghost').steer_angle, 3.5, places=5)
        for sim, topic, sign in ((self.sim, '/ctrl_cmd', 1), (self.sim_b, '/sim_b/ctrl_cmd', -1)):
            sim.drain('ctrl_cmd')
            self.pub(topic, CtrlCmd).publish(CtrlCmd(longlCmdType=2, velocity=4.0, steering=0.1))
            c = sim.recv('ctrl_cmd')
            while c.velocity != 4.0:
                c = sim.recv('ctrl_cmd')
            self.assertAlmostEqual(c.steer, sign * math.degrees(0.1) / 36.25, places=6)
        self.assertEqual(rospy.get_param('/udp_bridge/steering_sign'), 1)
        self.assertEqual(rospy.get_param('/sim_b/udp_bridge/steering_sign'), -1)

    def test_empty_collision_slots_are_not_collisions(self):
        """25.S4 fills unused Collision Data slots with obj_type -1, the first with the ego's position
        (The-GIGACHA/2026_AISW udp_bridge.py); heven-ad-2026's fixture: one hit and four -1 slots."""
        w = Waiter('/CollisionData', CollisionData)
        empty = udp.CollisionRecord(-1, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        ego = empty._replace(pos_x=50.0, pos_y=60.0)
        m = w.until(lambda: self.sim.send('collision', udp.make(udp.CollisionData, sec=8801, nsec=0,
                                                                records=(ego,) + (empty,) * 4)),
                    lambda m: m.header.stamp.secs == 8801)
        self.assertIsNotNone(m, 'no CollisionData for a packet without a collision')
        self.assertEqual(m.collision_object, [])
        hit = udp.CollisionRecord(1, 7, 1.0, 2.0, 3.0, 100.0, 200.0, 0.0)
        m = w.until(lambda: self.sim.send('collision', udp.make(udp.CollisionData, sec=8802, nsec=0,
                                                                records=(hit,) + (empty,) * 4)),
                    lambda m: m.header.stamp.secs == 8802)
        self.assertEqual([(o.unique_id, o.type) for o in m.collision_object], [(7, 1)])
        self.assertEqual((m.global_offset_x, m.global_offset_y), (100.0, 200.0))
        self.diag_value('collision', 'empty slots (not published)', lambda v: int(v) >= 9)

    def test_competition_status_and_a_position_less_ego_status(self):
        """The competition build's status (the live 2026 capture's layout: 181 B, position and
        acceleration withheld) on its own port -> /Competition_topic; the same on the ego status
        port is explained on /diagnostics."""
        w = Waiter('/Competition_topic', EgoVehicleStatus)
        comp = self.ego_packet(sec=8901, data_length=152, pos_x=0.0, pos_y=0.0, pos_z=0.0, acc_x=0.0, acc_y=0.0)
        m = w.until(lambda: self.sim.send('competition_status', comp), lambda m: m.header.stamp.secs == 8901)
        self.assertIsNotNone(m, 'no /Competition_topic')
        self.assertEqual((m.position.x, m.position.y), (0.0, 0.0))
        self.assertAlmostEqual(m.velocity.x, 10.0, places=5)
        e = Waiter('/Ego_topic', EgoVehicleStatus)
        self.assertIsNotNone(e.until(lambda: self.sim.send('ego_status', comp), lambda m: m.header.stamp.secs == 8901))
        d = self.diag_value('ego_status', 'moving at exactly (0, 0)', lambda v: int(v) >= 1)
        self.assertIn('25.S4.MolitComp03', d['_message'])
        self.assertIn(f"{d['moving at exactly (0, 0)']} moving status packets at exactly (0, 0)", d['_message'])
        self.assertEqual(d['_level'], 1)          # WARN

    def test_fidelity_tl_info_service_from_the_wire(self):
        tl = Waiter('/GetTrafficLightStatus', GetTrafficLightStatus)
        self.assertIsNotNone(tl.until(lambda: self.sim.send('traffic_light', udp.make(
            udp.GetTrafficLightStatus, traffic_light_index='C119BS010099', traffic_light_type=0,
            traffic_light_status=20)), lambda m: m.trafficLightIndex == 'C119BS010099'))
        rospy.wait_for_service('/Morai_TLSrv', TIMEOUT)
        call = rospy.ServiceProxy('/Morai_TLSrv', MoraiTLInfoSrv)
        r = call(MoraiTLIndex(idx='C119BS010099')).response
        self.assertEqual((r.idx, r.status, r.header.frame_id), ('C119BS010099', 20, 'map'))
        self.assertFalse(r.header.stamp.is_zero())
        r = call(MoraiTLIndex(idx='NEVERSEEN999')).response
        self.assertEqual((r.idx, r.status), ('NEVERSEEN999', 0))
        self.assertTrue(r.header.stamp.is_zero(), 'an id never seen is answered with a zero stamp')

    def test_fidelity_vehicle_and_map_spec_services(self):
        rospy.wait_for_service('/Service_MoraiVehicleSpec', TIMEOUT)
        call = rospy.ServiceProxy('/Service_MoraiVehicleSpec', MoraiVehicleSpecSrv)
        w = Waiter('/Ego_topic', EgoVehicleStatus)
        self.assertIsNotNone(w.until(lambda: self.sim.send('ego_status', self.ego_packet(sec=6161)),
                                     lambda m: m.header.stamp.secs == 6161))
        r = call(VehicleSpecIndex(unique_id=0)).response           # the simulator's own figures
        self.assertAlmostEqual(r.size.x, 4.845, places=5)
        self.assertAlmostEqual(r.size.y, 1.835, places=5)
        self.assertAlmostEqual(r.wheel_base, 2.795, places=5)
        self.assertAlmostEqual(r.overhang, 0.9, places=5)
        self.assertAlmostEqual(r.rear_overhang, 1.1, places=5)
        self.assertEqual(r.max_steering, 36.25)                      # the morai_sedan profile
        rospy.wait_for_service('/Service_MoraiMapSpec', TIMEOUT)
        m = rospy.ServiceProxy('/Service_MoraiMapSpec', MoraiMapSpecSrv)(MapSpecIndex()).response
        self.assertEqual((m.utm_num, m.central_meridian, m.scale_factor, m.false_easting), (52, 129.0, 0.9996,
                                                                                            500000.0))
        self.assertEqual((m.utm_offset.x, m.utm_offset.y, m.utm_offset.z), (302595.0, 4124145.0, 0.0))  # the default map
        rospy.wait_for_service('/sim_b/Service_MoraiMapSpec', TIMEOUT)
        m = rospy.ServiceProxy('/sim_b/Service_MoraiMapSpec', MoraiMapSpecSrv)(MapSpecIndex()).response
        self.assertEqual((m.utm_num, m.utm_offset.x, m.utm_offset.y), (52, 0.0, 0.0))    # map:=none asked for

    def test_z_keyboard_mode_diagnosed(self):
        self.pub('/ctrl_cmd', CtrlCmd).publish(CtrlCmd(longlCmdType=2, velocity=5.0))
        for _ in range(3):
            self.sim.send('ego_status', self.ego_packet(ctrl_mode=1))
            time.sleep(0.1)
        self.pub('/ctrl_cmd', CtrlCmd).publish(CtrlCmd(longlCmdType=2, velocity=5.0))
        d = self.diag_value('Simulator control state', '_message', lambda v: 'keyboard' in v)
        self.assertEqual(d['_level'], 1)

    # ----------------------------------------------------------- second instance

    def test_zz_second_instance_isolated_and_brakes_on_shutdown(self):
        wa = Waiter('/Ego_topic', EgoVehicleStatus)
        wb = Waiter('/sim_b/Ego_topic', EgoVehicleStatus)
        pb = self.pub('/sim_b/ctrl_cmd', CtrlCmd)
        m = wb.until(lambda: self.sim_b.send('ego_status', self.ego_packet(sec=9090)),
                     lambda m: m.header.stamp.secs == 9090)
        self.assertIsNotNone(m)
        self.assertIsNone(wa.wait(lambda m: m.header.stamp.secs == 9090, timeout=0.5))
        self.sim_b.drain('ctrl_cmd')
        pb.publish(CtrlCmd(longlCmdType=2, velocity=12.0))
        c = self.sim_b.recv('ctrl_cmd')
        self.assertEqual(c.velocity, 12.0)
        self.launch_b.shutdown()
        last = None
        try:
            while True:
                last = self.sim_b.recv('ctrl_cmd', timeout=2.0)
        except socket.timeout:
            pass
        self.assertIsNotNone(last, 'no braking command on shutdown')
        self.assertEqual((last.cmd_type, last.accel, last.brake), (1, 0.0, 1.0))

    def test_receive_stamps_follow_sim_time(self):
        """With /use_sim_time the packets without a time are stamped with /clock, not the wall clock."""
        sim = FakeSim()
        clock = rospy.Publisher('/clock', Clock, queue_size=1)
        rospy.set_param('/use_sim_time', True)      # read by the bridge's rospy in init_node
        uuid = roslaunch.rlutil.get_or_generate_uuid(None, False)
        launch = roslaunch.parent.ROSLaunchParent(uuid, [(LAUNCH, sim.args() + ['ns:=sim_c', 'output:=log'])])
        launch.start()
        try:
            rospy.wait_for_service('/sim_c/Service_MoraiVehicleSpec', 60.0)     # the bridge is up
            tl = Waiter('/sim_c/GetTrafficLightStatus', GetTrafficLightStatus)

            def send():
                clock.publish(Clock(rospy.Time(4242, 5000)))
                sim.send('traffic_light', udp.make(udp.GetTrafficLightStatus, traffic_light_index='T1',
                                                   traffic_light_type=0, traffic_light_status=1))
            # (another bridge may publish /clock between the two sends: resend until the pair matches)
            m = tl.until(send, lambda m: (m.header.stamp.secs, m.header.stamp.nsecs) == (4242, 5000))
            self.assertIsNotNone(m, 'no traffic light stamped with /clock (4242.000005) from the sim-time bridge; '
                                    'got %r' % [(x.header.stamp.secs, x.header.stamp.nsecs) for x in tl.msgs[-3:]])
        finally:
            rospy.delete_param('/use_sim_time')
            launch.shutdown()


if __name__ == '__main__':
    rospy.init_node('test_udp_bridge')
    rostest.rosrun('morai_msgs', 'test_udp_bridge', UdpBridgeTest)
