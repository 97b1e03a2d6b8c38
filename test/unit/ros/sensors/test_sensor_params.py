"""The parameters every sensor bridge node declares (ros/sensors/sensor_params.py): the three nodes' defaults
and the checks of their tables.
"""
import pytest

from morai_bridge.nodes import camera_bridge, lidar2d_bridge, lidar_bridge
from morai_bridge.configuration.params import ParamError
from morai_bridge.ros.params import load


# ----------------------------------------------------------------------------- parameter tables

def defaults(node):
    return {p.name: p.default for p in node.PARAMS}


def test_node_defaults():
    cam, lid, l2d = defaults(camera_bridge), defaults(lidar_bridge), defaults(lidar2d_bridge)
    assert (cam['port'], lid['port'], l2d['port']) == (1232, 2368, 0)
    # the LiDARs' topics are named by the convention (~native_names: velodyne_points / lidar3D, scan / lidar2D)
    assert cam['image_topic'] == 'image_jpeg/compressed' and lid['topic'] == '' and l2d['topic'] == ''
    assert cam['native_names'] is lid['native_names'] is l2d['native_names'] is False
    assert (cam['frame_id'], cam['optical_frame_id'], lid['frame_id'], l2d['frame_id']) == (
        'camera', 'camera_optical', 'velodyne', 'laser')
    for d in (cam, lid, l2d):
        assert d['parent_frame'] == 'base_link' and d['sim_ip'] == '127.0.0.1' and d['publish_tf'] is True
        for k in ('mount_x', 'mount_y', 'mount_z', 'mount_roll', 'mount_pitch', 'mount_yaw'):
            assert d[k] == 0.0
    assert 'stamp_source' in cam and 'stamp_source' in lid and 'stamp_source' not in l2d
    models = [p for p in lidar_bridge.PARAMS if p.name == 'model'][0].choices
    assert set(models) == {'VLP16', 'PUCK_HIRES', 'HDL32E', 'VLP32C', 'MORAI_64'}


def test_params_are_checked():
    with pytest.raises(ParamError, match='stamp_source'):
        load(lidar_bridge.PARAMS, lambda n, d: 'gps' if n == 'stamp_source' else d)
    with pytest.raises(ParamError, match='model'):
        load(lidar_bridge.PARAMS, lambda n, d: 'HDL64' if n == 'model' else d)
    with pytest.raises(ParamError, match='port'):
        load(camera_bridge.PARAMS, lambda n, d: 70000 if n == 'port' else d)
