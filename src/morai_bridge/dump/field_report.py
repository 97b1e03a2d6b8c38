"""morai_field_report: what a real simulator sends, measured, and which version profile it matches.

For a user with a real MORAI SIM (no ROS needed): listen on every port a version profile (all
shipped ones, so a wrong guess still sees the traffic) and the given sensors use, for a bounded
time; keep the datagrams as a pcap; and write a report: per port the streams, variants and sizes
seen, rates and arrival gaps, packet times against the host clock, the empty-slot forms, IMU
duplicates, GPS sentence forms, LiDAR bursts, camera chunking, and, per shipped version profile,
every fact the traffic shows that agrees with it or contradicts it.  ``--pcap FILE`` analyses a
capture instead of listening.  docs/field_report.md is the user's guide, including how a report
becomes a fixture of the test suite (test/data/field/).

:func:`analyse` is pure (datagrams in, a JSON-able dict out) and deterministic for a given
capture: the test suite re-analyses each fixture's capture and compares.
"""
import argparse
import json
import os
import selectors
import statistics
import sys
import time
from collections import Counter, defaultdict

from morai_bridge.configuration import sim_versions
from morai_bridge.configuration.params import Param, add_options
from morai_bridge.wire import capture, streams, udp
from morai_bridge.wire.camera import images

from .sources import open_sockets

__all__ = ["analyse", "profile_matches", "listen", "report_text", "main", "PROG", "FACTS"]

PROG = "morai_field_report"
#: a datagram of this size that is nothing else is a Velodyne data packet
VELODYNE_PACKET = 1206
#: arrival gaps below this (s) count as a burst (the IMU's catch-up, the LiDAR's packet trains)
BURST_GAP = 0.002
#: the facts of a version profile the traffic can show (the signs need driving: morai_check_signs)
FACTS = ("ports.ego_status", "ports.competition_status", "ports.gps", "imu_bytes", "empty_collision_slot",
         "packet_clock", "imu_seconds", "nmea_time", "rmc_speed")
SENSOR_KINDS = ("camera", "lidar")


def _stats(values, scale=1.0, digits=3):
    if not values:
        return None
    v = sorted(values)
    return {"min": round(v[0] * scale, digits), "median": round(statistics.median(v) * scale, digits),
            "max": round(v[-1] * scale, digits)}


def _kind(data):
    """(kind, decoded) of one datagram: 'udp' with the codec's message, 'camera' with its chunk,
    'lidar' (a Velodyne data packet), or 'other'."""
    try:
        return "udp", udp.decode_tolerant(data)[0]
    except udp.DecodeError:
        pass
    if images.classify(data) == "image":
        try:
            return "camera", images.decode_chunk(data)
        except ValueError:
            return "other", None
    if len(data) == VELODYNE_PACKET:
        return "lidar", None
    return "other", None


def _packet_time(m):
    sec, nsec = getattr(m, "sec", None), getattr(m, "nsec", None)
    if sec is None:
        return None
    return sec + nsec * 1e-9, 0 <= nsec < 1000000000


def analyse(records, sensor_ports=None, port_offset=0, compare_ports=True):
    """The report (a dict) of ``records`` ``(t, (src_ip, src_port), (dst_ip, dst_port), payload)``;
    ``sensor_ports``: {port: 'camera' | 'lidar' | ...} where sensors were listened for (kept in the
    report; what a datagram is comes from its content); ``port_offset``: what the simulator added to
    every profile port (subtracted before the ports are compared with the profiles);
    ``compare_ports``: False when the ports were the user's settings, not a profile's defaults."""
    records = sorted(records, key=lambda r: r[0])
    sensor_ports = {str(k): v for k, v in (sensor_ports or {}).items()}
    ports = defaultdict(lambda: {"datagrams": 0, "kinds": Counter(), "sizes": Counter(), "senders": Counter(),
                                 "t": []})
    types = defaultdict(lambda: {"datagrams": 0, "data_lengths": Counter(), "ports": Counter()})
    offsets = defaultdict(list)          # message type -> packet time - arrival time, s
    whole_ms = Counter()                 # message type -> packets whose nsec is a whole millisecond
    invalid_nsec = Counter()
    imu = {"sizes": Counter(), "same_stamp_repeats": 0, "last": None}
    gps = {"sentences": Counter(), "fraction_digits": Counter(), "blackout": 0, "gga": Counter(),
           "rmc_speed_vs_status": [], "gps_ports": Counter()}
    collision = {"packets": 0, "minus_one_slots": 0, "packets_without_collision": 0, "zero_only": 0}
    objects = {"packets": 0, "minus_one_sized": 0, "minus_one_empty": 0}
    status = {"at_zero": Counter(), "full": Counter(), "last_speed_mps": None}
    camera = {"chunks": 0, "frames": 0, "chunks_per_frame": Counter(), "stamps_per_frame": Counter(),
              "sizes": Counter(), "_frames": {}}      # port -> the frame being assembled there
    lidar = {"packets": 0, "t": []}
    for t, src, dst, data in records:
        data = bytes(data)
        port = dst[1]
        p = ports[port]
        p["datagrams"] += 1
        p["sizes"][len(data)] += 1
        p["senders"]["%s:%d" % tuple(src)] += 1
        p["t"].append(t)
        kind, m = _kind(data)
        if kind == "udp":
            name = type(m).__name__
            p["kinds"][name] += 1
            ty = types[name]
            ty["datagrams"] += 1
            ty["ports"][port] += 1
            if getattr(m, "data_length", None) is not None:
                ty["data_lengths"][m.data_length] += 1
            pt = _packet_time(m)
            if pt is not None:
                if pt[1]:
                    offsets[name].append(pt[0] - t)
                    whole_ms[name] += m.nsec % 1000000 == 0
                else:
                    invalid_nsec[name] += 1
            _stream_facts(m, name, port, data, imu, gps, collision, objects, status)
        else:
            p["kinds"][kind] += 1
            if kind == "camera":
                _camera_chunk(camera, port, m, len(data))
            elif kind == "lidar":
                lidar["packets"] += 1
                lidar["t"].append(t)
    duration = (records[-1][0] - records[0][0]) if len(records) > 1 else 0.0
    report = {
        "duration_s": round(duration, 3),
        "datagrams": len(records),
        "sensor_ports": sensor_ports,
        "ports": {},
        "messages": {},
        "packet_time": {},
        "imu": None, "gps": None, "collision": None, "object_info": None, "ego_status": None,
        "camera": None, "lidar": None,
    }
    for port in sorted(ports):
        p = ports[port]
        gaps = [b - a for a, b in zip(p["t"], p["t"][1:])]
        report["ports"][str(port)] = {
            "datagrams": p["datagrams"],
            "kinds": dict(sorted(p["kinds"].items())),
            "sizes": {str(k): v for k, v in sorted(p["sizes"].items())},
            "senders": dict(sorted(p["senders"].items())),
            "rate_hz": round(p["datagrams"] / duration, 2) if duration > 0 else None,
            "gaps_ms": _stats(gaps, 1000.0, 2),
            "gaps_under_2ms": sum(1 for g in gaps if g < BURST_GAP),
        }
    for name in sorted(types):
        ty = types[name]
        report["messages"][name] = {"datagrams": ty["datagrams"],
                                    "data_lengths": {str(k): v for k, v in sorted(ty["data_lengths"].items())},
                                    "ports": {str(k): v for k, v in sorted(ty["ports"].items())}}
    for name in sorted(set(offsets) | set(invalid_nsec)):
        o = offsets[name]
        report["packet_time"][name] = {"offset_s": _stats(o, 1.0, 3), "whole_ms": whole_ms[name],
                                       "packets": len(o), "invalid_nsec": invalid_nsec[name],
                                       "hours_from_host": _hours(o)}
    if imu["sizes"]:
        report["imu"] = {"sizes": {str(k): v for k, v in sorted(imu["sizes"].items())},
                         "same_stamp_repeats": imu["same_stamp_repeats"]}
    if gps["sentences"]:
        ratios = gps["rmc_speed_vs_status"]
        report["gps"] = {"sentences": dict(sorted(gps["sentences"].items())),
                         "ports": {str(k): v for k, v in sorted(gps["gps_ports"].items())},
                         "time_fraction_digits": {str(k): v for k, v in sorted(gps["fraction_digits"].items())},
                         "blackout_sentences": gps["blackout"],
                         "gga_quality_satellites_hdop_geoid": dict(sorted(gps["gga"].items())),
                         "rmc_knots_per_status_mps": round(statistics.median(ratios), 5) if ratios else None,
                         "rmc_samples_moving": len(ratios)}
    if collision["packets"]:
        report["collision"] = {**collision}
    if objects["packets"]:
        report["object_info"] = dict(objects)
    if status["full"] or status["at_zero"]:
        report["ego_status"] = {"with_position_ports": {str(k): v for k, v in sorted(status["full"].items())},
                                "at_zero_ports": {str(k): v for k, v in sorted(status["at_zero"].items())}}
    report["port_offset"] = port_offset
    report["ports_compared"] = compare_ports
    if camera["chunks"]:
        for port in list(camera["_frames"]):
            _camera_end(camera, port)
        report["camera"] = {"chunks": camera["chunks"], "frames": camera["frames"],
                            "chunks_per_frame": {str(k): v for k, v in sorted(camera["chunks_per_frame"].items())},
                            "stamps_per_frame": {str(k): v for k, v in sorted(camera["stamps_per_frame"].items())},
                            "datagram_sizes": {str(k): v for k, v in sorted(camera["sizes"].items())[:10]}}
    if lidar["packets"]:
        gaps = [b - a for a, b in zip(lidar["t"], lidar["t"][1:])]
        bursts = 1 + sum(1 for g in gaps if g >= BURST_GAP) if gaps else 1
        report["lidar"] = {"packets": lidar["packets"],
                           "packets_per_s": round(lidar["packets"] / duration, 1) if duration > 0 else None,
                           "gaps_ms": _stats(gaps, 1000.0, 3), "bursts": bursts,
                           "packets_per_burst": round(lidar["packets"] / bursts, 2)}
    report["observed"] = observed_facts(report)
    report["profiles"] = profile_matches(report["observed"])
    return report


def _hours(offsets):
    """Whole hours between the packet clock and the host's (a time zone), when the offsets sit within
    5 s of one; None otherwise."""
    if not offsets:
        return None
    med = statistics.median(offsets)
    hours = round(med / 3600.0)
    return hours if abs(med - hours * 3600.0) < 5.0 else None


def _stream_facts(m, name, port, data, imu, gps, collision, objects, status):
    if name == "ImuData":
        imu["sizes"][len(data)] += 1
        stamp = (m.sec, m.nsec) if m.sec is not None else None
        if stamp is not None and stamp == imu["last"]:
            imu["same_stamp_repeats"] += 1
        imu["last"] = stamp
    elif name == "NmeaSentence":
        gps["sentences"][m.sentence_type] += 1
        gps["gps_ports"][port] += 1
        time_field = m.raw.split(",")[1] if m.raw.count(",") else ""
        if "." in time_field:
            gps["fraction_digits"][len(time_field.split(".", 1)[1])] += 1
        if m.latitude == 0.0 and m.longitude == 0.0:
            gps["blackout"] += 1
        if m.sentence_type == "GGA":
            gps["gga"][f"{m.fix_quality}/{m.num_satellites}/{m.hdop}/{m.geoid_separation}"] += 1
        if m.sentence_type == "RMC" and m.speed_knots is not None and (status["last_speed_mps"] or 0) > 2.0:
            gps["rmc_speed_vs_status"].append(m.speed_knots / status["last_speed_mps"])
    elif name == "CollisionData":
        collision["packets"] += 1
        minus = sum(1 for r in m.records if r.obj_type == -1)
        collision["minus_one_slots"] += minus
        real = [r for r in m.records if r.obj_type >= 0]
        if not real:
            collision["packets_without_collision"] += 1
            if not minus:
                collision["zero_only"] += 1
    elif name == "ObjectInfo":
        objects["packets"] += 1
        for r in m.objects:
            if r.obj_type == -1:
                sized = r.size_x > 0 or r.size_y > 0
                objects["minus_one_sized" if sized else "minus_one_empty"] += 1
    elif name == "EgoVehicleStatus":
        speed = abs(m.signed_vel) / 3.6
        if m.pos_x == 0.0 and m.pos_y == 0.0:
            status["at_zero"][port] += 1       # the competition status (position withheld), or an ego at 0/0
        else:
            status["full"][port] += 1
            status["last_speed_mps"] = speed


def _camera_chunk(camera, port, chunk, size):
    camera["chunks"] += 1
    camera["sizes"][size] += 1
    frame = camera["_frames"].get(port)
    if chunk.index == 0:
        _camera_end(camera, port)
        frame = camera["_frames"][port] = {"chunks": 0, "stamps": set()}
    if frame is None:
        return
    frame["chunks"] += 1
    frame["stamps"].add((chunk.sec, chunk.nsec))
    if chunk.last:
        _camera_end(camera, port)


def _camera_end(camera, port):
    frame = camera["_frames"].pop(port, None)
    if frame is not None and frame["chunks"]:
        camera["frames"] += 1
        camera["chunks_per_frame"][frame["chunks"]] += 1
        camera["stamps_per_frame"][len(frame["stamps"])] += 1


def observed_facts(report):
    """The profile facts (:data:`FACTS`) the traffic shows: {fact: value}; a fact the traffic does
    not show is absent."""
    out = _observed_ports(report) if report["ports_compared"] else {}
    return _observed_forms(report, out)


def _observed_ports(report):
    """The port facts: the ego status, competition status and GPS ports, less the port offset."""
    out, off = {}, report["port_offset"]
    ego = report["ego_status"] or {}
    full = {int(k): v for k, v in (ego.get("with_position_ports") or {}).items()}
    zero = {int(k): v for k, v in (ego.get("at_zero_ports") or {}).items() if int(k) not in full}
    # a status with a position is the ego's; a second status port whose position is always 0/0 is the
    # competition status (25.S4.MolitComp03); one port alone is the ego's, with no competition status
    if full:
        out["ports.ego_status"] = max(full, key=full.get) - off
        out["ports.competition_status"] = max(zero, key=zero.get) - off if zero else 0
    if report["gps"]:
        p = report["gps"]["ports"]
        out["ports.gps"] = int(max(p, key=p.get)) - off
    return out


def _observed_forms(report, out):
    """``out`` with the facts of the packets' forms and clocks."""
    if report["gps"]:
        digits = report["gps"]["time_fraction_digits"]
        if any(int(k) > 1 for k in digits):
            out["nmea_time"] = "milliseconds"
        elif sum(digits.values()) >= 10:
            out["nmea_time"] = "tenths"
        ratio = report["gps"]["rmc_knots_per_status_mps"]
        if ratio is not None:
            out["rmc_speed"] = "knots" if abs(ratio - 1.94384) < 0.3 else \
                "mps_x_0.00053995" if ratio < 0.05 else f"other ({ratio:.4f} knots per m/s)"
    if report["imu"]:
        sizes = report["imu"]["sizes"]
        out["imu_bytes"] = int(max(sizes, key=sizes.get))
    col = report["collision"]
    if col and col["packets_without_collision"]:
        out["empty_collision_slot"] = "minus_one" if col["minus_one_slots"] else "zero"
    pt = report["packet_time"].get("EgoVehicleStatus")
    if pt and pt["offset_s"]:
        out["packet_clock"] = "host_wall_clock" if abs(pt["offset_s"]["median"]) < 60.0 else "simulation"
    imu_pt = report["packet_time"].get("ImuData")
    if imu_pt and imu_pt["hours_from_host"] is not None and out.get("packet_clock") == "host_wall_clock":
        # seconds of the local time show as whole hours off the host's UTC clock; on a host set to
        # UTC both read the same and the fact stays unseen
        if imu_pt["hours_from_host"] != 0:
            out["imu_seconds"] = "local"
    return out


def _profile_value(v, fact):
    if fact.startswith("ports."):
        return v.port(fact.split(".", 1)[1])
    return getattr(v, fact)


def profile_matches(observed, search_dir=None):
    """Per shipped version profile: the observed facts that agree and those that contradict it;
    sorted best first (fewest contradictions, then most agreements)."""
    out = []
    for name in sim_versions.available(search_dir or sim_versions.search_dir_default()):
        v = sim_versions.load_version(name, search_dir)
        agree, contradict = [], []
        for fact, value in sorted(observed.items()):
            want = _profile_value(v, fact)
            (agree if want == value else contradict).append(
                {"fact": fact, "seen": value, "profile": want})
        out.append({"profile": name, "agrees": agree, "contradicts": contradict})
    out.sort(key=lambda m: (len(m["contradicts"]), -len(m["agrees"]), m["profile"]))
    return out


def best_profile(report):
    """The profile the traffic matches: the only one without a contradiction, or None (none, or
    several that the traffic cannot tell apart: see ``report['profiles']``)."""
    clean = [m for m in report["profiles"] if not m["contradicts"]]
    return clean[0]["profile"] if len(clean) == 1 else None


def report_text(report):
    """The report for a terminal."""
    lines = ["%s: %d datagrams in %.1f s" % (PROG, report["datagrams"], report["duration_s"])]
    for port, p in report["ports"].items():
        gaps = p["gaps_ms"]
        lines.append("  port %s: %d datagram%s%s, %s; sizes %s%s%s" % (
            port, p["datagrams"], "" if p["datagrams"] == 1 else "s",
            "" if p["rate_hz"] is None else " (%.1f Hz)" % p["rate_hz"],
            ", ".join("%s %d" % kv for kv in p["kinds"].items()),
            ", ".join("%s B x%d" % kv for kv in list(p["sizes"].items())[:4]),
            "" if gaps is None else "; gaps %.1f / %.1f / %.1f ms (min / median / max)" % (
                gaps["min"], gaps["median"], gaps["max"]),
            "; %d under 2 ms" % p["gaps_under_2ms"] if p["gaps_under_2ms"] else ""))
    for name, pt in report["packet_time"].items():
        o = pt["offset_s"]
        if o:
            lines.append("  %s packet time - arrival: %+.3f s median (%+.3f .. %+.3f), %d of %d whole ms%s%s" % (
                name, o["median"], o["min"], o["max"], pt["whole_ms"], pt["packets"],
                "" if not pt["hours_from_host"] else ", %+d h from the host's clock" % pt["hours_from_host"],
                "; %d with nsec out of range" % pt["invalid_nsec"] if pt["invalid_nsec"] else ""))
    for key in ("imu", "gps", "collision", "object_info", "ego_status", "camera", "lidar"):
        if report[key]:
            lines.append(f"  {key}: {json.dumps(report[key], sort_keys=True)}")
    lines.append("observed: " + (", ".join("%s = %s" % kv for kv in sorted(report["observed"].items()))
                                 or "nothing a profile states")
                 + ("" if report["ports_compared"] else " (ports from the settings: not compared)"))
    for m in report["profiles"]:
        lines.append("  %-20s agrees on %d%s" % (m["profile"], len(m["agrees"]), "".join(
            "; CONTRADICTS %s: seen %s, profile %s" % (c["fact"], c["seen"], c["profile"])
            for c in m["contradicts"])))
    best = best_profile(report)
    lines.append("matches: %s" % (best or "no single profile (see above): report it with the capture "
                                           "(docs/field_report.md)"))
    return "\n".join(lines)


def listen(bind_ip, ports, seconds, max_datagrams, clock=time.time):
    """Datagrams on ``ports`` for ``seconds`` (or ``max_datagrams``): (records, bound ports,
    {port: why it could not be bound})."""
    socks, refused = [], {}
    for port in ports:
        try:
            socks += open_sockets(bind_ip, [port])
        except OSError as e:
            refused[port] = e.strerror or str(e)
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_READ, s.getsockname())
    records = []
    end = time.monotonic() + seconds
    try:
        while len(records) < max_datagrams:
            left = end - time.monotonic()
            if left <= 0:
                break
            for key, _ in sel.select(left):
                while len(records) < max_datagrams:
                    try:
                        data, src = key.fileobj.recvfrom(65536)
                    except (BlockingIOError, InterruptedError):
                        break
                    except ConnectionRefusedError:
                        continue
                    records.append((clock(), src, key.data, data))
    finally:
        sel.close()
        for s in socks:
            s.close()
    return records, sorted(s for s in ports if s not in refused), refused


def profile_ports(version_names, offset=0, search_dir=None):
    """Every sim -> user port of the given profiles (the emulator's sync extension aside)."""
    ports = set()
    for name in version_names:
        v = sim_versions.load_version(name, search_dir)
        for s in streams.FROM_SIM:
            if s.extension:
                continue
            p = v.port(s.name) if s.name in sim_versions.VERSIONED_PORTS else s.port
            if p:
                ports.add(p + offset)
    return sorted(ports)


def _sensor(text):
    kind, _, port = text.partition("=")
    if kind not in SENSOR_KINDS or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"expected camera=PORT or lidar=PORT, got {text!r}")
    return int(port), kind


def settings_ports(sensor_file=None, network_file=None):
    """(ports, {port: sensor kind}, warnings) of MORAI's saved settings: the destination port of
    every stream the network file has the simulator send over UDP, and of every sensor sent over UDP."""
    from morai_bridge.configuration import morai_settings as ms
    ports, sensors, warnings = set(), {}, []
    if network_file:
        net = ms.load_network(network_file)
        warnings += net.warnings
        rx = {s.name for s in streams.FROM_SIM}
        ports |= {e.port for e in net.entries if e.stream in rx and e.port}
    if sensor_file:
        sen = ms.load_sensors(sensor_file)
        warnings += sen.warnings
        for s in sen.sensors:
            if s.udp and s.dest_port:
                ports.add(s.dest_port)
                if s.kind in ("camera", "lidar", "lidar2d"):
                    sensors[s.dest_port] = s.kind
    return sorted(ports), sensors, warnings


#: the options but --sensor (repeatable, KIND=PORT), as Params ('': not given); the first two exclude each other
OPTIONS = [
    Param("seconds", 30.0, "how long to listen, s"),
    Param("pcap", "", "analyse this capture instead of listening", metavar="FILE"),
    Param("listen_ip", "0.0.0.0", "address to listen on", metavar="IP"),
    Param("sim_version", "all", "listen on this profile's ports (all: every shipped profile's)", metavar="NAME|all"),
    Param("sensor_settings", "", "listen on the ports of MORAI's saved sensor settings (SensorInfo_<vehicle>.json) "
          "instead", metavar="FILE"),
    Param("network_settings", "", "listen on the ports of MORAI's saved network settings (NetworkInfo.json) instead",
          metavar="FILE"),
    Param("port_offset", 0, "add this to every profile port (tests)"),
    Param("max_datagrams", 200000, "stop after this many"),
    Param("out", "", "write capture.pcap (when listening), report.json and report.txt here", metavar="DIR"),
]


def build_parser():
    ap = argparse.ArgumentParser(prog=PROG, description=(
        "Record what a MORAI simulator sends for a while and report what it is: streams, sizes, rates, "
        "packet times, the forms docs/versions.md tracks, and which version profile it matches. No ROS."))
    add_options(ap.add_mutually_exclusive_group(), OPTIONS[:2])
    add_options(ap, OPTIONS[2:])
    ap.add_argument("--sensor", type=_sensor, action="append", default=[], metavar="KIND=PORT",
                    help="also listen for a sensor: camera=PORT or lidar=PORT (repeatable)")
    return ap


def main(argv=None, out=None):
    out = out or sys.stdout
    args = build_parser().parse_args(argv)
    names = sim_versions.available(sim_versions.search_dir_default())
    if args.sim_version != "all":
        try:
            names = [sim_versions.load_version(args.sim_version).name]
        except sim_versions.VersionError as e:
            sys.stderr.write(f"{PROG}: error: {e}\n")
            return 2
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    sensors = dict(args.sensor)
    from_settings = bool(args.sensor_settings or args.network_settings)
    if from_settings:
        from morai_bridge.configuration.morai_settings import SettingsError
        try:
            ports, found, warnings = settings_ports(args.sensor_settings, args.network_settings)
        except (OSError, SettingsError) as e:
            sys.stderr.write(f"{PROG}: error: {e}\n")
            return 2
        for w in warnings:
            out.write(f"{PROG}: warning: {w}\n")
        sensors.update(found)
    if args.pcap:
        try:
            records = list(capture.read_capture(args.pcap))
        except (OSError, capture.CaptureError) as e:
            sys.stderr.write(f"{PROG}: error: {e}\n")
            return 2
    else:
        if not from_settings:
            ports = profile_ports(names, args.port_offset)
        ports = sorted(set(ports) | set(sensors))
        out.write(f"{PROG}: listening on {', '.join(map(str, ports))} for {args.seconds:g} s\n")
        out.flush()
        records, bound, refused = listen(args.listen_ip, ports, args.seconds, args.max_datagrams)
        for port, why in sorted(refused.items()):
            out.write("%s: not listening on %d: %s\n" % (PROG, port, why))
        if not bound:
            sys.stderr.write(f"{PROG}: error: no port could be bound\n")
            return 2
        if args.out:
            # the report is made from the file as written (timestamps in microseconds), so that
            # re-analysing the capture gives the same report (test/data/field/)
            path = os.path.join(args.out, "capture.pcap")
            capture.write_pcap(path, records)
            records = list(capture.read_capture(path))
    # ports set in the settings are the user's choice, not a release's default: not compared
    report = analyse(records, sensors, args.port_offset, compare_ports=not from_settings)
    text = report_text(report)
    out.write(text + "\n")
    if args.out:
        with open(os.path.join(args.out, "report.json"), "w") as f:
            json.dump(report, f, indent=1, sort_keys=True)
            f.write("\n")
        with open(os.path.join(args.out, "report.txt"), "w") as f:
            f.write(text + "\n")
        out.write(f"{PROG}: wrote {args.out}\n")
    return 0 if records else 1


if __name__ == "__main__":
    sys.exit(main())
