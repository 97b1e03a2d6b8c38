"""Scenarios of the simulator emulator: a JSON format of ours, parsed and checked into plain tuples.

This is not MORAI's scenario format (which the simulator keeps to itself); it
only describes what the emulator can show.  A scenario file
``<scenario_dir>/<name>.json`` holds one object; every key is optional and
unknown keys are errors (typos must not pass silently)::

    {
      "description": "free text",
      "ego": {"position": [x, y, z], "yaw_deg": 0, "speed_kmh": 0, "gear": 4},
      "vehicles": [
        {"id": 1, "speed_kmh": 30, "path": {"type": "line", "from": [x, y], "to": [x, y]}},
        {"id": 2, "speed_kmh": 20,
         "path": {"type": "circle", "center": [x, y], "radius": 20,
                  "direction": "ccw", "start_deg": 0}},
        {"id": 3, "position": [x, y], "yaw_deg": 90}
      ],
      "pedestrians": [
        {"id": 101, "from": [x, y], "to": [x, y], "speed_kmh": 4, "wander_m": 0.5}
      ],
      "obstacles": [{"id": 201, "position": [x, y], "yaw_deg": 0, "size": [1, 1, 1]}],
      "traffic_lights": [{"id": "C119BS010007", "type": 2, "offset_s": 0,
                          "plan": [[16, 17], [48, 5], [4, 3], [1, 25]]}],
      "intersections": [{"index": 7, "plan": [[1, 25], [2, 25]], "offset_s": 0}]
    }

Rules (docs/emulator.md has the full table):

* Positions are map-frame metres ``[x, y]`` or ``[x, y, z]``; headings degrees,
  counter-clockwise, 0 = East; speeds km/h; sizes ``[length, width, height]`` m.
* ``id`` is the Object Info obj_id: an integer 1..32767, unique across
  vehicles, pedestrians and obstacles.
* Vehicles without ``path`` are parked at ``position``/``yaw_deg``.  A ``line``
  path is driven back and forth between ``from`` and ``to`` (the vehicle turns
  on the spot at each end); a ``circle`` path goes round ``center`` at
  ``radius``, counter-clockwise (``"ccw"``, default) or clockwise, starting at
  ``start_deg`` on the circle.
* Pedestrians walk back and forth between ``from`` and ``to`` at ``speed_kmh``;
  ``wander_m`` > 0 adds a smooth random sideways drift bounded to that many
  metres (seeded, so deterministic with the emulator seed).  The drift leans
  the walk (at most ``actors.MAX_DRIFT_DEG`` off the path) but never changes its speed.
* ``traffic_lights`` / ``intersections`` replace the emulator's default set
  when present (see :mod:`morai_bridge.emu.sim.signals`).

How the actors move is :mod:`.actors` (:class:`~.actors.Actor`, also importable from here).
"""

import json
import math
import os
import re
from typing import NamedTuple, Optional, Tuple

from morai_bridge.wire.enums import Gear, ObjectType

from . import morai_scenario
from .actors import Actor
from .signals import IntersectionSpec, LightSpec, check_plan

__all__ = ["ScenarioError", "EgoStart", "PathSpec", "ActorSpec", "SpawnSpec", "Scenario", "Actor",
           "OBJ_PEDESTRIAN", "OBJ_VEHICLE", "OBJ_OBSTACLE", "OBJ_EGO", "parse_scenario", "load_scenario",
           "scenario_path", "VALID_NAME"]

# plain ints of wire.enums.ObjectType
OBJ_PEDESTRIAN, OBJ_VEHICLE, OBJ_OBSTACLE, OBJ_EGO = (
    int(ObjectType.PEDESTRIAN), int(ObjectType.VEHICLE), int(ObjectType.OBSTACLE), int(ObjectType.EGO))
VALID_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,30}$")

DEFAULT_SIZES = {
    OBJ_VEHICLE: (4.6, 1.9, 1.5),
    OBJ_EGO: (4.6, 1.9, 1.5),
    OBJ_PEDESTRIAN: (0.5, 0.5, 1.75),
    OBJ_OBSTACLE: (1.0, 1.0, 1.0),
}


class ScenarioError(ValueError):
    """A scenario cannot be found or is invalid; the text says where."""


class EgoStart(NamedTuple):
    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    yaw_deg: float = 0.0
    speed_kmh: float = 0.0
    gear: Optional[int] = None     # None = keep the current gear


class PathSpec(NamedTuple):
    kind: str                       # 'line', 'circle' or 'link' (a map's lane centre lines, from link_id)
    a: Tuple[float, float]          # line: from; circle: center; link: where the actor starts
    b: Tuple[float, float] = (0.0, 0.0)   # line: to
    radius: float = 0.0
    clockwise: bool = False
    start_deg: float = 0.0


class ActorSpec(NamedTuple):
    id: int
    obj_type: int
    size: Tuple[float, float, float]
    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    yaw_deg: float = 0.0
    speed_kmh: float = 0.0
    path: Optional[PathSpec] = None
    wander_m: float = 0.0
    name: str = ""
    link_id: str = ""
    wheelbase: float = 0.0
    #: a pedestrian that starts when the ego comes this close [m] (0: from the start)
    trigger_m: float = 0.0
    #: walk the line once and stay at its end (MORAI's loop = false); False: back and forth
    once: bool = False


class SpawnSpec(NamedTuple):
    """A spawn point of a map's road: a vehicle every ``period_s`` at the start of ``link_id``, up to
    ``maximum``, at ``speed_kmh`` (None: the link's maximum speed)."""
    id: int
    link_id: str
    period_s: float
    maximum: int
    speed_kmh: Optional[float] = None


class Scenario(NamedTuple):
    name: str
    description: str = ""
    ego: Optional[EgoStart] = None
    vehicles: Tuple[ActorSpec, ...] = ()
    pedestrians: Tuple[ActorSpec, ...] = ()
    obstacles: Tuple[ActorSpec, ...] = ()
    traffic_lights: Optional[Tuple[LightSpec, ...]] = None
    intersections: Optional[Tuple[IntersectionSpec, ...]] = None
    #: GPS blackout zones, map (x_min, y_min, x_max, y_max): inside, the GPS sends position 0/0
    #: (as MORAI's scenario noise boxes make 25.S4 do); None: the scenario sets none
    gps_blackouts: Optional[Tuple[Tuple[float, float, float, float], ...]] = None
    #: a MORAI scenario file's map (configuration.maps.MapInfo of its mapInfo); None: the emulator's map
    origin: Optional[object] = None
    spawns: Tuple[SpawnSpec, ...] = ()
    #: what of the file the emulator does not play, one line each (MORAI scenario files)
    notes: Tuple[str, ...] = ()


# ----------------------------------------------------------------------------- parsing

class _Reader:
    """Typed access to one JSON object, with error messages that give the path."""

    def __init__(self, obj, where: str, allowed):
        if not isinstance(obj, dict):
            raise ScenarioError(f"{where}: expected an object, got {type(obj).__name__}")
        unknown = sorted(set(obj) - set(allowed))
        if unknown:
            raise ScenarioError(f"{where}: unknown key(s) {', '.join(unknown)} "
                                f"(allowed: {', '.join(sorted(allowed))})")
        self.obj, self.where = obj, where

    def has(self, key):
        return key in self.obj

    def number(self, key, default=None, minimum=None, positive=False):
        if key not in self.obj:
            if default is None:
                raise ScenarioError(f"{self.where}.{key}: required")
            return default
        v = self.obj[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ScenarioError(f"{self.where}.{key}: expected a number, got {v!r}")
        if positive and not v > 0:
            raise ScenarioError(f"{self.where}.{key}: must be > 0, got {v!r}")
        if minimum is not None and v < minimum:
            raise ScenarioError(f"{self.where}.{key}: must be >= {minimum}, got {v!r}")
        return float(v)

    def integer(self, key, default=None, lo=None, hi=None):
        if key not in self.obj:
            if default is None:
                raise ScenarioError(f"{self.where}.{key}: required")
            return default
        v = self.obj[key]
        if isinstance(v, bool) or not isinstance(v, int):
            raise ScenarioError(f"{self.where}.{key}: expected an integer, got {v!r}")
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise ScenarioError(f"{self.where}.{key}: must be in {lo}..{hi}, got {v}")
        return v

    def text(self, key, default="", limit=None):
        v = self.obj.get(key, default)
        if not isinstance(v, str):
            raise ScenarioError(f"{self.where}.{key}: expected a string, got {v!r}")
        if limit is not None:
            try:
                v.encode("ascii")
            except UnicodeEncodeError:
                raise ScenarioError(f"{self.where}.{key}: must be ASCII") from None
            if len(v) > limit:
                raise ScenarioError(f"{self.where}.{key}: at most {limit} characters")
        return v

    def point(self, key, default=None, dims=(2, 3)):
        if key not in self.obj:
            if default is None:
                raise ScenarioError(f"{self.where}.{key}: required")
            return default
        v = self.obj[key]
        if (not isinstance(v, list) or len(v) not in dims or
                any(isinstance(c, bool) or not isinstance(c, (int, float)) or
                    not math.isfinite(c) for c in v)):
            raise ScenarioError(f"{self.where}.{key}: expected a list of "
                                f"{' or '.join(map(str, dims))} numbers, got {v!r}")
        return tuple(float(c) for c in v)

    def size(self, default):
        s = self.point("size", default, dims=(3,))
        if any(c <= 0 for c in s):
            raise ScenarioError(f"{self.where}.size: every dimension must be > 0, got {list(s)}")
        return s

    def items(self, key):
        v = self.obj.get(key, [])
        if not isinstance(v, list):
            raise ScenarioError(f"{self.where}.{key}: expected a list")
        return [(f"{self.where}.{key}[{k}]", item) for k, item in enumerate(v)]


_GEARS = (int(Gear.P), int(Gear.R), int(Gear.N), int(Gear.D))


def _ego(obj) -> EgoStart:
    r = _Reader(obj, "ego", ("position", "yaw_deg", "speed_kmh", "gear"))
    p = r.point("position", (0.0, 0.0))
    gear = r.integer("gear", 0, 0, 5) if r.has("gear") else None
    if gear is not None and gear not in _GEARS:
        raise ScenarioError(f"ego.gear: must be one of 1 P, 2 R, 3 N, 4 D, got {gear}")
    return EgoStart(p[0], p[1], p[2] if len(p) > 2 else 0.0, r.number("yaw_deg", 0.0),
                    r.number("speed_kmh", 0.0), gear)


def _path(obj, where) -> PathSpec:
    kind = obj.get("type") if isinstance(obj, dict) else None
    if kind == "line":
        r = _Reader(obj, where, ("type", "from", "to"))
        a, b = r.point("from", dims=(2,)), r.point("to", dims=(2,))
        if a == b:
            raise ScenarioError(f"{where}: 'from' and 'to' must differ")
        return PathSpec("line", a, b)
    if kind == "circle":
        r = _Reader(obj, where, ("type", "center", "radius", "direction", "start_deg"))
        direction = r.text("direction", "ccw")
        if direction not in ("ccw", "cw"):
            raise ScenarioError(f"{where}.direction: 'ccw' or 'cw', got {direction!r}")
        return PathSpec("circle", r.point("center", dims=(2,)), radius=r.number(
            "radius", positive=True), clockwise=direction == "cw",
            start_deg=r.number("start_deg", 0.0))
    raise ScenarioError(f"{where}.type: 'line' or 'circle', got {kind!r}")


def _vehicle(where, obj, obj_type=OBJ_VEHICLE) -> ActorSpec:
    """A vehicle; with ``obj_type`` OBJ_EGO another ego vehicle of a multi-ego scene (Object Info
    sends it with obj_type -1, MORAI's "Ego vehicle")."""
    r = _Reader(obj, where, ("id", "name", "size", "position", "yaw_deg", "speed_kmh", "path",
                             "link_id", "wheelbase"))
    size = r.size(DEFAULT_SIZES[obj_type])
    path = _path(obj["path"], where + ".path") if r.has("path") else None
    if (path is None) == (not r.has("position")):
        raise ScenarioError(f"{where}: a vehicle needs either a 'path' or a 'position'")
    pos = r.point("position", (0.0, 0.0))
    wheelbase = r.number("wheelbase", 0.59 * size[0], positive=True)
    if wheelbase > size[0]:
        raise ScenarioError(f"{where}.wheelbase: longer than the vehicle")
    return ActorSpec(r.integer("id", None, 1, 32767), obj_type, size, pos[0], pos[1],
                     pos[2] if len(pos) > 2 else 0.0, r.number("yaw_deg", 0.0),
                     r.number("speed_kmh", 0.0, minimum=0.0), path, 0.0, r.text("name"),
                     r.text("link_id", "", limit=38), wheelbase)


def _pedestrian(where, obj) -> ActorSpec:
    r = _Reader(obj, where, ("id", "name", "size", "from", "to", "speed_kmh", "wander_m"))
    a = r.point("from", dims=(2, 3))
    b = r.point("to", a, dims=(2, 3))
    path = PathSpec("line", a[:2], b[:2]) if a[:2] != b[:2] else None
    return ActorSpec(r.integer("id", None, 1, 32767), OBJ_PEDESTRIAN,
                     r.size(DEFAULT_SIZES[OBJ_PEDESTRIAN]), a[0], a[1],
                     a[2] if len(a) > 2 else 0.0, 0.0, r.number("speed_kmh", 4.0, minimum=0.0),
                     path, r.number("wander_m", 0.0, minimum=0.0), r.text("name"))


def _obstacle(where, obj) -> ActorSpec:
    r = _Reader(obj, where, ("id", "name", "size", "position", "yaw_deg"))
    p = r.point("position")
    return ActorSpec(r.integer("id", None, 1, 32767), OBJ_OBSTACLE,
                     r.size(DEFAULT_SIZES[OBJ_OBSTACLE]), p[0], p[1], p[2] if len(p) > 2 else 0.0,
                     r.number("yaw_deg", 0.0), name=r.text("name"))


def _light(where, obj) -> LightSpec:
    r = _Reader(obj, where, ("id", "type", "offset_s", "plan"))
    light_id = r.text("id", limit=12)
    if not light_id:
        raise ScenarioError(f"{where}.id: required")
    kind = r.integer("type", 2, -32768, 32767)
    plan = ()
    if r.has("plan"):
        try:
            plan = check_plan(obj["plan"], where + ".plan")
        except ValueError as e:
            raise ScenarioError(str(e)) from None
    elif kind not in (0, 1, 2):
        raise ScenarioError(f"{where}: type {kind} has no default plan; give a 'plan'")
    return LightSpec(light_id, kind, r.number("offset_s", 0.0, minimum=0.0), plan)


def _intersection(where, obj) -> IntersectionSpec:
    r = _Reader(obj, where, ("index", "plan", "offset_s"))
    try:
        plan = check_plan(obj.get("plan", [[1, 25], [2, 25]]), where + ".plan")
    except ValueError as e:
        raise ScenarioError(str(e)) from None
    return IntersectionSpec(r.integer("index", None, -32768, 32767), plan,
                            r.number("offset_s", 0.0, minimum=0.0))


def _blackout(where, obj) -> Tuple[float, float, float, float]:
    r = _Reader(obj, where, ("min", "max"))
    lo, hi = r.point("min", dims=(2,)), r.point("max", dims=(2,))
    if not (lo[0] < hi[0] and lo[1] < hi[1]):
        raise ScenarioError(f"{where}: min must be below max in x and y, got {list(lo)} / {list(hi)}")
    return lo + hi


def parse_scenario(obj, name: str = "") -> Scenario:
    """Validate a decoded JSON scenario; ScenarioError says what and where."""
    r = _Reader(obj, name or "scenario", ("description", "ego", "vehicles", "pedestrians",
                                          "obstacles", "traffic_lights", "intersections", "gps_blackouts",
                                          "egos"))
    r.where = ""
    vehicles = tuple(_vehicle(w[1:], o) for w, o in r.items("vehicles"))
    pedestrians = tuple(_pedestrian(w[1:], o) for w, o in r.items("pedestrians"))
    obstacles = tuple(_obstacle(w[1:], o) for w, o in r.items("obstacles"))
    egos = tuple(_vehicle(w[1:], o, OBJ_EGO) for w, o in r.items("egos"))
    seen = {}
    for a in vehicles + pedestrians + obstacles + egos:
        if a.id in seen:
            raise ScenarioError(f"id {a.id} is used twice (ids are unique across vehicles, "
                                f"pedestrians and obstacles)")
        seen[a.id] = a
    lights = None
    if r.has("traffic_lights"):
        lights = tuple(_light(w[1:], o) for w, o in r.items("traffic_lights"))
        if len({lt.id for lt in lights}) != len(lights):
            raise ScenarioError("traffic_lights: duplicate id")
    intersections = None
    if r.has("intersections"):
        intersections = tuple(_intersection(w[1:], o) for w, o in r.items("intersections"))
        if len({i.index for i in intersections}) != len(intersections):
            raise ScenarioError("intersections: duplicate index")
    blackouts = tuple(_blackout(w[1:], o) for w, o in r.items("gps_blackouts")) \
        if r.has("gps_blackouts") else None
    return Scenario(name, r.text("description"), _ego(obj["ego"]) if r.has("ego") else None,
                    vehicles + egos, pedestrians, obstacles, lights, intersections, blackouts)


def scenario_path(scenario_dir: str, name: str) -> str:
    """``<dir>/<name>.json`` for a safe scenario name (no directories)."""
    if name.endswith(".json"):
        name = name[:-5]
    if not VALID_NAME.match(name):
        raise ScenarioError(f"invalid scenario name {name!r} (letters, digits, '_', '-', '.'; "
                            f"at most 30 characters)")
    return os.path.join(scenario_dir, name + ".json")


def load_scenario(scenario_dir: str, name: str, road=None) -> Scenario:
    """Read and validate a scenario: ``<scenario_dir>/<name>.json`` (a trailing .json is ignored) or,
    when ``name`` is a path, that file; in the emulator's format or in MORAI's launcher format
    (:mod:`.morai_scenario`: converted by :func:`from_morai`, with ``road``, the MGeo map, if any)."""
    path = os.path.abspath(os.path.expanduser(name)) if os.sep in name else scenario_path(scenario_dir, name)
    try:
        with open(path, encoding="utf-8-sig") as f:
            obj = json.load(f)
    except FileNotFoundError:
        raise ScenarioError(f"scenario {name!r} not found: no file {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(f"scenario {name!r}: cannot read {path}: {e}") from None
    except ValueError as e:
        raise ScenarioError(f"scenario {name!r}: {path} is not valid JSON: {e}") from None
    base = os.path.splitext(os.path.basename(path))[0]
    if morai_scenario.is_morai_scene(obj):
        try:
            return from_morai(morai_scenario.parse_morai_scene(obj, path), road, base)
        except morai_scenario.MoraiScenarioError as e:
            raise ScenarioError(str(e)) from None
    try:
        return parse_scenario(obj, base)
    except ScenarioError as e:
        raise ScenarioError(f"scenario {base!r} ({path}): {e}") from None


# ----------------------------------------------------------------------------- MORAI's launcher files

#: MORAI asset DataID -> (length, width, height) [m] of the unscaled asset; an object's size is its
#: ``scale`` times this.  No sizes are published: empty, and an unknown DataID's scale is read as metres
#: (named on load)
MORAI_ASSET_SIZES = {}
_WALK_KMH_LIMIT = 20.0


def from_morai(scene, road=None, name: str = "") -> Scenario:
    """The emulator's Scenario of a :class:`.morai_scenario.MoraiScene`; what cannot be played goes to
    ``Scenario.notes``, one line each.  ``road``: the MGeo map (:mod:`.mgeo`) that links and light
    indices refer to, or None."""
    notes = list(scene.notes)
    ego = None
    if scene.ego is not None:
        p = scene.ego
        ego = EgoStart(p.x, p.y, p.z, p.yaw_deg, scene.ego_speed_kmh, scene.ego_gear)
    vehicles = []
    for v in scene.vehicles:
        path = None
        if v.link and road is not None and v.link in road.links:
            path = PathSpec("link", (v.pose.x, v.pose.y))
        elif v.link:
            notes.append(f"vehicle {v.uid}: " + (f"link {v.link} is not in the map" if road is not None else
                                                 f"drives on link {v.link}, but no MGeo map is loaded (map:=<folder>)")
                         + ": parked at its position")
        if v.active_m < morai_scenario.ALWAYS_ACTIVE:
            notes.append(f"vehicle {v.uid}: activeDistance {v.active_m:g} m not played: it drives from the start")
        size = DEFAULT_SIZES[OBJ_VEHICLE]
        vehicles.append(ActorSpec(v.uid, OBJ_VEHICLE, size, v.pose.x, v.pose.y, v.pose.z, v.pose.yaw_deg,
                                  v.speed_kmh if path is not None else 0.0, path, name=f"DataID {v.data_id}",
                                  link_id=v.link[:38], wheelbase=0.59 * size[0]))
    pedestrians = []
    for p in scene.pedestrians:
        a = (p.pose.x, p.pose.y)
        if p.waypoints:
            a, b = p.waypoints[0], p.waypoints[-1]
            if len(p.waypoints) > 2:
                notes.append(f"pedestrian {p.uid}: {len(p.waypoints)} waypoints: walks from the first to the last "
                             "in a straight line")
        else:
            yaw = math.radians(p.pose.yaw_deg)
            b = (a[0] + p.moving_m * math.cos(yaw), a[1] + p.moving_m * math.sin(yaw))
        path = PathSpec("line", a, b) if math.dist(a, b) > 1e-6 else None
        speed = p.speed_kmh
        if speed > _WALK_KMH_LIMIT:
            notes.append(f"pedestrian {p.uid}: speed {speed:g} read as km/h, kept")
        pedestrians.append(ActorSpec(p.uid, OBJ_PEDESTRIAN, DEFAULT_SIZES[OBJ_PEDESTRIAN], a[0], a[1], p.pose.z,
                                     p.pose.yaw_deg, speed, path, name=f"DataID {p.data_id}",
                                     trigger_m=0.0 if p.active_m >= morai_scenario.ALWAYS_ACTIVE else p.active_m,
                                     once=not p.loop))
    obstacles = []
    for o in scene.objects:
        base = MORAI_ASSET_SIZES.get(o.data_id)
        if base is None:
            base = (1.0, 1.0, 1.0)
            notes.append(f"object {o.uid}: no size known for DataID {o.data_id}: its scale (x {o.scale[0]:g}, "
                         f"y {o.scale[1]:g}, z {o.scale[2]:g}; Unity's axes: z length, x width, y height) is read "
                         "as metres")
        size = tuple(b * s for b, s in zip(base, (o.scale[2], o.scale[0], o.scale[1])))
        obstacles.append(ActorSpec(o.uid, OBJ_OBSTACLE, size, o.pose.x, o.pose.y, o.pose.z, o.pose.yaw_deg,
                                   name=f"DataID {o.data_id}"))
    spawns = []
    for sp in scene.spawns:
        if road is None or sp.link not in road.links:
            notes.append(f"spawn point {sp.uid}: " + ("no MGeo map is loaded" if road is None else
                                                      f"link {sp.link!r} is not in the map") + ": not played")
        elif sp.maximum and sp.period_s > 0:
            spawns.append(SpawnSpec(sp.uid, sp.link, sp.period_s, sp.maximum, sp.speed_kmh))
    lights = None
    if scene.lights:
        if road is None or not road.lights:
            notes.append(f"tlList: {len(scene.lights)} lights given by index into the map's light list; no MGeo "
                         "map with lights is loaded: the emulator's own lights stay")
        else:
            lights, missing = _lights_of(scene.lights, road)
            if missing:
                notes.append(f"tlList: indices {', '.join(map(str, missing))} are not in the map's "
                             f"{len(road.lights)} lights")
    return Scenario(name or os.path.splitext(os.path.basename(scene.path))[0], f"MORAI launcher scenario {scene.path}",
                    ego, tuple(vehicles), tuple(pedestrians), tuple(obstacles), lights, None, None,
                    scene.map_info, tuple(spawns), tuple(notes))


def _lights_of(states, road):
    """LightSpecs of every light of ``road``, those ``states`` names (tlList: index into the map's list,
    state = the phase of its plan, deltaTime = seconds into it) started there; (specs, missing indices)."""
    plans = road.light_plans()
    given = {t.index: t for t in states}
    specs = []
    for i, lt in enumerate(road.lights):
        plan = plans.get(lt.idx, (None, ()))[1]
        offset = 0.0
        t = given.get(i)
        if t is not None and plan:
            offset = sum(d for _, d in plan[:t.state % len(plan)]) + t.delta_s
        specs.append(LightSpec(lt.idx[:12], lt.wire_type, offset % sum(d for _, d in plan) if plan else 0.0, plan))
    return tuple(specs), sorted(i for i in given if i >= len(road.lights))
