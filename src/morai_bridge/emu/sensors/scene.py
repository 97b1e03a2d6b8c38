"""What the emulated sensors see: a frozen copy of the world, poses and ray casting, with numpy.

Frames (all right-handed, metres, degrees for the configured angles):

* **map**: x East, y North, z up; the ground is the plane z = 0.
* **ego**: the reported ego position (centre of the footprint, at the ego's z),
  x forward, y left, z up; turned by the ego's roll, pitch, yaw.
* **sensor** (a mount pose ``x, y, z, roll, pitch, yaw`` in the ego frame): x
  forward, y left, z up, the rotation being ``Rz(yaw) @ Ry(pitch) @ Rx(roll)``
  (ROS fixed-axis roll-pitch-yaw, as ``static_transform_publisher`` and a URDF
  ``rpy`` use it: a positive pitch tilts the sensor's x axis DOWN).
* **optical** (cameras only): x right, y down, z forward (REP-103 ``_optical``).

Objects are upright oriented boxes: an actor of size (length, width, height)
stands on its position (x, y, z) -- its centre is ``height / 2`` above it, as in
the markers node -- turned by its heading about z.  The ego's own box is not part
of the scene (sensors do not see their own car).

:func:`cast_rays` intersects many rays with the boxes and the ground at once
(slab test in each box's frame, after a bounding-sphere cull).  No ROS.
"""

import math
from typing import NamedTuple, Optional, Sequence, Tuple

import numpy as np

from morai_bridge.wire.enums import ObjectType

__all__ = ["Scene", "SceneBoxes", "Mount", "rpy_matrix", "ego_matrix", "sensor_pose",
           "cast_rays", "box_corners", "CORNER_SIGNS", "GROUND", "NO_HIT",
           "OBJ_PEDESTRIAN", "OBJ_VEHICLE", "OBJ_OBSTACLE"]

OBJ_PEDESTRIAN, OBJ_VEHICLE, OBJ_OBSTACLE = (
    int(ObjectType.PEDESTRIAN), int(ObjectType.VEHICLE), int(ObjectType.OBSTACLE))

#: :func:`cast_rays` hit index of the ground plane and of no hit
GROUND = -1
NO_HIT = -2

#: corner i of a box in its own frame = centre + CORNER_SIGNS[i] * half size: the
#: binary-cube order (bit 0: x, rear 0 / front 1; bit 1: y, right 0 / left 1;
#: bit 2: z, bottom 0 / top 1), whose edges are 0-1, 0-2, 0-4, 1-3, 1-5, 2-3, 2-6,
#: 3-7, 4-5, 4-6, 5-7, 6-7 as MORAI's example draws them.
CORNER_SIGNS = np.array([[1.0 if (i >> axis) & 1 else -1.0 for axis in range(3)]
                         for i in range(8)])


class Scene(NamedTuple):
    """The world at one instant, as the emulator hands it to its sensors.

    time_ns: simulated clock.  ego: (x, y, z, roll deg, pitch deg, yaw deg).
    objects: (id, obj_type, x, y, z, yaw rad, length, width, height) per actor.
    Built under the emulator's lock; plain tuples, so it is cheap and immutable.
    """

    time_ns: int
    ego: Tuple[float, float, float, float, float, float]
    objects: Tuple[Tuple[int, int, float, float, float, float, float, float, float], ...]


class Mount(NamedTuple):
    """A sensor's mount pose on the ego: m and deg (see the module docstring)."""

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    roll: float = 0.0
    pitch: float = 0.0
    yaw: float = 0.0


def rpy_matrix(roll_deg: float, pitch_deg: float, yaw_deg: float) -> np.ndarray:
    """``Rz(yaw) @ Ry(pitch) @ Rx(roll)`` (3 x 3), angles in degrees."""
    r, p, y = math.radians(roll_deg), math.radians(pitch_deg), math.radians(yaw_deg)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def ego_matrix(ego) -> Tuple[np.ndarray, np.ndarray]:
    """(rotation, translation) of the ego frame in the map frame."""
    x, y, z, roll, pitch, yaw = ego
    return rpy_matrix(roll, pitch, yaw), np.array([x, y, z], np.float64)


def sensor_pose(ego, mount: Mount) -> Tuple[np.ndarray, np.ndarray]:
    """(rotation, origin) of a sensor frame in the map frame, for an ego pose."""
    r_e, t_e = ego_matrix(ego)
    r_s = rpy_matrix(mount.roll, mount.pitch, mount.yaw)
    return r_e @ r_s, t_e + r_e @ np.array([mount.x, mount.y, mount.z], np.float64)


class SceneBoxes:
    """The scene's objects as arrays: ``centers`` (B, 3) (box centres, map),
    ``half`` (B, 3) half sizes (length, width, height) / 2, ``yaw`` (B,) rad,
    ``kinds`` (B,) obj_type, ``ids`` (B,), ``rot`` (B, 3, 3) map-from-box."""

    __slots__ = ("centers", "half", "yaw", "kinds", "ids", "rot", "radius")

    def __init__(self, objects: Sequence):
        n = len(objects)
        arr = np.array([o[2:] for o in objects], np.float64).reshape(n, 7)
        self.ids = np.array([o[0] for o in objects], np.int64)
        self.kinds = np.array([o[1] for o in objects], np.int64)
        self.half = arr[:, 4:7] / 2.0
        self.centers = arr[:, 0:3].copy()
        self.centers[:, 2] += self.half[:, 2]
        self.yaw = arr[:, 3]
        c, s = np.cos(self.yaw), np.sin(self.yaw)
        rot = np.zeros((n, 3, 3))
        rot[:, 0, 0], rot[:, 0, 1], rot[:, 1, 0], rot[:, 1, 1], rot[:, 2, 2] = c, -s, s, c, 1.0
        self.rot = rot
        self.radius = np.sqrt((self.half ** 2).sum(axis=1))

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def of(cls, scene: Scene) -> "SceneBoxes":
        return cls(scene.objects)


def box_corners(boxes: SceneBoxes) -> np.ndarray:
    """(B, 8, 3) corners in the map frame, in :data:`CORNER_SIGNS` order."""
    local = CORNER_SIGNS[None, :, :] * boxes.half[:, None, :]
    return np.einsum("bij,bkj->bki", boxes.rot, local) + boxes.centers[:, None, :]


def cast_rays(origin: np.ndarray, dirs: np.ndarray, boxes: Optional[SceneBoxes],
              max_range: float, ground: bool = True) -> Tuple[np.ndarray, np.ndarray]:
    """Nearest hit of each ray (unit ``dirs`` (N, 3), map frame, from ``origin``).

    Returns ``(t, hit)``: t (N,) float64 distance to the nearest hit, ``inf``
    when there is none within ``max_range``; hit (N,) int64: the box index,
    :data:`GROUND` or :data:`NO_HIT`.  A box that contains the origin is not
    hit (its inside is not seen).  The ground is the plane z = 0 (only when
    ``ground`` and the origin is above it).
    """
    n = len(dirs)
    best = np.full(n, np.inf)
    hit = np.full(n, NO_HIT, np.int64)
    oz = float(origin[2])
    if ground and oz > 0.0:
        dz = dirs[:, 2]
        down = dz < -1e-12
        t = np.full(n, np.inf)
        t[down] = -oz / dz[down]
        use = t <= max_range
        best[use] = t[use]
        hit[use] = GROUND
    if boxes is not None and len(boxes):
        for b in range(len(boxes)):
            rel = boxes.centers[b] - origin
            dist = math.sqrt(float(rel @ rel))
            r = float(boxes.radius[b])
            if dist - r > max_range:
                continue
            # bounding-sphere cull: rays passing within r of the centre, in front of the origin
            tc = dirs @ rel
            near = (tc > -r) & (dist * dist - tc * tc <= r * r)
            if dist > r:
                near &= tc > 0.0
            idx = np.flatnonzero(near)
            if not idx.size:
                continue
            rot = boxes.rot[b]
            o = rot.T @ (-rel)                  # origin in the box frame
            d = dirs[idx] @ rot                 # = (rot.T @ dir) per row
            h = boxes.half[b]
            with np.errstate(divide="ignore", invalid="ignore"):
                inv = 1.0 / d
                t1 = (-h - o) * inv
                t2 = (h - o) * inv
            lo = np.minimum(t1, t2)
            hi = np.maximum(t1, t2)
            tmin = np.fmax(np.fmax(lo[:, 0], lo[:, 1]), lo[:, 2])
            tmax = np.fmin(np.fmin(hi[:, 0], hi[:, 1]), hi[:, 2])
            ok = (tmax >= tmin) & (tmin > 1e-9) & (tmin <= max_range)
            ok &= tmin < best[idx]
            sel = idx[ok]
            best[sel] = tmin[ok]
            hit[sel] = b
    return best, hit
