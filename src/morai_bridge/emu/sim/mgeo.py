"""MGeo road maps in the simulator emulator: MORAI's map export (a folder of JSON files) read with
the standard library, and a cursor that drives along lane centre lines.

What is read (the file layout of MORAI's MGeo export, docs/emulator.md "MGeo maps"):

* ``global_info.json``: the origin and coordinate system (:mod:`morai_bridge.configuration.maps`);
* ``node_set.json``: ``idx``, ``point`` (map-frame x, y, z), ``on_stop_line``;
* ``link_set.json``: lane centre lines: ``idx``, ``from_node_idx``, ``to_node_idx``, ``points``,
  ``max_speed`` (km/h), and ``lane_ch_link_path`` (non-empty for a lane-change link, which NPCs
  do not take);
* ``traffic_light_set.json``: ``idx``, ``point``, ``link_id_list``, ``type`` (car / pedestrian / bus),
  ``sub_type`` (its heads: red, yellow, left, straight), ``heading``; a scenario's ``tlList`` indexes
  this list in file order;
* ``intersection_controller_set.json`` (``idx``, ``TL``: the controller's groups of light ids) with
  ``intersection_controller_data.json`` (``idx``, ``TLState``: phases of ``duration`` s and one
  ``lightcolor`` per group, ``yelloduration``: per group): the signal plans.

Not read: lane boundaries and markings, surface markings (stop lines are the nodes' ``on_stop_line``),
crosswalks, traffic signs, junctions, road polygons, parking spaces.  A file the emulator needs that is
missing or malformed is an :class:`MGeoError` naming the file and the key.  No ROS.
"""
import json
import math
import os
from typing import Dict, NamedTuple, Optional, Tuple

from morai_bridge.wire.enums import TrafficLightBit, TrafficLightType

__all__ = ['MGeoError', 'Node', 'Link', 'Light', 'Controller', 'MGeoMap', 'LinkCursor', 'load_mgeo',
           'LIGHT_COLOURS']

#: MGeo's light colour names (intersection_controller_data.json) -> the wire's status bits
LIGHT_COLOURS = {
    'R': int(TrafficLightBit.RED),
    'Y': int(TrafficLightBit.YELLOW),
    'SG': int(TrafficLightBit.GREEN),
    'G': int(TrafficLightBit.GREEN),
    'LG': int(TrafficLightBit.GREEN_LEFT),
    'G_with_GLeft': int(TrafficLightBit.GREEN) | int(TrafficLightBit.GREEN_LEFT),
    'R_with_GLeft': int(TrafficLightBit.RED) | int(TrafficLightBit.GREEN_LEFT),
}
_GREEN_BITS = int(TrafficLightBit.GREEN) | int(TrafficLightBit.GREEN_LEFT)


class MGeoError(ValueError):
    """An MGeo folder cannot be read; the text names the file and the key."""


class Node(NamedTuple):
    idx: str
    x: float
    y: float
    z: float
    on_stop_line: bool


class Link(NamedTuple):
    idx: str
    from_node: str
    to_node: str
    points: Tuple[Tuple[float, float, float], ...]
    cumulative: Tuple[float, ...]      # distance along the line at each point [m]
    max_speed_kmh: float
    lane_change: bool

    @property
    def length(self):
        return self.cumulative[-1]


class Light(NamedTuple):
    idx: str
    x: float
    y: float
    z: float
    link_ids: Tuple[str, ...]
    kind: str                          # car, pedestrian, bus
    heads: Tuple[str, ...]             # sub_type: red, yellow, left, straight
    heading: float

    @property
    def wire_type(self):
        """The Get TrafficLight Status type its heads make (R-Y-G, R-Y-GLeft, R-Y-GLeft-G)."""
        if 'left' in self.heads:
            return int(TrafficLightType.RYG_LEFT_G if 'straight' in self.heads else TrafficLightType.RYG_LEFT)
        return int(TrafficLightType.RYG)


class Controller(NamedTuple):
    idx: str
    groups: Tuple[Tuple[str, ...], ...]            # light ids, one tuple per group
    phases: Tuple[Tuple[float, Tuple[str, ...]], ...]   # (duration s, one colour name per group)
    yellow: Tuple[float, ...]                      # yellow seconds per group

    def plan_of(self, group):
        """The (status, seconds) plan of the lights of ``group``: each phase's colour; where a green
        group turns red, its last ``yellow`` seconds of green are yellow (the data's yelloduration,
        read as per group: its length is the group count in every controller MORAI-EDU's K-City has)."""
        plan = []
        n = len(self.phases)
        for i, (duration, colours) in enumerate(self.phases):
            status = LIGHT_COLOURS[colours[group]]
            after = LIGHT_COLOURS[self.phases[(i + 1) % n][1][group]]
            y = self.yellow[group] if group < len(self.yellow) else 0.0
            if status & _GREEN_BITS and not after & _GREEN_BITS and 0 < y < duration:
                plan += [(status, duration - y), (int(TrafficLightBit.YELLOW), y)]
            else:
                plan.append((status, duration))
        return tuple(plan)


def _read(folder, name, required=True):
    path = os.path.join(folder, name)
    try:
        with open(path, encoding='utf-8-sig') as f:
            return json.load(f)
    except FileNotFoundError:
        if required:
            raise MGeoError(f'MGeo {folder}: no {name}') from None
        return None
    except (OSError, ValueError) as e:
        raise MGeoError(f'MGeo {path}: not readable JSON: {e}') from None


def _records(data, path, keys):
    if not isinstance(data, list):
        raise MGeoError(f'{path}: expected a list of records')
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise MGeoError(f'{path}[{i}]: expected an object')
        missing = [k for k in keys if k not in rec]
        if missing:
            raise MGeoError(f"{path}[{i}] ({rec.get('idx', '?')}): {', '.join(missing)} missing")
        yield rec


def _point(v, where):
    if (not isinstance(v, list) or len(v) < 2
            or any(isinstance(c, bool) or not isinstance(c, (int, float)) or not math.isfinite(c) for c in v)):
        raise MGeoError(f'{where}: expected [x, y(, z)] numbers, got {v!r}')
    return float(v[0]), float(v[1]), float(v[2]) if len(v) > 2 else 0.0


def _link(rec, where):
    pts = rec['points']
    if not isinstance(pts, list) or len(pts) < 2:
        raise MGeoError(f'{where}.points: at least two points')
    points = tuple(_point(p, f'{where}.points') for p in pts)
    cum = [0.0]
    for a, b in zip(points, points[1:]):
        cum.append(cum[-1] + math.hypot(b[0] - a[0], b[1] - a[1]))
    speed = rec.get('max_speed') or 0
    if isinstance(speed, bool) or not isinstance(speed, (int, float)) or speed < 0:
        raise MGeoError(f'{where}.max_speed: a speed in km/h, got {speed!r}')
    return Link(rec['idx'], rec.get('from_node_idx') or '', rec.get('to_node_idx') or '', points,
                tuple(cum), float(speed), bool(rec.get('lane_ch_link_path')))


class MGeoMap:
    """The parts of one MGeo folder the emulator uses (see the module docstring)."""

    def __init__(self, folder, nodes, links, lights, controllers):
        self.folder = folder
        self.nodes: Dict[str, Node] = nodes
        self.links: Dict[str, Link] = links
        self.lights: Tuple[Light, ...] = lights          # in file order: tlList's indices
        self.controllers: Tuple[Controller, ...] = controllers
        self._next = {}
        for link in links.values():
            if not link.lane_change:
                self._next.setdefault(link.from_node, []).append(link.idx)

    def successors(self, link_id):
        """The links that go on from where ``link_id`` ends (lane-change links left out), in file order."""
        return tuple(self._next.get(self.links[link_id].to_node, ()))

    def light_plans(self):
        """light id -> (controller id, its plan) for every light in a controller's group."""
        out = {}
        for c in self.controllers:
            for g, ids in enumerate(c.groups):
                for light_id in ids:
                    out[light_id] = (c.idx, c.plan_of(g))
        return out

    def stop_lines(self):
        """Nodes on a stop line."""
        return [n for n in self.nodes.values() if n.on_stop_line]


def load_mgeo(folder) -> MGeoMap:
    """Read the MGeo folder ``folder``; MGeoError naming the file and key when it cannot be used."""
    folder = os.path.abspath(os.path.expanduser(folder))
    if not os.path.isdir(folder):
        raise MGeoError(f'MGeo {folder}: no such folder')
    nodes = {}
    path = os.path.join(folder, 'node_set.json')
    for rec in _records(_read(folder, 'node_set.json'), path, ('idx', 'point')):
        x, y, z = _point(rec['point'], f"{path} ({rec['idx']}).point")
        nodes[rec['idx']] = Node(rec['idx'], x, y, z, bool(rec.get('on_stop_line')))
    links = {}
    path = os.path.join(folder, 'link_set.json')
    for rec in _records(_read(folder, 'link_set.json'), path, ('idx', 'points', 'from_node_idx', 'to_node_idx')):
        links[rec['idx']] = _link(rec, f"{path} ({rec['idx']})")
    lights = []
    path = os.path.join(folder, 'traffic_light_set.json')
    for rec in _records(_read(folder, 'traffic_light_set.json', required=False) or [], path, ('idx', 'point')):
        x, y, z = _point(rec['point'], f"{path} ({rec['idx']}).point")
        lights.append(Light(rec['idx'], x, y, z, tuple(rec.get('link_id_list') or ()), str(rec.get('type') or ''),
                            tuple(rec.get('sub_type') or ()), float(rec.get('heading') or 0.0)))
    return MGeoMap(folder, nodes, links, tuple(lights), _controllers(folder, {lt.idx for lt in lights}))


def _controllers(folder, light_ids):
    """Controllers that have both their groups (intersection_controller_set.json) and their plan
    (intersection_controller_data.json); MORAI-EDU's K-City ships the plans with an empty set, and
    its lights then cycle by their type's default plan."""
    groups_path = os.path.join(folder, 'intersection_controller_set.json')
    data_path = os.path.join(folder, 'intersection_controller_data.json')
    groups = {rec['idx']: rec['TL'] for rec in _records(
        _read(folder, 'intersection_controller_set.json', required=False) or [], groups_path, ('idx', 'TL'))}
    out = []
    for rec in _records(_read(folder, 'intersection_controller_data.json', required=False) or [], data_path,
                        ('idx', 'TLState')):
        tl = groups.get(rec['idx'])
        if not tl:
            continue
        where = f"{data_path} ({rec['idx']})"
        phases = []
        for i, st in enumerate(rec['TLState']):
            colours = tuple(st.get('lightcolor') or ())
            unknown = [c for c in colours if c not in LIGHT_COLOURS]
            if unknown or len(colours) != len(tl):
                raise MGeoError(f'{where}.TLState[{i}].lightcolor: {len(tl)} of {", ".join(LIGHT_COLOURS)}, '
                                f'got {list(colours)}')
            duration = st.get('duration')
            if isinstance(duration, bool) or not isinstance(duration, (int, float)) or duration <= 0:
                raise MGeoError(f'{where}.TLState[{i}].duration: seconds > 0, got {duration!r}')
            phases.append((float(duration), colours))
        for ids in tl:
            missing = [i for i in ids if i not in light_ids]
            if missing:
                raise MGeoError(f"{groups_path} ({rec['idx']}).TL: lights {', '.join(missing)} are not in "
                                'traffic_light_set.json')
        out.append(Controller(rec['idx'], tuple(tuple(ids) for ids in tl), tuple(phases),
                              tuple(float(y) for y in rec.get('yelloduration') or ())))
    return tuple(out)


class LinkCursor:
    """A point driving along lane centre lines: ``advance(distance)`` moves it on, taking the first
    successor at the end of a link (``choose`` picks another: it gets the successor ids); at a link
    with no successor it stays at the end (``stopped``)."""

    def __init__(self, mgeo: MGeoMap, link_id: str, s: float = 0.0, choose=None):
        if link_id not in mgeo.links:
            raise MGeoError(f'MGeo {mgeo.folder}: no link {link_id!r}')
        self.map, self.link, self.s = mgeo, mgeo.links[link_id], max(0.0, s)
        self.choose = choose or (lambda ids: ids[0])
        self.stopped = False
        self.advance(0.0)

    def advance(self, distance):
        self.s += distance
        while self.s > self.link.length:
            nxt = self.map.successors(self.link.idx)
            if not nxt:
                self.s, self.stopped = self.link.length, True
                break
            self.s -= self.link.length
            self.link = self.map.links[self.choose(nxt)]
        return self.pose()

    def pose(self):
        """(x, y, z, yaw rad) at the cursor."""
        pts, cum = self.link.points, self.link.cumulative
        i = 0
        while i < len(cum) - 2 and cum[i + 1] < self.s:
            i += 1
        a, b = pts[i], pts[i + 1]
        seg = cum[i + 1] - cum[i]
        f = (self.s - cum[i]) / seg if seg > 0 else 0.0
        return (a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1]), a[2] + f * (b[2] - a[2]),
                math.atan2(b[1] - a[1], b[0] - a[0]))

    def nearest(self, x, y):
        """Distance along the current link of the point nearest (x, y) (to put a vehicle on its link)."""
        best = (math.inf, 0.0)
        pts, cum = self.link.points, self.link.cumulative
        for i in range(len(pts) - 1):
            ax, ay = pts[i][0], pts[i][1]
            dx, dy = pts[i + 1][0] - ax, pts[i + 1][1] - ay
            seg2 = dx * dx + dy * dy
            t = 0.0 if seg2 == 0 else max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / seg2))
            d = math.hypot(ax + t * dx - x, ay + t * dy - y)
            if d < best[0]:
                best = (d, cum[i] + t * (cum[i + 1] - cum[i]))
        return best[1]
