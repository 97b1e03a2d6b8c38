"""Which unit tests need ROS, for the py38 layer (a Python 3.8 venv with PyPI packages, no ROS).

Decided from the code, not from a list of test names, so that the selection follows the tests:

- a test *file* needs ROS when its module-level imports reach a ROS module, directly or through
  the module-level imports of the ``morai_bridge`` modules (followed in src/) and of the unit
  tests' own helper modules (test/unit/*.py) it imports;
  conftest.py leaves such files out (``collect_ignore``);
- a *test* in a file that is collected needs ROS when it stops on ``ModuleNotFoundError`` for a
  ROS module (an import inside the test or a fixture); conftest.py reports it as skipped.

ROS modules: the names below, and every ``*_msgs`` / ``*_srvs`` package.  A ROS module missing
from the names makes its tests fail in the py38 layer (not pass unseen): add it here.
"""
import ast
import importlib.util
import os
import re
import sys

ROS_MODULES = frozenset((
    'rospy', 'rosgraph', 'roslib', 'rospkg', 'roslaunch', 'rostest', 'rosbag', 'rosmsg', 'rostopic',
    'rosservice', 'rosnode', 'rosparam', 'rosunit', 'genpy', 'genmsg', 'catkin', 'catkin_pkg',
    'message_filters', 'diagnostic_updater', 'tf', 'tf2_ros', 'tf2_py', 'tf_conversions',
    'dynamic_reconfigure', 'actionlib', 'cv_bridge', 'image_geometry',
))

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SRC = os.path.join(ROOT, 'src')


def is_ros_module(name):
    top = (name or '').split('.')[0]
    return top in ROS_MODULES or top.endswith(('_msgs', '_srvs'))


def _module_level_imports(path, package):
    """Absolute names imported by the module-level statements of a file (also inside top-level
    try/if/with blocks, not inside functions or classes)."""
    with open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read(), path)
    out = []
    todo = list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split('.')[:len(package.split('.')) - node.level + 1]
                mod = '.'.join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            out.append(mod)
            out.extend(f'{mod}.{a.name}' for a in node.names if a.name != '*')
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            for field in ('body', 'orelse', 'finalbody', 'handlers'):
                for child in getattr(node, field, []):
                    todo.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])
    return out


def _source_of(name):
    """(path, package) of a morai_bridge module in src/, or None (a name that is not a module,
    e.g. a class imported with `from x import Name`)."""
    base = os.path.join(SRC, *name.split('.'))
    if os.path.isfile(base + '.py'):
        return base + '.py', name.rpartition('.')[0]
    if os.path.isfile(os.path.join(base, '__init__.py')):
        return os.path.join(base, '__init__.py'), name
    return None


def ros_import_chain(path):
    """The chain of imports by which a test file reaches a ROS module at import time
    (e.g. ['morai_bridge.ros.markers.shapes', 'rospy']), or None when it does not."""
    seen = set()

    def visit(names, chain):
        for name in names:
            if is_ros_module(name):
                return chain + [name]
            local = os.path.join(HERE, name + '.py')      # a helper module of the unit tests
            if '.' not in name and name not in seen and os.path.isfile(local):
                seen.add(name)
                hit = visit(_module_level_imports(local, ''), chain + [name])
                if hit:
                    return hit
                continue
            if not name.startswith('morai_bridge'):
                continue
            parts = name.split('.')
            for i in range(1, len(parts) + 1):  # a.b.c imports a, a.b and a.b.c
                sub = '.'.join(parts[:i])
                if sub in seen:
                    continue
                seen.add(sub)
                found = _source_of(sub)
                if found:
                    hit = visit(_module_level_imports(found[0], found[1]), chain + [sub])
                    if hit:
                        return hit
        return None

    return visit(_module_level_imports(path, ''), [])


def skip_if_this_python_lacks_a_module(text):
    """A program run by a test whose output ``text`` says it stopped importing ROS (or the built morai_msgs:
    a shell that has not sourced the workspace), or a package this Python has not (the py38 layer's virtual
    environment has no psutil): the test is skipped, saying which."""
    import pytest
    for name in re.findall(r"No module named '([\w.]+)'", text):
        if is_ros_module(name):
            pytest.skip(f'needs ROS (no module named {name!r})')
        if importlib.util.find_spec(name.split('.')[0]) is None:
            pytest.skip(f'needs {name}, which {sys.executable} has not')
