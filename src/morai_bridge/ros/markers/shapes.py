"""morai_msgs ground truth -> visualization_msgs/Marker, as pure functions.

Everything here is a function of morai_msgs messages and a few numbers, so it is
unit-testable without a ROS master; the ``markers`` node (nodes/markers.py) only
subscribes, keeps the latest inputs and publishes what these functions build.

Namespaces and ids (stable, so RViz updates markers in place):

==========================  ===========  ============================================
ns                          type         id
==========================  ===========  ============================================
``ego``                     CUBE         0
``ego_velocity``            ARROW        0 (deleted while the ego stands still)
``npc`` / ``pedestrian`` /  CUBE         ObjectStatus.unique_id
``obstacle``
``npc_label`` / ...         TEXT         ObjectStatus.unique_id (the text is the id)
``traffic_light``           CUBE         :func:`light_id` of trafficLightIndex (housing)
``traffic_light_lamps``     SPHERE_LIST  same id; one sphere per head, lit or dark
``collision``               SPHERE       ObjectStatus.unique_id, with a lifetime
==========================  ===========  ============================================

Palette (RGBA 0..1), chosen so that every kind has its own hue:

* ego: blue (0.10, 0.35, 1.00); NPC vehicles: orange (1.00, 0.50, 0.00);
  pedestrians: magenta (1.00, 0.00, 1.00); obstacles: cyan (0.00, 0.85, 0.85);
  labels: white; collisions: translucent red (1.00, 0.10, 0.10, 0.6).
* Traffic light heads, left to right along the housing (Korean horizontal
  order): red, yellow, green-left arrow, green.  A lit head has its colour
  (red (1, 0, 0), yellow (1, 0.85, 0), green (0, 0.9, 0.2)), a dark one is dark
  grey; the housing is dark grey.  Status -1 (off) shows every head dark.

Geometry: positions are map-frame metres (the bridge's ``frame_id``); a box of
size (length, width, height) stands on the reported position (its centre is
``height / 2`` above it) and is turned by the heading (deg, counter-clockwise,
0 = +x) as a yaw quaternion.  An id label floats above its object and just north
of it (half the box diagonal + 0.6 text heights), so that it does not hide the box
in a top-down view.
"""
import math
import zlib

from geometry_msgs.msg import Point, Pose, Quaternion, Vector3
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

import rospy

from morai_bridge.wire import units
from morai_bridge.wire.enums import ObjectType, TrafficLightBit

# ObjectStatus.type (msg/ObjectStatus.msg) and the light status bits, from the protocol's enums
OBJ_PEDESTRIAN, OBJ_VEHICLE, OBJ_OBSTACLE = int(ObjectType.PEDESTRIAN), int(ObjectType.VEHICLE), int(ObjectType.OBSTACLE)
# GetTrafficLightStatus.trafficLightStatus bits (msg/GetTrafficLightStatus.msg)
TL_RED, TL_YELLOW, TL_GREEN, TL_LEFT = (int(TrafficLightBit.RED), int(TrafficLightBit.YELLOW),
                                       int(TrafficLightBit.GREEN), int(TrafficLightBit.GREEN_LEFT))

# list of ObjectStatusList -> namespace
OBJECT_LISTS = (('npc_list', 'npc'), ('pedestrian_list', 'pedestrian'), ('obstacle_list', 'obstacle'))
KIND_OF_TYPE = {OBJ_VEHICLE: 'npc', OBJ_PEDESTRIAN: 'pedestrian', OBJ_OBSTACLE: 'obstacle'}

COLORS = {
    'ego': (0.10, 0.35, 1.00, 1.0),
    'npc': (1.00, 0.50, 0.00, 1.0),
    'pedestrian': (1.00, 0.00, 1.00, 1.0),
    'obstacle': (0.00, 0.85, 0.85, 1.0),
    'label': (1.0, 1.0, 1.0, 1.0),
    'velocity': (0.10, 0.35, 1.00, 1.0),
    'collision': (1.00, 0.10, 0.10, 0.6),
    'housing': (0.12, 0.12, 0.12, 1.0),
    'lamp_off': (0.25, 0.25, 0.25, 1.0),
    'red': (1.0, 0.0, 0.0, 1.0),
    'yellow': (1.0, 0.85, 0.0, 1.0),
    'green': (0.0, 0.9, 0.2, 1.0),
}
# heads of a traffic light, left to right: (status bit, colour when lit)
LAMPS = ((TL_RED, 'red'), (TL_YELLOW, 'yellow'), (TL_LEFT, 'green'), (TL_GREEN, 'green'))
LAMP_DIAMETER = 1.0      # m
LAMP_SPACING = 1.2       # m between head centres
HOUSING_HEIGHT = 0.3     # m; the heads sit on top of the housing (RViz draws a sphere list at
                         # the depth of its centre: inside the housing it would be hidden)
MIN_ARROW_SPEED = 0.1    # m/s: slower than this, no velocity arrow


class Style:
    """Sizes and options of the markers (the node fills it from its parameters)."""

    __slots__ = ('frame_id', 'ego_size', 'ego_velocity_frame', 'velocity_arrow_s', 'text_height', 'labels',
                 'collision_lifetime_s', 'collision_diameter')

    def __init__(self, frame_id='map', ego_size=(4.6, 1.9, 1.5), ego_velocity_frame='body', velocity_arrow_s=1.0,
                 text_height=1.5, labels=True, collision_lifetime_s=2.0, collision_diameter=2.0):
        self.frame_id = frame_id
        self.ego_size = tuple(ego_size)
        self.ego_velocity_frame = ego_velocity_frame
        self.velocity_arrow_s = velocity_arrow_s
        self.text_height = text_height
        self.labels = labels
        self.collision_lifetime_s = collision_lifetime_s
        self.collision_diameter = collision_diameter


def color(name):
    r, g, b, a = COLORS[name]
    return ColorRGBA(r, g, b, a)


def heading_quaternion(heading_deg):
    """Quaternion of a rotation about +z by ``heading_deg`` (counter-clockwise, 0 = +x)."""
    return Quaternion(*units.yaw_quaternion(math.radians(heading_deg)))


def light_id(index):
    """Stable marker id of a traffic light index string (CRC-32, kept in int32's positive range)."""
    return zlib.crc32(index.encode('utf-8', 'replace')) & 0x7fffffff


def _marker(ns, mid, mtype, style, stamp=None):
    m = Marker()
    m.header.frame_id = style.frame_id
    if stamp is not None:
        m.header.stamp = stamp
    m.ns, m.id, m.type, m.action = ns, mid, mtype, Marker.ADD
    m.pose.orientation.w = 1.0
    return m


def box(ns, mid, x, y, z, heading_deg, size, rgba, style, stamp=None):
    """A CUBE of ``size`` = (length, width, height) standing on (x, y, z), turned by the heading."""
    m = _marker(ns, mid, Marker.CUBE, style, stamp)
    length, width, height = size
    m.pose = Pose(Point(x, y, z + height / 2.0), heading_quaternion(heading_deg))
    m.scale = Vector3(length, width, height)
    m.color = rgba
    return m


def label(ns, mid, text, x, y, top_z, radius, style, stamp=None):
    """A TEXT_VIEW_FACING marker above ``top_z`` and ``radius`` + a line north (+y) of (x, y), so that
    it does not cover the object when seen from above (RViz's top-down view)."""
    m = _marker(ns, mid, Marker.TEXT_VIEW_FACING, style, stamp)
    m.pose.position = Point(x, y + radius + 0.6 * style.text_height, top_z + 0.6 * style.text_height)
    m.scale.z = style.text_height
    m.color = color('label')
    m.text = text
    return m


def ego_markers(ego, style):
    """Box of the ego's size at its pose, and an arrow of its velocity (m/s x ``velocity_arrow_s``): the
    status velocity is in the body frame (``style.ego_velocity_frame``, docs/units.md), turned into
    the map frame by the heading."""
    p, stamp = ego.position, ego.header.stamp
    length, width, height = style.ego_size
    out = [box('ego', 0, p.x, p.y, p.z, ego.heading, style.ego_size, color('ego'), style, stamp)]
    vx, vy, vz = ego.velocity.x, ego.velocity.y, ego.velocity.z
    if style.ego_velocity_frame == 'body':
        yaw = math.radians(ego.heading)
        vx, vy = vx * math.cos(yaw) - vy * math.sin(yaw), vx * math.sin(yaw) + vy * math.cos(yaw)
    if math.sqrt(vx * vx + vy * vy + vz * vz) >= MIN_ARROW_SPEED:
        a = _marker('ego_velocity', 0, Marker.ARROW, style, stamp)
        start = Point(p.x, p.y, p.z + height + 0.2)
        k = style.velocity_arrow_s
        a.points = [start, Point(start.x + vx * k, start.y + vy * k, start.z + vz * k)]
        a.scale = Vector3(0.4, 0.9, 1.2)        # shaft diameter, head diameter, head length
        a.color = color('velocity')
        out.append(a)
    return out


def object_markers(objects, style):
    """Box (coloured by kind) and id label of every object of an ObjectStatusList."""
    out = []
    stamp = objects.header.stamp
    for field, kind in OBJECT_LISTS:
        for o in getattr(objects, field):
            p, s = o.position, o.size
            out.append(box(kind, o.unique_id, p.x, p.y, p.z, o.heading, (s.x, s.y, s.z), color(kind), style, stamp))
            if style.labels:
                out.append(label(kind + '_label', o.unique_id, str(o.unique_id), p.x, p.y, p.z + s.z,
                                 0.5 * math.hypot(s.x, s.y), style, stamp))
    return out


def lamp_colors(status):
    """Colour of each head (LAMPS order) for a trafficLightStatus bit set; -1 = all dark."""
    lit = status if status != -1 else 0
    return [color(name) if lit & bit else color('lamp_off') for bit, name in LAMPS]


def light_markers(light, position, style):
    """Housing (centred on ``position`` = (x, y, z, yaw_deg)) and heads of one traffic light; [] when
    the position is None (unknown)."""
    if position is None:
        return []
    x, y, z, yaw_deg = position
    mid = light_id(light.trafficLightIndex)
    stamp = light.header.stamp
    n = len(LAMPS)
    housing = _marker('traffic_light', mid, Marker.CUBE, style, stamp)
    housing.pose = Pose(Point(x, y, z), heading_quaternion(yaw_deg))
    housing.scale = Vector3(n * LAMP_SPACING + 0.2, LAMP_DIAMETER + 0.2, HOUSING_HEIGHT)
    housing.color = color('housing')
    lamps = _marker('traffic_light_lamps', mid, Marker.SPHERE_LIST, style, stamp)
    lamps.pose = Pose(Point(x, y, z + HOUSING_HEIGHT / 2.0 + 0.05), heading_quaternion(yaw_deg))
    lamps.scale = Vector3(LAMP_DIAMETER, LAMP_DIAMETER, LAMP_DIAMETER)
    lamps.points = [Point((k - (n - 1) / 2.0) * LAMP_SPACING, 0.0, 0.0) for k in range(n)]
    lamps.colors = lamp_colors(light.trafficLightStatus)
    lamps.color = color('lamp_off')
    return [housing, lamps]


def collision_markers(collision, style):
    """A translucent sphere at every object the ego touches, disappearing after the lifetime."""
    out = []
    for o in collision.collision_object:
        m = _marker('collision', o.unique_id, Marker.SPHERE, style, collision.header.stamp)
        m.pose.position = Point(o.position.x, o.position.y, o.position.z + style.collision_diameter / 2.0)
        d = style.collision_diameter
        m.scale = Vector3(d, d, d)
        m.color = color('collision')
        m.lifetime = rospy.Duration(style.collision_lifetime_s)
        out.append(m)
    return out


def delete_marker(ns, mid, frame_id):
    m = Marker()
    m.header.frame_id = frame_id
    m.ns, m.id, m.action = ns, mid, Marker.DELETE
    m.pose.orientation.w = 1.0
    return m


class MarkerTracker:
    """Remembers which (ns, id) are shown and turns a full set of markers into a MarkerArray
    that also DELETEs every marker shown before and absent now.  Markers with a lifetime
    (collisions) are passed through as events and not tracked."""

    def __init__(self, frame_id='map'):
        self.frame_id = frame_id
        self.shown = set()

    def update(self, markers, events=()):
        current = {(m.ns, m.id) for m in markers}
        gone = sorted(self.shown - current)
        self.shown = current
        return MarkerArray(markers=list(markers) + list(events) +
                           [delete_marker(ns, mid, self.frame_id) for ns, mid in gone])


def parse_light_positions(obj, where='traffic light positions'):
    """``{index: [x, y, z] or [x, y, z, yaw_deg]}`` (a YAML mapping) -> ``{index: (x, y, z, yaw_deg)}``.

    ValueError names the first bad entry."""
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        raise ValueError('%s: expected a mapping of light index -> [x, y, z(, yaw_deg)], got %s'
                         % (where, type(obj).__name__))
    out = {}
    for key, value in obj.items():
        if (not isinstance(value, (list, tuple)) or len(value) not in (3, 4) or
                any(isinstance(c, bool) or not isinstance(c, (int, float)) or not math.isfinite(c) for c in value)):
            raise ValueError(f'{where}: {key}: expected [x, y, z] or [x, y, z, yaw_deg] (numbers), got {value!r}')
        v = [float(c) for c in value]
        out[str(key)] = (v[0], v[1], v[2], v[3] if len(v) == 4 else 0.0)
    return out
