#!/usr/bin/python3
"""Benchmark of the MORAI UDP codec (morai_bridge.wire.udp).

Usage:  /usr/bin/python3 bench/bench_codec.py [--quick] [--reps N]

Prints decode and encode time per packet for every message variant, and, for
Ego Vehicle Status (229 B) and Object Info (2160 B), packets/s next to two
naive decoders written for comparison:

  ctypes   the way MORAI's examples do it: a ctypes.Structure (_pack_ = 1) per
           packet via from_buffer_copy, then every field copied into a plain
           object (no validation of header, length or tail);
  struct   plain struct.unpack_from of each field at its spec offset into a
           plain object (no validation either).

Every figure of the variant table is the best of several timed runs
(time.perf_counter).  The hot path (Ego status 229 B, Object Info with 0, 1, 2, 5
and 20 objects) is measured in N repetitions (--reps, default 5, at least 3),
interleaved: each repetition times every case, and within a case the codec, ctypes
and struct decoders batch by batch in turn (best of 15 batches of ~4 ms each); the
table gives the median of the repetitions and the spread (min..max) of x ctypes.
main() also returns the figures (bench/run.py uses them for its targets).
"""

import ctypes
import os
import platform
import struct
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from morai_bridge.configuration.params import Param, parse_args  # noqa: E402
from morai_bridge.wire import udp  # noqa: E402
from morai_bridge.wire.udp import samples as udp_samples

#: the command line (configuration.params)
PARAMS = [Param("quick", False, "shorter timed runs (a smoke test; 3 repetitions)", switch=True),
          Param("reps", None, "repetitions of the hot path (default 5, 3 with --quick; at least 3)", kind=int,
                metavar="N")]

# ----------------------------------------------------------------------------- samples


def sample_messages():
    """One representative message per variant (non-zero values everywhere)."""
    return udp_samples.per_variant()


def captured_status():
    """The captured 229-byte status vector (parked ego) from test/data."""
    import json
    vectors = json.loads((REPO / "test" / "data" / "udp_vectors.json").read_text())["vectors"]
    by_name = {v["name"]: bytes.fromhex(v["hex"]) for v in vectors}
    return by_name["captured_ego_status_200_parked"], by_name["captured_object_info_2128_empty"]


# ----------------------------------------------------------------------------- naive: ctypes

_STATUS_FLOATS = ["signed_vel"]
_STATUS_LAYOUT = (
    [("header", ctypes.c_char * 11), ("data_length", ctypes.c_int32),
     ("aux_data", ctypes.c_int32 * 3), ("sec", ctypes.c_int32), ("nsec", ctypes.c_int32),
     ("ctrl_mode", ctypes.c_int8), ("gear", ctypes.c_int8), ("signed_vel", ctypes.c_float),
     ("map_data_id", ctypes.c_int32)]
    + [(n, ctypes.c_float) for n in (
        "accel", "brake", "size_x", "size_y", "size_z", "overhang", "wheelbase",
        "rear_overhang", "pos_x", "pos_y", "pos_z", "roll", "pitch", "yaw", "vel_x", "vel_y",
        "vel_z", "ang_vel_x", "ang_vel_y", "ang_vel_z", "acc_x", "acc_y", "acc_z", "steer")]
    + [("link_id", ctypes.c_char * 38)]
    + [(f"{q}_{w}", ctypes.c_float) for q in ("tire_lateral_force", "side_slip_angle",
                                                "tire_cornering_stiffness")
       for w in ("fl", "fr", "rl", "rr")]
    + [("tail", ctypes.c_char * 2)])


class CStatus(ctypes.Structure):
    _pack_ = 1
    _fields_ = _STATUS_LAYOUT


class CObject(ctypes.Structure):
    _pack_ = 1
    _fields_ = ([("obj_id", ctypes.c_int16), ("obj_type", ctypes.c_int16)]
                + [(n, ctypes.c_float) for n in (
                    "pos_x", "pos_y", "pos_z", "heading", "size_x", "size_y", "size_z",
                    "overhang", "wheelbase", "rear_overhang", "vel_x", "vel_y", "vel_z",
                    "acc_x", "acc_y", "acc_z")]
                + [("link_id", ctypes.c_char * 38)])


class CObjectInfo(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("header", ctypes.c_char * 14), ("data_length", ctypes.c_int32),
                ("aux_data", ctypes.c_int32 * 3), ("sec", ctypes.c_int32),
                ("nsec", ctypes.c_int32), ("objects", CObject * 20), ("tail", ctypes.c_char * 2)]


assert ctypes.sizeof(CStatus) == 229 and ctypes.sizeof(CObjectInfo) == 2160


class Plain:
    """A plain attribute bag, like a message object a node fills in."""


_STATUS_NAMES = [n for n, _ in _STATUS_LAYOUT if n not in ("header", "aux_data", "tail",
                                                             "data_length")]
_OBJECT_NAMES = [n for n, _ in CObject._fields_]


def ctypes_status(data):
    s = CStatus.from_buffer_copy(data)
    out = Plain()
    for name in _STATUS_NAMES:
        setattr(out, name, getattr(s, name))
    out.link_id = out.link_id.decode("ascii", "replace")
    return out


def ctypes_objects(data):
    s = CObjectInfo.from_buffer_copy(data)
    out = Plain()
    out.sec, out.nsec = s.sec, s.nsec
    out.objects = []
    for rec in s.objects:
        if rec.obj_id == 0:
            continue
        obj = Plain()
        for name in _OBJECT_NAMES:
            setattr(obj, name, getattr(rec, name))
        obj.link_id = obj.link_id.decode("ascii", "replace")
        out.objects.append(obj)
    return out


# ----------------------------------------------------------------------------- naive: struct

def _offsets(layout, start):
    table, off = [], start
    for name, ctype in layout:
        size = ctypes.sizeof(ctype)
        code = {ctypes.c_int8: "b", ctypes.c_int16: "h", ctypes.c_int32: "i",
                ctypes.c_float: "f"}.get(ctype, f"{size}s")
        table.append((name, "<" + code, off))
        off += size
    return table


_STATUS_OFFSETS = [(n, c, o) for n, c, o in _offsets(_STATUS_LAYOUT, 0)
                   if n in _STATUS_NAMES]
_OBJECT_OFFSETS = _offsets(CObject._fields_, 0)


def struct_status(data):
    out = Plain()
    for name, code, off in _STATUS_OFFSETS:
        setattr(out, name, struct.unpack_from(code, data, off)[0])
    out.link_id = out.link_id.rstrip(b"\x00").decode("ascii", "replace")
    return out


def struct_objects(data):
    out = Plain()
    out.sec, out.nsec = struct.unpack_from("<ii", data, 30)
    out.objects = []
    for k in range(20):
        base = 38 + 106 * k
        if struct.unpack_from("<h", data, base)[0] == 0:
            continue
        obj = Plain()
        for name, code, off in _OBJECT_OFFSETS:
            setattr(obj, name, struct.unpack_from(code, data, base + off)[0])
        obj.link_id = obj.link_id.rstrip(b"\x00").decode("ascii", "replace")
        out.objects.append(obj)
    return out


# ----------------------------------------------------------------------------- timing

def best_us(fn, arg, target=0.04, runs=5):
    """Best-of-``runs`` time per call in microseconds."""
    n = 1
    while True:  # calibrate: one run should take about ``target`` seconds
        t0 = time.perf_counter()
        for _ in range(n):
            fn(arg)
        dt = time.perf_counter() - t0
        if dt > target / 4:
            break
        n *= 4
    n = max(1, int(n * target / dt))
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(n):
            fn(arg)
        best = min(best, time.perf_counter() - t0)
    return best / n * 1e6


def machine():
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{model}, {os.cpu_count()} logical cores, Python {platform.python_version()} "
            f"({sys.executable})")


def interleaved_us(fns, arg, rounds, batch_s):
    """Per function, the best time per call (us) over ``rounds`` rounds; each round times a batch
    of about ``batch_s`` seconds of every function in turn, so that a slow moment of the machine
    hits all of them alike."""
    n = {}
    for name, fn in fns.items():
        k = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(k):
                fn(arg)
            dt = time.perf_counter() - t0
            if dt > batch_s / 4:
                break
            k *= 2
        n[name] = max(1, int(k * batch_s / dt))
    best = {name: float("inf") for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            k = n[name]
            t0 = time.perf_counter()
            for _ in range(k):
                fn(arg)
            best[name] = min(best[name], (time.perf_counter() - t0) / k)
    return {name: v * 1e6 for name, v in best.items()}


def hot_cases():
    """(label, datagram, naive ctypes decoder, naive struct decoder) of the hot path: the captured
    ego status and empty Object Info, Object Info with 1, 2, 5 and 20 objects."""
    status_cap, objects_cap = captured_status()
    full = udp.make(udp.ObjectInfo, sec=1, nsec=2, objects=tuple(
        udp.ObjectRecord(obj_id=i + 1, obj_type=1, pos_x=1.5 * i, vel_x=36.0,
                         link_id="A219BS010391") for i in range(20)))
    cases = [("Ego status 229 B (captured)", status_cap, ctypes_status, struct_status),
             ("Object info 2160 B, 0 objects (captured)", objects_cap, ctypes_objects, struct_objects)]
    for k in (1, 2, 5, 20):
        data = udp.encode(udp.make(udp.ObjectInfo, sec=1, nsec=2, objects=full.objects[:k]))
        cases.append((f"Object info 2160 B, {k} object{'s' if k > 1 else ''}", data, ctypes_objects,
                      struct_objects))
    return cases


def median(values):
    v = sorted(values)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def main(argv=None):
    args = parse_args(PARAMS, argv, description=__doc__, raw_help=True)
    quick = args.quick
    reps = (3 if quick else 5) if args.reps is None else max(3, args.reps)
    target, runs = (0.01, 3) if quick else (0.04, 5)
    rounds, batch_s = (5, 0.002) if quick else (15, 0.004)
    print(f"machine: {machine()}")
    print(f"method: best of {runs} runs of ~{target * 1000:.0f} ms each, time.perf_counter\n")

    out = {"machine": machine(), "runs": runs, "target_s": target, "variants": [], "hot_path": [],
           "reps": reps, "rounds": rounds, "batch_s": batch_s}
    print(f"{'message variant':34s} {'bytes':>6s} {'decode us':>10s} {'encode us':>10s}")
    for label, msg in sample_messages():
        data = udp.encode(msg)
        assert udp.decode(data) == msg, label
        dec = best_us(udp.decode, data, target, runs)
        enc = best_us(udp.encode, msg, target, runs)
        print(f"{label:34s} {len(data):6d} {dec:10.2f} {enc:10.2f}")
        out["variants"].append({"variant": label, "bytes": len(data), "decode_us": dec, "encode_us": enc})

    cases = hot_cases()
    for label, data, naive_ctypes, naive_struct in cases:
        ours = udp.decode(data)
        check_c, check_s = naive_ctypes(data), naive_struct(data)
        if hasattr(ours, "objects"):
            assert len(ours.objects) == len(check_c.objects) == len(check_s.objects)
        else:
            assert ours.pos_x == check_c.pos_x == check_s.pos_x
            assert ours.link_id == check_c.link_id == check_s.link_id
    # repetitions interleaved: every case once per repetition, codec, ctypes and struct in turn
    # within it; each figure is the best of `rounds` batches of that repetition
    per = {label: [] for label, _, _, _ in cases}
    for rep in range(reps):
        for label, data, naive_ctypes, naive_struct in cases:
            t = interleaved_us({"codec": udp.decode, "ctypes": naive_ctypes, "struct": naive_struct}, data,
                               rounds, batch_s)
            per[label].append(t)
    print(f"\nhot path: decode per packet (us, median of {reps} interleaved repetitions, each the best of "
          f"{rounds} batches of ~{batch_s * 1e3:.0f} ms per decoder) and x ctypes (median, min..max)")
    print(f"{'packet':42s} {'codec':>8s} {'ctypes':>8s} {'struct':>8s} "
          f"{'codec pkt/s':>12s} {'x ctypes':>9s} {'min..max':>12s} {'x struct':>9s}")
    for label, data, _, _ in cases:
        reps_t = per[label]
        xc = [t["ctypes"] / t["codec"] for t in reps_t]
        xs = [t["struct"] / t["codec"] for t in reps_t]
        t_ours, t_c, t_s = (median([t[k] for t in reps_t]) for k in ("codec", "ctypes", "struct"))
        print(f"{label:42s} {t_ours:8.2f} {t_c:8.2f} {t_s:8.2f} {1e6 / t_ours:12,.0f} "
              f"{median(xc):8.2f}x {min(xc):5.2f}..{max(xc):<5.2f} {median(xs):8.1f}x")
        out["hot_path"].append({"packet": label, "codec_us": t_ours, "ctypes_us": t_c, "struct_us": t_s,
                                "x_ctypes": median(xc), "x_ctypes_min": min(xc), "x_ctypes_max": max(xc),
                                "x_ctypes_reps": xc, "x_struct": median(xs), "reps": reps_t})
    budget = 120 * 8
    t_status = per[cases[0][0]]
    t_status = median([t["codec"] for t in t_status])
    print(f"\n120 Hz x 8 streams = {budget} packets/s of 229 B status would use "
          f"{budget * t_status / 1e4:.3f} % of one core for decoding")
    return out


if __name__ == "__main__":
    main()
