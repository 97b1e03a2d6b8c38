#!/usr/bin/python3
"""Relay UDP datagrams and impair them as a busy link would (loss, loss bursts, reordering, duplication,
delay, jitter), seeded, in user space: no root, no netem.  Put it between the simulator (or the emulator)
and the bridge to see what the bridge makes of a bad link, or between two PCs to imitate one.

    tools/udp_relay.py --route ego_status=9909:127.0.0.1:909 --route gps=10091:127.0.0.1:9091 \\
        --loss 0.05 --reorder 0.05 --reorder-ms 20:40 --duplicate 0.02 --jitter-ms 10 --seed 1

Each --route NAME=LISTEN_PORT:DEST_HOST:DEST_PORT listens on LISTEN_PORT (the sender sends there) and
forwards to DEST_HOST:DEST_PORT; the impairment options apply to every route, --set NAME.KEY=VALUE
overrides one (KEY: loss, burst_loss, burst_len, reorder, duplicate, delay_ms, jitter_ms).  Every
--report-period seconds, and at the end, one line per route: received, dropped, reordered (sent after
a datagram that came in later), duplicated, sent.  Runs until Ctrl-C or --duration.
"""
import os
import signal
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'src'))

from morai_bridge.configuration.params import Param, command_line  # noqa: E402
from morai_bridge.link.relay import Impairment, Relay, Route  # noqa: E402

_PROBABILITY = dict(minimum=0.0, maximum=1.0)
PARAMS = [
    Param('route', [], 'NAME=LISTEN_PORT:DEST_HOST:DEST_PORT (repeat for each stream)', repeat=True,
          metavar='ROUTE'),
    Param('loss', 0.0, 'probability a datagram is dropped', **_PROBABILITY),
    Param('burst_loss', 0.0, 'probability a loss starts a burst of --burst-len more on average', **_PROBABILITY),
    Param('burst_len', 0.0, 'mean number of datagrams a loss burst takes after the first', minimum=0.0),
    Param('reorder', 0.0, 'probability a datagram is held back by --reorder-ms (later ones overtake it)',
          **_PROBABILITY),
    Param('reorder_ms', '20:40', 'LO:HI, how long a reordered datagram is held back [ms]'),
    Param('duplicate', 0.0, 'probability a datagram is sent twice', **_PROBABILITY),
    Param('delay_ms', 0.0, 'base delay of every datagram [ms]', minimum=0.0),
    Param('jitter_ms', 0.0, 'plus uniformly 0..this [ms], keeping each route\'s order (only --reorder overtakes)',
          minimum=0.0),
    Param('set', [], 'NAME.KEY=VALUE: one route\'s own value of an impairment option', repeat=True,
          metavar='NAME.KEY=VALUE'),
    Param('seed', 0, 'random seed: the same seed and arrival order make the same decisions'),
    Param('bind_ip', '127.0.0.1', 'address the routes listen on (0.0.0.0: every interface, for two PCs)'),
    Param('report_period', 5.0, 'seconds between report lines (0: only at the end)', minimum=0.0),
    Param('duration', 0.0, 'stop after this many seconds (0: at Ctrl-C)', minimum=0.0),
]
_KEYS = ('loss', 'burst_loss', 'burst_len', 'reorder', 'duplicate', 'delay_ms', 'jitter_ms')


def parse_routes(args, parser):
    lo_hi = args.reorder_ms.split(':')
    try:
        reorder_ms = (float(lo_hi[0]), float(lo_hi[-1]))
    except ValueError:
        parser.error(f'--reorder-ms {args.reorder_ms!r}: LO:HI in milliseconds')
    base = Impairment(args.loss, args.burst_loss, args.burst_len, args.reorder, reorder_ms, args.duplicate,
                      args.delay_ms, args.jitter_ms)
    own = {}
    for text in args.set:
        try:
            target, value = text.split('=', 1)
            name, key = target.split('.', 1)
            if key not in _KEYS:
                raise ValueError
            own.setdefault(name, {})[key] = float(value)
        except ValueError:
            parser.error(f'--set {text!r}: NAME.KEY=VALUE with KEY one of {", ".join(_KEYS)}')
    routes = []
    for text in args.route:
        try:
            name, rest = text.split('=', 1)
            listen, host, port = rest.split(':')
            routes.append(Route(name, int(listen), (host, int(port)), base._replace(**own.get(name, {}))))
        except ValueError:
            parser.error(f'--route {text!r}: NAME=LISTEN_PORT:DEST_HOST:DEST_PORT')
    unknown = set(own) - {r.name for r in routes}
    if unknown:
        parser.error(f'--set names no route: {", ".join(sorted(unknown))}')
    if not routes:
        parser.error('give at least one --route')
    return routes


def report_lines(report):
    return ['%-20s port %5d: received %d, dropped %d, reordered %d, duplicated %d, sent %d' % (
        name, c['port'], c['received'], c['dropped'], c['reordered'], c['duplicated'], c['sent'])
        for name, c in report.items()]


def main(argv=None):
    parser = command_line(PARAMS, description=__doc__, raw_help=True)
    args = parser.parse_args(argv)
    routes = parse_routes(args, parser)
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        relay = Relay(routes, args.bind_ip, args.seed).start()
    except OSError as e:
        print(f'udp_relay: {e}', file=sys.stderr)
        return 1
    for r in routes:
        print(f'udp_relay: {r.name}: {args.bind_ip}:{relay.ports[r.name]} -> {r.dest[0]}:{r.dest[1]} {r.impairment}',
              flush=True)
    end = time.monotonic() + args.duration if args.duration else None
    next_report = time.monotonic() + args.report_period if args.report_period else None
    while not stop.is_set():
        now = time.monotonic()
        if end is not None and now >= end:
            break
        if next_report is not None and now >= next_report:
            print('\n'.join(report_lines(relay.report())), flush=True)
            next_report += args.report_period
        if not relay.worker.is_alive():
            print('udp_relay: the relay thread stopped', file=sys.stderr)
            break
        stop.wait(0.2)
    relay.close()
    print('\n'.join(['udp_relay: at the end'] + report_lines(relay.report())), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
