"""morai_field_report's profile matching: the facts of a version profile that a report shows
(:data:`FACTS`), and, per shipped version profile, those that agree with it and those that contradict
it.  No ROS.
"""
from morai_bridge.configuration import sim_versions

__all__ = ["FACTS", "observed_facts", "profile_matches", "best_profile"]

#: the facts of a version profile the traffic can show (the signs need driving: morai_check_signs)
FACTS = ("ports.ego_status", "ports.competition_status", "ports.gps", "imu_bytes", "empty_collision_slot",
         "packet_clock", "imu_seconds", "nmea_time", "rmc_speed")


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
