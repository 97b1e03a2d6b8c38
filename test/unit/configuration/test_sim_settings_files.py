"""sim_settings_files: MORAI SIM's saved settings files read and checked (poses, the keys a file must
have and the keys it has that MORAI does not write there).  What the bridge makes of them:
test_settings_plan.py.  Expected values are read off the public files in test/data/morai_settings/
(README there names their repositories and commits), poses are checked against values worked out by
hand in the comments."""
import copy
import math

import pytest

from morai_bridge.configuration import sim_settings_files as files
from settings_files import BAQU4, BAQU4_NET, HEVEN, HEVEN_NET, edited, net_entries, write


# ----------------------------------------------------------------------------- mount poses (heven, baqu4)

def test_heven_camera_poses_rep103():
    sensors = files.load_sensors(HEVEN).sensors
    cams = [s for s in sensors if s.kind == 'camera']
    # pos as saved; rot 0..360 wrapped: (0, 2, 0), (0, 10, 70), (0, 10, 290 -> -70), (0, 330 -> -30, 0)
    assert [tuple(c.pose) for c in cams] == [(1.9, 0.0, 1.2, 0.0, 2.0, 0.0), (1.15, 0.65, 1.2, 0.0, 10.0, 70.0),
                                             (1.15, -0.65, 1.2, 0.0, 10.0, -70.0), (1.9, 0.0, 1.2, 0.0, -30.0, 0.0)]
    lidar = [s for s in sensors if s.kind == 'lidar'][0]
    assert tuple(lidar.pose) == (1.15, 0.0, 1.4, 0.0, 0.0, 0.0)


def test_mount_quaternion_and_view_direction():
    """The TF the node broadcasts for camera 2 (pitch 10, yaw 70): q = qz(70) qy(10) =
    (-sin35 sin5, cos35 sin5, sin35 cos5, cos35 cos5); its x axis (where the camera looks) is
    (cos70 cos10, sin70 cos10, -sin10): forward-left (the left side camera looks out of the car) and
    down (MORAI's + pitch is nose down, as REP-103's)."""
    sensor_bridge = pytest.importorskip('morai_bridge.ros.sensors.sensor_bridge')
    s = [s for s in files.load_sensors(HEVEN).sensors if s.key == 'cameraList[1]'][0]
    t = sensor_bridge.mount_transform('base_link', 'Camera-2', *s.pose).transform
    r = math.radians
    q = (t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w)
    assert q == pytest.approx((-math.sin(r(35)) * math.sin(r(5)), math.cos(r(35)) * math.sin(r(5)),
                               math.sin(r(35)) * math.cos(r(5)), math.cos(r(35)) * math.cos(r(5))), abs=1e-12)
    x, y, z, w = q
    look = (1 - 2 * (y * y + z * z), 2 * (x * y + z * w), 2 * (x * z - y * w))
    assert look == pytest.approx((math.cos(r(70)) * math.cos(r(10)), math.sin(r(70)) * math.cos(r(10)),
                                  -math.sin(r(10))), abs=1e-12)
    assert (t.translation.x, t.translation.y, t.translation.z) == (1.15, 0.65, 1.2)


def test_wrap_deg():
    assert [files.wrap_deg(a) for a in (0, 2, 180, 181, 290, 330, 355, 360, 540, -190, -180)] == \
        [0.0, 2.0, 180.0, -179.0, -70.0, -30.0, -5.0, 0.0, 180.0, 170.0, 180.0]


def test_baqu4_camera_pitch_355_is_minus_5():
    cam = [s for s in files.load_sensors(BAQU4).sensors if s.kind == 'camera'][0]
    assert tuple(cam.pose) == (1.53, 0.0, 1.4, 0.0, -5.0, 0.0)


# ----------------------------------------------------------------------------- bad files

@pytest.mark.parametrize('edit, key', [
    (lambda d: d['cameraList'][1]['cc']['udpConfig'].pop('destinationPort'),
     'cameraList[1].cc.udpConfig.destinationPort: missing'),
    (lambda d: d['cameraList'][0]['cc']['udpConfig'].__setitem__('destinationPort', 70000),
     'cameraList[0].cc.udpConfig.destinationPort=70000'),
    (lambda d: d['cameraList'][2]['rot'].__setitem__('yaw', 'left'), "cameraList[2].rot.yaw='left': expected a number"),
    (lambda d: d['cameraList'][3].pop('pos'), 'cameraList[3].pos: missing'),
    (lambda d: d['cameraList'][0]['cc'].pop('cameraFOV'), 'cameraList[0].cc.cameraFOV: missing'),
    (lambda d: d['cameraList'][0]['cc'].__setitem__('cameraResWidth', 0), 'cameraList[0].cc.cameraResWidth=0'),
    (lambda d: d['Lidar3DList'][0]['lc'].__setitem__('lidar3DType', 7), 'Lidar3DList[0].lc.lidar3DType=7: unknown'),
    (lambda d: d['Lidar3DList'][0]['lc'].__setitem__('velodyneUnit', 0.25), 'Lidar3DList[0].lc.velodyneUnit=0.25'),
    (lambda d: d['Lidar3DList'][0].pop('lc'), 'Lidar3DList[0]: no configuration object'),
    (lambda d: d['cameraList'][1]['cc']['udpConfig'].__setitem__('destinationPort', 9291),
     'cameraList[0] and cameraList[1] have the same destination port 9291'),
    (lambda d: d['cameraList'][1]['cc']['rosConfig'].__setitem__('frameID', 'Camera-1'),
     "cameraList[0] and cameraList[1] have the same rosConfig.frameID 'Camera-1'"),
    (lambda d: d.__setitem__('cameraList', {}), 'cameraList: expected a list'),
    (lambda d: [d.pop(k) for k in ('cameraList', 'Lidar3DList', 'Lidar2DList', 'GPSList', 'IMUList')],
     'not a MORAI sensor settings file'),
])
def test_bad_sensor_file_names_the_key(tmp_path, edit, key):
    path = write(tmp_path, edited(HEVEN, edit))
    with pytest.raises(files.SettingsError) as e:
        files.load_sensors(path)
    assert key in str(e.value)
    assert path in str(e.value)


def test_truncated_file_is_not_json(tmp_path):
    with open(HEVEN) as f:
        text = f.read()
    path = write(tmp_path, text[:len(text) // 2])
    with pytest.raises(files.SettingsError, match='not JSON'):
        files.load_sensors(path)


@pytest.mark.parametrize('edit, key', [
    (lambda d: d.pop('egoNetworkData'), 'egoNetworkData: missing'),
    (lambda d: d['egoNetworkData'][0]['listEgoNetworkInfo'][1]['config']['udpConfig'].pop('destinationPort'),
     'egoNetworkData[0].listEgoNetworkInfo[1].config.udpConfig.destinationPort: missing'),
    (lambda d: d['egoNetworkData'][0]['listEgoNetworkInfo'][0]['EgoCtrlConfig']['udpConfig'].__setitem__(
        'hostPort', 'x'), 'egoNetworkData[0].listEgoNetworkInfo[0].EgoCtrlConfig.udpConfig.hostPort=\'x\''),
    (lambda d: d['egoNetworkData'][0]['listEgoNetworkInfo'][4].pop('PUBSUB_TYPE'),
     'egoNetworkData[0].listEgoNetworkInfo[4].PUBSUB_TYPE: missing'),
])
def test_bad_network_file_names_the_key(tmp_path, edit, key):
    path = write(tmp_path, edited(HEVEN_NET, edit))
    with pytest.raises(files.SettingsError) as e:
        files.load_network(path)
    assert key in str(e.value)


# ----------------------------------------------------------------------------- keys that are not read

def test_the_public_files_have_no_key_the_schema_lacks():
    """The schema of the keys MORAI writes is the public files' (a key missing from it would be a
    warning on every real file)."""
    for path in (HEVEN, BAQU4):
        assert files.load_sensors(path).warnings == ()
    for path in (HEVEN_NET, BAQU4_NET):
        assert files.load_network(path).warnings == ()


@pytest.mark.parametrize('edit, expect', [
    # a typo next to a key that is read
    (lambda d: net_entries(d)[2]['config']['udpConfig'].__setitem__('destinationIp', '127.0.0.1'),
     'egoNetworkData[0].listEgoNetworkInfo[2].config.udpConfig.destinationIp: did you mean destinationIP?'),
    # a block one level too high
    (lambda d: d['egoNetworkData'][0].__setitem__('EgoCtrlConfig', {}),
     'egoNetworkData[0].EgoCtrlConfig: MORAI writes EgoCtrlConfig in egoNetworkData[].listEgoNetworkInfo[], not here'),
    # the UDP ego control block in the collision entry, the ego control entry's switched off
    (lambda d: [net_entries(d)[1].__setitem__('EgoCtrlConfig', net_entries(d)[0]['EgoCtrlConfig']),
                net_entries(d)[0].__setitem__('EgoCtrlConfig', dict(net_entries(d)[0]['EgoCtrlConfig'], commType=0))],
     'egoNetworkData[0].listEgoNetworkInfo[1].EgoCtrlConfig.commType is 1 (UDP) in a PUBSUB_TYPE 261 entry'),
    (lambda d: net_entries(d)[0]['EgoCtrlConfig'].__setitem__('commType', 0),
     'listEgoNetworkInfo[0].EgoCtrlConfig.commType is not 1 (UDP) although the entry\'s netType is 1'),
    (lambda d: d.__setitem__('egoNetworkDatas', []), 'egoNetworkDatas: did you mean egoNetworkData?'),
])
def test_unread_network_keys_are_warnings_with_their_path(tmp_path, edit, expect):
    path = write(tmp_path, edited(HEVEN_NET, edit))
    warnings = files.load_network(path).warnings
    assert len([w for w in warnings if expect in w]) == 1, warnings
    assert all(w.startswith(path + ': ') for w in warnings)


@pytest.mark.parametrize('edit, expect', [
    (lambda d: d['cameraList'][1]['cc'].__setitem__('cameraFov', 90), 'cameraList[1].cc.cameraFov: did you mean cameraFOV?'),
    (lambda d: d['GPSList'][0]['gc']['udpConfig'].__setitem__('Topic', '/gps'),
     'GPSList[0].gc.udpConfig.Topic: MORAI writes Topic in'),
    (lambda d: d['IMUList'][0].__setitem__('position', {}), 'IMUList[0].position: no MORAI settings file we know'),
    (lambda d: d['Lidar2DList'].append(copy.deepcopy(dict(d['Lidar3DList'][0], lc=dict(d['Lidar3DList'][0]['lc'],
                                                                                       extra=1)))),
     'Lidar2DList[0].lc.extra'),
])
def test_unread_sensor_keys_are_warnings_with_their_path(tmp_path, edit, expect):
    d = edited(HEVEN, edit)
    for e in d['Lidar2DList']:                 # a 2D LiDAR copied from the 3D one needs its own port, frame, topic
        e['lc']['udpConfig']['destinationPort'] = 2999
        e['lc']['rosConfig'].update(frameID='scan', Topic='/scan')
    warnings = files.load_sensors(write(tmp_path, d)).warnings
    assert len([w for w in warnings if expect in w]) == 1, warnings
    assert len(warnings) == 1, warnings          # no other key is reported (the 2D LiDAR's fireDistance is read)


def test_address_origin_names_the_key_of_the_destination_address():
    sensors = files.load_sensors(HEVEN)
    by_key = {s.key: s for s in sensors.sensors}
    assert files.address_origin(sensors, by_key['GPSList[0]']) == f'{HEVEN}: GPSList[0].gc.udpConfig.destinationIP'
    assert files.address_origin(sensors, by_key['cameraList[1]']) == \
        f'{HEVEN}: cameraList[1].cc.udpConfig.destinationIP'


def test_sensor_key_names_any_key_of_a_sensors_configuration():
    """The keys morai_settings names when it says what to change in the simulator (issue 48): a port, commType."""
    sensors = files.load_sensors(BAQU4)
    by_key = {s.key: s for s in sensors.sensors}
    assert files.sensor_key(by_key['GPSList[0]'], 'commType') == 'GPSList[0].gc.commType'
    assert files.address_origin(sensors, by_key['Lidar3DList[0]'], 'udpConfig.destinationPort') == \
        f'{BAQU4}: Lidar3DList[0].lc.udpConfig.destinationPort'
    assert by_key['GPSList[0]'].comm == files.COMM_ROS
