"""Command line of morai_udp_dump: arguments, checks, and main().

``main(argv=None) -> int`` parses the arguments, runs one source
(:mod:`.sources`) into a :class:`~.dumper.Dumper` and prints the summary.
Exit status: 0 = no decode errors, 1 = at least one decode error, 2 = usage or
I/O error (unreadable file, port in use).  Reference: docs/udp_dump.md.
"""

import os
import socket
import sys

from morai_bridge.configuration import sim_versions
from morai_bridge.configuration.params import Param, command_line
from morai_bridge.wire.udp import streams
from morai_bridge.wire.capture import CaptureError

from .dumper import EXIT_DECODE_ERRORS, EXIT_OK, EXIT_USAGE, PROG, Dumper
from .sources import run_capture, run_listen

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_DECODE_ERRORS", "EXIT_USAGE"]

#: --listen/--port names: every stream's name -> its default port (wire.streams), and
#: 'sim' -> the default ports of every stream the simulator sends to (not our extension).
#: A stream whose port differs between simulator versions (configuration.sim_versions) has every such port.
PORT_GROUPS = {s.name: tuple(sorted(set([s.port] + [p for _, p in sim_versions.port_table().get(s.name, ())]) - {0}))
               for s in streams.STREAMS}
PORT_GROUPS["sim"] = tuple(sorted({p for s in streams.FROM_SIM if not s.extension for p in PORT_GROUPS[s.name]}))

# ----------------------------------------------------------------------------- arguments

class _UsageError(Exception):
    pass


def _ports(text):
    """``--listen`` / ``--port``: port numbers and stream names, comma separated, as a list of ports."""
    ports = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if part in PORT_GROUPS:
            ports.extend(p for p in PORT_GROUPS[part] if p not in ports)
            continue
        try:
            port = int(part)
        except ValueError:
            raise ValueError(f"not a port number or stream name: {part!r} (names: see --help)") from None
        if not 1 <= port <= 65535:
            raise ValueError(f"port out of range 1..65535: {port}")
        if port not in ports:
            ports.append(port)
    if not ports:
        raise ValueError("no port given")
    return ports


def _ipv4(text):
    """``--bind-ip``: a dotted IPv4 address."""
    try:
        socket.inet_aton(text)
    except OSError:
        raise ValueError("not an IPv4 address") from None
    if text.count(".") != 3:
        raise ValueError("not a dotted IPv4 address")
    return text


#: the command line (configuration.params); None: not given
PARAMS = [
    Param("file", None, "pcap or pcapng capture to read (instead of --listen)", positional=True, nargs="?",
          metavar="FILE"),
    Param("listen", None, "bind these UDP ports (numbers or stream names, e.g. ego_status or sim) and print "
          "what arrives", metavar="PORT[,PORT...]", check=_ports),
    Param("bind_ip", None, "address the --listen sockets bind (default 127.0.0.1; 0.0.0.0 for a simulator on "
          "another PC)", metavar="IP", check=_ipv4),
    Param("port", None, "FILE only: keep datagrams sent to these destination ports (what --listen on them "
          "would receive)", metavar="PORT[,PORT...]", check=_ports),
    Param("all_udp", False, "also print datagrams that are not MORAI (otherwise only counted)", switch=True),
    Param("count", None, "stop after N datagrams (after --port filtering)", kind=int, minimum=1, metavar="N"),
    Param("duration", None, "stop after S seconds (FILE: the first S seconds of capture time)", kind=float,
          above=0.0, metavar="S"),
    Param("verbose", False, "print every field, records one per line", flags=("-v", "--verbose")),
    Param("quiet", False, "print only the summary", flags=("-q", "--quiet")),
    Param("json", False, "one JSON object per line; the summary is a last line with kind 'summary'",
          switch=True),
    Param("hex", False, "hex dump of datagrams that fail to decode (of every datagram with -v)", switch=True),
    Param("utc", False, "print times in UTC (default: local time)", switch=True),
]


def build_parser():
    return command_line(
        PARAMS, prog=PROG, exclusive=[("verbose", "quiet")],
        description="Print MORAI SIM UDP datagrams decoded, from live UDP ports or from a "
                    "pcap/pcapng capture. No ROS needed.",
        epilog="PORT may also be a stream name (its default port): "
               + ", ".join(f"{s.name} {s.port}" for s in streams.STREAMS)
               + "; 'sim' = every port the simulator sends to ("
               + ",".join(map(str, PORT_GROUPS["sim"])) + "). "
               "Exit status: 0 no decode errors, 1 decode errors seen, 2 usage or I/O error. "
               "Details and examples: docs/udp_dump.md.")


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
                    all_udp=args.all_udp, utc=args.utc, quiet=args.quiet, note=stderr.write)
    reader_counts, filtered, interrupted = None, 0, False
    try:
        if args.file is not None:
            source = args.file
            try:
                reader_counts, filtered, interrupted = run_capture(
                    args.file, dumper, ports=args.port, count=args.count,
                    duration=args.duration)
            except BrokenPipeError:
                raise
            except (CaptureError, OSError) as exc:
                stdout.flush()
                stderr.write(f"{PROG}: cannot read {args.file}: {exc}\n")
                return EXIT_USAGE
        else:
            source = "listen " + ",".join(map(str, args.listen)) + f" on {args.bind_ip}"
            try:
                interrupted = run_listen(args.bind_ip, args.listen, dumper,
                                         write_err=stderr.write, flush=stdout.flush,
                                         count=args.count, duration=args.duration)
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
