#!/usr/bin/python3
"""Cost of one GPS NMEA sentence through the bridge's parse path, and its share of a core.

Usage:  flock /tmp/morai_heavy.lock /usr/bin/python3 bench/bench_nmea.py [--quick] [--reps N]

The datagrams are the captured MORAI GGA and RMC (test/unit/wire/udp/test_nmea.py), parsed the
way the bridge does it: ``udp.decode(datagram)`` (``ros/udp_bridge/sim_receive`` decodes every datagram
so; NMEA text goes to ``wire/udp/nmea.parse``).  Two figures per sentence type:

  hot   a tight loop (best of ``--reps`` batches of 2,000 calls): everything in the caches;
  cold  one call at a time, each after a 32 MB copy that evicts the data caches, timed
        alone with ``time.perf_counter_ns`` (median of 400 calls, the timer's own cost
        subtracted): closer to the bridge, where a GPS datagram comes every few
        milliseconds between other streams' work.

A fix is two sentences (GGA + RMC); the share of one core at 10, 50 and 100 Hz fixes is
(GGA + RMC cost) x rate.  MORAI's GPS sensor sends 5 or 20 Hz in the public saved settings
(docs/ros_api.md), the emulator 10 Hz.  No ROS imports.
"""

import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

import pynmea2  # noqa: E402

from morai_bridge.configuration.params import Param, parse_args  # noqa: E402
from morai_bridge.wire import udp  # noqa: E402

# Verbatim from the captured MORAI traffic (9090 -> 9091), as in test/unit/wire/udp/test_nmea.py.
SENTENCES = {
    "GGA": b"$GPGGA,223047.5,3714.4040,N,12646.4377,E,1,09,1.0,29.1,M,0.0,M,,*5A\r\n",
    "RMC": b"$GPRMC,223047.5,A,3714.4040,N,12646.4377,E,000.0,116.5,120924,000.0,E,A,*22\r\n",
}
FIX_RATES_HZ = (10, 50, 100)


def hot_us(datagram: bytes, reps: int, batch: int = 2000) -> float:
    """µs per call, best of ``reps`` batches."""
    decode = udp.decode
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(batch):
            decode(datagram)
        best = min(best, time.perf_counter() - t0)
    return best / batch * 1e6


def cold_us(datagram: bytes, calls: int) -> float:
    """µs per call, median of ``calls`` single calls, each after evicting the data caches."""
    decode = udp.decode
    clock = time.perf_counter_ns
    junk = bytearray(32 * 1024 * 1024)
    timer = []
    for _ in range(calls):              # the timer alone, same pattern
        bytes(junk)
        t0 = clock()
        t1 = clock()
        timer.append(t1 - t0)
    samples = []
    for _ in range(calls):
        bytes(junk)
        t0 = clock()
        decode(datagram)
        t1 = clock()
        samples.append(t1 - t0)
    return (statistics.median(samples) - statistics.median(timer)) / 1000


def main(argv=None):
    args = parse_args([Param("quick", False, "fewer calls (a smoke test)", switch=True),
                       Param("reps", 15, "hot batches per sentence (best taken)", minimum=1)],
                      argv, description=__doc__.split("\n")[0])
    reps, calls = (3, 40) if args.quick else (max(3, args.reps), 400)
    for d in SENTENCES.values():        # the path works and imports are done before timing
        udp.decode(d)
    print(f"python {platform.python_version()}, pynmea2 {pynmea2.__version__}, {platform.machine()}")
    print("path: udp.decode(datagram) -> wire/udp/nmea.parse")
    figures = {}
    for kind, datagram in SENTENCES.items():
        figures[kind] = (hot_us(datagram, reps), cold_us(datagram, calls))
        print(f"  {kind}: {figures[kind][0]:6.1f} us hot, {figures[kind][1]:6.1f} us cold per sentence")
    for col, name in ((0, "hot"), (1, "cold")):
        per_fix = sum(f[col] for f in figures.values())
        shares = ", ".join(f"{hz} Hz {per_fix * hz / 1e4:.3f} %" for hz in FIX_RATES_HZ)
        print(f"  {name}: {per_fix:.1f} us per fix (GGA + RMC); share of one core: {shares}")
    return figures


if __name__ == "__main__":
    main()
