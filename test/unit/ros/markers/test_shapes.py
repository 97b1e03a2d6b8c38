"""Marker geometry (morai_bridge.ros.markers.shapes, no ROS master): ego, objects, traffic lights,
collisions, the tracker that deletes vanished markers.  The node: nodes/test_markers.py; its working
part: test_publisher.py; RViz and the diagnostics aggregator: project/test_rviz_and_diagnostics.py."""
import math
import os

import pytest

from geometry_msgs.msg import Vector3
from morai_msgs.msg import CollisionData, EgoVehicleStatus, GetTrafficLightStatus, ObjectStatus, ObjectStatusList
from visualization_msgs.msg import Marker

import helpers
from morai_bridge.ros.markers import shapes as mk

ROOT = helpers.ROOT
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
    style = mk.Style(ego_size=(4.6, 1.9, 1.5), ego_velocity_frame='map', velocity_arrow_s=2.0)
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


def test_the_default_arrow_reads_the_velocity_in_the_body_frame():
    """The simulator sends the ego velocity along the vehicle's own axes (docs/units.md): by default a
    status heading 154.8 deg with velocity (5, 1) (forward, left) points the arrow along the heading,
    turned 11.3 deg to the left, as the node's default and the Style's."""
    from morai_bridge.nodes import markers as node
    assert STYLE.ego_velocity_frame == 'body' == {p.name: p.default for p in node.PARAMS}['ego_velocity_frame']
    _, arrow = mk.ego_markers(ego(heading=154.8, v=(5.0, 1.0, 0.0)), STYLE)
    a, b = arrow.points
    h = math.radians(154.8 + math.degrees(math.atan2(1.0, 5.0)))
    assert (b.x - a.x, b.y - a.y) == pytest.approx((math.hypot(5, 1) * math.cos(h), math.hypot(5, 1) * math.sin(h)),
                                                   abs=1e-9)


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
    assert len({mk.COLORS[k] for k in kinds}) == len(kinds)
    lamps = {mk.COLORS[k] for k in ('red', 'yellow', 'green')}
    assert not lamps & {mk.COLORS[k] for k in kinds}


def test_labels_can_be_switched_off():
    style = mk.Style(labels=False)
    assert [m.type for m in mk.object_markers(objects(npcs=[obj(1, 1)]), style)] == [Marker.CUBE]


def test_type_constants_match_the_emulator_and_the_codec_docs():
    from morai_bridge.emu.sim import scenario, signals as sim_signals
    assert (mk.OBJ_PEDESTRIAN, mk.OBJ_VEHICLE, mk.OBJ_OBSTACLE) == (
        scenario.OBJ_PEDESTRIAN, scenario.OBJ_VEHICLE, scenario.OBJ_OBSTACLE)
    assert (mk.TL_RED, mk.TL_YELLOW, mk.TL_GREEN, mk.TL_LEFT) == (
        sim_signals.TL_RED, sim_signals.TL_YELLOW, sim_signals.TL_GREEN, sim_signals.TL_LEFT)
    text = open(os.path.join(ROOT, 'msg_sets', '2022', 'msg', 'GetTrafficLightStatus.msg')).read()
    assert '1 red, 4 yellow, 16 green, 32 green-left' in text


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
