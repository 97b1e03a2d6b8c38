#!/usr/bin/python3
"""CPU time of the bridge's receive path against the rospy floor's, in one process.

    source <(bash tools/dev.sh env)
    flock /tmp/morai_heavy.lock /usr/bin/python3 bench/path_cost.py [--rounds 1200] [--rate 120]
                                  [--profile bridge|floor] [--no-subscriber] [--set NAME=VALUE ...]
                                  [--stage recv|decode|convert|full] [--cached-decode STREAM,...]

A private master; the bridge's receive side (``SimReceiver`` with the udp_bridge node's
default parameters, stamp_source sim, ports picked free) and the floor
(``rospy_floor.Floor``) in this process, their receive loops not started: each round
sends every stream's datagram once to the bridge and once to the floor, one datagram
at a time, alternating which goes first, and calls each one's ``poll(0)`` right
after its send.  Rounds are paced at ``--rate``.  A child process subscribes to
every topic of both (so rospy serializes and its writer threads send, as in
bench_e2e.py).  The figure is the CPU time (``time.thread_time``) of this thread
inside the polls, per round: what the receiving thread of each node spends.  Not
counted: rospy's writer threads (the same for both).

``--profile bridge`` also runs cProfile over the bridge's polls and prints the top
functions (cumulative and own time); the cProfile overhead inflates that run's
figures, so it is reported apart.
"""
import cProfile
import io
import json
import os
import pstats
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from morai_bridge.configuration.params import Param, parse_args  # noqa: E402

import e2e_streams  # noqa: E402


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def subscriber(namespaces):
    """Child process: subscribe to every topic of every namespace, count, spin."""
    import rospy
    from sensor_msgs.msg import NavSatFix
    import roslib.message
    from morai_bridge.wire.udp import streams
    rospy.init_node("path_cost_sub", anonymous=True)
    types = {s.name: roslib.message.get_message_class(s.ros_type) for s in streams.FROM_SIM if s.topic}
    count = [0]

    def cb(_m):
        count[0] += 1
    for ns in namespaces:
        for name in e2e_streams.NAMES:
            for topic in e2e_streams.TOPICS[name]:
                cls = NavSatFix if topic == "gps/fix" else types[name]
                rospy.Subscriber(ns + topic, cls, cb, queue_size=None, tcp_nodelay=True)
    rospy.spin()


def make_bridge(ns, settings=()):
    from morai_bridge.nodes import udp_bridge
    from morai_bridge.ros.udp_bridge import sim_receive
    from morai_bridge.ros.params import load
    ports = {n: free_udp_port() for n in e2e_streams.NAMES}
    over = {f"{n}_port": p for n, p in ports.items()}
    over["stamp_source"] = "sim"
    for kv in settings:      # e.g. stamp_source=ros
        k, v = kv.split("=", 1)
        over[k] = {"true": True, "false": False}.get(v.lower(), v)
    for p in sim_receive.TOPIC_PARAMS:
        over[p.name] = ns + p.default
    cfg = load(udp_bridge.PARAMS, lambda name, default: over.get(name, default))
    for name in list(cfg):      # no command or sync side here
        if name.endswith("_port") and name not in over:
            cfg[name] = 0
    rx = sim_receive.SimReceiver(cfg, "127.0.0.1", "127.0.0.1", live=True)
    return rx, ports


def main():
    a = parse_args([
        Param("rounds", 1200, "rounds of every stream's datagram", minimum=1),
        Param("rate", 120.0, "rate the rounds stand for [Hz]", above=0.0),
        Param("profile", None, "also run cProfile over this side's polls and print the top functions", choices=("bridge", "floor")),
        Param("no_subscriber", False, "no child process subscribing to the topics", switch=True),
        Param("stage", "full", "how much of the bridge's path runs: the receive loop only (datagrams dropped), "
              "+ decode, + convert (not published), everything (default)", choices=("recv", "decode", "convert",
                                                                                   "full")),
        Param("cached_decode", "", "analysis: these streams decode each distinct datagram once and reuse the "
              "result (the rest of their path runs); the ratio's drop is what their decoding costs",
              metavar="STREAM[,STREAM]"),
        Param("set", [], "a bridge parameter (udp_bridge's), e.g. stamp_source=ros", repeat=True,
              metavar="NAME=VALUE"),
        Param("subscriber", None, "internal: run as the subscriber process", hidden=True),
    ], description=__doc__, raw_help=True)
    if a.subscriber is not None:
        subscriber(json.loads(a.subscriber))
        return
    import run
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    log_dir = out / ("logs-path-cost-" + time.strftime("%Y%m%d-%H%M%S"))
    log_dir.mkdir()
    os.environ["ROS_LOG_DIR"] = str(log_dir / "ros")
    master = run.Master(str(log_dir))
    sub = None
    try:
        import rospy
        rospy.init_node("path_cost", disable_signals=True)
        import rospy_floor
        rx, bports = make_bridge("/b/", a.set)
        fports = {n: free_udp_port() for n in e2e_streams.NAMES}
        floor = rospy_floor.Floor(fports, ns="/f/")
        if not a.no_subscriber:
            sub = subprocess.Popen([sys.executable, __file__, "--subscriber", json.dumps(["/b/", "/f/"])],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            pubs = list(rx.pubs.values()) + [rx.navsat_pub]
            end = time.monotonic() + 20
            while time.monotonic() < end and not all(p.get_num_connections() for p in pubs):
                time.sleep(0.05)
            time.sleep(1.0)
        grams = e2e_streams.datagrams()
        tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        tx.bind(("127.0.0.1", 0))
        plan = [(n, bytearray(grams[n][0]), grams[n][1], ("127.0.0.1", bports[n]), ("127.0.0.1", fports[n]))
                for n in e2e_streams.NAMES]
        per_stream = {n: [0.0, 0.0] for n in e2e_streams.NAMES}
        if a.stage == "recv":
            rx.receiver.handler = lambda name, data, addr, t: None
        elif a.stage == "decode":
            from morai_bridge.wire import udp
            rx.receiver.handler = lambda name, data, addr, t, decode=udp.decode: decode(data)
        elif a.stage == "convert":
            class NoPublish:
                def publish(self, m):
                    pass
            from morai_bridge.wire.udp import streams
            for name in rx.pubs:
                rx.pubs[name] = NoPublish()
            rx.navsat_pub = NoPublish()
            for name in rx.handlers:          # the handlers took the publishers' publish when made
                rx.handlers[name] = rx._handler(streams.BY_NAME[name])
        offsets = {n: off for n, _, off, _, _ in plan}
        for name in filter(None, a.cached_decode.split(",")):
            handler, off = rx.handlers[name], offsets[name]
            decoded = {}

            def cached(data, decode=handler[2], decoded=decoded, off=off, unpack=e2e_streams.TIME.unpack_from):
                """The datagram's message decoded once per content, its time (sec, nsec) put back in."""
                if off is None:
                    key = data
                else:
                    key = data[:off] + data[off + 8:]
                w = decoded.get(key)
                if w is None:
                    w = decoded[key] = decode(data)
                if off is not None:
                    sec, nsec = unpack(data, off)
                    w = w._replace(sec=sec, nsec=nsec)
                return w
            rx.handlers[name] = handler[:2] + (cached,) + handler[3:]
        if a.stage != "full":      # the floor receives and stamps, but does not publish either
            for key in list(floor.sel.get_map().values()):
                recv, off, header, _ = key.data
                floor.sel.modify(key.fileobj, key.events, (recv, off, header, []))
        bpoll, fpoll = rx.receiver.poll, floor.poll
        prof = cProfile.Profile() if a.profile else None
        tt, wall, pack_into = time.thread_time, time.time, e2e_streams.TIME.pack_into
        cost = {"bridge": [], "floor": []}
        period = 1.0 / a.rate
        t_next = time.monotonic()
        for k in range(a.rounds + 60):               # 60 warm-up rounds
            cb = cf = 0.0
            for name, buf, off, baddr, faddr in plan:
                if name == "gps":                    # a new fix time each round (a repeat is a copy)
                    buf = e2e_streams.gps_datagram(k)
                if off is not None:
                    t = wall()
                    sec = int(t)
                    pack_into(buf, off, sec, int((t - sec) * 1e9))
                order = ((baddr, bpoll, "b"), (faddr, fpoll, "f"))
                for addr, poll, who in (order if k % 2 else order[::-1]):
                    tx.sendto(buf, addr)
                    time.sleep(0.00005)            # let the datagram arrive
                    on = prof is not None and who == a.profile[0]
                    if on:
                        prof.enable()
                    t0 = tt()
                    poll(0.0)
                    d = tt() - t0
                    if on:
                        prof.disable()
                    if who == "b":
                        cb += d
                    else:
                        cf += d
                    if k >= 60:
                        per_stream[name][who == "b"] += d
            if k >= 60:
                cost["bridge"].append(cb)
                cost["floor"].append(cf)
            t_next += period
            delay = t_next - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                t_next = time.monotonic()
        published = sum(st.published for st in rx.stats.values())
        b, f = sum(cost["bridge"]), sum(cost["floor"])
        n = len(cost["bridge"])
        print("rounds %d (9 datagrams each; %d published by the bridge), bridge stage %s, subscriber: %s%s%s" % (
            n, published, a.stage, "no" if a.no_subscriber else "yes", ", cProfile on the " + a.profile if prof else "",
            "; set: " + " ".join(a.set) if a.set else "") + ("; decode cached: " + a.cached_decode if a.cached_decode else ""))
        print("receiving thread CPU per round [us]: floor %.1f (median %.1f), bridge %.1f (median %.1f); "
              "bridge own %.1f us/round; ratio %.3f" % (
                  1e6 * f / n, 1e6 * statistics.median(cost["floor"]), 1e6 * b / n,
                  1e6 * statistics.median(cost["bridge"]), 1e6 * (b - f) / n, b / f))
        print("at 120 Hz that is: floor %.2f %%, bridge %.2f %% of one core (receiving thread only)" % (
            100 * 120 * f / n, 100 * 120 * b / n))
        print("per stream [us per datagram]: %s" % ", ".join(
            "%s %.1f/%.1f" % (name, 1e6 * v[0] / n, 1e6 * v[1] / n) for name, v in per_stream.items()))
        print("(floor/bridge)")
        if prof is not None:
            s = io.StringIO()
            st = pstats.Stats(prof, stream=s)
            st.sort_stats("tottime").print_stats(30)
            st.sort_stats("cumulative").print_stats(30)
            print(s.getvalue())
    finally:
        if sub is not None:
            sub.terminate()
            sub.wait()
        import rospy
        rospy.signal_shutdown("done")
        master.stop()


if __name__ == "__main__":
    main()
