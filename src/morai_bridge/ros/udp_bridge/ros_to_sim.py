"""ROS -> simulator: one converter per command stream, from a morai_msgs message to the packet
(codec message) that carries it, and the simulator-control packets of the services.

A converter raises :class:`CommandError` (a ValueError) instead of producing a packet when a
value is NaN/inf or does not fit its wire field: nothing is sent, the sender counts and logs
the reason.  Units: docs/units.md (CtrlCmd.steering rad, + left; wire steer normalised to
[-1, 1] by the maximum wheel angle, times the wire's sign).
"""
import math

from morai_bridge.ros import msg_set
from morai_bridge.wire import udp
from morai_bridge.wire.enums import MULTI_EGO_TO_WIRE_CTRL_MODE, Platform, SimCommand, SimProc

_PLATFORM_SIMULATOR = int(Platform.SIMULATOR)


class CommandError(ValueError):
    """A ROS command that must not become a packet; the text says why."""


def _finite(what, **values):
    for name, v in values.items():
        if not math.isfinite(v):
            raise CommandError(f'{what}.{name} is {v!r}: refused, nothing sent')


def _int_range(what, name, v, lo, hi):
    if not lo <= v <= hi:
        raise CommandError('%s.%s = %r does not fit the packet (%d..%d): refused' % (what, name, v, lo, hi))
    return v


def _text(what, name, v, limit):
    if len(v) > limit:
        raise CommandError('%s.%s is %d characters, the packet holds %d: refused' % (what, name, len(v), limit))
    try:
        v.encode('ascii')
    except UnicodeEncodeError:
        raise CommandError(f'{what}.{name} must be ASCII: refused') from None
    return v


def _normalised_steer(rad, sign, max_deg, notes=None, what='steering'):
    """A wheel angle [rad, + left] as the wire's steer: deg / max, clamped to [-1, 1], x sign."""
    steer = sign * math.degrees(rad) / max_deg
    if -1.0 <= steer <= 1.0:
        return steer
    if notes is not None:
        notes.append(f'{what} beyond the maximum wheel angle: clamped')
    return -1.0 if steer < -1.0 else 1.0


def _pedal(what, v, notes):
    """A pedal position clamped to [0, 1] (the simulator's range)."""
    if 0.0 <= v <= 1.0:
        return v
    if notes is not None:
        notes.append(f'{what} outside 0..1: clamped')
    return 0.0 if v < 0.0 else 1.0


#: CtrlCmd.longlCmdType values the Ego Ctrl Cmd packet carries (1 pedal, 2 velocity, 3 acceleration)
CMD_TYPES = (1, 2, 3)


def ctrl_cmd(m, gear, ctrl_mode, max_steering_deg, steering_sign, data_length=23, max_rear_steering_deg=None,
             zero_as=1, notes=None):
    """EgoCtrlCmd from a CtrlCmd of either message set: the front wheel angle (``steering``, or
    ``front_steer`` in the 2026 set) and the rear one (2026 only; 0 elsewhere) rad -> deg / max ->
    clamp [-1, 1] x sign.  The 55-byte command (data_length 23) has no rear steer: a non-zero
    ``rear_steer`` is refused, not dropped.  ``max_rear_steering_deg``: the rear maximum (None:
    the front's).

    ``longlCmdType`` 0 (the field's default: MORAI's own ROS examples never set it, and native ROS
    mode drives them with their pedals) is sent as ``zero_as`` (1 pedal, 2 velocity, 3 acceleration;
    0 refuses it).  Pedals outside [0, 1] and a wheel angle beyond the maximum are clamped, as the
    simulator's own controls are.  What was mapped or clamped is appended to ``notes`` (a list, or
    None), one text per adjustment, for the counters on /diagnostics (docs/ros_api.md, "Commands:
    what is refused, mapped or clamped")."""
    if msg_set.CTRL_FRONT_REAR:
        front_name, front, rear = 'front_steer', m.front_steer, m.rear_steer
    else:
        front_name, front, rear = 'steering', m.steering, 0.0
    _finite('CtrlCmd', accel=m.accel, brake=m.brake, velocity=m.velocity, acceleration=m.acceleration,
            rear_steer=rear, **{front_name: front})
    cmd_type = m.longlCmdType
    if cmd_type == 0 and zero_as in CMD_TYPES:
        cmd_type = zero_as
        if notes is not None:
            notes.append(f'longlCmdType 0 sent as {zero_as}')
    elif cmd_type not in CMD_TYPES:
        raise CommandError('CtrlCmd.longlCmdType = %r: the packet knows 1 (pedal), 2 (velocity) and 3 '
                           '(acceleration)%s: refused' % (cmd_type, '' if cmd_type else
                                                          '; 0 is refused because ~zero_longl_cmd_type is 0'))
    if rear and data_length != 27:
        raise CommandError('CtrlCmd.rear_steer = %r: this simulator\'s Ego Ctrl Cmd (data_length %d) has no rear '
                           'steer: refused (a sim_version with the 59-byte command sends it)' % (rear, data_length))
    return udp.make(udp.EgoCtrlCmd, data_length=data_length, ctrl_mode=ctrl_mode, gear=gear,
                    cmd_type=cmd_type, velocity=m.velocity, acceleration=m.acceleration,
                    accel=_pedal('accel', m.accel, notes), brake=_pedal('brake', m.brake, notes),
                    steer=_normalised_steer(front, steering_sign, max_steering_deg, notes, front_name),
                    rear_steer=_normalised_steer(rear, steering_sign, max_rear_steering_deg or max_steering_deg,
                                                 notes, 'rear_steer')
                    if data_length == 27 else None)


def brake_cmd(gear, ctrl_mode, data_length=23):
    """The safe command: pedal mode, no throttle, full brake."""
    return udp.make(udp.EgoCtrlCmd, data_length=data_length, ctrl_mode=ctrl_mode, gear=gear, cmd_type=1,
                    accel=0.0, brake=1.0, steer=0.0, rear_steer=0.0 if data_length == 27 else None)


def set_traffic_light(m, data_length=14):
    _int_range('SetTrafficLight', 'trafficLightStatus', m.trafficLightStatus, -32768, 32767)
    return udp.make(udp.SetTrafficLight, data_length=data_length,
                    traffic_light_index=_text('SetTrafficLight', 'trafficLightIndex', m.trafficLightIndex, 12),
                    traffic_light_status=m.trafficLightStatus, flag=True if data_length == 15 else None)


def set_intersection(m):
    _finite('IntersectionControl', intersection_status_time=m.intersection_status_time)
    return udp.make(udp.SetIntersectionStatus,
                    intersection_index=_int_range('IntersectionControl', 'intersection_index',
                                                  m.intersection_index, -32768, 32767),
                    intersection_status=m.intersection_status,
                    intersection_status_time=m.intersection_status_time)


def scenario_load(m):
    """ScenarioLoad (ROS field order differs from the packet's: mapped by name)."""
    name = m.file_name[:-5] if m.file_name.lower().endswith('.json') else m.file_name
    return udp.make(udp.ScenarioLoad, file_name=_text('ScenarioLoad', 'file_name', name, 30),
                    delete_all=m.delete_all, load_network=m.load_network_connection_data,
                    load_ego=m.load_ego_vehicle_data, load_npc=m.load_surrounding_vehicle_data,
                    load_pedestrian=m.load_pedestrian_data, load_object=m.load_obstacle_data,
                    set_pause=m.set_pause)


def save_sensor_data(m):
    return udp.make(udp.SaveSensorData, is_custom_file_name=m.is_custom_file_name,
                    custom_file_name=_text('SaveSensorData', 'custom_file_name', m.custom_file_name, 30),
                    file_dir=_text('SaveSensorData', 'file_dir', m.file_dir, 60))


def sensor_control(m):
    """One SensorControl packet per array entry; angles rad -> deg."""
    n = len(m.sensor_index)
    arrays = ('pose_x', 'pose_y', 'pose_z', 'roll', 'pitch', 'yaw')
    for a in arrays:
        if len(getattr(m, a)) != n:
            raise CommandError('SensorPosControl.%s has %d entries, sensor_index has %d: refused'
                               % (a, len(getattr(m, a)), n))
    out = []
    for k in range(n):
        v = {a: getattr(m, a)[k] for a in arrays}
        _finite('SensorPosControl[%d]' % k, **v)
        out.append(udp.make(udp.SensorControl,
                            sensor_index=_int_range('SensorPosControl', 'sensor_index', m.sensor_index[k],
                                                    -32768, 32767),
                            pos_x=v['pose_x'], pos_y=v['pose_y'], pos_z=v['pose_z'],
                            roll=math.degrees(v['roll']), pitch=math.degrees(v['pitch']),
                            yaw=math.degrees(v['yaw'])))
    return out


def lamps(m):
    return udp.make(udp.LampControl,
                    turn_signal=_int_range('Lamps', 'turnSignal', m.turnSignal, 0, 2),
                    emergency_signal=_int_range('Lamps', 'emergencySignal', m.emergencySignal, 0, 1))


def ego_ghost(m, steer_sign=1):
    """EgoGhostCmd of a GhostMessage; steer_angle = steer_sign x steering_angle (deg).
    The bridge passes ``~ghost_steering_sign`` (the sim_version's unless set)."""
    v = dict(x=m.position.x, y=m.position.y, z=m.position.z, roll=m.rotation.x, pitch=m.rotation.y,
             yaw=m.rotation.z, velocity=m.velocity, steering_angle=m.steering_angle)
    _finite('GhostMessage', **v)
    return udp.make(udp.EgoGhostCmd, position_x=v['x'], position_y=v['y'], position_z=v['z'],
                    rotation_x=v['roll'], rotation_y=v['pitch'], rotation_z=v['yaw'],
                    speed=m.velocity, steer_angle=steer_sign * m.steering_angle)


# fields the 2026 message set added to MultiEgoSetting (arrays) and NpcGhostInfo that no known
# Multi Ego Setting / NPC Ghost Cmd layout carries (docs/ros_api.md, "Message sets")
GHOST_EXTRAS = ('steering_angle', 'vehicle_speed', 'turn_signal', 'brake_light')


def _not_on_wire(what, values):
    """Refuse a set field the packet has no place for unless it is zero / False."""
    for name, v in values:
        if v:
            raise CommandError('%s.%s = %r: the UDP packet has no such field (only 0 / false can be '
                               'sent): refused' % (what, name, v))


def _multi_ego_ctrl_mode(v):
    """Wire ctrl_mode of a MultiEgoSetting.ctrl_mode: the ROS manual's 1 keyboard / 16 automode,
    and the wire's own 2 (automatic)."""
    wire = MULTI_EGO_TO_WIRE_CTRL_MODE.get(v)
    if wire is None:
        raise CommandError('MultiEgoSetting.ctrl_mode = %r: expected 1 (keyboard) or 16 (automode; 2 is also '
                           'taken as automatic): refused' % (v,))
    return int(wire)


def multi_ego(m):
    """MultiEgoSetting packet; ctrl_mode per ego: 1 keyboard, 16 (or 2) automatic -> wire 1 / 2."""
    n = m.number_of_ego_vehicle
    _int_range('MultiEgoSetting', 'number_of_ego_vehicle', n, 0, 20)
    arrays = ('ego_index', 'global_position_x', 'global_position_y', 'global_position_z', 'global_roll',
              'global_pitch', 'global_yaw', 'velocity', 'gear', 'ctrl_mode')
    for a in arrays:
        if len(getattr(m, a)) < n:
            raise CommandError('MultiEgoSetting.%s has %d entries for %d vehicles: refused'
                               % (a, len(getattr(m, a)), n))
    extras = [a for a in GHOST_EXTRAS if hasattr(m, a)]     # the 2026 set's
    egos = []
    for k in range(n):
        _not_on_wire('MultiEgoSetting', [('%s[%d]' % (a, k), getattr(m, a)[k]) for a in extras
                                         if k < len(getattr(m, a))])
        v = {a: getattr(m, a)[k] for a in arrays}
        _finite('MultiEgoSetting[%d]' % k, **{a: v[a] for a in arrays[1:8]})
        egos.append(udp.MultiEgoRecord(
            _int_range('MultiEgoSetting', 'ego_index', v['ego_index'], -32768, 32767),
            v['global_position_x'], v['global_position_y'], v['global_position_z'],
            v['global_roll'], v['global_pitch'], v['global_yaw'], v['velocity'],
            _int_range('MultiEgoSetting', 'gear', v['gear'], 0, 5),
            _multi_ego_ctrl_mode(v['ctrl_mode'])))
    return udp.make(udp.MultiEgoSetting, num_of_ego=n, camera_index=m.camera_index, egos=tuple(egos))


def npc_ghost(m):
    if len(m.npc_list) > 20:
        raise CommandError(f'NpcGhostCmd has {len(m.npc_list)} NPCs, the packet holds 20: refused')
    recs = []
    for k, n in enumerate(m.npc_list):
        _finite('NpcGhostCmd.npc_list[%d]' % k, x=n.position.x, y=n.position.y, z=n.position.z,
                roll=n.rpy.x, pitch=n.rpy.y, yaw=n.rpy.z)
        _not_on_wire('NpcGhostCmd.npc_list[%d]' % k, [(a, getattr(n, a)) for a in GHOST_EXTRAS if hasattr(n, a)])
        recs.append(udp.NpcGhostRecord(
            _int_range('NpcGhostInfo', 'unique_id', n.unique_id, -128, 127),
            _text('NpcGhostInfo', 'name', n.name, 25),
            n.position.x, n.position.y, n.position.z, n.rpy.x, n.rpy.y, n.rpy.z))
    return udp.make(udp.NpcGhostCmd, npcs=tuple(recs))


def gv_direct(m, notes=None):
    """GVDirectCmd: throttle, skid steering and each steer angle clamped to [-1, 1] (noted in ``notes``)."""
    _finite('GVDirectCmd', throttle=m.throttle, skidSteering=m.skidSteering)
    for k, a in enumerate(m.steerAngle):
        _finite('GVDirectCmd', **{'steerAngle[%d]' % k: a})

    def clip(what, v):
        if -1.0 <= v <= 1.0:
            return v
        if notes is not None:
            notes.append(f'GVDirectCmd.{what} outside -1..1: clamped')
        return -1.0 if v < -1.0 else 1.0
    return udp.make(udp.GVDirectCmd, steer_type=_int_range('GVDirectCmd', 'steerType', m.steerType, 0, 2 ** 32 - 1),
                    throttle=clip('throttle', m.throttle), skid_steering=clip('skidSteering', m.skidSteering),
                    steer_angle=tuple(clip('steerAngle', a) for a in m.steerAngle))


def gv_state(m):
    _finite('GVStateCmd', targetLongitudinalVelocity=m.targetLongitudinalVelocity,
            targetAngularVelocity=m.targetAngularVelocity)
    return udp.make(udp.GVStateCmd, target_longitudinal_velocity=m.targetLongitudinalVelocity,
                    target_angular_velocity=m.targetAngularVelocity)


def sim_control(command, option=''):
    return udp.make(udp.SimControl, platform=_PLATFORM_SIMULATOR, command=int(command), option=option)


def sim_proc_handle(h):
    """SimControl for a MoraiSimProcHandle, or CommandError for what UDP cannot do."""
    if h.sim_process_status == SimProc.PLAY:
        return sim_control(SimCommand.PLAY)
    if h.sim_process_status == SimProc.PAUSE:
        return sim_control(SimCommand.PAUSE)
    raise CommandError('sim_process_status 0x%02x (replay control) has no UDP equivalent; only 0x01 play '
                       'and 0x10 pause can be sent' % h.sim_process_status)


#: command stream name -> its converter, for the commands the sender sends as their converter makes them,
#: called ``(m)`` (a packet or a list of them).  A command that needs the bridge's parameters or state
#: (ctrl_cmd, set_traffic_light, lamps, ego_ghost, gv_direct) has a method in ``CommandSender.METHODS``
#: instead, which calls its converter above; sim_control has no topic (its packets are the services').
#: Every command with a topic is in exactly one of the two tables (test_sim_receive_streams.py).
CONVERTERS = {
    'set_intersection': set_intersection,
    'scenario_load': scenario_load,
    'save_sensor_data': save_sensor_data,
    'sensor_control': sensor_control,
    'npc_ghost': npc_ghost,
    'multi_ego': multi_ego,
    'gv_state': gv_state,
}
