"""Types an upstream branch adds to a set's commit (tools/msg_sets.py add; docs/versions.md, "the
message sets"): MORAI-ROS_morai_msgs' beta_drive (45c6baf) is the 2024 set's commit (6fd5332) plus
ten types, which sets 2024 and 2026 carry, and two robotics types of its own layout, which no set
carries.  From our sources with genmsg, no ROS master; a set's tables and files are copied to a
temporary folder before `add` runs on them."""
import json
import os
import shutil
import sys

import pytest

import helpers

ROOT = helpers.ROOT
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import msg_sets  # noqa: E402

pytest.importorskip('genmsg', reason='genmsg (ROS build tools) not installed')

BETA = ['morai_msgs/' + n for n in ('AttachmentDeviceState', 'Competition', 'ENU', 'EgoDetailStatus',
                                    'EgoNoisyStatus', 'GripperState', 'MSITCustomMessage', 'RPY', 'RobotPose', 'XYZ')]
CHANGED = ['morai_msgs/ManipulatorControl', 'morai_msgs/RobotOutput']


def test_sets_2024_and_2026_carry_beta_drives_new_types():
    for s in ('2024', '2026'):
        (record,) = msg_sets.table(s)['additive']
        assert (record['ref'], record['commit'], record['types']) == ('beta_drive', '45c6baf', BETA)
    assert 'additive' not in msg_sets.table('2022')
    assert not set(BETA) & set(msg_sets.md5_of_set('2022'))


@pytest.mark.parametrize('set_name', ['2024', '2026'])
def test_the_carried_types_change_no_md5_of_the_set(set_name):
    """The set without them gives every other type the md5 of the set's upstream commit: nothing the
    set had refers to them, so carrying them is invisible to code and bags of that commit."""
    files = {n: p for n, p in msg_sets.resolve(set_name).items() if 'morai_msgs/' + n not in BETA}
    without = msg_sets.md5_of_files(files)
    table = msg_sets.table(set_name)['types']
    assert without == {k: v['md5'] for k, v in table.items() if k not in BETA}
    assert {k: msg_sets.md5_of_set(set_name)[k] for k in BETA} == {k: table[k]['md5'] for k in BETA}


def test_beta_drives_own_robotics_layouts_are_recorded_not_carried():
    (variant,) = msg_sets.table('2024')['not_carried']
    assert (variant['ref'], variant['commit'], sorted(variant['types'])) == ('beta_drive', '45c6baf', CHANGED)
    ours = msg_sets.md5_of_set('2024')
    for full, v in variant['types'].items():
        assert v['md5'] != ours[full]
        assert v['md5'] == md5_of_text(full, v['text'])
    # what beta_drive changed, in words: one field fewer, one more
    ours_text = {full: open(msg_sets.resolve('2024')[full.split('/')[1]]).read() for full in CHANGED}
    assert 'bool GripperStatus' in ours_text[CHANGED[0]] and 'GripperStatus' not in variant['types'][CHANGED[0]]['text']
    assert 'is_active_manipulator_brake' in variant['types'][CHANGED[1]]['text']
    assert 'is_active_manipulator_brake' not in ours_text[CHANGED[1]]


def test_docs_show_both_md5_of_each_type_not_carried():
    with open(os.path.join(ROOT, 'docs', 'versions.md')) as f:
        doc = f.read()
    ours = msg_sets.md5_of_set('2024')
    for full, v in msg_sets.table('2024')['not_carried'][0]['types'].items():
        assert ours[full] in doc and v['md5'] in doc, full
    for full in BETA:
        assert full.split('/')[1] in doc


def md5_of_text(full, text):
    """genmsg's md5 of a message text (its dependencies, if any, from set 2024)."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, full.split('/')[1] + '.msg')
        with open(path, 'w') as f:
            f.write(text)
        files = dict(msg_sets.resolve('2024'), **{full.split('/')[1]: path})
        return msg_sets.md5_of_files(files)[full]


def test_which_names_a_beta_drive_workspace(capsys):
    """A workspace built from beta_drive: its driving types (and Competition) are set 2024's; its two
    robotics types are named as beta_drive's, which no set carries."""
    md5s = dict(msg_sets.md5_of_set('2024'))
    assert msg_sets.print_which('a beta_drive bag', {k: md5s[k] for k in
                                                     ('morai_msgs/EgoVehicleStatus', 'morai_msgs/CtrlCmd',
                                                      'morai_msgs/Competition', 'morai_msgs/EgoNoisyStatus')}) == 0
    assert 'a beta_drive bag: message set 2024;' in capsys.readouterr().out
    for full, v in msg_sets.table('2024')['not_carried'][0]['types'].items():
        md5s[full] = v['md5']
    assert msg_sets.print_which('this workspace', md5s) == 1
    out = capsys.readouterr().out
    assert 'set 2024: 116 of 118 types identical' in out
    for full in CHANGED:
        assert f'{full}: md5 ' in out and 'beta_drive (45c6baf) has it, a layout no set carries' in out
    assert ('this workspace: message set 2024 except the types above, which have the layout of branch '
            'beta_drive (45c6baf); no set builds that layout') in out
    md5s['morai_msgs/Unknown'] = md5s['morai_msgs/XYZ']
    assert msg_sets.print_which('this workspace', md5s) == 1
    out = capsys.readouterr().out
    assert 'morai_msgs/Unknown: no type of set 2024' in out
    assert 'this workspace: no message set has all of these md5 sums' in out


@pytest.fixture
def copy_of_the_sets(tmp_path, monkeypatch):
    """msg_sets/ and test/data/msg_sets/ copied; tools/msg_sets.py reads and writes the copies."""
    monkeypatch.setattr(msg_sets, 'SETS_DIR', str(shutil.copytree(msg_sets.SETS_DIR, tmp_path / 'msg_sets')))
    monkeypatch.setattr(msg_sets, 'TABLES', str(shutil.copytree(msg_sets.TABLES, tmp_path / 'tables')))
    msg_sets.md5_of_set.cache_clear()
    yield tmp_path
    msg_sets.md5_of_set.cache_clear()       # what was computed from the copies


def beta_drive_tree(root, extra=None):
    """An upstream tree rebuilt from our data: 2024's upstream field lists (test/data, beta_drive's
    ten new types among them), the two robotics types in beta_drive's layout, and ``extra``."""
    data = os.path.join(ROOT, 'test', 'data', 'msg_sets')     # the repository's, not the copies
    with open(os.path.join(data, '2024.fields.json')) as f:
        types = {n: (v['kind'], v['text']) for n, v in json.load(f)['types'].items()}
    with open(os.path.join(data, '2024.json')) as f:
        variant = json.load(f)['not_carried'][0]
    for full, v in variant['types'].items():
        types[full.split('/')[1]] = (v['kind'], v['text'])
    types.update(extra or {})
    for kind in ('msg', 'srv'):
        os.makedirs(os.path.join(root, kind))
    for name, (kind, text) in types.items():
        with open(os.path.join(root, kind, f'{name}.{kind}'), 'w') as f:
            f.write(text)
    with open(os.path.join(root, 'CMakeLists.txt'), 'w') as f:
        f.write('add_message_files(FILES %s)\nadd_service_files(FILES %s)\n' % tuple(
            ' '.join(sorted(f'{n}.{k}' for n, (k, _) in types.items() if k == kind)) for kind in ('msg', 'srv')))
    return str(root)


def without_beta_drive(tmp):
    """Undo what `add` wrote for beta_drive in the copies: the state before it ran."""
    for full in BETA:
        os.remove(os.path.join(msg_sets.SETS_DIR, '2024', 'msg', full.split('/')[1] + '.msg'))
    for s in ('2024', '2026'):
        doc = msg_sets.table(s)
        for full in BETA:
            del doc['types'][full]
        doc.pop('additive')
        doc.pop('not_carried', None)
        msg_sets._write_table(s, doc)
        path = os.path.join(msg_sets.TABLES, s + '.fields.json')
        with open(path) as f:
            fields = json.load(f)
        for full in BETA:
            del fields['types'][full.split('/')[1]]
        with open(path, 'w') as f:
            json.dump(fields, f)


def snapshot():
    out = {}
    for top in (msg_sets.SETS_DIR, msg_sets.TABLES):
        for dirpath, _, files in os.walk(top):
            for name in files:
                with open(os.path.join(dirpath, name)) as f:
                    out[os.path.relpath(os.path.join(dirpath, name), os.path.dirname(top)), name] = \
                        json.load(f) if name.endswith('.json') else f.read()
    return out


def test_add_rebuilds_what_the_repository_holds(copy_of_the_sets, capsys):
    """`add` on beta_drive's tree, from the state before beta_drive: the same files and tables."""
    want = snapshot()
    without_beta_drive(copy_of_the_sets)
    assert snapshot() != want
    tree = beta_drive_tree(copy_of_the_sets / 'beta_drive')
    assert msg_sets.add_types('2024', tree, '45c6baf', 'beta_drive', 'MORAI-Autonomous/MORAI-ROS_morai_msgs') == 0
    assert snapshot() == want
    assert ('beta_drive 45c6baf: 10 types carried by the sets 2024, 2026 (10 files written); 2 changed, not '
            'carried: morai_msgs/ManipulatorControl, morai_msgs/RobotOutput') in capsys.readouterr().out


def test_add_refuses_a_new_type_that_holds_a_changed_one(copy_of_the_sets):
    """A new type whose definition holds a type of the branch's own layout would not have the
    branch's md5 in the set: not additive, and nothing is written."""
    without_beta_drive(copy_of_the_sets)
    before = snapshot()
    tree = beta_drive_tree(copy_of_the_sets / 'beta_drive', {'RobotReport': ('msg', 'morai_msgs/RobotOutput out\n')})
    with pytest.raises(SystemExit, match=r'not additive to set 2024: set 2024 morai_msgs/RobotReport: \w+, at beta_drive'):
        msg_sets.add_types('2024', tree, '45c6baf', 'beta_drive', 'MORAI-Autonomous/MORAI-ROS_morai_msgs')
    assert snapshot() == before
