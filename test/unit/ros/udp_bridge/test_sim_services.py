"""EventInfo codes of MORAI's ROS manual as /Service_MoraiEventCmd sends them (ros/udp_bridge/sim_services.py):
ctrl_mode 1 keyboard / 2 GameWheel / 3 automode / 4 cruisemode, gear -1 and turnSignal 3 = keep
the previous value.

Needs the built workspace (morai_msgs message classes); no ROS master.
"""

import pytest


def event(option, ctrl_mode=0, gear=0, turn=0, emergency=0):
    from morai_msgs.msg import EventInfo, Lamps
    return EventInfo(option=option, ctrl_mode=ctrl_mode, gear=gear,
                     lamps=Lamps(turnSignal=turn, emergencySignal=emergency))


def test_event_codes_declared_next_to_the_wire_codes():
    from morai_bridge.wire import enums
    E, W = enums.EventCtrlMode, enums.CtrlMode
    assert (E.KEYBOARD, E.GAME_WHEEL, E.AUTO, E.CRUISE) == (1, 2, 3, 4)
    assert enums.EVENT_TO_WIRE_CTRL_MODE == {E.KEYBOARD: W.KEYBOARD, E.AUTO: W.AUTO}
    assert enums.WIRE_TO_EVENT_CTRL_MODE == {W.KEYBOARD: E.KEYBOARD, W.AUTO: E.AUTO}
    assert (enums.EVENT_KEEP_GEAR, enums.EVENT_KEEP_TURN_SIGNAL) == (-1, 3)


def test_event_automode_3_and_keyboard_1_map_to_the_wire():
    from morai_msgs.msg import Lamps
    from morai_bridge.ros.udp_bridge.sim_services import event_ctrl_mode, plan_event
    p = plan_event(event(1, ctrl_mode=3), 1, 4, Lamps())
    assert (p.ctrl_mode, p.refusals) == (2, [])
    assert event_ctrl_mode(p.ctrl_mode) == 3           # the response speaks EventInfo codes
    p = plan_event(event(1, ctrl_mode=1), 2, 4, Lamps())
    assert (p.ctrl_mode, p.refusals) == (1, [])
    assert event_ctrl_mode(p.ctrl_mode) == 1


@pytest.mark.parametrize('mode, word', [(2, 'GAME_WHEEL'), (4, 'CRUISE'), (7, 'not 1 keyboard')])
def test_event_modes_without_udp_form_keep_the_mode_in_force_and_say_why(mode, word):
    from morai_msgs.msg import Lamps
    from morai_bridge.ros.udp_bridge.sim_services import event_ctrl_mode, plan_event
    p = plan_event(event(1, ctrl_mode=mode), 2, 4, Lamps())
    assert p.ctrl_mode == 2                              # automatic stays
    assert event_ctrl_mode(p.ctrl_mode) == 3
    assert len(p.refusals) == 1 and word in p.refusals[0] and 'auto mode stays in force' in p.refusals[0]


def test_event_gear_minus_one_keeps_the_gear():
    from morai_msgs.msg import Lamps
    from morai_bridge.ros.udp_bridge.sim_services import plan_event
    p = plan_event(event(2, gear=-1), 2, 2, Lamps())
    assert (p.gear, p.refusals) == (2, [])
    p = plan_event(event(2, gear=1), 2, 2, Lamps())
    assert (p.gear, p.refusals) == (1, [])
    p = plan_event(event(2, gear=9), 2, 2, Lamps())
    assert p.gear == 2 and 'gear 9' in p.refusals[0]


def test_event_turn_signal_3_keeps_the_previous_turn_signal_only():
    from morai_msgs.msg import Lamps
    from morai_bridge.ros.udp_bridge import ros_to_sim
    from morai_bridge.ros.udp_bridge.sim_services import plan_event
    p = plan_event(event(4, turn=3, emergency=1), 2, 4, Lamps(turnSignal=2, emergencySignal=0))
    assert (p.lamps.turnSignal, p.lamps.emergencySignal, p.refusals) == (2, 1, [])
    packet = ros_to_sim.lamps(p.lamps)                         # a sendable lamp request, not a refusal
    assert (packet.turn_signal, packet.emergency_signal) == (2, 1)
    p = plan_event(event(4, turn=1, emergency=0), 2, 4, Lamps(turnSignal=2, emergencySignal=1))
    assert (p.lamps.turnSignal, p.lamps.emergencySignal) == (1, 0)
    assert plan_event(event(2, gear=4), 2, 4, Lamps()).lamps is None      # lamps bit not set
