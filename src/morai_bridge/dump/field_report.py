"""morai_field_report: what a real simulator sends, measured, and which version profile it matches.

For a user with a real MORAI SIM (no ROS needed): listen on every port a version profile (all
shipped ones, so a wrong guess still sees the traffic) and the given sensors use, for a bounded
time; keep the datagrams as a pcap; and write a report: per port the streams, variants and sizes
seen, rates and arrival gaps, packet times against the host clock, the empty-slot forms, IMU
duplicates, GPS sentence forms, LiDAR bursts, camera chunking, and, per shipped version profile,
every fact the traffic shows that agrees with it or contradicts it.  ``--pcap FILE`` analyses a
capture instead of listening.  docs/field_report.md is the user's guide, including how a report
becomes a fixture of the test suite (test/data/field/).

This module is the command line (options, ``main(argv=None, out=None) -> int``); the rest, by job:

* :mod:`.field_listen` - which ports (the profiles', or MORAI's saved settings'), and listening on them;
* :mod:`.field_analysis` - :func:`~.field_analysis.analyse`: datagrams in, the report (a JSON-able dict)
  out, pure and deterministic for a given capture (the test suite re-analyses each fixture's capture);
* :mod:`.field_profiles` - the profile facts the traffic shows, matched against every shipped profile;
* :mod:`.field_text` - the report for a terminal (report.txt).
"""
import json
import os
import sys

from morai_bridge.configuration import sim_versions
from morai_bridge.configuration.params import Param, command_line
from morai_bridge.wire import capture

from .field_analysis import analyse
from .field_listen import listen, profile_ports, settings_ports
from .field_text import PROG, report_text

__all__ = ["main", "build_parser", "OPTIONS", "PROG", "SENSOR_KINDS"]

#: the sensors --sensor takes
SENSOR_KINDS = ("camera", "lidar")


def _sensor(text):
    """--sensor's value: (port, kind)."""
    kind, _, port = text.partition("=")
    if kind not in SENSOR_KINDS or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError("expected camera=PORT or lidar=PORT")
    return int(port), kind


#: the options ('': not given); --seconds and --pcap exclude each other
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
    Param("sensor", [], "also listen for a sensor: camera=PORT or lidar=PORT (repeatable)", check=_sensor,
          repeat=True, metavar="KIND=PORT"),
]


def build_parser():
    return command_line(OPTIONS, prog=PROG, exclusive=[("seconds", "pcap")], description=(
        "Record what a MORAI simulator sends for a while and report what it is: streams, sizes, rates, "
        "packet times, the forms docs/versions.md tracks, and which version profile it matches. No ROS."))


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
        from morai_bridge.configuration.sim_settings_files import SettingsError
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
