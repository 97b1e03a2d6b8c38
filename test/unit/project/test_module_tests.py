"""Where each module is checked: every module of src/morai_bridge/ (not __init__.py) has a test file of
its own, test/unit/<package>/test_<module>.py or test_<module>_<topic>.py (the rule of
test_tests_layout.py), or an entry in test/module_tests.yaml naming the test files that exercise it
(or, under ``untested``, why none does).  The table stays true: its entries name existing modules and
existing test files."""
import glob
import os

import yaml

import helpers

ROOT = helpers.ROOT
SRC = os.path.join(ROOT, 'src', 'morai_bridge')
TABLE_PATH = os.path.join(ROOT, 'test', 'module_tests.yaml')
TABLE_NAME = 'test/module_tests.yaml'


def load_table():
    with open(TABLE_PATH) as f:
        table = yaml.safe_load(f)
    return table.get('covered') or {}, table.get('untested') or {}


def modules():
    """Paths below src/morai_bridge/ of every module (no __init__.py)."""
    out = []
    for dirpath, dirs, files in os.walk(SRC):
        dirs[:] = [d for d in dirs if d != '__pycache__']
        out += [os.path.relpath(os.path.join(dirpath, f), SRC).replace(os.sep, '/')
                for f in files if f.endswith('.py') and f != '__init__.py']
    return sorted(out)


def own_test_files(module):
    """test/unit/<package>/test_<module>.py and test_<module>_*.py of a module path."""
    package, stem = os.path.split(module[:-3])
    folder = os.path.join(ROOT, 'test', 'unit', package)
    found = glob.glob(os.path.join(folder, f'test_{stem}.py')) + glob.glob(os.path.join(folder, f'test_{stem}_*.py'))
    return sorted(os.path.relpath(p, ROOT) for p in found)


def test_every_module_has_a_test_file_or_an_entry():
    covered, untested = load_table()
    lacking = [m for m in modules() if not own_test_files(m) and m not in covered and m not in untested]
    assert not lacking, (
        'modules without a test file of their own (test/unit/<package>/test_<module>.py) and without an '
        f'entry in {TABLE_NAME}; add under `covered:` the test files that exercise each, e.g.\n  '
        + '\n  '.join(f'{m}: [test/unit/{os.path.dirname(m)}/test_....py]' for m in lacking))


def test_every_entry_names_an_existing_module():
    covered, untested = load_table()
    known = set(modules())
    gone = sorted(m for m in list(covered) + list(untested) if m not in known)
    assert not gone, (f'{TABLE_NAME} names modules that do not exist (moved or removed? update or drop '
                      'the entry): ' + ', '.join(gone))


def test_every_listed_test_file_exists():
    covered, _ = load_table()
    missing = []
    for module, tests in covered.items():
        assert isinstance(tests, list) and tests, f'{TABLE_NAME}: {module} needs a list of test files'
        missing += [f'{module}: {t}' for t in tests if not os.path.isfile(os.path.join(ROOT, t))]
    assert not missing, f'{TABLE_NAME} names test files that do not exist:\n  ' + '\n  '.join(missing)


def test_an_untested_module_says_why():
    _, untested = load_table()
    for module, reason in untested.items():
        assert isinstance(reason, str) and reason.strip(), f'{TABLE_NAME}: untested {module} without a reason'


def test_no_module_is_both_covered_and_untested():
    covered, untested = load_table()
    assert not set(covered) & set(untested)


def test_own_test_files_follow_the_layout_rule():
    assert own_test_files('wire/udp/nmea.py') == ['test/unit/wire/udp/test_nmea.py',
                                                  'test/unit/wire/udp/test_nmea_samples.py']
    assert own_test_files('wire/velodyne/decode.py') == ['test/unit/wire/velodyne/test_decode.py',
                                                         'test/unit/wire/velodyne/test_decode_geometry.py']
    assert own_test_files('emu/sensors/bench.py') == []
