#!/usr/bin/python3
"""Cost of building a header stamp (rospy.Time) per received datagram, and its share of a core.

    source <(bash tools/dev.sh env)
    flock /tmp/morai_heavy.lock /usr/bin/python3 bench/bench_stamps.py [--quick]

Until issue 42 ``ros/udp_bridge/sim_receive`` built its stamps with ``object.__new__(rospy.Time)`` and two
attribute stores (the packet's sec / nsec in ``SimReceiver._stamp``; the wall clock in
``receive_clock``'s ``wall_now``) beside the plain ``rospy.Time(sec, nsec)`` of
``ros/sensors/sensor_bridge.sim_stamp`` and ``rospy.Time.now``.  This times each form, hot (best of
batches) and cold (one call after a 32 MB copy that evicts the data caches, median of 400), and
prints what the shortcut saves at MORAI's real rates: the packet-stamped streams (ego status 50 Hz,
up to 120; Object Info 50; collision 40-55; IMU 50; docs/ros_api.md) about 250 datagrams/s, the
arrival-stamped ones (traffic lights and intersections 50 Hz each in the 2024 capture, GPS two
sentences per fix at up to 20 Hz, SimStatus) about 150/s; 1,000/s is an upper bound for both.
No master is needed (rospy's wall clock is marked initialised as ``init_node`` does).
"""

import os
import statistics
import sys
import time

import rospy
import rospy.rostime

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
from morai_bridge.configuration.params import Param, parse_args  # noqa: E402

RATES = {"packet stamps, 250/s": 250, "arrival stamps, 150/s": 150, "upper bound, 1000/s": 1000}


def shortcut_stamp(sec, nsec, _new=object.__new__, _Time=rospy.Time):
    """The pre-issue-42 SimReceiver._stamp body (checks, then object.__new__)."""
    if sec >= 0 and 0 <= nsec < 1000000000:
        t = _new(_Time)
        t.secs = sec
        t.nsecs = nsec
        return t
    return None


def plain_stamp(sec, nsec):
    """The same checks, then the plain constructor."""
    if sec >= 0 and 0 <= nsec < 1000000000:
        return rospy.Time(sec, nsec)
    return None


def wall_now(clock=time.time, new=object.__new__, Time=rospy.Time):
    """The pre-issue-42 receive_clock on the wall clock."""
    f = clock()
    secs = int(f)
    t = new(Time)
    t.secs = secs
    t.nsecs = int((f - secs) * 1000000000)
    return t


def hot_us(fn, args, reps, batch=20000):
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best / batch * 1e6


def cold_us(fn, args, calls):
    clock = time.perf_counter_ns
    junk = bytearray(32 * 1024 * 1024)
    timer, samples = [], []
    for _ in range(calls):
        bytes(junk)
        t0 = clock()
        t1 = clock()
        timer.append(t1 - t0)
    for _ in range(calls):
        bytes(junk)
        t0 = clock()
        fn(*args)
        t1 = clock()
        samples.append(t1 - t0)
    return (statistics.median(samples) - statistics.median(timer)) / 1000


def main(argv=None):
    args = parse_args([Param("quick", False, "fewer calls (a smoke test)", switch=True)],
                      argv, description=__doc__.split("\n")[0])
    reps, calls = (3, 40) if args.quick else (15, 400)
    rospy.rostime.set_rostime_initialized(True)     # wall clock, as init_node leaves it without /use_sim_time
    stamp = (1732300000, 123456789)
    assert shortcut_stamp(*stamp) == plain_stamp(*stamp) == rospy.Time(*stamp)
    pairs = (("packet stamp", shortcut_stamp, plain_stamp, stamp),
             ("wall clock stamp", wall_now, rospy.Time.now, ()))
    for name, shortcut, plain, a in pairs:
        figs = {}
        for kind, fn in (("object.__new__", shortcut), ("plain", plain)):
            figs[kind] = (hot_us(fn, a, reps), cold_us(fn, a, calls))
            print(f"{name:17s} {kind:15s} {figs[kind][0]:5.2f} us hot, {figs[kind][1]:5.2f} us cold")
        for col, label in ((0, "hot"), (1, "cold")):
            saved = figs["plain"][col] - figs["object.__new__"][col]
            shares = ", ".join(f"{r} {saved * n / 1e4:.4f} %" for r, n in RATES.items())
            print(f"  saved {label}: {saved:.2f} us per datagram; of one core: {shares}")


if __name__ == "__main__":
    main()
