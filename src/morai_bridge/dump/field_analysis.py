"""morai_field_report's analysis: datagrams in, the report (a JSON-able dict) out: per port the streams,
variants and sizes seen, rates and arrival gaps, packet times against the host clock, the empty-slot
forms, IMU duplicates, GPS sentence forms, LiDAR bursts, camera chunking; then the profile facts the
traffic shows and how each shipped version profile fits them (:mod:`.field_profiles`).

:func:`analyse` is pure and deterministic for a given capture: the test suite re-analyses each
fixture's capture (test/data/field/) and compares.  No ROS.
"""
import statistics
from collections import Counter, defaultdict

from morai_bridge.wire import udp
from morai_bridge.wire.camera import images

from .field_profiles import observed_facts, profile_matches

__all__ = ["analyse", "VELODYNE_PACKET", "BURST_GAP"]

#: a datagram of this size that is nothing else is a Velodyne data packet
VELODYNE_PACKET = 1206
#: arrival gaps below this (s) count as a burst (the IMU's catch-up, the LiDAR's packet trains)
BURST_GAP = 0.002


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
