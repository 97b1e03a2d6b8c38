"""The morai_msgs interface, every message set (msg_sets/, tools/msg_sets.py): each type of each
set has a source file and exactly upstream's md5, computed by genmsg straight from our .msg/.srv
files (what catkin generates from).  The generated classes of a built workspace are checked by the
sets test layer (test/sets/, in each set's workspace).
"""
import json
import os
import sys

import pytest

import helpers

ROOT = helpers.ROOT
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import msg_sets  # noqa: E402

TABLES = {s: json.load(open(os.path.join(ROOT, 'test', 'data', 'msg_sets', s + '.json')))
              for s in msg_sets.SETS}
CASES = sorted((s, full) for s in msg_sets.SETS for full in TABLES[s]['types'])

pytest.importorskip('genmsg', reason='genmsg (ROS build tools) not installed')


def md5_of(set_name, full):
    """genmsg's md5 of a type of the set, from our files as CMakeLists.txt lays them out (one
    directory per kind); (md5, request md5, response md5) for a service."""
    return msg_sets.md5_of_set(set_name, parts=True)[full]


@pytest.mark.parametrize('set_name,types,services', [('2022', 66, 12), ('2024', 118, 19), ('2026', 118, 19)])
def test_table_sizes(set_name, types, services):
    table = TABLES[set_name]['types']
    assert len(table) == types
    assert sum(1 for v in table.values() if v['kind'] == 'srv') == services
    assert TABLES[set_name]['commit'] and TABLES[set_name]['repository']


@pytest.mark.parametrize('set_name', msg_sets.SETS)
def test_each_set_has_exactly_its_types(set_name):
    files = msg_sets.resolve(set_name)
    assert sorted('morai_msgs/' + n for n in files) == sorted(TABLES[set_name]['types'])
    for full, v in TABLES[set_name]['types'].items():
        assert files[full.split('/')[1]].endswith('.' + v['kind'])


@pytest.mark.parametrize('set_name,full', CASES)
def test_md5_from_sources(set_name, full):
    v = TABLES[set_name]['types'][full]
    if v['kind'] == 'msg':
        assert md5_of(set_name, full) == v['md5']
    else:
        assert md5_of(set_name, full) == (v['md5'], v['request_md5'], v['response_md5'])


def test_migration_rules_are_current():
    """msg_sets/migration_rules.bmr (exported to rosbag by package.xml) is what the sets give."""
    with open(msg_sets.RULES) as f:
        assert f.read() == msg_sets.migration_rules(), 'run /usr/bin/python3 tools/msg_sets.py rules'


def test_fields_of_every_set_are_its_types():
    """test/data/msg_sets/<set>.fields.json (the tests' upstream-built client) lists each type of
    the set once, with the kind of its table."""
    for s in msg_sets.SETS:
        with open(os.path.join(ROOT, 'test', 'data', 'msg_sets', s + '.fields.json')) as f:
            fields = json.load(f)['types']
        assert sorted('morai_msgs/' + n for n in fields) == sorted(TABLES[s]['types'])
        assert all(TABLES[s]['types']['morai_msgs/' + n]['kind'] == v['kind'] for n, v in fields.items())


def test_the_set_lists_agree():
    """CMakeLists.txt declares the sets and the default (tools/msg_sets.py and tools/dev.sh read
    them there); the bridge's own list (ros/msg_set.py, installed, no CMakeLists.txt) must match."""
    import ast
    src = open(os.path.join(ROOT, 'src', 'morai_bridge', 'ros', 'msg_set.py')).read()
    node = next(n for n in ast.parse(src).body if isinstance(n, ast.Assign)
                and any(getattr(t, 'id', None) == 'SETS' for t in n.targets))
    assert ast.literal_eval(node.value) == msg_sets.SETS == ('2022', '2024', '2026')
    assert msg_sets.DEFAULT in msg_sets.SETS


@pytest.mark.parametrize('bag_set', msg_sets.SETS)
@pytest.mark.parametrize('built', msg_sets.SETS + (None,))
def test_which_names_morai_bag_fix_for_a_bag_of_another_set(capsys, bag_set, built):
    """`tools/msg_sets.py which BAG`: a bag of the workspace's set plays as it is; a bag of another set
    gets both ways out on its last line, morai_bag_fix (to the built set) first, then building its set."""
    md5s = {t: m for t, m in msg_sets.md5_of_set(bag_set).items()
            if t in ('morai_msgs/EgoVehicleStatus', 'morai_msgs/CtrlCmd', 'morai_msgs/CollisionData')}
    assert msg_sets.print_which('drive.bag', md5s, bag='drive.bag', built=built) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith(f'drive.bag: message set {bag_set};'), last
    if built == bag_set:
        assert last.endswith(f'this workspace builds set {bag_set}: play it as it is'), last
        return
    assert f'rosrun morai_msgs morai_bag_fix drive.bag drive.set{built or "N"}.bag moves the bag' in last, last
    assert f'catkin_make -DMORAI_MSGS_SET={bag_set}' in last, last
    assert (f"not this workspace's (set {built})" if built else 'none sourced') in last, last


def test_which_of_the_workspace_is_the_built_set():
    """workspace_set() reads the generated classes: the set ros/msg_set names."""
    pytest.importorskip('morai_msgs.msg')
    from morai_bridge.ros import msg_set
    assert msg_sets.workspace_set() == msg_set.NAME
