"""What the simulator emulator does with each user -> simulator command.

:class:`SimCommands` holds one handler per MORAI command (``_on_ctrl_cmd``,
``_on_sim_control``, ...); :data:`COMMAND_HANDLERS` maps each message class of
:mod:`morai_bridge.wire.udp` to its handler.  The class is a mixin of
:class:`~morai_bridge.emu.sim.SimEmulator`: its receive path (``_on_datagram``:
decode, check the port's classes, count) runs the handlers with its lock held and change its world state (``_ego``, ``_actors``,
``_lights``, ...).  Each returns True when the command was applied, False when
it was well-formed but ignored (counted per port).

The SimControl / SimStatus codes that :mod:`morai_bridge.wire.enums` does not
name yet (spec 3.19, 3.20) are defined here.  No ROS.
"""

import logging
import math

from morai_bridge.wire.udp import lockstep
from morai_bridge.wire import udp
from morai_bridge.wire.enums import CtrlMode, Gear, ObjectType, Platform, SimCommand, SimResult
from morai_bridge.wire.units import MPS_TO_KMH

from .scenario import Actor, ActorSpec
from .sim_config import LISTEN_PORTS
from .sim_vehicle import CMD_ACCELERATION, CMD_THROTTLE, CMD_VELOCITY, Drive

__all__ = ["SimCommands", "COMMAND_HANDLERS", "CMD_NET_SETTING", "CMD_SEN_SETTING",
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


class SimCommands:
    """Command handlers of :class:`~morai_bridge.emu.sim.SimEmulator` (lock held)."""

    def _ignore(self, what: str) -> bool:
        log.debug("ignored: %s", what)
        return False

    def _accept_drive(self, drive: Drive) -> bool:
        """Hold ``drive`` as the network command (auto mode, valid values only)."""
        if self._ctrl_mode != _AUTO:
            return self._ignore("control command in keyboard mode")
        if drive.cmd_type not in (CMD_THROTTLE, CMD_VELOCITY, CMD_ACCELERATION):
            return self._ignore(f"cmd_type {drive.cmd_type}")
        if not 0 <= drive.gear <= 5 or not drive.finite():
            return self._ignore("gear out of range or non-finite value")
        self._drive = drive
        return True

    # ------------------------------------------------------------ driving the ego
    def _on_ctrl_cmd(self, m) -> bool:
        if m.ctrl_mode != _AUTO:
            return self._ignore(f"Ego Ctrl Cmd with ctrl_mode {m.ctrl_mode} (needs 2)")
        return self._accept_drive(Drive(m.cmd_type, m.gear, m.velocity, m.acceleration,
                                        m.accel, m.brake, self._ctrl_sign * m.steer))

    def _on_gv_direct(self, m) -> bool:
        if m.steer_type != 2:
            return self._ignore(f"GV Direct steer_type {m.steer_type}: the ego is an "
                                f"Ackermann car, only 2 is applied")
        if not finite(m.throttle, m.steer_angle[0]):
            return self._ignore("non-finite GV Direct")
        gear = _R if m.throttle < 0 else _D
        return self._accept_drive(Drive(CMD_THROTTLE, gear, accel=abs(m.throttle),
                                        steer=m.steer_angle[0]))

    def _on_gv_state(self, m) -> bool:
        v, w = m.target_longitudinal_velocity, m.target_angular_velocity
        if not finite(v, w):
            return self._ignore("non-finite GV State")
        steer = 0.0
        if abs(v) > 0.1:
            wheel = math.degrees(math.atan(self.config.wheelbase * w / v))   # + left
            steer = max(-1.0, min(1.0, -wheel / self.config.max_steer_deg))
        return self._accept_drive(Drive(CMD_VELOCITY, _R if v < 0 else _D,
                                        velocity_kmh=abs(v) * MPS_TO_KMH, steer=steer))

    def _on_ego_ghost(self, m) -> bool:
        if self._ctrl_mode != _AUTO:
            return self._ignore("Ego Ghost Cmd in keyboard mode")
        if not finite(*m[:8]):
            return self._ignore("non-finite Ego Ghost Cmd")
        self._ego.set_pose(m.position_x, m.position_y, m.position_z, m.rotation_z, m.speed,
                           steer_deg=self._ghost_sign * m.steer_angle, roll=m.rotation_x,
                           pitch=m.rotation_y)
        self._contacts, self._npc_pairs = self._detect()
        return True

    def _on_multi_ego(self, m) -> bool:
        rec = next((r for r in m.egos if r.ego_index == 0), None)
        if rec is None:
            return self._ignore("Multi Ego Setting without ego_index 0 (one ego is emulated)")
        if not finite(rec.g_pos_x, rec.g_pos_y, rec.g_pos_z, rec.g_roll, rec.g_pitch,
                      rec.g_yaw, rec.speed):
            return self._ignore("non-finite Multi Ego Setting")
        if rec.ctrl_mode in (_KEYBOARD, _AUTO):
            self._set_ctrl_mode(rec.ctrl_mode)
        speed = rec.speed
        if rec.gear in (1, 2, 3, 4):
            self._ego.gear = rec.gear
            if rec.gear == _R:
                speed = -abs(speed)
            elif rec.gear == _P:
                speed = 0.0
        self._ego.set_pose(rec.g_pos_x, rec.g_pos_y, rec.g_pos_z, rec.g_yaw, speed,
                           roll=rec.g_roll, pitch=rec.g_pitch)
        self._contacts, self._npc_pairs = self._detect()
        return True

    # ------------------------------------------------------------ the world
    def _on_npc_ghost(self, m) -> bool:
        applied = 0
        for r in m.npcs:
            if not finite(r.pos_x, r.pos_y, r.pos_z, r.yaw):
                continue
            actor = self._actors.get(r.unique_id)
            if actor is None:
                actor = Actor(ActorSpec(r.unique_id, int(ObjectType.VEHICLE), _NPC_SIZE,
                                        name=r.car_name, wheelbase=_NPC_WHEELBASE))
                self._actors[r.unique_id] = actor
            actor.set_ghost_pose(r.pos_x, r.pos_y, r.pos_z, r.yaw)
            applied += 1
        self._contacts, self._npc_pairs = self._detect()
        return applied > 0

    def _on_set_light(self, m) -> bool:
        for lt in self._lights:
            if lt.id == m.traffic_light_index:
                lt.force(m.traffic_light_status, self._elapsed_ns, self.config.light_hold_s)
                return True
        return self._ignore(f"Set TrafficLight for unknown id {m.traffic_light_index!r}")

    def _on_set_intersection(self, m) -> bool:
        if not finite(m.intersection_status_time):
            return self._ignore("non-finite intersection_status_time")
        for i in self._intersections:
            if i.index == m.intersection_index:
                i.set(m.intersection_status, m.intersection_status_time)
                return True
        return self._ignore(f"Set Intersection for unknown index {m.intersection_index}")

    def _on_lamp(self, m) -> bool:
        self._lamps = (m.turn_signal, m.emergency_signal)
        return True

    def _on_scenario_load(self, m) -> bool:
        result = self._load(m.file_name, m.delete_all, m.load_ego, m.load_npc,
                            m.load_pedestrian, m.load_object, m.set_pause)
        return result == _SUCCESS

    def _on_save_sensor_data(self, m) -> bool:
        log.info("Save Sensor Data requested (nothing to save in the emulator)")
        return True

    def _on_sensor_control(self, m) -> bool:
        self._sensors[m.sensor_index] = (m.pos_x, m.pos_y, m.pos_z, m.roll, m.pitch, m.yaw)
        return True

    # ------------------------------------------------------------ SimControl
    def _on_sim_control(self, m) -> bool:
        result = _SUCCESS
        if m.platform != _SIMULATOR:
            result = RESULT_INVALID_PLATFORM
        elif m.command == SimCommand.PAUSE:
            self._paused = True
        elif m.command == SimCommand.PLAY:
            self._paused = False
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
                result = self._load(name, bool(f & SCEN_DELETE_ALL), bool(f & SCEN_EGO),
                                    bool(f & SCEN_NPC), bool(f & SCEN_PEDESTRIAN),
                                    bool(f & SCEN_OBSTACLE), bool(f & SCEN_PAUSE))
        elif m.command == CMD_NET_SETTING:
            result = RESULT_NET_LOAD_ERROR
        elif m.command == CMD_SEN_SETTING:
            result = RESULT_SENSOR_LOAD_ERROR
        else:  # map/vehicle selection, saving, quitting: not possible in the emulator's play stage
            result = RESULT_INVALID_STAGE
        self._record_command(m.platform, m.command, m.option, result)
        return result == _SUCCESS

    # ------------------------------------------------------------ receiving
    def _on_datagram(self, name, data, addr, t) -> None:
        """Decode one datagram from port ``name``, count it, hand it to its handler."""
        c = self._counters[name]
        c.received += 1
        codec, other = (lockstep, udp) if name == "sync" else (udp, lockstep)
        try:
            msg = codec.decode(data)
        except udp.DecodeError as e:
            try:
                msg = other.decode(data)      # well-formed, but for another port?
            except udp.DecodeError:
                self._count_bad(name, c, "malformed", str(e),
                                (e.header, e.data_length, e.length))
                return
        except Exception as e:  # a codec bug must not stop the emulator
            c.malformed += 1
            c.last_error = f"decoder failed: {type(e).__name__}: {e}"
            log.exception("%s: decoder raised on %r", name, bytes(data[:64]))
            return
        if type(msg) not in LISTEN_PORTS[name][2]:
            self._count_bad(name, c, "wrong_type",
                            f"{type(msg).__name__} is not accepted on this port", type(msg))
            return
        try:
            with self._lock:
                ok = self._handlers[type(msg)](msg)
        except Exception as e:  # a bug: keep running, but say so loudly
            c.errors += 1
            c.last_error = f"{type(e).__name__}: {e}"
            log.exception("%s: handler failed on %r", name, msg)
            return
        if ok:
            c.accepted += 1
        else:
            c.ignored += 1

    def _count_bad(self, name, c, kind, text, key) -> None:
        setattr(c, kind, getattr(c, kind) + 1)
        c.last_error = text
        if (kind, key) not in c.logged and len(c.logged) < 32:
            c.logged.add((kind, key))
            log.warning("%s port %d: %s datagram dropped: %s", name, self.ports[name], kind, text)
        else:
            log.debug("%s: %s datagram dropped: %s", name, kind, text)


#: message class (of the streams of wire.streams.TO_SIM) -> its handler, bound per emulator; the
#: lock-step extension's classes are the emulator's ``sync_mode.request``
COMMAND_HANDLERS = {
    udp.EgoCtrlCmd: SimCommands._on_ctrl_cmd,
    udp.EgoGhostCmd: SimCommands._on_ego_ghost,
    udp.SetTrafficLight: SimCommands._on_set_light,
    udp.SetIntersectionStatus: SimCommands._on_set_intersection,
    udp.LampControl: SimCommands._on_lamp,
    udp.ScenarioLoad: SimCommands._on_scenario_load,
    udp.SaveSensorData: SimCommands._on_save_sensor_data,
    udp.SensorControl: SimCommands._on_sensor_control,
    udp.NpcGhostCmd: SimCommands._on_npc_ghost,
    udp.MultiEgoSetting: SimCommands._on_multi_ego,
    udp.SimControl: SimCommands._on_sim_control,
    udp.GVDirectCmd: SimCommands._on_gv_direct,
    udp.GVStateCmd: SimCommands._on_gv_state,
}
