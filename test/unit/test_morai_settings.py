"""morai_settings: MORAI SIM's saved settings -> bridge nodes (configuration.morai_settings) -> launch XML
(nodes.morai_settings).  Expected values are read off the public files in test/data/morai_settings/
(README there names their repositories and commits), poses are checked against values worked out by
hand in the comments."""
import copy
import io
import json
import math
import os
import re
import xml.etree.ElementTree as ET
from contextlib import redirect_stderr, redirect_stdout

import pytest

from morai_bridge.configuration import morai_settings as ms

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, 'test', 'data', 'morai_settings')
HEVEN = os.path.join(DATA, 'heven_SensorInfo_2023_Hyundai_Ioniq5.json')
HEVEN_NET = os.path.join(DATA, 'heven_NetworkInfo_2023_Hyundai_Ioniq5.template.json')
BAQU4 = os.path.join(DATA, 'baqu4_morai_sensor.json')
BAQU4_NET = os.path.join(DATA, 'baqu4_morai_network.json')


def doc(path):
    with open(path) as f:
        return json.load(f)


def WARN(line):
    raise AssertionError('unexpected warning: %s' % line)


def nodes_of(plan):
    return {n.name: n for n in plan.nodes}


# ----------------------------------------------------------------------------- multi-camera UDP (heven)

def test_heven_one_node_per_udp_sensor_with_the_files_ports():
    plan = ms.plan(ms.load_sensors(HEVEN), ms.load_network(HEVEN_NET))
    nodes = nodes_of(plan)
    assert sorted(nodes) == ['camera_bridge_1', 'camera_bridge_2', 'camera_bridge_3', 'camera_bridge_4',
                             'lidar_bridge', 'udp_bridge']
    # cameraList[i].cc.udpConfig.destinationPort
    assert [nodes['camera_bridge_%d' % i].params['port'] for i in (1, 2, 3, 4)] == [9291, 9293, 9295, 9307]
    lidar = nodes['lidar_bridge'].params
    assert (lidar['port'], lidar['model'], lidar['topic'], lidar['frame_id']) == (2368, 'VLP16', '/lidar3D',
                                                                                  'Lidar3D-5')
    bridge = nodes['udp_bridge'].params
    # sensor file: GPSList[0] 9296 -> 9297, IMUList[0] 9298 -> 9299; network file: 770 1910 -> 1911,
    # 772 7605 -> 7505, 261 9091 -> 9092 (rx: destinationPort); 259 7607, 260 7604, 783 9095 and the
    # EgoCtrlConfig of 771 9093 (tx: hostPort)
    configured = {'gps_port': 9297, 'imu_port': 9299, 'gps_topic': '/gps', 'imu_topic': '/imu',
                  'gps_frame_id': 'GPS-6', 'imu_frame_id': 'IMU-7', 'sim_ip': '127.0.0.1',
                  'bind_ip': '127.0.0.1', 'ego_status_port': 1911, 'object_info_port': 7505,
                  'collision_port': 9092, 'ctrl_cmd_port': 9093, 'set_traffic_light_port': 7607,
                  'multi_ego_port': 7604, 'ego_ghost_port': 9095, 'competition_status_port': 1909}
    assert {k: v for k, v in bridge.items() if k in configured} == configured
    # every other stream of udp_bridge is off: the settings do not say the simulator uses it
    others = {k: v for k, v in bridge.items() if k not in configured}
    assert set(others) == {'%s_port' % n for n in ('traffic_light', 'intersection', 'vehicle_collision',
                                                   'sim_status', 'sync_state', 'set_intersection', 'lamps',
                                                   'scenario_load', 'save_sensor_data', 'sensor_control',
                                                   'npc_ghost', 'gv_direct', 'gv_state', 'sim_control', 'sync')}
    assert set(others.values()) == {0}
    # 295 (competition status, 1908 -> 1909): udp_bridge's competition_status port (/Competition_topic)
    for pubsub in (266, 267, 780):
        assert any('PUBSUB_TYPE %d ' % pubsub in line for line in plan.not_started)


def test_without_network_file_udp_bridge_keeps_its_defaults():
    plan = ms.plan(ms.load_sensors(HEVEN))
    bridge = nodes_of(plan)['udp_bridge'].params
    assert (bridge['gps_port'], bridge['imu_port']) == (9297, 9299)
    assert 'ego_status_port' not in bridge and 'ctrl_cmd_port' not in bridge
    assert any('no network settings given' in n for n in plan.notes)


def test_udp_bridge_only_when_the_settings_give_it_something():
    """baqu4's sensor file alone: GPS and IMU over ROS, no network file: no udp_bridge."""
    assert [n.node for n in ms.plan(ms.load_sensors(BAQU4)).nodes] == ['lidar_bridge']


def test_cameras_with_topics_keep_their_boxes_apart(tmp_path):
    def topics(d):
        for i, c in enumerate(d['cameraList']):
            c['cc']['rosConfig']['Topic'] = '/cam%d/image_jpeg/compressed' % i
    nodes = nodes_of(ms.plan(ms.load_sensors(write(tmp_path, edited(HEVEN, topics)))))
    c = nodes['camera_bridge_2'].params
    assert (c['image_topic'], c['camera_info_topic'], c['boxes_topic']) == (
        '/cam1/image_jpeg/compressed', '/cam1/image_jpeg/camera_info', 'camera_2/camera/boxes')


def test_heven_camera_poses_rep103():
    sensors = ms.load_sensors(HEVEN).sensors
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
    sensor_bridge = pytest.importorskip('morai_bridge.ros.sensor_bridge')
    s = [s for s in ms.load_sensors(HEVEN).sensors if s.key == 'cameraList[1]'][0]
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
    assert [ms.wrap_deg(a) for a in (0, 2, 180, 181, 290, 330, 355, 360, 540, -190, -180)] == \
        [0.0, 2.0, 180.0, -179.0, -70.0, -30.0, -5.0, 0.0, 180.0, 170.0, 180.0]


def test_heven_camera_intrinsics_and_topics():
    nodes = nodes_of(ms.plan(ms.load_sensors(HEVEN)))
    c1, c2 = nodes['camera_bridge_1'].params, nodes['camera_bridge_2'].params
    assert (c1['width'], c1['height'], c1['fov_deg'], c1['cx'], c1['cy']) == (1280, 720, 90.0, 640.0, 360.0)
    assert (c2['width'], c2['height'], c2['fov_deg'], c2['cx'], c2['cy']) == (640, 480, 130.0, 320.0, 240.0)
    # rosConfig.Topic is empty for the cameras: four cameras get their own namespace
    assert c2['image_topic'] == 'camera_2/image_jpeg/compressed'
    assert c2['camera_info_topic'] == 'camera_2/image_jpeg/camera_info'
    assert (c2['frame_id'], c2['optical_frame_id']) == ('Camera-2', 'Camera-2_optical')


def test_focal_length_that_disagrees_with_the_fov_is_a_note(tmp_path):
    """heven's focalLengthpixel is 320 for every camera: (1280 / 2) / tan(45 deg) = 640 and
    (640 / 2) / tan(65 deg) = 149.2 say the FOV was changed after; baqu4's 457.1 agrees with
    (640 / 2) / tan(35 deg) = 457.0 (no note)."""
    s = [s for s in ms.load_sensors(HEVEN).sensors if s.kind == 'camera']
    assert s[1].extra['fx'] == pytest.approx(320.0 / math.tan(math.radians(65.0)))
    notes = ms.plan(ms.load_sensors(HEVEN)).notes
    assert sum('focalLengthpixel 320.0' in n for n in notes) == 4
    udp = write(tmp_path, edited(BAQU4, lambda d: d['cameraList'][0]['cc'].__setitem__('commType', 1)))
    b = [s for s in ms.load_sensors(udp).sensors if s.kind == 'camera'][0]
    assert (b.extra['fx'], b.extra['fx_file']) == (pytest.approx(457.01, abs=0.01), pytest.approx(457.1))
    assert not any('focalLength' in n for n in ms.plan(ms.load_sensors(udp)).notes)


# ----------------------------------------------------------------------------- mixed ROS / UDP (baqu4)

def test_baqu4_ros_sensors_are_listed_not_started():
    plan = ms.plan(ms.load_sensors(BAQU4), ms.load_network(BAQU4_NET))
    nodes = nodes_of(plan)
    assert sorted(nodes) == ['lidar_bridge', 'udp_bridge']
    lidar = nodes['lidar_bridge'].params
    # Lidar3DList[0]: lidar3DType 13, 2369 -> 2368, pos (1.530, 0, 1.450)
    assert (lidar['port'], lidar['model']) == (2368, 'HDL32E')
    assert (lidar['mount_x'], lidar['mount_y'], lidar['mount_z']) == (1.53, 0.0, 1.45)
    off = '\n'.join(plan.not_started)
    assert 'cameraList[0] (camera, m_SensorUniqueID 4): ROS on /image_jpeg/compressed' in off
    assert 'GPSList[0] (gps, m_SensorUniqueID 3): ROS on /gps' in off
    assert 'IMUList[0] (imu, m_SensorUniqueID 1): ROS on /imu' in off
    bridge = nodes['udp_bridge'].params
    # GPS and IMU over ROS: udp_bridge does not bind them; network: 770 910 -> 9121, 261 9091 -> 9122,
    # 772 7605 -> 7505, ego control 9123 (their own launch files: status 9121, collision 9122, ctrl 9123)
    assert (bridge['gps_port'], bridge['imu_port']) == (0, 0)
    assert (bridge['ego_status_port'], bridge['collision_port'], bridge['object_info_port'],
            bridge['ctrl_cmd_port']) == (9121, 9122, 7505, 9123)


def test_baqu4_camera_pitch_355_is_minus_5():
    cam = [s for s in ms.load_sensors(BAQU4).sensors if s.kind == 'camera'][0]
    assert tuple(cam.pose) == (1.53, 0.0, 1.4, 0.0, -5.0, 0.0)


def test_competition_status_has_its_own_port_when_770_is_not_udp(tmp_path):
    d = doc(HEVEN_NET)
    for info in d['egoNetworkData'][0]['listEgoNetworkInfo']:
        if info['PUBSUB_TYPE'] == 770:
            info['netType'] = 0
    p = tmp_path / 'net.json'
    p.write_text(json.dumps(d))
    params = nodes_of(ms.plan(None, ms.load_network(str(p))))['udp_bridge'].params
    assert (params['competition_status_port'], params['ego_status_port']) == (1909, 0)


# ----------------------------------------------------------------------------- bad files

def write(tmp_path, d, name='s.json'):
    p = tmp_path / name
    p.write_text(d if isinstance(d, str) else json.dumps(d))
    return str(p)


def edited(path, edit):
    d = copy.deepcopy(doc(path))
    edit(d)
    return d


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
    with pytest.raises(ms.SettingsError) as e:
        ms.load_sensors(path)
    assert key in str(e.value)
    assert path in str(e.value)


def test_truncated_file_is_not_json(tmp_path):
    with open(HEVEN) as f:
        text = f.read()
    path = write(tmp_path, text[:len(text) // 2])
    with pytest.raises(ms.SettingsError, match='not JSON'):
        ms.load_sensors(path)


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
    with pytest.raises(ms.SettingsError) as e:
        ms.load_network(path)
    assert key in str(e.value)


# ----------------------------------------------------------------------------- keys that are not read

def test_the_public_files_have_no_key_the_schema_lacks():
    """The schema of the keys MORAI writes is the public files' (a key missing from it would be a
    warning on every real file)."""
    for path in (HEVEN, BAQU4):
        assert ms.load_sensors(path).warnings == ()
    for path in (HEVEN_NET, BAQU4_NET):
        assert ms.load_network(path).warnings == ()


def net_entries(d):
    return d['egoNetworkData'][0]['listEgoNetworkInfo']


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
    warnings = ms.load_network(path).warnings
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
    warnings = ms.load_sensors(write(tmp_path, d)).warnings
    assert len([w for w in warnings if expect in w]) == 1, warnings
    assert len(warnings) == 1, warnings          # no other key is reported (the 2D LiDAR's fireDistance is read)


def test_cli_warns_on_stderr_and_in_the_launch_file(tmp_path):
    net = write(tmp_path, edited(HEVEN_NET, lambda d: d['egoNetworkData'][0].__setitem__('EgoCtrlConfig', {})), 'n.json')
    code, out, err = run_cli(HEVEN, net)
    assert code == 0
    line = 'egoNetworkData[0].EgoCtrlConfig: MORAI writes EgoCtrlConfig'
    assert 'morai_settings: warning: %s: %s' % (net, line) in err
    assert line in out.split('<node')[0]                 # in the comment at the top


# ----------------------------------------------------------------------------- the address udp_bridge binds

def test_the_skeletons_of_docs_settings_md(tmp_path):
    """docs/settings.md's two skeletons (two PCs) load without a warning and give what the page says."""
    with open(os.path.join(os.path.dirname(__file__), '..', '..', 'docs', 'settings.md')) as f:
        blocks = [json.loads(b) for b in re.findall(r'```json\n(.*?)```', f.read(), re.S)]
    network = ms.parse_network([b for b in blocks if 'egoNetworkData' in b][0], 'network')
    sensors = ms.parse_sensors([b for b in blocks if 'cameraList' in b][0], 'sensors')
    assert (network.warnings, sensors.warnings) == ((), ())
    nodes = nodes_of(ms.plan(sensors, network))
    assert sorted(nodes) == ['camera_bridge', 'lidar_bridge', 'udp_bridge']
    for n in nodes.values():
        assert (n.params['sim_ip'], n.params['bind_ip']) == ('192.168.0.10', '192.168.0.20'), n.name
    assert (nodes['camera_bridge'].params['port'], nodes['lidar_bridge'].params['port'],
            nodes['lidar_bridge'].params['model']) == (9291, 2368, 'VLP16')
    bridge = nodes['udp_bridge'].params
    assert [bridge[k + '_port'] for k in ('ego_status', 'object_info', 'collision', 'ctrl_cmd', 'gps', 'imu')] == \
        [1911, 7505, 9092, 9093, 9297, 9299]
    assert bridge['traffic_light_port'] == 0



def with_destination(path, ip, streams=None):
    """The network file with destinationIP ``ip`` on every entry (or the PUBSUB_TYPEs ``streams``)."""
    def edit(d):
        for e in net_entries(d):
            if streams is None or e['PUBSUB_TYPE'] in streams:
                e['config']['udpConfig']['destinationIP'] = ip
    return edited(path, edit)


def test_bind_ip_is_the_network_files_destination_address(tmp_path):
    net = ms.load_network(write(tmp_path, with_destination(BAQU4_NET, '192.168.0.20')))
    bridge = nodes_of(ms.plan(None, net))['udp_bridge'].params
    assert bridge['bind_ip'] == '192.168.0.20'
    assert ms.plan(None, net).nodes[0].bind_origin == (net.path + ': egoNetworkData[0].listEgoNetworkInfo[1]'
                                                       '.config.udpConfig.destinationIP')
    assert nodes_of(ms.plan(None, net, bind_ip='0.0.0.0'))['udp_bridge'].params['bind_ip'] == '0.0.0.0'


def test_bind_ip_two_addresses_are_an_error_naming_both(tmp_path):
    net = ms.load_network(write(tmp_path, with_destination(HEVEN_NET, '192.168.0.20', streams=(770,))))
    with pytest.raises(ms.SettingsError) as e:
        ms.plan(ms.load_sensors(HEVEN), net)
    text = str(e.value)
    assert '127.0.0.1 (%s: GPSList[0].gc.udpConfig.destinationIP)' % HEVEN in text
    assert '192.168.0.20 (%s: egoNetworkData[0].listEgoNetworkInfo[4].config.udpConfig.destinationIP)' % net.path \
        in text
    assert '--bind-ip' in text
    assert nodes_of(ms.plan(ms.load_sensors(HEVEN), net, bind_ip='0.0.0.0'))['udp_bridge'].params['bind_ip'] == '0.0.0.0'


def test_cli_warns_when_the_address_is_not_this_machines(tmp_path):
    net = write(tmp_path, with_destination(BAQU4_NET, '192.0.2.20'), 'n.json')     # TEST-NET-1: nobody's
    code, out, err = run_cli(BAQU4, net)
    assert code == 0
    assert 'udp_bridge: bind_ip 192.0.2.20 is not an address of this machine' in err
    assert '<param name="bind_ip" type="str" value="192.0.2.20" />' in out


def test_udp_bridge_stops_on_an_address_that_is_not_this_machines(tmp_path):
    from morai_bridge.link.transport import TransportError
    from morai_bridge.nodes import udp_bridge
    from morai_bridge.ros.params import load
    net = write(tmp_path, with_destination(BAQU4_NET, '192.0.2.20'), 'n.json')
    cfg = load(udp_bridge.PARAMS, lambda n, d: {'network_settings': net}.get(n, d))
    with pytest.raises(TransportError) as e:
        udp_bridge.apply_settings(cfg)
    assert str(e.value).startswith('~bind_ip=192.0.2.20 (from %s: egoNetworkData[0].listEgoNetworkInfo[1].config.'
                                   'udpConfig.destinationIP) is not an address of this machine' % net)
    cfg = load(udp_bridge.PARAMS, lambda n, d: {'network_settings': write(
        tmp_path, with_destination(BAQU4_NET, '127.0.0.2'), 'm.json')}.get(n, d))
    udp_bridge.apply_settings(cfg)
    assert cfg.bind_ip == '127.0.0.2'


def test_sensor_node_stops_on_an_address_that_is_not_this_machines(tmp_path):
    sensor_params = pytest.importorskip('morai_bridge.ros.sensor_params')
    from morai_bridge.link.transport import TransportError
    from morai_bridge.nodes import lidar_bridge
    from morai_bridge.ros.params import load
    path = write(tmp_path, edited(BAQU4, lambda d: d['Lidar3DList'][0]['lc']['udpConfig'].__setitem__(
        'destinationIP', '192.0.2.20')))
    cfg = load(lidar_bridge.PARAMS, lambda n, d: {'settings': path}.get(n, d))
    with pytest.raises(TransportError, match=r'~bind_ip=192.0.2.20 \(from .*Lidar3DList\[0\]\.lc\.udpConfig\.'
                                             r'destinationIP\) is not an address of this machine'):
        sensor_params.apply_settings(cfg, lidar_bridge.PARAMS, 'lidar', WARN)


# ----------------------------------------------------------------------------- the launch file

writer = pytest.importorskip('morai_bridge.nodes.morai_settings')


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = writer.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_cli_prints_a_launch_file_whose_params_the_nodes_declare():
    code, out, err = run_cli(HEVEN, HEVEN_NET)
    assert code == 0 and not err
    root = ET.fromstring(out)
    nodes = root.findall('node')
    assert [n.get('name') for n in nodes] == ['camera_bridge_1', 'camera_bridge_2', 'camera_bridge_3',
                                              'camera_bridge_4', 'lidar_bridge', 'udp_bridge']
    for n in nodes:
        declared = {p.name for p in writer.node_params_table(n.get('type'))}
        names = [p.get('name') for p in n.findall('param')]
        assert set(names) <= declared
    # parameters an earlier launch left on the master (e.g. ~settings) must not apply
    assert all(n.get('clear_params') == 'true' for n in nodes)
    cam4 = {p.get('name'): p.get('value') for p in nodes[3].findall('param')}
    assert (cam4['port'], cam4['mount_pitch'], cam4['frame_id']) == ('9307', '-30.0', 'Camera-4')
    assert 'competition_status_port' in out


def test_cli_mixed_file_lists_the_ros_sensors_in_a_comment():
    code, out, _ = run_cli(BAQU4)
    assert code == 0
    root = ET.fromstring(out)
    assert [n.get('type') for n in root.findall('node')] == ['lidar_bridge']      # GPS, IMU over ROS
    comments = [c for c in ET.fromstring(out, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
                if c.tag is ET.Comment]
    text = '\n'.join(c.text for c in comments)
    assert 'cameraList[0] (camera, m_SensorUniqueID 4): ROS on /image_jpeg/compressed' in text


def test_cli_out_file_is_written_whole_or_left_alone(tmp_path):
    target = tmp_path / 'morai.launch'
    assert run_cli(HEVEN, HEVEN_NET, '-o', str(target))[:2] == (0, '')
    good = target.read_text()
    assert good.startswith('<?xml') and good.rstrip().endswith('</launch>')
    bad = write(tmp_path, edited(HEVEN, lambda d: d['Lidar3DList'][0]['lc'].__setitem__('lidar3DType', 99)))
    code, out, err = run_cli(bad, '-o', str(target))
    assert (code, out) == (2, '') and 'lidar3DType=99' in err
    assert target.read_text() == good                    # the earlier file is kept, not emptied
    fresh = tmp_path / 'new.launch'
    assert run_cli(bad, '-o', str(fresh))[0] == 2
    assert not fresh.exists()
    assert sorted(os.listdir(str(tmp_path))) == sorted(['morai.launch', os.path.basename(bad)])   # no temp left
    code, _, err = run_cli(HEVEN, '-o', str(tmp_path / 'no' / 'dir.launch'))
    assert code == 2 and 'cannot write' in err


def test_cli_bad_file_prints_nothing_and_exits_2(tmp_path):
    path = write(tmp_path, edited(BAQU4, lambda d: d['Lidar3DList'][0]['lc'].__setitem__('lidar3DType', 99)))
    code, out, err = run_cli(path, BAQU4_NET)
    assert (code, out) == (2, '')
    assert 'Lidar3DList[0].lc.lidar3DType=99' in err


def test_writer_refuses_a_parameter_the_node_does_not_declare():
    plan = ms.Plan((ms.NodePlan('lidar_bridge', 'lidar_bridge', {'port': 2368, 'rpm': 600}, 'x'),), (), ())
    with pytest.raises(writer.LaunchError, match='lidar_bridge declares no parameter ~rpm'):
        writer.launch_xml(plan, ['x'])


def test_writer_checks_values_with_the_params_table():
    plan = ms.Plan((ms.NodePlan('lidar_bridge', 'lidar_bridge', {'model': 'HDL64'}, 'x'),), (), ())
    with pytest.raises(writer.LaunchError, match='~model'):
        writer.launch_xml(plan, ['x'])


def test_generated_launch_passes_roslaunch_check(tmp_path):
    rlutil = pytest.importorskip('roslaunch.rlutil')
    for args in ((HEVEN, HEVEN_NET), (BAQU4, BAQU4_NET)):
        code, out, _ = run_cli(*args)
        p = tmp_path / 'gen.launch'
        p.write_text(out)
        assert rlutil.check_roslaunch(str(p)) is None


# ----------------------------------------------------------------------------- ~settings in the nodes

def test_node_settings_overlay_camera_and_lidar():
    sensor_params = pytest.importorskip('morai_bridge.ros.sensor_params')
    from morai_bridge.nodes import camera_bridge, lidar_bridge
    from morai_bridge.ros.params import load
    get = {'settings': HEVEN, 'settings_sensor': 3}
    cfg = load(camera_bridge.PARAMS, lambda n, d: get.get(n, d))
    assert sensor_params.apply_settings(cfg, camera_bridge.PARAMS, 'camera', WARN)
    assert (cfg.port, cfg.mount_yaw, cfg.width, cfg.fov_deg, cfg.frame_id) == (9295, -70.0, 640, 130.0, 'Camera-3')
    cfg = load(lidar_bridge.PARAMS, lambda n, d: {'settings': BAQU4}.get(n, d))
    assert sensor_params.apply_settings(cfg, lidar_bridge.PARAMS, 'lidar', WARN)
    assert (cfg.port, cfg.model, cfg.topic) == (2368, 'HDL32E', '/lidar3D')
    cfg = load(camera_bridge.PARAMS, lambda n, d: {'settings': BAQU4}.get(n, d))
    assert not sensor_params.apply_settings(cfg, camera_bridge.PARAMS, 'camera', WARN)     # its camera is ROS
    cfg = load(camera_bridge.PARAMS, lambda n, d: {'settings': BAQU4, 'settings_sensor': 4}.get(n, d))
    with pytest.raises(ms.SettingsError, match='cameraList\\[0\\] .* is sent over ROS'):
        sensor_params.apply_settings(cfg, camera_bridge.PARAMS, 'camera', WARN)


def test_udp_bridge_settings_overlay():
    from morai_bridge.nodes import udp_bridge
    from morai_bridge.ros.params import load
    cfg = load(udp_bridge.PARAMS, lambda n, d: {'settings': BAQU4, 'network_settings': BAQU4_NET}.get(n, d))
    udp_bridge.apply_settings(cfg)
    assert (cfg.ego_status_port, cfg.collision_port, cfg.ctrl_cmd_port, cfg.gps_port, cfg.imu_port) == \
        (9121, 9122, 9123, 0, 0)
    assert cfg.intersection_port == 0             # not in the files: off
    # the sensor file alone: GPS / IMU over ROS are off, the other streams keep the launch's values
    cfg = load(udp_bridge.PARAMS, lambda n, d: {'settings': BAQU4}.get(n, d))
    udp_bridge.apply_settings(cfg)
    assert (cfg.gps_port, cfg.imu_port, cfg.ego_status_port) == (0, 0, -1)    # -1: the sim_version's
