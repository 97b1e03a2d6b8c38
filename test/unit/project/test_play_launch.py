"""launch/play.launch: the `rosbag play` command line and the parameters roslaunch makes of its arguments, as
roslaunch reads the file (test/ros/test_recording.py plays a recorded bag through it, on a master it starts
itself)."""
import os

import pytest

import helpers

LAUNCH = os.path.join(helpers.ROOT, 'launch', 'play.launch')


def load(*args, pwd='/home/user/drives'):
    """(rosbag play's arguments, the parameters) roslaunch makes of play.launch ``args``, typed in ``pwd``."""
    config = pytest.importorskip('roslaunch.config')
    xmlloader = pytest.importorskip('roslaunch.xmlloader')
    cfg = config.ROSLaunchConfig()
    old = os.environ.get('PWD')
    os.environ['PWD'] = pwd
    try:
        xmlloader.XmlLoader().load(LAUNCH, cfg, argv=['roslaunch', LAUNCH] + list(args), verbose=False)
    finally:
        if old is None:
            del os.environ['PWD']
        else:
            os.environ['PWD'] = old
    (node,) = cfg.nodes
    assert (node.package, node.type, node.required) == ('rosbag', 'play', True)
    return node.args.split(), {k: v.value for k, v in cfg.params.items()}


def test_the_defaults_play_once_with_the_bags_clock():
    args, params = load('bag:=/data/drive.bag')
    assert args == ['--clock', '--rate', '1.0', '--start', '0.0', '--delay', '1.0', '/data/drive.bag']
    assert params['/use_sim_time'] is True


def test_a_relative_bag_is_taken_from_where_the_command_was_typed():
    """roslaunch starts rosbag play in ROS_HOME (~/.ros): the path is made absolute from $PWD first."""
    assert load('bag:=drive_2024.bag')[0][-1] == '/home/user/drives/drive_2024.bag'
    assert load('bag:=sub/drive.bag', pwd='/tmp')[0][-1] == '/tmp/sub/drive.bag'


def test_the_arguments_reach_rosbag_play():
    args, params = load('bag:=/d.bag', 'clock:=false', 'loop:=true', 'rate:=2', 'start:=12.5', 'delay:=3')
    assert args == ['--loop', '--rate', '2', '--start', '12.5', '--delay', '3', '/d.bag']
    assert '/use_sim_time' not in params
