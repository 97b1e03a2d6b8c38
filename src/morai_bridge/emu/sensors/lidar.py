"""The emulated 3D LiDAR: Velodyne-format packets by ray casting (:mod:`morai_bridge.wire.velodyne`).

Model
-----
* Rays: the model's elevation table (and per-laser azimuth offsets) at the
  model's firing period; column ``n`` (one firing of every laser) fires at
  ``t0 + n * firing_period`` of the simulated clock, at azimuth
  ``n * 360 / N`` deg (clockwise seen from above, 0 = the sensor's x axis, as
  Velodyne counts it), N = the whole number of firings per revolution nearest to
  the configured rpm.  The effective rotation rate is therefore within 0.05 % of
  ``lidar_rpm`` (:attr:`VelodyneSensor.rpm`), so that every revolution fires
  exactly the same rays: their directions are computed once, at start.
* Within a VLP-16 block the lasers are shifted in azimuth by their firing time,
  exactly as the decoder (ROSVEL interpolation) reconstructs them
  (``wire.velodyne.scan_pattern``).
* Targets: the ground plane z = 0 and the scene's oriented boxes (the ego's own
  box excluded).  No return beyond ``lidar_max_range``: distance 0 in the packet.
  Single (strongest) return; no noise, no beam divergence, no multipath.
* Intensity: a constant per target (:data:`INTENSITY`).
* Sending, ``burst=True`` (default, as MORAI 25.S4 does: eriverOoO/heven-ad-2026
  ``docs/morai/MORAI_25S4_REVERSE_ENGINEERING_REPORT_2026-08-01.md`` section 7.2,
  the scan is captured within one rendered frame and its 75 VLP-16 packets are
  sent back to back): revolution ``k`` is captured at ``t0 + k * 60 / lidar_rpm``
  s of the simulated clock, from the first scene at or after it, every ray from
  that one ego pose (a snapshot), and all its packets are sent at once.  The
  number of firings per revolution is rounded to a whole number of packets
  (VLP-16 at 600 rpm: 1800 firings, 0.2 deg apart, 75 packets; HDL-32E: 2172,
  181 packets), so every revolution starts at azimuth 0 in its first packet.
  Timestamp (bytes 1200-1203) of every packet of a revolution: its capture time
  (microseconds past the hour of the simulated clock); heven-ad-2026's test
  fixture shows one footer timestamp per MORAI snapshot [S].
* Sending, ``burst=False`` (paced, like a real sensor): a packet is sent once
  the last of its firings is in the past of the simulated clock, so the stream
  leaves at the model's packet rate (754/s for the VLP-16, 1808/s for the
  HDL-32E at 600 rpm) in batches, one batch per emulator step, each cast from
  the ego pose of that step.  Timestamp: the simulated clock at the packet's
  first firing.
* Return mode 0x37 (strongest), product id of the model.
* A batch never exceeds one revolution: if the sender falls further behind (a
  stalled thread, a huge sync-mode step) the older packets (revolutions) are
  skipped and counted, not sent late in a flood.

No ROS.
"""

import math
import time
from typing import List, Optional

import numpy as np

from morai_bridge.wire import velodyne

from .scene import GROUND, NO_HIT, Mount, Scene, SceneBoxes, cast_rays, sensor_pose

__all__ = ["VelodyneSensor", "INTENSITY"]

#: intensity byte per target: obj_type -> value; 'ground' for the road.
INTENSITY = {0: 60, 1: 120, 2: 200, "ground": 30}
_KIND_INTENSITY = np.zeros(3, np.float64)
for _k in (0, 1, 2):
    _KIND_INTENSITY[_k] = INTENSITY[_k]


class VelodyneSensor:
    """One Velodyne-format 3D LiDAR on the ego.  Not thread-safe (one owner thread).

    ``update(scene)`` returns the packets that became due up to ``scene.time_ns``
    (see the module docstring) and advances the sensor's own schedule.
    """

    def __init__(self, model: str = "VLP16", rpm: float = 600.0, max_range: float = 100.0,
                 mount: Mount = Mount(), burst: bool = True):
        m = velodyne.get_model(model)
        if not (math.isfinite(rpm) and rpm > 0):
            raise ValueError("lidar_rpm must be > 0")
        limit = 0xFFFF * m.distance_resolution_m
        if not (0.0 < max_range <= limit):
            raise ValueError(f"lidar_max_range={max_range!r}: must be in (0, {limit:.2f}] m for {m.name}")
        self.model = m
        self.max_range = float(max_range)
        self.mount = mount
        self.burst = bool(burst)
        self.period_ns = int(round(m.firing_period_us * 1000.0))
        self.cpp = m.columns_per_packet(False)
        self.columns = n = max(1, int(round(360.0 / velodyne.firing_step_deg(m, rpm))))
        if self.burst:      # whole packets per revolution: each one starts at azimuth 0
            self.columns = n = self.cpp * max(1, int(round(n / self.cpp)))
        self.step_deg = 360.0 / n
        #: rotation rate of the firings, rpm (a whole number of firings per revolution)
        self.firing_rpm = self.step_deg / (6.0 * m.firing_period_us * 1e-6)
        #: effective rotation rate, rpm: revolutions per minute sent (burst: as configured)
        self.rpm = float(rpm) if self.burst else self.firing_rpm
        self.revolution_ns = int(round(60e9 / float(rpm)))
        self.packet_ns = self.cpp * self.period_ns
        self.packets_per_revolution = n / self.cpp
        az, el = velodyne.scan_pattern(m, self.firing_rpm, 0.0, columns=n)
        a = np.radians(az)
        e = np.radians(el)[None, :]
        # decoder convention: x = R cos(e) cos(a), y = -R cos(e) sin(a), z = R sin(e)
        dirs = np.empty((n, m.lasers, 3))
        dirs[..., 0] = np.cos(e) * np.cos(a)
        dirs[..., 1] = -np.cos(e) * np.sin(a)
        dirs[..., 2] = np.broadcast_to(np.sin(e), a.shape)
        self._dirs = dirs                     # sensor frame, per column and laser
        self._t0: Optional[int] = None
        self.next_packet = 0                  # global index of the next packet to send
        self.next_revolution = 0              # burst: index of the next revolution to capture
        # counters
        self.packets = 0
        self.skipped = 0
        self.work_s = 0.0                     # time spent casting + encoding
        self.columns_done = 0

    @property
    def revolutions(self) -> int:
        """Whole revolutions sent (columns sent / columns per revolution)."""
        return self.columns_done // self.columns

    @property
    def ms_per_revolution(self) -> float:
        """Mean CPU time (wall clock of the owner thread) per revolution, ms."""
        if not self.columns_done:
            return 0.0
        return 1000.0 * self.work_s * self.columns / self.columns_done

    def reset_clock(self, time_ns: int) -> None:
        """Column 0 fires (burst: revolution 0 is captured) at ``time_ns``; the schedule starts again."""
        self._t0 = int(time_ns)
        self.next_packet = 0
        self.next_revolution = 0

    def update(self, scene: Scene, boxes: Optional[SceneBoxes] = None) -> List[bytes]:
        """The packets due at ``scene.time_ns``, cast in ``scene`` (``boxes``: its
        :class:`SceneBoxes`, when the caller already has them)."""
        if self._t0 is None:
            self.reset_clock(scene.time_ns)
        if self.burst:
            return self._burst(scene, boxes)
        due = (scene.time_ns - self._t0) // self.packet_ns
        if due <= self.next_packet:
            return []
        cap = int(math.ceil(self.packets_per_revolution))
        if due - self.next_packet > cap:
            self.skipped += due - cap - self.next_packet
            self.next_packet = due - cap
        started = time.perf_counter()
        n0, n1 = self.next_packet * self.cpp, due * self.cpp
        packets = self.cast_columns(n0, n1, scene, boxes)
        self.work_s += time.perf_counter() - started
        self.columns_done += n1 - n0
        self.packets += len(packets)
        self.next_packet = due
        return packets

    def _burst(self, scene: Scene, boxes: Optional[SceneBoxes]) -> List[bytes]:
        """The newest revolution captured by ``scene.time_ns``, all its packets (module docstring)."""
        if scene.time_ns < self._t0:
            return []
        due = (scene.time_ns - self._t0) // self.revolution_ns + 1       # revolutions captured by now
        if due <= self.next_revolution:
            return []
        per = self.columns // self.cpp
        self.skipped += (due - 1 - self.next_revolution) * per
        k = due - 1
        started = time.perf_counter()
        packets = self.cast_columns(k * self.columns, (k + 1) * self.columns, scene, boxes,
                                    capture_ns=self._t0 + k * self.revolution_ns)
        self.work_s += time.perf_counter() - started
        self.columns_done += self.columns
        self.packets += len(packets)
        self.next_revolution = due
        return packets

    def cast_columns(self, n0: int, n1: int, scene: Scene,
                     boxes: Optional[SceneBoxes] = None, capture_ns: Optional[int] = None) -> List[bytes]:
        """Packets of the global columns ``n0`` (a packet boundary) to ``n1``; every packet stamped
        with ``capture_ns`` if given, else with the time of its first firing."""
        ranges, intensity = self.ranges(n0, n1, scene, boxes)
        t0 = self._t0 if self._t0 is not None else 0
        packets = velodyne.packets_from_ranges(
            self.model, ranges, intensity, rpm=self.firing_rpm,
            start_azimuth_deg=(n0 % self.columns) * self.step_deg,
            start_time_us=(t0 + n0 * self.period_ns) // 1000)
        # stamp each packet with its own first firing, truncated to the microsecond (the
        # codec adds rounded packet periods to the first stamp: up to 1 us apart)
        first = t0 + (n0 + self.cpp * np.arange(len(packets), dtype=np.int64)) * self.period_ns
        rec = np.frombuffer(b"".join(packets), dtype=velodyne.PACKET_DTYPE).copy()
        if capture_ns is not None:
            first = np.full(len(packets), int(capture_ns), np.int64)
        rec["stamp"] = (first // 1000) % velodyne.HOUR_US
        raw = rec.tobytes()
        size = velodyne.PACKET_SIZE
        return [raw[i * size:(i + 1) * size] for i in range(len(packets))]

    def ranges(self, n0: int, n1: int, scene: Scene, boxes: Optional[SceneBoxes] = None):
        """(ranges m, intensities) of columns n0..n1, shaped (C, lasers); inf = no return."""
        if boxes is None:
            boxes = SceneBoxes.of(scene)
        rot, origin = sensor_pose(scene.ego, self.mount)
        idx = np.arange(n0, n1) % self.columns
        local = self._dirs[idx]                                  # (C, L, 3)
        world = local.reshape(-1, 3) @ rot.T
        t, hit = cast_rays(origin, world, boxes, self.max_range, ground=True)
        inten = np.zeros(len(t))
        on_box = hit >= 0
        if len(boxes):
            inten[on_box] = _KIND_INTENSITY[np.clip(boxes.kinds[hit[on_box]], 0, 2)]
        inten[hit == GROUND] = INTENSITY["ground"]
        t[hit == NO_HIT] = np.inf
        shape = local.shape[:2]
        return t.reshape(shape), inten.reshape(shape)
