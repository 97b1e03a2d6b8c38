"""The command line of morai_check_signs: the options (:data:`.check_options.PARAMS` through
configuration.params.command_line, the known profiles in their help, :func:`options`), the profiles they
name loaded, the confirmation, main() and its exit status (the run itself is :class:`.check_signs.SignCheck`;
docs/check_signs.md).  No ROS."""
import copy
import os
import signal
import sys

from morai_bridge.configuration import sim_versions, vehicle_profiles
from morai_bridge.configuration.params import command_line
from morai_bridge.link.transport import TransportError, resolve_host
from morai_bridge.wire import udp
from morai_bridge.wire.enums import Gear

from .check_link import STOP_REPEATS, command_length, stop_command
from .check_options import EXIT_REFUSED, PARAMS, PROG, Options
from .check_signs import SignCheck

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
    """The options (:data:`.check_options.PARAMS`) in the order --help lists them, the known version and
    vehicle profiles named in the help of --sim-version and --vehicle-profile (looked up now)."""
    known = {"sim_version": ", ".join(sim_versions.available(version_dir())) or "none found",
             "vehicle_profile": ", ".join(vehicle_profiles.available(vehicle_dir())) or "none found"}
    return [_with_doc(p, f"{p.doc} (known: {known[p.name]})") if p.name in known else p for p in PARAMS]


def _with_doc(param, doc):
    """A copy of ``param`` with another doc."""
    p = copy.copy(param)
    p.doc = doc
    return p


def build_parser():
    return command_line(
        options(), prog=PROG,
        description="Measure which way the simulator's wire steering signs point: drives the ego forward "
                    "at walking speed with a small steer for a few seconds, reads the heading (and the IMU "
                    "yaw rate), always ends with a stop command, and prints the bridge parameters. "
                    "Put the ego in a safe, open, flat place first. No ROS needed.",
        epilog="Exit status: 0 measured, 1 inconclusive (nothing written), 2 refused to start or usage/I/O "
               "error, 3 aborted during the run, 130 interrupted; the stop command is sent in every case. "
               "Guide: docs/check_signs.md.")


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
    opts = Options(**vars(args))
    previous = _terminate_as_interrupt()
    try:
        try:
            check = SignCheck(opts, version, vehicle, out=stdout, confirm=_ask(stdin, stdout))
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
    data_length = command_length(opts, version)[1]
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
