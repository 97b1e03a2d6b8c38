#!/usr/bin/env python3
"""Run every test layer and print one summary line CI can read.

Layers: catkin_lint, offline unit tests (pytest, no ROS master), the Python 3.8
minimum-version check (py38: vermin in a throw-away virtual environment, and a
3.8 grammar parse), online tests (each test/ros/*.test under rostest, which
starts its own master on a free port; among them the real rviz under Xvfb),
system tests (pytest in test/system: several hosts in network namespaces;
skipped with a message when not root), and the install space (install: a fresh
workspace, `catkin_make install`, then demo.launch and a rostest with only
install/setup.bash sourced).  Called by `bash tools/dev.sh test` after the
workspace is built and sourced.  `bash tools/dev.sh test unit` (or `lint`,
`py38`, `ros`, `system`, `install`, or a list of .test names) runs a subset.
"""
import ast
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


# ---------------------------------------------------------------------------- py38

VERMIN = 'vermin==1.9.2'
PY38_PATHS = ['src', 'test', 'tools', 'bench', 'fuzz', 'scripts']
# Findings in files this layer's authors may not edit (they are being moved by another change):
# reported as skipped, with the reason, until fixed there.  (file, feature) -> reason
PY38_KNOWN = {}   # (file, vermin feature) -> why it is accepted; empty: every finding fails


def cache_dir():
    return os.path.join(os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache'),
                        'morai_msgs')


def vermin_exe():
    """vermin from PyPI in a virtual environment of its own (created on first use)."""
    venv = os.path.join(cache_dir(), 'vermin-venv')
    exe = os.path.join(venv, 'bin', 'vermin')
    want = VERMIN.split('==')[1]
    have = subprocess.run([exe, '--version'], capture_output=True, text=True).stdout.strip() \
        if os.path.exists(exe) else ''
    if have != want:
        print('py38: installing %s into %s' % (VERMIN, venv), flush=True)
        subprocess.run(['/usr/bin/python3', '-m', 'venv', '--clear', venv], check=True)
        subprocess.run([os.path.join(venv, 'bin', 'python'), '-m', 'pip', 'install', '-q', VERMIN], check=True)
    return exe


def python_files(paths):
    out = []
    for top in paths:
        for dirpath, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if d != '__pycache__']
            for f in files:
                p = os.path.join(dirpath, f)
                if f.endswith('.py'):
                    out.append(p)
                elif top == 'scripts':
                    with open(p, 'rb') as fh:
                        if b'python' in fh.readline():
                            out.append(p)
    return sorted(out)


def py38():
    """Minimum Python version of the code <= 3.8 (Ubuntu 20.04 / Noetic): vermin's rules for the
    standard library and syntax, and the 3.8 grammar (ast.parse with feature_version)."""
    passed = failed = skipped = 0
    files = python_files([p for p in PY38_PATHS if os.path.isdir(os.path.join(ROOT, p))])
    try:
        exe = vermin_exe()
    except (OSError, subprocess.CalledProcessError) as e:
        print('py38: cannot install vermin: %s' % e)
        return 0, 1, 0
    code, out, _ = run([exe, '-t=3.8-', '--no-tips', '--violations', '--eval-annotations', '--format', 'parsable']
                       + files, 'vermin.log', 900)
    findings = []
    for line in out.splitlines():
        parts = line.split(':', 5)
        if len(parts) == 6 and parts[0] and parts[1]:
            findings.append((os.path.relpath(parts[0], ROOT), parts[1], parts[4], parts[5]))
    new = []
    for f, line, need, feature in findings:
        reason = PY38_KNOWN.get((f, feature))
        if reason:
            print('py38: KNOWN %s:%s %s needs %s: %s' % (f, line, feature, need, reason))
            skipped += 1
        else:
            print('py38: FAIL %s:%s %s needs Python %s' % (f, line, feature, need))
            new.append(f)
    if new or (code != 0 and not findings):
        failed += 1
    else:
        passed += 1
    print('py38: vermin on %d files: %d findings, %d known' % (len(files), len(findings), skipped), flush=True)
    bad = []
    for p in files:
        try:
            with open(p, encoding='utf-8') as fh:
                ast.parse(fh.read(), p, feature_version=(3, 8))
        except SyntaxError as e:
            bad.append('%s:%s %s' % (os.path.relpath(p, ROOT), e.lineno, e.msg))
    for b in bad:
        print('py38: FAIL 3.8 grammar: %s' % b)
    print('py38: 3.8 grammar on %d files: %d errors' % (len(files), len(bad)), flush=True)
    if bad:
        failed += 1
    else:
        passed += 1
    return passed, failed, skipped


# ---------------------------------------------------------------------------- install

def install():
    code, out, secs = run([sys.executable, os.path.join(ROOT, 'test', 'install', 'install_check.py')],
                          'install_check.log', 3600)
    m = re.search(r'install-check: (\d+) passed, (\d+) failed', out)
    if not m:
        return 0, 1, 0
    passed, failed = int(m.group(1)), int(m.group(2))
    if code != 0 and failed == 0:
        failed = 1
    print('=== install layer: %.0f s ===' % secs, flush=True)
    return passed, failed, 0


LAYERS = ('lint', 'unit', 'py38', 'ros', 'system', 'install')


def main(argv):
    layers = [a for a in argv if a in LAYERS]
    rest = [a for a in argv if a not in layers]
    pytest_args = [a for a in rest if a.startswith('-') or '::' in a]
    ros_names = [a for a in rest if a not in pytest_args]
    if not layers:
        # `test NAME.test ...` runs those rostests only
        layers = ['ros'] if ros_names and all(n.endswith('.test') for n in ros_names) else list(LAYERS)
    # the rviz screenshot test (test/ros/rviz_screenshot.test) keeps its picture with the logs
    os.environ.setdefault('MORAI_SCREENSHOT', os.path.join(RESULTS, 'rviz_screenshot.png'))
    totals = {}
    if 'lint' in layers:
        totals['catkin_lint'] = lint()
    if 'unit' in layers:
        totals['pytest'] = unit(pytest_args)
    if 'py38' in layers:
        totals['py38'] = py38()
    if 'ros' in layers:
        totals['rostest'] = ros(ros_names)
    if 'system' in layers:
        totals['system'] = unit(pytest_args, 'test/system', 'system.log')
    if 'install' in layers:
        totals['install'] = install()
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
