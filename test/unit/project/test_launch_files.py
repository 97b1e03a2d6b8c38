"""Launch files: roslaunch's own static check (what roslaunch_add_file_check
runs), and every node parameter exposed as an <arg> with the node's default."""
import glob
import importlib
import os
import xml.etree.ElementTree as ET

import pytest

import helpers

ROOT = helpers.ROOT
LAUNCH = sorted(glob.glob(os.path.join(ROOT, 'launch', '*.launch')))
# launch file -> module whose PARAMS it must expose
NODE_LAUNCH = {
    'erp42_serial.launch': 'morai_bridge.nodes.erp42_serial',
    'udp_bridge.launch': 'morai_bridge.nodes.udp_bridge',
    'capture_replay.launch': 'morai_bridge.nodes.capture_replay',
    'sim_emulator.launch': 'morai_bridge.nodes.sim_emulator',
    'demo_driver.launch': 'morai_bridge.nodes.demo_driver',
    'pcu_emulator.launch': 'morai_bridge.nodes.pcu_emulator',
    'camera_bridge.launch': 'morai_bridge.nodes.camera_bridge',
    'lidar_bridge.launch': 'morai_bridge.nodes.lidar_bridge',
    'lidar2d_bridge.launch': 'morai_bridge.nodes.lidar2d_bridge',
}


def test_there_are_launch_files():
    assert LAUNCH, 'no launch files found'
    assert set(NODE_LAUNCH) <= {os.path.basename(f) for f in LAUNCH}


@pytest.mark.parametrize('path', LAUNCH, ids=os.path.basename)
def test_roslaunch_check(path):
    rlutil = pytest.importorskip('roslaunch.rlutil')
    if 'morai_msgs' not in os.environ.get('ROS_PACKAGE_PATH', '') and not os.environ.get('CMAKE_PREFIX_PATH'):
        pytest.fail('run from the built workspace (source .ws/devel/setup.bash)')
    error = rlutil.check_roslaunch(path, use_test_depends=True)
    assert error is None, error


@pytest.mark.parametrize('name', sorted(NODE_LAUNCH))
def test_every_param_is_a_launch_arg(name):
    mod = importlib.import_module(NODE_LAUNCH[name])
    root = ET.parse(os.path.join(ROOT, 'launch', name)).getroot()
    args = {a.get('name'): a.get('default') for a in root.iter('arg')}
    params = {p.get('name'): p.get('value') for p in root.iter('param')}
    for p in mod.PARAMS:
        assert params.get(p.name) == f'$(arg {p.name})', f'param {p.name} not passed from an arg'
        assert p.name in args, f'no <arg> for ~{p.name}'
        # a "" default is written as the Param's unset word (roslaunch lists an empty default as required)
        assert args[p.name] == p.shown_default, '~%s: launch default %r, node default %r' % (
            p.name, args[p.name], p.default)
        assert p.coerce(args[p.name]) == p.default or not p.takes(p.default)


@pytest.mark.parametrize('path', sorted(glob.glob(os.path.join(ROOT, 'launch', '*.launch')) +
                                        glob.glob(os.path.join(ROOT, 'test', 'ros', '*.test'))),
                         ids=os.path.basename)
def test_launch_and_test_files_are_well_formed_xml(path):
    """roslaunch refuses a file that is not XML (a '--' inside a comment is enough), and only when run."""
    import xml.dom.minidom
    xml.dom.minidom.parse(path)
