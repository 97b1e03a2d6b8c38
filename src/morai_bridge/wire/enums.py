"""Enumerations of the MORAI UDP protocol, declared once.

The layouts' field docs (:mod:`.udp.layouts`), the bridge's diagnostics, the
dump tool and the emulator all take their names and values from here.  Values
are plain ints on the wire; these are :class:`enum.IntEnum` so that
``Gear.D == 4`` and ``int(Gear.D)`` works where speed matters.  No ROS.
"""
import enum


class Gear(enum.IntEnum):
    """Gear of Ego Ctrl Cmd / Ego Vehicle Status (EventInfo.gear, CtrlCmd gear)."""
    M = 0
    P = 1
    R = 2
    N = 3
    D = 4
    L = 5


class CtrlMode(enum.IntEnum):
    """Control mode on the UDP wire (Ego Ctrl Cmd, Ego Vehicle Status, Multi Ego Setting)."""
    KEYBOARD = 1
    AUTO = 2


class EventCtrlMode(enum.IntEnum):
    """EventInfo.ctrl_mode of /Service_MoraiEventCmd as MORAI's ROS manual defines it.

    These are *not* the wire's :class:`CtrlMode` codes.  Mapping to the UDP wire
    (:data:`EVENT_TO_WIRE_CTRL_MODE`): KEYBOARD 1 -> CtrlMode.KEYBOARD 1,
    AUTO 3 -> CtrlMode.AUTO 2.  GAME_WHEEL 2 and CRUISE 4 have no UDP form: Ego
    Ctrl Cmd carries only keyboard or automatic, so the bridge keeps the mode in
    force and says so.
    """
    KEYBOARD = 1
    GAME_WHEEL = 2
    AUTO = 3
    CRUISE = 4


#: EventInfo ctrl_mode -> wire ctrl_mode, for the codes that have a UDP form.
EVENT_TO_WIRE_CTRL_MODE = {EventCtrlMode.KEYBOARD: CtrlMode.KEYBOARD, EventCtrlMode.AUTO: CtrlMode.AUTO}
#: wire ctrl_mode -> EventInfo ctrl_mode (the response reports the mode in force in EventInfo codes).
WIRE_TO_EVENT_CTRL_MODE = {CtrlMode.KEYBOARD: EventCtrlMode.KEYBOARD, CtrlMode.AUTO: EventCtrlMode.AUTO}
#: EventInfo.gear value meaning "keep the previous gear" (ROS manual).
EVENT_KEEP_GEAR = -1
#: EventInfo.lamps.turnSignal value meaning "keep the previous turn signal" (ROS manual).
EVENT_KEEP_TURN_SIGNAL = 3


class MultiEgoCtrlMode(enum.IntEnum):
    """MultiEgoSetting.ctrl_mode as MORAI's ROS manual defines it: 1 keyboard, 16 automode.

    The UDP record carries the wire :class:`CtrlMode` (1 keyboard, 2 auto); see
    :data:`MULTI_EGO_TO_WIRE_CTRL_MODE`.
    """
    KEYBOARD = 1
    AUTO = 16


#: MultiEgoSetting ctrl_mode (ROS) -> wire ctrl_mode.  16 is the ROS manual's automode; 2 (the
#: wire's own code, used by clients written against the UDP manual) is accepted as automatic too.
MULTI_EGO_TO_WIRE_CTRL_MODE = {int(MultiEgoCtrlMode.KEYBOARD): CtrlMode.KEYBOARD,
                               int(MultiEgoCtrlMode.AUTO): CtrlMode.AUTO,
                               int(CtrlMode.AUTO): CtrlMode.AUTO}


class ObjectType(enum.IntEnum):
    """ObjectInfo / collision record obj_type."""
    EGO = -1
    PEDESTRIAN = 0
    VEHICLE = 1
    OBSTACLE = 2


class TrafficLightType(enum.IntEnum):
    """GetTrafficLightStatus.traffic_light_type."""
    RYG = 0
    RYG_LEFT = 1
    RYG_LEFT_G = 2
    YYY = 100


class TrafficLightBit(enum.IntEnum):
    """Bits of a traffic-light status (-1: default / off)."""
    RED = 1
    YELLOW = 4
    GREEN = 16
    GREEN_LEFT = 32


class LonglCmdType(enum.IntEnum):
    """Ego Ctrl Cmd cmd_type / CtrlCmd.longlCmdType: which fields command the ego."""
    THROTTLE = 1       # accel / brake pedals
    VELOCITY = 2       # target speed [km/h]
    ACCELERATION = 3   # target acceleration [m/s^2]


class Platform(enum.IntEnum):
    """SimControl / SimStatus platform."""
    LAUNCHER = 1
    SIMULATOR = 2


class SimCommand(enum.IntEnum):
    """SimControl.command (simulator platform)."""
    MAP_VEHICLE_SELECT = 0x0001
    PAUSE = 0x0002
    PLAY = 0x0003


class SimState(enum.IntEnum):
    """SimStatus.status."""
    PLAYING = 0x0001
    PAUSE = 0x0002


class SimResult(enum.IntEnum):
    """SimStatus.result."""
    NONE = 0
    SUCCESS = 1


class SimProc(enum.IntEnum):
    """morai_msgs MoraiSimProcHandle.sim_process_status / MoraiSimProcStatus.current_status."""
    PLAY = 0x01
    PAUSE = 0x10
    STOP_REPLAY = 0x20


class GvSteerMode(enum.IntEnum):
    """Ground-vehicle steering mode (GV Direct/State Cmd)."""
    SKID = 1
    ACKERMANN = 2
    ZERO_TURN = 3


def name_of(enum_cls, value):
    """Name of ``value`` in ``enum_cls``, or the number as text when it has none."""
    try:
        return enum_cls(value).name
    except ValueError:
        return str(value)


def doc_of(enum_cls, prefix='enum'):
    """'enum: 0 M, 1 P, ...' for layout field docs."""
    return '%s: %s' % (prefix, ', '.join('%d %s' % (m.value, m.name) for m in enum_cls))


def light_text(status):
    """'RED+YELLOW' style text of a traffic-light status bit set ('off' for -1, '0' for 0)."""
    if status < 0:
        return 'off'
    names = [b.name for b in TrafficLightBit if status & b.value]
    return '+'.join(names) if names else str(status)
