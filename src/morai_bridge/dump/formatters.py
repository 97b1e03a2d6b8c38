"""Text of one decoded message: the one-line summary, every field (-v), hex dumps.

A ``_sum_<type>`` function per message type that reads better with one (the ``udp.classify`` /
``TYPE_NAME`` names), registered in :data:`SUMMARIES`; every other type (a new stream's) gets the
generic one, its fields as ``name=value``.  :func:`summarize` picks it and never raises.  Enum values are shown with names from
:mod:`morai_bridge.wire.enums` (see :func:`label`).  No ROS, no I/O.
"""

import math
from collections import Counter

from morai_bridge.wire.enums import (CtrlMode, Gear, GvSteerMode, ObjectType, Platform,
                                     SimResult, TrafficLightBit, TrafficLightType)

__all__ = ["SUMMARIES", "summarize", "verbose_lines", "hexdump", "label"]

# ----------------------------------------------------------------------------- enum labels

# The summaries' short labels are derived from the enum member names (see each style).


def _lower(member):
    """CtrlMode 'auto', Platform 'simulator', SimResult 'success', GvSteerMode 'zero-turn'."""
    return member.name.lower().replace("_", "-")


def _object_type(member):
    """ObjectType 'ego', 'ped', 'veh' (first three letters); obstacles have always been 'obj'."""
    return "obj" if member is ObjectType.OBSTACLE else member.name[:3].lower()


def _lamp(member):
    """TrafficLightBit name -> lamp letter: RED 'R', GREEN_LEFT 'GLeft'."""
    first, *rest = member.name.split("_")
    return first[0] + "".join(word.capitalize() for word in rest)


def _lamps(member):
    """TrafficLightType name -> lamp sequence: RYG_LEFT_G 'R-Y-GLeft-G', YYY 'Y-Y-Y'."""
    out = []
    for part in member.name.split("_"):
        if len(part) > 1 and set(part) <= set("RYG"):
            out.extend(part)            # a run of lamp letters
        elif len(part) == 1 or not out:
            out.append(part)            # one more lamp
        else:
            out[-1] += part.capitalize()  # a qualifier of the previous lamp: 'GLeft'
    return "-".join(out)


_STYLES = {Gear: lambda m: m.name, CtrlMode: _lower, Platform: _lower, SimResult: _lower,
           GvSteerMode: _lower, ObjectType: _object_type, TrafficLightType: _lamps}


def label(enum_cls, value) -> str:
    """Short label of ``value`` in ``enum_cls`` (the number as text when it has none)."""
    try:
        member = enum_cls(value)
    except ValueError:
        return f"{value}"
    return _STYLES.get(enum_cls, _lower)(member)


_TL_BITS = tuple((int(bit), _lamp(bit)) for bit in TrafficLightBit)
_TL_ALL_BITS = sum(bit for bit, _ in _TL_BITS)
_SIM_BUSY = 0x1000  # SimStatus.status bit 'busy' (spec section 3.20; not in wire.enums yet)

# ----------------------------------------------------------------------------- numbers

def _f(value, digits=2):
    """Fixed-point text without a '-' on values that round to zero."""
    if value is None:
        return "-"
    text = f"{value:.{digits}f}"
    if text[0] == "-" and not text.strip("-0."):
        text = text[1:]
    return text


def _vec(*values, digits=2):
    return "(" + ", ".join(_f(v, digits) for v in values) + ")"


def _stamp(sec, nsec):
    if sec is None:
        return "-"
    if nsec is not None and 0 <= nsec < 1_000_000_000:
        return f"{sec}.{nsec:09d}"
    return f"{sec}s+{nsec}ns"


def _tl_status(status):
    if status == -1:
        return "-1 (off)"
    names = [name for bit, name in _TL_BITS if status & bit]
    rest = status & ~_TL_ALL_BITS
    if rest or status < 0:
        names.append(f"0x{rest & 0xFFFF:x}?")
    return f"{status} ({'+'.join(names) or 'none'})"


# ----------------------------------------------------------------------------- summaries

def _sum_ego(m, state):
    return (f"stamp={_stamp(m.sec, m.nsec)} pos={_vec(m.pos_x, m.pos_y, m.pos_z)} "
            f"yaw={_f(m.yaw, 1)} speed={_f(m.signed_vel, 1)} km/h "
            f"gear={label(Gear, m.gear)} mode={label(CtrlMode, m.ctrl_mode)} "
            f"steer={_f(m.steer, 1)} accel={_f(m.accel)} brake={_f(m.brake)}"
            + (f" link={m.link_id}" if m.link_id else ""))


def _sum_objects(m, state):
    objs = m.objects
    text = f"stamp={_stamp(m.sec, m.nsec)} {len(objs)} object{'s' if len(objs) != 1 else ''}"
    if not objs:
        return text
    per = Counter(label(ObjectType, o.obj_type) for o in objs)
    text += " (" + ", ".join(f"{k} {v}" for k, v in per.items()) + ")"
    ref = state.ego_pos
    if ref is None:
        ego = [o for o in objs if o.obj_type == ObjectType.EGO]
        ref = (ego[0].pos_x, ego[0].pos_y) if ego else None
    others = [o for o in objs if o.obj_type != ObjectType.EGO]
    if ref is None:
        return text + " nearest: no ego position yet"
    if others:
        near = min(others, key=lambda o: math.hypot(o.pos_x - ref[0], o.pos_y - ref[1]))
        dist = math.hypot(near.pos_x - ref[0], near.pos_y - ref[1])
        text += (f" nearest id {near.obj_id} ({label(ObjectType, near.obj_type)}) "
                 f"{_f(dist, 1)} m")
    return text


def _sum_traffic_light(m, state):
    return (f"{m.traffic_light_index or repr('')} type={m.traffic_light_type} "
            f"({label(TrafficLightType, m.traffic_light_type)}) "
            f"status={_tl_status(m.traffic_light_status)}")


def _records(recs, limit=3):
    text = ", ".join(f"{label(ObjectType, r.obj_type)} {r.obj_id}" for r in recs[:limit])
    return text + (", ..." if len(recs) > limit else "")


def _sum_collision(m, state):
    n = len(m.records)
    text = f"stamp={_stamp(m.sec, m.nsec)} {n} collision{'s' if n != 1 else ''}"
    return text + (": " + _records(m.records) if n else "")


def _sum_npc_collision(m, state):
    n = len(m.pairs)
    text = f"{n} pair{'s' if n != 1 else ''}"
    if n:
        text += ": " + ", ".join(f"{_records(p[:1])} <-> {_records(p[1:])}" for p in m.pairs[:3])
        text += ", ..." if n > 3 else ""
    return text


def _sum_intersection(m, state):
    return (f"index={m.intersection_index} status={m.intersection_status} "
            f"time={_f(m.intersection_status_time, 1)} s")


def _sum_gps(m, state):
    text = f"{m.talker}{m.sentence_type}"
    if m.latitude is not None or m.longitude is not None:
        text += f" lat={_f(m.latitude, 7)} lon={_f(m.longitude, 7)}"
    if m.altitude is not None:
        text += f" alt={_f(m.altitude, 1)} m"
    if m.fix_quality is not None:
        text += f" fix={m.fix_quality}"
    if m.num_satellites is not None:
        text += f" sats={m.num_satellites}"
    if m.status is not None:
        text += f" status={m.status}"
    if m.speed_knots is not None:
        text += f" speed={_f(m.speed_knots, 1)} kn"
    if m.course_deg is not None:
        text += f" course={_f(m.course_deg, 1)}"
    if m.utc_time is not None:
        text += f" utc={m.utc_time.isoformat()}"
    return text


def _sum_imu(m, state):
    return (f"stamp={_stamp(m.sec, m.nsec)} "
            f"ori(wxyz)={_vec(m.ori_w, m.ori_x, m.ori_y, m.ori_z, digits=4)} "
            f"gyro={_vec(m.ang_vel_x, m.ang_vel_y, m.ang_vel_z, digits=3)} rad/s "
            f"acc={_vec(m.lin_acc_x, m.lin_acc_y, m.lin_acc_z)} m/s^2")


def _sum_sim_status(m, state):
    busy = " busy" if m.status & _SIM_BUSY else ""
    return (f"platform={label(Platform, m.platform)} stage={m.stage} "
            f"status=0x{m.status:04x}{busy} last_cmd=0x{m.command:04x} "
            f"({label(Platform, m.command_platform)}) option={m.command_option!r} "
            f"result=0x{m.result:02x} ({label(SimResult, m.result)})")


def _sum_sim_control(m, state):
    return (f"platform={label(Platform, m.platform)} command=0x{m.command:04x} "
            f"option={m.option!r}")


def _sum_ctrl_cmd(m, state):
    text = (f"mode={label(CtrlMode, m.ctrl_mode)} gear={label(Gear, m.gear)} "
            f"cmd_type={m.cmd_type} velocity={_f(m.velocity, 1)} km/h "
            f"acceleration={_f(m.acceleration)} accel={_f(m.accel)} brake={_f(m.brake)} "
            f"steer={_f(m.steer, 3)}")
    if m.rear_steer is not None:
        text += f" rear_steer={_f(m.rear_steer, 3)}"
    return text


def _sum_ghost_cmd(m, state):
    return (f"pos={_vec(m.position_x, m.position_y, m.position_z)} "
            f"rot={_vec(m.rotation_x, m.rotation_y, m.rotation_z, digits=1)} "
            f"speed={_f(m.speed, 1)} km/h steer={_f(m.steer_angle, 1)}")


def _sum_set_traffic_light(m, state):
    text = f"{m.traffic_light_index or repr('')} status={_tl_status(m.traffic_light_status)}"
    return text + (f" flag={m.flag}" if m.flag is not None else "")


def _sum_scenario_load(m, state):
    flags = [n for n in ("delete_all", "load_network", "load_ego", "load_npc",
                         "load_pedestrian", "load_object", "set_pause") if getattr(m, n)]
    return f"file={m.file_name!r} " + (" ".join(flags) or "(no flags)")


def _sum_save_sensor(m, state):
    if not m.is_custom_file_name:
        return "default file name"
    return f"file={m.custom_file_name!r} dir={m.file_dir!r}"


def _sum_sensor_control(m, state):
    return (f"sensor={m.sensor_index} pos={_vec(m.pos_x, m.pos_y, m.pos_z)} "
            f"rpy={_vec(m.roll, m.pitch, m.yaw, digits=1)}")


def _sum_lamps(m, state):
    return f"turn_signal={m.turn_signal} emergency={m.emergency_signal}"


def _sum_multi_ego(m, state):
    text = f"num_of_ego={m.num_of_ego} camera={m.camera_index} {len(m.egos)} record(s)"
    if m.egos:
        text += ": " + ", ".join(f"#{e.ego_index} {_vec(e.g_pos_x, e.g_pos_y)}"
                                 for e in m.egos[:3]) + (", ..." if len(m.egos) > 3 else "")
    return text


def _sum_npc_ghost(m, state):
    text = f"{len(m.npcs)} npc(s)"
    if m.npcs:
        text += ": " + ", ".join(f"{n.unique_id} {n.car_name} {_vec(n.pos_x, n.pos_y)}"
                                 for n in m.npcs[:3]) + (", ..." if len(m.npcs) > 3 else "")
    return text


def _sum_gv_direct(m, state):
    steer = ",".join(_f(a, 2) for a in m.steer_angle)
    return (f"steer_type={label(GvSteerMode, m.steer_type)} throttle={_f(m.throttle, 3)} "
            f"skid={_f(m.skid_steering, 3)} steer_angle=[{steer}]")


def _sum_gv_state(m, state):
    return (f"v={_f(m.target_longitudinal_velocity)} m/s "
            f"w={_f(m.target_angular_velocity, 3)} rad/s")


#: Type name -> one-line summary function (msg, state) -> str.
SUMMARIES = {
    "ego_status": _sum_ego,
    "object_info": _sum_objects,
    "traffic_light": _sum_traffic_light,
    "collision": _sum_collision,
    "intersection": _sum_intersection,
    "vehicle_collision": _sum_npc_collision,
    "gps_nmea": _sum_gps,
    "imu": _sum_imu,
    "sim_status": _sum_sim_status,
    "sim_control": _sum_sim_control,
    "ctrl_cmd": _sum_ctrl_cmd,
    "ego_ghost": _sum_ghost_cmd,
    "set_traffic_light": _sum_set_traffic_light,
    "set_intersection": _sum_intersection,
    "scenario_load": _sum_scenario_load,
    "save_sensor_data": _sum_save_sensor,
    "sensor_control": _sum_sensor_control,
    "lamps": _sum_lamps,
    "multi_ego": _sum_multi_ego,
    "npc_ghost": _sum_npc_ghost,
    "gv_direct": _sum_gv_direct,
    "gv_state": _sum_gv_state,
}


def _sum_generic(m, state):
    return " ".join(f"{k}={v!r}" for k, v in zip(m._fields, m)
                    if v is not None and not isinstance(v, tuple))[:200]


def summarize(msg, state=None) -> str:
    """One-line summary of the key fields of a decoded message."""
    state = state if state is not None else _NoState
    try:
        return SUMMARIES.get(msg.TYPE_NAME, _sum_generic)(msg, state)
    except Exception as exc:  # odd values must never stop a dump
        return f"{_sum_generic(msg, state)} (summary failed: {exc!r})"


class _NoState:
    ego_pos = None




# ----------------------------------------------------------------------------- verbose

def _value_text(v):
    if isinstance(v, str):
        return repr(v)
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return repr(v)


def _record_text(rec):
    if isinstance(rec, tuple) and hasattr(rec, "_fields"):
        return " ".join(f"{k}={_value_text(v)}" for k, v in zip(rec._fields, rec))
    if isinstance(rec, tuple):  # a pair of records (NPC vehicle collision)
        return " | ".join(_record_text(r) for r in rec)
    return _value_text(rec)


def verbose_lines(msg, indent="    "):
    """Every field of ``msg``, records one per line; fields the variant lacks (None) left out."""
    lines = []
    width = max(len(k) for k in msg._fields)
    for name, value in zip(msg._fields, msg):
        if value is None:
            continue
        is_records = isinstance(value, tuple) and (not value or isinstance(value[0], tuple))
        if is_records:
            lines.append(f"{indent}{name:<{width}}  {len(value)} record(s)")
            for i, rec in enumerate(value):
                lines.append(f"{indent}  [{i}] {_record_text(rec)}")
        else:
            lines.append(f"{indent}{name:<{width}}  {_value_text(value)}")
    return lines



def hexdump(data, indent="    "):
    """Offset, hex and ASCII, 16 bytes per line; repeated lines shown once, then '*'."""
    lines = []
    previous = None
    for off in range(0, len(data), 16):
        chunk = data[off:off + 16]
        if chunk == previous and len(chunk) == 16 and off + 16 < len(data):
            if lines[-1] != f"{indent}*":
                lines.append(f"{indent}*")
            continue
        previous = chunk
        hexes = " ".join(f"{b:02x}" for b in chunk[:8])
        if len(chunk) > 8:
            hexes += "  " + " ".join(f"{b:02x}" for b in chunk[8:])
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{indent}{off:04x}  {hexes:<48}  |{text}|")
    return lines
