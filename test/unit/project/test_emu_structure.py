"""The emulators' structure (docs/architecture.md, "Where to add things"; issue 49): every module of
emu/ reaches into no other object's private names (``x._name`` only on ``self`` or ``cls``), no
class of emu/ is built on another project class (no mixins sharing one object's state across
modules), the modules of emu/ import one another without a circle, and no module of
src/morai_bridge/ is longer than 600 lines."""
import ast
import os

import pytest

import helpers
from .test_layering import PKG, imports_of, source_modules

#: the methods and fields Python gives every NamedTuple: public in spite of their underscore
NAMEDTUPLE = {'_replace', '_fields', '_asdict', '_make', '_field_defaults'}
MAX_LINES = 600

EMU = [m for m in source_modules() if m[0] == 'morai_bridge.emu' or m[0].startswith('morai_bridge.emu.')]


def private_reaches(path):
    """['line N: expr'] for every ``x._name`` in a file whose ``x`` is not ``self`` or ``cls``."""
    out = []
    for node in ast.walk(ast.parse(open(path).read(), path)):
        if isinstance(node, ast.Attribute) and node.attr.startswith('_') and not node.attr.startswith('__') \
                and node.attr not in NAMEDTUPLE:
            if isinstance(node.value, ast.Name) and node.value.id in ('self', 'cls'):
                continue
            owner = node.value.id if isinstance(node.value, ast.Name) else type(node.value).__name__
            out.append(f'line {node.lineno}: {owner}.{node.attr}')
    return out


@pytest.mark.parametrize('dotted,path,is_pkg', EMU, ids=[m[0] for m in EMU])
def test_no_emu_module_reaches_into_private_names(dotted, path, is_pkg):
    bad = private_reaches(path)
    assert not bad, f'{dotted} uses private names of other objects (make them public or ask a method):\n  ' \
        + '\n  '.join(bad)


def test_the_private_check_sees_a_reach(tmp_path):
    f = tmp_path / 'bad.py'
    f.write_text('def f(world, self):\n    world._ego.x = 1\n    self._ok = 2\n    return t._replace(a=1)\n')
    assert [b.split(':')[0] for b in private_reaches(str(f))] == ['line 2']


def project_classes():
    """Names of the classes defined in src/morai_bridge/."""
    names = set()
    for _, path, _ in source_modules():
        names |= {n.name for n in ast.walk(ast.parse(open(path).read(), path)) if isinstance(n, ast.ClassDef)}
    return names


def test_no_emu_class_is_a_mixin_of_another():
    """An emulator class holds its parts (a World, a LockStep, Faults) instead of inheriting them."""
    ours = project_classes()
    bad = []
    for dotted, path, _ in EMU:
        for node in ast.walk(ast.parse(open(path).read(), path)):
            if isinstance(node, ast.ClassDef):
                bases = [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ''
                         for b in node.bases]
                bad += [f'{dotted}.{node.name}({b})' for b in bases if b in ours]
    assert not bad, 'emu classes built on project classes: ' + ', '.join(bad)


def import_graph(modules):
    """{module: modules of the same set it imports} ('from . import x' imports x, not the package)."""
    known = {m[0] for m in modules}
    graph = {}
    for dotted, path, is_pkg in modules:
        deps = set()
        for mod, _ in imports_of(dotted, path, is_pkg):
            if mod in known and mod != dotted:
                deps.add(mod)
        # 'from .sub import name' also yields 'package.sub.name': keep only real modules (done above), and
        # drop the package a 'from . import x' names when x is a module
        graph[dotted] = deps
    for dotted, deps in graph.items():
        for d in list(deps):
            if any(o.startswith(d + '.') for o in deps):
                deps.discard(d)
    return graph


def circles(graph):
    """The import circles of a graph, each as a list of modules (empty: none)."""
    found, state = [], {}

    def visit(m, stack):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                found.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d, stack)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
    return found


def test_the_emulators_import_without_a_circle():
    graph = import_graph(EMU)
    assert 'morai_bridge.emu.sim.world' in graph['morai_bridge.emu.sim.emulator']
    found = circles(graph)
    assert not found, 'import circles in emu/: ' + '; '.join(' -> '.join(c) for c in found)


def test_the_circle_check_sees_one():
    assert circles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) == [['a', 'b', 'c', 'a']]
    assert circles({'a': {'b'}, 'b': set()}) == []


def test_no_module_is_longer_than_600_lines():
    long = []
    for dotted, path, _ in source_modules():
        with open(path, encoding='utf-8') as f:
            n = sum(1 for _ in f)
        if n > MAX_LINES:
            long.append(f'{os.path.relpath(path, helpers.ROOT)}: {n} lines')
    assert not long, f'modules over {MAX_LINES} lines (split them by job): ' + ', '.join(long)


def test_every_emu_room_is_a_package_in_setup_py():
    with open(os.path.join(helpers.ROOT, 'setup.py')) as f:
        text = f.read()
    rooms = [d for d in sorted(os.listdir(os.path.join(PKG, 'emu'))) if os.path.isfile(os.path.join(PKG, 'emu', d, '__init__.py'))]
    assert rooms == ['pcu', 'sensors', 'sim']
    missing = [r for r in rooms if f"'morai_bridge.emu.{r}'" not in text]
    assert not missing, f'setup.py does not list morai_bridge.emu.{missing}'
