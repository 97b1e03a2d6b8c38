"""The two names of each sensor topic (configuration.topic_names): the ROS driver convention by default,
MORAI's native ROS mode's with ~native_names; a topic set to a name keeps it.  The native names are the
ones MORAI's own saved sensor settings hold (test/data/morai_settings/: rosConfig.Topic of the 3D LiDAR
in both teams' files) and public code written for native mode subscribes (docs/ros_api.md)."""
import json
import os

import pytest

import helpers
from morai_bridge.configuration import topic_names
from morai_bridge.nodes import camera_bridge, lidar2d_bridge, lidar_bridge
from morai_bridge.ros.params import load

NODES = {'camera': camera_bridge, 'lidar': lidar_bridge, 'lidar2d': lidar2d_bridge}


def cfg_of(kind, **given):
    return load(NODES[kind].PARAMS, lambda n, d: given.get(n, d))


@pytest.mark.parametrize('kind, native, want', [
    ('lidar', False, 'velodyne_points'), ('lidar', True, 'lidar3D'),
    ('lidar2d', False, 'scan'), ('lidar2d', True, 'lidar2D'),
])
def test_a_topic_left_to_the_convention_gets_its_name(kind, native, want):
    cfg = topic_names.resolve(kind, cfg_of(kind, native_names=native))
    assert cfg.topic == want
    assert topic_names.name(kind, 'topic', native) == want


def test_a_topic_set_to_a_name_keeps_it():
    for native in (False, True):
        assert topic_names.resolve('lidar', cfg_of('lidar', topic='points', native_names=native)).topic == 'points'
        assert topic_names.resolve('lidar2d', cfg_of('lidar2d', topic='/front/scan',
                                                     native_names=native)).topic == '/front/scan'


def test_the_camera_is_named_alike_in_both_conventions():
    for native in (False, True):
        cfg = topic_names.resolve('camera', cfg_of('camera', native_names=native))
        assert (cfg.image_topic, cfg.camera_info_topic) == ('image_jpeg/compressed', 'image_jpeg/camera_info')
    with pytest.raises(KeyError):
        topic_names.name('camera', 'image_topic', True)


def test_every_topic_named_by_convention_defaults_to_it():
    """Each node's parameter of a SENSOR_TOPICS row defaults to BY_CONVENTION, and every sensor node has the
    one switch."""
    for t in topic_names.SENSOR_TOPICS:
        assert {p.name: p.default for p in NODES[t.kind].PARAMS}[t.param] == topic_names.BY_CONVENTION
    for node in NODES.values():
        assert {p.name: p.default for p in node.PARAMS}['native_names'] is False


def test_the_native_3d_lidar_name_is_the_one_morai_saves():
    """Both public SensorInfo files (25.S4 era, written by the simulator) give their 3D LiDAR rosConfig.Topic
    /lidar3D, GPS /gps, IMU /imu, and baqu4's ROS camera /image_jpeg/compressed."""
    saved = {}
    for name in ('heven_SensorInfo_2023_Hyundai_Ioniq5.json', 'baqu4_morai_sensor.json'):
        with open(os.path.join(helpers.ROOT, 'test', 'data', 'morai_settings', name)) as f:
            d = json.load(f)
        for key, cfg in (('Lidar3DList', 'lc'), ('GPSList', 'gc'), ('IMUList', 'ic'), ('cameraList', 'cc')):
            for entry in d[key]:
                topic = entry[cfg]['rosConfig']['Topic']
                if topic:
                    saved.setdefault(key, set()).add(topic)
    assert saved == {'Lidar3DList': {'/lidar3D'}, 'GPSList': {'/gps'}, 'IMUList': {'/imu'},
                     'cameraList': {'/image_jpeg/compressed'}}
    assert '/' + topic_names.name('lidar', 'topic', True) in saved['Lidar3DList']
