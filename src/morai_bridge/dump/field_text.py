"""morai_field_report's report for a terminal (:func:`report_text`), also written as report.txt.  No ROS."""
import json

from .field_profiles import best_profile

__all__ = ["report_text", "PROG"]

PROG = "morai_field_report"


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
