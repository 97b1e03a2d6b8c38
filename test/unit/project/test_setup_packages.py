"""setup.py lists every Python package under src/ (a missing one is absent from the install space)."""
import ast
import os

import helpers

ROOT = helpers.ROOT


def listed_packages():
    tree = ast.parse(open(os.path.join(ROOT, 'setup.py')).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == 'packages':
            return {e.value for e in node.value.elts}
    raise AssertionError('setup.py has no packages=[...]')


def source_packages():
    src = os.path.join(ROOT, 'src')
    out = set()
    for dirpath, _, files in os.walk(src):
        if '__init__.py' in files:
            out.add(os.path.relpath(dirpath, src).replace(os.sep, '.'))
    return out


def test_every_package_is_listed():
    missing = source_packages() - listed_packages()
    assert not missing, f'add to setup.py packages: {sorted(missing)}'


def test_no_listed_package_is_missing():
    assert listed_packages() <= source_packages()
