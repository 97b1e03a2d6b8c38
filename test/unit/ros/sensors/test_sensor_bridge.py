"""What the sensor bridges share (ros/sensors/sensor_bridge.py), without a master: packet stamps, mount and
optical transforms, ~port 0 refused by every bridge, and sensor_bridge.launch's wiring.  Each
stream's own messages: test_camera_ros.py, test_lidar_ros.py, test_lidar2d_ros.py; the parameter
tables: test_sensor_params.py.
"""
import os
import xml.etree.ElementTree as ET
from io import BytesIO
import pytest

import rospy
from std_msgs.msg import Header

import helpers
from morai_bridge.nodes import camera_bridge, lidar2d_bridge, lidar_bridge
from morai_bridge.ros.sensors import camera_ros, lidar2d_ros, lidar_ros, sensor_bridge
from morai_bridge.configuration.params import ParamError
from morai_bridge.ros.params import load

ROOT = helpers.ROOT


def rotate(q, v):
    """Vector v rotated by quaternion q = (x, y, z, w)."""
    x, y, z, w = q
    vx, vy, vz = v
    # v' = v + 2w (u x v) + 2 u x (u x v)
    cx, cy, cz = y * vz - z * vy, z * vx - x * vz, x * vy - y * vx
    ccx, ccy, ccz = y * cz - z * cy, z * cx - x * cz, x * cy - y * cx
    return (vx + 2 * (w * cx + ccx), vy + 2 * (w * cy + ccy), vz + 2 * (w * cz + ccz))


def q_of(t):
    r = t.transform.rotation
    return (r.x, r.y, r.z, r.w)


def close(a, b, tol=1e-9):
    return all(abs(p - q) <= tol for p, q in zip(a, b))


def test_unsigned_camera_stamps_are_times():
    """The codec reads camera/BOX sec as uint32: every value is a ROS time (uint32 sec)."""
    from morai_bridge.ros.sensors.sensor_bridge import sim_stamp
    assert sim_stamp(2 ** 32 - 1, 999999999) == rospy.Time(2 ** 32 - 1, 999999999)
    assert sim_stamp(2 ** 31, 0) == rospy.Time(2 ** 31, 0)
    assert sim_stamp(5, 10 ** 9) is None
    buf = BytesIO()
    Header(stamp=sim_stamp(2 ** 32 - 1, 999999999)).serialize(buf)


# ----------------------------------------------------------------------------- TF

def test_mount_transform_rep103():
    t = sensor_bridge.mount_transform('base_link', 'velodyne', 1.0, 2.0, 3.0, 0.0, 0.0, 90.0)
    assert (t.header.frame_id, t.child_frame_id) == ('base_link', 'velodyne')
    v = t.transform.translation
    assert (v.x, v.y, v.z) == (1.0, 2.0, 3.0)
    assert close(rotate(q_of(t), (1, 0, 0)), (0, 1, 0))                  # yaw +90: forward turns left
    pitch = sensor_bridge.mount_transform('a', 'b', 0, 0, 0, 0.0, 30.0, 0.0)
    fwd = rotate(q_of(pitch), (1, 0, 0))
    assert fwd[2] == pytest.approx(-0.5)                                 # pitch +: nose down
    roll = sensor_bridge.mount_transform('a', 'b', 0, 0, 0, 90.0, 0.0, 0.0)
    assert close(rotate(q_of(roll), (0, 1, 0)), (0, 0, 1))               # roll +90: left turns up
    both = sensor_bridge.mount_transform('a', 'b', 0, 0, 0, 90.0, 0.0, 90.0)
    # fixed axes: roll first, then yaw: y -> z (roll), z stays under yaw
    assert close(rotate(q_of(both), (0, 1, 0)), (0, 0, 1))
    assert close(rotate(q_of(both), (1, 0, 0)), (0, 1, 0))


def test_optical_frame_axes():
    t = sensor_bridge.optical_transform('camera', 'camera_optical')
    assert (t.header.frame_id, t.child_frame_id) == ('camera', 'camera_optical')
    q = q_of(t)
    assert close(rotate(q, (0, 0, 1)), (1, 0, 0))        # optical z (forward) = body x
    assert close(rotate(q, (1, 0, 0)), (0, -1, 0))       # optical x (right) = body -y
    assert close(rotate(q, (0, 1, 0)), (0, 0, -1))       # optical y (down) = body -z


def test_port_zero_is_refused():
    for mod, cls in ((camera_bridge, camera_ros.CameraBridge), (lidar_bridge, lidar_ros.LidarBridge),
                     (lidar2d_bridge, lidar2d_ros.Lidar2dBridge)):
        cfg = load(mod.PARAMS, lambda n, d: 0 if n == 'port' else d)
        with pytest.raises(ParamError, match='~port is 0'):
            cls(cfg)


# ----------------------------------------------------------------------------- sensor_bridge.launch

def test_sensor_bridge_launch_wiring():
    root = ET.parse(os.path.join(ROOT, 'launch', 'sensor_bridge.launch')).getroot()
    args = {a.get('name'): a.get('default') for a in root.findall('arg')}
    for name, default in (('camera_port', '1232'), ('lidar_port', '2368'), ('lidar_model', 'VLP16'),
                          ('lidar2d_port', '0'), ('sim_ip', '127.0.0.1'), ('bind_ip', '127.0.0.1'),
                          ('stamp_source', 'sim'), ('output', 'screen')):
        assert args.get(name) == default, name
    includes = {os.path.basename(i.get('file')): i for i in root.findall('include')}
    assert set(includes) == {'camera_bridge.launch', 'lidar_bridge.launch', 'lidar2d_bridge.launch'}
    for launch, prefix, port in (('camera_bridge.launch', 'camera', 'camera_port'),
                                 ('lidar_bridge.launch', 'lidar', 'lidar_port'),
                                 ('lidar2d_bridge.launch', 'lidar2d', 'lidar2d_port')):
        inc = includes[launch]
        # settings:= (MORAI's saved sensor settings, docs/settings.md) includes every node
        assert inc.get('if') == f"$(eval {port} != 0 or settings not in ('', 'none'))"  # none: the default word
        passed = {a.get('name'): a.get('value') for a in inc.findall('arg')}
        assert (passed['settings'], passed['settings_sensor']) == ('$(arg settings)', f'$(arg {prefix}_sensor)')
        assert passed['port'] == f'$(arg {port})'
        assert passed['sim_ip'] == '$(arg sim_ip)' and passed['bind_ip'] == '$(arg bind_ip)'
        for axis in ('x', 'y', 'z', 'roll', 'pitch', 'yaw'):
            assert passed['mount_' + axis] == f'$(arg {prefix}_{axis})'
            assert args[f'{prefix}_{axis}'] == '0.0'
        # every arg passed exists in the included (generated) launch file
        inner = ET.parse(os.path.join(ROOT, 'launch', launch)).getroot()
        names = {a.get('name') for a in inner.findall('arg')}
        assert set(passed) <= names, set(passed) - names
    assert {a.get('name'): a.get('value') for a in includes['lidar_bridge.launch'].findall('arg')}[
        'model'] == '$(arg lidar_model)'
    assert {a.get('name'): a.get('value') for a in includes['lidar2d_bridge.launch'].findall('arg')}[
        'range_max'] == '$(arg lidar2d_range_max)' and args['lidar2d_range_max'] == '0.0'
