#!/usr/bin/env python3
"""The sets test layer: every morai_msgs message set builds md5-identical to upstream, and runs.

For each set of tools/msg_sets.py (2022, 2024, 2026), in the workspace `bash tools/dev.sh` builds
for it (`MORAI_MSGS_SET=<set>`: a workspace per set; unset: the default set's, which the README
test command has just built):

1. pytest test/sets and test/unit/ros/udp_bridge/test_sim_to_ros.py: the md5 of every generated type against
   test/data/msg_sets/<set>.json (the table made from upstream's own tree at the set's commit),
   `rosmsg`/`rossrv`, the converters in the set (every message complete, over the codec's samples,
   randomised packets and the real captures), the start-up check;
2. `rostest morai_msgs demo.test`: the emulator and the bridge in a closed loop (the demo driver
   steers with the set's CtrlCmd field), the PCU emulator and the ERP-42 driver; for the sets other
   than the default (whose workspace the ros layer covers), interface.test (a hand-written peer in the
   set's layout), rosbag_roundtrip.test and client_loop.test (clients written as teams write them follow
   recorded paths) too;
3. a client built elsewhere: a workspace holding only a morai_msgs made from upstream's field lists
   of the set (test/data/msg_sets/<set>.fields.json; test/sets/upstream_client.py), whose node
   receives /Ego_topic, /Object_topic and /CollisionData from the set's emulator and bridge
   (demo.launch driver:=false) and turns the ego left through /ctrl_cmd.

Prints `sets-check: PASS <step>` / `sets-check: FAIL <step>: <why>` and ends with
`sets-check: N passed, N failed in S s`.  Logs: .ws/test_results/sets/.
"""
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
from msg_sets import DEFAULT, SETS  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, 'test', 'install'))
from install_check import free_port, stop, tail as tail_of  # noqa: E402

LOGS = os.path.join(ROOT, '.ws', 'test_results', 'sets')
# the ros layer's rostests that depend on the set, run again in the other sets' workspaces: types
# between nodes and against a hand-written peer of the set's layout; rosbag record and read back;
# the closed-loop clients written as teams write them, which build CtrlCmd in the set's fields
ROSTESTS_PER_SET = ('interface.test', 'rosbag_roundtrip.test', 'client_loop.test')
results = []


def report(step, ok, why=''):
    results.append(ok)
    print(f"sets-check: {'PASS' if ok else 'FAIL'} {step}{'' if ok else ': ' + why}", flush=True)
    return ok


def tail(path, n=25):
    """The last lines of a log file, on one line (install_check.tail)."""
    with open(path, errors='replace') as f:
        return tail_of(f.read(), n)


def env_of(msg_set):
    """A clean environment with the set's workspace sourced (what `tools/dev.sh env` prints)."""
    env = {k: v for k, v in os.environ.items()
               if not k.startswith(('ROS', 'CMAKE_PREFIX', 'PYTHONPATH', 'LD_LIBRARY', 'PKG_CONFIG', 'MORAI_WS'))}
    env['PATH'] = '/usr/bin:/bin:/usr/sbin:/sbin'
    if msg_set is None:
        env.pop('MORAI_MSGS_SET', None)
    else:
        env['MORAI_MSGS_SET'] = msg_set
    return env


def sourced(command):
    return f'set -e; source <(bash {ROOT}/tools/dev.sh env); {command}'


def run(name, command, env, timeout):
    log = os.path.join(LOGS, name + '.log')
    with open(log, 'w') as f:
        try:
            code = subprocess.run(['bash', '-c', command], env=env, stdout=f, stderr=subprocess.STDOUT,
                                  cwd=ROOT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            code = 'timeout after %d s' % timeout
    return code, log


def upstream_client(s, env):
    """Step 3: build the client's workspace (cached per set), then drive with it."""
    ws = os.path.join(os.path.expanduser('~'), '.cache', 'morai_msgs', f'upstream-client-{s}')
    t = time.monotonic()
    log = os.path.join(LOGS, f'client-build-{s}.log')
    code = upstream_client_module().build(s, ws, log)
    if not report('set %s: a morai_msgs from upstream\'s field lists builds in its own workspace (%.0f s)'
                  % (s, time.monotonic() - t), code == 0, tail(log)):
        return
    port = free_port()
    master = dict(env, ROS_MASTER_URI='http://127.0.0.1:%d' % port)
    launch_log = open(os.path.join(LOGS, f'client-bridge-{s}.log'), 'w')
    bridge = subprocess.Popen(['bash', '-c', sourced('exec roslaunch -p %d morai_msgs demo.launch driver:=false '
                                                     'markers:=false output:=log' % port)],
                              env=master, stdout=launch_log, stderr=subprocess.STDOUT, cwd=ROOT,
                              start_new_session=True)
    bag = os.path.join(LOGS, f'set-{s}.bag')
    for old in (bag, bag + '.active'):
        if os.path.exists(old):
            os.remove(old)
    recorder = None
    try:
        # what the bridge publishes and the client commands, recorded in this set's types
        recorder = subprocess.Popen(['bash', '-c', sourced('exec rosbag record -q -O %s /Ego_topic /CollisionData '
                                                           '/ctrl_cmd' % bag)], env=master, cwd=LOGS,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True)
        client_env = {k: v for k, v in env_of(None).items() if k != 'MORAI_EXPECT_MSGS_SET'}
        client_env['ROS_MASTER_URI'] = master['ROS_MASTER_URI']
        code, log = run(f'client-{s}', 'set -e; set +u; source %s/devel/setup.bash; set -u; exec /usr/bin/python3 '
                        '%s/test/sets/upstream_client.py drive %s' % (ws, ROOT, s), client_env, 180)
        report(f'set {s}: the upstream-built client receives the bridge\'s topics and drives', code == 0,
               tail(log))
        with open(log) as f:
            print('  ' + ''.join(line for line in f if line.startswith('upstream client')).strip(), flush=True)
    finally:
        if recorder is not None:
            stop(recorder, open(os.devnull, 'w'), 30)    # SIGINT: rosbag closes the bag
        stop(bridge, launch_log, 30)


def migrations():
    """Step 4: the bag each set recorded, fixed by `rosrun morai_msgs morai_bag_fix` (rosbag's migration
    with msg_sets/migration_rules.bmr, working on Python 3.13 too: docs/versions.md) in every other
    set's workspace, checked there (bag_check.py), and named by `tools/msg_sets.py which`."""
    default = DEFAULT
    for a in SETS:
        bag = os.path.join(LOGS, f'set-{a}.bag')
        if not os.path.exists(bag):
            report(f'rosbag: set {a} recorded a bag', False, f'no {bag}')
            continue
        code, log = run(f'which-{a}', sourced(f'/usr/bin/python3 tools/msg_sets.py which {bag}'), env_of(None), 120)
        named = tail(log, 1).strip()
        report(f'tools/msg_sets.py which names the set of the bag recorded under {a}'
               + ('' if a == default else ' and morai_bag_fix to move it to the workspace\'s'),
               code == 0 and (f'message set {a};') in named and (
                   a == default or f'rosrun morai_msgs morai_bag_fix {bag} ' in named), named)
        for b in SETS:
            if b == a:
                continue
            fixed = os.path.join(LOGS, f'set-{a}-fixed-for-{b}.bag')
            if os.path.exists(fixed):
                os.remove(fixed)
            # the documented command (README, docs/versions.md); `rosbag fix` with the rule file named
            # stops with a KeyError on Python 3.13 (Debian 13)
            command = ('rosrun morai_msgs morai_bag_fix %s %s; /usr/bin/python3 test/sets/bag_check.py %s %s'
                       % (bag, fixed, bag, fixed))
            code, log = run(f'fix-{a}-for-{b}', sourced(command), env_of(None if b == default else b), 300)
            report(f'morai_bag_fix: the {a} bag, in the {b} workspace ({tail(log, 1).strip()})', code == 0,
                   tail(log))


def upstream_client_module():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import upstream_client
    return upstream_client


def main():
    os.makedirs(LOGS, exist_ok=True)
    t0 = time.monotonic()
    default = DEFAULT
    for s in SETS:
        env = env_of(None if s == default else s)
        if s != default:
            t = time.monotonic()
            code, log = run(f'build-{s}', f'bash {ROOT}/tools/dev.sh build', env, 1800)
            if not report(f'set {s}: its workspace builds ({time.monotonic() - t:.0f} s)', code == 0,
                          f'exit {code}\n{tail(log)}'):
                continue
        env['MORAI_EXPECT_MSGS_SET'] = s
        code, log = run(f'pytest-{s}', sourced('/usr/bin/python3 -m pytest -p no:cacheprovider -q test/sets '
                                               'test/unit/ros/udp_bridge/test_sim_to_ros.py'),
                        env, 900)
        counts = re.findall(r'(\d+) (passed|failed)', tail(log, 3))
        report(f"set {s}: pytest test/sets ({', '.join((' '.join(c) for c in counts)) or 'no summary'})",
               code == 0, tail(log))
        code, log = run(f'demo-{s}', sourced('rostest --text morai_msgs demo.test'), env, 600)
        report(f'set {s}: rostest demo.test (the closed loop)', code == 0, tail(log))
        for test in ROSTESTS_PER_SET if s != default else ():
            code, log = run(f'{test[:-5]}-{s}', sourced(f'rostest --text morai_msgs {test}'), env, 600)
            report(f'set {s}: rostest {test}', code == 0, tail(log))
        upstream_client(s, env)
    migrations()
    passed, failed = results.count(True), results.count(False)
    print('sets-check: %d passed, %d failed in %.0f s' % (passed, failed, time.monotonic() - t0), flush=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
