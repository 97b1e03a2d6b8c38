#!/usr/bin/python3
"""The simulator's side of the end-to-end benchmark: every sim -> user stream at one rate, or each at its own.

Usage: e2e_sender.py --ports '{"ego_status": 40001, ...}' --rate 120 --t0 WALL --seconds 22
           [--stream-rates '{"gps": 30, "imu": 50}']

Each stream runs on its own grid of period 1/rate (``--stream-rates`` gives some
streams another rate), the streams' phases spread evenly over their periods
(independent senders, as the simulator's are: stream i of n starts i/n of its
period late), from the wall-clock time ``t0`` for ``seconds``.  Packets that carry a time get the
sender's wall clock (time.time()) in their sec/nsec, written just before
sendto.  Only 127.0.0.1 is ever addressed.  Prints one JSON object: datagrams
sent per stream, send errors, and how late the sends were against the grid.
"""
import json
import socket
import time

import e2e_streams  # also puts src/ on sys.path
from morai_bridge.configuration.params import Param, parse_args


def rate_table(text):
    """--stream-rates: a JSON object of stream names and rates above 0."""
    table = json.loads(text)
    if not isinstance(table, dict):
        raise ValueError("expected a JSON object of stream name -> rate")
    unknown = sorted(set(table) - set(e2e_streams.NAMES))
    if unknown:
        raise ValueError("no stream %s (streams: %s)" % (", ".join(unknown), ", ".join(e2e_streams.NAMES)))
    if not all(isinstance(v, (int, float)) and v > 0 for v in table.values()):
        raise ValueError("every rate must be a number above 0")
    return {n: float(v) for n, v in table.items()}


def main():
    a = parse_args([
        Param("ports", None, "JSON: stream name -> UDP port on 127.0.0.1", required=True, metavar="PORTS"),
        Param("rate", None, "datagrams per second of each stream", kind=float, above=0.0, required=True),
        Param("t0", None, "wall-clock start time", kind=float, required=True),
        Param("seconds", None, "how long to send [s]", kind=float, above=0.0, required=True),
        Param("stream_rates", "{}", "JSON: stream name -> its own rate [Hz] (the others: --rate)", metavar="RATES",
              check=rate_table),
    ])
    ports = json.loads(a.ports)
    grams = e2e_streams.datagrams()
    names = [n for n in e2e_streams.NAMES if n in ports]
    rates = {n: a.stream_rates.get(n, a.rate) for n in names}
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    pack_into = e2e_streams.TIME.pack_into

    # every send of the run, in time order: (due after t0, stream index, name, buffer, time offset, address);
    # at one common rate this is tick by tick, the streams in their order within each tick
    plan = []
    for i, n in enumerate(names):
        data, off = grams[n]
        buf, addr, period = bytearray(data), ("127.0.0.1", int(ports[n])), 1.0 / rates[n]
        plan += [(k * period + period * i / len(names), i, n,
                  bytearray(e2e_streams.gps_datagram(k)) if n == "gps" else buf, off, addr)
                 for k in range(int(round(a.seconds * rates[n])))]
    plan.sort(key=lambda p: p[:2])
    sent = {n: 0 for n in names}
    errors = 0
    late = []
    now_wall, now_mono = time.time(), time.monotonic()
    t0 = now_mono + (a.t0 - now_wall)     # the grid runs on the monotonic clock
    sendto, wall, mono, sleep = sock.sendto, time.time, time.monotonic, time.sleep
    for offset, _, n, buf, off, addr in plan:
        due = t0 + offset
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
    print(json.dumps({"sent": sent, "errors": errors, "rate": a.rate, "rates": rates,
                      "late_ms": {"p50": q(0.5), "p99": q(0.99), "max": late[-1] * 1e3}}))


if __name__ == "__main__":
    main()
