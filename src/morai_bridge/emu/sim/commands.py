"""What the simulator emulator does with each user -> simulator command.

One handler per MORAI command (:func:`on_ctrl_cmd`, :func:`on_sim_control`, ...), a plain
function ``handler(world, message) -> bool`` of the :class:`~.world.World` and the decoded
message; :data:`COMMAND_HANDLERS` maps each message class of :mod:`morai_bridge.wire.udp` to its
handler.  :class:`~.emulator.SimEmulator`'s receive path (decode, check the port's classes,
count) runs them with its lock held; they change the world through its public attributes and
methods.  Each returns True when the command was applied, False when it was well-formed but
ignored (counted per port).

The SimControl / SimStatus codes that :mod:`morai_bridge.wire.enums` does not
name yet (spec 3.19, 3.20) are defined here.  No ROS.
"""

import logging
import math

from morai_bridge.wire import udp
from morai_bridge.wire.enums import CtrlMode, Gear, ObjectType, Platform, SimCommand, SimResult
from morai_bridge.wire.units import MPS_TO_KMH

from .actors import Actor
from .ego import CMD_ACCELERATION, CMD_THROTTLE, CMD_VELOCITY, Drive
from .scenario import ActorSpec, ScenarioError, load_scenario

__all__ = ["COMMAND_HANDLERS", "accept_drive", "sync_drive", "load", "CMD_NET_SETTING", "CMD_SEN_SETTING",
           "CMD_SCEN_SETTING", "RESULT_INVALID_PLATFORM", "RESULT_INVALID_STAGE",
           "RESULT_NET_LOAD_ERROR", "RESULT_SENSOR_LOAD_ERROR", "RESULT_SCENARIO_LOAD_ERROR",
           "SCEN_DELETE_ALL", "SCEN_EGO", "SCEN_NPC", "SCEN_PEDESTRIAN", "SCEN_OBSTACLE",
           "SCEN_PAUSE", "finite"]

log = logging.getLogger("morai_bridge.emu.sim")

# SimControl commands and SimStatus results beyond wire.enums (spec 3.19, 3.20)
CMD_NET_SETTING, CMD_SEN_SETTING, CMD_SCEN_SETTING = 0x0011, 0x0012, 0x0013
RESULT_INVALID_PLATFORM, RESULT_INVALID_STAGE = 0x11, 0x12
RESULT_NET_LOAD_ERROR, RESULT_SENSOR_LOAD_ERROR, RESULT_SCENARIO_LOAD_ERROR = 0x33, 0x35, 0x37
# SCEN_SETTING option flags (spec 3.19)
SCEN_DELETE_ALL, SCEN_EGO, SCEN_NPC, SCEN_PEDESTRIAN, SCEN_OBSTACLE, SCEN_PAUSE = (
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20)

_AUTO, _KEYBOARD = int(CtrlMode.AUTO), int(CtrlMode.KEYBOARD)
_P, _R, _D = int(Gear.P), int(Gear.R), int(Gear.D)
_SIMULATOR = int(Platform.SIMULATOR)
_SUCCESS = int(SimResult.SUCCESS)
_NPC_SIZE = (4.6, 1.9, 1.5)         # vehicle created by an NPC Ghost Cmd for an unknown id
_NPC_WHEELBASE = 2.7


def finite(*values) -> bool:
    return all(math.isfinite(v) for v in values)


def ignore(what: str) -> bool:
    log.debug("ignored: %s", what)
    return False


def accept_drive(world, drive: Drive) -> bool:
    """Hold ``drive`` as the network command (auto mode, valid values only)."""
    if world.ctrl_mode != _AUTO:
        return ignore("control command in keyboard mode")
    if drive.cmd_type not in (CMD_THROTTLE, CMD_VELOCITY, CMD_ACCELERATION):
        return ignore(f"cmd_type {drive.cmd_type}")
    if not 0 <= drive.gear <= 5 or not drive.finite():
        return ignore("gear out of range or non-finite value")
    world.drive = drive
    return True


def sync_drive(world, m) -> bool:
    """An EmuSyncTick's control command (the lock-step extension; gear 0: the gear in force); its
    steer is an Ego Ctrl Cmd's, + left or + right as the sim_version says."""
    return accept_drive(world, Drive(m.cmd_type, m.gear or world.ego.gear, m.velocity, m.acceleration,
                                     m.accel, m.brake, world.ctrl_sign * m.steer))


def load(world, name, delete_all, load_ego, load_npc, load_ped, load_obj, set_pause) -> int:
    """Load ``<scenario_dir>/<name>.json`` into ``world`` and record it as SimStatus's last command;
    returns the SimStatus result (1, or 0x37 when the file is missing or wrong)."""
    flags = ((SCEN_DELETE_ALL if delete_all else 0) | (SCEN_EGO if load_ego else 0)
             | (SCEN_NPC if load_npc else 0) | (SCEN_PEDESTRIAN if load_ped else 0)
             | (SCEN_OBSTACLE if load_obj else 0) | (SCEN_PAUSE if set_pause else 0))
    try:
        sc = load_scenario(world.config.scenario_dir, name, world.road)
    except ScenarioError as e:
        log.error("scenario load failed: %s", e)
        result = RESULT_SCENARIO_LOAD_ERROR
    else:
        world.apply_scenario(sc, delete_all, load_ego, load_npc, load_ped, load_obj, set_pause)
        log.info("scenario %r loaded (flags 0x%02x): %d objects", sc.name, flags, len(world.actors))
        result = _SUCCESS
    world.record_command(_SIMULATOR, CMD_SCEN_SETTING, f"{name}/{flags}", result)
    return result


# ------------------------------------------------------------ driving the ego
def on_ctrl_cmd(world, m) -> bool:
    if m.ctrl_mode != _AUTO:
        return ignore(f"Ego Ctrl Cmd with ctrl_mode {m.ctrl_mode} (needs 2)")
    return accept_drive(world, Drive(m.cmd_type, m.gear, m.velocity, m.acceleration, m.accel, m.brake,
                                     world.ctrl_sign * m.steer))


def on_gv_direct(world, m) -> bool:
    if m.steer_type != 2:
        return ignore(f"GV Direct steer_type {m.steer_type}: the ego is an "
                      f"Ackermann car, only 2 is applied")
    if not finite(m.throttle, m.steer_angle[0]):
        return ignore("non-finite GV Direct")
    gear = _R if m.throttle < 0 else _D
    return accept_drive(world, Drive(CMD_THROTTLE, gear, accel=abs(m.throttle), steer=m.steer_angle[0]))


def on_gv_state(world, m) -> bool:
    v, w = m.target_longitudinal_velocity, m.target_angular_velocity
    if not finite(v, w):
        return ignore("non-finite GV State")
    steer = 0.0
    if abs(v) > 0.1:
        wheel = math.degrees(math.atan(world.config.wheelbase * w / v))   # + left
        steer = max(-1.0, min(1.0, -wheel / world.config.max_steer_deg))
    return accept_drive(world, Drive(CMD_VELOCITY, _R if v < 0 else _D, velocity_kmh=abs(v) * MPS_TO_KMH,
                                     steer=steer))


def on_ego_ghost(world, m) -> bool:
    if world.ctrl_mode != _AUTO:
        return ignore("Ego Ghost Cmd in keyboard mode")
    if not finite(*m[:8]):
        return ignore("non-finite Ego Ghost Cmd")
    world.ego.set_pose(m.position_x, m.position_y, m.position_z, m.rotation_z, m.speed,
                       steer_deg=world.ghost_sign * m.steer_angle, roll=m.rotation_x, pitch=m.rotation_y)
    world.refresh_contacts()
    return True


def on_multi_ego(world, m) -> bool:
    rec = next((r for r in m.egos if r.ego_index == 0), None)
    if rec is None:
        return ignore("Multi Ego Setting without ego_index 0 (one ego is emulated)")
    if not finite(rec.g_pos_x, rec.g_pos_y, rec.g_pos_z, rec.g_roll, rec.g_pitch, rec.g_yaw, rec.speed):
        return ignore("non-finite Multi Ego Setting")
    if rec.ctrl_mode in (_KEYBOARD, _AUTO):
        world.set_ctrl_mode(rec.ctrl_mode)
    speed = rec.speed
    if rec.gear in (1, 2, 3, 4):
        world.ego.gear = rec.gear
        if rec.gear == _R:
            speed = -abs(speed)
        elif rec.gear == _P:
            speed = 0.0
    world.ego.set_pose(rec.g_pos_x, rec.g_pos_y, rec.g_pos_z, rec.g_yaw, speed, roll=rec.g_roll,
                       pitch=rec.g_pitch)
    world.refresh_contacts()
    return True


# ------------------------------------------------------------ the world
def on_npc_ghost(world, m) -> bool:
    applied = 0
    for r in m.npcs:
        if not finite(r.pos_x, r.pos_y, r.pos_z, r.yaw):
            continue
        actor = world.actors.get(r.unique_id)
        if actor is None:
            actor = Actor(ActorSpec(r.unique_id, int(ObjectType.VEHICLE), _NPC_SIZE, name=r.car_name,
                                    wheelbase=_NPC_WHEELBASE))
            world.actors[r.unique_id] = actor
        actor.set_ghost_pose(r.pos_x, r.pos_y, r.pos_z, r.yaw)
        applied += 1
    world.refresh_contacts()
    return applied > 0


def on_set_light(world, m) -> bool:
    for lt in world.lights:
        if lt.id == m.traffic_light_index:
            lt.force(m.traffic_light_status, world.elapsed_ns, world.config.light_hold_s)
            return True
    return ignore(f"Set TrafficLight for unknown id {m.traffic_light_index!r}")


def on_set_intersection(world, m) -> bool:
    if not finite(m.intersection_status_time):
        return ignore("non-finite intersection_status_time")
    for i in world.intersections:
        if i.index == m.intersection_index:
            i.set(m.intersection_status, m.intersection_status_time)
            return True
    return ignore(f"Set Intersection for unknown index {m.intersection_index}")


def on_lamp(world, m) -> bool:
    world.lamps = (m.turn_signal, m.emergency_signal)
    return True


def on_scenario_load(world, m) -> bool:
    result = load(world, m.file_name, m.delete_all, m.load_ego, m.load_npc, m.load_pedestrian,
                  m.load_object, m.set_pause)
    return result == _SUCCESS


def on_save_sensor_data(world, m) -> bool:
    log.info("Save Sensor Data requested (nothing to save in the emulator)")
    return True


def on_sensor_control(world, m) -> bool:
    world.sensor_poses[m.sensor_index] = (m.pos_x, m.pos_y, m.pos_z, m.roll, m.pitch, m.yaw)
    return True


# ------------------------------------------------------------ SimControl
def on_sim_control(world, m) -> bool:
    result = _SUCCESS
    if m.platform != _SIMULATOR:
        result = RESULT_INVALID_PLATFORM
    elif m.command == SimCommand.PAUSE:
        world.paused = True
    elif m.command == SimCommand.PLAY:
        world.paused = False
    elif m.command == CMD_SCEN_SETTING:
        name, _, flags = m.option.partition("/")
        try:
            f = int(flags) if flags else SCEN_DELETE_ALL
        except ValueError:
            f = -1
        if f < 0:
            log.error("SCEN_SETTING option %r: expected name/flags", m.option)
            result = RESULT_SCENARIO_LOAD_ERROR
        else:
            result = load(world, name, bool(f & SCEN_DELETE_ALL), bool(f & SCEN_EGO), bool(f & SCEN_NPC),
                          bool(f & SCEN_PEDESTRIAN), bool(f & SCEN_OBSTACLE), bool(f & SCEN_PAUSE))
    elif m.command == CMD_NET_SETTING:
        result = RESULT_NET_LOAD_ERROR
    elif m.command == CMD_SEN_SETTING:
        result = RESULT_SENSOR_LOAD_ERROR
    else:  # map/vehicle selection, saving, quitting: not possible in the emulator's play stage
        result = RESULT_INVALID_STAGE
    world.record_command(m.platform, m.command, m.option, result)
    return result == _SUCCESS


#: message class (of the streams of wire.streams.TO_SIM) -> its handler, ``handler(world, message)
#: -> applied``; the lock-step extension's classes go to the emulator's ``sync_mode.request``
COMMAND_HANDLERS = {
    udp.EgoCtrlCmd: on_ctrl_cmd,
    udp.EgoGhostCmd: on_ego_ghost,
    udp.SetTrafficLight: on_set_light,
    udp.SetIntersectionStatus: on_set_intersection,
    udp.LampControl: on_lamp,
    udp.ScenarioLoad: on_scenario_load,
    udp.SaveSensorData: on_save_sensor_data,
    udp.SensorControl: on_sensor_control,
    udp.NpcGhostCmd: on_npc_ghost,
    udp.MultiEgoSetting: on_multi_ego,
    udp.SimControl: on_sim_control,
    udp.GVDirectCmd: on_gv_direct,
    udp.GVStateCmd: on_gv_state,
}
