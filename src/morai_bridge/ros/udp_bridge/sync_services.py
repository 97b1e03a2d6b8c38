"""The morai_msgs synchronous-mode services, served over our emulator's lock-step extension.

The real simulator offers sync mode only through its gRPC/ROS interfaces; over
UDP it exists only in our simulator emulator (:mod:`morai_bridge.wire.udp.lockstep`,
docs/emulator.md).  The bridge therefore creates :class:`SyncServices` only with
``~emulator_sync:=true``: SyncModeCmd, SyncModeCtrlCmd, SyncModeSetGear,
SyncModeWaitForTick and SyncModeScenarioLoad.
"""
import threading
import time

import rospy

from morai_msgs.msg import ScenarioLoad, SyncModeCmdResponse, SyncModeResultResponse, WaitForTickResponse
from morai_msgs.srv import (MoraiSyncModeCmdSrv, MoraiSyncModeCmdSrvResponse, MoraiSyncModeCtrlCmdSrv,
                            MoraiSyncModeCtrlCmdSrvResponse, MoraiSyncModeSetGearSrv,
                            MoraiSyncModeSetGearSrvResponse, MoraiSyncModeSLSrv, MoraiSyncModeSLSrvResponse,
                            MoraiWaitForTickSrv, MoraiWaitForTickSrvResponse)

from morai_bridge.configuration.params import DISABLED
from morai_bridge.ros.udp_bridge import ros_to_sim
from morai_bridge.wire.udp import lockstep
from morai_bridge.wire import udp
from morai_bridge.wire.enums import CtrlMode, Gear

_AUTO = int(CtrlMode.AUTO)


class SyncServices:

    def __init__(self, cfg, receiver, commands):
        self.cfg = cfg
        self.rx = receiver
        self.tx = commands
        self.state = None
        self.seq = 0
        self.cond = threading.Condition()
        self.pending = None      # (frame, CtrlCmd) for the next tick
        receiver.listeners['sync_state'] = self.on_state
        rospy.Service(cfg.sync_cmd_service, MoraiSyncModeCmdSrv, self.sync_cmd)
        rospy.Service(cfg.sync_tick_service, MoraiWaitForTickSrv, self.tick)
        rospy.Service(cfg.sync_ctrl_service, MoraiSyncModeCtrlCmdSrv, self.ctrl)
        rospy.Service(cfg.sync_gear_service, MoraiSyncModeSetGearSrv, self.set_gear)
        if cfg.scenario_load_port != DISABLED:
            rospy.Service(cfg.sync_scenario_service, MoraiSyncModeSLSrv, self.scenario)

    def on_state(self, w):
        with self.cond:
            self.state = w
            self.seq += 1
            self.cond.notify_all()

    def _request(self, packet, reply_to):
        """Send an extension packet and wait for the emulator's EmuSyncState answer."""
        with self.cond:
            seq = self.seq
        self.tx.send('sync', packet, lockstep.encode)
        end = time.monotonic() + self.cfg.service_timeout
        with self.cond:
            while True:
                st = self.state
                if self.seq != seq and st is not None and st.reply_to == reply_to:
                    return st
                left = end - time.monotonic()
                if left <= 0:
                    rospy.logwarn_throttle(5.0, 'udp_bridge: no answer to the sync request within %.1f s: is the '
                                           'emulator running with emulator_sync and its sync port on %d?'
                                           % (self.cfg.service_timeout, self.cfg.sync_port))
                    return None
                self.cond.wait(left)

    def sync_cmd(self, req):
        r = req.request
        out = SyncModeCmdResponse(user_id=r.user_id, frame=0, result=False, time_step=r.time_step)
        if r.start_sync_mode and (r.time_step <= 0 or r.time_step % 20):
            self.tx.refuse('sync', ros_to_sim.CommandError('SyncModeCmd.time_step %d ms is not a positive multiple of '
                                                     '20 ms: refused' % r.time_step))
            return MoraiSyncModeCmdSrvResponse(out)
        if len(r.user_id) > 30:
            self.tx.refuse('sync', ros_to_sim.CommandError('SyncModeCmd.user_id longer than 30 characters: refused'))
            return MoraiSyncModeCmdSrvResponse(out)
        st = self._request(lockstep.EmuSyncCmd(bool(r.start_sync_mode), r.time_step, r.user_id),
                           lockstep.REPLY_CMD)
        if st is not None:
            out.frame, out.result, out.time_step = st.frame, st.result, st.time_step_ms or r.time_step
            if not st.result:
                rospy.logwarn('udp_bridge: sync mode request refused: %s',
                              lockstep.REASON_NAMES.get(st.reason, st.reason))
        self.pending = None
        return MoraiSyncModeCmdSrvResponse(out)

    def ctrl(self, req):
        r = req.request
        try:
            self.tx.ctrl_packet(r.command, ctrl_mode=_AUTO)
        except ros_to_sim.CommandError as e:
            self.tx.refuse('sync', e)
            return MoraiSyncModeCtrlCmdSrvResponse(SyncModeResultResponse(False))
        self.pending = (r.frame, r.command)
        return MoraiSyncModeCtrlCmdSrvResponse(SyncModeResultResponse(True))

    def set_gear(self, req):
        if not Gear.M <= req.request.gear <= Gear.L:
            self.tx.refuse('sync', ros_to_sim.CommandError('SyncModeSetGear.gear %d is not 0..5' % req.request.gear))
            return MoraiSyncModeSetGearSrvResponse(SyncModeResultResponse(False))
        self.tx.state.update(sync_gear=req.request.gear)
        return MoraiSyncModeSetGearSrvResponse(SyncModeResultResponse(True))

    def scenario(self, req):
        r = req.request
        sl = ScenarioLoad(file_name=r.file_name, load_network_connection_data=r.load_network_connection_data,
                          delete_all=r.delete_all, load_ego_vehicle_data=r.load_ego_vehicle_data,
                          load_surrounding_vehicle_data=r.load_surrounding_vehicle_data,
                          load_pedestrian_data=r.load_pedestrian_data, load_obstacle_data=r.load_obstacle_data,
                          set_pause=r.set_pause)
        try:
            ok = self.tx.send('scenario_load', ros_to_sim.scenario_load(sl))
        except (ros_to_sim.CommandError, udp.EncodeError) as e:
            self.tx.refuse('scenario_load', e)
            ok = False
        return MoraiSyncModeSLSrvResponse(SyncModeResultResponse(ok))

    def tick(self, req):
        """Advance one frame (with the command stored by SyncModeCtrlCmd, if any) and
        answer with that frame's ego status."""
        r = req.request
        tick = lockstep.EmuSyncTick(frame=r.frame)
        pending, self.pending = self.pending, None
        state = self.tx.state.snapshot()
        gear = state.gear if state.sync_gear is None else state.sync_gear
        if pending is not None:
            c = self.tx.ctrl_packet(pending[1], ctrl_mode=_AUTO, gear=gear)
            tick = tick._replace(has_ctrl=True, gear=c.gear, cmd_type=c.cmd_type, velocity=c.velocity,
                                 acceleration=c.acceleration, accel=c.accel, brake=c.brake, steer=c.steer)
        elif state.sync_gear is not None:
            tick = tick._replace(has_ctrl=True, gear=gear, cmd_type=1, brake=0.0)
        out = WaitForTickResponse()
        st = self._request(tick, lockstep.REPLY_TICK)
        if st is None:
            return MoraiWaitForTickSrvResponse(out)
        out.tick_status, out.pause_status, out.frame = st.result, st.paused, st.frame
        out.time = '%d.%09d' % (st.sec, st.nsec)
        if st.result and self.cfg.ego_status_port:
            # the frame's ego status is sent before the answer, but on another socket: wait for it
            msg = self.rx.wait_status_at(st.sec, st.nsec, self.cfg.service_timeout)
            if msg is not None:
                out.vehicle_status = msg
        elif not st.result:
            rospy.logwarn_throttle(2.0, f'udp_bridge: tick refused: {lockstep.REASON_NAMES.get(st.reason, st.reason)}')
        return MoraiWaitForTickSrvResponse(out)
