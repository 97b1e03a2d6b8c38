"""Every command the docs show can be typed as written: each `rosrun`, `roslaunch`, `rostest`,
`python3 -m`, `python3 tools/...` and `python3 bench/...` line in README.md and docs/*.md (fenced blocks
and inline code, also behind `flock FILE` or `setpriv ...`) names an existing package, executable,
launch file, test file, script or module, and every argument it passes (`name:=`, `_param:=`,
`--option`) is one that launch file, node or program declares."""
import functools
import glob
import importlib.util
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import helpers
import ros_imports

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
    """[(line, fenced)]: the lines of fenced code blocks (True), and every inline code span (False)."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.strip().startswith('```'):
            fenced = not fenced
            continue
        if fenced:
            out.append((line, True))
    # inline spans, also those a line break splits (not across paragraphs)
    spans = re.findall(r'`([^`]+)`', re.sub(r'```.*?```', '', text, flags=re.S))
    out += [(' '.join(s.split()), False) for s in spans if '\n\n' not in s]
    return out


def command_parts(pattern):
    """[(doc, match, args, fenced)] of every piece of a code line of the docs (split at &&, ;, |, $( ) that
    ``pattern`` matches; its last group is the rest of the command, of which ``args`` are the words before
    the first placeholder (`<vehicle>`, `[...]`, `...`, a quoted or shell-expanded word)."""
    found = []
    for doc in DOCS:
        with open(os.path.join(ROOT, doc)) as f:
            text = f.read()
        for line, fenced in code_lines(text):
            line = line.split('  #')[0].split(' # ')[0].strip()
            for part in re.split(r'\s*(?:&&|;|\||\$\()\s*', line):
                m = pattern.match(part.strip())
                if not m:
                    continue
                args = []
                for a in m.group(m.re.groups).split():
                    if a.startswith(('<', '[', '...', '$', '"', "'", '`')) or a in ('\\', '&', ')'):
                        break
                    args.append(a)
                found.append((doc, m, args, fenced))
    return found


def commands():
    """[(doc, tool, [args])] of every rosrun, roslaunch, rostest and python3 command the docs show."""
    found = []
    for doc, m, args, _ in command_parts(TOOL):
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
    return _help_text(tuple(argv))


@functools.lru_cache(maxsize=None)
def _help_text(argv):
    argv = list(argv)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, 'src') + os.pathsep + os.environ.get('PYTHONPATH', ''))
    p = subprocess.run([sys.executable] + argv + ['--help'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=env, timeout=60, cwd=ROOT)
    text = p.stdout.decode('utf-8', 'replace')
    if p.returncode != 0:
        ros_imports.skip_if_this_python_lacks_a_module(text)
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
    # every documented node and program answers --help at once (a node: its parameters, without a master)
    assert 'usage' in help_text([script]).lower(), f'rosrun {package} {executable} --help prints no usage'
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


# ------------------------------------------------------------- the project's own programs, as the docs run them

#: a program of tools/, bench/ or fuzz/, run as the docs write it: `bash X.sh`, `python3 X.py`, `./X`, or X alone
SCRIPT = re.compile(r'^' + WRAPPERS + r'(?:[A-Z_]+=\S*\s+)*(bash\s+|(?:/usr/bin/)?python3\s+|\./)?'
                    r'((?:tools|bench|fuzz)/[\w.-]+\.(?:py|sh))(?=\s|$)(.*)$')
#: programs the history sections of docs/benchmarks.md still name, gone since (and what replaced them)
GONE = {'bench/check_convert.py': 'test/unit/convert_cases.py (issue 25)'}


def script_mentions():
    """[(doc, how, path, args, is_command)]: every tools/ bench/ fuzz/ program the docs name in code. A
    mention is a command when it has an interpreter in front, arguments after, or stands in a fenced block;
    a bare path in running text is a reference to the file."""
    return [(doc, (m.group(1) or '').strip(), m.group(2), args, bool(m.group(1) or args or fenced))
            for doc, m, args, fenced in command_parts(SCRIPT)]


MENTIONS = script_mentions()
COMMAND_MENTIONS = [m for m in MENTIONS if m[4] and m[2] not in GONE]
PROGRAMS = sorted({path for _, _, path, _, _ in COMMAND_MENTIONS})
#: wrappers that hand their options to a program (their --help prints their own comment, not its options)
FORWARDS = {'bench/run.sh': 'bench/run.py', 'tools/soak.sh': 'tools/soak.py'}


def test_the_docs_name_programs_of_every_folder():
    """(Every program answers --help at once: test_program_help.py; here, what the docs run.)"""
    assert {p.split('/')[0] for p in PROGRAMS} == {'tools', 'bench', 'fuzz'}, PROGRAMS
    assert len(COMMAND_MENTIONS) > 40


@pytest.mark.parametrize('doc, how, path, args, command', MENTIONS,
                         ids=[f'{d}: {h} {p} {" ".join(a)}' for d, h, p, a, _ in MENTIONS])
def test_every_program_the_docs_name_exists(doc, how, path, args, command):
    if path in GONE:
        assert not command, f'{doc} runs {path}, which is gone ({GONE[path]})'
        with open(os.path.join(ROOT, 'docs', 'benchmarks.md')) as f:
            assert f'`{path}` |' not in f.read(), f'the Files table of docs/benchmarks.md still lists {path}'
        return
    assert os.path.isfile(os.path.join(ROOT, path)), f'{doc} names {path}: no such file'


BARE = [m for m in COMMAND_MENTIONS if m[1] in ('', './')]


@pytest.mark.parametrize('doc, how, path, args, command', BARE,
                         ids=[f'{d}: {p} {" ".join(a)}' for d, h, p, a, _ in BARE])
def test_a_program_run_by_its_path_is_executable(doc, how, path, args, command):
    """`tools/msg_sets.py which x.bag` as the README writes it: the file must be executable and say its
    interpreter (issue 48: it was committed 100644, and the user got 'Permission denied')."""
    full = os.path.join(ROOT, path)
    assert os.access(full, os.X_OK), f'{doc} runs {path} by its path, but it is not executable (git update-index ' \
                                     f'--chmod=+x {path})'
    with open(full, 'rb') as f:
        first = f.readline()
    assert first.startswith(b'#!'), f'{path} has no #! line'
    if path.endswith('.py'):
        assert first.strip() == b'#!/usr/bin/python3', \
            f'{path}: #!/usr/bin/python3 (the ROS modules are Debian\'s; another python3 may come first on PATH)'


@functools.lru_cache(maxsize=None)
def program_help(path, *pre):
    """Output of `PROGRAM [pre...] --help`, which must exit 0 at once without doing its work."""
    argv = (['bash', path] if path.endswith('.sh') else [sys.executable, path]) + list(pre) + ['--help']
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, 'src') + os.pathsep + os.environ.get('PYTHONPATH', ''))
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=60, cwd=ROOT)
    text = p.stdout.decode('utf-8', 'replace')
    if p.returncode != 0:
        ros_imports.skip_if_this_python_lacks_a_module(text)
    assert p.returncode == 0, '%s --help: exit %d\n%s' % (' '.join(argv[1:]), p.returncode, text[-2000:])
    return text


OPTION_MENTIONS = [m for m in COMMAND_MENTIONS if any(a.startswith('-') for a in m[3]) and m[2] != 'tools/dev.sh']


@pytest.mark.parametrize('doc, how, path, args, command', OPTION_MENTIONS,
                         ids=[f'{d}: {p} {" ".join(a)}' for d, h, p, a, _ in OPTION_MENTIONS])
def test_the_options_the_docs_pass_exist(doc, how, path, args, command):
    """Each `--option` a documented command passes is in the program's --help (of its subcommand, when
    the first argument is one)."""
    words = [a for a in args if not a.startswith('-')]
    path = FORWARDS.get(path, path)
    text = program_help(path)
    sub = words[:1] if words and re.search(r'\{[^}]*\b%s\b[^}]*\}' % re.escape(words[0]), text) else []
    if sub:
        text = program_help(path, *sub)
    for o in [a.split('=')[0] for a in args if a.startswith('-')]:
        assert re.search(rf'(^|[\s,\[]){re.escape(o)}\b', text), f"{path} {' '.join(sub)} takes no option {o}"


DEV_SH = [m for m in COMMAND_MENTIONS if m[2] == 'tools/dev.sh']


def dev_sh_subcommands():
    with open(os.path.join(ROOT, 'tools', 'dev.sh')) as f:
        return set(re.findall(r'^  ([a-z-]+)\)', f.read(), re.M))


@pytest.mark.parametrize('doc, how, path, args, command', DEV_SH,
                         ids=[f'{d}: {p} {" ".join(a)}' for d, h, p, a, _ in DEV_SH])
def test_dev_sh_as_documented(doc, how, path, args, command):
    """`bash tools/dev.sh SUB ...`: SUB is one of its subcommands, and the demo's NAME:=VALUE arguments
    are demo.launch's."""
    if not args:
        return
    assert args[0] in dev_sh_subcommands(), f'tools/dev.sh has no subcommand {args[0]}'
    if args[0] in ('demo', 'snapshot'):
        declared = launch_args(os.path.join(ROOT, 'launch', 'demo.launch'))
        for a in args[1:]:
            if ':=' in a:
                assert a.split(':=')[0] in declared, f"demo.launch has no arg {a.split(':=')[0]}"


def test_dev_sh_demo_help_lists_every_demo_argument_without_building():
    """`bash tools/dev.sh demo --help` (issue 48): the demo's arguments, each with its default and doc, read
    from launch/demo.launch, and nothing set up or built (it answers at once, even on a fresh machine)."""
    root = ET.parse(os.path.join(ROOT, 'launch', 'demo.launch')).getroot()
    text = program_help('tools/dev.sh', 'demo')
    assert text.startswith('usage: bash tools/dev.sh demo'), text[:200]
    assert '[dev.sh]' not in text, 'it set up or built something'
    for a in root.findall('arg'):
        if 'default' in a.attrib:
            assert f"  {a.get('name')}:={a.get('default')}\n" in text, a.get('name')
            assert ' '.join(a.get('doc').split()[:4]) in ' '.join(text.split()), a.get('name')
