"""The camera's boxes as ROS shows them (ros/sensors/box_markers.py) without a master: the MarkerArray of a BOX
datagram's objects, its colours, and the 2D boxes drawn on an image."""
import pytest
from PIL import Image as PILImage

import rospy
from visualization_msgs.msg import Marker
from morai_bridge.ros.sensors import box_markers
from morai_bridge.wire import camera


def cube(x0, y0, z0, dx, dy, dz):
    """Corners in binary cube order: bit 0 -> +dx, bit 1 -> +dy, bit 2 -> +dz."""
    return tuple((x0 + dx * (i & 1), y0 + dy * ((i >> 1) & 1), z0 + dz * ((i >> 2) & 1)) for i in range(8))


def test_box_edges_are_the_twelve_edges_of_a_cube():
    assert len(box_markers.BOX_EDGES) == 12
    corners = cube(0, 0, 0, 1, 1, 1)
    for a, b in box_markers.BOX_EDGES:
        d = [abs(p - q) for p, q in zip(corners[a], corners[b])]
        assert sorted(d) == [0, 0, 1], (a, b)
    assert len({frozenset(e) for e in box_markers.BOX_EDGES}) == 12


def test_box_markers():
    a = camera.BoxObject(cube(-1.0, -0.5, 10.0, 2.0, 1.5, 4.0), 100.0, 50.0, 300.0, 200.0, 1, 2, 3)
    flat = camera.BoxObject(((0.0, 0.0, 0.0),) * 8, 5.0, 6.0, 7.0, 8.0, 9, 0, 4)   # 2D only
    stamp = rospy.Time(100, 5)
    arr = box_markers.box_markers([a, flat], stamp, 'camera_optical', first_id=0, lifetime=0.3)
    m = arr.markers
    assert m[0].action == Marker.DELETEALL
    boxes = [x for x in m if x.ns == 'camera_boxes']
    labels = [x for x in m if x.ns == 'camera_box_labels']
    assert [b.id for b in boxes] == [0, 1] and [x.id for x in labels] == [0]     # no label for the 2D-only entry
    b = boxes[0]
    assert b.type == Marker.LINE_LIST and b.header.frame_id == 'camera_optical' and b.header.stamp == stamp
    assert b.lifetime == rospy.Duration(0.3) and b.pose.orientation.w == 1.0 and b.color.a == 1.0
    pts = [(p.x, p.y, p.z) for p in b.points]
    assert len(pts) == 24
    assert set(pts) == set(a.corners)
    for i, (ca, cb) in enumerate(box_markers.BOX_EDGES):
        assert pts[2 * i] == a.corners[ca] and pts[2 * i + 1] == a.corners[cb]
    assert box_markers.parse_box_text(b.text) == {'group': 1, 'class': 2, 'subclass': 3, 'xmin': 100.0,
                                                  'ymin': 50.0, 'xmax': 300.0, 'ymax': 200.0}
    assert box_markers.parse_box_text(boxes[1].text)['group'] == 9
    lab = labels[0]
    assert lab.type == Marker.TEXT_VIEW_FACING and lab.text == '1/2/3'
    # above the box in the optical frame: y is down, so above = smaller y than the top face
    assert lab.pose.position.y < -0.5 and lab.pose.position.x == pytest.approx(0.0)
    assert lab.pose.position.z == pytest.approx(12.0)
    cont = box_markers.box_markers([a], stamp, 'camera_optical', first_id=565, delete_all=False)
    assert cont.markers[0].id == 565 and all(x.action == Marker.ADD for x in cont.markers)
    world = box_markers.box_markers([a], stamp, 'map', optical=False).markers[2]
    assert world.pose.position.z > 14.0            # z-up frame: label above the top face


def test_box_colours_differ_by_group_and_are_stable():
    colours = [box_markers.box_color(g) for g in range(8)]
    assert len(set(colours)) == 8
    assert box_markers.box_color(3) == box_markers.box_color(3)
    assert all(0.0 <= c <= 1.0 for rgb in colours for c in rgb)


def test_annotate_draws_the_2d_box():
    img = PILImage.new('RGB', (100, 80), (0, 0, 0))
    obj = camera.BoxObject(((0.0, 0.0, 0.0),) * 8, 10.0, 20.0, 60.0, 70.0, 2, 0, 0)
    out = box_markers.annotate(img, [obj])
    colour = tuple(int(round(c * 255)) for c in box_markers.box_color(2))
    assert out.getpixel((10, 45)) == colour and out.getpixel((60, 45)) == colour   # left and right edges
    assert out.getpixel((35, 20)) == colour and out.getpixel((35, 70)) == colour   # top and bottom
    assert out.getpixel((35, 45)) == (0, 0, 0)                                       # inside untouched
    assert img.getpixel((10, 45)) == (0, 0, 0)                                       # a copy was drawn on
