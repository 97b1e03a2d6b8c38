"""settings_plan: MORAI SIM's saved settings -> bridge nodes (node types, names, private parameters,
what is not started, the udp_bridge streams left off, the address udp_bridge binds).  Reading the files:
test_sim_settings_files.py; the launch XML (nodes.morai_settings) and the nodes applying the settings:
nodes/test_morai_settings.py.  Expected values are read off the public files in test/data/morai_settings/
(README there names their repositories and commits)."""
import copy
import json
import math
import os
import re

import pytest

import helpers
from morai_bridge.configuration import settings_plan as sp
from morai_bridge.configuration import sim_settings_files as files
from morai_bridge.wire.udp import streams
from settings_files import BAQU4, BAQU4_NET, HEVEN, HEVEN_NET, doc, edited, net_entries, with_destination, write

ROOT = helpers.ROOT


def nodes_of(plan):
    return {n.name: n for n in plan.nodes}


# ----------------------------------------------------------------------------- multi-camera UDP (heven)

def test_heven_one_node_per_udp_sensor_with_the_files_ports():
    plan = sp.plan(files.load_sensors(HEVEN), files.load_network(HEVEN_NET))
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
    # streams the file has no entry for: the ones a 25.S4 team uses on MORAI's default ports although its saved
    # file (this one) lists none of them (heven protocol-coverage.md) keep those ports; the others are off and
    # reported with the argument that enables them; our emulator's lock-step ports are off and not reported
    # (derived from the rows, so that a new stream needs no edit here; spot-checked by value below)
    others = {k: v for k, v in bridge.items() if k not in configured}
    assert others == {st.param: st.port if st.name in sp.UNLISTED_KEPT else 0
                      for st in streams.STREAMS if st.param not in configured}
    assert (others['traffic_light_port'], others['npc_ghost_port'], others['sim_status_port']) == (7502, 9101, 0)
    assert [(o.stream, o.port) for o in plan.streams_off] == [
        (st.name, st.port) for st in streams.STREAMS if others.get(st.param) == 0 and not st.extension]
    assert {'sim_status', 'gv_direct'} <= {o.stream for o in plan.streams_off}   # spot check, not the order
    assert {o.why for o in plan.streams_off} == {f'not in {HEVEN_NET}'}
    # 295 (competition status, 1908 -> 1909): udp_bridge's competition_status port (/Competition_topic)
    for pubsub in (266, 267, 780):
        assert any('PUBSUB_TYPE %d ' % pubsub in line for line in plan.not_started)


def test_without_network_file_udp_bridge_keeps_its_defaults():
    plan = sp.plan(files.load_sensors(HEVEN))
    bridge = nodes_of(plan)['udp_bridge'].params
    assert (bridge['gps_port'], bridge['imu_port']) == (9297, 9299)
    assert 'ego_status_port' not in bridge and 'ctrl_cmd_port' not in bridge
    assert any('no network settings given' in n for n in plan.notes)


def test_udp_bridge_only_when_the_settings_give_it_something():
    """baqu4's sensor file alone: GPS and IMU over ROS, no network file: no udp_bridge."""
    assert [n.node for n in sp.plan(files.load_sensors(BAQU4)).nodes] == ['lidar_bridge']


def test_cameras_with_topics_keep_their_boxes_apart(tmp_path):
    def topics(d):
        for i, c in enumerate(d['cameraList']):
            c['cc']['rosConfig']['Topic'] = '/cam%d/image_jpeg/compressed' % i
    nodes = nodes_of(sp.plan(files.load_sensors(write(tmp_path, edited(HEVEN, topics)))))
    c = nodes['camera_bridge_2'].params
    assert (c['image_topic'], c['camera_info_topic'], c['boxes_topic']) == (
        '/cam1/image_jpeg/compressed', '/cam1/image_jpeg/camera_info', 'camera_2/camera/boxes')


def test_heven_camera_intrinsics_and_topics():
    nodes = nodes_of(sp.plan(files.load_sensors(HEVEN)))
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
    s = [s for s in files.load_sensors(HEVEN).sensors if s.kind == 'camera']
    assert s[1].extra['fx'] == pytest.approx(320.0 / math.tan(math.radians(65.0)))
    notes = sp.plan(files.load_sensors(HEVEN)).notes
    assert sum('focalLengthpixel 320.0' in n for n in notes) == 4
    udp = write(tmp_path, edited(BAQU4, lambda d: d['cameraList'][0]['cc'].__setitem__('commType', 1)))
    b = [s for s in files.load_sensors(udp).sensors if s.kind == 'camera'][0]
    assert (b.extra['fx'], b.extra['fx_file']) == (pytest.approx(457.01, abs=0.01), pytest.approx(457.1))
    assert not any('focalLength' in n for n in sp.plan(files.load_sensors(udp)).notes)


# ----------------------------------------------------------------------------- mixed ROS / UDP (baqu4)

def test_baqu4_ros_sensors_are_listed_not_started():
    plan = sp.plan(files.load_sensors(BAQU4), files.load_network(BAQU4_NET))
    nodes = nodes_of(plan)
    assert sorted(nodes) == ['lidar_bridge', 'udp_bridge']
    lidar = nodes['lidar_bridge'].params
    # Lidar3DList[0]: lidar3DType 13, 2369 -> 2368, pos (1.530, 0, 1.450)
    assert (lidar['port'], lidar['model']) == (2368, 'HDL32E')
    assert (lidar['mount_x'], lidar['mount_y'], lidar['mount_z']) == (1.53, 0.0, 1.45)
    off = '\n'.join(plan.not_started)
    assert 'cameraList[0] (camera, m_SensorUniqueID 4): ROS on /image_jpeg/compressed' in off
    # GPS and IMU over ROS: named once, in their udp_bridge stream's line (issue 48: before, also a not-started
    # line, and the two said different things)
    whys = {o.stream: o.why for o in plan.streams_off}
    assert 'GPSList[0] (gps, m_SensorUniqueID 3): ROS on /gps' in whys['gps']
    assert 'IMUList[0] (imu, m_SensorUniqueID 1): ROS on /imu' in whys['imu']
    assert 'GPSList' not in off and 'IMUList' not in off
    bridge = nodes['udp_bridge'].params
    # GPS and IMU over ROS: udp_bridge does not bind them; network: 770 910 -> 9121, 261 9091 -> 9122,
    # 772 7605 -> 7505, ego control 9123 (their own launch files: status 9121, collision 9122, ctrl 9123)
    assert (bridge['gps_port'], bridge['imu_port']) == (0, 0)
    assert (bridge['ego_status_port'], bridge['collision_port'], bridge['object_info_port'],
            bridge['ctrl_cmd_port']) == (9121, 9122, 7505, 9123)


def test_competition_status_has_its_own_port_when_770_is_not_udp(tmp_path):
    d = doc(HEVEN_NET)
    for info in d['egoNetworkData'][0]['listEgoNetworkInfo']:
        if info['PUBSUB_TYPE'] == 770:
            info['netType'] = 0
    p = tmp_path / 'net.json'
    p.write_text(json.dumps(d))
    params = nodes_of(sp.plan(None, files.load_network(str(p))))['udp_bridge'].params
    assert (params['competition_status_port'], params['ego_status_port']) == (1909, 0)


# ----------------------------------------------------------------------------- the address udp_bridge binds

def test_the_skeletons_of_docs_settings_md(tmp_path):
    """docs/settings.md's two skeletons (two PCs) load without a warning and give what the page says."""
    with open(os.path.join(helpers.ROOT, 'docs', 'settings.md')) as f:
        blocks = [json.loads(b) for b in re.findall(r'```json\n(.*?)```', f.read(), re.S)]
    network = files.parse_network([b for b in blocks if 'egoNetworkData' in b][0], 'network')
    sensors = files.parse_sensors([b for b in blocks if 'cameraList' in b][0], 'sensors')
    assert (network.warnings, sensors.warnings) == ((), ())
    nodes = nodes_of(sp.plan(sensors, network))
    assert sorted(nodes) == ['camera_bridge', 'lidar_bridge', 'udp_bridge']
    for n in nodes.values():
        assert (n.params['sim_ip'], n.params['bind_ip']) == ('192.168.0.10', '192.168.0.20'), n.name
    assert (nodes['camera_bridge'].params['port'], nodes['lidar_bridge'].params['port'],
            nodes['lidar_bridge'].params['model']) == (9291, 2368, 'VLP16')
    bridge = nodes['udp_bridge'].params
    assert [bridge[k + '_port'] for k in ('ego_status', 'object_info', 'collision', 'ctrl_cmd', 'gps', 'imu')] == \
        [1911, 7505, 9092, 9093, 9297, 9299]
    assert bridge['traffic_light_port'] == 7502      # not in the file: MORAI's default (docs/settings.md)


def test_bind_ip_is_the_network_files_destination_address(tmp_path):
    net = files.load_network(write(tmp_path, with_destination(BAQU4_NET, '192.168.0.20')))
    bridge = nodes_of(sp.plan(None, net))['udp_bridge'].params
    assert bridge['bind_ip'] == '192.168.0.20'
    assert sp.plan(None, net).nodes[0].bind_origin == (net.path + ': egoNetworkData[0].listEgoNetworkInfo[1]'
                                                       '.config.udpConfig.destinationIP')
    assert nodes_of(sp.plan(None, net, bind_ip='0.0.0.0'))['udp_bridge'].params['bind_ip'] == '0.0.0.0'


def test_bind_ip_two_addresses_are_an_error_naming_both(tmp_path):
    net = files.load_network(write(tmp_path, with_destination(HEVEN_NET, '192.168.0.20', streams=(770,))))
    with pytest.raises(files.SettingsError) as e:
        sp.plan(files.load_sensors(HEVEN), net)
    text = str(e.value)
    assert f'127.0.0.1 ({HEVEN}: GPSList[0].gc.udpConfig.destinationIP)' in text
    assert f'192.168.0.20 ({net.path}: egoNetworkData[0].listEgoNetworkInfo[4].config.udpConfig.destinationIP)' \
        in text
    assert '--bind-ip' in text
    assert nodes_of(sp.plan(files.load_sensors(HEVEN), net, bind_ip='0.0.0.0'))['udp_bridge'].params['bind_ip'] == '0.0.0.0'


def test_a_kept_default_port_the_files_use_elsewhere_is_not_kept(tmp_path):
    """A stream kept on MORAI's default port (traffic lights, 7502) when the network file leaves it out is off
    instead when the files already give that port to something that receives here: the camera moved to 7502,
    the collision stream to 9102."""
    sensors = write(tmp_path, edited(BAQU4, lambda d: (d['cameraList'][0]['cc'].__setitem__('commType', 1),
                                                       d['cameraList'][0]['cc']['udpConfig'].__setitem__(
                                                           'destinationPort', 7502))), 's.json')
    net = write(tmp_path, edited(BAQU4_NET, lambda d: [i['config']['udpConfig'].__setitem__('destinationPort', 9102)
                                                      for i in net_entries(d) if i['PUBSUB_TYPE'] == 261]), 'n.json')
    plan = sp.plan(files.load_sensors(sensors), files.load_network(net))
    bridge = nodes_of(plan)['udp_bridge'].params
    assert (bridge['traffic_light_port'], bridge['intersection_port'], bridge['collision_port'],
            bridge['vehicle_collision_port']) == (0, 0, 9102, 9108)
    off = {o.stream: o.why for o in plan.streams_off}
    assert off['traffic_light'] == f"not in {net}, and its default port 7502 is camera_bridge's port here"
    assert off['intersection'] == f"not in {net}, and its default port 9102 is collision's port here"


# ----------------------------------------------------------------------------- issue 48: version, ROS rows, low ports

def competition_builds():
    """The shipped profiles that send the competition status (a competition_status port): what they say."""
    from morai_bridge.configuration import sim_versions
    return [name for name, port in sim_versions.port_table()['competition_status'] if port]


def test_the_competition_status_row_implies_the_competition_build(tmp_path):
    """Both public network files have the competition status row (PUBSUB_TYPE 295: heven 1908 -> 1909, baqu4
    908 -> 909); only 25.S4.MolitComp03's profile has a competition_status port: that is the version written."""
    assert competition_builds() == ['25.S4.MolitComp03']
    for sensors, network in ((HEVEN, HEVEN_NET), (BAQU4, BAQU4_NET)):
        plan = sp.plan(files.load_sensors(sensors), files.load_network(network))
        assert plan.sim_version == '25.S4.MolitComp03'
        assert plan.sim_version_why == (f'{network}: egoNetworkData[0].listEgoNetworkInfo[3] is the competition status '
                                        'row (PUBSUB_TYPE 295), which only 25.S4.MolitComp03 sends '
                                        '(config/sim_versions/25.S4.MolitComp03.yaml)')
        assert 'sim_version' not in nodes_of(plan)['udp_bridge'].params       # the writer's (an arg), not a node's
    # a row switched off still says which build saved the file: it lists the stream
    off = write(tmp_path, edited(BAQU4_NET, lambda d: [e.__setitem__('netType', 0) for e in net_entries(d)
                                                      if e['PUBSUB_TYPE'] == 295]), 'off.json')
    assert sp.plan(None, files.load_network(off)).sim_version == '25.S4.MolitComp03'


def test_without_the_competition_row_no_version_is_implied_and_the_plan_says_why(tmp_path):
    net = write(tmp_path, edited(BAQU4_NET, lambda d: d['egoNetworkData'][0].__setitem__(
        'listEgoNetworkInfo', [e for e in net_entries(d) if e['PUBSUB_TYPE'] != 295])), 'n.json')
    plan = sp.plan(files.load_sensors(BAQU4), files.load_network(net))
    assert plan.sim_version == ''
    assert plan.sim_version_why == (f'{net} has no competition status row (PUBSUB_TYPE 295), and nothing else in a '
                                    'saved file tells 24.R2, 25.S4, 26.R1 apart')
    plan = sp.plan(files.load_sensors(HEVEN))                                 # udp_bridge for GPS / IMU, no network
    assert (plan.sim_version, plan.sim_version_why) == ('', 'no network settings given (a sensor file says nothing '
                                                            'of the release)')
    assert sp.plan(files.load_sensors(BAQU4))[5:7] == ('', '')                 # no udp_bridge: nothing to say


def test_a_sensor_sent_over_ros_is_one_line_that_says_what_to_do():
    """baqu4: camera, GPS, IMU over ROS.  The camera (no udp_bridge port takes it) is a not-started line: keep ROS,
    or switch the row and generate again.  GPS / IMU are their udp_bridge stream's line alone: off, with the row
    to switch first (MORAI's port for the stream) and the topic the simulator publishes now; udp_bridge is given
    that topic and frame, so that the stream, once switched, takes the ROS row's place."""
    plan = sp.plan(files.load_sensors(BAQU4), files.load_network(BAQU4_NET))
    camera = [line for line in plan.not_started if line.startswith('cameraList[0]')]
    assert camera == ["cameraList[0] (camera, m_SensorUniqueID 4): ROS on /image_jpeg/compressed; keep ROS and leave "
                      "the bridge off, or switch the simulator's row to UDP (cameraList[0].cc.commType 1) and run "
                      "morai_settings again"]
    off = {o.stream: o for o in plan.streams_off}
    assert off['gps'] == sp.StreamOff('gps', f'not sent over UDP by {BAQU4}: GPSList[0] (gps, m_SensorUniqueID 3): '
                                             'ROS on /gps', 9297,
                                      'GPSList[0].gc.commType 1, GPSList[0].gc.udpConfig.destinationPort 9297', '/gps')
    assert (off['imu'].port, off['imu'].switch, off['imu'].ros_topic) == (
        9110, 'IMUList[0].ic.commType 1, IMUList[0].ic.udpConfig.destinationPort 9110', '/imu')
    bridge = nodes_of(plan)['udp_bridge'].params
    assert (bridge['gps_port'], bridge['gps_topic'], bridge['imu_port'], bridge['imu_topic']) == (0, '/gps', 0, '/imu')
    assert plan.ros_topics == (('/image_jpeg/compressed', 'cameraList[0] (camera, m_SensorUniqueID 4)'),
                               ('/gps', 'GPSList[0] (gps, m_SensorUniqueID 3)'),
                               ('/imu', 'IMUList[0] (imu, m_SensorUniqueID 1)'))
    # without udp_bridge (the sensor file alone) the GPS has no stream line: its own line says it
    alone = sp.plan(files.load_sensors(BAQU4)).not_started
    assert "GPSList[0] (gps, m_SensorUniqueID 3): ROS on /gps; keep ROS and leave the bridge off, or switch the " \
           "simulator's row to UDP (GPSList[0].gc.commType 1) and run morai_settings again" in alone


def test_a_second_gps_over_ros_beside_one_over_udp_is_kept_on_ros(tmp_path):
    def second(d):
        g = copy.deepcopy(d['GPSList'][0])
        g['m_SensorUniqueID'] = 8
        g['gc']['commType'] = 3
        g['gc']['rosConfig']['Topic'] = '/gps2'
        d['GPSList'].append(g)
    plan = sp.plan(files.load_sensors(write(tmp_path, edited(HEVEN, second))), files.load_network(HEVEN_NET))
    assert "GPSList[1] (gps, m_SensorUniqueID 8): ROS on /gps2; keep ROS and leave the bridge off (udp_bridge " \
           "receives one gps stream, GPSList[0]'s)" in plan.not_started
    assert 'gps' not in {o.stream for o in plan.streams_off}


def test_network_rows_not_sent_over_udp_say_what_to_switch(tmp_path):
    def edit(d):
        for e in net_entries(d):
            if e['PUBSUB_TYPE'] == 261:
                e['netType'] = 3
            if e['PUBSUB_TYPE'] == 772:
                e['netType'] = 0
            if e['PUBSUB_TYPE'] == 771:
                e['EgoCtrlConfig']['commType'] = 3
    net = write(tmp_path, edited(BAQU4_NET, edit), 'n.json')
    off = {o.stream: o for o in sp.plan(None, files.load_network(net)).streams_off}
    assert off['collision'][2:] == (9092, 'netType 1, config.udpConfig.destinationPort 9092', '/CollisionData')
    assert off['object_info'][2:] == (7505, 'netType 1, config.udpConfig.destinationPort 7505', '')     # off: no ROS
    assert off['ctrl_cmd'][2:] == (9093, 'EgoCtrlConfig.commType 1, EgoCtrlConfig.udpConfig.hostPort 9093', '')
    assert off['sim_status'][2:] == (10326, '', '')                           # no row at all: nothing to switch


def test_low_ports_are_the_ports_below_1024_with_their_keys(tmp_path):
    """baqu4's competition status 908 -> 909 is udp_bridge's competition_status port, below 1024 (heven moved it
    to 1909); a sensor port and a port the simulator listens on below 1024 are named too."""
    plan = sp.plan(files.load_sensors(BAQU4), files.load_network(BAQU4_NET))
    assert sp.low_ports(plan) == [sp.LowPort('udp_bridge', 'competition_status_port', 909, True,
                                             f'{BAQU4_NET}: egoNetworkData[0].listEgoNetworkInfo[3].config.udpConfig.'
                                             'destinationPort')]
    assert sp.low_ports(sp.plan(files.load_sensors(HEVEN), files.load_network(HEVEN_NET))) == []
    sensors = write(tmp_path, edited(BAQU4, lambda d: d['Lidar3DList'][0]['lc']['udpConfig'].__setitem__(
        'destinationPort', 368)), 's.json')
    net = write(tmp_path, edited(BAQU4_NET, lambda d: [e['EgoCtrlConfig']['udpConfig'].__setitem__('hostPort', 900)
                                                      for e in net_entries(d) if e['PUBSUB_TYPE'] == 771]), 'n.json')
    low = sp.low_ports(sp.plan(files.load_sensors(sensors), files.load_network(net)))
    assert [(lp.node, lp.param, lp.port, lp.receive) for lp in low] == [
        ('lidar_bridge', 'port', 368, True), ('udp_bridge', 'competition_status_port', 909, True),
        ('udp_bridge', 'ctrl_cmd_port', 900, False)]
    assert low[0].origin == f'{sensors}: Lidar3DList[0].lc.udpConfig.destinationPort'
    assert low[2].origin == f'{net}: egoNetworkData[0].listEgoNetworkInfo[0].EgoCtrlConfig.udpConfig.hostPort'
