#!/usr/bin/env python3
"""Run every test layer and print one summary line CI can read.

Layers: catkin_lint, offline unit tests (pytest, no ROS master), online
tests (each test/ros/*.test under rostest, which starts its own master on a
free port), and system tests (pytest in test/system: several hosts in network
namespaces; skipped with a message when not root).  Called by `bash tools/dev.sh test` after the workspace is built
and sourced.  `bash tools/dev.sh test unit` (or `lint`, `ros`, or a list of
.test names) runs a subset.
"""
import glob
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, '.ws', 'test_results')


def run(cmd, log_name, timeout):
    """Run cmd, stream its output to the terminal and keep a copy."""
    os.makedirs(RESULTS, exist_ok=True)
    log_path = os.path.join(RESULTS, log_name)
    t0 = time.monotonic()
    with open(log_path, 'w') as log:
        p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             errors='replace')
        out = []
        try:
            for line in p.stdout:
                sys.stdout.write(line)
                log.write(line)
                out.append(line)
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out.append('TIMEOUT after %ds\n' % timeout)
    sys.stdout.flush()
    return p.returncode, ''.join(out), time.monotonic() - t0


def lint():
    # the workspace's link, whose name is the package name (tools/dev.sh sets MORAI_WS)
    pkg = os.path.join(os.environ['MORAI_WS'], 'src', 'morai_msgs') if os.environ.get('MORAI_WS') else ROOT
    code, out, _ = run(['catkin_lint', '-W2', '--strict', pkg],
                       'catkin_lint.log', 300)
    ok = code == 0 and re.search(r'found 0 problems', out) is not None
    return (1, 0, 0) if ok else (0, 1, 0)


def unit(extra, where='test/unit', log='pytest.log'):
    code, out, _ = run([sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '-rs', where] + extra, log, 3600)
    counts = {k: 0 for k in ('passed', 'failed', 'error', 'skipped', 'errors')}
    tail = out.strip().splitlines()[-1] if out.strip() else ''
    for n, k in re.findall(r'(\d+) (passed|failed|errors|error|skipped)', tail):
        counts[k] += int(n)
    failed = counts['failed'] + counts['error'] + counts['errors']
    if code not in (0, 5) and failed == 0:
        failed = 1   # pytest itself broke (collection or usage error)
    return counts['passed'], failed, counts['skipped']


def ros(names):
    files = sorted(glob.glob(os.path.join(ROOT, 'test', 'ros', '*.test')))
    if names:
        files = [f for f in files if os.path.basename(f) in names or os.path.basename(f)[:-5] in names]
    passed = failed = 0
    for f in files:
        name = os.path.basename(f)
        print('\n=== rostest %s ===' % name, flush=True)
        code, out, secs = run(['rostest', '--results-base-dir', RESULTS, 'morai_msgs', name],
                              'rostest-%s.log' % name[:-5], 1200)
        m = re.search(r'TESTS: (\d+).*?ERRORS: (\d+).*?FAILURES: (\d+)', out, re.S)
        if m:
            tests, errors, failures = (int(x) for x in m.groups())
            bad = errors + failures
            if code != 0 and bad == 0:
                bad = 1
            passed += tests - min(bad, tests)
            failed += bad
        else:
            failed += 1
        print('=== rostest %s: exit %d in %.1fs ===' % (name, code, secs), flush=True)
    return passed, failed, 0


def main(argv):
    layers = [a for a in argv if a in ('lint', 'unit', 'ros', 'system')]
    rest = [a for a in argv if a not in layers]
    pytest_args = [a for a in rest if a.startswith('-') or '::' in a]
    ros_names = [a for a in rest if a not in pytest_args]
    if not layers:
        layers = ['lint', 'unit', 'ros', 'system']
    totals = {}
    if 'lint' in layers:
        totals['catkin_lint'] = lint()
    if 'unit' in layers:
        totals['pytest'] = unit(pytest_args)
    if 'ros' in layers:
        totals['rostest'] = ros(ros_names)
    if 'system' in layers:
        totals['system'] = unit(pytest_args, 'test/system', 'system.log')
    print()
    for k, (p, f, s) in totals.items():
        print('  %-12s %d passed, %d failed, %d skipped' % (k, p, f, s))
    p = sum(v[0] for v in totals.values())
    f = sum(v[1] for v in totals.values())
    s = sum(v[2] for v in totals.values())
    print('summary: %d passed, %d failed, %d skipped' % (p, f, s))
    return 0 if f == 0 and p > 0 else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
