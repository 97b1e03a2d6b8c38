#!/usr/bin/python3
"""The simulator's side of the end-to-end benchmark: every sim -> user stream at one rate.

Usage: e2e_sender.py --ports '{"ego_status": 40001, ...}' --rate 120 --t0 WALL --seconds 22

Each stream runs on its own grid of period 1/rate, the streams' phases spread
evenly over the period (independent senders, as the simulator's are), from the
wall-clock time ``t0`` for ``seconds``.  Packets that carry a time get the
sender's wall clock (time.time()) in their sec/nsec, written just before
sendto.  Only 127.0.0.1 is ever addressed.  Prints one JSON object: datagrams
sent per stream, send errors, and how late the sends were against the grid.
"""
import json
import socket
import time

import e2e_streams  # also puts src/ on sys.path
from morai_bridge.configuration.params import Param, parse_args


def main():
    a = parse_args([
        Param("ports", None, "JSON: stream name -> UDP port on 127.0.0.1", required=True, metavar="PORTS"),
        Param("rate", None, "datagrams per second of each stream", kind=float, above=0.0, required=True),
        Param("t0", None, "wall-clock start time", kind=float, required=True),
        Param("seconds", None, "how long to send [s]", kind=float, above=0.0, required=True),
    ])
    ports = json.loads(a.ports)
    grams = e2e_streams.datagrams()
    names = [n for n in e2e_streams.NAMES if n in ports]
    period = 1.0 / a.rate
    n_ticks = int(round(a.seconds * a.rate))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    pack_into = e2e_streams.TIME.pack_into

    # (offset in the period, name, buffer, time offset, address)
    plan = []
    for i, n in enumerate(names):
        data, off = grams[n]
        plan.append((period * i / len(names), n, bytearray(data), off, ("127.0.0.1", int(ports[n]))))
    sent = {n: 0 for n in names}
    errors = 0
    late = []
    now_wall, now_mono = time.time(), time.monotonic()
    t0 = now_mono + (a.t0 - now_wall)     # the grid runs on the monotonic clock
    sendto, wall, mono, sleep = sock.sendto, time.time, time.monotonic, time.sleep
    for k in range(n_ticks):
        base = t0 + k * period
        for phase, n, buf, off, addr in plan:
            due = base + phase
            d = due - mono()
            if d > 0:
                sleep(d)
            if off is not None:
                t = wall()
                sec = int(t)
                pack_into(buf, off, sec, int((t - sec) * 1e9))
            try:
                sendto(buf, addr)
                sent[n] += 1
            except OSError:
                errors += 1
            late.append(mono() - due)
    late.sort()
    q = lambda p: late[min(len(late) - 1, int(p * len(late)))] * 1e3  # noqa: E731
    print(json.dumps({"sent": sent, "errors": errors, "rate": a.rate, "ticks": n_ticks,
                      "late_ms": {"p50": q(0.5), "p99": q(0.99), "max": late[-1] * 1e3}}))


if __name__ == "__main__":
    main()
