#!/usr/bin/env python3
"""rostest: capture_replay turns a pcap into the bridge's topics.

A capture written here (with traffic-light changes, an IP-fragmented object
packet and foreign traffic) is replayed with /clock from its timestamps; the
real shared capture is replayed too when ../shared/captures is present.
"""
import os
import sys
import tempfile
import threading
import time
import unittest

import dpkt
import roslaunch
import rospy
import rostest
from rosgraph_msgs.msg import Clock, Log

from morai_msgs.msg import EgoVehicleStatus, GetTrafficLightStatus, GPSMessage, ObjectStatusList

from morai_bridge.wire import udp

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'unit'))
import capture_frames  # noqa: E402
from helpers import wait_for  # noqa: E402
LAUNCH = os.path.join(HERE, '..', '..', 'launch', 'capture_replay.launch')
SHARED = os.path.join(HERE, '..', '..', '..', 'shared', 'captures', 'MORAI.pcap')
SIM, USER = '192.168.0.10', '192.168.0.20'
T0 = 1726147850.0


def ip_frames(ts, sport, dport, payload, ident):
    """Ethernet frames of one UDP datagram, fragmented at 1480 bytes like a real link (built with
    struct by test/unit/capture_frames.py: dpkt's IP.offset changed its unit in dpkt 1.9.7)."""
    return [(ts, capture_frames.ethernet(f)) for f in capture_frames.udp_fragments((SIM, sport), (USER, dport), payload, ident)]


def write_capture(path):
    frames = []
    ident = 1
    statuses = [16, 16, 4, 4, 1, 1, 1, 16]     # green, yellow, red, green again
    for k in range(40):
        ts = T0 + 0.05 * k
        ego = udp.make(udp.EgoVehicleStatus, sec=1726147000 + k, nsec=500000000, ctrl_mode=2, gear=4,
                       pos_x=10.0 + k, pos_y=20.0, yaw=90.0, vel_x=36.0)
        frames += ip_frames(ts, 908, 909, udp.encode(ego), ident); ident += 1
        obj = udp.make(udp.ObjectInfo, sec=1726147000 + k, nsec=500000000, objects=(
            udp.ObjectRecord(5, 1, 30.0, 20.0, 0.0, 0.0, 4.5, 1.8, 1.5, 1.0, 2.7, 0.8, 18.0, 0, 0, 0, 0, 0, 'L'),))
        frames += ip_frames(ts + 0.001, 7605, 7505, udp.encode(obj), ident); ident += 1
        if k % 5 == 0:
            tl = udp.make(udp.GetTrafficLightStatus, traffic_light_index='C119BS010007', traffic_light_type=2,
                          traffic_light_status=statuses[k // 5])
            frames += ip_frames(ts + 0.002, 7603, 7502, udp.encode(tl), ident); ident += 1
        frames += ip_frames(ts + 0.003, 50000, 1900, b'NOTIFY * HTTP/1.1\r\n\r\n', ident); ident += 1
    with open(path, 'wb') as f:
        w = dpkt.pcapng.Writer(f, linktype=dpkt.pcap.DLT_EN10MB)
        for ts, frame in frames:
            w.writepkt(frame, ts=ts)


# two sentences of the shared 2024 capture (GPS on 9091, 24.R2's port)
GGA = b'$GPGGA,223047.5,3714.4040,N,12646.4377,E,1,09,1.0,29.1,M,0.0,M,,*5A\r\n'
RMC = b'$GPRMC,223047.5,A,3714.4040,N,12646.4377,E,000.0,116.5,120924,000.0,E,A,*22\r\n'


def write_era_capture(path):
    """Five ego statuses (packet time 1726147000 + k), five traffic lights (no packet time: stamped
    with the record's time T0 + 0.1 k + 0.002) and three GPS datagrams to 9091, 24.R2's GPS port."""
    frames = []
    for k in range(5):
        ts = T0 + 0.1 * k
        ego = udp.make(udp.EgoVehicleStatus, sec=1726147000 + k, nsec=0, pos_x=float(k))
        frames += ip_frames(ts, 908, 909, udp.encode(ego), 10 * k + 1)
        tl = udp.make(udp.GetTrafficLightStatus, traffic_light_index='C119BS010007', traffic_light_type=2,
                      traffic_light_status=16)
        frames += ip_frames(ts + 0.002, 7603, 7502, udp.encode(tl), 10 * k + 2)
        if k < 3:
            frames += ip_frames(ts + 0.004, 9090, 9091, GGA if k % 2 else RMC, 10 * k + 3)
    with open(path, 'wb') as f:
        w = dpkt.pcap.Writer(f, linktype=dpkt.pcap.DLT_EN10MB)
        for ts, frame in frames:
            w.writepkt(frame, ts=ts)


class Collect:
    def __init__(self, topic, cls):
        self.msgs = []
        self.lock = threading.Lock()
        rospy.Subscriber(topic, cls, self.cb, queue_size=1000)

    def cb(self, m):
        with self.lock:
            self.msgs.append(m)


class CaptureReplayTest(unittest.TestCase):

    def replay(self, path, extra):
        uuid = roslaunch.rlutil.get_or_generate_uuid(None, False)
        roslaunch.configure_logging(uuid)
        parent = roslaunch.parent.ROSLaunchParent(
            uuid, [(LAUNCH, [f'file:={path}', 'output:=log', 'start_delay:=2.0'] + extra)])
        parent.start()
        return parent

    def test_own_capture_light_changes_fragments_clock(self):
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, 'drive.pcapng')
        write_capture(path)
        ego = Collect('/Ego_topic', EgoVehicleStatus)
        objs = Collect('/Object_topic', ObjectStatusList)
        tl = Collect('/GetTrafficLightStatus', GetTrafficLightStatus)
        clock = Collect('/clock', Clock)
        p = self.replay(path, ['rate:=2.0', 'publish_clock:=true', 'node_name:=replay_own'])
        try:
            self.assertTrue(wait_for(lambda: len(ego.msgs) >= 40 and len(tl.msgs) >= 8, 30.0),
                            f'ego {len(ego.msgs)}, lights {len(tl.msgs)}')
        finally:
            p.shutdown()
        self.assertEqual([m.header.stamp.secs for m in ego.msgs], [1726147000 + k for k in range(40)])
        self.assertEqual([m.position.x for m in ego.msgs], [10.0 + k for k in range(40)])
        self.assertAlmostEqual(ego.msgs[0].velocity.x, 10.0, places=5)
        self.assertEqual(len(objs.msgs), 40)          # every fragmented 2160-byte packet reassembled
        self.assertEqual([o.unique_id for o in objs.msgs[-1].npc_list], [5])
        self.assertEqual([m.trafficLightStatus for m in tl.msgs], [16, 16, 4, 4, 1, 1, 1, 16])
        secs = [c.clock.to_sec() for c in clock.msgs]
        self.assertGreater(len(secs), 100)
        self.assertAlmostEqual(secs[0], T0, places=3)
        self.assertTrue(all(b >= a for a, b in zip(secs, secs[1:])), 'clock went backwards')
        self.assertAlmostEqual(secs[-1] - secs[0], 0.05 * 39 + 0.003, places=3)

    def test_relative_file_from_the_callers_directory(self):
        """`roslaunch morai_msgs capture_replay.launch file:=drive.pcapng` typed in the capture's directory:
        roslaunch starts the node in ~/.ros, and the node finds the file through $PWD (the caller's)."""
        tmp = tempfile.mkdtemp()
        write_capture(os.path.join(tmp, 'drive.pcapng'))
        ego = Collect('/Ego_topic', EgoVehicleStatus)
        logs = Collect('/rosout', Log)

        def done_lines():
            with logs.lock:
                return [m.msg for m in logs.msgs if m.name.endswith('replay_relative') and 'done:' in m.msg]
        pwd = os.environ.get('PWD')
        os.environ['PWD'] = tmp                 # what a shell in that directory passes on
        try:
            p = self.replay('drive.pcapng', ['rate:=0', 'node_name:=replay_relative'])
        finally:
            if pwd is None:
                del os.environ['PWD']
            else:
                os.environ['PWD'] = pwd
        try:
            self.assertTrue(wait_for(lambda: len(ego.msgs) >= 40 and done_lines(), 30.0),
                            f'ego {len(ego.msgs)}: file:=drive.pcapng not found from {tmp}')
        finally:
            p.shutdown()
        self.assertEqual(len(ego.msgs), 40)
        done = done_lines()
        self.assertEqual(len(done), 1, done)
        self.assertTrue(done[0].endswith('(40 not MORAI messages, to port 1900)'), done[0])

    def test_port_filtered_capture_publishes_the_records_of_the_first_fragments(self):
        """tcpdump 'udp port 7505' keeps only the first IP fragment of each Object Info: the
        records it holds (13 of 20 slots) are published, the farthest objects are missing."""
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, 'port7505.pcap')
        frames = []
        for k in range(10):
            obj = udp.make(udp.ObjectInfo, sec=1726148000 + k, nsec=0, objects=tuple(
                udp.ObjectRecord(100 + i, 1, 10.0 + i, 1.0, 0.0, 0.0, 4.5, 1.8, 1.5, 1.0, 2.7, 0.8, 18.0, 0, 0,
                                 0, 0, 0, 'L%d' % i) for i in range(20)))
            frames += ip_frames(T0 + 0.05 * k, 7605, 7505, udp.encode(obj), 500 + k)[:1]   # first only
        with open(path, 'wb') as f:
            w = dpkt.pcap.Writer(f, linktype=dpkt.pcap.DLT_EN10MB)
            for ts, frame in frames:
                w.writepkt(frame, ts=ts)
        objs = Collect('/Object_topic', ObjectStatusList)
        p = self.replay(path, ['rate:=0', 'node_name:=replay_port_filtered'])
        try:
            self.assertTrue(wait_for(lambda: len(objs.msgs) >= 10, 30.0), f'objects {len(objs.msgs)}')
        finally:
            p.shutdown()
        self.assertEqual(len(objs.msgs), 10)
        self.assertEqual([m.header.stamp.secs for m in objs.msgs], [1726148000 + k for k in range(10)])
        for m in objs.msgs:
            self.assertEqual([o.unique_id for o in m.npc_list], list(range(100, 113)))
            self.assertEqual([o.position.x for o in m.npc_list], [10.0 + i for i in range(13)])

    def test_skipped_stream_named_with_its_version_and_stamps_on_one_timeline(self):
        """GPS on 24.R2's port replayed as 25.S4 (the default): the node says which sim_version (or
        port parameter) would decode it; headers without a packet time carry the capture's record
        time (the packet-timed ego keeps its own), or the replay's clock with arrival_time:=now."""
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, 'era.pcap')
        write_era_capture(path)
        logs = Collect('/rosout', Log)
        ego = Collect('/Ego_topic', EgoVehicleStatus)
        tl = Collect('/GetTrafficLightStatus', GetTrafficLightStatus)
        gps = Collect('/gps', GPSMessage)

        def replay_lines():
            with logs.lock:
                return [m.msg for m in logs.msgs if m.name.endswith('replay_era')]
        p = self.replay(path, ['rate:=0', 'node_name:=replay_era'])
        try:
            self.assertTrue(wait_for(lambda: any('done:' in t for t in replay_lines()), 30.0), replay_lines())
        finally:
            p.shutdown()
        hint = 'port 9091: 3 gps datagrams, skipped (sim_version 25.S4: this replay has it on 9297; ' \
            'sim_version 24.R2 receives it on that port; sim_version:=24.R2 or gps_port:=9091 decodes them)'
        done = [t for t in replay_lines() if 'done:' in t][0]
        self.assertIn(hint, done)
        self.assertNotIn('not MORAI', done)
        self.assertTrue(any(t.startswith('capture_replay: port 9091: 1 gps datagram, skipped') for t in replay_lines()),
                        f'no warning when the port was first seen: {replay_lines()}')
        self.assertEqual(gps.msgs, [])
        self.assertEqual([m.header.stamp.secs for m in ego.msgs], [1726147000 + k for k in range(5)])
        self.assertEqual(len(tl.msgs), 5)
        for k, m in enumerate(tl.msgs):
            self.assertAlmostEqual(m.header.stamp.to_sec(), T0 + 0.1 * k + 0.002, places=5)

        del tl.msgs[:]
        t_start = rospy.Time.now().to_sec()
        p = self.replay(path, ['rate:=0', 'node_name:=replay_era_now', 'arrival_time:=now', 'sim_version:=24.R2'])
        try:
            self.assertTrue(wait_for(lambda: len(tl.msgs) >= 5 and len(gps.msgs) >= 1, 30.0),
                            f'lights {len(tl.msgs)}, gps {len(gps.msgs)}')
        finally:
            p.shutdown()
        # RMC, GGA, RMC of one fix time: the first two are one sample, one message (wire/udp/nmea.GpsSamples); the
        # last RMC opens a sample that waits for its GGA, which the capture ends before
        self.assertEqual(len(gps.msgs), 1)
        for m in tl.msgs + gps.msgs:
            self.assertGreaterEqual(m.header.stamp.to_sec(), t_start)

    @unittest.skipUnless(os.path.exists(SHARED), f'shared capture {SHARED} not present')
    def test_shared_capture(self):
        """The 2024 capture with sim_version:=24.R2 (its era: GPS on 9091, where 25.S4 has the
        collision source port): every stream of it, GPS included."""
        ego = Collect('/Ego_topic', EgoVehicleStatus)
        tl = Collect('/GetTrafficLightStatus', GetTrafficLightStatus)
        gps = Collect('/gps', GPSMessage)
        p = self.replay(os.path.realpath(SHARED), ['rate:=0', 'node_name:=replay_shared', 'sim_version:=24.R2'])
        try:
            self.assertTrue(wait_for(lambda: len(ego.msgs) >= 113 and len(tl.msgs) >= 115 and len(gps.msgs) >= 11,
                                     30.0), f'ego {len(ego.msgs)}, lights {len(tl.msgs)}, gps {len(gps.msgs)}')
            time.sleep(0.5)
        finally:
            p.shutdown()
        # 115 status datagrams, two of them byte-identical repeats of the one before (same time, sent within
        # 0.1 ms: the simulator's own duplicates): one message per sample, the newest-sample rule
        # (wire/sample_order.py)
        self.assertEqual(len(ego.msgs), 113)
        stamps = [(m.header.stamp.secs, m.header.stamp.nsecs) for m in ego.msgs]
        self.assertEqual(stamps, sorted(set(stamps)))
        m = ego.msgs[0]
        self.assertEqual(m.header.stamp.secs // 100000, 17261)      # September 2024, the simulator's clock
        self.assertEqual({x.trafficLightIndex for x in tl.msgs}, {'C119BS010007'})
        self.assertEqual({x.trafficLightType for x in tl.msgs}, {2})
        self.assertAlmostEqual(gps.msgs[0].latitude, 37.24, places=1)      # K-City
        # 22 sentences, RMC then GGA of each fix time (5 Hz): one GPSMessage per sample, the GGA's altitude
        self.assertEqual(len(gps.msgs), 11)
        self.assertEqual({round(m.altitude, 3) for m in gps.msgs}, {29.1})


if __name__ == '__main__':
    rospy.init_node('test_capture_replay')
    rostest.rosrun('morai_msgs', 'test_capture_replay', CaptureReplayTest)
