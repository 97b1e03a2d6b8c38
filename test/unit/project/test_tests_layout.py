"""The unit tests mirror the code (docs/architecture.md, "Tests").

* test/unit/<package>/ exists only for a package of src/morai_bridge/ (wire/velodyne/ for
  wire/velodyne/, ...), except test/unit/project/: the checks of the repository as a whole (docs,
  launch files, layering, tools, the package manifest), which belong to no module.
* Every test file there is named after a module of that package: test_<module>.py, or
  test_<module>_<topic>.py when one module's tests are in several files.  A subpackage counts as a
  module of its parent (wire/test_velodyne.py tests the package morai_bridge.wire.velodyne).
* No test file directly in test/unit/: only the shared helper modules and conftest.py.
* Every folder is a package (__init__.py): two folders may hold files of the same name.
* A test file the repository names (test/unit/..., or a bare test_*.py) exists."""
import os
import re

import helpers

ROOT = helpers.ROOT
UNIT = os.path.join(ROOT, 'test', 'unit')
SRC = os.path.join(ROOT, 'src', 'morai_bridge')
PROJECT = 'project'


def folders():
    """(relative folder, [test files]) of every folder below test/unit."""
    out = []
    for dirpath, dirs, files in os.walk(UNIT):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__' and not d.startswith('.'))
        rel = os.path.relpath(dirpath, UNIT)
        out.append(('' if rel == '.' else rel, sorted(f for f in files if re.match(r'test_\w+\.py$', f))))
    return out


def modules_of(package_dir):
    """Names of the modules and subpackages of a source package."""
    names = set()
    for f in os.listdir(package_dir):
        p = os.path.join(package_dir, f)
        if f.endswith('.py') and f not in ('__init__.py', '__main__.py'):
            names.add(f[:-3])
        elif os.path.isfile(os.path.join(p, '__init__.py')):
            names.add(f)
    return names


def module_named(test_file, modules):
    """The module a test file is named after (the longest that fits), or None."""
    stem = test_file[len('test_'):-len('.py')]
    fits = [m for m in modules if stem == m or stem.startswith(m + '_')]
    return max(fits, key=len) if fits else None


def test_the_rule_finds_a_module_or_none():
    modules = {'udp', 'udp_codec', 'erp42', 'velodyne'}
    assert module_named('test_udp_codec.py', modules) == 'udp_codec'
    assert module_named('test_udp_api.py', modules) == 'udp'
    assert module_named('test_velodyne.py', modules) == 'velodyne'
    assert module_named('test_erp42x.py', modules) is None
    assert module_named('test_supervise.py', modules) is None


def test_no_test_file_outside_a_package_folder():
    top = dict(folders())['']
    assert top == [], f'test files directly in test/unit/ (put each in test/unit/<package>/): {top}'


def test_every_folder_mirrors_a_source_package():
    for rel, _ in folders():
        if rel in ('', PROJECT):
            continue
        assert os.path.isfile(os.path.join(SRC, rel, '__init__.py')), \
            f'test/unit/{rel}/ mirrors no package: there is no src/morai_bridge/{rel}/'


def test_every_folder_is_a_package():
    for rel, _ in folders():
        assert os.path.isfile(os.path.join(UNIT, rel, '__init__.py')), f'test/unit/{rel} has no __init__.py'


def test_every_test_file_is_named_after_a_module_of_its_package():
    wrong = []
    for rel, files in folders():
        if rel in ('', PROJECT):
            continue
        modules = modules_of(os.path.join(SRC, rel))
        wrong += [f'test/unit/{rel}/{f}' for f in files if module_named(f, modules) is None]
    assert not wrong, 'named after no module of their package (test_<module>.py or test_<module>_<topic>.py): %s' \
        % ', '.join(wrong)


def cited_test_files():
    """(file:line, cited path or name) of every test file the repository's text names."""
    files = []
    for dirpath, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith('.') and d not in ('__pycache__', 'out')]
        files += [os.path.relpath(os.path.join(dirpath, n), ROOT) for n in names]
    out = []
    for f in files:
        if not f.endswith(('.md', '.py', '.txt', '.yaml', '.launch', '.bmr', '.sh', '.test')) \
                and f != 'CMakeLists.txt' and not f.startswith('scripts/'):
            continue
        if f in ('test/unit/project/test_run_tests.py', 'test/unit/project/test_tests_layout.py'):   # made-up names
            continue
        try:
            with open(os.path.join(ROOT, f), encoding='utf-8') as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError):
            continue
        for k, line in enumerate(text.splitlines(), 1):
            for m in re.finditer(r'(?<![\w/.-])((?:test/[\w./*-]*/)?test_[\w*]+\.py)\b', line):
                out.append(('%s:%d' % (f, k), m.group(1)))
    return out


def test_the_test_files_the_repository_names_exist():
    names = set()
    for dirpath, _, files in os.walk(os.path.join(ROOT, 'test')):
        names.update(files)
    missing = []
    for where, cited in cited_test_files():
        if '/' in cited:
            pattern = '^%s$' % re.escape(cited).replace(r'\*', r'[^/]*')
            found = any(re.match(pattern, os.path.relpath(os.path.join(d, f), ROOT))
                        for d, _, fs in os.walk(os.path.join(ROOT, 'test')) for f in fs)
        else:
            pattern = '^%s$' % re.escape(cited).replace(r'\*', r'\w*')
            found = any(re.match(pattern, n) for n in names)
        if not found:
            missing.append(f'{where} names {cited}')
    assert not missing, 'no such test file:\n  ' + '\n  '.join(missing)
