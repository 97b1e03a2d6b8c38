"""Import direction between the layers of morai_bridge, checked on the source.

    wire           pure codecs and protocol facts             imports: wire
    kinematics     vehicle motion models (dead reckoning)      imports: wire, kinematics
    configuration  Param tables, version / vehicle profiles,   imports: wire, configuration
                   MORAI SIM's saved settings
    link           sockets, serial port, worker supervision   imports: wire, link
    emu            emulators of the simulator and the PCU      imports: wire, configuration, link, emu
    tools          morai_udp_dump, morai_check_signs (no ROS)  imports: wire, configuration, link, tools
    ros            everything that touches rospy / messages    imports: wire, kinematics, configuration, link, ros
    nodes          one main() per node                         imports: ros, wire, configuration, link, emu

and wire, kinematics, configuration, link, emu and tools never import ROS (checked statically and by
importing them).
"""
import ast
import os
import pkgutil
import subprocess
import sys

import pytest

import helpers

ROOT = helpers.ROOT
SRC = os.path.join(ROOT, 'src')
PKG = os.path.join(SRC, 'morai_bridge')
ROS_MODULES = ('rospy', 'genpy', 'roslib', 'rosgraph', 'rosgraph_msgs', 'std_msgs', 'geometry_msgs', 'morai_msgs',
               'sensor_msgs', 'nav_msgs', 'diagnostic_msgs', 'diagnostic_updater', 'tf2_ros', 'tf2_msgs',
               'visualization_msgs', 'roslaunch', 'rostopic')

# module prefix (dotted, below morai_bridge) -> layer
LAYER_OF = (
    ('wire', 'wire'),
    ('kinematics', 'kinematics'),
    ('configuration', 'configuration'),
    ('link', 'link'),
    ('emu', 'emu'),
    ('dump', 'tools'), ('selftest', 'tools'),
    ('ros', 'ros'),
    ('nodes', 'nodes'),
)
ALLOWED = {
    'wire': {'wire'},
    'kinematics': {'wire', 'kinematics'},
    'configuration': {'wire', 'configuration'},
    'link': {'wire', 'link'},
    'emu': {'wire', 'configuration', 'link', 'emu'},
    'tools': {'wire', 'configuration', 'link', 'tools'},
    'ros': {'wire', 'kinematics', 'configuration', 'link', 'ros'},
    'nodes': {'ros', 'wire', 'configuration', 'link', 'emu'},
}
ROS_FREE = ('wire', 'kinematics', 'configuration', 'link', 'emu', 'tools')


def layer(dotted):
    """Layer of 'morai_bridge.x.y' (None for the package itself)."""
    parts = dotted.split('.')
    assert parts[0] == 'morai_bridge', dotted
    if len(parts) == 1:
        return None
    for prefix, name in LAYER_OF:
        if parts[1] == prefix:
            return name
    raise AssertionError(f'module {dotted} belongs to no layer: add it to LAYER_OF in {__file__}')


def source_modules():
    out = []
    for dirpath, _, files in os.walk(PKG):
        for f in files:
            if f.endswith('.py'):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, SRC)[:-3].replace(os.sep, '.')
                if rel.endswith('.__init__'):
                    rel = rel[:-9]
                out.append((rel, path, f == '__init__.py'))
    return sorted(out)


def imports_of(dotted, path, is_pkg):
    tree = ast.parse(open(path).read(), path)
    here = dotted.split('.') if is_pkg else dotted.split('.')[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                mod = '.'.join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            yield mod, node.lineno
            for a in node.names:      # 'from morai_bridge.wire import udp' imports morai_bridge.wire.udp
                yield mod + '.' + a.name, node.lineno


MODULES = source_modules()


@pytest.mark.parametrize('dotted,path,is_pkg', MODULES, ids=[m[0] for m in MODULES])
def test_import_direction(dotted, path, is_pkg):
    mine = layer(dotted)
    if mine is None:
        return
    bad = []
    for mod, line in imports_of(dotted, path, is_pkg):
        top = mod.split('.')[0]
        if top == 'morai_bridge':
            other = layer(mod) if mod != 'morai_bridge' else None
            if other is not None and other not in ALLOWED[mine]:
                bad.append('line %d: %s (%s) imports %s (%s)' % (line, dotted, mine, mod, other))
        elif mine in ROS_FREE and top in ROS_MODULES:
            bad.append('line %d: %s (%s, must not need ROS) imports %s' % (line, dotted, mine, mod))
    assert not bad, '\n'.join(bad)


def test_the_checker_sees_a_violation(tmp_path):
    """A wire module importing the ROS layer is reported (the check can fail)."""
    f = tmp_path / 'bad.py'
    f.write_text('from morai_bridge.ros.udp_bridge import sim_to_ros\nimport rospy\n')
    found = list(imports_of('morai_bridge.wire.bad', str(f), False))
    assert ('morai_bridge.ros.udp_bridge.sim_to_ros', 1) in found
    assert layer('morai_bridge.ros.udp_bridge.sim_to_ros') not in ALLOWED['wire']
    assert ('rospy', 2) in found


def test_relative_imports_resolve():
    f = os.path.join(PKG, 'wire', 'udp', '__init__.py')
    mods = {m for m, _ in imports_of('morai_bridge.wire.udp', f, True)}
    assert 'morai_bridge.wire.udp.schema' in mods
    f = os.path.join(PKG, 'wire', 'udp', 'layouts.py')
    mods = {m for m, _ in imports_of('morai_bridge.wire.udp.layouts', f, False)}
    assert {'morai_bridge.wire.udp.schema', 'morai_bridge.wire.enums'} <= mods


def test_the_rooms_are_walked_and_take_their_package_s_layer():
    """A sub-package (a room: ros/udp_bridge/, wire/udp/, ...) is in the layer of its top-level package, and
    its modules are among those checked."""
    dotted = {m[0] for m in MODULES}
    rooms = sorted({m.rsplit('.', 1)[0] for m in dotted if m.count('.') >= 3})
    assert {'morai_bridge.ros.udp_bridge', 'morai_bridge.ros.sensors', 'morai_bridge.wire.udp',
            'morai_bridge.wire.erp42'} <= set(rooms), rooms
    for room in rooms:
        top = '.'.join(room.split('.')[:2])
        assert layer(room) == layer(top), room
    assert 'morai_bridge.ros.udp_bridge.sim_receive' in dotted
    assert layer('morai_bridge.ros.udp_bridge.sim_receive') == 'ros'
    assert layer('morai_bridge.wire.udp.codec') == 'wire'


def _modules(pkg):
    base = os.path.join(SRC, *pkg.split('.'))
    return [pkg] + [m.name for m in pkgutil.walk_packages([base], pkg + '.')]


def test_ros_free_layers_import_without_ros():
    mods = [m for m in _modules('morai_bridge.wire') + _modules('morai_bridge.kinematics')
            + _modules('morai_bridge.configuration') + _modules('morai_bridge.emu') + _modules('morai_bridge.link')
            + _modules('morai_bridge.dump') + _modules('morai_bridge.selftest')
            if not m.endswith('.__main__')]     # __main__ runs the tool
    code = (
        'import importlib, sys\n'
        'for m in %r: importlib.import_module(m)\n'
        'bad = sorted(k for k in sys.modules if k.split(".")[0] in %r)\n'
        'print(",".join(bad))\n' % (mods, ROS_MODULES))
    env = dict(os.environ, PYTHONPATH=SRC)
    out = subprocess.run([sys.executable, '-c', code], env=env, check=True,
                         capture_output=True, text=True).stdout.strip()
    assert out == '', 'ROS modules pulled in by the ROS-free layers: ' + out


# ----------------------------------------------------------------------------- the tests of the wire layer

UNIT = os.path.join(ROOT, 'test', 'unit')
ROS_FREE_TESTS = ('wire',)      # test/unit/<folder>/ whose tests must run without ROS


def ros_imports_of_test(path, seen=None):
    """['file line N: imports X'] for every ROS module a test file imports, directly or through a
    shared helper of test/unit/ it imports by its plain name (velodyne_reference, helpers, ...)."""
    seen = set() if seen is None else seen
    if path in seen:
        return []
    seen.add(path)
    found = []
    for mod, line in imports_of('test', path, False):
        if mod is None:
            continue
        top = mod.split('.')[0]
        if top in ROS_MODULES:
            found.append('%s line %d: imports %s' % (os.path.relpath(path, ROOT), line, mod))
        helper = os.path.join(UNIT, top + '.py')
        if os.path.isfile(helper):
            found += ros_imports_of_test(helper, seen)
    return found


def _tests_of(folder):
    out = []
    for dirpath, dirs, files in os.walk(os.path.join(UNIT, folder)):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        out += [os.path.join(dirpath, f) for f in sorted(files) if f.endswith('.py')]
    return out


WIRE_TESTS = [p for folder in ROS_FREE_TESTS for p in _tests_of(folder)]


@pytest.mark.parametrize('path', WIRE_TESTS, ids=[os.path.relpath(p, UNIT) for p in WIRE_TESTS])
def test_wire_tests_import_no_ros(path):
    """test/unit/wire/ tests the ROS-free codec: none of its files imports rospy or a message package
    (a check that needs ROS belongs in test/unit/ros/)."""
    bad = ros_imports_of_test(path)
    assert not bad, 'move the ROS-dependent test to test/unit/ros/:\n  ' + '\n  '.join(bad)


def test_the_wire_test_checker_sees_a_violation(tmp_path):
    f = tmp_path / 'bad_wire_test.py'
    f.write_text('import numpy\nfrom helpers import ROOT\nimport roslib.message\n')
    assert ros_imports_of_test(str(f)) == ['%s line 3: imports roslib.message' % os.path.relpath(str(f), ROOT)]
