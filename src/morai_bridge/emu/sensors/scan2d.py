"""The emulated 2D LiDAR: 360 samples in the sensor's xy plane, one datagram per scan (:mod:`morai_bridge.wire.lidar2d`).

* Sample i looks at i degrees counter-clockwise from the sensor's x axis
  (sample 0 straight ahead): the codec's default convention (``angle_origin_deg``
  0, ``direction`` +1).  With a level mount (roll = pitch = 0) the plane is
  horizontal at the mount height.
* Targets: the scene's object boxes only (the ego's own excluded; the ground is
  never hit, even by a tilted mount).  An object lower than the scan plane is
  not seen.
* Range: distance to the nearest box in mm (the codec rounds to 1 mm); no hit
  within ``lidar2d_range_max`` = ``lidar2d_range_max`` itself (MORAI's viewer
  treats the range limit as "no hit").  Intensity: the 3D LiDAR's constant per
  object kind; 0 for no hit.
* Header ``#Lidar2D$``, data_length 1080, aux (0, 0, 0), tail CR LF: the codec's
  defaults (MORAI's values are unknown).

No ROS.
"""

import time
from typing import Optional

import numpy as np

from morai_bridge.wire import lidar2d

from .lidar import INTENSITY
from .scene import Mount, Scene, SceneBoxes, cast_rays, sensor_pose

__all__ = ["Lidar2DSensor"]

_KIND_INTENSITY = np.array([INTENSITY[0], INTENSITY[1], INTENSITY[2]], np.float64)


class Lidar2DSensor:
    """One 2D LiDAR on the ego.  Not thread-safe."""

    def __init__(self, range_max: float = 10.0, mount: Mount = Mount()):
        if not (0.0 < range_max <= lidar2d.MAX_RANGE_M):
            raise ValueError(f"lidar2d_range_max must be in (0, {lidar2d.MAX_RANGE_M:.3f}] m")
        self.range_max = float(range_max)
        self.mount = mount
        a = np.radians(np.arange(lidar2d.SAMPLES) * (360.0 / lidar2d.SAMPLES))
        self._dirs = np.stack([np.cos(a), np.sin(a), np.zeros_like(a)], axis=1)
        self.scans = 0
        self.work_s = 0.0

    @property
    def ms_per_scan(self) -> float:
        return 1000.0 * self.work_s / self.scans if self.scans else 0.0

    def ranges(self, scene: Scene, boxes: Optional[SceneBoxes] = None):
        """(ranges m, intensities) in wire order, no hit = range_max / 0."""
        if boxes is None:
            boxes = SceneBoxes.of(scene)
        rot, origin = sensor_pose(scene.ego, self.mount)
        t, hit = cast_rays(origin, self._dirs @ rot.T, boxes, self.range_max, ground=False)
        found = hit >= 0
        ranges = np.where(found, t, self.range_max)
        inten = np.zeros(len(t))
        if len(boxes):
            inten[found] = _KIND_INTENSITY[np.clip(boxes.kinds[hit[found]], 0, 2)]
        return ranges, inten

    def scan(self, scene: Scene, boxes: Optional[SceneBoxes] = None) -> bytes:
        """The datagram of one scan of ``scene``."""
        started = time.perf_counter()
        ranges, inten = self.ranges(scene, boxes)
        data = lidar2d.encode_scan([min(float(r), lidar2d.MAX_RANGE_M) for r in ranges],
                                   [int(i) for i in inten])
        self.work_s += time.perf_counter() - started
        self.scans += 1
        return data

