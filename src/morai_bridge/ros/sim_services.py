"""The simulator services of the UDP bridge: /Morai_SimProc, /Service_MoraiSL, /Service_MoraiEventCmd.

Each service turns its request into packets through the :class:`.sim_commands.CommandSender`
and, where the simulator reports the outcome (SimStatus), waits up to
``~service_timeout`` for the confirmation seen by the :class:`.sim_receive.SimReceiver`.
"""
import time

import rospy

from morai_msgs.msg import EventInfo, MoraiSrvResponse
from morai_msgs.srv import (MoraiEventCmdSrv, MoraiEventCmdSrvResponse, MoraiScenarioLoadSrv,
                            MoraiScenarioLoadSrvResponse, MoraiSimProcSrv, MoraiSimProcSrvResponse)

from morai_bridge.ros import udp_convert as conv
from morai_bridge.wire import udp
from morai_bridge.wire.enums import CtrlMode, Gear, SimCommand, SimState

# EventInfo.option bits
OPT_CTRL_MODE, OPT_GEAR, OPT_LAMPS, OPT_PAUSE = 1, 2, 4, 8


class SimServices(object):

    def __init__(self, cfg, receiver, commands):
        self.cfg = cfg
        self.rx = receiver
        self.tx = commands
        self.cmd_sent_t = 0.0
        if cfg.sim_control_port:
            rospy.Service(cfg.sim_proc_service, MoraiSimProcSrv, self.sim_proc)
        if cfg.scenario_load_port:
            rospy.Service(cfg.scenario_service, MoraiScenarioLoadSrv, self.scenario)
        rospy.Service(cfg.event_service, MoraiEventCmdSrv, self.event)

    def send_sim_control(self, packet):
        self.cmd_sent_t = time.monotonic()
        self.rx.last_sim_command = rospy.Time.now()
        return self.tx.send('sim_control', packet)

    def wait_sim_status(self, pred):
        return self.rx.wait_sim_status(pred, self.cfg.service_timeout, self.cmd_sent_t)

    def sim_proc(self, req):
        try:
            packet = conv.sim_proc_handle(req.request)
        except conv.CommandError as e:
            self.tx.refuse('sim_control', e)
            return MoraiSimProcSrvResponse(MoraiSrvResponse(False))
        if not self.send_sim_control(packet):
            return MoraiSimProcSrvResponse(MoraiSrvResponse(False))
        want = SimState.PLAYING if packet.command == SimCommand.PLAY else SimState.PAUSE
        ok = self.wait_sim_status(lambda s: s.status == want and s.command == packet.command)
        if ok is False:
            rospy.logwarn('udp_bridge: simulator did not confirm %s within %.1f s'
                          % ('play' if want == SimState.PLAYING else 'pause', self.cfg.service_timeout))
        return MoraiSimProcSrvResponse(MoraiSrvResponse(ok is not False))

    def scenario(self, req):
        try:
            packet = conv.scenario_load(req.request)
        except (conv.CommandError, udp.EncodeError) as e:
            self.tx.refuse('scenario_load', e)
            return MoraiScenarioLoadSrvResponse(MoraiSrvResponse(False))
        return MoraiScenarioLoadSrvResponse(MoraiSrvResponse(self.tx.send('scenario_load', packet)))

    def event(self, req):
        """EventInfo.option bits: 1 ctrl_mode, 2 gear, 4 lamps, 8 set_pause."""
        e = req.request
        opt = e.option
        tx = self.tx
        if opt & OPT_CTRL_MODE:
            if e.ctrl_mode in (CtrlMode.KEYBOARD, CtrlMode.AUTO):
                tx.ctrl_mode = e.ctrl_mode
            else:
                tx.refuse('ctrl_cmd', conv.CommandError('EventInfo.ctrl_mode %r is not 1 or 2' % e.ctrl_mode))
        if opt & OPT_GEAR:
            if Gear.M <= e.gear <= Gear.L:
                tx.gear = e.gear
            else:
                tx.refuse('ctrl_cmd', conv.CommandError('EventInfo.gear %r is not 0..5' % e.gear))
        if opt & OPT_LAMPS and self.cfg.lamps_port:
            try:
                tx.send('lamps', conv.lamps(e.lamps))
                tx.lamps_state = e.lamps
            except conv.CommandError as err:
                tx.refuse('lamps', err)
        if opt & OPT_PAUSE and self.cfg.sim_control_port:
            self.send_sim_control(conv.sim_control(SimCommand.PAUSE if e.set_pause else SimCommand.PLAY))
            self.wait_sim_status(lambda s: s.status in (SimState.PAUSE, SimState.PLAYING))
        if opt & (OPT_CTRL_MODE | OPT_GEAR):
            # Gear and mode travel with ctrl commands: apply them now with a braking command.
            tx.brake()
        r = EventInfo()
        r.option = opt
        r.ctrl_mode = tx.ctrl_mode
        r.gear = tx.gear
        r.lamps = tx.lamps_state
        s = self.rx.sim_status
        r.set_pause = bool(s is not None and s.status == SimState.PAUSE)
        return MoraiEventCmdSrvResponse(r)
