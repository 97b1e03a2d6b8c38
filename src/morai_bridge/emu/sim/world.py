"""The simulated world of the simulator emulator: everything a packet tells and a command changes.

:class:`World` holds the ego (its :class:`~.ego.EgoModel` and the control commands it obeys), the
moving actors, the traffic lights and intersection controllers, the contacts and NPC collisions,
the lamps, the sensor poses set by Sensor Control, the scenario's name and GPS blackouts, the last
SimControl command and its result, and the simulated clock.  It knows nothing of sockets, rates or
threads: the packet builders (:mod:`.builders`) read it, the command handlers (:mod:`.commands`)
change it, and :class:`~.emulator.SimEmulator` steps it under its lock.  A scenario's content lands
here (:meth:`World.apply_scenario`), and so would anything else a scenario or a map adds (a road
network, an origin): the builders and handlers take the world as an argument and reach it only
through its public attributes and methods.  Not thread-safe by itself.  No ROS.
"""

import logging
import math
import time
from typing import Dict, Optional, Tuple

from morai_bridge.wire.enums import CtrlMode, ObjectType, SimResult, SimState
from morai_bridge.wire.units import MPS_TO_KMH, NS

from .actors import Actor
from .ego import Drive, EgoModel, wrap_deg
from .geo import boxes_overlap
from .scenario import DEFAULT_SIZES, OBJ_VEHICLE, ActorSpec, PathSpec, Scenario
from .signals import DEFAULT_INTERSECTIONS, DEFAULT_LIGHTS, Intersection, LightSpec, TrafficLight
from .snapshot import EgoSnapshot, IntersectionSnapshot, LightSnapshot, ObjectSnapshot, SimStatusSnapshot

__all__ = ["World", "road_lights", "SPAWN_IDS"]

#: Object Info ids of the vehicles spawn points make (inclusive)
SPAWN_IDS = (30000, 32767)


def road_lights(road):
    """LightSpecs of an MGeo map's traffic lights: their ids (MORAI's 12 characters), the type their
    heads make, their controller's plan (its group's phases, yellow before red), else their type's
    default plan."""
    plans = road.light_plans()
    return [LightSpec(lt.idx[:12], lt.wire_type, 0.0, plans[lt.idx][1] if lt.idx in plans else ())
            for lt in road.lights]

log = logging.getLogger("morai_bridge.emu.sim")

_AUTO, _KEYBOARD = int(CtrlMode.AUTO), int(CtrlMode.KEYBOARD)
_VEHICLE = int(ObjectType.VEHICLE)
_PLAYING, _PAUSED = int(SimState.PLAYING), int(SimState.PAUSE)


class World:
    """One emulated world, made from a :class:`~.config.SimConfig` and the simulator release's
    :class:`~morai_bridge.configuration.sim_versions.SimVersion` (see the module docstring)."""

    def __init__(self, config, version, map_info=None, road=None):
        """``map_info``: the map (configuration.maps.MapInfo) whose origin the GPS is relative to (None:
        origin 0, 0); ``road``: its MGeo road network (:class:`.mgeo.MGeoMap`), or None."""
        cfg = self.config = config
        self.version = version
        self.map_info = map_info
        #: UTM (east, north, zone) of the map frame's origin, for the GPS (the gps_utm_* options override)
        self.origin = self._origin(map_info)
        self.road = road
        #: spawn points of the scenario in play: [SpawnSpec, simulated time of its next vehicle, spawned]
        self.spawners = []
        self._next_spawn_id = SPAWN_IDS[0]
        # the model's convention is the 24.R2 wire's: steer + right (ego.py); these turn a wire's
        # steer into the model's and back
        self.ctrl_sign = 1 if version.ctrl_steer_positive == "right" else -1
        self.ghost_sign = 1 if version.ghost_steer_positive == "right" else -1
        self.status_sign = 1 if version.status_steer_positive == "right" else -1
        #: 25.S4's IMU seconds are the host's local time (not on a simulated clock)
        self.imu_local = version.imu_seconds == "local" and not cfg.deterministic
        #: one physics step, ns and s
        self.step_ns = int(round(cfg.step_s * 1000)) * 1_000_000
        self.step_s = self.step_ns / NS

        self.ego = EgoModel(cfg.vehicle_params(), cfg.initial_gear)
        self.ego.set_pose(cfg.ego_x, cfg.ego_y, 0.0, cfg.ego_yaw_deg)
        self.ctrl_mode = _KEYBOARD if cfg.keyboard_mode else _AUTO
        #: the network command held (auto mode only; dropped on a mode change)
        self.drive: Optional[Drive] = None
        #: another model's command (drive_external), over network control in either mode
        self.external: Optional[Drive] = None
        self.actors: Dict[int, Actor] = {}
        self.lights = [TrafficLight(s) for s in (road_lights(road) if road is not None and road.lights
                                                  else DEFAULT_LIGHTS)]
        self.intersections = [Intersection(s) for s in DEFAULT_INTERSECTIONS]
        #: ids of the actors touching the ego, nearest first; NPC vehicle pairs that overlap
        self.contacts: Tuple[int, ...] = ()
        self.npc_pairs: Tuple[Tuple[int, int], ...] = ()
        #: (turn_signal, emergency_signal) of the last Lamp Control
        self.lamps = (0, 0)
        #: sensor index -> pose set by Sensor Control
        self.sensor_poses: Dict[int, Tuple[float, ...]] = {}
        self.scenario_name = ""
        #: map boxes (x0, y0, x1, y1) where the GPS sends 0/0 (the scenario's gps_blackouts)
        self.gps_blackouts = ()
        self.paused = False
        #: the last SimControl command and its result (SimStatus); its state comes from ``paused``
        self.status = SimStatusSnapshot(_PLAYING, 0, 0, "", int(SimResult.NONE))
        #: the simulated clock (ns), the time stepped (ns) and the steps made
        self.time_ns = 0 if cfg.deterministic else time.time_ns() // 1_000_000 * 1_000_000
        self.elapsed_ns = 0
        self.steps = 0
        self._imu_burst_t = 0     # simulated time [ns] of the last IMU catch-up burst

    def _origin(self, map_info):
        cfg = self.config
        east, north, zone = (map_info.east, map_info.north, map_info.utm_zone) if map_info is not None else (0.0, 0.0, 52)
        return (cfg.gps_utm_offset_x or east, cfg.gps_utm_offset_y or north, cfg.gps_utm_zone or zone)

    # ------------------------------------------------------------ time
    def follow_wall_clock(self) -> None:
        """Real time from here on: the clock jumps to the wall clock's millisecond (never back)."""
        if not self.config.deterministic:
            self.time_ns = max(self.time_ns, time.time_ns() // 1_000_000 * 1_000_000)

    def advance(self) -> None:
        """One physics step of ``step_s``: the ego (stopped by what it touches), the actors, the
        intersections, the clock, then the contacts; a first touch stops the ego dead."""
        drive = self.external or (self.drive if self.ctrl_mode == _AUTO else None)
        e = self.ego
        blocked = set()
        heading = (math.cos(e.yaw), math.sin(e.yaw))
        for oid in self.contacts:
            a = self.actors.get(oid)
            if a is not None:
                ahead = (a.x - e.x) * heading[0] + (a.y - e.y) * heading[1]
                blocked.add(1 if ahead >= 0 else -1)
        e.step(self.step_s, drive, frozenset(blocked))
        for a in self.actors.values():
            if a.waiting and math.hypot(a.x - e.x, a.y - e.y) <= a.trigger_m:
                a.waiting = False          # the ego came within its activeDistance
            a.update(self.step_s)
        self._spawn()
        for i in self.intersections:
            i.advance(self.step_ns)
        self.time_ns += self.step_ns
        self.elapsed_ns += self.step_ns
        self.steps += 1
        contacts, self.npc_pairs = self._detect()
        if set(contacts) - set(self.contacts):
            e.stop()   # first touch of an object: the ego stops dead
        self.contacts = contacts

    def imu_burst_due(self, every_ns: int) -> bool:
        """True once every ``every_ns`` of simulated time (0: never): the IMU's catch-up burst."""
        if every_ns and self.time_ns - self._imu_burst_t >= every_ns:
            self._imu_burst_t = self.time_ns
            return True
        return False

    # ------------------------------------------------------------ the ego and its control
    def set_ctrl_mode(self, mode: int) -> None:
        """1 keyboard, 2 auto; the held network command does not survive a change."""
        if mode != self.ctrl_mode:
            log.info("ctrl_mode %d -> %d", self.ctrl_mode, mode)
            self.ctrl_mode = mode
            self.drive = None

    def refresh_contacts(self) -> None:
        """Contacts and NPC collisions again, after something was placed rather than stepped."""
        self.contacts, self.npc_pairs = self._detect()

    def gps_antenna(self):
        """(x, y, z) of the GPS antenna in the map frame: the ego's reference point plus the mount
        (gps_mount_x forward, _y left, _z up: MORAI's sensor settings give each sensor's position)."""
        e, c = self.ego, self.config
        cy, sy = math.cos(e.yaw), math.sin(e.yaw)
        return (e.x + cy * c.gps_mount_x - sy * c.gps_mount_y, e.y + sy * c.gps_mount_x + cy * c.gps_mount_y,
                e.z + c.gps_mount_z)

    def in_gps_blackout(self) -> bool:
        e = self.ego
        return any(x0 <= e.x <= x1 and y0 <= e.y <= y1 for x0, y0, x1, y1 in self.gps_blackouts)

    # ------------------------------------------------------------ actors
    def sorted_actors(self):
        """(distance to the ego, actor), nearest first (ties by id): the Object Info order."""
        e = self.ego
        return sorted(((math.hypot(a.x - e.x, a.y - e.y), a) for a in self.actors.values()),
                      key=lambda t: (t[0], t[1].id))

    def _detect(self):
        ego_box = self.ego.box()
        contacts = tuple(a.id for _, a in self.sorted_actors() if boxes_overlap(ego_box, a.box()))
        vehicles = sorted((a for a in self.actors.values() if a.obj_type == _VEHICLE), key=lambda a: a.id)
        pairs = []
        for k, a in enumerate(vehicles):
            for b in vehicles[k + 1:]:
                if boxes_overlap(a.box(), b.box()):
                    pairs.append((a.id, b.id))
        return contacts, tuple(pairs)

    def _spawn(self) -> None:
        """A vehicle at each spawn point whose period is up, until its maximum (the ids of SPAWN_IDS)."""
        for entry in self.spawners:
            spec, due, made = entry
            if made >= spec.maximum or self.elapsed_ns < due or self._next_spawn_id > SPAWN_IDS[1]:
                continue
            link = self.road.links[spec.link_id]
            speed = spec.speed_kmh if spec.speed_kmh is not None else link.max_speed_kmh
            size = DEFAULT_SIZES[OBJ_VEHICLE]
            start = link.points[0]
            a = Actor(ActorSpec(self._next_spawn_id, OBJ_VEHICLE, size, start[0], start[1], start[2], speed_kmh=speed,
                                path=PathSpec("link", start[:2]), name=f"spawn {spec.id}", link_id=spec.link_id[:38],
                                wheelbase=0.59 * size[0]), self.config.seed, self.road)
            self.actors[a.id] = a
            self._next_spawn_id += 1
            entry[1], entry[2] = due + int(spec.period_s * NS), made + 1

    # ------------------------------------------------------------ scenarios
    def apply_scenario(self, sc: Scenario, delete_all, load_ego, load_npc, load_ped, load_obj,
                       set_pause) -> None:
        """Put a parsed scenario's parts in the world, as a Scenario Load's flags select them."""
        if delete_all:
            self.actors.clear()
            load_ego = load_npc = load_ped = load_obj = True
        if load_ego and sc.ego is not None:
            g = sc.ego
            self.ego.set_pose(g.x, g.y, g.z, g.yaw_deg, g.speed_kmh, steer_deg=0.0)
            if g.gear is not None:
                self.ego.gear = g.gear
        groups = ((load_npc, sc.vehicles), (load_ped, sc.pedestrians), (load_obj, sc.obstacles))
        for selected, specs in groups:
            if selected:
                for spec in specs:
                    self.actors[spec.id] = Actor(spec, self.config.seed, self.road)
        if load_npc:
            self.spawners = [[s, self.elapsed_ns, 0] for s in sc.spawns]
        if sc.origin is not None and not (self.config.gps_utm_offset_x or self.config.gps_utm_offset_y):
            if self.map_info is not None and (self.map_info.east, self.map_info.north) != (sc.origin.east, sc.origin.north):
                log.warning("scenario %s is on map %s (origin %.3f, %.3f), not %s: the GPS uses the scenario's origin",
                            sc.name, sc.origin.name or "?", sc.origin.east, sc.origin.north, self.map_info.describe())
            self.map_info = sc.origin
            self.origin = self._origin(sc.origin)
        for note in sc.notes:
            log.warning("scenario %s: %s", sc.name, note)
        if sc.traffic_lights is not None:
            self.lights = [TrafficLight(s) for s in sc.traffic_lights]
        if sc.intersections is not None:
            self.intersections = [Intersection(s) for s in sc.intersections]
        if sc.gps_blackouts is not None:
            self.gps_blackouts = sc.gps_blackouts
        self.scenario_name = sc.name
        self.paused = bool(set_pause)
        self.refresh_contacts()

    # ------------------------------------------------------------ SimStatus
    def record_command(self, platform, command, option, result) -> None:
        self.status = SimStatusSnapshot(self.status.status, platform, command, option[:99], result)

    def status_snapshot(self) -> SimStatusSnapshot:
        return self.status._replace(status=_PAUSED if self.paused else _PLAYING)

    # ------------------------------------------------------------ views
    def ego_snapshot(self) -> EgoSnapshot:
        e = self.ego
        vx, vy = e.velocity("map")
        return EgoSnapshot(e.x, e.y, e.z, e.roll, e.pitch, e.yaw_deg, e.v * MPS_TO_KMH,
                           vx * MPS_TO_KMH, vy * MPS_TO_KMH, e.a_long, math.degrees(e.yaw_rate),
                           e.steer_deg, e.accel_pedal, e.brake_pedal, e.gear, self.ctrl_mode)

    def object_snapshots(self) -> Tuple[ObjectSnapshot, ...]:
        return tuple(ObjectSnapshot(a.id, a.obj_type, a.x, a.y, a.z, wrap_deg(math.degrees(a.yaw)), a.length,
                                    a.width, a.height, a.vx * MPS_TO_KMH, a.vy * MPS_TO_KMH, d, a.name, a.ghost)
                     for d, a in self.sorted_actors())

    def light_snapshots(self) -> Tuple[LightSnapshot, ...]:
        return tuple(LightSnapshot(lt.id, lt.type, lt.status(self.elapsed_ns), lt.forced is not None)
                     for lt in self.lights)

    def intersection_snapshots(self) -> Tuple[IntersectionSnapshot, ...]:
        return tuple(IntersectionSnapshot(i.index, i.status, i.time_s) for i in self.intersections)

    def ego_pose(self) -> Tuple[float, ...]:
        """(x, y, z, roll, pitch, yaw_deg) of the ego, as the sensors' scene takes it."""
        e = self.ego
        return (e.x, e.y, e.z, e.roll, e.pitch, e.yaw_deg)

    def actor_boxes(self) -> Tuple[Tuple, ...]:
        """(id, obj_type, x, y, z, yaw, length, width, height) of every actor, as the sensors' scene
        takes them."""
        return tuple((a.id, a.obj_type, a.x, a.y, a.z, a.yaw, a.length, a.width, a.height)
                     for a in self.actors.values())
