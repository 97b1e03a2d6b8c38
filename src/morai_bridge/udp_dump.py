"""morai_udp_dump: print MORAI SIM UDP datagrams, live from ports or from a capture file.

A debugging tool for the network setup between MORAI SIM and the bridge; it
needs neither ROS nor a ROS master (nothing here imports ROS).

Sources:

* ``morai_udp_dump --listen 909,7505 [--bind-ip 0.0.0.0] [--count N] [--duration S]``
  binds one UDP socket per port and prints what arrives until Ctrl-C, N
  datagrams or S seconds.
* ``morai_udp_dump FILE [--port 909,7505] [--all-udp]`` reads a pcap/pcapng
  capture (IPv4 fragments reassembled by :mod:`morai_bridge.wire.capture`).

Every datagram is decoded with :func:`morai_bridge.wire.udp.decode`.  A datagram
that does not even look like MORAI (no ``#NAME$`` framing, no ``$`` NMEA text,
no ground-vehicle msg_type) is counted as "not MORAI" and shown only with
``--all-udp``; anything else that fails to decode is a decode error.

Output: one line per datagram (``-v``: every field, ``--json``: one JSON object
per line), then a summary.  Exit status: 0 = no decode errors, 1 = at least one
decode error, 2 = usage or I/O error (unreadable file, port in use).
Reference: docs/udp_dump.md.
"""

import argparse
import datetime
import errno
import json
import math
import os
import re
import selectors
import socket
import sys
import time
from collections import Counter

from morai_bridge.wire import udp
from morai_bridge.wire.capture import CaptureError, read_capture

__all__ = ["main", "Dumper", "EXIT_OK", "EXIT_DECODE_ERRORS", "EXIT_USAGE"]

PROG = "morai_udp_dump"
EXIT_OK, EXIT_DECODE_ERRORS, EXIT_USAGE = 0, 1, 2
_RECV_SIZE = 65536

# ----------------------------------------------------------------------------- enums

_GEARS = {0: "M", 1: "P", 2: "R", 3: "N", 4: "D", 5: "L"}
_MODES = {1: "keyboard", 2: "auto"}
_OBJ_TYPES = {-1: "ego", 0: "ped", 1: "veh", 2: "obj"}
_TL_TYPES = {0: "R-Y-G", 1: "R-Y-GLeft", 2: "R-Y-GLeft-G", 100: "Y-Y-Y"}
_TL_BITS = ((1, "R"), (4, "Y"), (16, "G"), (32, "GLeft"))
_PLATFORMS = {1: "launcher", 2: "simulator"}
_RESULTS = {0: "none", 1: "success"}
_GV_STEER = {1: "skid", 2: "ackermann", 3: "zero-turn"}


def _enum(table, value):
    name = table.get(value)
    return f"{value}" if name is None else f"{name}"


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
    rest = status & ~sum(bit for bit, _ in _TL_BITS)
    if rest or status < 0:
        names.append(f"0x{rest & 0xFFFF:x}?")
    return f"{status} ({'+'.join(names) or 'none'})"


# ----------------------------------------------------------------------------- summaries

def _sum_ego(m, state):
    return (f"stamp={_stamp(m.sec, m.nsec)} pos={_vec(m.pos_x, m.pos_y, m.pos_z)} "
            f"yaw={_f(m.yaw, 1)} speed={_f(m.signed_vel, 1)} km/h "
            f"gear={_enum(_GEARS, m.gear)} mode={_enum(_MODES, m.ctrl_mode)} "
            f"steer={_f(m.steer, 1)} accel={_f(m.accel)} brake={_f(m.brake)}"
            + (f" link={m.link_id}" if m.link_id else ""))


def _sum_objects(m, state):
    objs = m.objects
    text = f"stamp={_stamp(m.sec, m.nsec)} {len(objs)} object{'s' if len(objs) != 1 else ''}"
    if not objs:
        return text
    per = Counter(_enum(_OBJ_TYPES, o.obj_type) for o in objs)
    text += " (" + ", ".join(f"{k} {v}" for k, v in per.items()) + ")"
    ref = state.ego_pos
    if ref is None:
        ego = [o for o in objs if o.obj_type == -1]
        ref = (ego[0].pos_x, ego[0].pos_y) if ego else None
    others = [o for o in objs if o.obj_type != -1]
    if ref is None:
        return text + " nearest: no ego position yet"
    if others:
        near = min(others, key=lambda o: math.hypot(o.pos_x - ref[0], o.pos_y - ref[1]))
        dist = math.hypot(near.pos_x - ref[0], near.pos_y - ref[1])
        text += (f" nearest id {near.obj_id} ({_enum(_OBJ_TYPES, near.obj_type)}) "
                 f"{_f(dist, 1)} m")
    return text


def _sum_traffic_light(m, state):
    return (f"{m.traffic_light_index or repr('')} type={m.traffic_light_type} "
            f"({_enum(_TL_TYPES, m.traffic_light_type)}) "
            f"status={_tl_status(m.traffic_light_status)}")


def _records(recs, limit=3):
    text = ", ".join(f"{_enum(_OBJ_TYPES, r.obj_type)} {r.obj_id}" for r in recs[:limit])
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
    busy = " busy" if m.status & 0x1000 else ""
    return (f"platform={_enum(_PLATFORMS, m.platform)} stage={m.stage} "
            f"status=0x{m.status:04x}{busy} last_cmd=0x{m.command:04x} "
            f"({_enum(_PLATFORMS, m.command_platform)}) option={m.command_option!r} "
            f"result=0x{m.result:02x} ({_enum(_RESULTS, m.result)})")


def _sum_sim_control(m, state):
    return (f"platform={_enum(_PLATFORMS, m.platform)} command=0x{m.command:04x} "
            f"option={m.option!r}")


def _sum_ctrl_cmd(m, state):
    text = (f"mode={_enum(_MODES, m.ctrl_mode)} gear={_enum(_GEARS, m.gear)} "
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
    return (f"steer_type={_enum(_GV_STEER, m.steer_type)} throttle={_f(m.throttle, 3)} "
            f"skid={_f(m.skid_steering, 3)} steer_angle=[{steer}]")


def _sum_gv_state(m, state):
    return (f"v={_f(m.target_longitudinal_velocity)} m/s "
            f"w={_f(m.target_angular_velocity, 3)} rad/s")


_SUMMARIES = {
    "ego_status": _sum_ego,
    "object_info": _sum_objects,
    "traffic_light_status": _sum_traffic_light,
    "collision_data": _sum_collision,
    "intersection_status": _sum_intersection,
    "npc_vehicle_collision": _sum_npc_collision,
    "gps_nmea": _sum_gps,
    "imu": _sum_imu,
    "sim_status": _sum_sim_status,
    "sim_control": _sum_sim_control,
    "ego_ctrl_cmd": _sum_ctrl_cmd,
    "ego_ghost_cmd": _sum_ghost_cmd,
    "set_traffic_light": _sum_set_traffic_light,
    "set_intersection": _sum_intersection,
    "scenario_load": _sum_scenario_load,
    "save_sensor_data": _sum_save_sensor,
    "sensor_control": _sum_sensor_control,
    "lamp_control": _sum_lamps,
    "multi_ego_setting": _sum_multi_ego,
    "npc_ghost_cmd": _sum_npc_ghost,
    "gv_direct_cmd": _sum_gv_direct,
    "gv_state_cmd": _sum_gv_state,
}


def _sum_generic(m, state):
    return " ".join(f"{k}={v!r}" for k, v in zip(m._fields, m)
                    if v is not None and not isinstance(v, tuple))[:200]


def summarize(msg, state=None) -> str:
    """One-line summary of the key fields of a decoded message."""
    state = state if state is not None else _NoState
    try:
        return _SUMMARIES.get(msg.TYPE_NAME, _sum_generic)(msg, state)
    except Exception as exc:  # odd values must never stop a dump
        return f"{_sum_generic(msg, state)} (summary failed: {exc!r})"


class _NoState:
    ego_pos = None


# ----------------------------------------------------------------------------- verbose / JSON

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


def jsonable(value):
    """``value`` as JSON-serialisable data: records -> objects, tuples -> lists,
    bytes -> hex text, dates/times -> ISO text, NaN/inf -> "NaN"/"Infinity"/"-Infinity"."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {k: jsonable(v) for k, v in zip(value._fields, value)}
    if isinstance(value, (tuple, list)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


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


# ----------------------------------------------------------------------------- classification

def looks_morai(payload: bytes) -> bool:
    """Whether a datagram that failed to decode was meant to be MORAI.

    ``#NAME$`` framing (a '$' within the first 32 bytes), NMEA text starting
    with '$', or a ground-vehicle command msg_type.  Everything else (SSDP,
    DHCP, ...) is "not MORAI".
    """
    if not payload:
        return False
    if payload[0] == 0x23:
        return payload.find(b"$", 1, 32) > 0
    if payload[0] == 0x24:
        return True
    return udp.classify(payload) is not None


_NMEA_ID = re.compile(rb"\$([A-Z0-9]{1,8})[,*]")


def error_key(err: "udp.DecodeError", payload: bytes) -> str:
    """Header and reason of a decode error, for counting (no per-datagram details)."""
    header = err.header
    if header is not None:
        name = header.decode("ascii", "backslashreplace")
        if header not in udp.HEADERS:
            return f"{name} unknown header"
        dl = err.data_length
        if dl is None:
            return f"{name} truncated before data_length"
        if not err.expected:
            return f"{name} unsupported data_length {dl}"
        want = "/".join(map(str, err.expected))
        if err.length not in err.expected:
            return f"{name} data_length {dl}: {err.length} B, expected {want} B"
        return f"{name} data_length {dl}: no CR LF tail"
    text = str(err).split("; received")[0]
    if payload[:1] == b"$":
        found = _NMEA_ID.match(payload)
        ident = "$" + found.group(1).decode() if found else "$?"
        text = text[len("NMEA: "):] if text.startswith("NMEA: ") else text
        if "checksum does not match" in text:
            text = "checksum does not match"
        return f"NMEA {ident}: {text[:80]}"
    return text[:100]


# ----------------------------------------------------------------------------- dumper

def _addr(endpoint):
    return f"{endpoint[0]}:{endpoint[1]}"


class Dumper:
    """Decodes datagrams, prints them and keeps the counts for the summary."""

    def __init__(self, write, *, verbose=False, as_json=False, hexdump=False,
                 all_udp=False, utc=False, quiet=False):
        self.write = write
        self.verbose = verbose
        self.as_json = as_json
        self.hex = hexdump
        self.all_udp = all_udp
        self.utc = utc
        self.quiet = quiet
        self.datagrams = 0
        self.types = Counter()          # type name -> messages
        self.type_ports = {}            # type name -> Counter of (src port, dst port)
        self.gps_sentences = Counter()  # 'GGA' -> n
        self.errors = Counter()         # error key -> n
        self.error_count = 0
        self.not_morai = Counter()      # dst port -> n
        self.first_ts = None
        self.last_ts = None
        self.ego_pos = None             # (x, y) of the latest ego status, for object distances
        self._tcache = (None, "")

    # -- time
    def time_text(self, ts):
        usec = round(ts * 1e6)  # capture times are whole microseconds: no 0.5599999 -> .559
        sec, ms = usec // 1_000_000, usec // 1000 % 1000
        if self._tcache[0] != sec:
            if self.utc:
                dt = datetime.datetime.fromtimestamp(sec, datetime.timezone.utc)
            else:
                dt = datetime.datetime.fromtimestamp(sec)
            self._tcache = (sec, dt.strftime("%Y-%m-%d %H:%M:%S"))
        return f"{self._tcache[1]}.{ms:03d}" + ("Z" if self.utc else "")

    # -- one datagram
    def handle(self, ts, src, dst, payload):
        self.datagrams += 1
        if self.first_ts is None:
            self.first_ts = ts
        self.last_ts = ts
        try:
            msg = udp.decode(payload)
        except udp.DecodeError as err:
            if looks_morai(payload):
                self._error(ts, src, dst, payload, err)
            else:
                self.not_morai[dst[1]] += 1
                if self.all_udp and not self.quiet:
                    self._other(ts, src, dst, payload)
            return
        name = msg.TYPE_NAME
        self.types[name] += 1
        ports = self.type_ports.get(name)
        if ports is None:
            ports = self.type_ports[name] = Counter()
        ports[(src[1], dst[1])] += 1
        if name == "ego_status":
            self.ego_pos = (msg.pos_x, msg.pos_y)
        elif name == "gps_nmea":
            self.gps_sentences[msg.talker + msg.sentence_type] += 1
        if self.quiet:
            return
        if self.as_json:
            record = self._json_head("message", ts, src, dst, payload, name)
            record["class"] = type(msg).__name__
            record["msg"] = jsonable(msg)
            if self.hex and self.verbose:
                record["hex"] = payload.hex()
            self.write(json.dumps(record) + "\n")
            return
        line = f"{self._head(ts, src, dst, payload)}  {name:<21} {summarize(msg, self)}\n"
        if self.verbose:
            line += "\n".join(verbose_lines(msg)) + "\n"
            if self.hex:
                line += "\n".join(hexdump(payload)) + "\n"
        self.write(line)

    def _head(self, ts, src, dst, payload):
        return (f"{self.time_text(ts)}  {_addr(src):>21} -> {_addr(dst):<21} "
                f"{len(payload):>5} B")

    def _json_head(self, kind, ts, src, dst, payload, type_name):
        return {"kind": kind, "ts": ts, "time": self.time_text(ts), "src": _addr(src),
                "dst": _addr(dst), "size": len(payload), "type": type_name}

    def _error(self, ts, src, dst, payload, err):
        self.error_count += 1
        self.errors[error_key(err, payload)] += 1
        if self.quiet:
            return
        guess = udp.classify(payload)
        if self.as_json:
            record = self._json_head("error", ts, src, dst, payload, guess)
            record["error"] = str(err)
            record["error_count"] = self.error_count
            if self.hex:
                record["hex"] = payload.hex()
            self.write(json.dumps(record) + "\n")
            return
        label = guess or (err.header.decode("ascii", "backslashreplace") if err.header
                          else "?")
        line = (f"{self._head(ts, src, dst, payload)}  DECODE ERROR #{self.error_count} "
                f"({label}): {err}\n")
        if self.hex:
            line += "\n".join(hexdump(payload)) + "\n"
        self.write(line)

    def _other(self, ts, src, dst, payload):
        if self.as_json:
            record = self._json_head("not_morai", ts, src, dst, payload, None)
            record["preview"] = payload[:48].decode("latin-1")
            if self.hex:
                record["hex"] = payload.hex()
            self.write(json.dumps(record) + "\n")
            return
        line = f"{self._head(ts, src, dst, payload)}  (not MORAI)           {payload[:40]!r}\n"
        if self.hex:
            line += "\n".join(hexdump(payload)) + "\n"
        self.write(line)

    # -- end
    @property
    def exit_status(self):
        return EXIT_DECODE_ERRORS if self.error_count else EXIT_OK

    def summary(self, *, source, reader_counts=None, filtered=0, interrupted=False):
        """The end-of-run summary: text lines, or one JSON object with --json."""
        span = (self.last_ts - self.first_ts) if self.first_ts is not None else 0.0
        if self.as_json:
            record = {
                "kind": "summary", "source": source, "interrupted": interrupted,
                "datagrams": self.datagrams, "seconds": span,
                "messages": sum(self.types.values()), "types": dict(self.types),
                "gps_sentences": dict(self.gps_sentences),
                "decode_errors": self.error_count, "errors": dict(self.errors),
                "not_morai": sum(self.not_morai.values()),
                "not_morai_ports": {str(k): v for k, v in self.not_morai.items()},
                "filtered_out": filtered,
                "capture": dict(reader_counts) if reader_counts is not None else None,
                "exit_status": self.exit_status,
            }
            return [json.dumps(record)]
        lines = [f"--- {PROG} summary: {source}" + (" (interrupted)" if interrupted else "")]
        lines.append(f"datagrams: {self.datagrams} in {span:.3f} s")
        lines.append(f"MORAI messages: {sum(self.types.values())}")
        for name, n in self.types.items():
            pairs = self.type_ports[name].most_common()
            ports = ", ".join(f"{s}->{d}" for (s, d), _ in pairs[:3])
            ports += ", ..." if len(pairs) > 3 else ""
            extra = ""
            if name == "gps_nmea" and self.gps_sentences:
                extra = "  (" + ", ".join(f"{k} {v}" for k, v in
                                          sorted(self.gps_sentences.items())) + ")"
            lines.append(f"  {name:<22} {n:>7}  ports {ports}{extra}")
        lines.append(f"decode errors: {self.error_count}")
        for key, n in self.errors.most_common():
            lines.append(f"  {n:>7}  {key}")
        other = sum(self.not_morai.values())
        text = f"not MORAI: {other}"
        if other:
            ports = ", ".join(f"{p}: {n}" for p, n in self.not_morai.most_common(6))
            ports += ", ..." if len(self.not_morai) > 6 else ""
            text += f" (dst port {ports})" + ("" if self.all_udp else "; shown with --all-udp")
        lines.append(text)
        if filtered:
            lines.append(f"filtered out by --port: {filtered}")
        if reader_counts is not None:
            order = ("frames", "datagrams", "fragments", "reassembled", "fragments_dropped",
                     "non_ipv4", "non_udp", "undecodable", "truncated", "truncated_file")
            keys = [k for k in order if reader_counts.get(k)] + \
                sorted(k for k in reader_counts if k not in order and reader_counts[k])
            lines.append("capture reader: " + (", ".join(f"{k} {reader_counts[k]}"
                                                         for k in keys) or "nothing read"))
        lines.append(f"exit status {self.exit_status}"
                     + (" (decode errors)" if self.error_count else ""))
        return lines


# ----------------------------------------------------------------------------- arguments

class _UsageError(Exception):
    pass


def _ports(text):
    ports = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            port = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a port number: {part!r}") from None
        if not 1 <= port <= 65535:
            raise argparse.ArgumentTypeError(f"port out of range 1..65535: {port}")
        if port not in ports:
            ports.append(port)
    if not ports:
        raise argparse.ArgumentTypeError("no port given")
    return ports


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
    return value


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text}")
    return value


def build_parser():
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Print MORAI SIM UDP datagrams decoded, from live UDP ports or from a "
                    "pcap/pcapng capture. No ROS needed.",
        epilog="Exit status: 0 no decode errors, 1 decode errors seen, 2 usage or I/O error. "
               "Details and examples: docs/udp_dump.md.")
    p.add_argument("file", nargs="?", metavar="FILE",
                   help="pcap or pcapng capture to read (instead of --listen)")
    p.add_argument("--listen", metavar="PORT[,PORT...]", type=_ports,
                   help="bind these UDP ports and print what arrives")
    p.add_argument("--bind-ip", metavar="IP",
                   help="address the --listen sockets bind (default 127.0.0.1; "
                        "0.0.0.0 for a simulator on another PC)")
    p.add_argument("--port", metavar="PORT[,PORT...]", type=_ports,
                   help="FILE only: keep datagrams sent to these destination ports "
                        "(what --listen on them would receive)")
    p.add_argument("--all-udp", action="store_true",
                   help="also print datagrams that are not MORAI (otherwise only counted)")
    p.add_argument("--count", type=_positive_int, metavar="N",
                   help="stop after N datagrams (after --port filtering)")
    p.add_argument("--duration", type=_positive_float, metavar="S",
                   help="stop after S seconds (FILE: the first S seconds of capture time)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("-v", "--verbose", action="store_true",
                     help="print every field, records one per line")
    out.add_argument("-q", "--quiet", action="store_true",
                     help="print only the summary")
    p.add_argument("--json", action="store_true",
                   help="one JSON object per line; the summary is a last line with "
                        "kind 'summary'")
    p.add_argument("--hex", action="store_true",
                   help="hex dump of datagrams that fail to decode (of every datagram with -v)")
    p.add_argument("--utc", action="store_true",
                   help="print times in UTC (default: local time)")
    return p


def _check(args):
    if args.listen is None and args.file is None:
        raise _UsageError("give a capture FILE or --listen PORT[,PORT...]")
    if args.listen is not None and args.file is not None:
        raise _UsageError("give either a capture FILE or --listen, not both")
    if args.listen is not None and args.port is not None:
        raise _UsageError("--port filters a capture FILE; with --listen list the ports there")
    if args.file is not None and args.bind_ip is not None:
        raise _UsageError("--bind-ip only applies to --listen")
    if args.bind_ip is None:
        args.bind_ip = "127.0.0.1"
    try:
        socket.inet_aton(args.bind_ip)
    except OSError:
        raise _UsageError(f"--bind-ip: not an IPv4 address: {args.bind_ip!r}") from None
    if args.bind_ip.count(".") != 3:
        raise _UsageError(f"--bind-ip: not a dotted IPv4 address: {args.bind_ip!r}")


# ----------------------------------------------------------------------------- sources

def _run_capture(args, dumper):
    """Returns (reader counts, filtered-out count, interrupted)."""
    reader = read_capture(args.file)
    wanted = set(args.port) if args.port else None
    limit = args.count
    end = None
    filtered = 0
    handle = dumper.handle
    try:
        for ts, src, dst, payload in reader:
            if args.duration is not None:
                if end is None:
                    end = ts + args.duration
                elif ts > end:
                    break
            if wanted is not None and dst[1] not in wanted:
                filtered += 1
                continue
            handle(ts, src, dst, payload)
            if limit is not None and dumper.datagrams >= limit:
                break
    except KeyboardInterrupt:
        return reader.counts, filtered, True
    return reader.counts, filtered, False


def open_sockets(bind_ip, ports):
    """One bound, non-blocking UDP socket per port; raises OSError naming the port."""
    socks = []
    try:
        for port in ports:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            socks.append(s)
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * 1024 * 1024)
            except OSError:
                pass
            try:
                s.bind((bind_ip, port))
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    why = "port already in use (is udp_bridge or another program bound to it?)"
                elif exc.errno == errno.EACCES:
                    why = "permission denied (ports below 1024 need privileges)"
                elif exc.errno == errno.EADDRNOTAVAIL:
                    why = "address not available on this host"
                else:
                    why = exc.strerror or str(exc)
                raise OSError(exc.errno, f"cannot listen on UDP {bind_ip}:{port}: {why}") \
                    from None
            s.setblocking(False)
    except BaseException:
        for s in socks:
            s.close()
        raise
    return socks


def _run_listen(args, dumper, write_err, flush):
    socks = open_sockets(args.bind_ip, args.listen)
    shown_ip = "*" if args.bind_ip == "0.0.0.0" else args.bind_ip
    write_err(f"{PROG}: listening on " + ", ".join(f"{args.bind_ip}:{p}" for p in args.listen)
              + (" (Ctrl-C to stop)" if not (args.count or args.duration) else "") + "\n")
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_READ, (shown_ip, s.getsockname()[1]))
    deadline = time.monotonic() + args.duration if args.duration else None
    limit = args.count
    handle = dumper.handle
    interrupted = False
    try:
        while True:
            timeout = None
            if deadline is not None:
                timeout = deadline - time.monotonic()
                if timeout <= 0:
                    break
            for key, _ in sel.select(timeout):
                sock, dst = key.fileobj, key.data
                while True:
                    try:
                        data, src = sock.recvfrom(_RECV_SIZE)
                    except (BlockingIOError, InterruptedError):
                        break
                    except ConnectionRefusedError:  # ICMP of an earlier send; not ours
                        continue
                    handle(time.time(), src, dst, data)
                    if limit is not None and dumper.datagrams >= limit:
                        return False
            flush()
    except KeyboardInterrupt:
        interrupted = True
    finally:
        sel.close()
        for s in socks:
            s.close()
    return interrupted


# ----------------------------------------------------------------------------- main

def main(argv=None) -> int:
    """Command-line entry point; returns the exit status (see module docstring)."""
    stdout, stderr = sys.stdout, sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        _check(args)
    except _UsageError as exc:
        parser.print_usage(stderr)
        stderr.write(f"{PROG}: error: {exc}\n")
        return EXIT_USAGE

    dumper = Dumper(stdout.write, verbose=args.verbose, as_json=args.json, hexdump=args.hex,
                    all_udp=args.all_udp, utc=args.utc, quiet=args.quiet)
    reader_counts, filtered, interrupted = None, 0, False
    try:
        if args.file is not None:
            source = args.file
            try:
                reader_counts, filtered, interrupted = _run_capture(args, dumper)
            except BrokenPipeError:
                raise
            except (CaptureError, OSError) as exc:
                stdout.flush()
                stderr.write(f"{PROG}: cannot read {args.file}: {exc}\n")
                return EXIT_USAGE
        else:
            source = "listen " + ",".join(map(str, args.listen)) + f" on {args.bind_ip}"
            try:
                interrupted = _run_listen(args, dumper, stderr.write, stdout.flush)
            except BrokenPipeError:
                raise
            except OSError as exc:
                stdout.flush()
                stderr.write(f"{PROG}: {exc.strerror or exc}\n")
                return EXIT_USAGE
        for line in dumper.summary(source=source, reader_counts=reader_counts,
                                   filtered=filtered, interrupted=interrupted):
            stdout.write(line + "\n")
        stdout.flush()
    except BrokenPipeError:
        # output piped into e.g. `head`: stop quietly, keep Python from complaining at exit
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
    return dumper.exit_status


if __name__ == "__main__":
    sys.exit(main())
