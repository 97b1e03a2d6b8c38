"""The simulator services of the UDP bridge: /Morai_SimProc, /Service_MoraiSL, /Service_MoraiEventCmd.

Each service turns its request into packets through the :class:`.command_sender.CommandSender`
and, where the simulator reports the outcome (SimStatus), waits up to
``~service_timeout`` for the confirmation seen by the :class:`.sim_receive.SimReceiver`.

EventInfo uses the codes of MORAI's ROS manual, not the wire's (:func:`plan_event`,
:class:`morai_bridge.wire.enums.EventCtrlMode`).
"""
import time
from typing import List, NamedTuple, Optional

import rospy

from morai_msgs.msg import EventInfo, Lamps, MoraiSrvResponse
from morai_msgs.srv import (MoraiEventCmdSrv, MoraiEventCmdSrvResponse, MoraiScenarioLoadSrv,
                            MoraiScenarioLoadSrvResponse, MoraiSimProcSrv, MoraiSimProcSrvResponse)

from morai_bridge.configuration.params import DISABLED
from morai_bridge.ros.udp_bridge import ros_to_sim
from morai_bridge.wire import udp
from morai_bridge.wire.enums import (EVENT_KEEP_GEAR, EVENT_KEEP_TURN_SIGNAL, EVENT_TO_WIRE_CTRL_MODE,
                                     WIRE_TO_EVENT_CTRL_MODE, EventCtrlMode, Gear, SimCommand, SimState,
                                     name_of)

# EventInfo.option bits
OPT_CTRL_MODE, OPT_GEAR, OPT_LAMPS, OPT_PAUSE = 1, 2, 4, 8


class EventPlan(NamedTuple):
    """What an EventInfo request does: the wire ctrl_mode and gear in force afterwards, the
    Lamps to send (None: none), and why parts of the request could not be done."""
    ctrl_mode: int
    gear: int
    lamps: Optional[Lamps]
    refusals: List[str]


def plan_event(e, ctrl_mode, gear, lamps):
    """Apply EventInfo ``e`` (ROS-manual codes) to the state in force: wire ``ctrl_mode``,
    ``gear`` and the last ``lamps`` sent.

    ctrl_mode: 1 keyboard -> wire 1, 3 automode -> wire 2; 2 GameWheel and 4 cruisemode have
    no UDP form (refused, the mode in force stays).  gear: -1 keeps the gear, 0..5 sets it.
    lamps: turnSignal 3 keeps the previous turn signal (the last one this bridge sent: the
    simulator does not report its lamps over UDP), emergencySignal is applied.
    """
    opt = e.option
    refusals = []
    if opt & OPT_CTRL_MODE:
        wire = EVENT_TO_WIRE_CTRL_MODE.get(e.ctrl_mode)
        in_force = name_of(EventCtrlMode, WIRE_TO_EVENT_CTRL_MODE.get(ctrl_mode, ctrl_mode)).lower()
        if wire is not None:
            ctrl_mode = int(wire)
        elif e.ctrl_mode in (EventCtrlMode.GAME_WHEEL, EventCtrlMode.CRUISE):
            refusals.append('EventInfo.ctrl_mode %d (%s) has no UDP form (Ego Ctrl Cmd carries keyboard or '
                            'automatic only): %s mode stays in force'
                            % (e.ctrl_mode, name_of(EventCtrlMode, e.ctrl_mode), in_force))
        else:
            refusals.append('EventInfo.ctrl_mode %r is not 1 keyboard, 2 GameWheel, 3 automode or 4 cruisemode: '
                            '%s mode stays in force' % (e.ctrl_mode, in_force))
    if opt & OPT_GEAR:
        if e.gear == EVENT_KEEP_GEAR:
            pass
        elif Gear.M <= e.gear <= Gear.L:
            gear = e.gear
        else:
            refusals.append('EventInfo.gear %r is not -1 (keep) or 0..5: gear %s stays in force'
                            % (e.gear, name_of(Gear, gear)))
    new_lamps = None
    if opt & OPT_LAMPS:
        turn = e.lamps.turnSignal
        if turn == EVENT_KEEP_TURN_SIGNAL:
            turn = lamps.turnSignal
        new_lamps = Lamps(header=e.lamps.header, turnSignal=turn, emergencySignal=e.lamps.emergencySignal)
    return EventPlan(ctrl_mode, gear, new_lamps, refusals)


def event_ctrl_mode(wire_ctrl_mode):
    """EventInfo ctrl_mode (ROS-manual code) of a wire ctrl_mode."""
    return int(WIRE_TO_EVENT_CTRL_MODE.get(wire_ctrl_mode, wire_ctrl_mode))


class SimServices:

    def __init__(self, cfg, receiver, commands):
        self.cfg = cfg
        self.rx = receiver
        self.tx = commands
        self.cmd_sent_t = 0.0
        if cfg.sim_control_port != DISABLED:
            rospy.Service(cfg.sim_proc_service, MoraiSimProcSrv, self.sim_proc)
        if cfg.scenario_load_port != DISABLED:
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
            packet = ros_to_sim.sim_proc_handle(req.request)
        except ros_to_sim.CommandError as e:
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
            packet = ros_to_sim.scenario_load(req.request)
        except (ros_to_sim.CommandError, udp.EncodeError) as e:
            self.tx.refuse('scenario_load', e)
            return MoraiScenarioLoadSrvResponse(MoraiSrvResponse(False))
        return MoraiScenarioLoadSrvResponse(MoraiSrvResponse(self.tx.send('scenario_load', packet)))

    def event(self, req):
        """EventInfo.option bits: 1 ctrl_mode, 2 gear, 4 lamps, 8 set_pause (codes: :func:`plan_event`).
        The response holds the state in force afterwards, ctrl_mode in EventInfo codes."""
        e = req.request
        opt = e.option
        tx = self.tx
        def change(state):
            """The event planned from the state in force, applied with it in one step (lamps too, when
            they convert)."""
            p = plan_event(e, state.ctrl_mode, state.gear, state.lamps)
            packet = err = None
            if p.lamps is not None and self.cfg.lamps_port:
                try:
                    packet = ros_to_sim.lamps(p.lamps)
                except ros_to_sim.CommandError as x:
                    err = x
            return dict(gear=p.gear, ctrl_mode=p.ctrl_mode, lamps=p.lamps if packet is not None else None), \
                (p, packet, err)
        (plan, lamps_packet, lamps_error), changed = tx.state.change(change)
        for text in plan.refusals:
            tx.refuse('ctrl_cmd', ros_to_sim.CommandError(text))
        if lamps_error is not None:
            tx.refuse('lamps', lamps_error)
        if lamps_packet is not None:
            tx.send('lamps', lamps_packet)
        if opt & OPT_PAUSE and self.cfg.sim_control_port:
            self.send_sim_control(ros_to_sim.sim_control(SimCommand.PAUSE if e.set_pause else SimCommand.PLAY))
            self.wait_sim_status(lambda s: s.status in (SimState.PAUSE, SimState.PLAYING))
        if changed:
            # Gear and mode travel with ctrl commands: apply them now with a braking command.
            tx.brake()
        gear, ctrl_mode, lamps = tx.state.snapshot()[:3]
        r = EventInfo()
        r.option = opt
        r.ctrl_mode = event_ctrl_mode(ctrl_mode)
        r.gear = gear
        r.lamps = lamps
        s = self.rx.sim_status
        r.set_pause = bool(s is not None and s.status == SimState.PAUSE)
        return MoraiEventCmdSrvResponse(r)
