"""The camera's boxes (BOX datagrams, :func:`morai_bridge.wire.camera.decode_boxes`) as ROS shows them:
a ``visualization_msgs/MarkerArray`` (:func:`box_markers`) and the 2D boxes drawn on an image
(:func:`annotate`).

Per object the array holds a LINE_LIST of the 12 edges of its 3D box, whose ``text`` holds the
object's codes and 2D box machine-readably (:func:`box_text`, read back by :func:`parse_box_text`),
and a TEXT_VIEW_FACING label ``group/class/subclass`` above it; the colour is a hue per group code
(:func:`box_color`).  docs/sensors_ros.md says why this form.  Pure functions (no master needed),
used by :class:`morai_bridge.ros.sensors.camera_ros.CameraBridge`, tested in test/unit/ros/sensors/test_box_markers.py.
"""
import colorsys

import rospy
from geometry_msgs.msg import Point, Pose, Quaternion, Vector3
from std_msgs.msg import ColorRGBA, Header
from visualization_msgs.msg import Marker, MarkerArray

__all__ = ["BOX_EDGES", "box_color", "box_label", "box_text", "parse_box_text", "box_markers", "annotate"]

#: edges of a box whose corners are numbered in binary cube order (corner i and i ^ bit)
BOX_EDGES = tuple((i, i | bit) for i in range(8) for bit in (1, 2, 4) if not i & bit)


def box_color(group_id):
    """Colour of a box: a hue per group code (golden-ratio steps), fully saturated."""
    r, g, b = colorsys.hsv_to_rgb((group_id * 0.618033988749895) % 1.0, 0.85, 1.0)
    return r, g, b


def box_label(obj):
    return '%d/%d/%d' % (obj.group_id, obj.class_id, obj.subclass_id)


def box_text(obj):
    """Machine-readable ``key=value`` text of one box: codes and 2D box (pixels)."""
    return 'group=%d class=%d subclass=%d xmin=%.2f ymin=%.2f xmax=%.2f ymax=%.2f' % (
        obj.group_id, obj.class_id, obj.subclass_id, obj.xmin, obj.ymin, obj.xmax, obj.ymax)


def parse_box_text(text):
    """Inverse of :func:`box_text`: dict of ints (codes) and floats (2D box)."""
    out = {}
    for item in text.split():
        key, _, value = item.partition('=')
        out[key] = int(value) if key in ('group', 'class', 'subclass') else float(value)
    return out


def _marker(header, ns, mid, mtype, lifetime):
    m = Marker()
    m.header = header
    m.ns = ns
    m.id = mid
    m.type = mtype
    m.action = Marker.ADD
    m.pose = Pose(Point(0.0, 0.0, 0.0), Quaternion(0.0, 0.0, 0.0, 1.0))
    m.lifetime = rospy.Duration(lifetime)
    m.frame_locked = False
    return m


def box_markers(objects, stamp, frame_id, first_id=0, delete_all=True, lifetime=0.3, line_width=0.03,
                text_height=0.3, optical=True):
    """visualization_msgs/MarkerArray of boxes (see the module docstring).

    ``delete_all``: start with a DELETEALL (markers of the previous packet go).  ``first_id``:
    id of the first object (a packet continued in a second datagram numbers on).  ``optical``:
    corners in an optical frame (label above = towards -y), else a z-up frame.
    """
    out = MarkerArray()
    if delete_all:
        d = Marker()
        d.header = Header(stamp=stamp, frame_id=frame_id)
        d.action = Marker.DELETEALL
        out.markers.append(d)
    for i, obj in enumerate(objects):
        header = Header(stamp=stamp, frame_id=frame_id)
        r, g, b = box_color(obj.group_id)
        box = _marker(header, 'camera_boxes', first_id + i, Marker.LINE_LIST, lifetime)
        box.scale = Vector3(line_width, 0.0, 0.0)
        box.color = ColorRGBA(r, g, b, 1.0)
        box.points = [Point(*obj.corners[k]) for edge in BOX_EDGES for k in edge]
        box.text = box_text(obj)
        out.markers.append(box)
        xs = [c[0] for c in obj.corners]
        ys = [c[1] for c in obj.corners]
        zs = [c[2] for c in obj.corners]
        if max(xs) - min(xs) + max(ys) - min(ys) + max(zs) - min(zs) <= 0.0:
            continue            # no 3D box (2D-only entry): nothing to label in space
        label = _marker(Header(stamp=stamp, frame_id=frame_id), 'camera_box_labels', first_id + i,
                        Marker.TEXT_VIEW_FACING, lifetime)
        cx, cy, cz = (min(xs) + max(xs)) / 2.0, (min(ys) + max(ys)) / 2.0, (min(zs) + max(zs)) / 2.0
        if optical:
            label.pose.position = Point(cx, min(ys) - text_height, cz)
        else:
            label.pose.position = Point(cx, cy, max(zs) + text_height)
        label.scale = Vector3(0.0, 0.0, text_height)
        label.color = ColorRGBA(1.0, 1.0, 1.0, 1.0)
        label.text = box_label(obj)
        out.markers.append(label)
    return out


def annotate(rgb, objects):
    """A copy of an RGB PIL image with each object's 2D box and label drawn."""
    from PIL import ImageDraw
    img = rgb.copy()
    draw = ImageDraw.Draw(img)
    for obj in objects:
        color = tuple(int(round(c * 255)) for c in box_color(obj.group_id))
        x0, x1 = sorted((obj.xmin, obj.xmax))
        y0, y1 = sorted((obj.ymin, obj.ymax))
        draw.rectangle((x0, y0, x1, y1), outline=color, width=2)
        draw.text((x0 + 2, max(0.0, y0 - 12)), box_label(obj), fill=color)
    return img
