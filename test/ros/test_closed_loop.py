#!/usr/bin/env python3
"""rostest: closed loop through the real bridge and the simulator emulator.

Both are started from their launch files on ports chosen here; the test acts
as a user's stack, with topics and services only.
"""
import math
import os
import time
import unittest

import roslaunch
import rospy
import rostest
from diagnostic_msgs.msg import DiagnosticArray

from morai_msgs.msg import (CollisionData, CtrlCmd, EgoVehicleStatus, GetTrafficLightStatus, MoraiSimProcHandle,
                            MoraiSimProcStatus, MultiEgoSetting, ObjectStatusList, ScenarioLoad, SetTrafficLight,
                            SyncModeCmd, SyncModeCtrlCmd, WaitForTick)
from morai_msgs.srv import (MoraiScenarioLoadSrv, MoraiSimProcSrv, MoraiSyncModeCmdSrv, MoraiSyncModeCtrlCmdSrv,
                            MoraiWaitForTickSrv)

from harness import Latest, free_ports
from morai_bridge.wire.udp import streams

HERE = os.path.dirname(os.path.realpath(__file__))
LAUNCH = os.path.join(HERE, '..', '..', 'launch')
# sim -> user streams (bridge binds) and user -> sim commands (emulator binds), sync extension included
STREAMS = [s.name for s in streams.FROM_SIM]
COMMANDS = [s.name for s in streams.TO_SIM]
T = 10.0


def speed(m):
    return math.hypot(m.velocity.x, m.velocity.y)


def at(m):
    """(simulator time of the message [s], speed [m/s]): rates are measured on the simulator's clock, not on
    the test's, which sees the messages late by varying amounts on a busy machine."""
    return m.header.stamp.to_sec(), speed(m)


class ClosedLoopTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        ports = dict(zip(STREAMS + COMMANDS, free_ports(len(STREAMS) + len(COMMANDS))))
        port_args = ['%s_port:=%d' % kv for kv in ports.items()]
        sim_args = port_args + ['scenario:=', 'output:=log', 'emulator_sync:=true']
        uuid = roslaunch.rlutil.get_or_generate_uuid(None, False)
        roslaunch.configure_logging(uuid)
        cls.launch = roslaunch.parent.ROSLaunchParent(uuid, [
            (os.path.join(LAUNCH, 'sim_emulator.launch'), sim_args),
            (os.path.join(LAUNCH, 'udp_bridge.launch'), port_args + ['output:=log', 'service_timeout:=2.0', 'emulator_sync:=true'])])
        cls.launch.start()
        cls.ego = Latest('/Ego_topic', EgoVehicleStatus, timeout=T)
        cls.objects = Latest('/Object_topic', ObjectStatusList, timeout=T)
        cls.ctrl = rospy.Publisher('/ctrl_cmd', CtrlCmd, queue_size=1)
        cls.diag = {}
        rospy.Subscriber('/diagnostics', DiagnosticArray, cls._on_diag, queue_size=50)
        assert cls.ego.wait(timeout=20.0) is not None, 'no ego status from the emulator through the bridge'
        rospy.wait_for_service('/Service_MoraiSL', T)
        cls.scenario = rospy.ServiceProxy('/Service_MoraiSL', MoraiScenarioLoadSrv)

    @classmethod
    def tearDownClass(cls):
        cls.launch.shutdown()

    @classmethod
    def _on_diag(cls, m):
        for s in m.status:
            cls.diag[s.name] = (s.level, s.message, {kv.key: kv.value for kv in s.values})

    def drive(self, seconds, velocity=0.0, steering=0.0, sample=None):
        """Publish velocity commands at 20 Hz; call sample() on the way."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < seconds:
            self.ctrl.publish(CtrlCmd(longlCmdType=2, velocity=velocity, steering=steering))
            if sample:
                sample()
            time.sleep(0.05)

    def load(self, name):
        r = self.scenario(ScenarioLoad(file_name=name, delete_all=True, load_ego_vehicle_data=True,
                                       load_surrounding_vehicle_data=True, load_pedestrian_data=True,
                                       load_obstacle_data=True))
        self.assertTrue(r.response.result)

    def test_1_loaded_scenario_objects_nearest_first(self):
        self.load('sample')
        m = self.objects.wait(lambda m: m.num_of_npcs + m.num_of_pedestrian + m.num_of_obstacle == 7)
        self.assertIsNotNone(m, 'the sample scenario (3 NPCs, 2 pedestrians, 2 obstacles) never appeared')
        self.assertEqual((m.num_of_npcs, m.num_of_pedestrian, m.num_of_obstacle), (3, 2, 2))
        e = self.ego.msg
        for lst in (m.npc_list, m.pedestrian_list, m.obstacle_list):
            d = [math.hypot(o.position.x - e.position.x, o.position.y - e.position.y) for o in lst]
            self.assertEqual(d, sorted(d), 'objects not nearest first')
        self.assertEqual(sorted(o.unique_id for o in m.obstacle_list), [201, 202])

    def test_2_velocity_converges_within_rate_limits(self):
        self.load('sample')
        self.drive(1.0, velocity=0.0)
        samples = []
        self.drive(7.0, velocity=18.0, sample=lambda: samples.append(at(self.ego.msg)))
        v_end = speed(self.ego.msg)
        self.assertAlmostEqual(v_end, 5.0, delta=0.3)                # 18 km/h reached
        rates = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(samples, samples[5:]) if b[0] - a[0] > 0.2]
        self.assertLess(max(rates), 1.0 * 1.25, f'accelerated faster than +1 m/s^2: {max(rates):.2f}')
        t_reach = next(t for t, v in samples if v > 4.9) - samples[0][0]
        self.assertGreater(t_reach, 4.0, f'reached 5 m/s in {t_reach:.1f} s: faster than +1 m/s^2')
        down = []
        self.drive(4.0, velocity=0.0, sample=lambda: down.append(at(self.ego.msg)))
        self.assertLess(speed(self.ego.msg), 0.1)
        rates = [(a[1] - b[1]) / (b[0] - a[0]) for a, b in zip(down, down[5:]) if b[0] - a[0] > 0.2]
        self.assertLess(max(rates), 2.0 * 1.25, f'braked harder than -2 m/s^2: {max(rates):.2f}')
        self.assertGreater(max(rates), 1.5, 'velocity mode should brake at about 2 m/s^2')

    def test_3_positive_steering_turns_left(self):
        self.load('sample')
        h0 = self.ego.wait().heading
        self.drive(3.0, velocity=15.0, steering=0.2)
        dh = (self.ego.msg.heading - h0 + 180.0) % 360.0 - 180.0
        self.assertGreater(dh, 5.0, f'heading change {dh:.1f} deg: + steering (REP-103 left) must turn CCW')
        self.drive(3.0, velocity=0.0)

    def test_4_set_traffic_light_reported_back(self):
        tl = Latest('/GetTrafficLightStatus', GetTrafficLightStatus, timeout=T)
        pub = rospy.Publisher('/SetTrafficLight', SetTrafficLight, queue_size=1)
        seen = None
        end = time.monotonic() + T
        while seen is None and time.monotonic() < end:
            pub.publish(SetTrafficLight(trafficLightIndex='C119BS010008', trafficLightStatus=33))
            seen = tl.wait(lambda m: m.trafficLightIndex == 'C119BS010008' and m.trafficLightStatus == 33,
                           timeout=0.5)
        self.assertIsNotNone(seen, 'forced light state never reported')
        self.assertEqual(seen.trafficLightType, 2)

    def test_5_pause_freezes_and_status_says_paused(self):
        self.load('sample')
        st = Latest('/sim/process/state/msg/MoraiSimProcStatus', MoraiSimProcStatus, timeout=T)
        proc = rospy.ServiceProxy('/Morai_SimProc', MoraiSimProcSrv)
        self.drive(2.0, velocity=15.0)
        self.assertTrue(proc(MoraiSimProcHandle(sim_process_status=0x10)).response.result)
        self.assertIsNotNone(st.wait(lambda m: m.current_status == 0x10), 'status never said paused')
        time.sleep(0.3)
        a = self.ego.msg
        self.drive(1.5, velocity=15.0)
        b = self.ego.msg
        self.assertEqual((a.position.x, a.position.y), (b.position.x, b.position.y))
        self.assertEqual(a.header.stamp, b.header.stamp)
        # the simulator repeats the frozen time while paused: nothing is published (the newest-sample rule),
        # and /diagnostics says why the topic is silent rather than a bare rate
        self.assertIsNotNone(self.stream_diag('ego_status', lambda d: d[1].startswith('paused:')),
                             f"ego_status's diagnostics never said paused: {self.stream_diag('ego_status')!r}")
        d = self.stream_diag('ego_status')
        self.assertEqual(d[0], 0, d)
        self.assertEqual(float(d[2]['published rate [Hz]']), 0.0, d)
        self.assertGreater(float(d[2]['rate [Hz]']), 0.0, d)
        self.assertTrue(proc(MoraiSimProcHandle(sim_process_status=0x01)).response.result)
        self.assertIsNotNone(st.wait(lambda m: m.current_status == 0x01))
        self.assertIsNotNone(self.stream_diag('ego_status', lambda d: d[1].endswith(' Hz')),
                             f"ego_status's diagnostics stayed paused: {self.stream_diag('ego_status')!r}")
        self.drive(1.0, velocity=15.0)
        self.assertNotEqual(self.ego.msg.position.x, b.position.x)
        self.drive(3.0, velocity=0.0)

    def test_6_driving_into_obstacle_collides(self):
        self.load('obstacle_ahead')
        col = Latest('/CollisionData', CollisionData, timeout=T)
        self.drive(1.0, velocity=0.0)
        hit = []
        self.drive(15.0, velocity=20.0, sample=lambda: hit.append(col.msg) if col.msg and
                   col.msg.collision_object else None)
        self.assertTrue(hit, 'no CollisionData with objects while driving into the obstacle')
        m = hit[0]
        self.assertEqual(m.collision_object[0].type, 2)
        self.assertLess(speed(self.ego.msg), 0.5, 'the ego should stop on contact')

    def test_7_keyboard_mode_ignores_commands_and_is_diagnosed(self):
        self.load('sample')
        me = rospy.Publisher('/ego_setting', MultiEgoSetting, queue_size=1)
        e = self.ego.wait()

        def setting(mode):
            return MultiEgoSetting(number_of_ego_vehicle=1, camera_index=0, ego_index=[0],
                                   global_position_x=[e.position.x], global_position_y=[e.position.y],
                                   global_position_z=[0.0], global_roll=[0.0], global_pitch=[0.0],
                                   global_yaw=[e.heading], velocity=[0.0], gear=[4], ctrl_mode=[mode])
        end = time.monotonic() + T
        while time.monotonic() < end and self.last_ctrl_mode() != 1:
            me.publish(setting(1))
            time.sleep(0.3)
        self.assertEqual(self.last_ctrl_mode(), 1, 'the emulator never switched to keyboard mode')
        x0 = self.ego.msg.position.x
        self.drive(2.5, velocity=20.0)
        self.assertAlmostEqual(self.ego.msg.position.x, x0, delta=0.01)   # commands ignored
        self.assertLess(speed(self.ego.msg), 0.01)
        end = time.monotonic() + T
        while time.monotonic() < end:
            self.drive(0.5, velocity=20.0)
            lvl_msg = self.diag.get('udp_bridge: Simulator control state')
            if lvl_msg and lvl_msg[0] == 1 and 'keyboard' in lvl_msg[1]:
                break
        self.assertTrue(lvl_msg and 'keyboard' in lvl_msg[1], f'diagnostics did not explain: {lvl_msg!r}')
        end = time.monotonic() + T
        while time.monotonic() < end and self.last_ctrl_mode() != 2:
            me.publish(setting(2))
            time.sleep(0.3)
        self.assertEqual(self.last_ctrl_mode(), 2)

    def stream_diag(self, name, pred=None, timeout=T):
        """(level, message, values) of the bridge's /diagnostics entry of stream ``name``; with ``pred``, the
        first that satisfies it within ``timeout`` (None if none did)."""
        prefix = 'udp_bridge: UDP %s (port' % name
        end = time.monotonic() + timeout
        while True:
            d = next((v for k, v in list(self.diag.items()) if k.startswith(prefix)), None)
            if pred is None or (d is not None and pred(d)):
                return d
            if time.monotonic() > end:
                return None
            time.sleep(0.1)

    def last_ctrl_mode(self):
        """The control mode the simulator reports, as the bridge's diagnostics show it
        (EgoVehicleStatus has no field for it)."""
        d = self.diag.get('udp_bridge: Simulator control state')
        if not d or 'reported ctrl_mode' not in d[2]:
            return None
        return int(d[2]['reported ctrl_mode'].split()[0])

    def test_8_sync_mode_lock_step(self):
        cmd = rospy.ServiceProxy('/SyncModeCmd', MoraiSyncModeCmdSrv)
        tick = rospy.ServiceProxy('/SyncModeWaitForTick', MoraiWaitForTickSrv)
        ctrl = rospy.ServiceProxy('/SyncModeCtrlCmd', MoraiSyncModeCtrlCmdSrv)
        rospy.wait_for_service('/SyncModeCmd', T)
        self.assertFalse(cmd(SyncModeCmd(user_id='test', start_sync_mode=True, time_step=30)).response.result)
        r = cmd(SyncModeCmd(user_id='test', start_sync_mode=True, time_step=40)).response
        self.assertTrue(r.result)
        self.assertEqual(r.time_step, 40)
        frame = r.frame
        times = []
        for k in range(10):
            self.assertTrue(ctrl(SyncModeCtrlCmd(frame=frame + 1, command=CtrlCmd(longlCmdType=2, velocity=10.0))
                                 ).response.result)
            t = tick(WaitForTick(user_id='test', frame=frame + 1)).response
            self.assertTrue(t.tick_status)
            self.assertEqual(t.frame, frame + 1)
            sec, nsec = (int(x) for x in t.time.split('.'))
            times.append(sec * 10 ** 9 + nsec)
            self.assertEqual((t.vehicle_status.header.stamp.secs, t.vehicle_status.header.stamp.nsecs), (sec, nsec))
            frame = t.frame
        self.assertEqual([b - a for a, b in zip(times, times[1:])], [40000000] * 9)
        # nothing moves between ticks
        p = self.ego.msg.position.x
        time.sleep(0.5)
        self.assertEqual(self.ego.msg.position.x, p)
        wrong = tick(WaitForTick(user_id='test', frame=frame + 5)).response
        self.assertFalse(wrong.tick_status)
        self.assertTrue(cmd(SyncModeCmd(user_id='test', start_sync_mode=False, time_step=40)).response.result)

    def test_9_silent_ctrl_cmd_brakes_to_a_stop(self):
        """A planner that stops publishing: the simulator holds the last command, so after
        ~ctrl_cmd_timeout the bridge sends one braking command, which stops the ego, and says so."""
        self.load('sample')
        self.drive(4.0, velocity=20.0)
        self.assertGreater(speed(self.ego.msg), 3.0, 'the ego never got going')
        silent_at = time.monotonic()
        stopped = self.ego.wait(lambda m: speed(m) < 0.05, timeout=T)
        self.assertIsNotNone(stopped, 'the ego kept moving after /ctrl_cmd fell silent')
        self.assertLess(time.monotonic() - silent_at, T)
        end = time.monotonic() + T
        d = None
        while time.monotonic() < end:
            d = self.diag.get('udp_bridge: Simulator control state')
            if d and d[0] == 1 and 'watchdog' in d[1]:
                break
            time.sleep(0.1)
        self.assertTrue(d and d[0] == 1 and 'watchdog sent a braking command' in d[1], f'not diagnosed: {d!r}')
        self.assertGreaterEqual(int(d[2]['watchdog brakes']), 1)
        # the next command takes over again
        self.drive(2.0, velocity=10.0)
        self.assertGreater(speed(self.ego.msg), 0.5)
        self.drive(3.0, velocity=0.0)


if __name__ == '__main__':
    rospy.init_node('test_closed_loop')
    rostest.rosrun('morai_msgs', 'test_closed_loop', ClosedLoopTest)
