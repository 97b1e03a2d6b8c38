"""Every dependency of package.xml is a rosdep key that resolves on Ubuntu 20.04 + ROS Noetic.

`rosdep install --from-paths . --ignore-src --rosdistro noetic` stops at the first key it cannot
resolve, and catkin_lint (with a rosdep cache) reports such a key as an unknown package.  The key
list is taken from ros/rosdistro (test/data/rosdep_keys_noetic_focal.txt, written by
tools/rosdep_keys.py; its header names the commit): Noetic's released packages, and the keys of
rosdep/base.yaml and rosdep/python.yaml with an ubuntu focal rule.  Runs without ROS (py38 layer).
"""
import os
import re
import xml.etree.ElementTree as ET

import pytest

import helpers

ROOT = helpers.ROOT
KEYS_FILE = os.path.join(ROOT, 'test', 'data', 'rosdep_keys_noetic_focal.txt')
DEPEND_TAGS = ('buildtool_depend', 'buildtool_export_depend', 'build_depend', 'build_export_depend',
               'exec_depend', 'depend', 'test_depend', 'doc_depend')
# what ROS Noetic's environment sets (ros_environment); conditions are evaluated with it
NOETIC_ENV = {'ROS_VERSION': '1', 'ROS_DISTRO': 'noetic', 'ROS_PYTHON_VERSION': '3'}
GUI_KEYS = re.compile(r'^(rviz|rqt|python3-pyqt|python3-pyside|libqt|qt|libogre|python3-matplotlib)')


def read_keys():
    sections, current = {}, None
    with open(KEYS_FILE) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            if line.startswith('['):
                current = sections.setdefault(line.strip('[]'), set())
            else:
                current.add(line)
    return sections


def condition_holds(text, env):
    """REP 149 conditions of the simple form package.xml uses: `$VAR == value` / `$VAR != value`,
    joined by `and` / `or` (no parentheses; anything else fails the test)."""
    def term(t):
        m = re.fullmatch(r'\s*\$(\w+)\s*(==|!=)\s*(\S+)\s*', t)
        assert m, f'condition {text!r}: form not understood by this test'
        equal = env.get(m.group(1), '') == m.group(3)
        return equal if m.group(2) == '==' else not equal
    return any(all(term(t) for t in alt.split(' and ')) for alt in text.split(' or '))


def dependencies(env=NOETIC_ENV):
    """(tag, key) of package.xml whose condition holds in ``env``."""
    root = ET.parse(os.path.join(ROOT, 'package.xml')).getroot()
    assert root.get('format') in ('2', '3')
    return [(e.tag, e.text.strip()) for e in root if e.tag in DEPEND_TAGS
            and (e.get('condition') is None or condition_holds(e.get('condition'), env))]


def test_key_list_names_its_source():
    with open(KEYS_FILE) as f:
        head = f.read(600)
    assert re.search(r'source: https://github.com/ros/rosdistro commit [0-9a-f]{40}', head)
    keys = read_keys()
    # a list that lost a section, or most of one, would let the test below pass on nothing
    assert len(keys['noetic']) > 1500 and len(keys['focal']) > 2000
    assert {'rospy', 'catkin', 'message_generation'} <= keys['noetic']
    assert {'python3-serial', 'python3-yaml'} <= keys['focal']


def test_every_dependency_resolves_on_focal_noetic():
    keys = read_keys()
    known = keys['noetic'] | keys['focal']
    deps = dependencies()
    assert len(deps) > 20
    unknown = sorted({k for _, k in deps if k not in known})
    assert not unknown, (f'not a rosdep key for ubuntu:focal + noetic (ros/rosdistro): {unknown}; see docs/noetic.md')


def test_python2_branch_is_not_taken_on_noetic():
    deps = {k for _, k in dependencies()}
    assert 'python3-serial' in deps
    py2 = {k for _, k in dependencies(dict(NOETIC_ENV, ROS_PYTHON_VERSION='2'))}
    assert 'python3-serial' not in py2


def test_vehicle_pc_gets_no_gui_packages():
    """A plain `rosdep install` installs every dependency type (tests included): none of them may
    pull Qt/OGRE onto a headless vehicle PC.  RViz is installed separately (docs/noetic.md)."""
    gui = sorted(k for _, k in dependencies() if GUI_KEYS.match(k))
    assert not gui


def test_same_dependencies_as_catkin_pkg():
    """The parsing above agrees with catkin_pkg's (what rosdep and catkin use), where installed."""
    package = pytest.importorskip('catkin_pkg.package')
    pkg = package.parse_package(os.path.join(ROOT, 'package.xml'))
    old = {k: os.environ.get(k) for k in NOETIC_ENV}
    try:
        os.environ.update(NOETIC_ENV)
        pkg.evaluate_conditions(os.environ)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    theirs = set()
    for attr in ('buildtool_depends', 'buildtool_export_depends', 'build_depends', 'build_export_depends',
                 'exec_depends', 'test_depends', 'doc_depends'):
        theirs |= {d.name for d in getattr(pkg, attr) if d.evaluated_condition is not False}
    assert theirs == {k for _, k in dependencies()}
