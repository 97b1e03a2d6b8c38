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
from morai_bridge.configuration import settings_launch, settings_plan, sim_settings_files
from settings_files import BAQU4, BAQU4_NET, HEVEN, HEVEN_NET, edited, net_entries, with_destination, write

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
    sensor_params = pytest.importorskip('morai_bridge.ros.sensors.sensor_params')
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


def run_cli(*argv, may_bind=None):
    """main(argv) -> (exit status, stdout, stderr); ``may_bind``: who runs the file (default: this process)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = writer.main(list(argv)) if may_bind is None else writer.main(list(argv), may_bind=may_bind)
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
        settings_launch.launch_xml(plan, ['x'], writer.node_tables(), writer.port_offset(plan))


def test_writer_checks_values_with_the_params_table():
    plan = settings_plan.Plan(
        (settings_plan.NodePlan('lidar_bridge', 'lidar_bridge', {'model': 'HDL64'}, 'x'),), (), ())
    with pytest.raises(writer.LaunchError, match='~model'):
        settings_launch.launch_xml(plan, ['x'], writer.node_tables(), writer.port_offset(plan))


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
    # issue 48: a sensor the simulator sends over ROS says what to do, one way or the other (before: the line ended
    # at "ROS on /image_jpeg/compressed")
    assert ('morai_settings: not started: cameraList[0] (camera, m_SensorUniqueID 4): ROS on /image_jpeg/compressed; '
            "keep ROS and leave the bridge off, or switch the simulator's row to UDP (cameraList[0].cc.commType 1) "
            'and run morai_settings again') in lines
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
    # issue 48: a row the simulator sends over ROS is kept so, or switched to UDP before the port is passed (before:
    # "netType 3 (ROS); roslaunch morai.launch collision_port:=9092 enables it", two publishers of /CollisionData)
    assert any(line.startswith(f'morai_settings: udp_bridge leaves collision off: {net}: egoNetworkData[0].'
                               'listEgoNetworkInfo[') and line.endswith(
        "netType 3 (ROS); keep ROS and leave the bridge off, or switch the simulator's row to UDP (netType 1, "
        'config.udpConfig.destinationPort 9092), then roslaunch morai.launch collision_port:=9092 (not before: two '
        'publishers on /CollisionData)') for line in err.splitlines()), err


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


# ----------------------------------------------------------------------------- issue 48: user, version, ROS rows

def NORMAL_USER(port):
    """A normal user on a stock Linux (net.ipv4.ip_unprivileged_port_start 1024)."""
    return port >= 1024


def ROOT_USER(port):
    return True


def bound_ports(params):
    """{'/node/param': port} that the nodes of a generated file bind, from the parameters roslaunch sets:
    udp_bridge's receive ports after its ~privileged_port_offset (ros/package_config.apply_sim_version's
    rule), the sensor nodes' ~port."""
    from morai_bridge.link.transport import shift_privileged
    from morai_bridge.wire.udp import streams
    out = {}
    for key, value in params.items():
        node, name = key.rsplit('/', 1)
        st = streams.BY_NAME.get(name[:-len('_port')]) if name.endswith('_port') else None
        if node == '/udp_bridge' and st is not None and st.direction == streams.SIM_TO_USER and value:
            out[key] = shift_privileged(value, params.get('/udp_bridge/privileged_port_offset', 0))
        elif node != '/udp_bridge' and name == 'port':
            out[key] = value
    return out


def comments(text):
    root = ET.fromstring(text, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
    return '\n'.join(' '.join(c.text.split()) for c in root if c.tag is ET.Comment)


def test_a_file_generated_by_a_normal_user_binds_no_port_below_1024(tmp_path):
    """Issue 48: baqu4's competition status comes on 909, which only root may bind on a stock Linux.  Generated
    by a normal user, the file gives it the demo's rule (privileged_port_offset 1000: 909 -> 1909) and starts as
    that user; stderr and the file's comment say which simulator setting must follow, and how to keep 909."""
    for sensors, network in ((BAQU4, BAQU4_NET), (HEVEN, HEVEN_NET)):
        target = tmp_path / 'gen.launch'
        code, out, err = run_cli(sensors, network, '-o', str(target), may_bind=NORMAL_USER)
        assert (code, out) == (0, '')
        ports = bound_ports(load_launch(target))
        assert len(ports) > 5 and min(ports.values()) >= 1024, ports
    code, _, err = run_cli(BAQU4, BAQU4_NET, '-o', str(target), may_bind=NORMAL_USER)
    params = load_launch(target)
    assert (params['/udp_bridge/competition_status_port'], params['/udp_bridge/privileged_port_offset']) == (909, 1000)
    assert bound_ports(params)['/udp_bridge/competition_status_port'] == 1909
    lines = [line for line in err.splitlines() if '909' in line and 'below 1024' in line]
    key = f'{BAQU4_NET}: egoNetworkData[0].listEgoNetworkInfo[3].config.udpConfig.destinationPort'
    assert lines == [f"morai_settings: udp_bridge's competition_status port 909 ({key}) is below 1024, which only "
                     f"root may bind on this machine (net.ipv4.ip_unprivileged_port_start = "
                     f"{writer.transport.unprivileged_port_start()}): the launch file adds privileged_port_offset "
                     f"1000, so udp_bridge receives it on 1909. MORAI SIM sends to the port it is set to, so set that "
                     f"destination port to 1909 there as well (until then nothing arrives). Or keep 909: run the "
                     f"launch file as root, or let every user bind it (sudo sysctl -w "
                     f"net.ipv4.ip_unprivileged_port_start=909), and pass roslaunch {target} privileged_port_offset:=0"]
    assert lines[0][len('morai_settings: '):] in comments(target.read_text())
    params = load_launch(target, 'privileged_port_offset:=0')       # as root: MORAI's port again
    assert bound_ports(params)['/udp_bridge/competition_status_port'] == 909


def test_who_generates_decides_the_offset(monkeypatch, tmp_path):
    """The default wiring: this process's user and this machine's net.ipv4.ip_unprivileged_port_start."""
    target = tmp_path / 'gen.launch'

    def offset(euid, start):
        monkeypatch.setattr(writer.os, 'geteuid', lambda: euid)
        monkeypatch.setattr(writer.transport, 'unprivileged_port_start', lambda: start)
        assert run_cli(BAQU4, BAQU4_NET, '-o', str(target))[0] == 0
        return load_launch(target)['/udp_bridge/privileged_port_offset']
    assert offset(1000, 1024) == 1000          # a normal user
    assert offset(1000, 908) == 0              # a normal user where the sysctl lets users bind 909 (AISW's 908)
    assert offset(0, 1024) == 0                # root


def test_generated_as_root_the_file_keeps_the_port_and_says_how_a_user_runs_it(tmp_path):
    target = tmp_path / 'gen.launch'
    code, _, err = run_cli(BAQU4, BAQU4_NET, '-o', str(target), may_bind=ROOT_USER)
    assert code == 0
    assert bound_ports(load_launch(target))['/udp_bridge/competition_status_port'] == 909
    line = [x for x in err.splitlines() if 'below 1024' in x]
    assert len(line) == 1 and line[0].endswith(
        'is below 1024: the launch file binds it as it is (this user may, here). A user who may not (a stock Linux: '
        f'only root binds below 1024) passes roslaunch {target} privileged_port_offset:=1000 and sets that destination '
        'port to 1909 in MORAI SIM, or runs it as root, or lowers net.ipv4.ip_unprivileged_port_start to 909'), line
    assert bound_ports(load_launch(target, 'privileged_port_offset:=1000'))['/udp_bridge/competition_status_port'] \
        == 1909
    # no port below 1024 (heven moved its status ports to 1909 / 1911): no privileged_port_offset at all
    code, out, err = run_cli(HEVEN, HEVEN_NET, may_bind=NORMAL_USER)
    assert code == 0 and 'privileged_port_offset' not in out and 'below 1024' not in err


def test_a_sensor_port_below_1024_gets_the_same_rule(tmp_path):
    """A sensor node has no privileged_port_offset: the file computes its port with roslaunch's eval."""
    sensors = write(tmp_path, edited(BAQU4, lambda d: d['Lidar3DList'][0]['lc']['udpConfig'].__setitem__(
        'destinationPort', 368)), 's.json')
    target = tmp_path / 'gen.launch'
    code, _, err = run_cli(sensors, '-o', str(target), may_bind=NORMAL_USER)
    assert code == 0
    assert '<param name="port" type="int" value="$(eval 368 + privileged_port_offset)" />' in target.read_text()
    assert load_launch(target)['/lidar_bridge/port'] == 1368
    assert load_launch(target, 'privileged_port_offset:=0')['/lidar_bridge/port'] == 368
    assert f"lidar_bridge's port 368 ({sensors}: Lidar3DList[0].lc.udpConfig.destinationPort) is below 1024" in err
    rlutil = pytest.importorskip('roslaunch.rlutil')
    assert rlutil.check_roslaunch(str(target)) is None


def test_a_port_that_cannot_move_names_the_three_ways_out(tmp_path):
    """909 + 1000 is 1909; with the objects moved to 1909 the offset cannot apply: the file keeps 909 and the
    line names the port, running as root, the sysctl and another port in the simulator.  Asked for explicitly
    (--privileged-port-offset 1000) it is an error, and nothing is written."""
    net = write(tmp_path, edited(BAQU4_NET, lambda d: [e['config']['udpConfig'].__setitem__('destinationPort', 1909)
                                                      for e in net_entries(d) if e['PUBSUB_TYPE'] == 772]), 'n.json')
    target = tmp_path / 'gen.launch'
    code, _, err = run_cli(BAQU4, net, '-o', str(target), may_bind=NORMAL_USER)
    assert code == 0
    assert load_launch(target)['/udp_bridge/privileged_port_offset'] == 0
    line = [x for x in err.splitlines() if 'below 1024' in x]
    assert len(line) == 1, line
    for text in ("udp_bridge's competition_status port 909 (", 'which only root may bind on this machine',
                 "(privileged_port_offset 1000 would move it onto 1909, which udp_bridge's object_info_port receives "
                 "already)", 'Run it as root', 'sudo sysctl -w net.ipv4.ip_unprivileged_port_start=909',
                 'set that destination port in MORAI SIM to a free one from 1024 up and run morai_settings again'):
        assert text in line[0], (text, line)
    fresh = tmp_path / 'new.launch'
    code, out, err = run_cli(BAQU4, net, '--privileged-port-offset', '1000', '-o', str(fresh), may_bind=NORMAL_USER)
    assert (code, out) == (2, '') and not fresh.exists()
    assert "--privileged-port-offset 1000 would move udp_bridge's competition_status port 909" in err
    assert "onto 1909, which udp_bridge's object_info_port receives already" in err


def test_a_port_the_simulator_listens_on_below_1024_moves_too(tmp_path):
    net = write(tmp_path, edited(BAQU4_NET, lambda d: [e['EgoCtrlConfig']['udpConfig'].__setitem__('hostPort', 900)
                                                      for e in net_entries(d) if e['PUBSUB_TYPE'] == 771]), 'n.json')
    code, _, err = run_cli(BAQU4, net, may_bind=NORMAL_USER)
    assert code == 0
    assert f"udp_bridge's ctrl_cmd port 900 ({net}: egoNetworkData[0].listEgoNetworkInfo[0].EgoCtrlConfig.udpConfig." \
           "hostPort) is below 1024 and moves with privileged_port_offset 1000 to 1900: MORAI SIM listens on the " \
           "port it is set to, so set that host port to 1900 there as well" in err
    # alone (no port to bind below 1024) it needs no offset: sending to port 900 needs no privilege
    net = write(tmp_path, edited(net, lambda d: [e['config']['udpConfig'].__setitem__('destinationPort', 1909)
                                                for e in net_entries(d) if e['PUBSUB_TYPE'] == 295]), 'm.json')
    code, out, err = run_cli(BAQU4, net, may_bind=NORMAL_USER)
    assert code == 0 and '<arg name="privileged_port_offset" default="0"' in out and 'below 1024' not in err


def test_privileged_port_offset_option(tmp_path):
    target = tmp_path / 'gen.launch'
    code, _, err = run_cli(BAQU4, BAQU4_NET, '--privileged-port-offset', '0', '-o', str(target), may_bind=NORMAL_USER)
    assert code == 0 and load_launch(target)['/udp_bridge/privileged_port_offset'] == 0
    assert 'the launch file keeps it (--privileged-port-offset 0). Run it as root' in err
    code, _, err = run_cli(BAQU4, BAQU4_NET, '--privileged-port-offset', '2000', '-o', str(target), may_bind=ROOT_USER)
    assert code == 0 and bound_ports(load_launch(target))['/udp_bridge/competition_status_port'] == 2909


def test_the_generated_file_has_the_version_the_settings_imply(tmp_path):
    """Issue 48 (b): the competition status row (PUBSUB_TYPE 295) -> the competition build's profile, an arg of
    the file; without it, udp_bridge's default and one line saying why."""
    target = tmp_path / 'gen.launch'
    code, _, err = run_cli(BAQU4, BAQU4_NET, '-o', str(target))
    assert code == 0
    assert load_launch(target)['/udp_bridge/sim_version'] == '25.S4.MolitComp03'
    assert load_launch(target, 'sim_version:=25.S4')['/udp_bridge/sim_version'] == '25.S4'
    assert (f'morai_settings: udp_bridge: sim_version 25.S4.MolitComp03: {BAQU4_NET}: egoNetworkData[0].'
            'listEgoNetworkInfo[3] is the competition status row (PUBSUB_TYPE 295), which only 25.S4.MolitComp03 sends '
            '(config/sim_versions/25.S4.MolitComp03.yaml)') in err.splitlines()
    net = write(tmp_path, edited(BAQU4_NET, lambda d: d['egoNetworkData'][0].__setitem__(
        'listEgoNetworkInfo', [e for e in net_entries(d) if e['PUBSUB_TYPE'] != 295])), 'n.json')
    code, _, err = run_cli(BAQU4, net, '-o', str(target))
    assert code == 0 and load_launch(target)['/udp_bridge/sim_version'] == '25.S4'
    lines = [x for x in err.splitlines() if 'sim_version' in x]
    assert lines == [f"morai_settings: udp_bridge: sim_version not implied: {net} has no competition status row "
                     "(PUBSUB_TYPE 295), and nothing else in a saved file tells 24.R2, 25.S4, 26.R1 apart; the launch "
                     f"file keeps udp_bridge's default, 25.S4: roslaunch {target} sim_version:=NAME for another "
                     "release (docs/versions.md)"]
    code, out, err = run_cli(BAQU4)                                 # no udp_bridge: no version to speak of
    assert code == 0 and 'sim_version' not in out + err


def test_udp_bridge_reading_the_network_file_warns_of_another_version(monkeypatch):
    from morai_bridge.nodes import udp_bridge
    from morai_bridge.ros.params import load
    said = []
    monkeypatch.setattr(udp_bridge.rospy, 'logwarn', lambda fmt, *a: said.append(fmt % a))
    cfg = load(udp_bridge.PARAMS, lambda n, d: {'network_settings': BAQU4_NET}.get(n, d))
    udp_bridge.apply_settings(cfg)
    assert cfg.sim_version == '25.S4'                                # a warning, not an override
    assert [s for s in said if 'sim_version' in s] == [
        'udp_bridge: ~sim_version is 25.S4, but the settings imply 25.S4.MolitComp03 (%s: egoNetworkData[0].'
        'listEgoNetworkInfo[3] is the competition status row (PUBSUB_TYPE 295), which only 25.S4.MolitComp03 sends '
        '(config/sim_versions/25.S4.MolitComp03.yaml)): sim_version:=25.S4.MolitComp03' % BAQU4_NET]
    said.clear()
    cfg = load(udp_bridge.PARAMS, lambda n, d: {'network_settings': BAQU4_NET,
                                                'sim_version': '25.S4.MolitComp03'}.get(n, d))
    udp_bridge.apply_settings(cfg)
    assert not [s for s in said if 'sim_version' in s]


def test_a_sensor_sent_over_ros_gets_one_line_and_one_publisher(tmp_path):
    """Issue 48 (c): baqu4's GPS is sent over ROS on /gps.  One line says it: keep ROS (the file leaves udp_bridge's
    GPS off: no second publisher of /gps), or switch the row to UDP and then pass gps_port (never "enables it"
    alone).  Doing what it says (the row switched, the file generated again) gives udp_bridge the stream on
    /gps and leaves nothing of it on ROS."""
    target = tmp_path / 'gen.launch'
    code, _, err = run_cli(BAQU4, BAQU4_NET, '-o', str(target))
    assert code == 0
    for key, stream, port in (('GPSList[0]', 'gps', 9297), ('IMUList[0]', 'imu', 9110)):
        lines = [x for x in err.splitlines() if key in x]
        cfg = {'gps': 'gc', 'imu': 'ic'}[stream]
        topic = '/' + stream
        assert lines == [f'morai_settings: udp_bridge leaves {stream} off: not sent over UDP by {BAQU4}: {key} '
                         f"({stream}, m_SensorUniqueID {3 if stream == 'gps' else 1}): ROS on {topic}; keep ROS and "
                         f"leave the bridge off, or switch the simulator's row to UDP ({key}.{cfg}.commType 1, "
                         f'{key}.{cfg}.udpConfig.destinationPort {port}), then roslaunch {target} '
                         f'{stream}_port:={port} (not before: two publishers on {topic})'], lines
        assert lines[0][len('morai_settings: '):] in comments(target.read_text())
    params = load_launch(target)
    assert (params['/udp_bridge/gps_port'], params['/udp_bridge/imu_port']) == (0, 0)
    assert (params['/udp_bridge/gps_topic'], params['/udp_bridge/imu_topic']) == ('/gps', '/imu')
    assert not any('enables it' in x and ('gps_port' in x or 'imu_port' in x) for x in err.splitlines())

    def switched(d):
        d['GPSList'][0]['gc']['commType'] = 1
        d['GPSList'][0]['gc']['udpConfig']['destinationPort'] = 9297
    sensors = write(tmp_path, edited(BAQU4, switched), 's.json')
    code, _, err = run_cli(sensors, BAQU4_NET, '-o', str(target))
    assert code == 0 and 'GPSList' not in err.replace('GPSList[0] (gps, frame', '')
    params = load_launch(target)
    assert (params['/udp_bridge/gps_port'], params['/udp_bridge/gps_topic']) == (9297, '/gps')
    assert '/gps' not in settings_launch.published_topics(settings_plan.plan(
        sim_settings_files.load_sensors(BAQU4), sim_settings_files.load_network(BAQU4_NET)), writer.node_tables())


@pytest.mark.parametrize('edit, clash', [
    # a second 3D LiDAR, sent over ROS on the topic the bridged one has
    (lambda d: d['Lidar3DList'].append(dict(d['Lidar3DList'][0], m_SensorUniqueID=9, lc=dict(
        d['Lidar3DList'][0]['lc'], commType=3))), 'Lidar3DList[1] (lidar, m_SensorUniqueID 9) is sent over ROS on '
                                                  '/lidar3D, which lidar_bridge ~topic would publish too'),
    # the bridged GPS has no topic of its own (udp_bridge's /gps), a second one is sent over ROS on /gps
    (lambda d: (d['GPSList'][0]['gc']['rosConfig'].__setitem__('Topic', ''), d['GPSList'].append(dict(
        d['GPSList'][0], m_SensorUniqueID=8, gc=dict(d['GPSList'][0]['gc'], commType=3, rosConfig=dict(
            d['GPSList'][0]['gc']['rosConfig'], Topic='/gps', frameID='GPS-8'))))),
     'GPSList[1] (gps, m_SensorUniqueID 8) is sent over ROS on /gps, which udp_bridge ~gps_topic would publish too'),
])
def test_a_topic_the_simulator_publishes_over_ros_is_not_bridged_too(tmp_path, edit, clash):
    """Never two publishers on one topic: a file that would make one is refused, both named."""
    path = write(tmp_path, edited(HEVEN if 'GPS' in clash else BAQU4, edit))
    code, out, err = run_cli(path, HEVEN_NET)
    assert (code, out) == (2, '')
    assert clash in err and 'two publishers on one topic' in err, err


# ----------------------------------------------------------------------------- ~settings in the nodes

def test_node_settings_overlay_camera_and_lidar():
    sensor_params = pytest.importorskip('morai_bridge.ros.sensors.sensor_params')
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


# ----------------------------------------------------------------------------- the map and the GPS mount

def test_the_written_file_gives_udp_bridge_one_map_argument():
    code, out, err = run_cli(HEVEN, HEVEN_NET)
    assert code == 0, err
    root = ET.fromstring(out)
    arg = {a.get('name'): a.get('default') for a in root.iter('arg')}
    assert arg['map'] == 'R_KR_PR_K-city_2025'                      # the bridge's default, the competition's
    bridge = [n for n in root.iter('node') if n.get('type') == 'udp_bridge'][0]
    assert {p.get('name'): p.get('value') for p in bridge.iter('param')}['map'] == '$(arg map)'
    assert 'map R_KR_PR_K-city_2025 (origin 302595.000 E, 4124145.000 N' in err
    code, out, err = run_cli(HEVEN, HEVEN_NET, '--map', 'r_kr_pg_k-city')
    assert code == 0 and {a.get('name'): a.get('default') for a in ET.fromstring(out).iter('arg')}['map'] == \
        'r_kr_pg_k-city'
    code, out, err = run_cli(HEVEN, HEVEN_NET, '--map', 'R_KR_PG_Atlantis')
    assert (code, out) == (2, '') and 'not a known map name' in err


def test_the_gps_mount_of_the_settings_is_carried_to_the_emulator_options():
    code, out, err = run_cli(HEVEN, HEVEN_NET)
    gps = [line for line in out.splitlines() if '(gps, frame' in line]
    assert len(gps) == 1 and 'gps_mount_x:=0.000 gps_mount_y:=0.000 gps_mount_z:=1.200' in gps[0], gps
