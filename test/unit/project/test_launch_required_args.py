"""`roslaunch --ros-args` tells the truth: roslaunch's own argument dump (roslaunch/arg_dump.py) lists an
argument whose default is empty as required, so only the genuinely required ones may have one; an
optional string parameter whose "" means "not set" says so with a word (Param ``unset``: none, auto, any,
pty) that the node reads as "" (issue 43)."""
import glob
import importlib
import os
import xml.etree.ElementTree as ET

import pytest

import helpers

ROOT = helpers.ROOT
LAUNCH = sorted(glob.glob(os.path.join(ROOT, 'launch', '*.launch')))
#: (launch file, argument) that have no default because the user must give one
REQUIRED = {('capture_replay.launch', 'file'), ('play.launch', 'bag')}
#: the modules whose PARAMS tables hold the words
TABLES = ['morai_bridge.nodes.' + n for n in ('camera_bridge', 'lidar_bridge', 'lidar2d_bridge', 'udp_bridge',
                                              'markers', 'sim_emulator', 'erp42_serial', 'pcu_emulator',
                                              'capture_replay', 'demo_driver')]
WORDS = {'none', 'auto', 'any', 'pty'}


@pytest.mark.parametrize('path', LAUNCH, ids=os.path.basename)
def test_roslaunch_lists_no_optional_argument_as_required(path):
    arg_dump = pytest.importorskip('roslaunch.arg_dump')
    args = arg_dump.get_args([path])
    assert args, 'roslaunch found no argument'
    # what arg_dump.dump_args prints under "Required Arguments:"
    required = {name for name, (_, default) in args.items() if not default}
    assert required == {a for f, a in REQUIRED if f == os.path.basename(path)}


def test_the_required_arguments_still_have_an_empty_default():
    for name, arg in REQUIRED:
        root = ET.parse(os.path.join(ROOT, 'launch', name)).getroot()
        assert [a.get('default') for a in root.iter('arg') if a.get('name') == arg] == ['']


def _unset_params():
    out = []
    for name in TABLES:
        try:
            module = importlib.import_module(name)
        except ImportError as e:
            pytest.skip(f'node module needs ROS: {e}')
        out += [(name.split('.')[-1], p) for p in module.PARAMS if p.unset is not None]
    return out


def test_each_word_reads_as_empty_and_empty_is_still_taken():
    found = _unset_params()
    assert {p.unset for _, p in found} == WORDS
    assert {(n, p.name) for n, p in found} >= {
        ('camera_bridge', 'settings'), ('lidar_bridge', 'settings'), ('lidar2d_bridge', 'settings'),
        ('udp_bridge', 'settings'), ('udp_bridge', 'network_settings'), ('lidar_bridge', 'topic'),
        ('lidar2d_bridge', 'topic'), ('lidar2d_bridge', 'expected_header'), ('lidar2d_bridge', 'expected_tail'),
        ('markers', 'traffic_light_positions'), ('pcu_emulator', 'port'), ('sim_emulator', 'allowed_sender_ip'),
        ('sim_emulator', 'scenario'), ('sim_emulator', 'scenario_dir'), ('sim_emulator', 'erp42_link'),
        ('erp42_serial', 'ground_truth_topic')}
    for node, p in found:
        assert p.default == '' and p.coerce(p.unset) == '' and p.coerce('') == '', (node, p.name)
        assert p.shown_default == p.unset


def test_hand_written_launch_files_use_the_words():
    """sensor_bridge.launch's settings and diagnostics_aggregator.launch's base_path: the word, and "" too."""
    text = open(os.path.join(ROOT, 'launch', 'sensor_bridge.launch')).read()
    assert 'name="settings" default="none"' in text and "settings != ''" not in text
    assert text.count("settings not in ('', 'none')") == 3
    text = open(os.path.join(ROOT, 'launch', 'diagnostics_aggregator.launch')).read()
    # the third-party aggregator gets no ~base_path (its own default, "") unless a prefix is given
    assert 'name="base_path" default="none"' in text and "if=\"$(eval base_path not in ('', 'none'))\"" in text
