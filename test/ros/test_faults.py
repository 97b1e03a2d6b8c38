#!/usr/bin/env python3
"""rostest: udp_bridge under faults, with exact accounting.

* bursts of malformed datagrams to every receive port at full speed, with valid
  packets interleaved: the node lives, every valid packet is published, and the
  diagnostics count exactly the malformed ones;
* datagrams from a host other than ~sim_ip: counted exactly, never published;
* NaN, +-inf and out-of-range values in every command message: never on the
  wire (every datagram the fake simulator receives is decoded and checked);
* a port already in use and an unresolvable simulator host: the node exits
  with a message naming the parameter.
"""
import datetime
import math
import os
import random
import socket
import struct
import subprocess
import sys
import time
import unittest

import roslaunch
import rospy
import rostest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Vector3

from morai_msgs.msg import (CtrlCmd, GhostMessage, GVDirectCmd, GVStateCmd, IntersectionControl, Lamps,
                            MultiEgoSetting, NpcGhostCmd, NpcGhostInfo, SaveSensorData, ScenarioLoad,
                            SensorPosControl, SetTrafficLight)

from morai_bridge.wire import udp
from morai_bridge.wire.udp import nmea

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from harness import LAUNCH, RX, TIMEOUT, FakeSim, wait_for_subscribers  # noqa: E402

INF, NAN = float('inf'), float('nan')


def valid_packet(stream, k):
    """A valid datagram for each receive stream; k makes it recognisable."""
    if stream in ('ego_status', 'competition_status'):
        return udp.encode(udp.make(udp.EgoVehicleStatus, sec=5000 + k, ctrl_mode=2, gear=4))
    if stream == 'object_info':
        return udp.encode(udp.make(udp.ObjectInfo, sec=5000 + k))
    if stream == 'traffic_light':
        return udp.encode(udp.make(udp.GetTrafficLightStatus, traffic_light_index='C119BS010007',
                                   traffic_light_type=2, traffic_light_status=16))
    if stream == 'collision':
        return udp.encode(udp.make(udp.CollisionData, sec=5000 + k))
    if stream == 'intersection':
        return udp.encode(udp.make(udp.GetIntersectionStatus, intersection_index=k))
    if stream == 'vehicle_collision':
        return udp.encode(udp.make(udp.NpcVehicleCollision))
    if stream == 'sim_status':
        return udp.encode(udp.make(udp.SimStatus, platform=2, stage=2, status=1))
    if stream == 'gps':
        # a new fix time each (a repeated sentence is a duplicate, published once: wire/sample_order.py)
        minute, tenths = divmod(k, 600)
        return nmea.encode(nmea.make_gga(datetime.time(12, 35 + minute, tenths // 10, (tenths % 10) * 100000),
                                         48.1173, 11.5167, 545.4))
    if stream == 'imu':
        return udp.encode(udp.make(udp.ImuData, sec=5000 + k, ori_w=1.0))
    if stream == 'sync_state':
        from morai_bridge.wire.udp import lockstep
        return lockstep.encode(lockstep.EmuSyncState(frame=k))
    # any other stream: its codec sample (wire/udp/samples), with a new time each where it carries one (the
    # newest-sample rule publishes a repeated time once), so a stream added later needs no case here
    from morai_bridge.wire.udp import samples
    m = samples.per_stream()[stream]
    return udp.encode(m._replace(sec=5000 + k) if 'sec' in m._fields else m)


def garbage(rng, good):
    """Malformed datagrams of several kinds, none of which can decode."""
    kind = rng.randrange(4)
    if good[:1] == b'$' and kind:
        star = good.rindex(b'*')                                      # NMEA: wrong checksum
        right = good[star + 1:star + 3]
        return good[:star + 1] + (b'00' if right != b'00' else b'01') + good[star + 3:]
    if kind == 0:
        return bytes([rng.choice(b'ABCxyz\x00\xff')]) + bytes(rng.randrange(256) for _ in range(rng.randint(0, 200)))
    if kind == 1:
        return good[:rng.randrange(1, len(good))]                     # truncated
    if kind == 2:
        return good + bytes(rng.randint(1, 9))                        # over-long
    return good[:-2] + b'\n\r'                                        # wrong tail (or broken NMEA checksum)


class FaultTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.sim = FakeSim()
        uuid = roslaunch.rlutil.get_or_generate_uuid(None, False)
        roslaunch.configure_logging(uuid)
        cls.launch = roslaunch.parent.ROSLaunchParent(uuid, [(LAUNCH, cls.sim.args() + [
            'node_name:=faulty_bridge', 'output:=log'])])
        cls.launch.start()
        cls.diag = {}
        cls.diag_summary = {}
        rospy.Subscriber('/diagnostics', DiagnosticArray, cls._on_diag, queue_size=50)

    @classmethod
    def tearDownClass(cls):
        cls.launch.shutdown()

    @classmethod
    def _on_diag(cls, m):
        for s in m.status:
            cls.diag[s.name] = {kv.key: kv.value for kv in s.values}
            cls.diag_summary[s.name] = (s.level, s.message)

    def stream_diag(self, stream):
        for name, d in self.diag.items():
            if name.startswith(f'faulty_bridge: UDP {stream} '):
                return d
        return None

    def wait_diag(self, pred, timeout=TIMEOUT):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred():
                return True
            time.sleep(0.1)
        return pred()

    def test_1_bursts_of_garbage_with_valid_packets_interleaved(self):
        rng = random.Random(8)
        sent_bad = {s: 0 for s in RX}
        sent_good = {s: 0 for s in RX}
        # (the updater's first status per task is 'Node starting up', without values: wait for counters)
        self.assertTrue(self.wait_diag(lambda: all('decode errors' in (self.stream_diag(s) or {}) for s in RX)))
        for k in range(300):
            for s in RX:
                good = valid_packet(s, k)
                self.sim.send(s, garbage(rng, good))
                sent_bad[s] += 1
                if k % 3 == 0:
                    self.sim.send(s, good)
                    sent_good[s] += 1
            if k % 50 == 49:
                time.sleep(0.01)      # keep within the socket buffers: the point is accounting, not overflow
        print('sent per stream: %d malformed, %d valid' % (sent_bad['ego_status'], sent_good['ego_status']))

        def settled():
            for s in RX:
                d = self.stream_diag(s)
                if d is None or int(d['decode errors']) + int(d['wrong type']) != sent_bad[s] \
                        or int(d['published']) != sent_good[s]:
                    return False
            return True
        ok = self.wait_diag(settled, timeout=20.0)
        report = {s: (self.stream_diag(s) or {}).get('decode errors') for s in RX}
        self.assertTrue(ok, 'counters do not match what was sent: %r vs bad %r good %r; published %r' % (
            report, sent_bad, sent_good, {s: (self.stream_diag(s) or {}).get('published') for s in RX}))

    def test_2_foreign_sender_counted_exactly(self):
        before = {s: int(self.stream_diag(s)['from unexpected hosts']) for s in RX}
        pub_before = {s: int(self.stream_diag(s)['published']) for s in RX}
        other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        other.bind(('127.0.0.2', 0))
        for k in range(20):
            for s in RX:
                other.sendto(valid_packet(s, k), ('127.0.0.1', self.sim.rx_ports[s]))
        other.close()
        ok = self.wait_diag(lambda: all(int(self.stream_diag(s)['from unexpected hosts']) == before[s] + 20
                                        for s in RX))
        self.assertTrue(ok, {s: self.stream_diag(s)['from unexpected hosts'] for s in RX})
        self.assertEqual({s: int(self.stream_diag(s)['published']) for s in RX}, pub_before)

    def test_3_bad_commands_never_reach_the_wire(self):
        v = Vector3
        bad = {
            'ctrl_cmd': [CtrlCmd(longlCmdType=2, velocity=NAN), CtrlCmd(longlCmdType=2, steering=INF),
                         CtrlCmd(longlCmdType=1, accel=-INF), CtrlCmd(longlCmdType=3, acceleration=NAN),
                         CtrlCmd(longlCmdType=1, brake=NAN), CtrlCmd(longlCmdType=7)],
            'ego_ghost': [GhostMessage(position=v(NAN, 0, 0)), GhostMessage(rotation=v(0, 0, INF)),
                          GhostMessage(velocity=-INF), GhostMessage(steering_angle=NAN)],
            'multi_ego': [MultiEgoSetting(number_of_ego_vehicle=1, ego_index=[0], global_position_x=[INF],
                                          global_position_y=[0], global_position_z=[0], global_roll=[0],
                                          global_pitch=[0], global_yaw=[0], velocity=[0], gear=[4], ctrl_mode=[2]),
                          MultiEgoSetting(number_of_ego_vehicle=1, ego_index=[0], global_position_x=[0],
                                          global_position_y=[0], global_position_z=[0], global_roll=[0],
                                          global_pitch=[0], global_yaw=[0], velocity=[0], gear=[9], ctrl_mode=[2]),
                          MultiEgoSetting(number_of_ego_vehicle=3, ego_index=[0])],
            'npc_ghost': [NpcGhostCmd(npc_list=[NpcGhostInfo(unique_id=1, name='a', position=v(0, NAN, 0))]),
                          NpcGhostCmd(npc_list=[NpcGhostInfo(unique_id=300, name='a')]),
                          NpcGhostCmd(npc_list=[NpcGhostInfo(unique_id=1, name='x' * 26)])],
            'sensor_control': [SensorPosControl(sensor_index=[1], pose_x=[NAN], pose_y=[0], pose_z=[0], roll=[0],
                                                pitch=[0], yaw=[0]),
                               SensorPosControl(sensor_index=[1, 2], pose_x=[0])],
            'set_intersection': [IntersectionControl(intersection_index=1, intersection_status_time=INF),
                                 IntersectionControl(intersection_index=70000)],
            'set_traffic_light': [SetTrafficLight(trafficLightIndex='C119BS0100071', trafficLightStatus=1)],
            'lamps': [Lamps(turnSignal=5), Lamps(emergencySignal=-1)],
            'scenario_load': [ScenarioLoad(file_name='y' * 31)],
            'save_sensor_data': [SaveSensorData(is_custom_file_name=True, custom_file_name='z' * 31)],
            'gv_direct': [GVDirectCmd(steerType=2, throttle=NAN), GVDirectCmd(steerType=2,
                                                                              steerAngle=[INF] + [0.0] * 9)],
            'gv_state': [GVStateCmd(targetLongitudinalVelocity=NAN), GVStateCmd(targetAngularVelocity=-INF)],
        }
        good = {
            'ctrl_cmd': CtrlCmd(longlCmdType=2, velocity=12.5), 'ego_ghost': GhostMessage(velocity=3.0),
            'multi_ego': MultiEgoSetting(number_of_ego_vehicle=1, ego_index=[0], global_position_x=[1.0],
                                         global_position_y=[0], global_position_z=[0], global_roll=[0],
                                         global_pitch=[0], global_yaw=[0], velocity=[0], gear=[4], ctrl_mode=[2]),
            'npc_ghost': NpcGhostCmd(npc_list=[NpcGhostInfo(unique_id=1, name='ok')]),
            'sensor_control': SensorPosControl(sensor_index=[1], pose_x=[1.0], pose_y=[0], pose_z=[0], roll=[0],
                                               pitch=[0], yaw=[0]),
            'set_intersection': IntersectionControl(intersection_index=3),
            'set_traffic_light': SetTrafficLight(trafficLightIndex='C119BS010007', trafficLightStatus=1),
            'lamps': Lamps(turnSignal=1), 'scenario_load': ScenarioLoad(file_name='ok'),
            'save_sensor_data': SaveSensorData(file_dir='d'), 'gv_direct': GVDirectCmd(steerType=2, throttle=0.5),
            'gv_state': GVStateCmd(targetLongitudinalVelocity=1.0),
        }
        topics = {'ctrl_cmd': '/ctrl_cmd', 'ego_ghost': '/GhostCtrlCmd', 'multi_ego': '/ego_setting',
                  'npc_ghost': '/NpcGhostCmd', 'sensor_control': '/SensorPosControl', 'set_intersection': '/InsnControl',
                  'set_traffic_light': '/SetTrafficLight', 'lamps': '/lamps', 'scenario_load': '/ScenarioLoad',
                  'save_sensor_data': '/SaveSensorData', 'gv_direct': '/gv_direct_cmd', 'gv_state': '/gv_state_cmd'}
        refused_total = 0
        for stream, msgs in bad.items():
            pub = rospy.Publisher(topics[stream], type(msgs[0]), queue_size=20)
            wait_for_subscribers(pub)
            self.sim.drain(stream)
            for m in msgs:
                pub.publish(m)
                time.sleep(0.1)        # ctrl_cmd keeps only the latest message
                refused_total += 1
            pub.publish(good[stream])
            # the first datagram to arrive must be the valid one; every field finite and in range
            p = self.sim.recv(stream)
            for f in p._fields:
                val = getattr(p, f)
                for x in (val if isinstance(val, tuple) else (val,)):
                    if isinstance(x, float):
                        self.assertTrue(math.isfinite(x), f'{stream}.{f} = {x!r} on the wire')
            with self.assertRaises(socket.timeout, msg=f'{stream}: more datagrams than the one valid command'):
                self.sim.recv(stream, timeout=0.3)
        d = [v for n, v in self.diag.items() if n.startswith('faulty_bridge: UDP commands')]
        self.assertTrue(self.wait_diag(lambda: sum(int(v) for k, v in
                                                   [kv for n, dd in self.diag.items()
                                                    if n.startswith('faulty_bridge: UDP commands')
                                                    for kv in dd.items()] if k.endswith(' refused'))
                                       == refused_total), d)

    def test_5_unexpected_data_length_decoded_by_length_and_warned(self):
        """MORAI's example sends the NPC vehicle collision with data_length 0: published,
        counted per stream, WARN on /diagnostics with the received and expected data_length."""
        def with_data_length(data, dl):
            end = data.index(b'$', 1) + 1
            return data[:end] + struct.pack('<I', dl) + data[end + 4:]
        rec = udp.NpcCollisionRecord(obj_type=1, obj_id=4, pos_x=1.0, pos_y=2.0, pos_z=0.0, heading=0.0,
                                     size_x=4.5, size_y=1.8, size_z=1.5, vel_x=10.0, vel_y=0.0, vel_z=0.0,
                                     acc_x=0.0, acc_y=0.0, acc_z=0.0)
        npc = udp.encode(udp.make(udp.NpcVehicleCollision, pairs=((rec, rec._replace(obj_id=5)),)))
        # two IMU packets with their own stamps (one stamp twice is a catch-up repeat: not published)
        imus = [udp.encode(udp.make(udp.ImuData, sec=6000, nsec=20000000 * k, ori_w=1.0)) for k in range(2)]
        sent = {'vehicle_collision': [with_data_length(npc, 0)] * 3, 'imu': [with_data_length(m, 77) for m in imus]}
        before = {s: (int(self.stream_diag(s)['published']), int(self.stream_diag(s)['decode errors']))
                      for s in sent}
        for s, packets in sent.items():
            for p in packets:
                self.sim.send(s, p)

        def settled():
            return all(int(self.stream_diag(s).get('data_length mismatches', -1)) == len(sent[s]) and
                       int(self.stream_diag(s)['published']) == before[s][0] + len(sent[s]) for s in sent)
        self.assertTrue(self.wait_diag(settled), {s: self.stream_diag(s) for s in sent})
        for s, (dl, expected) in (('vehicle_collision', (0, 1120)), ('imu', (77, 88))):
            d = self.stream_diag(s)
            self.assertEqual(int(d['decode errors']), before[s][1])        # not counted as malformed
            self.assertIn('data_length %d received, expected %d' % (dl, expected), d['last data_length mismatch'])
            level, text = [v for n, v in self.diag_summary.items() if n.startswith(f'faulty_bridge: UDP {s} ')][0]
            self.assertEqual(level, DiagnosticStatus.WARN, text)
            self.assertIn(f'{len(sent[s])} decoded despite an unexpected data_length', text)
            self.assertIn('data_length %d received, expected %d' % (dl, expected), text)

    def test_4_clear_errors_for_bad_configuration(self):
        busy = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        busy.bind(('127.0.0.1', 0))
        port = busy.getsockname()[1]
        env = dict(os.environ)
        cases = [(['_ego_status_port:=%d' % port], ['~ego_status_port', 'already in use']),
                 (['_sim_ip:=no-such-simulator.invalid'], ['~sim_ip', 'no-such-simulator.invalid']),
                 (['_gear:=banana'], ['~gear'])]
        for extra, expect in cases:
            p = subprocess.run(['rosrun', 'morai_msgs', 'udp_bridge', '__name:=misconfigured'] + extra +
                               [f'_{s}_port:=0' for s in RX if 'ego_status' not in extra[0] or s != 'ego_status'],
                               env=env, capture_output=True, text=True, timeout=60)
            out = p.stdout + p.stderr
            self.assertEqual(p.returncode, 2, out)
            for e in expect:
                self.assertIn(e, out)
        busy.close()


if __name__ == '__main__':
    rospy.init_node('test_faults')
    rostest.rosrun('morai_msgs', 'test_faults', FaultTest)
