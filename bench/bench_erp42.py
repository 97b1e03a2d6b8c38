#!/usr/bin/python3
"""ERP-42 benchmark: command frame cadence of the erp42_serial node against the PCU emulator.

Called by bench/run.py; on its own (a ROS master must be running):
    ROS_MASTER_URI=http://127.0.0.1:PORT /usr/bin/python3 bench/bench_erp42.py [--seconds 20]

The PCU emulator (morai_bridge.emu.pcu.PcuEmulator, free-running feedback at
50 Hz, encoder on) runs in a process of its own (bench/pcu_timed.py) on a
fresh pty, reached through a symlink under bench/out/.  The node is started as
users start it, ``roslaunch morai_msgs erp42_serial.launch port:=<symlink>``
(rate_hz 50), in a namespace of its own.  A controller in this process publishes a CtrlCmd (5 km/h, velocity
mode) at 20 Hz, so the node sends real commands, the PCU goes to AUTO and
feeds back a moving vehicle.  The emulator's loop timestamps every command
frame it reads (time.monotonic() right after the read that completed it);
after a warm-up, the frames of the measured window give the mean period, the
jitter |period - 20 ms| (p50, p99, max) and ALIVE gaps (frames lost).

At the same time a "serial floor" (bench/serial_floor.py: plain Python writing
stop frames on absolute deadlines, no ROS) runs against a second emulator,
measured the same way: what the machine's scheduling alone costs right now.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
PY = "/usr/bin/python3"


def _stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _start_pcu(link, out):
    pcu = subprocess.Popen([PY, str(HERE / "pcu_timed.py"), link, out], stdout=subprocess.PIPE,
                           start_new_session=True)
    if pcu.stdout.readline().strip() != b"READY":
        raise RuntimeError("PCU emulator did not start")
    return pcu


def cadence(arrivals_file, t_start, t_end, rate_hz):
    with open(arrivals_file) as f:
        state = json.load(f)
    frames = [(t, a) for t, a in state["arrivals"] if t_start <= t < t_end]
    if len(frames) < 2:
        raise RuntimeError(f"{len(frames)} command frames in the measured window ({arrivals_file})")
    times = [t for t, _ in frames]
    periods = [b - a for a, b in zip(times, times[1:])]
    nominal = 1.0 / rate_hz
    jit = sorted(abs(p - nominal) for p in periods)
    gaps = sum(1 for (_, a), (_, b) in zip(frames, frames[1:]) if b != (a + 1) % 256)
    q = lambda v: 1e3 * jit[min(len(jit) - 1, int(v * len(jit)))]  # noqa: E731
    mean = (times[-1] - times[0]) / (len(times) - 1)
    return {
        "frames": len(frames), "mean_period_ms": 1e3 * mean, "mean_rate_hz": 1.0 / mean,
        "min_period_ms": 1e3 * min(periods), "max_period_ms": 1e3 * max(periods),
        "jitter_ms": {"p50": q(0.5), "p99": q(0.99), "max": 1e3 * jit[-1]},
        "late_over_2ms": sum(1 for j in jit if j > 0.002),
        "late_times": [b for a, b in zip(times, times[1:]) if abs(b - a - nominal) > 0.002],
        "alive_gaps": gaps, "pcu_alive_errors": state["alive_errors"],
    }


def run(seconds=20.0, warmup=3.0, rate_hz=50.0, log_dir=None, progress=print):
    """The node and the serial floor, each against its own PCU emulator, at the same time."""
    import rospy
    from morai_msgs.msg import CtrlCmd
    from bench_e2e import node_pid
    log_dir = log_dir or str(HERE / "out" / "logs")
    os.makedirs(log_dir, exist_ok=True)
    out_dir = str(HERE / "out")
    links = {k: os.path.join(out_dir, "erp42_pty_%s_%d" % (k, os.getpid())) for k in ("node", "floor")}
    files = {k: os.path.join(log_dir, f"erp42_arrivals_{k}.json") for k in links}
    ns = "/bench_erp42"
    procs = []
    pub = None
    stop = threading.Event()
    log = open(os.path.join(log_dir, "erp42_serial.log"), "w")
    try:
        pcus = {k: _start_pcu(links[k], files[k]) for k in links}
        procs += list(pcus.values())
        node = subprocess.Popen(["roslaunch", "morai_msgs", "erp42_serial.launch", f"port:={links['node']}",
                                 f"ns:={ns}", "output:=log", f"rate_hz:={rate_hz:g}"],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        procs.insert(0, node)
        floor = subprocess.Popen([PY, str(HERE / "serial_floor.py"), links["floor"], str(rate_hz)],
                                 start_new_session=True)
        procs.insert(0, floor)
        pid = node_pid(ns + "/erp42_serial")
        pub = rospy.Publisher(ns + "/ctrl_cmd", CtrlCmd, queue_size=1)

        def control():
            m = CtrlCmd(longlCmdType=2, velocity=5.0, steering=0.05)
            while not stop.wait(0.05):
                pub.publish(m)
        threading.Thread(target=control, daemon=True).start()
        p = psutil.Process(pid)
        progress(f"erp42: node and serial floor up; {warmup:.0f} s warm-up, then {seconds:.0f} s measured ...")
        time.sleep(warmup)
        c0 = p.cpu_times()
        load0 = os.getloadavg()[0]
        t_start = time.monotonic()
        time.sleep(seconds)
        t_end = time.monotonic()
        c1 = p.cpu_times()
    finally:
        stop.set()
        if pub is not None:
            pub.unregister()
        for pr in procs:        # writers first (the node sends its shutdown stop frames), then the PCUs
            _stop(pr)
        log.close()
    res = {"rate_hz": rate_hz, "seconds": t_end - t_start, "loadavg_before": load0,
           "node": cadence(files["node"], t_start, t_end, rate_hz),
           "floor": cadence(files["floor"], t_start, t_end, rate_hz)}
    res["node"]["cpu_percent_one_core"] = 100.0 * (c1.user + c1.system - c0.user - c0.system) / (t_end - t_start)
    # periods off by > 2 ms in the node while the floor's were not (within 15 ms): the node's own
    floor_late = res["floor"]["late_times"]
    res["node"]["late_over_2ms_node_only"] = sum(
        1 for t in res["node"]["late_times"] if not any(abs(t - f) < 0.015 for f in floor_late))
    return res


def main():
    import rospy
    sys.path.insert(0, str(HERE.parent / "src"))
    from morai_bridge.configuration.params import Param, parse_args
    a = parse_args([Param("seconds", 20.0, "measured time [s]", above=0.0)])
    rospy.init_node("bench_erp42", anonymous=True, disable_signals=True)
    print(json.dumps(run(a.seconds, progress=lambda s: print(s, file=sys.stderr)), indent=1))


if __name__ == "__main__":
    main()
