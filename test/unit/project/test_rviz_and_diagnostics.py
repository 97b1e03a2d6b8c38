"""What the demo shows and where statuses land: demo.launch's arguments, the launch files' package
dependencies, RViz kept out of a vehicle PC's dependencies, the RViz config's topics, the diagnostics
aggregator's analyzers, README's screenshot."""
import glob
import os
import re
import xml.etree.ElementTree as ET

import pytest
import yaml

import helpers

ROOT = helpers.ROOT


def test_demo_launch_args():
    root = ET.parse(os.path.join(ROOT, 'launch', 'demo.launch')).getroot()
    args = {a.get('name'): a.get('default') for a in root.iter('arg') if a.get('default') is not None}
    assert (args['rviz'], args['markers'], args['aggregator']) == ('false', 'true', 'false')


def _package_deps():
    root = ET.parse(os.path.join(ROOT, 'package.xml')).getroot()
    return {e.text.strip() for e in root if e.tag in ('depend', 'exec_depend', 'test_depend')}


def test_launch_files_use_declared_packages_only():
    """catkin_lint's launch_depend check is off for the package (CMakeLists.txt, for rviz): this
    does it for every other package a launch file starts a node from."""
    deps = _package_deps() | {'morai_msgs'}
    for path in glob.glob(os.path.join(ROOT, 'launch', '*.launch')):
        for node in ET.parse(path).getroot().iter('node'):
            pkg = node.get('pkg')
            if pkg == 'rviz':
                assert os.path.basename(path) == 'demo.launch' and node.get('if') == '$(arg rviz)'
                continue
            assert pkg in deps, f'{os.path.basename(path)}: node of package {pkg}, not in package.xml'


def test_rviz_is_not_forced_on_headless_users():
    root = ET.parse(os.path.join(ROOT, 'package.xml')).getroot()
    run = {e.text.strip() for e in root if e.tag in ('depend', 'exec_depend')}
    assert 'rviz' not in run and 'visualization_msgs' in run and 'diagnostic_aggregator' in run


def test_rviz_config_shows_the_topics():
    cfg = yaml.safe_load(open(os.path.join(ROOT, 'rviz', 'morai.rviz')))
    displays = {d['Class']: d for d in cfg['Visualization Manager']['Displays']}
    assert displays['rviz/MarkerArray']['Marker Topic'] == '/morai/markers'
    assert displays['rviz/Odometry']['Topic'] == '/odom'
    assert displays['rviz/PointCloud2']['Topic'] == '/velodyne_points'
    # the LiDAR over TCPROS: rospy publishers offer no UDPROS, an Unreliable display would draw nothing
    assert displays['rviz/PointCloud2'].get('Unreliable', False) is False
    # the camera as a raw image (the bridge's ~publish_raw): no compressed_image_transport needed
    # (Debian 12 does not package it)
    assert displays['rviz/Image']['Image Topic'] == '/image_raw'
    assert displays['rviz/Image']['Transport Hint'] == 'raw'
    assert 'rviz/TF' in displays
    assert cfg['Visualization Manager']['Global Options']['Fixed Frame'] == 'map'


# ----------------------------------------------------------------------------- diagnostics analyzers

def _analyzers():
    cfg = yaml.safe_load(open(os.path.join(ROOT, 'config', 'diagnostics_aggregator.yaml')))
    group = cfg['analyzers']['morai']
    assert group['type'] == 'diagnostic_aggregator/AnalyzerGroup' and group['path'] == 'MORAI'
    return group['analyzers']


def _matching(name):
    # GenericAnalyzer matches a regex against the whole status name (regex_match)
    return [k for k, a in _analyzers().items() if re.fullmatch(a['regex'], name)]


@pytest.mark.parametrize('name, analyzer', [
    ('udp_bridge: UDP ego_status (port 909)', 'udp_bridge'),
    ('ego2/udp_bridge: UDP commands', 'udp_bridge'),
    ('erp42_serial: ERP-42 serial link', 'erp42_serial'),
    ('erp/erp42_serial: ERP-42 PCU state', 'erp42_serial'),
    ('sim_emulator: Simulator emulator', 'sim_emulator'),
    ('erp/pcu_emulator: ERP-42 PCU emulator', 'pcu_emulator'),
    ('markers: RViz markers', 'markers'),
    ('sensor_bridge: camera stream', 'sensor_bridge'),
    ('lidar_sensor_bridge: Velodyne', 'sensor_bridge'),
    ('ego1/sensor_bridge_camera: stream', 'sensor_bridge'),
])
def test_each_nodes_statuses_land_in_its_group(name, analyzer):
    assert _matching(name) == [analyzer]


@pytest.mark.parametrize('name', ['demo_driver: x', 'my_udp_bridge2: x', 'udp_bridge_other: x', 'markers_x: y',
                                  'UDP commands'])
def test_other_statuses_are_not_claimed(name):
    assert _matching(name) == []


def test_status_names_follow_diagnostic_updater():
    """diagnostic_updater names a status '<node name without the leading slash>: <name>'."""
    import inspect
    import diagnostic_updater
    src = inspect.getsource(diagnostic_updater.Updater.publish).replace(' ', '')
    assert 'stat.name=rospy.get_name()[1:]+":"+stat.name' in src


def test_analyzer_paths():
    paths = {k: a['path'] for k, a in _analyzers().items()}
    assert paths == {'udp_bridge': 'UDP bridge', 'erp42_serial': 'ERP-42 serial', 'sim_emulator': 'Simulator emulator',
                     'pcu_emulator': 'PCU emulator', 'markers': 'Markers', 'sensor_bridge': 'Sensor bridge'}
    for a in _analyzers().values():
        assert a['type'] == 'diagnostic_aggregator/GenericAnalyzer'


def test_readme_shows_the_rviz_screenshot():
    readme = open(os.path.join(ROOT, 'README.md')).read()
    assert '](docs/rviz_demo.png)' in readme
    png = os.path.join(ROOT, 'docs', 'rviz_demo.png')
    with open(png, 'rb') as f:
        assert f.read(8) == b'\x89PNG\r\n\x1a\n'
    assert os.path.getsize(png) < 300 * 1024
