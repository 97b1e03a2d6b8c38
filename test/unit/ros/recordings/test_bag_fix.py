"""ros/recordings/bag_fix (morai_bag_fix): rosbag's migration between the message sets, made to work on Python 3.13.

Debian 13's Python 3.13 changed what ``exec`` without a namespace does in a function (PEP 667: it
writes into a snapshot of the locals that ``locals()`` never returns), which breaks every rule rosbag
makes itself.  These tests reproduce that on any Python with :func:`exec_as_313`, a builtin ``exec``
that behaves as 3.13's does, and, where a Python 3.13 is on the machine (pyenv, uv, PATH or
``MORAI_PYTHON313``), run the real thing on it; under Debian 13 itself the interpreter running them
is one.  The rules made with :func:`bag_fix.install` are compared with rosbag's own, class text
included, on a Python before 3.13.
"""
import builtins
import functools
import glob
import os
import re
import shutil
import subprocess
import sys

import pytest

import helpers

ROOT = helpers.ROOT
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import msg_sets  # noqa: E402

rosbag = pytest.importorskip('rosbag', reason='rosbag (ROS 1) not installed')
import genpy.dynamic  # noqa: E402
import rospy  # noqa: E402
from rosbag import migration  # noqa: E402

from morai_bridge.ros.recordings import bag_fix  # noqa: E402

RULES = os.path.join(ROOT, 'msg_sets', 'migration_rules.bmr')
BEFORE_313 = sys.version_info < (3, 13)


def exec_as_313(source, globals=None, locals=None, _exec=builtins.exec):
    """The builtin exec as Python 3.13 runs it: without a namespace, in a function, into a snapshot
    of the caller's locals (PEP 667) that nothing reads afterwards."""
    if globals is None:
        frame = sys._getframe(1)
        globals, locals = frame.f_globals, dict(frame.f_locals)
    return _exec(source, globals, globals if locals is None else locals)


@pytest.fixture
def shipped(monkeypatch):
    """rosbag's migration module as Debian ships it (without what bag_fix.install adds)."""
    for name in ('exec', 'locals'):
        monkeypatch.delattr(migration, name, raising=False)
    return migration


@pytest.fixture
def installed(shipped, monkeypatch):
    """rosbag's migration module with bag_fix.install; as shipped again after the test."""
    for name in ('exec', 'locals'):
        monkeypatch.setattr(migration, name, None, raising=False)     # undone by monkeypatch
    return bag_fix.install()


@pytest.fixture
def python313(monkeypatch):
    monkeypatch.setattr(builtins, 'exec', exec_as_313)


@functools.lru_cache(maxsize=None)
def specs_of(set_name):
    return msg_sets.load_specs(msg_sets.resolve(set_name))


def set_classes(set_name, *names):
    """Message classes of a set, generated from our definitions (as a bag of that set holds them)."""
    specs = specs_of(set_name)
    return [genpy.dynamic.generate_dynamic('morai_msgs/' + n, specs[n][2])['morai_msgs/' + n] for n in names]


def other_set():
    """A message set whose EgoVehicleStatus and CollisionData differ from this workspace's."""
    from morai_msgs.msg import CollisionData, EgoVehicleStatus
    for s in msg_sets.SETS:
        ego, col = set_classes(s, 'EgoVehicleStatus', 'CollisionData')
        if (ego._md5sum, col._md5sum) != (EgoVehicleStatus._md5sum, CollisionData._md5sum):
            return s
    raise AssertionError('every set has this workspace\'s EgoVehicleStatus')


def front_angle_field(cls):
    return 'front_steer_angle' if 'front_steer_angle' in cls.__slots__ else 'wheel_angle'


def front_steer_field(cls):
    return 'front_steer' if 'front_steer' in cls.__slots__ else 'steering'


def write_bag(path, set_name, extra=()):
    """A bag of the set: one status, one collision with an object, one command; ``extra``: more
    type names of the set, one default message each."""
    ego_cls, col_cls, cmd_cls = set_classes(set_name, 'EgoVehicleStatus', 'CollisionData', 'CtrlCmd')
    ego = ego_cls()
    ego.header.stamp = rospy.Time(5, 6)
    ego.position.x, ego.heading = 1.5, 30.0
    setattr(ego, front_angle_field(ego_cls), 3.25)
    col = col_cls()
    col.header.stamp = rospy.Time(5, 7)
    obj_type = col_cls._slot_types[col_cls.__slots__.index('collision_object')][:-len('[]')]
    col.collision_object.append(set_classes(set_name, obj_type.split('/')[1])[0](unique_id=9))
    cmd = cmd_cls()
    cmd.longlCmdType, cmd.velocity = 2, 4.5
    setattr(cmd, front_steer_field(cmd_cls), -0.25)
    with rosbag.Bag(path, 'w') as bag:
        for i, (topic, msg) in enumerate((('/Ego_topic', ego), ('/CollisionData', col), ('/ctrl_cmd', cmd))):
            bag.write(topic, msg, rospy.Time(5, 10 + i))
        for name in extra:
            bag.write('/' + name, set_classes(set_name, name)[0](), rospy.Time(6))


def check_fixed(original, fixed):
    """Every message of ``fixed`` in this workspace's classes, with the values of ``original``."""
    import morai_msgs.msg
    with rosbag.Bag(original) as a, rosbag.Bag(fixed) as b:
        old, new = list(a.read_messages()), list(b.read_messages())
    assert [(t, s) for t, _, s in old] == [(t, s) for t, _, s in new]
    for (_, a, _), (topic, b, _) in zip(old, new):
        assert b._md5sum == getattr(morai_msgs.msg, b._type.split('/')[1])._md5sum, topic
    (_, e0, _), (_, c0, _), (_, k0, _) = old
    (_, e1, _), (_, c1, _), (_, k1, _) = new
    assert (e1.header.stamp, e1.position.x, e1.heading, getattr(e1, front_angle_field(type(e1)))) == \
        (e0.header.stamp, 1.5, 30.0, 3.25)
    assert [o.unique_id for o in c1.collision_object] == [9]
    assert (k1.longlCmdType, k1.velocity, getattr(k1, front_steer_field(type(k1)))) == (2, 4.5, -0.25)


# ---------------------------------------------------------------- what breaks on Debian 13


def test_rosbag_as_shipped_fails_under_313_exec(shipped, python313):
    """The Debian 13 failure, reproduced: loading the package's rules makes rosbag write its own
    rules (the scaffold towards this workspace's classes), and reading one back fails."""
    with pytest.raises(KeyError, match='update_morai_msgs_'):
        shipped.MessageMigrator([RULES], plugins=False)


def test_the_rule_makers_fail_under_313_exec(shipped, python313):
    old, new = set_classes(msg_sets.SETS[0], 'EgoVehicleStatus') + set_classes(msg_sets.SETS[-1], 'EgoVehicleStatus')
    m = shipped.MessageMigrator([], plugins=False)
    for make, args in ((m.make_update_rule, (old, new)), (m.make_old_half_rule, (old,)),
                       (m.make_new_half_rule, (new,))):
        with pytest.raises(KeyError):
            make(*args)


# ---------------------------------------------------------------- bag_fix.install


@pytest.mark.parametrize('emulate', [True, False], ids=['313-exec', 'this-python'])
def test_the_rule_makers_work_once_installed(installed, monkeypatch, emulate):
    if emulate:
        monkeypatch.setattr(builtins, 'exec', exec_as_313)
    old, new = set_classes(msg_sets.SETS[0], 'EgoVehicleStatus') + set_classes(msg_sets.SETS[-1], 'EgoVehicleStatus')
    m = installed.MessageMigrator([RULES], plugins=False)
    rule = m.make_update_rule(old, new)
    assert issubclass(rule, migration.MessageUpdateRule)
    assert (rule.__name__, rule.old_type, rule.new_type) == \
        ('update_morai_msgs_EgoVehicleStatus_' + old._md5sum, old._type, new._type)
    assert m.make_old_half_rule(old).__name__ == 'update__morai_msgs_EgoVehicleStatus__' + old._md5sum
    assert m.make_new_half_rule(new).__name__ == 'update_to_morai_msgs_EgoVehicleStatus_' + new._md5sum


def test_rule_files_still_load_into_their_own_namespace(installed, tmp_path):
    """rosbag loads a rule file with exec(text, namespace): passed to the builtin unchanged."""
    path = tmp_path / 'one.bmr'
    path.write_text(open(RULES).read().split('\n\n\nclass ')[0])     # the first rule only
    m = installed.MessageMigrator([str(path)], plugins=False)
    assert not m.false_rule_loaded
    assert sum(len(chain.chain) for chain in m.rulechains.values()) == 1


@pytest.mark.skipif(not BEFORE_313, reason='rosbag as shipped works before Python 3.13 only')
def test_installed_rules_are_rosbags_own(shipped):
    """On a Python before 3.13, every rule rosbag makes between the sets' migrating types, made
    with and without bag_fix.install: the same class (name, module, attributes, its own text)."""
    m = shipped.MessageMigrator([], plugins=False)
    with open(RULES) as f:
        names = sorted(set(re.findall(r'^class update_morai_msgs_(\w+)_\d+_to_\d+\(', f.read(), re.M)))
    assert {'EgoVehicleStatus', 'CollisionData', 'CtrlCmd'} < set(names)
    made = want = 0
    for name in names:
        classes = [set_classes(s, name)[0] for s in msg_sets.SETS if name in msg_sets.resolve(s)]
        want += len(classes) * (len(classes) - 1) + 2 * len(classes)
        calls = [('make_update_rule', (a, b)) for a in classes for b in classes if a is not b]
        calls += [('make_old_half_rule', (c,)) for c in classes] + [('make_new_half_rule', (c,)) for c in classes]
        for method, args in calls:
            for attr in ('exec', 'locals'):
                migration.__dict__.pop(attr, None)
            theirs = getattr(m, method)(*args)
            bag_fix.install()
            ours = getattr(m, method)(*args)
            for attr in ('exec', 'locals'):
                migration.__dict__.pop(attr, None)
            assert ours is not theirs
            assert (ours.__name__, ours.__module__, ours.__bases__) == \
                (theirs.__name__, theirs.__module__, theirs.__bases__)
            assert ours.get_class_def(None) == theirs.get_class_def(None)
            assert (ours.valid, ours.migrated_types, ours.old_type, ours.new_type, ours.order) == \
                (theirs.valid, theirs.migrated_types, theirs.old_type, theirs.new_type, theirs.order)
            made += 1
    assert made == want >= 8 * 12, (made, want)


# ---------------------------------------------------------------- morai_bag_fix


def test_a_bag_of_another_set_is_fixed_under_313_exec(installed, python313, tmp_path, capsys):
    original, fixed = str(tmp_path / 'other.bag'), str(tmp_path / 'fixed.bag')
    write_bag(original, other_set())
    assert bag_fix.main([original, fixed]) == 0
    out = capsys.readouterr().out
    assert 'wrote %s: 3 messages; morai_msgs/CollisionData ' % fixed in out, out
    check_fixed(original, fixed)
    assert not os.path.exists(fixed + '.tmp')


def test_a_type_without_a_rule_writes_nothing(installed, python313, tmp_path, capsys):
    """2022's DdCtrlCmd is in no later set and has no rule (docs/versions.md): listed, exit 1, no bag."""
    import morai_msgs.msg
    if hasattr(morai_msgs.msg, 'DdCtrlCmd'):
        pytest.skip('this workspace builds set 2022, which has DdCtrlCmd')
    original, fixed = str(tmp_path / 'dd.bag'), str(tmp_path / 'fixed.bag')
    write_bag(original, '2022', extra=['DdCtrlCmd'])
    assert bag_fix.main([original, fixed]) == 1
    out = capsys.readouterr().out
    assert 'could not be migrated' in out and 'From: morai_msgs/DdCtrlCmd' in out, out
    assert not os.path.exists(fixed) and not os.path.exists(fixed + '.tmp')


def test_the_script_refuses_what_rosbag_fix_refuses(tmp_path):
    script = os.path.join(ROOT, 'scripts', 'morai_bag_fix')
    bag = str(tmp_path / 'in.bag')
    write_bag(bag, msg_sets.SETS[0])
    r = subprocess.run([sys.executable, script, bag, str(tmp_path / 'out.txt')], capture_output=True, text=True)
    assert (r.returncode, r.stderr) == (2, f'morai_bag_fix: the output must be a .bag file, not {tmp_path}/out.txt\n')
    r = subprocess.run([sys.executable, script, str(tmp_path / 'none.bag'), str(tmp_path / 'out.bag')],
                       capture_output=True, text=True)
    assert (r.returncode, r.stderr) == (2, f'morai_bag_fix: cannot read {tmp_path}/none.bag\n')


# ---------------------------------------------------------------- a real Python 3.13, where there is one


def python313_candidates():
    """$MORAI_PYTHON313, this interpreter when it is one, python3.13 / python3.14 on PATH, pyenv's and
    uv's installed 3.13 or later."""
    out = [os.environ.get('MORAI_PYTHON313', '')]
    out.append(sys.executable if not BEFORE_313 else '')
    out += [shutil.which(n) or '' for n in ('python3.13', 'python3.14')]
    home = os.path.expanduser('~')
    for root in (os.environ.get('PYENV_ROOT') or os.path.join(home, '.pyenv'),):
        out += sorted(glob.glob(os.path.join(root, 'versions', '3.1[3-9].*', 'bin', 'python3')))
    out += sorted(glob.glob(os.path.join(home, '.local', 'share', 'uv', 'python', 'cpython-3.1[3-9].*', 'bin',
                                         'python3')))
    return [p for p in dict.fromkeys(out) if p]


def run_313(code):
    """(interpreter, completed process) of ``code`` run by the first Python >= 3.13 that imports
    this machine's rosbag, or skip."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.environ.get('PYTHONPATH'),
                                                                       '/usr/lib/python3/dist-packages'])),
               PYTHONWARNINGS='ignore')
    tried = []
    for exe in python313_candidates():
        probe = subprocess.run([exe, '-c', 'import sys; assert sys.version_info >= (3, 13); '
                                'import rosbag.migration, morai_msgs.msg, morai_bridge.ros.recordings.bag_fix'],
                               env=env, capture_output=True, text=True)
        if probe.returncode == 0:
            return exe, subprocess.run([exe, '-c', code], env=env, capture_output=True, text=True, cwd=ROOT)
        tried.append(f"{exe}: {(probe.stderr.strip().splitlines() or ['fails'])[-1]}")
    pytest.skip('no Python >= 3.13 that imports rosbag (set MORAI_PYTHON313); tried: ' + '; '.join(tried))


def test_on_a_real_python_313(tmp_path):
    """rosbag's own fix fails there as on Debian 13; morai_bag_fix migrates, values kept."""
    original, fixed = str(tmp_path / 'other.bag'), str(tmp_path / 'fixed.bag')
    write_bag(original, other_set())
    exe, r = run_313(
        'import sys\n'
        'from rosbag import migration\n'
        'try:\n'
        f'    migration.MessageMigrator([{RULES!r}], plugins=False)\n'
        'except KeyError as e:\n'
        '    print("shipped: KeyError", e)\n'
        'from morai_bridge.ros.recordings import bag_fix\n'
        f'sys.exit(bag_fix.main([{original!r}, {fixed!r}]))\n')
    assert r.returncode == 0, (exe, r.stdout, r.stderr)
    assert "shipped: KeyError 'update_morai_msgs_" in r.stdout, (exe, r.stdout)
    check_fixed(original, fixed)
