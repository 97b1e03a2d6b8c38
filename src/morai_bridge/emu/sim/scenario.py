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

from .actors import Actor
from .signals import IntersectionSpec, LightSpec, check_plan

__all__ = ["ScenarioError", "EgoStart", "PathSpec", "ActorSpec", "Scenario", "Actor",
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
    kind: str                       # 'line' or 'circle'
    a: Tuple[float, float]          # line: from; circle: center
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


def load_scenario(scenario_dir: str, name: str) -> Scenario:
    """Read and validate ``<scenario_dir>/<name>.json`` (a trailing .json is ignored)."""
    path = scenario_path(scenario_dir, name)
    try:
        with open(path, encoding="utf-8") as f:
            obj = json.load(f)
    except FileNotFoundError:
        raise ScenarioError(f"scenario {name!r} not found: no file {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(f"scenario {name!r}: cannot read {path}: {e}") from None
    except ValueError as e:
        raise ScenarioError(f"scenario {name!r}: {path} is not valid JSON: {e}") from None
    base = os.path.basename(path)[:-5]
    try:
        return parse_scenario(obj, base)
    except ScenarioError as e:
        raise ScenarioError(f"scenario {base!r} ({path}): {e}") from None
