"""Scenario files of MORAI's launcher in the simulator emulator: read, checked, and named where the
emulator cannot play them.

MORAI SIM's scenario editor saves one JSON object per scene (``Scenario/<map>/<name>.json``).  The keys
read here are those of the files MORAI's launcher wrote that teams published (eriverOoO/heven-ad-2026
@4d26e0e on the 2025-26 competition map, MORAI-EDU/dsc_2nd @ee84dac on K-City); docs/emulator.md
"MORAI scenario files" has the table:

* ``mapInfo``: ``mapName``, ``eastOffset``, ``northOffset``, ``globalCoordinateSystem`` (the map origin);
* ``egoVehicle.initPosition``: ``pos`` {x, y, z} (map frame, ENU metres), ``rot`` {roll, pitch, yaw}
  (degrees, written as strings), ``gear``, ``initLink``; ``egoVehicle.currentVelocity`` (km/h);
* ``vehicleList``: ``UNIQUEID``, ``DataID``, ``initPosition`` as the ego's, ``desiredVelocity`` (km/h),
  ``currentLinkInfo.linkIdx`` (the link it drives on), ``activeDistance``;
* ``pedestrianList``: ``UNIQUEID``, ``DataID``, ``pos``, ``rot``, ``activeDistance`` (it starts when the
  ego comes this close), ``speed``, ``loop``, ``movingDistance``, ``isWaypointMode`` with the path
  ``PedPath - <UNIQUEID>`` of ``waypointDataList`` (whose points are in Unity's axes: x = -east, y = up,
  z = -north, as the two forms of one pedestrian in heven-ad-2026's file show);
* ``objectList``: ``UNIQUEID``, ``DataID``, ``pos``, ``rot``, ``scale`` {x, y, z};
* ``spawnPointList``: ``UNIQUEID``, ``pos``, ``startLinkInfo.linkIdx``, ``maximumSpawnVehicle``,
  ``minSpawnPeriod``/``maxSpawnPeriod`` (s), the desired speed (``DesiredVelocityType``: 1 custom,
  2 the link's; ``Min``/``MaxDesiredVelocity_Custom`` km/h);
* ``tlList``: ``index`` (into the map's traffic-light list), ``state``, ``deltaTime`` (s into it).

Everything else (``v2IInfo``, ``shadedAreaList``, ``pedspawnPointList``, ``aiPedstrianList``,
``frictionChangeMaterialList``, vehicle dynamics under ``vehicleSaveData``) is not played; what of it is
present is named, one line each, in :attr:`MoraiScene.notes`.  A malformed file is a
:class:`MoraiScenarioError` naming the file and the key.  No ROS.
"""
import json
import math
from typing import NamedTuple, Optional, Tuple

from morai_bridge.configuration import maps

__all__ = ['MoraiScenarioError', 'Pose', 'MoraiVehicle', 'MoraiPedestrian', 'MoraiObject', 'MoraiSpawn',
           'MoraiLight', 'MoraiScene', 'parse_morai_scene', 'load_morai_scene', 'is_morai_scene',
           'ALWAYS_ACTIVE']

#: MORAI writes float.MaxValue (3.4028234663852886e+38) as the activeDistance of an actor that is
#: always active; any distance at or above this is "always"
ALWAYS_ACTIVE = 1e30
_NOT_PLAYED = ('pedspawnPointList', 'aiPedstrianList', 'shadedAreaList', 'frictionChangeMaterialList')


class MoraiScenarioError(ValueError):
    """A MORAI scenario file cannot be used; the text names the file and the key."""


class Pose(NamedTuple):
    x: float
    y: float
    z: float
    yaw_deg: float


class MoraiVehicle(NamedTuple):
    uid: int
    data_id: int
    pose: Pose
    speed_kmh: float
    link: str                 # '' when the file names none
    active_m: float           # ALWAYS_ACTIVE or a trigger distance


class MoraiPedestrian(NamedTuple):
    uid: int
    data_id: int
    pose: Pose
    speed_kmh: float
    active_m: float
    loop: bool
    moving_m: float
    waypoints: Tuple[Tuple[float, float], ...]   # map frame; () = walk moving_m along its heading


class MoraiObject(NamedTuple):
    uid: int
    data_id: int
    pose: Pose
    scale: Tuple[float, float, float]


class MoraiSpawn(NamedTuple):
    uid: int
    pose: Pose
    link: str
    maximum: int
    period_s: float
    speed_kmh: Optional[float]        # None: the link's speed


class MoraiLight(NamedTuple):
    index: int
    state: int
    delta_s: float


class MoraiScene(NamedTuple):
    path: str
    map_info: maps.MapInfo
    ego: Optional[Pose]
    ego_gear: Optional[int]
    ego_speed_kmh: float
    vehicles: Tuple[MoraiVehicle, ...]
    pedestrians: Tuple[MoraiPedestrian, ...]
    objects: Tuple[MoraiObject, ...]
    spawns: Tuple[MoraiSpawn, ...]
    lights: Tuple[MoraiLight, ...]
    notes: Tuple[str, ...]            # what is in the file and not played, one line each


def is_morai_scene(data):
    """True for a parsed JSON object in MORAI's launcher layout (the emulator's own format has none of
    these keys)."""
    return isinstance(data, dict) and ('egoVehicle' in data or 'mapInfo' in data)


class _At:
    """Typed access to one object of the file; errors name the file and the key path."""

    def __init__(self, obj, path, where):
        if not isinstance(obj, dict):
            raise MoraiScenarioError(f'{path}: {where}: expected an object, got {type(obj).__name__}')
        self.obj, self.path, self.where = obj, path, where

    def fail(self, key, text):
        raise MoraiScenarioError(f"{self.path}: {self.where + '.' if self.where else ''}{key}: {text}")

    def get(self, key, default=None):
        return self.obj.get(key, default)

    def sub(self, key):
        if key not in self.obj:
            self.fail(key, 'missing')
        return _At(self.obj[key], self.path, f"{self.where + '.' if self.where else ''}{key}")

    def number(self, key, default=None):
        """A number, or a number written as text ("-29.315", "1,232.436": MORAI's display strings)."""
        if key not in self.obj:
            if default is None:
                self.fail(key, 'missing')
            return default
        v = self.obj[key]
        if isinstance(v, str):
            try:
                v = float(v.replace(',', ''))
            except ValueError:
                self.fail(key, f'expected a number, got {v!r}')
        if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v):
            self.fail(key, f'expected a number, got {v!r}')
        return float(v)

    def integer(self, key, default=None, lo=None, hi=None):
        v = self.obj.get(key, default)
        if v is None:
            self.fail(key, 'missing')
        if isinstance(v, bool) or not isinstance(v, int) or (lo is not None and v < lo) or \
                (hi is not None and v > hi):
            self.fail(key, f'expected an integer{"" if lo is None else f" in {lo}..{hi}"}, got {v!r}')
        return v

    def items(self, key):
        v = self.obj.get(key)
        v = [] if v is None else v
        if not isinstance(v, list):
            self.fail(key, 'expected a list')
        prefix = f'{self.where}.' if self.where else ''
        return [_At(x, self.path, f'{prefix}{key}[{i}]') for i, x in enumerate(v)]

    def pose(self, pos='pos', rot='rot'):
        p, r = self.sub(pos), self.sub(rot)
        x, y, z = p.number('x'), p.number('y'), p.number('z', 0.0)
        if not all(math.isfinite(c) for c in (x, y, z)):
            self.fail(pos, 'not finite')
        return Pose(x, y, z, r.number('yaw', 0.0))

    def link_of(self, key):
        info = self.get(key)
        if isinstance(info, dict) and isinstance(info.get('linkIdx'), str):
            return info['linkIdx']
        return ''


def _uid(a):
    return a.integer('UNIQUEID', None, 1, 32767)


def _waypoints(top, uid):
    """The map-frame points of the pedestrian path ``PedPath - <uid>`` (Unity axes in the file)."""
    for path in top.items('waypointDataList'):
        if str(path.get('pathName', '')).strip() == f'PedPath - {uid}':
            pts = []
            for w in path.items('waypointData'):
                p = w.sub('pos')
                pts.append((-p.number('x'), -p.number('z')))
            return tuple(pts)
    return ()


def parse_morai_scene(data, path='scenario'):
    """MoraiScene of a parsed launcher file; MoraiScenarioError naming ``path`` and the key."""
    top = _At(data, path, '')
    top.where = ''
    try:
        map_info = maps.from_scenario(path, data)
    except maps.MapError as e:
        raise MoraiScenarioError(str(e)) from None
    notes = []
    ego = gear = None
    speed = 0.0
    if 'egoVehicle' in data:
        e = top.sub('egoVehicle')
        init = e.sub('initPosition')
        ego = init.pose()
        g = init.get('gear')
        gear = g if isinstance(g, int) and not isinstance(g, bool) and 1 <= g <= 4 else None
        speed = max(0.0, e.number('currentVelocity', 0.0))
    vehicles = []
    for v in top.items('vehicleList'):
        init = v.sub('initPosition')
        link = v.link_of('currentLinkInfo') or str(init.get('initLink') or '')
        vehicles.append(MoraiVehicle(_uid(v), v.integer('DataID', 0), init.pose(),
                                     max(0.0, v.number('desiredVelocity', 0.0)), link,
                                     v.number('activeDistance', ALWAYS_ACTIVE)))
    pedestrians = []
    for p in top.items('pedestrianList'):
        uid = _uid(p)
        pts = _waypoints(top, uid) if p.get('isWaypointMode') else ()
        pedestrians.append(MoraiPedestrian(uid, p.integer('DataID', 0), p.pose(), max(0.0, p.number('speed', 0.0)),
                                           p.number('activeDistance', 0.0), bool(p.get('loop', False)),
                                           max(0.0, p.number('movingDistance', 0.0)),
                                           pts if len(pts) >= 2 else ()))
    objects = []
    for o in top.items('objectList'):
        s = o.sub('scale') if 'scale' in o.obj else None
        scale = (s.number('x'), s.number('y'), s.number('z')) if s else (1.0, 1.0, 1.0)
        if not all(c > 0 for c in scale):
            o.fail('scale', f'every factor must be > 0, got {list(scale)}')
        objects.append(MoraiObject(_uid(o), o.integer('DataID', 0), o.pose(), scale))
    spawns = []
    for s in top.items('spawnPointList'):
        lo, hi = s.number('minSpawnPeriod', 0.0), s.number('maxSpawnPeriod', 0.0)
        custom = s.get('DesiredVelocityType') == 1
        spawns.append(MoraiSpawn(_uid(s), s.pose(), s.link_of('startLinkInfo'),
                                 s.integer('maximumSpawnVehicle', 0, 0, 32767), max(0.0, (lo + hi) / 2),
                                 s.number('MaxDesiredVelocity_Custom', 0.0) if custom else None))
    lights = tuple(MoraiLight(t.integer('index', None, 0, 1 << 20), t.integer('state', 0),
                              t.number('deltaTime', 0.0)) for t in top.items('tlList'))
    seen = {}
    for kind, items in (('vehicle', vehicles), ('pedestrian', pedestrians), ('object', objects)):
        for a in items:
            if a.uid in seen:
                raise MoraiScenarioError(f'{path}: UNIQUEID {a.uid} is used by a {seen[a.uid]} and a {kind}')
            seen[a.uid] = kind
    for key in _NOT_PLAYED:
        n = len(data.get(key) or ())
        if n:
            notes.append(f'{key}: {n} element(s) not played (the emulator has no model of them)')
    return MoraiScene(path, map_info, ego, gear, speed, tuple(vehicles), tuple(pedestrians), tuple(objects),
                      tuple(spawns), lights, tuple(notes))


def load_morai_scene(path):
    """Read and parse the launcher file ``path``."""
    try:
        with open(path, encoding='utf-8-sig') as f:
            data = json.load(f)
    except FileNotFoundError:
        raise MoraiScenarioError(f'{path}: no such file') from None
    except (OSError, ValueError) as e:
        raise MoraiScenarioError(f'{path}: not readable JSON: {e}') from None
    if not is_morai_scene(data):
        raise MoraiScenarioError(f'{path}: not a scenario file of MORAI\'s launcher (no egoVehicle or mapInfo)')
    return parse_morai_scene(data, path)
