"""morai_settings, the node side: the launch XML of nodes.morai_settings (its command line, the writer's
checks against the nodes' parameter tables, roslaunch's check), and the nodes that apply the saved settings
themselves (udp_bridge, the sensor nodes).  Reading the settings (configuration.sim_settings_files):
configuration/test_morai_settings.py; the public files in test/data/morai_settings/ (README there names their
repositories and commits)."""
import io
import os
import xml.etree.ElementTree as ET
from contextlib import redirect_stderr, redirect_stdout

import pytest

import helpers
from morai_bridge.configuration import settings_plan, sim_settings_files
from settings_files import BAQU4, BAQU4_NET, HEVEN, HEVEN_NET, edited, with_destination, write

ROOT = helpers.ROOT


def WARN(line):
    raise AssertionError(f'unexpected warning: {line}')


# ----------------------------------------------------------------------------- bad files

def test_cli_warns_on_stderr_and_in_the_launch_file(tmp_path):
    net = write(tmp_path, edited(HEVEN_NET, lambda d: d['egoNetworkData'][0].__setitem__('EgoCtrlConfig', {})), 'n.json')
    code, out, err = run_cli(HEVEN, net)
    assert code == 0
    line = 'egoNetworkData[0].EgoCtrlConfig: MORAI writes EgoCtrlConfig'
    assert f'morai_settings: warning: {net}: {line}' in err
    assert line in out.split('<node')[0]                 # in the comment at the top


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
    assert code == 0 and 'warning' not in err
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
    plan = settings_plan.Plan(
        (settings_plan.NodePlan('lidar_bridge', 'lidar_bridge', {'port': 2368, 'rpm': 600}, 'x'),), (), ())
    with pytest.raises(writer.LaunchError, match='lidar_bridge declares no parameter ~rpm'):
        writer.launch_xml(plan, ['x'])


def test_writer_checks_values_with_the_params_table():
    plan = settings_plan.Plan(
        (settings_plan.NodePlan('lidar_bridge', 'lidar_bridge', {'model': 'HDL64'}, 'x'),), (), ())
    with pytest.raises(writer.LaunchError, match='~model'):
        writer.launch_xml(plan, ['x'])


def test_generated_launch_passes_roslaunch_check(tmp_path):
    rlutil = pytest.importorskip('roslaunch.rlutil')
    for args in ((HEVEN, HEVEN_NET), (BAQU4, BAQU4_NET)):
        code, out, _ = run_cli(*args)
        p = tmp_path / 'gen.launch'
        p.write_text(out)
        assert rlutil.check_roslaunch(str(p)) is None


def load_launch(path, *args):
    """The parameters roslaunch would set from ``path`` with ``args`` (``name:=value``), as roslaunch reads them."""
    config = pytest.importorskip('roslaunch.config')
    xmlloader = pytest.importorskip('roslaunch.xmlloader')
    cfg = config.ROSLaunchConfig()
    xmlloader.XmlLoader().load(str(path), cfg, argv=['roslaunch', str(path)] + list(args), verbose=False)
    return {k: v.value for k, v in cfg.params.items()}


def test_cli_names_each_stream_it_leaves_off_with_the_argument_that_enables_it(tmp_path):
    """Issue 43: a stream the network file does not configure is not switched off in silence.  baqu4's file
    (770, 261, 771, 295, 772 over UDP; 267 and 780 off) and its sensor file (camera, GPS, IMU over ROS): each
    stream left off is one stderr line with its reason and the launch argument that turns it on, and that
    argument does turn it on when roslaunch reads the generated file."""
    target = tmp_path / 'baqu4.launch'
    code, out, err = run_cli(BAQU4, BAQU4_NET, '-o', str(target))
    assert (code, out) == (0, '')
    lines = err.splitlines()
    for stream, port in (('sim_status', 10326), ('gv_direct', 9111), ('gv_state', 9112), ('sim_control', 10508),
                         ('multi_ego', 7604), ('ego_ghost', 9095), ('set_traffic_light', 7607)):
        want = (f'morai_settings: udp_bridge leaves {stream} off: not in {BAQU4_NET}; roslaunch {target} '
                f"{stream}_port:={port} enables it (MORAI's default port)")
        assert want in lines, (want, lines)
    for stream in ('gps', 'imu'):
        assert any(line.startswith(f'morai_settings: udp_bridge leaves {stream} off: not sent over UDP by {BAQU4}')
                   for line in lines), lines
    assert 'morai_settings: not started: cameraList[0] (camera, m_SensorUniqueID 4): ROS on /image_jpeg/compressed' \
        in lines
    assert not any('leaves sync' in line for line in lines)          # the emulator's extension: not the simulator's
    params = load_launch(target)
    assert (params['/udp_bridge/sim_status_port'], params['/udp_bridge/intersection_port'],
            params['/udp_bridge/ego_status_port']) == (0, 9102, 9121)
    params = load_launch(target, 'sim_status_port:=10326', 'intersection_port:=0')
    assert (params['/udp_bridge/sim_status_port'], params['/udp_bridge/intersection_port']) == (10326, 0)


def test_cli_a_stream_the_file_switches_off_is_named_with_its_entry(tmp_path):
    net = write(tmp_path, edited(BAQU4_NET, lambda d: [i.__setitem__('netType', 3) for i in
                                                      d['egoNetworkData'][0]['listEgoNetworkInfo']
                                                      if i['PUBSUB_TYPE'] == 261]), 'n.json')
    code, _, err = run_cli(BAQU4, net)
    assert code == 0
    assert any(line.startswith(f'morai_settings: udp_bridge leaves collision off: {net}: egoNetworkData[0].'
                               'listEgoNetworkInfo[') and 'netType 3 (ROS); roslaunch morai.launch collision_port:=9092 '
               'enables it' in line for line in err.splitlines()), err


def test_cli_native_names(tmp_path):
    """--native-names: a LiDAR the file gives no topic publishes MORAI's native name (lidar3D); one the file
    names keeps the file's name (heven's /lidar3D); several of a kind are put under lidar_<uid>/."""
    untitled = write(tmp_path, edited(BAQU4, lambda d: d['Lidar3DList'][0]['lc']['rosConfig'].__setitem__(
        'Topic', '')), 's.json')
    for argv, want in (((untitled,), {'native_names': None, 'topic': None}),
                       ((untitled, '--native-names'), {'native_names': 'true', 'topic': None}),
                       ((BAQU4, '--native-names'), {'native_names': 'true', 'topic': '/lidar3D'})):
        code, out, _ = run_cli(*argv)
        assert code == 0
        lidar = {p.get('name'): p.get('value') for p in ET.fromstring(out).find('node').findall('param')}
        assert {k: lidar.get(k) for k in want} == want, argv

    def two_lidars(d):
        second = dict(d['Lidar3DList'][0], m_SensorUniqueID=9)
        second['lc'] = dict(second['lc'], udpConfig=dict(second['lc']['udpConfig'], destinationPort=2370),
                            rosConfig=dict(second['lc']['rosConfig'], frameID='Lidar3D-9'))
        d['Lidar3DList'].append(second)
    two = write(tmp_path, edited(untitled, two_lidars), 't.json')
    for flag, names in (((), ['lidar_2/velodyne_points', 'lidar_9/velodyne_points']),
                        (('--native-names',), ['lidar_2/lidar3D', 'lidar_9/lidar3D'])):
        code, out, _ = run_cli(two, *flag)
        assert code == 0
        topics = [p.get('value') for n in ET.fromstring(out).findall('node') for p in n.findall('param')
                  if p.get('name') == 'topic']
        assert topics == names


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
    with pytest.raises(sim_settings_files.SettingsError, match='cameraList\\[0\\] .* is sent over ROS'):
        sensor_params.apply_settings(cfg, camera_bridge.PARAMS, 'camera', WARN)


def test_udp_bridge_settings_overlay():
    from morai_bridge.nodes import udp_bridge
    from morai_bridge.ros.params import load
    cfg = load(udp_bridge.PARAMS, lambda n, d: {'settings': BAQU4, 'network_settings': BAQU4_NET}.get(n, d))
    udp_bridge.apply_settings(cfg)
    assert (cfg.ego_status_port, cfg.collision_port, cfg.ctrl_cmd_port, cfg.gps_port, cfg.imu_port) == \
        (9121, 9122, 9123, 0, 0)
    assert cfg.intersection_port == 9102          # not in the files: MORAI's default (docs/settings.md)
    assert cfg.sim_status_port == 0               # not in the files, no evidence it is sent: off
    # the sensor file alone: GPS / IMU over ROS are off, the other streams keep the launch's values
    cfg = load(udp_bridge.PARAMS, lambda n, d: {'settings': BAQU4}.get(n, d))
    udp_bridge.apply_settings(cfg)
    assert (cfg.gps_port, cfg.imu_port, cfg.ego_status_port) == (0, 0, -1)    # -1: the sim_version's
