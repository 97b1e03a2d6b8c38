"""The moving actors of the simulator emulator: where each surrounding object of a scenario is, step by
step (:class:`Actor`, made of a :class:`.scenario.ActorSpec`).

* A vehicle with a ``line`` path drives back and forth between its ends (turning on the spot at
  each end); with a ``circle`` path it goes round the centre at its radius, either way; without a
  path it stays parked.
* A pedestrian walks back and forth along its path at its speed; with ``wander_m`` > 0 a smooth
  random sideways drift (seeded: deterministic with the emulator's seed), bounded to that many
  metres, leans the walk (at most :data:`MAX_DRIFT_DEG` off the path) but never changes its speed.
* NPC Ghost Cmd takes an actor off its path (:meth:`Actor.set_ghost_pose`).

The scenario file that declares them is :mod:`.scenario`.  No ROS.
"""

import math
import random

from morai_bridge.wire.enums import ObjectType
from morai_bridge.wire.units import KMH_TO_MPS

from .mgeo import LinkCursor

__all__ = ["Actor", "MAX_DRIFT_DEG"]

#: how far (deg) a drifting pedestrian's walk may lean off its path (wander_m)
MAX_DRIFT_DEG = 15.0
#: the object types whose length splits into a wheelbase and overhangs (vehicles, other egos)
_WITH_WHEELBASE = (int(ObjectType.VEHICLE), int(ObjectType.EGO))


class Actor:
    """A surrounding object at run time (the emulator's lock protects it), made of a
    :class:`.scenario.ActorSpec` ``spec``; ``seed`` (with the actor's id) seeds its drift."""

    def __init__(self, spec, seed=0, road=None):
        """``road``: the MGeo map (:mod:`.mgeo`) a ``link`` path drives on."""
        self.id = spec.id
        self.obj_type = spec.obj_type
        self.name = spec.name
        self.length, self.width, self.height = spec.size
        self.link_id = spec.link_id
        if spec.obj_type in _WITH_WHEELBASE:
            self.wheelbase = spec.wheelbase
            self.overhang = self.rear_overhang = (self.length - spec.wheelbase) / 2.0
        else:
            self.wheelbase = self.overhang = self.rear_overhang = 0.0
        self.path = spec.path
        self.speed = spec.speed_kmh * KMH_TO_MPS
        #: a pedestrian waiting for the ego to come within trigger_m (World.advance starts it)
        self.trigger_m = spec.trigger_m
        self.waiting = spec.trigger_m > 0
        self.once = spec.once
        self.cursor = None
        if spec.path is not None and spec.path.kind == "link":
            self.cursor = LinkCursor(road, spec.link_id)
            self.cursor.s = self.cursor.nearest(*spec.path.a)
        self.wander = spec.wander_m
        self.ghost = False
        self.x, self.y, self.z = spec.x, spec.y, spec.z
        self.yaw = math.radians(spec.yaw_deg)
        self.vx = self.vy = self.ax = self.ay = 0.0
        self.s = 0.0               # distance travelled along the path (m, or rad for circles)
        self.walked = 0.0          # distance walked in all (a ``once`` walk stops at its line's end)
        self.offset = 0.0          # pedestrian sideways drift, m (left of the from -> to line)
        self.drift_rate = 0.0      # d(offset)/dt, m/s
        # One generator per actor: its randomness does not depend on the others.
        self.rng = random.Random(f"{seed}:{spec.id}")
        self.sway = None           # current drift leg (from, to, duration s), or None
        self.sway_t = 0.0          # time into that leg, s
        if self.wander > 0 and self.speed > 0 and self.path is not None:
            self._new_sway(0.0)
        if self.path is not None:
            self._place(0.0)

    def _new_sway(self, start: float) -> None:
        """The next leg of the sideways drift: from ``start`` to a random offset within
        +-wander, along a half cosine (zero sideways speed at both ends), slow enough that
        the walk never leans more than MAX_DRIFT_DEG off the path."""
        target = self.rng.uniform(-self.wander, self.wander)
        peak = self.speed * math.sin(math.radians(MAX_DRIFT_DEG))
        needed = abs(target - start) * math.pi / (2.0 * peak)
        self.sway = (start, target, max(self.rng.uniform(2.0, 5.0), needed))
        self.sway_t = 0.0

    def _drift(self, dt: float) -> float:
        """Advance the drift by ``dt``: sets ``offset``, returns the sideways speed now (m/s)."""
        t = self.sway_t + dt
        while t >= self.sway[2]:
            t -= self.sway[2]
            self._new_sway(self.sway[1])
        self.sway_t = t
        a, b, duration = self.sway
        phase = math.pi * t / duration
        self.offset = a + (b - a) * 0.5 * (1.0 - math.cos(phase))
        return (b - a) * math.pi / (2.0 * duration) * math.sin(phase)

    def _place(self, dt: float) -> None:
        p = self.path
        if p.kind == "link":
            self.x, self.y, self.z, self.yaw = self.cursor.advance(self.speed * dt)
            v = 0.0 if self.cursor.stopped else self.speed
            self.vx, self.vy = v * math.cos(self.yaw), v * math.sin(self.yaw)
            self.ax = self.ay = 0.0
            return
        if p.kind == "circle":
            omega = self.speed / p.radius * (-1.0 if p.clockwise else 1.0)
            self.s += omega * dt
            theta = math.radians(p.start_deg) + self.s
            cx, cy = p.a
            self.x, self.y = cx + p.radius * math.cos(theta), cy + p.radius * math.sin(theta)
            self.yaw = theta + (-math.pi / 2 if p.clockwise else math.pi / 2)
            v = self.speed
            self.vx, self.vy = v * math.cos(self.yaw), v * math.sin(self.yaw)
            # centripetal, toward the centre
            a = v * v / p.radius
            self.ax, self.ay = -a * math.cos(theta), -a * math.sin(theta)
            return
        (x0, y0), (x1, y1) = p.a, p.b
        length = math.hypot(x1 - x0, y1 - y0)
        ux, uy = (x1 - x0) / length, (y1 - y0) / length
        # A walker drifting sideways still walks at its speed: the drift turns part of the
        # speed sideways (rate), the rest goes along the path.  Both are smooth in time.
        v = self.speed
        along_before = math.sqrt(max(0.0, v * v - self.drift_rate ** 2))
        if self.sway is not None and dt > 0:
            self.drift_rate = self._drift(dt)
        along = math.sqrt(max(0.0, v * v - self.drift_rate ** 2))
        self.s = (self.s + 0.5 * (along_before + along) * dt) % (2.0 * length)
        if self.once and self.walked + 0.5 * (along_before + along) * dt >= length:
            self.s, self.walked = length, length          # once: it stays at the end
            along = rate = 0.0
        self.walked += 0.5 * (along_before + along) * dt
        if self.s <= length:
            d, sign = self.s, 1.0
        else:
            d, sign = 2.0 * length - self.s, -1.0
        rate = self.drift_rate
        self.x = x0 + ux * d - uy * self.offset
        self.y = y0 + uy * d + ux * self.offset
        self.vx = sign * ux * along - uy * rate
        self.vy = sign * uy * along + ux * rate
        # heading = direction of the walk (the path's direction while standing)
        lean = rate / v if v > 0 else 0.0
        straight = math.sqrt(max(0.0, 1.0 - lean * lean))
        self.yaw = math.atan2(sign * uy * straight + ux * lean, sign * ux * straight - uy * lean)
        self.ax = self.ay = 0.0

    def update(self, dt: float) -> None:
        if self.path is not None and not self.ghost and self.speed > 0 and not self.waiting:
            self._place(dt)

    def set_ghost_pose(self, x, y, z, yaw_deg) -> None:
        """NPC Ghost Cmd: the actor stops following its path and sits at this pose."""
        self.ghost = True
        self.x, self.y, self.z = x, y, z
        self.yaw = math.radians(yaw_deg)
        self.vx = self.vy = self.ax = self.ay = 0.0

    def box(self):
        return self.x, self.y, self.yaw, self.length, self.width

