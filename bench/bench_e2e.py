#!/usr/bin/python3
"""End-to-end benchmark: every sim -> user stream through the running udp_bridge node,
next to the same traffic through the "rospy floor" (bench/rospy_floor.py).

Called by bench/run.py (which starts a private ROS master); on its own:
    ROS_MASTER_URI=http://127.0.0.1:PORT /usr/bin/python3 bench/bench_e2e.py [--rates 30,60,120] [--seconds 20]

Per rate and per system under test (SUT: "floor" or "bridge"):

* the SUT is started as a real node: the bridge with ``roslaunch morai_msgs
  udp_bridge.launch`` (its parameters as launch args, ~stamp_source sim, every
  port picked free on 127.0.0.1), the floor as a rospy node process;
* bench/e2e_sender.py sends all nine sim -> user streams at the rate for
  warm-up + measured seconds, the sender's wall clock in every sec/nsec;
* this process subscribes to every topic (tcp_nodelay, unbounded queue) and
  counts messages; for the stamped topics it takes latency = wall clock in the
  callback - header.stamp (= send time) over the measured window;
* psutil reads the SUT's CPU time over the measured window and its RSS every
  0.5 s; the peak RSS is the kernel's high-water mark (VmHWM).
"""
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import xmlrpc.client
from pathlib import Path

import psutil

import e2e_streams

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = "/usr/bin/python3"
TX = ["ctrl_cmd", "set_traffic_light", "set_intersection", "lamps", "scenario_load", "save_sensor_data",
      "sensor_control", "npc_ghost", "multi_ego", "ego_ghost", "gv_direct", "gv_state", "sim_control",
      "sync"]


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1, int(p * len(sorted_values)))]


def node_pid(name, timeout=20.0):
    """pid of a registered node, through the master and the node's own XML-RPC API."""
    import rosgraph
    master = rosgraph.Master("/bench_e2e")
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            uri = master.lookupNode(name)
            code, _, pid = xmlrpc.client.ServerProxy(uri).getPid("/bench_e2e")
            if code == 1:
                return int(pid)
        except Exception:  # not registered yet
            pass
        time.sleep(0.1)
    raise RuntimeError(f"node {name} did not come up within {timeout:.0f} s")


class Sut:
    """A system under test: its process, the pid of the node doing the work, its namespace."""

    def __init__(self, kind, rate, ports, sink_port, log_dir, extra=(), src=None):
        """kind "floor" or "bridge"; ``src``: run the bridge from this copy of src/ (an older revision)."""
        self.kind = kind
        self.ns = "/bench_%s_%d" % (kind + ("_base" if src else ""), rate)
        self.log = open(os.path.join(log_dir, "%s%s_%d.log" % (kind, "_base" if src else "", rate)), "w")
        env = None
        if src:
            env = dict(os.environ, PYTHONPATH=str(src) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        if kind == "bridge":
            args = ["%s_port:=%d" % (n, p) for n, p in ports.items()]
            args += ["sync_state_port:=%d" % free_udp_port()]
            args += ["%s_port:=%d" % (n, sink_port) for n in TX]
            # a base revision runs with its own launch file: its parameters may differ from today's
            # (full paths: a base revision's launch/ extracted under bench/out/ is inside the package too)
            launch = [str(Path(src).parent / "launch" / "udp_bridge.launch")] if src else \
                [str(HERE.parent / "launch" / "udp_bridge.launch")]
            if src:
                # and its own profiles: today's config/ may have keys that revision does not know
                args += base_profiles(Path(src).parent)
            cmd = ["roslaunch"] + launch + [f"ns:={self.ns}", "output:=log",
                   "stamp_source:=sim", "sim_ip:=127.0.0.1", "bind_ip:=127.0.0.1"] + args + list(extra)
            node = self.ns + "/udp_bridge"
        else:
            cmd = [PY, str(HERE / "rospy_floor.py"), "--ports", json.dumps(ports), f"__ns:={self.ns}",
                   "__name:=rospy_floor"] + list(extra)
            node = self.ns + "/rospy_floor"
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, cwd=str(HERE),
                                     start_new_session=True, env=env)
        self.pid = node_pid(node)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(15.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def vm_hwm_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


class Collector:
    """Subscribes to every topic of one SUT; counts and latencies per topic."""

    def __init__(self, ns):
        import rospy
        import roslib.message
        from morai_bridge.wire.udp import streams
        from sensor_msgs.msg import NavSatFix
        types = {s.name: roslib.message.get_message_class(s.ros_type) for s in streams.FROM_SIM if s.topic}
        self.count = {}
        self.lat = {}
        self.window = (float("inf"), float("inf"))
        self.subs = []
        for name in e2e_streams.NAMES:
            for topic in e2e_streams.TOPICS[name]:
                cls = NavSatFix if topic == "gps/fix" else types[name]
                full = ns + "/" + topic
                self.count[topic] = 0
                self.lat[topic] = []
                self.subs.append(rospy.Subscriber(full, cls, self._cb, callback_args=(topic,
                                                  e2e_streams.STAMPED[name]),
                                                  queue_size=None, tcp_nodelay=True))

    def _cb(self, m, args):
        now = time.time()
        topic, stamped = args
        self.count[topic] += 1
        if stamped:
            st = m.header.stamp
            sent = st.secs + st.nsecs * 1e-9
            if self.window[0] <= sent < self.window[1]:
                self.lat[topic].append(now - sent)

    def wait_connected(self, timeout=20.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if all(s.get_num_connections() >= 1 for s in self.subs):
                return
            time.sleep(0.05)
        missing = [s.name for s in self.subs if s.get_num_connections() < 1]
        raise RuntimeError(f"no publisher connected for {missing}")

    def close(self):
        for s in self.subs:
            s.unregister()


class DiagWatch:
    """The bridge's own counters (received / published per stream) from /diagnostics."""

    def __init__(self):
        import rospy
        from diagnostic_msgs.msg import DiagnosticArray
        self.last = {}
        self.sub = rospy.Subscriber("/diagnostics", DiagnosticArray, self._cb, queue_size=50)

    def _cb(self, arr):
        for st in arr.status:
            self.last[st.name] = {kv.key: kv.value for kv in st.values}

    def streams(self, ns):
        out = {}
        for name, values in self.last.items():
            if ns.strip("/") in name and "UDP " in name and "received" in values:
                stream = name.split("UDP ", 1)[1].split(" (", 1)[0]
                out[stream] = {"received": int(values["received"]), "published": int(values["published"]),
                               "decode_errors": int(values["decode errors"])}
        return out

    def close(self):
        self.sub.unregister()


def one_run(kind, rate, seconds, warmup, log_dir, sink_port, diag=None, extra=(), src=None, on_window=None):
    """One SUT at one rate; ``extra``: more command-line arguments of the SUT (experiments);
    ``src``: the bridge's sources from another revision (see run()); ``on_window(pid, seconds)``
    is called when the measured window starts (bench/profile_e2e.py attaches a profiler)."""
    ports = {n: free_udp_port() for n in e2e_streams.NAMES}
    sut = Sut(kind, rate, ports, sink_port, log_dir, extra, src)
    col = None
    try:
        col = Collector(sut.ns)
        col.wait_connected()
        proc = psutil.Process(sut.pid)
        time.sleep(0.5)                       # let the node settle after start-up
        t0 = time.time() + 0.5
        w_start, w_end = t0 + warmup, t0 + warmup + seconds
        col.window = (w_start, w_end)
        sender = subprocess.Popen([PY, str(HERE / "e2e_sender.py"), "--ports", json.dumps(ports),
                                   "--rate", str(rate), "--t0", repr(t0), "--seconds", str(warmup + seconds)],
                                  stdout=subprocess.PIPE, cwd=str(HERE))
        rss_peak_sampled = 0
        time.sleep(max(0.0, w_start - time.time()))
        c0, m0 = proc.cpu_times(), time.monotonic()
        th0 = {t.id: t.user_time + t.system_time for t in proc.threads()}
        psutil.cpu_percent(None)
        load0 = os.getloadavg()
        if on_window is not None:
            on_window(sut.pid, seconds)
        while time.time() < w_end:
            rss_peak_sampled = max(rss_peak_sampled, proc.memory_info().rss)
            time.sleep(min(0.5, max(0.0, w_end - time.time())))
        c1, m1 = proc.cpu_times(), time.monotonic()
        th1 = {t.id: t.user_time + t.system_time for t in proc.threads()}
        machine_busy = psutil.cpu_percent(None)
        out, _ = sender.communicate(timeout=60)
        sent = json.loads(out)
        time.sleep(1.0)                       # messages in flight
        if diag is not None and kind == "bridge":  # the bridge's counters come once a second
            end = time.monotonic() + 3.0
            while time.monotonic() < end and diag.streams(sut.ns).get("ego_status", {}).get(
                    "received", -1) < sent["sent"]["ego_status"]:
                time.sleep(0.1)
        cpu = (c1.user + c1.system - c0.user - c0.system) / (m1 - m0)
        # per thread: the busiest one receives, decodes, converts and serializes (rospy serializes in
        # publish()); rospy's writer threads (one per connection) send to the subscriber
        per_thread = sorted(((th1[i] - th0.get(i, 0.0)) / (m1 - m0) for i in th1), reverse=True)
        res = {
            "kind": kind + ("_base" if src else ""), "rate": rate, "seconds": seconds, "warmup": warmup, "pid": sut.pid,
            "cpu_percent_one_core": 100.0 * cpu,
            "cpu_user_s": c1.user - c0.user, "cpu_system_s": c1.system - c0.system,
            "cpu_percent_busiest_thread": 100.0 * per_thread[0],
            "cpu_percent_other_threads": 100.0 * sum(per_thread[1:]), "threads": len(per_thread),
            "cpu_percent_per_thread": [round(100.0 * v, 3) for v in per_thread],
            "rss_peak_sampled_mb": rss_peak_sampled / 1e6,
            "vm_hwm_mb": (vm_hwm_kb(sut.pid) or 0) * 1024 / 1e6,
            "machine_busy_percent_all_cores": machine_busy, "loadavg_before": load0[0],
            "sender": sent, "topics": {},
        }
        for name in e2e_streams.NAMES:
            for topic in e2e_streams.TOPICS[name]:
                lat = sorted(col.lat[topic])
                res["topics"][topic] = {
                    "stream": name, "sent": sent["sent"][name], "received": col.count[topic],
                    "lost": sent["sent"][name] - col.count[topic],
                    "latency_ms": None if not e2e_streams.STAMPED[name] or not lat else {
                        "n": len(lat), "p50": 1e3 * percentile(lat, 0.50), "p99": 1e3 * percentile(lat, 0.99),
                        "max": 1e3 * lat[-1], "mean": 1e3 * sum(lat) / len(lat)},
                }
        if diag is not None and kind == "bridge":
            res["bridge_counters"] = diag.streams(sut.ns)
        return res
    finally:
        if col is not None:
            col.close()
        sut.stop()


def base_profiles(root):
    """The arguments that make a base revision's bridge read the simulator-version and vehicle profiles
    of its own tree (``root``: the extracted revision): the launch file's defaults, as paths."""
    import xml.etree.ElementTree as ET
    launch = ET.parse(str(root / "launch" / "udp_bridge.launch"))
    defaults = {a.get("name"): a.get("default") for a in launch.iter("arg")}
    out = []
    for arg, folder in (("sim_version", "sim_versions"), ("vehicle_profile", "vehicles")):
        path = root / "config" / folder / (defaults.get(arg, "") + ".yaml")
        if defaults.get(arg) and path.exists():
            out.append(f"{arg}:={path}")
    return out


def run(rates=(30, 60, 120), seconds=20.0, warmup=2.0, log_dir=None, progress=print, base_src=None, reps=1):
    """Floor and bridge at each rate, alternating, in this process (rospy.init_node done by the caller).

    ``reps``: repetitions per rate, interleaved (floor, bridge, floor, bridge, ...), each result
    carrying its ``rep``, so that a slow moment of the shared machine hits both alike and the
    ratio bridge/floor can be taken per pair.
    ``base_src``: a src/ directory of another revision (bench/run.py --base REV extracts one); its
    bridge runs too, between the floor and the current bridge, as kind "bridge_base"."""
    log_dir = log_dir or str(HERE / "out" / "logs")
    os.makedirs(log_dir, exist_ok=True)
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)   # where the bridge's commands would go
    sink.bind(("127.0.0.1", 0))
    sink_port = sink.getsockname()[1]
    stop = threading.Event()

    def drain():
        sink.settimeout(0.2)
        while not stop.is_set():
            try:
                sink.recv(65535)
            except OSError:
                pass
    threading.Thread(target=drain, daemon=True).start()
    diag = DiagWatch()
    results = []
    try:
        for rate in rates:
            for rep in range(reps):
                for kind, src in [("floor", None)] + ([("bridge", base_src)] if base_src else []) + [("bridge", None)]:
                    progress("e2e: %s%s at %d Hz, repetition %d/%d, %.0f s + %.0f s warm-up ..." % (
                        kind, " (base revision)" if src else "", rate, rep + 1, reps, seconds, warmup))
                    r = one_run(kind, rate, seconds, warmup, log_dir, sink_port, diag, (), src)
                    r["rep"] = rep
                    progress("e2e: %s at %d Hz: CPU %.1f %% of one core, %d lost" % (
                        kind, rate, r["cpu_percent_one_core"], sum(t["lost"] for t in r["topics"].values())))
                    results.append(r)
    finally:
        stop.set()
        diag.close()
        sink.close()
    return results


def main():
    import rospy
    sys.path.insert(0, str(HERE.parent / "src"))
    from morai_bridge.configuration.params import Param, parse_args
    a = parse_args([
        Param("rates", "30,60,120", "stream rates to measure [Hz], comma separated"),
        Param("seconds", 20.0, "measured time per rate [s]", above=0.0),
        Param("warmup", 2.0, "warm-up before measuring [s]", minimum=0.0),
        Param("reps", 3, "repetitions per rate", minimum=1),
    ])
    rospy.init_node("bench_e2e", anonymous=True, disable_signals=True)
    res = run([int(r) for r in a.rates.split(",")], a.seconds, a.warmup,
              progress=lambda s: print(s, file=sys.stderr), reps=a.reps)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
