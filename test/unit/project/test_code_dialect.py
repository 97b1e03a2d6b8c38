"""One code dialect across the packages (docs/architecture.md, "Code dialect"): Python 3.8 as it is
written today, whatever the package.  Read from the syntax tree of every Python file in the repository:
no class derives from ``object`` explicitly, no ``super(Class, self)``, no ``dict((key, value) for ...)``
(a comprehension), no ``str.format`` on a literal (an f-string), no ``from __future__``."""
import ast
import os
import subprocess

import pytest

from helpers import ROOT


def python_files():
    out = subprocess.run(['git', 'ls-files', '*.py'], cwd=ROOT, stdout=subprocess.PIPE, check=True,
                         universal_newlines=True).stdout.split()
    return [f for f in out if not f.startswith('test/data/')]


def old_forms(tree):
    """(line, what) of every construct the dialect replaced."""
    for n in ast.walk(tree):
        if isinstance(n, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == 'object' for b in n.bases):
            yield n.lineno, 'class %s(object): write class %s:' % (n.name, n.name)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            if n.func.id == 'super' and n.args:
                yield n.lineno, 'super(Class, self): write super()'
            elif (n.func.id == 'dict' and len(n.args) == 1 and not n.keywords
                  and isinstance(n.args[0], ast.GeneratorExp) and isinstance(n.args[0].elt, ast.Tuple)
                  and len(n.args[0].elt.elts) == 2):
                yield n.lineno, 'dict((key, value) for ...): write a dict comprehension'
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == 'format' \
                and isinstance(n.func.value, ast.Constant) and isinstance(n.func.value.value, str):
            yield n.lineno, '"...".format(): write an f-string'
        elif isinstance(n, ast.ImportFrom) and n.module == '__future__':
            yield n.lineno, 'from __future__: not needed on Python 3.8'


def test_the_checker_finds_each_old_form():
    sample = ('from __future__ import print_function\n'
              'class A(object):\n    def f(self):\n        return super(A, self).f()\n'
              'x = dict((k, 1) for k in "ab")\ny = "{}".format(x)\n')
    assert len(list(old_forms(ast.parse(sample)))) == 5
    assert list(old_forms(ast.parse('class A:\n    pass\nx = {k: 1 for k in "ab"}\ny = f"{x}"\n'))) == []


@pytest.mark.parametrize('path', python_files())
def test_one_dialect(path):
    with open(os.path.join(ROOT, path), 'rb') as f:
        tree = ast.parse(f.read(), path)
    found = ['%s:%d: %s' % (path, line, what) for line, what in old_forms(tree)]
    assert not found, '\n'.join(found)


def argparse_imports(tree):
    """Lines that import argparse (``import argparse``, ``from argparse import ...``)."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Import) and any(a.name == 'argparse' for a in n.names):
            yield n.lineno
        elif isinstance(n, ast.ImportFrom) and n.module == 'argparse':
            yield n.lineno


def test_options_are_declared_one_way():
    """Every program's command line is a table of Params (issue 42 item 3): argparse is imported by
    src/morai_bridge/configuration/params.py alone (and its own tests, which hand add_options a parser), in
    the package, the tools, the benches and the tests' helpers alike."""
    assert list(argparse_imports(ast.parse('import os, argparse\nfrom argparse import Action\n'))) == [1, 2]
    found = []
    for path in python_files():
        if path in ('src/morai_bridge/configuration/params.py', 'test/unit/configuration/test_params.py'):
            continue
        with open(os.path.join(ROOT, path), encoding='utf-8') as f:
            found += [f'{path}:{line}' for line in argparse_imports(ast.parse(f.read(), path))]
    assert not found, 'argparse outside configuration/params.py (declare Params instead): ' + ', '.join(found)
