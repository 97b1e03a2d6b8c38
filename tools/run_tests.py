#!/usr/bin/python3
"""Run every test layer and print one summary line CI can read.

Layers: catkin_lint, offline unit tests (pytest, no ROS master), Python 3.8
(py38: vermin in a throw-away virtual environment and a 3.8 grammar parse of every
file, then the unit tests that need no ROS on a real Python 3.8 interpreter in a
virtual environment with Ubuntu 20.04's library versions), online tests (each
test/ros/*.test under rostest, which starts its own master on a free port; among them the real rviz under Xvfb),
every morai_msgs message set (sets: test/sets/sets_check.py builds the sets other than the default in a workspace each and
runs test/sets and the closed-loop demo.test in every set's workspace), what a normal user runs, as one (nonroot: test/nonroot/nonroot_check.py drops root to `nobody`
for the demo, udp_bridge.launch's refused-port message, a rostest and test/nonroot), system
tests (pytest in test/system: several hosts in network namespaces;
skipped with a message when not root), and the install space (install: a fresh
workspace, `catkin_make install`, then demo.launch and a rostest with only
install/setup.bash sourced).  Called by `bash tools/dev.sh test` after the
workspace is built and sourced.  `bash tools/dev.sh test unit` (or `lint`,
`py38`, `ros`, `sets`, `nonroot`, `system`, `install`, or a list of .test names) runs a subset;
`bash tools/dev.sh test --quick` runs what a contributor needs before pushing most changes in a few
minutes: catkin_lint, the unit tests and the rostests of QUICK_ROSTESTS (the bridge against a fake
simulator, the receive and send paths, the emulator and bridge in a closed loop).  CI runs the full command.
"""
import ast
import fcntl
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'src'))

from morai_bridge.configuration.params import REST, Param, command_line  # noqa: E402

RESULTS = os.path.join(ROOT, '.ws', 'test_results')
# What failed, repeated after the summary so that the tail of a long log names it: (layer, text)
FAILED = []
# What did not run and why, repeated after the summary the same way: (layer, text)
NOTES = []
DIGEST_LINES = 30   # lines kept of each failure's text


def note_failures(layer, out):
    """Keep the failing tests' names (and rostest's failure texts) of one layer's output."""
    found = False
    # rosunit: "[pkg.rosunit-file/test_x][FAILURE]-----" then the text, then a line of 80 dashes
    for m in re.finditer(r'^\[(\S+)\]\[(FAILURE|ERROR)\]-*\n(.*?)^-{80}$', out, re.M | re.S):
        text = m.group(3).strip().splitlines()
        FAILED.append((layer, '%s %s\n%s' % (m.group(2), m.group(1), '\n'.join(
            '    ' + line for line in text[-DIGEST_LINES:]))))
        found = True
    # pytest's short summary (-rf): "FAILED path::test - message", "ERROR path - message"
    for line in out.splitlines():
        if re.match(r'(FAILED|ERROR) \S+', line):
            FAILED.append((layer, line.strip()))
            found = True
    return found


def digest(layer, failed, code, out):
    """After a layer with failures: its failing tests, or, when its output names none, its exit status
    and last lines."""
    if failed and not note_failures(layer, out):
        tail = out.strip().splitlines()[-DIGEST_LINES:]
        FAILED.append((layer, 'exit %s, no test named; the last lines:\n%s' % (
            code, '\n'.join('    ' + line for line in tail))))


def run(cmd, log_name, timeout, env=None):
    """Run cmd, stream its output to the terminal and keep a copy."""
    os.makedirs(RESULTS, exist_ok=True)
    log_path = os.path.join(RESULTS, log_name)
    t0 = time.monotonic()
    with open(log_path, 'w') as log:
        p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             errors='replace', env=env)
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
    digest('catkin_lint', not ok, code, out)
    return (1, 0, 0) if ok else (0, 1, 0)


def pytest_counts(code, out):
    """(passed, failed, skipped) from pytest's closing line (pytest 4.6 to 8)."""
    counts = {k: 0 for k in ('passed', 'failed', 'error', 'skipped', 'errors')}
    tail = out.strip().splitlines()[-1] if out.strip() else ''
    for n, k in re.findall(r'(\d+) (passed|failed|errors|error|skipped)', tail):
        counts[k] += int(n)
    failed = counts['failed'] + counts['error'] + counts['errors']
    if code not in (0, 5) and failed == 0:
        failed = 1   # pytest itself broke (collection or usage error)
    return counts['passed'], failed, counts['skipped']


def unit(extra, where='test/unit', log='pytest.log'):
    code, out, _ = run([sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '-rfEs', where] + extra, log, 3600)
    counts = pytest_counts(code, out)
    digest(log[:-4], counts[1], code, out)
    return counts


def ros(names):
    files = sorted(glob.glob(os.path.join(ROOT, 'test', 'ros', '*.test')))
    if names:
        files = [f for f in files if os.path.basename(f) in names or os.path.basename(f)[:-5] in names]
    passed = failed = 0
    for f in files:
        name = os.path.basename(f)
        print(f'\n=== rostest {name} ===', flush=True)
        code, out, secs = run(['rostest', '--results-base-dir', RESULTS, 'morai_msgs', name],
                              f'rostest-{name[:-5]}.log', 1200)
        m = re.search(r'TESTS: (\d+).*?ERRORS: (\d+).*?FAILURES: (\d+)', out, re.S)
        tests, errors, failures = (int(x) for x in m.groups()) if m else (0, 0, 0)
        bad = errors + failures
        if bad == 0 and (code != 0 or not m):
            bad = 1
        passed += tests - min(bad, tests)
        failed += bad
        digest('rostest ' + name, bad, code, out)
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
        print(f'py38: installing {VERMIN} into {venv}', flush=True)
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
        print(f'py38: cannot install vermin: {e}')
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
            print(f'py38: KNOWN {f}:{line} {feature} needs {need}: {reason}')
            skipped += 1
        else:
            fail = f'{f}:{line} {feature} needs Python {need}'
            print('py38: FAIL ' + fail)
            FAILED.append(('py38', fail))
            new.append(f)
    if new or (code != 0 and not findings):
        failed += 1
        digest('py38', not new, code, out)       # vermin itself failed: its last lines
    else:
        passed += 1
    print('py38: vermin on %d files: %d findings, %d known' % (len(files), len(findings), skipped), flush=True)
    bad = []
    for p in files:
        try:
            with open(p, encoding='utf-8') as fh:
                ast.parse(fh.read(), p, feature_version=(3, 8))
        except SyntaxError as e:
            bad.append(f'{os.path.relpath(p, ROOT)}:{e.lineno} {e.msg}')
    for b in bad:
        print(f'py38: FAIL 3.8 grammar: {b}')
        FAILED.append(('py38', f'3.8 grammar: {b}'))
    print(f'py38: 3.8 grammar on {len(files)} files: {len(bad)} errors', flush=True)
    if bad:
        failed += 1
    else:
        passed += 1
    return passed, failed, skipped


# ---------------------------------------------------------------------------- py38: a real 3.8

# Ubuntu 20.04's versions of what the unit tests import (focal's python3-numpy 1.17.4,
# python3-pil 7.0.0, python3-serial 3.4, python3-dpkt 1.9.2, python3-nmea2 1.15.0, python3-yaml
# 5.3.1, python3-pytest 4.6.9, python3-hypothesis 4.36.2), from PyPI, and releases of their
# dependencies from the same time (attrs < 21 for hypothesis 4.36; docs/noetic.md).
PY38_REQUIREMENTS = [
    'numpy==1.17.4', 'Pillow==7.0.0', 'pyserial==3.4', 'dpkt==1.9.2', 'pynmea2==1.15.0',
    'PyYAML==5.3.1', 'pytest==4.6.9', 'hypothesis==4.36.2',
    'attrs==19.3.0', 'more-itertools==4.2.0', 'pluggy==0.13.1', 'py==1.8.1', 'packaging==20.3',
    'pyparsing==2.4.6', 'six==1.14.0', 'wcwidth==0.1.8', 'atomicwrites==1.1.5',
]
PY38_CHECK = ('import sys, venv, ensurepip; '
              'print("%d.%d.%d" % sys.version_info[:3], sys.executable)')


def python38_candidates():
    """Where a developer machine has a Python 3.8, in order: $MORAI_PYTHON38, python3.8 on PATH
    (Ubuntu 20.04's own, or a pyenv shim when 3.8 is among pyenv's active versions), /usr/bin/python3
    when it is 3.8 (Ubuntu 20.04), pyenv's installed 3.8.x (newest first), uv's, asdf's."""
    out = []
    if os.environ.get('MORAI_PYTHON38'):
        out.append(os.environ['MORAI_PYTHON38'])
    for name in ('python3.8',):
        path = shutil.which(name)
        if path:
            out.append(path)
    out.append('/usr/bin/python3')
    roots = [os.environ.get('PYENV_ROOT'), os.path.join(os.path.expanduser('~'), '.pyenv')]
    if shutil.which('pyenv'):
        r = subprocess.run(['pyenv', 'root'], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        roots.insert(0, r.stdout.strip())
    found = []
    for root in filter(None, roots):
        found += glob.glob(os.path.join(root, 'versions', '3.8.*', 'bin', 'python3.8'))
    if shutil.which('uv'):
        r = subprocess.run(['uv', 'python', 'find', '3.8'], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
        if r.returncode == 0 and r.stdout.strip():
            found.append(r.stdout.strip())
    data = os.environ.get('XDG_DATA_HOME') or os.path.join(os.path.expanduser('~'), '.local', 'share')
    found += glob.glob(os.path.join(data, 'uv', 'python', 'cpython-3.8.*', 'bin', 'python3.8'))
    found += glob.glob(os.path.join(os.path.expanduser('~'), '.asdf', 'installs', 'python', '3.8.*', 'bin',
                                    'python3.8'))

    def patch(path):
        m = re.search(r'3\.8\.(\d+)', path)
        return int(m.group(1)) if m else -1
    out += sorted(found, key=patch, reverse=True)
    return list(dict.fromkeys(out))


def find_python38():
    """(path, version) of the first candidate that really is a 3.8 with venv, or (None, reasons)."""
    tried = []
    for exe in python38_candidates():
        try:
            r = subprocess.run([exe, '-c', PY38_CHECK], capture_output=True,
                               text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            tried.append(f'{exe}: {e}')
            continue
        version = r.stdout.split()[0] if r.returncode == 0 and r.stdout.split() else ''
        if version.startswith('3.8.'):
            return exe, version
        tried.append(f"{exe}: {version or (r.stderr.strip().splitlines() or ['fails'])[-1]}")
    return None, tried


def py38_venv(exe, version):
    """The cached virtual environment (~/.cache/morai_msgs/py38-venv) with PY38_REQUIREMENTS,
    (re)made when the interpreter or the requirements changed; a lock keeps concurrent runs
    (several checkouts) from building it at the same time."""
    venv = os.path.join(cache_dir(), 'py38-venv')
    python = os.path.join(venv, 'bin', 'python')
    stamp_path = os.path.join(venv, 'morai-stamp.json')
    want = {'python': exe, 'version': version, 'requirements': PY38_REQUIREMENTS}
    os.makedirs(cache_dir(), exist_ok=True)
    with open(os.path.join(cache_dir(), 'py38-venv.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(stamp_path) as f:
                if json.load(f) == want and os.path.exists(python):
                    return python
        except (OSError, ValueError):
            pass
        t0 = time.monotonic()
        print('py38: creating %s with %s (Python %s) and %d pinned packages from PyPI'
              % (venv, exe, version, len(PY38_REQUIREMENTS)), flush=True)
        subprocess.run([exe, '-m', 'venv', '--clear', venv], check=True)
        subprocess.run([python, '-m', 'pip', 'install', '-q', '--no-input'] + PY38_REQUIREMENTS, check=True)
        with open(stamp_path, 'w') as f:
            json.dump(want, f)
        print(f'py38: virtual environment ready in {time.monotonic() - t0:.0f} s', flush=True)
    return python


def py38_run(extra):
    """The unit tests that need no ROS, on a real Python 3.8 (conftest.py's no-ROS mode).

    No Python 3.8 on the machine: in CI (CI=true) or with MORAI_REQUIRE_PY38=1 a failure; on a
    newcomer's machine the run is skipped, and the summary says so and how to run it
    (docs/noetic.md)."""
    exe, info = find_python38()
    if exe is None:
        print('py38: no Python 3.8 interpreter found; tried:\n  ' + '\n  '.join(info), flush=True)
        how = ('install one (pyenv install 3.8, uv python install 3.8; Ubuntu 20.04\'s own python3 is one) '
               'or set MORAI_PYTHON38=/path/to/python3.8, then: bash tools/dev.sh test py38')
        required = os.environ.get('CI', '').lower() in ('1', 'true', 'yes') or os.environ.get('MORAI_REQUIRE_PY38') == '1'
        if not required:
            note = 'SKIPPED the unit tests on Python 3.8: no Python 3.8 on this machine; to run them, ' + how
            print('py38: ' + note, flush=True)
            NOTES.append(('py38-pytest', note))
            return 0, 0, 1
        print('py38: FAIL (CI=true or MORAI_REQUIRE_PY38=1: a missing Python 3.8 fails): ' + how, flush=True)
        FAILED.append(('py38-pytest', 'no Python 3.8 interpreter: ' + how))
        return 0, 1, 0
    try:
        python = py38_venv(exe, version=info)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f'py38: FAIL: cannot make the Python 3.8 virtual environment: {e}', flush=True)
        return 0, 1, 0
    # PYTHONPATH=src replaces pytest.ini's `pythonpath = src` (pytest >= 7) for pytest 4.6, and
    # keeps out ROS's PYTHONPATH: this run has no ROS, like a plain Python 3.8.
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, 'src'), MORAI_UNIT_NO_ROS='1',
               PYTHONDONTWRITEBYTECODE='1')
    t0 = time.monotonic()
    code, out, _ = run([python, '-m', 'pytest', '-p', 'no:cacheprovider', '-rfEs', 'test/unit'] + extra,
                       'py38-pytest.log', 1800, env=env)
    passed, failed, skipped = pytest_counts(code, out)
    digest('py38-pytest', failed, code, out)
    if passed == 0 and failed == 0:
        print('py38: FAIL: no test ran on Python 3.8', flush=True)
        failed = 1
    sys.path.insert(0, os.path.join(ROOT, 'test', 'unit'))
    import ros_imports   # what conftest.py's no-ROS mode calls a ROS module
    ros = other = 0
    for n, reason in re.findall(r'^SKIPPED \[(\d+)\] \S+ (.*)$', out, re.M):
        m = re.search(r"needs ROS|could not import '([\w.]+)'", reason)
        if m and (m.group(1) is None or ros_imports.is_ros_module(m.group(1))):
            ros += int(n)
        else:
            other += int(n)
    print('py38: Python %s (%s): %d passed, %d failed, %d skipped (%d need ROS, %d for other reasons) '
          'in %.0f s' % (info, exe, passed, failed, skipped, ros, other, time.monotonic() - t0), flush=True)
    return passed, failed, skipped


# ---------------------------------------------------------------------------- install, nonroot

def check_layer(layer, script):
    """A layer that is one check script printing `<layer>-check: PASS|FAIL <step>` lines and
    `<layer>-check: N passed, N failed`: its counts, and its FAIL lines for the digest."""
    code, out, secs = run([sys.executable, os.path.join(ROOT, script)], f'{layer}_check.log', 3600)
    m = re.search(rf'{layer}-check: (\d+) passed, (\d+) failed', out)
    if not m:
        digest(layer, 1, code, out)
        return 0, 1, 0
    passed, failed = int(m.group(1)), int(m.group(2))
    if code != 0 and failed == 0:
        failed = 1
    steps = [line.split(': ', 1)[1] for line in out.splitlines() if line.startswith(f'{layer}-check: FAIL')]
    FAILED.extend((layer, step) for step in steps)
    digest(layer, failed and not steps, code, out)
    print(f'=== {layer} layer: {secs:.0f} s ===', flush=True)
    return passed, failed, 0


LAYERS = ('lint', 'unit', 'py38', 'ros', 'sets', 'nonroot', 'system', 'install')
#: --quick: the rostests of the paths most changes touch (every stream through the bridge, the
#: receive/send code, the emulator in a closed loop); the other layers stay for the full command
QUICK_ROSTESTS = ('udp_bridge.test', 'receiver_sender.test', 'closed_loop.test')


#: the command line (configuration.params).  Layer names, .test names and pytest's arguments come in any
#: order, --quick anywhere among them: an argument that is no layer goes to pytest when it starts with '-'
#: or names a test (FILE::TEST), and is a rostest name otherwise
PARAMS = [
    Param('quick', False, 'the layers a contributor runs before pushing: lint, unit and the rostests %s (or '
          'the .test names given)' % ', '.join(QUICK_ROSTESTS), switch=True),
    Param('names', [], 'layers (%s; default: all), .test names (default: every test/ros/*.test; alone: those '
          'rostests only), pytest arguments (-x, FILE::TEST; for the unit, py38 and system layers)'
          % ', '.join(LAYERS), positional=True, nargs=REST, metavar='NAME'),
]


def arguments(argv):
    """(--quick given, the other arguments in their order).  The parser knows --quick and --help; the
    pytest options it does not know come back from parse_known_args, and they are the ones before the
    first name (the names take every argument after it, --quick included)."""
    args, options = command_line(PARAMS, description=__doc__, raw_help=True).parse_known_args(argv)
    rest = options + args.names
    return args.quick or '--quick' in rest, [a for a in rest if a != '--quick']


def main(argv):
    quick, argv = arguments(argv)
    # Started as a background job (`bash tools/dev.sh test &`, nohup, some CI runners), this process and
    # every child would ignore SIGINT: rostest and roslaunch stop nodes with it, and tests interrupt runs
    # with it.  A handler here gives the children the ordinary disposition (exec resets handled signals).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    started = time.monotonic()
    layers = [a for a in argv if a in LAYERS]
    rest = [a for a in argv if a not in layers]
    pytest_args = [a for a in rest if a.startswith('-') or '::' in a]
    ros_names = [a for a in rest if a not in pytest_args]
    if quick:
        layers = ['lint', 'unit', 'ros']
        ros_names = ros_names or list(QUICK_ROSTESTS)
    elif not layers:
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
        totals['py38-pytest'] = py38_run(pytest_args)
    if 'ros' in layers:
        totals['rostest'] = ros(ros_names)
    if 'sets' in layers:
        totals['sets'] = check_layer('sets', 'test/sets/sets_check.py')
    if 'nonroot' in layers:
        totals['nonroot'] = check_layer('nonroot', 'test/nonroot/nonroot_check.py')
    if 'system' in layers:
        totals['system'] = unit(pytest_args, 'test/system', 'system.log')
    if 'install' in layers:
        totals['install'] = check_layer('install', 'test/install/install_check.py')
    print()
    for k, (p, f, s) in totals.items():
        print('  %-12s %d passed, %d failed, %d skipped' % (k, p, f, s))
    p = sum(v[0] for v in totals.values())
    f = sum(v[1] for v in totals.values())
    s = sum(v[2] for v in totals.values())
    if FAILED:
        print(f'\nwhat failed (full logs in {RESULTS}):')
        for layer, text in FAILED:
            print(f'  [{layer}] {text}')
    if NOTES:
        print('\nwhat did not run:')
        for layer, text in NOTES:
            print(f'  [{layer}] {text}')
    print('time: %.0f s' % (time.monotonic() - started))
    print('summary: %d passed, %d failed, %d skipped%s' % (p, f, s, ' (--quick: lint, unit, %s; not the full '
                                                            'suite)' % ', '.join(ros_names) if quick else ''))
    return 0 if f == 0 and p > 0 else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
