#!/usr/bin/env python3
"""The sets test layer: every morai_msgs message set builds md5-identical to upstream, and runs.

For each set of tools/msg_sets.py (2022, 2024, 2026), in the workspace `bash tools/dev.sh` builds
for it (`MORAI_MSGS_SET=<set>`: a workspace per set; unset: the default set's, which the README
test command has just built):

1. pytest test/sets: the md5 of every generated type against test/data/msg_sets/<set>.json (the
   table made from upstream's own tree at the set's commit), `rosmsg`/`rossrv`, the set's
   converters, the start-up check;
2. `rostest morai_msgs demo.test`: the emulator and the bridge in a closed loop (the demo driver
   steers with the set's CtrlCmd field), the PCU emulator and the ERP-42 driver.

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
from msg_sets import SETS  # noqa: E402

LOGS = os.path.join(ROOT, '.ws', 'test_results', 'sets')
results = []


def report(step, ok, why=''):
    results.append(ok)
    print('sets-check: %s %s%s' % ('PASS' if ok else 'FAIL', step, '' if ok else ': ' + why), flush=True)
    return ok


def tail(path, n=25):
    with open(path, errors='replace') as f:
        return ''.join(f.readlines()[-n:])


def env_of(msg_set):
    """A clean environment with the set's workspace sourced (what `tools/dev.sh env` prints)."""
    env = dict((k, v) for k, v in os.environ.items()
               if not k.startswith(('ROS', 'CMAKE_PREFIX', 'PYTHONPATH', 'LD_LIBRARY', 'PKG_CONFIG', 'MORAI_WS')))
    env['PATH'] = '/usr/bin:/bin:/usr/sbin:/sbin'
    if msg_set is None:
        env.pop('MORAI_MSGS_SET', None)
    else:
        env['MORAI_MSGS_SET'] = msg_set
    return env


def sourced(command):
    return 'set -e; source <(bash %s/tools/dev.sh env); %s' % (ROOT, command)


def run(name, command, env, timeout):
    log = os.path.join(LOGS, name + '.log')
    with open(log, 'w') as f:
        try:
            code = subprocess.run(['bash', '-c', command], env=env, stdout=f, stderr=subprocess.STDOUT,
                                  cwd=ROOT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            code = 'timeout after %d s' % timeout
    return code, log


def main():
    os.makedirs(LOGS, exist_ok=True)
    t0 = time.monotonic()
    default = SETS[0]
    for s in SETS:
        env = env_of(None if s == default else s)
        if s != default:
            t = time.monotonic()
            code, log = run('build-%s' % s, 'bash %s/tools/dev.sh build' % ROOT, env, 1800)
            if not report('set %s: its workspace builds (%.0f s)' % (s, time.monotonic() - t), code == 0,
                          'exit %s\n%s' % (code, tail(log))):
                continue
        env['MORAI_EXPECT_MSGS_SET'] = s
        code, log = run('pytest-%s' % s, sourced('/usr/bin/python3 -m pytest -p no:cacheprovider -q test/sets'),
                        env, 900)
        counts = re.findall(r'(\d+) (passed|failed)', tail(log, 3))
        report('set %s: pytest test/sets (%s)' % (s, ', '.join(' '.join(c) for c in counts) or 'no summary'),
               code == 0, tail(log))
        code, log = run('demo-%s' % s, sourced('rostest --text morai_msgs demo.test'), env, 600)
        report('set %s: rostest demo.test (the closed loop)' % s, code == 0, tail(log))
    passed, failed = results.count(True), results.count(False)
    print('sets-check: %d passed, %d failed in %.0f s' % (passed, failed, time.monotonic() - t0), flush=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
