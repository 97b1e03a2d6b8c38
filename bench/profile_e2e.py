#!/usr/bin/python3
"""Where the CPU of the end-to-end benchmark goes: py-spy samples of the bridge and the rospy floor.

Run through bench/run.sh's environment (a private master is started here):

    source <(bash tools/dev.sh env)
    flock /tmp/morai_heavy.lock /usr/bin/python3 bench/profile_e2e.py --py-spy PATH [--rate 120] [--seconds 20]
    /usr/bin/python3 bench/profile_e2e.py --summarise bench/out/profile-bridge-120.txt ...   # saved profiles again

PATH is a py-spy executable (``python3 -m venv /tmp/v && /tmp/v/bin/pip install py-spy``).
For each system under test (floor, then bridge) the same load as bench_e2e.py
(every stream at the rate, a subscriber on every topic) runs while py-spy samples
the node's process (``--nonblocking``: the process is never stopped) for the
measured window.  Prints, per SUT, the process CPU and, for the receiving thread,
the share of samples of each stage (inclusive), the top functions by own time,
and writes the collapsed stacks to bench/out/profile-<sut>-<rate>.txt.
"""
import collections
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from morai_bridge.configuration.params import Param, command_line  # noqa: E402


# stage name -> substrings of a frame that put a sample in it (first match from the leaf up wins)
STAGES = [
    ("serialize (genpy, in publish)", ("serialize (", "serialize_message (")),
    ("publish (rospy, other than serialize)", ("publish (",)),
    ("decode (wire)", ("udp/codec.py", "udp/framing.py", "nmea.py", "pynmea2")),
    ("convert (sim_to_ros, stamps)", ("sim_to_ros.py", "sim_receive.py",
                                                      "get_rostime", "now (", "rostime.py")),
    ("receive (select, recv, the poll loop)", ("select (", "recv", "poll (")),
]


def stage_of(frames):
    for frame in reversed(frames):
        for name, keys in STAGES:
            if any(k in frame for k in keys):
                return name
    return "other (dispatch, loop, counters)"


def summarise(path, top=25):
    """Per thread: samples; for the busiest thread: stages and own-time functions."""
    threads = collections.Counter()
    stacks = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, n = line.rpartition(" ")
            frames = stack.split(";")
            threads[frames[0]] += int(n)
            stacks[frames[0]].append((frames[1:], int(n)))
    busiest = threads.most_common(1)[0][0]
    total = threads[busiest]
    stage = collections.Counter()
    own = collections.Counter()
    for frames, n in stacks[busiest]:
        stage[stage_of(frames)] += n
        if frames:
            own[frames[-1]] += n
    return {"threads": dict(threads), "busiest": busiest, "samples": total,
            "stages": {k: v / total for k, v in stage.most_common()},
            "own": [(k, v / total) for k, v in own.most_common(top)]}


def main():
    ap = command_line([
        Param("py_spy", None, "the py-spy executable (needed unless --summarise)", metavar="PY_SPY"),
        Param("rate", 120, "stream rate [Hz]", minimum=1),
        Param("seconds", 20.0, "profiled time [s]", above=0.0),
        Param("sut", "floor,bridge", "what to profile: floor, bridge, comma separated"),
        Param("sample_rate", 500, "py-spy samples per second", minimum=1),
        Param("summarise", None, "only print the summary of saved raw profiles", nargs="+", metavar="FILE"),
    ], description=__doc__, raw_help=True)
    a = ap.parse_args()
    if a.summarise:
        for path in a.summarise:
            s = summarise(path)
            print("== %s: %d samples of the busiest thread" % (path, s["samples"]))
            for k, v in s["stages"].items():
                print(f"  {k:48} {100 * v:5.1f} %")
        return
    if not a.py_spy:
        ap.error("--py-spy PATH is needed")
    import run
    import bench_e2e
    out_dir = HERE / "out"
    out_dir.mkdir(exist_ok=True)
    log_dir = out_dir / ("logs-profile-" + time.strftime("%Y%m%d-%H%M%S"))
    log_dir.mkdir()
    os.environ["ROS_LOG_DIR"] = str(log_dir / "ros")
    master = run.Master(str(log_dir))
    import rospy
    rospy.init_node("bench_profile", anonymous=True, disable_signals=True)
    import socket
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))
    results = {}
    try:
        for kind in a.sut.split(","):
            spy = {}

            def on_window(pid, seconds, spy=spy, kind=kind):
                path = out_dir / ("profile-%s-%d.txt" % (kind, a.rate))
                spy["path"] = path
                spy["proc"] = subprocess.Popen(
                    [a.py_spy, "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate",
                     str(a.sample_rate), "--format", "raw", "--threads", "--nonblocking", "--gil", "-o", str(path)],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            r = bench_e2e.one_run(kind, a.rate, a.seconds, 2.0, str(log_dir), sink.getsockname()[1],
                                  on_window=on_window)
            spy["proc"].wait(60)
            s = summarise(spy["path"])
            results[kind] = {"cpu_percent_one_core": r["cpu_percent_one_core"],
                             "cpu_percent_busiest_thread": r["cpu_percent_busiest_thread"], "profile": s}
            print("\n== %s at %d Hz: CPU %.1f %% of one core (receiving thread %.1f); py-spy %d samples of "
                  "the receiving thread (%s) ==" % (kind, a.rate, r["cpu_percent_one_core"],
                                                    r["cpu_percent_busiest_thread"], s["samples"], spy["path"]))
            print("stage (inclusive, share of the receiving thread's samples, idle in select counted):")
            for k, v in s["stages"].items():
                print(f"  {k:48} {100 * v:5.1f} %")
            print("own time:")
            for k, v in s["own"]:
                print(f"  {100 * v:5.1f} %  {k}")
    finally:
        sink.close()
        rospy.signal_shutdown("done")
        master.stop()
    (out_dir / ("profile-%d.json" % a.rate)).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
