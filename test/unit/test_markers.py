"""Marker geometry (morai_bridge.ros.marker_shapes, no ROS master), the markers node's parameter table,
launch file and docs, the traffic light position file of the demo, the diagnostics analyzers and
the launch files' package dependencies."""
import glob
import importlib.util
import math
import os
import re
import xml.etree.ElementTree as ET

import pytest
import yaml

from geometry_msgs.msg import Vector3
from morai_msgs.msg import CollisionData, EgoVehicleStatus, GetTrafficLightStatus, ObjectStatus, ObjectStatusList
from visualization_msgs.msg import Marker

from morai_bridge.ros import marker_shapes as mk

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STYLE = mk.Style()


def rotate(q, x, y):
    """(x, y, 0) rotated by the quaternion q."""
    # v' = v + 2 w (u x v) + 2 u x (u x v), u = (qx, qy, qz)
    ux, uy, uz, w = q.x, q.y, q.z, q.w
    vx, vy, vz = x, y, 0.0
    cx, cy, cz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    ccx, ccy = uy * cz - uz * cy, uz * cx - ux * cz
    return vx + 2 * w * cx + 2 * ccx, vy + 2 * w * cy + 2 * ccy


def obj(uid, otype, x=0.0, y=0.0, z=0.0, heading=0.0, size=(4.0, 2.0, 1.5)):
    return ObjectStatus(unique_id=uid, type=otype, heading=heading, position=Vector3(x, y, z), size=Vector3(*size))


def objects(npcs=(), peds=(), obst=()):
    return ObjectStatusList(num_of_npcs=len(npcs), num_of_pedestrian=len(peds), num_of_obstacle=len(obst),
                            npc_list=list(npcs), pedestrian_list=list(peds), obstacle_list=list(obst))


def rgba(m):
    return (m.r, m.g, m.b, m.a)


def close(a, b, tol=1e-6):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


# ----------------------------------------------------------------------------- orientation

@pytest.mark.parametrize('heading', [0.0, 30.0, 90.0, 180.0, -90.0, 270.0, 450.0, -720.5])
def test_yaw_quaternion_turns_x_onto_the_heading(heading):
    q = mk.heading_quaternion(heading)
    assert q.x == q.y == 0.0
    assert math.isclose(q.z * q.z + q.w * q.w, 1.0)
    x, y = rotate(q, 1.0, 0.0)
    assert math.isclose(x, math.cos(math.radians(heading)), abs_tol=1e-9)
    assert math.isclose(y, math.sin(math.radians(heading)), abs_tol=1e-9)


def test_yaw_quaternion_values():
    assert close(tuple((lambda q: (q.x, q.y, q.z, q.w))(mk.heading_quaternion(0.0))), (0, 0, 0, 1))
    h = math.sqrt(0.5)
    assert close(tuple((lambda q: (q.x, q.y, q.z, q.w))(mk.heading_quaternion(90.0))), (0, 0, h, h))
    assert close(tuple((lambda q: (q.x, q.y, q.z, q.w))(mk.heading_quaternion(180.0))), (0, 0, 1, 0))


# ----------------------------------------------------------------------------- ego

def ego(x=10.0, y=-5.0, z=0.5, heading=30.0, v=(0.0, 0.0, 0.0)):
    m = EgoVehicleStatus(heading=heading, position=Vector3(x, y, z), velocity=Vector3(*v))
    m.header.stamp.secs = 12
    return m


def test_ego_box_size_pose_and_colour():
    style = mk.Style(frame_id='world', ego_size=(4.0, 2.0, 1.6))
    [box] = mk.ego_markers(ego(), style)
    assert (box.ns, box.id, box.type, box.action) == ('ego', 0, Marker.CUBE, Marker.ADD)
    assert box.header.frame_id == 'world' and box.header.stamp.secs == 12
    assert (box.pose.position.x, box.pose.position.y, box.pose.position.z) == (10.0, -5.0, 0.5 + 0.8)
    assert (box.scale.x, box.scale.y, box.scale.z) == (4.0, 2.0, 1.6)
    assert rotate(box.pose.orientation, 1, 0) == pytest.approx((math.cos(math.radians(30)), 0.5))
    assert rgba(box.color) == mk.COLORS['ego']


def test_ego_velocity_arrow_map_frame():
    style = mk.Style(ego_size=(4.6, 1.9, 1.5), velocity_arrow_s=2.0)
    box, arrow = mk.ego_markers(ego(v=(3.0, 4.0, 0.0)), style)
    assert (arrow.ns, arrow.id, arrow.type) == ('ego_velocity', 0, Marker.ARROW)
    a, b = arrow.points
    assert (a.x, a.y) == (10.0, -5.0) and a.z > 0.5 + 1.5            # starts above the box
    assert (b.x - a.x, b.y - a.y, b.z - a.z) == pytest.approx((6.0, 8.0, 0.0))   # 5 m/s x 2 s


def test_ego_velocity_arrow_body_frame_is_rotated_by_the_heading():
    style = mk.Style(ego_velocity_frame='body', velocity_arrow_s=1.0)
    _, arrow = mk.ego_markers(ego(heading=90.0, v=(5.0, 0.0, 0.0)), style)
    a, b = arrow.points
    assert (b.x - a.x, b.y - a.y) == pytest.approx((0.0, 5.0), abs=1e-9)


def test_no_arrow_at_standstill():
    assert [m.ns for m in mk.ego_markers(ego(v=(0.05, 0.0, 0.0)), STYLE)] == ['ego']


# ----------------------------------------------------------------------------- objects

def test_objects_boxes_ids_namespaces_colours_labels():
    lst = objects(npcs=[obj(7, 1, 1.0, 2.0, 0.0, 90.0, (4.0, 2.0, 1.5))],
                  peds=[obj(101, 0, -3.0, 4.0, 0.2, 0.0, (0.5, 0.5, 1.8))],
                  obst=[obj(201, 2, 5.0, 5.0, 0.0, 45.0, (1.0, 1.0, 1.0)), obj(202, 2, 8.0, 5.0)])
    lst.header.stamp.secs = 99
    ms = mk.object_markers(lst, STYLE)
    boxes = [m for m in ms if m.type == Marker.CUBE]
    labels = [m for m in ms if m.type == Marker.TEXT_VIEW_FACING]
    assert [(m.ns, m.id) for m in boxes] == [('npc', 7), ('pedestrian', 101), ('obstacle', 201), ('obstacle', 202)]
    assert [(m.ns, m.id, m.text) for m in labels] == [('npc_label', 7, '7'), ('pedestrian_label', 101, '101'),
                                                      ('obstacle_label', 201, '201'), ('obstacle_label', 202, '202')]
    for m in boxes:
        assert rgba(m.color) == mk.COLORS[m.ns]
        assert m.header.stamp.secs == 99 and m.header.frame_id == 'map' and m.action == Marker.ADD
    npc, ped = boxes[0], boxes[1]
    assert (npc.pose.position.x, npc.pose.position.y, npc.pose.position.z) == (1.0, 2.0, 0.75)
    assert (npc.scale.x, npc.scale.y, npc.scale.z) == (4.0, 2.0, 1.5)
    assert rotate(npc.pose.orientation, 1, 0) == pytest.approx((0.0, 1.0), abs=1e-9)
    assert ped.pose.position.z == pytest.approx(0.2 + 0.9)
    # the label floats above the object and north of it, clear of the box seen from above
    lab = labels[0]
    assert lab.pose.position.z > 1.5
    assert lab.pose.position.y - 2.0 > 0.5 * math.hypot(4.0, 2.0)
    assert lab.pose.position.x == 1.0 and rgba(lab.color) == mk.COLORS['label']


def test_palette_gives_each_kind_its_own_colour():
    kinds = ['ego', 'npc', 'pedestrian', 'obstacle']
    assert len(set(mk.COLORS[k] for k in kinds)) == len(kinds)
    lamps = set(mk.COLORS[k] for k in ('red', 'yellow', 'green'))
    assert not lamps & set(mk.COLORS[k] for k in kinds)


def test_labels_can_be_switched_off():
    style = mk.Style(labels=False)
    assert [m.type for m in mk.object_markers(objects(npcs=[obj(1, 1)]), style)] == [Marker.CUBE]


def test_type_constants_match_the_emulator_and_the_codec_docs():
    from morai_bridge.emu import scenario, sim_signals
    assert (mk.OBJ_PEDESTRIAN, mk.OBJ_VEHICLE, mk.OBJ_OBSTACLE) == (
        scenario.OBJ_PEDESTRIAN, scenario.OBJ_VEHICLE, scenario.OBJ_OBSTACLE)
    assert (mk.TL_RED, mk.TL_YELLOW, mk.TL_GREEN, mk.TL_LEFT) == (
        sim_signals.TL_RED, sim_signals.TL_YELLOW, sim_signals.TL_GREEN, sim_signals.TL_LEFT)
    text = open(os.path.join(ROOT, 'msg_sets', '2022', 'msg', 'GetTrafficLightStatus.msg')).read()
    assert '1 red, 4 yellow, 16 green, 32 green-left' in text


def test_ego_size_defaults_are_the_emulators_vehicle():
    from morai_bridge.emu.sim_vehicle import VehicleParams
    from morai_bridge.nodes import markers as node
    d = dict((p.name, p.default) for p in node.PARAMS)
    v = VehicleParams()
    assert (d['ego_length'], d['ego_width'], d['ego_height']) == (v.length, v.width, v.height)
    assert mk.Style().ego_size == (v.length, v.width, v.height)


# ----------------------------------------------------------------------------- traffic lights

ON, OFF = 'on', 'off'


@pytest.mark.parametrize('status, expected', [
    (1, ('red', OFF, OFF, OFF)),
    (4, (OFF, 'yellow', OFF, OFF)),
    (16, (OFF, OFF, OFF, 'green')),
    (32, (OFF, OFF, 'green', OFF)),
    (33, ('red', OFF, 'green', OFF)),
    (48, (OFF, OFF, 'green', 'green')),
    (5, ('red', 'yellow', OFF, OFF)),
    (-1, (OFF, OFF, OFF, OFF)),
    (0, (OFF, OFF, OFF, OFF)),
    (2 | 8 | 64, (OFF, OFF, OFF, OFF)),     # bits without a head are ignored
])
def test_lamp_colours_per_status(status, expected):
    got = [rgba(c) for c in mk.lamp_colors(status)]
    assert got == [mk.COLORS['lamp_off'] if e == OFF else mk.COLORS[e] for e in expected]


def test_light_markers_at_the_known_position():
    light = GetTrafficLightStatus(trafficLightIndex='C119BS010007', trafficLightStatus=33)
    housing, lamps = mk.light_markers(light, (1.0, 2.0, 5.0, 90.0), STYLE)
    assert housing.id == lamps.id == mk.light_id('C119BS010007')
    assert (housing.ns, housing.type, lamps.ns, lamps.type) == (
        'traffic_light', Marker.CUBE, 'traffic_light_lamps', Marker.SPHERE_LIST)
    assert (housing.pose.position.x, housing.pose.position.y, housing.pose.position.z) == (1.0, 2.0, 5.0)
    # the heads lie on top of the housing (a sphere list inside a box is hidden in RViz)
    assert lamps.pose.position.z > housing.pose.position.z + housing.scale.z / 2.0
    assert len(lamps.points) == len(lamps.colors) == 4
    xs = [p.x for p in lamps.points]
    assert xs == sorted(xs) and sum(xs) == pytest.approx(0.0)           # a row centred on the light
    assert housing.scale.x > xs[-1] - xs[0] + lamps.scale.x - 0.01        # the housing spans the row
    # the row turns with yaw_deg: local +x is map +y for 90 deg
    assert rotate(lamps.pose.orientation, 1, 0) == pytest.approx((0.0, 1.0), abs=1e-9)
    assert [rgba(c) for c in lamps.colors] == [rgba(c) for c in mk.lamp_colors(33)]


def test_light_without_position_has_no_marker():
    assert mk.light_markers(GetTrafficLightStatus(trafficLightIndex='X'), None, STYLE) == []


def test_light_ids_are_stable_and_distinct():
    import zlib
    assert mk.light_id('C119BS010007') == zlib.crc32(b'C119BS010007') & 0x7fffffff
    ids = [mk.light_id('C119BS0100%02d' % k) for k in range(100)]
    assert len(set(ids)) == 100 and all(0 <= i < 2 ** 31 for i in ids)


def test_parse_light_positions():
    got = mk.parse_light_positions({'A': [1, 2, 3], 'B': [1.5, 2.5, 3.5, 90]})
    assert got == {'A': (1.0, 2.0, 3.0, 0.0), 'B': (1.5, 2.5, 3.5, 90.0)}
    assert mk.parse_light_positions(None) == {}
    for bad in ({'A': [1, 2]}, {'A': 'x'}, {'A': [1, 2, float('nan')]}, {'A': [1, 2, True]}, [1, 2, 3]):
        with pytest.raises(ValueError):
            mk.parse_light_positions(bad, 'f.yaml')


def test_demo_light_file_places_exactly_the_demo_scenarios_lights():
    from morai_bridge.emu.scenario import load_scenario
    from morai_bridge.emu.sim_signals import DEFAULT_LIGHTS
    from morai_bridge.ros.marker_publisher import read_light_positions
    demo = load_scenario(os.path.join(ROOT, 'config', 'scenarios'), 'demo')
    lights = demo.traffic_lights if demo.traffic_lights is not None else DEFAULT_LIGHTS
    path, pos = read_light_positions('demo', ROOT)
    assert path == os.path.join(ROOT, 'config', 'traffic_lights', 'demo.yaml')
    assert set(pos) == set(lt.id for lt in lights)
    # the light the demo driver obeys stands by its stop point
    from morai_bridge.nodes import demo_driver
    d = dict((p.name, p.default) for p in demo_driver.PARAMS)
    x, y, _, _ = pos[d['light_id']]
    assert math.hypot(x - d['stop_x'], y - d['stop_y']) < d['stop_zone_m']


def test_light_positions_path_forms(tmp_path):
    from morai_bridge.ros.marker_publisher import light_positions_path, read_light_positions
    from morai_bridge.ros.params import ParamError
    assert light_positions_path('', '/p') is None
    assert light_positions_path('demo', '/p') == '/p/config/traffic_lights/demo.yaml'
    assert light_positions_path('/a/b.yaml', '/p') == '/a/b.yaml'
    f = tmp_path / 'lights.yaml'
    f.write_text('L1: [1, 2, 3]\n')
    assert read_light_positions(str(f)) == (str(f), {'L1': (1.0, 2.0, 3.0, 0.0)})
    f.write_text('L1: [1, 2]\n')
    with pytest.raises(ParamError, match='L1'):
        read_light_positions(str(f))
    with pytest.raises(ParamError, match='cannot read'):
        read_light_positions(str(tmp_path / 'missing.yaml'))


# ----------------------------------------------------------------------------- collisions, tracking

def test_collision_markers_have_a_lifetime():
    c = CollisionData(collision_object=[obj(3, 1, 4.0, 5.0, 0.0), obj(201, 2, 6.0, 5.0, 1.0)])
    style = mk.Style(collision_lifetime_s=1.5, collision_diameter=3.0)
    ms = mk.collision_markers(c, style)
    assert [(m.ns, m.id, m.type) for m in ms] == [('collision', 3, Marker.SPHERE), ('collision', 201, Marker.SPHERE)]
    assert ms[0].lifetime.to_sec() == 1.5
    assert (ms[1].pose.position.x, ms[1].pose.position.y, ms[1].pose.position.z) == (6.0, 5.0, 2.5)
    assert (ms[0].scale.x, ms[0].scale.y, ms[0].scale.z) == (3.0, 3.0, 3.0)
    assert rgba(ms[0].color) == mk.COLORS['collision'] and ms[0].color.a < 1.0


def test_tracker_deletes_vanished_markers_once():
    t = mk.MarkerTracker('map')
    first = mk.object_markers(objects(npcs=[obj(1, 1), obj(2, 1)], peds=[obj(101, 0)]), STYLE)
    arr = t.update(first)
    assert all(m.action == Marker.ADD for m in arr.markers) and len(arr.markers) == 6
    arr = t.update(mk.object_markers(objects(npcs=[obj(2, 1)]), STYLE))
    deleted = [(m.ns, m.id) for m in arr.markers if m.action == Marker.DELETE]
    assert sorted(deleted) == [('npc', 1), ('npc_label', 1), ('pedestrian', 101), ('pedestrian_label', 101)]
    assert all(m.header.frame_id == 'map' for m in arr.markers)
    assert [(m.ns, m.id) for m in arr.markers if m.action == Marker.ADD] == [('npc', 2), ('npc_label', 2)]
    arr = t.update(mk.object_markers(objects(npcs=[obj(2, 1)]), STYLE))
    assert [m.action for m in arr.markers] == [Marker.ADD, Marker.ADD]      # deleted once only
    arr = t.update([])                                                       # everything gone (stale input)
    assert sorted((m.ns, m.id, m.action) for m in arr.markers) == [
        ('npc', 2, Marker.DELETE), ('npc_label', 2, Marker.DELETE)]


def test_tracker_passes_events_without_tracking_them():
    t = mk.MarkerTracker('map')
    ev = mk.collision_markers(CollisionData(collision_object=[obj(3, 1)]), STYLE)
    arr = t.update([], ev)
    assert [(m.ns, m.action) for m in arr.markers] == [('collision', Marker.ADD)]
    assert t.update([]).markers == []


def test_a_reappearing_object_is_added_again():
    t = mk.MarkerTracker('map')
    t.update(mk.object_markers(objects(npcs=[obj(1, 1)]), STYLE))
    t.update([])
    arr = t.update(mk.object_markers(objects(npcs=[obj(1, 1)]), STYLE))
    assert [(m.ns, m.action) for m in arr.markers] == [('npc', Marker.ADD), ('npc_label', Marker.ADD)]


# ----------------------------------------------------------------------------- node table, launch, docs

_spec = importlib.util.spec_from_file_location('gen_launch', os.path.join(ROOT, 'tools', 'gen_launch.py'))
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)


def test_markers_launch_file_is_generated_from_params():
    text = open(os.path.join(ROOT, 'launch', 'markers.launch')).read()
    assert gen.launch_text('markers') == text, 'run /usr/bin/python3 tools/gen_launch.py markers'


def test_markers_param_table_matches_node():
    text = open(os.path.join(ROOT, 'docs', 'ros_api.md')).read()
    assert gen.docs_with_table(text, 'markers') == text, 'run /usr/bin/python3 tools/gen_launch.py markers'


def test_every_topic_is_a_param_and_queue_sizes_are_set():
    from morai_bridge.nodes import markers as node
    names = [p.name for p in node.PARAMS]
    for t in ('markers_topic', 'ego_topic', 'object_topic', 'traffic_light_topic', 'collision_topic', 'frame_id'):
        assert t in names
    from morai_bridge.ros import marker_publisher
    src = open(marker_publisher.__file__).read()
    calls = re.findall(r'rospy\.(?:Publisher|Subscriber)\([^)]*\)', src)
    assert len(calls) == 5 and all('queue_size=' in c for c in calls)


def test_demo_launch_args():
    root = ET.parse(os.path.join(ROOT, 'launch', 'demo.launch')).getroot()
    args = dict((a.get('name'), a.get('default')) for a in root.iter('arg') if a.get('default') is not None)
    assert (args['rviz'], args['markers'], args['aggregator']) == ('false', 'true', 'false')


def _package_deps():
    root = ET.parse(os.path.join(ROOT, 'package.xml')).getroot()
    return set(e.text.strip() for e in root if e.tag in ('depend', 'exec_depend', 'test_depend'))


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
            assert pkg in deps, '%s: node of package %s, not in package.xml' % (os.path.basename(path), pkg)


def test_rviz_is_not_forced_on_headless_users():
    root = ET.parse(os.path.join(ROOT, 'package.xml')).getroot()
    run = set(e.text.strip() for e in root if e.tag in ('depend', 'exec_depend'))
    assert 'rviz' not in run and 'visualization_msgs' in run and 'diagnostic_aggregator' in run


def test_rviz_config_shows_the_topics():
    cfg = yaml.safe_load(open(os.path.join(ROOT, 'rviz', 'morai.rviz')))
    displays = dict((d['Class'], d) for d in cfg['Visualization Manager']['Displays'])
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
    paths = dict((k, a['path']) for k, a in _analyzers().items())
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
