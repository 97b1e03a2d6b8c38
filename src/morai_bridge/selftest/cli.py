"""The command line of morai_check_signs: options, the confirmation, main() and its exit status
(the run itself is :class:`.check_signs.SignCheck`; docs/check_signs.md).  No ROS."""
import argparse
import math
import os
import signal
import sys

from morai_bridge.configuration import sim_versions, vehicle_profiles
from morai_bridge.configuration.params import FROM_PROFILE, FROM_VERSION, NO_IMU
from morai_bridge.link.transport import TransportError, resolve_host
from morai_bridge.wire import streams, udp
from morai_bridge.wire.enums import Gear

from .check_signs import (EXIT_REFUSED, MAX_TEST_SPEED, PROG, STOP_REPEATS, Options, SignCheck, planned_time,
                          stop_command)

__all__ = ["main", "build_parser"]


# ----------------------------------------------------------------------------- command line

def _number(lo, hi, what, lo_open=False):
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError("not a number: %r" % text) from None
        if not math.isfinite(v) or v > hi or v < lo or (lo_open and v == lo):
            raise argparse.ArgumentTypeError("%s must be %s %g and at most %g, got %s"
                                             % (what, "above" if lo_open else "at least", lo, hi, text))
        return v
    return parse


def _port(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a port number: %r" % text) from None
    if not 1 <= v <= 65535:
        raise argparse.ArgumentTypeError("port out of range 1..65535: %s" % text)
    return v


def vehicle_dir():
    """config/vehicles beside the version profiles' directory (source tree or install space)."""
    d = version_dir()
    return os.path.join(os.path.dirname(d), "vehicles") if d else None


def version_dir(argv0=None):
    """Where the shipped profiles are: the source tree's config/sim_versions, else (an install
    space: <prefix>/lib/morai_msgs/morai_check_signs) <prefix>/share/morai_msgs/config/sim_versions."""
    d = sim_versions.search_dir_default()
    if d is None:
        script = os.path.dirname(os.path.abspath(argv0 or sys.argv[0] or "."))
        share = os.path.normpath(os.path.join(script, "..", "..", "share", "morai_msgs", "config",
                                              "sim_versions"))
        d = share if os.path.isdir(share) else None
    return d


def build_parser():
    known = ", ".join(sim_versions.available(version_dir())) or "none found"
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Measure which way the simulator's wire steering signs point: drives the ego forward "
                    "at walking speed with a small steer for a few seconds, reads the heading (and the IMU "
                    "yaw rate), always ends with a stop command, and prints the bridge parameters. "
                    "Put the ego in a safe, open, flat place first. No ROS needed.",
        epilog="Exit status: 0 measured, 1 inconclusive (nothing written), 2 refused to start or usage/I/O "
               "error, 3 aborted during the run, 130 interrupted; the stop command is sent in every case. "
               "Guide: docs/check_signs.md.")
    p.add_argument("--sim-version", default=sim_versions.DEFAULT, metavar="NAME|FILE",
                   help="profile to compare with and take default ports/sizes from (default %(default)s; "
                        "known: " + known + "; or a YAML file)")
    p.add_argument("--sim-ip", default="127.0.0.1", help="address of the simulator PC (default %(default)s)")
    p.add_argument("--ctrl-port", type=_port, default=streams.BY_NAME["ctrl_cmd"].port,
                   help="the simulator's Ego Ctrl Cmd port (default %(default)s)")
    p.add_argument("--ctrl-bytes", type=int, choices=(55, 59),
                   help="Ego Ctrl Cmd size (default: the profile's)")
    p.add_argument("--listen-ip", default="0.0.0.0",
                   help="address to receive the status (and IMU) on (default %(default)s)")
    p.add_argument("--status-port", type=_port,
                   help="Ego Vehicle Status destination port (default: the profile's, e.g. 909; 911 for "
                        "25.S4.MolitComp03)")
    p.add_argument("--imu-port", type=_port, help="also read the IMU yaw rate from this port (default: no IMU)")
    p.add_argument("--speed", type=_number(0.0, MAX_TEST_SPEED, "--speed", True), default=5.0,
                   help="target speed, km/h (default %(default)s, at most " + str(MAX_TEST_SPEED) + ")")
    p.add_argument("--steer", type=_number(0.0, 1.0, "--steer", True), default=0.3,
                   help="wire steer of the steering phases, normalised (default %(default)s)")
    p.add_argument("--accel-time", type=_number(0.0, 20.0, "--accel-time", True), default=4.0,
                   help="at most this long straight to reach the speed, s (default %(default)s)")
    p.add_argument("--phase-time", type=_number(0.5, 20.0, "--phase-time"), default=3.0,
                   help="duration of each steering phase, s (default %(default)s)")
    p.add_argument("--settle-time", type=_number(0.0, 10.0, "--settle-time"), default=1.0,
                   help="start of each steering phase not measured (steering response), s (default %(default)s)")
    p.add_argument("--one-way", action="store_true",
                   help="only the positive steer phase (default: positive, then negative)")
    p.add_argument("--max-start-speed", type=_number(0.0, 10.0, "--max-start-speed"), default=2.0,
                   help="refuse to start when the ego is faster, km/h (default %(default)s)")
    p.add_argument("--abort-speed", type=_number(0.0, 2 * MAX_TEST_SPEED, "--abort-speed", True),
                   help="abort above this speed, km/h (default: 2 x --speed)")
    p.add_argument("--status-timeout", type=_number(0.0, 60.0, "--status-timeout", True), default=3.0,
                   help="refuse / abort when no status arrives for this long, s (default %(default)s)")
    p.add_argument("--max-run-time", type=_number(1.0, 300.0, "--max-run-time"),
                   help="abort when the drive takes longer (wall clock), s (default: the planned time + 20 s, "
                        "30 s with the default times)")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation on the terminal")
    p.add_argument("--write", metavar="FILE",
                   help="write the measured version profile here (only when the measurement is conclusive)")
    p.add_argument("--gain", action="store_true",
                   help="two more steering phases at a second steer magnitude (twice --steer, or half of it "
                        "above 0.5): shows whether the steering gain is linear")
    p.add_argument("--vehicle-profile", default="morai_sedan", metavar="NAME|FILE",
                   help="vehicle profile whose max_steering_deg the measured full-scale angle is compared with, "
                        "and whose wheelbase serves when the status has none (default %(default)s; known: "
                        + (", ".join(vehicle_profiles.available(vehicle_dir())) or "none found") + ")")
    p.add_argument("--write-vehicle", metavar="FILE",
                   help="write the vehicle profile with the measured max_steering_deg here (only when measured)")
    return p


def _ask(stdin, out):
    if stdin is None or not hasattr(stdin, "isatty") or not stdin.isatty():
        return None

    def confirm(text):
        out.write(text)
        out.flush()
        line = stdin.readline()
        return line.strip().lower() in ("y", "yes")
    return confirm


def main(argv=None, stdin=None, stdout=None) -> int:
    """Command-line entry point; returns the exit status (see the module docstring)."""
    stdout = stdout or sys.stdout
    stdin = sys.stdin if stdin is None else stdin
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:   # --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_REFUSED
    try:
        version = sim_versions.load_version(args.sim_version, version_dir())
    except sim_versions.VersionError as e:
        sys.stderr.write("%s: error: %s\n" % (PROG, e))
        return EXIT_REFUSED
    try:
        vehicle = vehicle_profiles.load_profile(args.vehicle_profile, vehicle_dir())
    except vehicle_profiles.ProfileError as e:
        sys.stderr.write("%s: error: --vehicle-profile: %s\n" % (PROG, e))
        return EXIT_REFUSED
    for flag, name in (("--write", args.write), ("--write-vehicle", args.write_vehicle)):
        d = os.path.dirname(os.path.abspath(os.path.expanduser(name or ".")))
        if name and (not os.path.isdir(d) or not os.access(d, os.W_OK)):
            sys.stderr.write("%s: error: %s %s: directory %s does not exist or is not writable\n"
                             % (PROG, flag, name, d))
            return EXIT_REFUSED
    if args.abort_speed is not None and args.abort_speed <= args.speed:
        sys.stderr.write("%s: error: --abort-speed %g must be above --speed %g\n" % (PROG, args.abort_speed, args.speed))
        return EXIT_REFUSED
    opts = Options(version=version, sim_ip=args.sim_ip, ctrl_port=args.ctrl_port, ctrl_bytes=args.ctrl_bytes or FROM_PROFILE,
                   listen_ip=args.listen_ip,
                   status_port=FROM_VERSION if args.status_port is None else args.status_port,
                   imu_port=NO_IMU if args.imu_port is None else args.imu_port, speed_kmh=args.speed,
                   steer=args.steer, accel_time=args.accel_time, phase_time=args.phase_time,
                   settle_time=args.settle_time, reverse=not args.one_way, max_start_speed=args.max_start_speed,
                   abort_speed=args.abort_speed or 0.0, status_timeout=args.status_timeout,
                   max_run_time=args.max_run_time or planned_time(args.accel_time, args.phase_time,
                                                                  not args.one_way, args.gain) + 20.0,
                   yes=args.yes, write=args.write or "", gain=args.gain, vehicle=vehicle,
                   write_vehicle=args.write_vehicle or "")
    previous = _terminate_as_interrupt()
    try:
        try:
            check = SignCheck(opts, out=stdout, confirm=_ask(stdin, stdout))
        except TransportError as e:
            sys.stderr.write("%s: error: %s\n" % (PROG, e))
            # no socket to listen on, but a stop still goes out
            _stop_without_listening(opts, version)
            return EXIT_REFUSED
        with check:
            return check.run().exit_status
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _terminate_as_interrupt():
    """SIGTERM (roslaunch, kill) ends the run as Ctrl-C does: through the stop command."""
    def handler(signum, frame):
        raise KeyboardInterrupt
    try:
        return signal.signal(signal.SIGTERM, handler)
    except ValueError:      # not the main thread: the handler is the caller's business
        return None


def _stop_without_listening(opts, version):
    """A refusal before the receive socket exists: send the stop anyway (best effort)."""
    import socket
    ctrl_bytes = version.ctrl_cmd_bytes if opts.ctrl_bytes == FROM_PROFILE else opts.ctrl_bytes
    data_length = 23 if ctrl_bytes == 55 else 27
    data = udp.encode(stop_command(int(Gear.D), data_length))
    try:
        host = resolve_host(opts.sim_ip, "--sim-ip")
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            for _ in range(STOP_REPEATS):
                s.sendto(data, (host, opts.ctrl_port))
        finally:
            s.close()
    except (OSError, TransportError):
        pass


if __name__ == "__main__":
    sys.exit(main())
