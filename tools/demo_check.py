#!/usr/bin/python3
"""Run the README's demo command and measure what a newcomer checks first: /Ego_topic's rate.

    python3 tools/demo_check.py [--seconds 10] [--startup-timeout 600] [--master-port N] \\
        [--min-hz 40 --max-hz 60] -- bash tools/dev.sh demo

Starts the command in its own process group (ROS_MASTER_URI on --master-port when given, so
that roslaunch starts a private master), waits until /Ego_topic is advertised, counts the
messages that arrive over --seconds, then stops the command with SIGINT as Ctrl-C would.
Subscribes with rospy.AnyMsg, so it needs only rospy, not the built workspace.

Prints `demo_check: /Ego_topic at R Hz over S s (N messages), first message T s after start`
and exits 0 when R is within [--min-hz, --max-hz]; 1 otherwise, or when the command ends or one
of its nodes dies first (its last lines are printed).  Used by tools/fresh_debian.sh and the nonroot test layer.
"""
import collections
import os
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'src'))

from morai_bridge.configuration.params import REST, Param, command_line  # noqa: E402

#: the command line (configuration.params)
PARAMS = [
    Param('seconds', 10.0, 'measuring window [s]', above=0.0),
    Param('startup_timeout', 600.0, 'longest wait for /Ego_topic, set-up and build included [s]', above=0.0),
    Param('master_port', 0, 'private ROS master port (0: the environment\'s)', minimum=0, maximum=65535),
    Param('topic', '/Ego_topic', 'the topic whose rate is measured'),
    Param('min_hz', 40.0, 'lowest rate that passes [Hz]'),
    Param('max_hz', 60.0, 'highest rate that passes [Hz]'),
    Param('cmd', [], '-- the command that starts the demo', positional=True, nargs=REST),
]


def parse(argv):
    ap = command_line(PARAMS, description=__doc__.split('\n')[0])
    args = ap.parse_args(argv)
    if args.cmd[:1] == ['--']:
        args.cmd = args.cmd[1:]
    if not args.cmd:
        ap.error('give the demo command after --')
    return args


def tail_reader(stream, keep):
    for line in iter(stream.readline, ''):
        sys.stdout.write(line)
        keep.append(line)
    stream.close()


def advertised(topic):
    """True when the master lists a publisher of ``topic``; False when rospy is missing or the
    master is not up yet (the command may still be installing or building)."""
    try:
        import rosgraph
        return any(t == topic for t, _ in rosgraph.Master('/demo_check').getPublishedTopics(''))
    except Exception:   # ImportError before set-up, socket errors before the master is up
        return False


def stop(p):
    """SIGINT to the process group, as Ctrl-C in a terminal; SIGKILL after 30 s."""
    try:
        os.killpg(p.pid, signal.SIGINT)
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    except ProcessLookupError:
        pass


def main(argv):
    args = parse(argv)
    env = dict(os.environ)
    if args.master_port:
        env['ROS_MASTER_URI'] = 'http://127.0.0.1:%d' % args.master_port
        os.environ['ROS_MASTER_URI'] = env['ROS_MASTER_URI']
    last = collections.deque(maxlen=40)
    t0 = time.monotonic()
    p = subprocess.Popen(args.cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         errors='replace', start_new_session=True)
    threading.Thread(target=tail_reader, args=(p.stdout, last), daemon=True).start()
    try:
        while not advertised(args.topic):
            died = [line for line in last if 'process has died' in line]
            if died:    # roslaunch keeps going when a node dies: the demo would never publish
                print('demo_check: FAIL: a node died before %s was published; the last lines:\n%s'
                      % (args.topic, ''.join(last)), flush=True)
                return 1
            if p.poll() is not None:
                print('demo_check: FAIL: the command ended (exit %s) before %s was published; its last lines:\n%s'
                      % (p.returncode, args.topic, ''.join(last)), flush=True)
                return 1
            if time.monotonic() - t0 > args.startup_timeout:
                print(f'demo_check: FAIL: no {args.topic} within {args.startup_timeout:.0f} s', flush=True)
                return 1
            time.sleep(1.0)
        import rospy
        stamps = []
        rospy.init_node('demo_check', anonymous=True, disable_signals=True)
        rospy.Subscriber(args.topic, rospy.AnyMsg, lambda _m: stamps.append(time.monotonic()), queue_size=100)
        while not stamps and time.monotonic() - t0 < args.startup_timeout and p.poll() is None:
            time.sleep(0.05)
        if not stamps:
            print(f'demo_check: FAIL: {args.topic} advertised but no message arrived', flush=True)
            return 1
        first = stamps[0] - t0
        start = time.monotonic() + 1.0    # let the subscription settle
        time.sleep(1.0 + args.seconds)
        window = [t for t in stamps if start <= t <= start + args.seconds]
        rate = len(window) / args.seconds
        ok = args.min_hz <= rate <= args.max_hz and p.poll() is None
        print('demo_check: %s %s at %.1f Hz over %.0f s (%d messages), first message %.0f s after start%s'
              % ('PASS' if ok else 'FAIL', args.topic, rate, args.seconds, len(window), first,
                 '' if ok else ' (wanted %.0f-%.0f Hz)' % (args.min_hz, args.max_hz)), flush=True)
        return 0 if ok else 1
    finally:
        stop(p)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
