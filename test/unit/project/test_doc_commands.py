"""Every command the docs show can be typed as written: each `rosrun`, `roslaunch`, `rostest`,
`python3 -m`, `python3 tools/...` and `python3 bench/...` line in README.md and docs/*.md (fenced blocks
and inline code, also behind `flock FILE` or `setpriv ...`) names an existing package, executable,
launch file, test file, script or module, and every argument it passes (`name:=`, `_param:=`,
`--option`) is one that launch file, node or program declares."""
import glob
import importlib.util
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import helpers

ROOT = helpers.ROOT
DOCS = ['README.md'] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, 'docs', '*.md')))
PACKAGE = 'morai_msgs'
#: other packages the docs run (all from Debian's / ROS's own packages; tools/dev.sh installs rviz)
OTHER_PACKAGES = {'rviz', 'rqt_robot_monitor', 'rqt_image_view', 'image_view', 'rqt_graph', 'tf2_ros', 'tf'}
#: modules run with `python3 -m` that are not ours
OTHER_MODULES = {'pytest', 'venv', 'pip', 'http.server', 'json.tool'}
#: what may come before a command: sudo, the lock the benchmarks run under (`flock FILE`), `setpriv` with its
#: options and values (a run without a capability), environment assignments
WRAPPERS = r'(?:sudo\s+|flock\s+\S+\s+|setpriv\s+(?:--\S+\s+\S+\s+)+)*'
TOOL = re.compile(r'^' + WRAPPERS + r'((?:\S*=\S*\s+)*)(rosrun|roslaunch|rostest|(?:/usr/bin/)?python3 -m|'
                  r'(?:/usr/bin/)?python3(?= (?:tools|bench)/))\s+(.*)$')
#: roslaunch's options that take a value (the others take none)
ROSLAUNCH_VALUE_OPTIONS = {'-p', '--port', '--pid', '--run_id', '--wait-timeout', '-u', '--server_uri', '--args',
                           '--find-node', '--ros-args'}


def code_lines(text):
    """The lines of fenced code blocks, and every inline code span."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.strip().startswith('```'):
            fenced = not fenced
            continue
        if fenced:
            out.append(line)
    # inline spans, also those a line break splits (not across paragraphs)
    spans = re.findall(r'`([^`]+)`', re.sub(r'```.*?```', '', text, flags=re.S))
    out += [' '.join(s.split()) for s in spans if '\n\n' not in s]
    return out


def commands():
    """[(doc, tool, [args])] of every command the docs show; placeholders (`<vehicle>`, `[...]`,
    `...`) end a command's checked arguments."""
    found = []
    for doc in DOCS:
        with open(os.path.join(ROOT, doc)) as f:
            text = f.read()
        for line in code_lines(text):
            line = line.split('  #')[0].split(' # ')[0].strip()
            for part in re.split(r'\s*(?:&&|;|\|)\s*', line):
                m = TOOL.match(part.strip())
                if not m:
                    continue
                args = []
                for a in m.group(3).split():
                    if a.startswith(('<', '[', '...', '$', '"', "'")) or a in ('\\', '&'):
                        break
                    args.append(a)
                tool = m.group(2).strip().split('/')[-1]
                if tool == 'python3 -m' and 'PYTHONPATH=' in m.group(1):
                    tool = 'PYTHONPATH=src python3 -m'
                found.append((doc, tool, args))
    return found


COMMANDS = commands()


def ids(cases):
    return [f"{d}: {t} {' '.join(a)}" for d, t, a in cases]


def launch_args(path):
    return {a.get('name') for a in ET.parse(path).getroot().iter('arg')}


def help_text(argv):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, 'src') + os.pathsep + os.environ.get('PYTHONPATH', ''))
    p = subprocess.run([sys.executable] + argv + ['--help'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=env, timeout=60, cwd=ROOT)
    text = p.stdout.decode('utf-8', 'replace')
    if p.returncode != 0 and "No module named 'rospy'" in text:
        pytest.skip('needs ROS to print its options')
    assert p.returncode == 0, '%s --help: exit %d\n%s' % (' '.join(argv), p.returncode, text[-2000:])
    return text


def node_params(executable):
    spec = importlib.util.find_spec('morai_bridge.nodes.' + executable)
    if spec is None:
        return None
    try:
        module = importlib.import_module('morai_bridge.nodes.' + executable)
    except ImportError as e:
        pytest.skip(f'node module needs ROS: {e}')
    return {p.name for p in getattr(module, 'PARAMS', ())}


def check_options(args, argv):
    options = [a.split('=')[0] for a in args if a.startswith('--')] + [a for a in args if re.match(r'^-[a-zA-Z]$', a)]
    if options:
        text = help_text(argv)
        for o in options:
            assert re.search(rf'(^|[\s,\[]){re.escape(o)}\b', text), f"{' '.join(argv)} takes no option {o}"


def test_commands_behind_a_lock_or_setpriv_are_checked_too():
    for line, tool in (('flock /tmp/morai_heavy.lock /usr/bin/python3 bench/bench_combined.py --cameras 4', 'python3'),
                       ('flock /tmp/x setpriv --bounding-set -net_admin /usr/bin/python3 bench/bench_combined.py',
                        'python3'),
                       ('flock /tmp/morai_heavy.lock bash tools/dev.sh test --quick', None),
                       ('sudo rosrun morai_msgs udp_bridge', 'rosrun')):
        m = TOOL.match(line)
        assert (m.group(2).split('/')[-1] if m else None) == tool, line


def test_the_docs_show_commands():
    tools = {t for _, t, _ in COMMANDS}
    assert {'rosrun', 'roslaunch', 'rostest', 'PYTHONPATH=src python3 -m', 'python3'} <= tools, tools
    assert len(COMMANDS) > 30


@pytest.mark.parametrize('doc, tool, args', [c for c in COMMANDS if c[1] == 'rosrun'],
                         ids=ids([c for c in COMMANDS if c[1] == 'rosrun']))
def test_rosrun(doc, tool, args):
    assert len(args) >= 2, 'rosrun needs a package and an executable'
    package, executable = args[:2]
    if package != PACKAGE:
        assert package in OTHER_PACKAGES, f'rosrun {package}: no such package (ours is {PACKAGE})'
        return
    script = os.path.join(ROOT, 'scripts', executable)
    assert os.access(script, os.X_OK), f'rosrun {package} {executable}: no executable scripts/{executable}'
    private = [a.split(':=')[0][1:] for a in args[2:] if a.startswith('_') and ':=' in a]
    if private:
        declared = node_params(executable)
        assert declared is not None, f'{executable} is not a node: it takes no _param:='
        for name in private:
            assert name in declared, f'{executable} declares no parameter ~{name}'
    check_options(args[2:], [script])


@pytest.mark.parametrize('doc, tool, args', [c for c in COMMANDS if c[1] == 'roslaunch'],
                         ids=ids([c for c in COMMANDS if c[1] == 'roslaunch']))
def test_roslaunch(doc, tool, args):
    while args and args[0].startswith('-'):       # roslaunch's own options
        args = args[2:] if args[0] in ROSLAUNCH_VALUE_OPTIONS else args[1:]
    if args and args[0] != PACKAGE:
        assert args[0].endswith('.launch') and not os.path.exists(os.path.join(ROOT, 'launch', args[0])) or \
            args[0].startswith('-'), 'roslaunch %s: a launch file of this package is run as roslaunch %s %s' % (
                args[0], PACKAGE, args[0])
        return
    assert len(args) >= 2, f'roslaunch {PACKAGE} needs a launch file'
    path = os.path.join(ROOT, 'launch', args[1])
    assert os.path.exists(path), f'roslaunch {PACKAGE} {args[1]}: no launch/{args[1]}'
    declared = launch_args(path)
    for a in args[2:]:
        if ':=' in a:
            assert a.split(':=')[0] in declared, f"{args[1]} has no arg {a.split(':=')[0]}"


@pytest.mark.parametrize('doc, tool, args', [c for c in COMMANDS if c[1] == 'rostest'],
                         ids=ids([c for c in COMMANDS if c[1] == 'rostest']))
def test_rostest(doc, tool, args):
    names = [a for a in args if not a.startswith('-')]
    assert names[:1] == [PACKAGE] and len(names) >= 2, f'rostest {args}: expected rostest {PACKAGE} FILE.test'
    assert glob.glob(os.path.join(ROOT, 'test', '**', names[1]), recursive=True), f'no test file {names[1]}'


PYTHON_TOOLS = [c for c in COMMANDS if c[1] == 'python3']


@pytest.mark.parametrize('doc, tool, args', PYTHON_TOOLS, ids=ids(PYTHON_TOOLS))
def test_python_tool(doc, tool, args):
    """`python3 tools/X.py ...`, `python3 bench/X.py ...`: the script exists and takes the options shown."""
    script = os.path.join(ROOT, args[0])
    assert os.path.isfile(script), f'python3 {args[0]}: no such file'
    check_options(args[1:], [script])


PYTHON_M = [c for c in COMMANDS if c[1].endswith('python3 -m')]


@pytest.mark.parametrize('doc, tool, args', PYTHON_M, ids=ids(PYTHON_M))
def test_python_module(doc, tool, args):
    module = args[0]
    if module in OTHER_MODULES:
        return
    assert module.startswith('morai_bridge.'), f'python3 -m {module}: not a module of this package'
    # in a fresh terminal only PYTHONPATH=src (from the checkout) finds it: rosrun is the way with ROS
    assert tool.startswith('PYTHONPATH='), 'python3 -m %s needs PYTHONPATH=src in front (a fresh terminal has no ' \
        'morai_bridge on its path)' % module
    sys.path.insert(0, os.path.join(ROOT, 'src'))
    try:
        assert importlib.util.find_spec(module) is not None, f'no module {module}'
    finally:
        sys.path.pop(0)
    check_options(args[1:], ['-m', module])
