"""The command line of morai_check_signs: options (a Param table, :func:`options`), the confirmation,
main() and its exit status (the run itself is :class:`.check_signs.SignCheck`; docs/check_signs.md).  No ROS."""
import argparse
import os
import signal
import sys

from morai_bridge.configuration import sim_versions, vehicle_profiles
from morai_bridge.configuration.params import FROM_PROFILE, FROM_VERSION, NO_IMU, Param, add_options
from morai_bridge.link.transport import TransportError, resolve_host
from morai_bridge.wire import streams, udp
from morai_bridge.wire.enums import Gear

from .check_signs import (EXIT_REFUSED, MAX_TEST_SPEED, PROG, STOP_REPEATS, Options, SignCheck, planned_time,
                          stop_command)

__all__ = ["main", "build_parser", "options"]


# ----------------------------------------------------------------------------- command line

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


def options():
    """The options as Params, in the order --help lists them (the known profiles are looked up now)."""
    versions = ", ".join(sim_versions.available(version_dir())) or "none found"
    vehicles = ", ".join(vehicle_profiles.available(vehicle_dir())) or "none found"
    port = dict(minimum=1, maximum=65535, metavar="PORT")
    return [
        Param("sim_version", sim_versions.DEFAULT, "profile to compare with and take default ports/sizes from "
              "(known: " + versions + "; or a YAML file)", metavar="NAME|FILE"),
        Param("sim_ip", "127.0.0.1", "address of the simulator PC", metavar="IP"),
        Param("ctrl_port", streams.BY_NAME["ctrl_cmd"].port, "the simulator's Ego Ctrl Cmd port", **port),
        Param("ctrl_bytes", FROM_PROFILE, "Ego Ctrl Cmd size (default: the profile's)", choices=(55, 59)),
        Param("listen_ip", "0.0.0.0", "address to receive the status (and IMU) on", metavar="IP"),
        Param("status_port", FROM_VERSION, "Ego Vehicle Status destination port (default: the profile's, e.g. 909; "
              "911 for 25.S4.MolitComp03)", **port),
        Param("imu_port", NO_IMU, "also read the IMU yaw rate from this port (default: no IMU)", **port),
        Param("speed", 5.0, f"target speed, km/h, at most {MAX_TEST_SPEED}", above=0.0, maximum=MAX_TEST_SPEED),
        Param("steer", 0.3, "wire steer of the steering phases, normalised", above=0.0, maximum=1.0),
        Param("accel_time", 4.0, "at most this long straight to reach the speed, s", above=0.0, maximum=20.0),
        Param("phase_time", 3.0, "duration of each steering phase, s", minimum=0.5, maximum=20.0),
        Param("settle_time", 1.0, "start of each steering phase not measured (steering response), s",
              minimum=0.0, maximum=10.0),
        Param("one_way", False, "only the positive steer phase (default: positive, then negative)"),
        Param("max_start_speed", 2.0, "refuse to start when the ego is faster, km/h", minimum=0.0, maximum=10.0),
        # 0: not given (2 x --speed); a value typed must be above 0
        Param("abort_speed", 0.0, "abort above this speed, km/h (default: 2 x --speed)",
              above=0.0, maximum=2 * MAX_TEST_SPEED),
        Param("status_timeout", 3.0, "refuse / abort when no status arrives for this long, s",
              above=0.0, maximum=60.0),
        # 0: not given (the planned time + 20 s)
        Param("max_run_time", 0.0, "abort when the drive takes longer (wall clock), s (default: the planned time "
              "+ 20 s, 30 s with the default times)", minimum=1.0, maximum=300.0),
        Param("yes", False, "do not ask for confirmation on the terminal"),
        Param("write", "", "write the measured version profile here (only when the measurement is conclusive)",
              metavar="FILE"),
        Param("gain", False, "two more steering phases at a second steer magnitude (twice --steer, or half of it "
              "above 0.5): shows whether the steering gain is linear"),
        Param("vehicle_profile", "morai_sedan", "vehicle profile whose max_steering_deg the measured full-scale "
              "angle is compared with, and whose wheelbase serves when the status has none (known: " + vehicles
              + ")", metavar="NAME|FILE"),
        Param("write_vehicle", "", "write the vehicle profile with the measured max_steering_deg here (only when "
              "measured)", metavar="FILE"),
    ]


def build_parser():
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Measure which way the simulator's wire steering signs point: drives the ego forward "
                    "at walking speed with a small steer for a few seconds, reads the heading (and the IMU "
                    "yaw rate), always ends with a stop command, and prints the bridge parameters. "
                    "Put the ego in a safe, open, flat place first. No ROS needed.",
        epilog="Exit status: 0 measured, 1 inconclusive (nothing written), 2 refused to start or usage/I/O "
               "error, 3 aborted during the run, 130 interrupted; the stop command is sent in every case. "
               "Guide: docs/check_signs.md.")
    add_options(p, options())
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
        sys.stderr.write(f"{PROG}: error: {e}\n")
        return EXIT_REFUSED
    try:
        vehicle = vehicle_profiles.load_profile(args.vehicle_profile, vehicle_dir())
    except vehicle_profiles.ProfileError as e:
        sys.stderr.write(f"{PROG}: error: --vehicle-profile: {e}\n")
        return EXIT_REFUSED
    for flag, name in (("--write", args.write), ("--write-vehicle", args.write_vehicle)):
        d = os.path.dirname(os.path.abspath(os.path.expanduser(name or ".")))
        if name and (not os.path.isdir(d) or not os.access(d, os.W_OK)):
            sys.stderr.write(f"{PROG}: error: {flag} {name}: directory {d} does not exist or is not writable\n")
            return EXIT_REFUSED
    if args.abort_speed and args.abort_speed <= args.speed:
        sys.stderr.write(f"{PROG}: error: --abort-speed {args.abort_speed:g} must be above --speed {args.speed:g}\n")
        return EXIT_REFUSED
    opts = Options(version=version, sim_ip=args.sim_ip, ctrl_port=args.ctrl_port, ctrl_bytes=args.ctrl_bytes,
                   listen_ip=args.listen_ip, status_port=args.status_port, imu_port=args.imu_port,
                   speed_kmh=args.speed, steer=args.steer, accel_time=args.accel_time, phase_time=args.phase_time,
                   settle_time=args.settle_time, reverse=not args.one_way, max_start_speed=args.max_start_speed,
                   abort_speed=args.abort_speed, status_timeout=args.status_timeout,
                   max_run_time=args.max_run_time or planned_time(args.accel_time, args.phase_time,
                                                                  not args.one_way, args.gain) + 20.0,
                   yes=args.yes, write=args.write, gain=args.gain, vehicle=vehicle,
                   write_vehicle=args.write_vehicle)
    previous = _terminate_as_interrupt()
    try:
        try:
            check = SignCheck(opts, out=stdout, confirm=_ask(stdin, stdout))
        except TransportError as e:
            sys.stderr.write(f"{PROG}: error: {e}\n")
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
