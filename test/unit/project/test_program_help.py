"""Every program answers --help and does nothing else (issues 48 and 49).

* The Python programs of tools/, bench/ and fuzz/ (a file with a shebang): their command line is a table
  of Params (configuration.params, docs/architecture.md), so ``PROG --help`` prints the usage and exits 0
  at once.  Each runs from a copy of the checkout (src/ and test/ linked), so that what its work would
  write (a test run's .ws/test_results, fuzz/out, launch files, a pty link in the working directory) shows
  as a new file, and in a session of its own, stopped with all it started if it does not end; the
  programs that read sys.argv by hand until issue 48 (some started their work when given --help:
  run_tests.py the test suite, bench_codec.py the benchmark) are also checked for their work's output.
* The shell scripts of tools/, bench/ and fuzz/: ``--help`` / ``-h`` as the first argument prints the
  script's leading comment block without the '#' and exits 0 before anything is done (no build, no apt,
  no root).
"""
import glob
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

import helpers
import ros_imports

ROOT = helpers.ROOT
FOLDERS = ('tools', 'bench', 'fuzz')
#: longest a --help may take (an interpreter start and the imports; a loaded 2-core machine)
HELP_SECONDS = 20.0


def programs(suffix, shebang):
    out = []
    for folder in FOLDERS:
        for path in sorted(glob.glob(os.path.join(ROOT, folder, '*' + suffix))):
            with open(path, 'rb') as f:
                if f.readline().startswith(shebang):
                    out.append(os.path.relpath(path, ROOT))
    return out


PYTHON_PROGRAMS = programs('.py', b'#!/usr/bin/python3')
SHELL_SCRIPTS = programs('.sh', b'#!')
#: the programs that read sys.argv by hand until issue 48 / 49 -> a line their work prints at once (or None)
CONVERTED = {
    'tools/gen_launch.py': None,
    'tools/rosdep_keys.py': r'^# rosdep keys that resolve',
    'tools/run_tests.py': r'^=== ',
    'tools/soak.py': r'^soak: ',
    'bench/bench_codec.py': r'^machine: ',
    'bench/pcu_timed.py': r'^READY$',
    'bench/serial_floor.py': None,
    'bench/velodyne_peer.py': r'^\{"name"',
    'fuzz/run.py': None,
}


def test_the_programs_are_found():
    assert set(CONVERTED) <= set(PYTHON_PROGRAMS), sorted(set(CONVERTED) - set(PYTHON_PROGRAMS))
    assert {'tools/dev.sh', 'tools/demo.sh', 'tools/fresh_debian.sh', 'tools/soak.sh', 'bench/run.sh',
            'fuzz/run.sh'} <= set(SHELL_SCRIPTS), SHELL_SCRIPTS


def files_below(top):
    """Every path below ``top``, links not followed (what a program wrote into its copy)."""
    out = set()
    for dirpath, dirs, files in os.walk(top):
        out.update(os.path.relpath(os.path.join(dirpath, n), top) for n in dirs + files)
    return out


def run(argv, **kw):
    """(exit status, stdout, stderr, seconds) of ``argv``, in a session of its own: a program that started
    its work is stopped after 60 s with everything it started (a test run's rostests, a master)."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, **kw)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail(f"{' '.join(argv)} still runs after 60 s: it started its work")
    return p.returncode, out.decode('utf-8', 'replace'), err.decode('utf-8', 'replace'), time.monotonic() - t0


def checkout_copy(top):
    """A copy of the checkout in ``top`` (src/ and test/ linked; no .git, .ws, outputs) to run a program from."""
    linked = ('src', 'test')

    def ignore(folder, names):
        if os.path.samefile(folder, ROOT):
            return [n for n in names if n.startswith('.') or n in linked]
        return [n for n in names if n in ('__pycache__', 'out')]
    shutil.copytree(ROOT, top, ignore=ignore, dirs_exist_ok=True)
    for name in linked:
        os.symlink(os.path.join(ROOT, name), os.path.join(top, name))


@pytest.mark.parametrize('program', PYTHON_PROGRAMS)
def test_a_program_answers_help_and_does_nothing_else(program, tmp_path):
    folder, name = program.split('/')
    checkout_copy(str(tmp_path))
    before = files_below(str(tmp_path))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE='1')
    if program in CONVERTED:
        env.pop('PYTHONPATH', None)      # they find configuration.params themselves, no ROS needed for --help
    code, out, err, secs = run([sys.executable, str(tmp_path / folder / name), '--help'], cwd=str(tmp_path), env=env)
    if code != 0 and program not in CONVERTED:      # those need nothing for --help
        ros_imports.skip_if_this_python_lacks_a_module(err)
    assert code == 0, f'{program} --help: exit {code}\n{out[-2000:]}\n{err[-2000:]}'
    assert out.startswith(f'usage: {name} '), out[:500]
    assert secs < HELP_SECONDS, f'{program} --help took {secs:.1f} s'
    assert files_below(str(tmp_path)) == before, f'{program} --help wrote files'
    if program in CONVERTED:
        assert err == '', err
        work = CONVERTED[program]
        assert work is None or not re.search(work, out, re.M), f'{program} --help started its work:\n{out[-2000:]}'


def test_run_tests_help_runs_no_layer(tmp_path):
    """tools/run_tests.py --help (as `bash tools/dev.sh test --help` passes it): the usage, and no
    .ws/test_results of a run (it ran the whole suite before)."""
    checkout_copy(str(tmp_path))
    for argv in (['--help'], ['-h'], ['--quick', '--help']):
        code, out, err, _ = run([sys.executable, str(tmp_path / 'tools' / 'run_tests.py')] + argv, cwd=str(tmp_path))
        assert (code, err) == (0, '') and out.startswith('usage: run_tests.py [-h] [--quick] ...'), out + err
        for layer in ('lint', 'unit', 'py38', 'ros', 'sets', 'nonroot', 'system', 'install', '--quick'):
            assert layer in out
        assert not os.path.exists(str(tmp_path / '.ws')), os.listdir(str(tmp_path / '.ws'))


def test_fuzz_run_names_every_target():
    """fuzz/run.py reads its command line before atheris (only fuzz/run.sh's virtual environment has it):
    its help names the targets of fuzz/targets.py, all of them."""
    def load(name, path):
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    path = list(sys.path)
    try:
        fuzz_run = load('fuzz_run', os.path.join(ROOT, 'fuzz', 'run.py'))
        targets = load('fuzz_targets', os.path.join(ROOT, 'fuzz', 'targets.py'))
    finally:
        sys.path[:] = path           # both put fuzz/ and src/ first
    doc = next(p.doc for p in fuzz_run.PARAMS if p.name == 'target')
    named = re.search(r'\(([\w, ]+)\)', doc).group(1).split(', ')
    assert named == list(targets.TARGETS)


def comment_block(path):
    """The lines after the shebang that start with '#', without '#' and one space, up to the first other line."""
    out = []
    with open(path) as f:
        for line in f.read().splitlines()[1:]:
            if not line.startswith('#'):
                break
            out.append(re.sub(r'^# ?', '', line))
    return '\n'.join(out) + '\n'


@pytest.mark.parametrize('script', SHELL_SCRIPTS)
@pytest.mark.parametrize('flag', ['--help', '-h'])
def test_a_shell_script_prints_its_comment_block(script, flag):
    text = comment_block(os.path.join(ROOT, script))
    assert len(text.splitlines()) >= 2
    code, out, err, secs = run(['bash', script, flag], cwd=ROOT)
    # stderr empty: no build ([dev.sh] building ...), no apt, no "needs root"
    assert (code, out, err) == (0, text, ''), f'{script} {flag}'
    assert secs < HELP_SECONDS
