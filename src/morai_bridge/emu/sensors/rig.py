"""SensorRig: schedules the emulated sensors from the emulator's steps and sends their datagrams.

The emulator hands the rig one :class:`~.scene.Scene` per physics step
(:meth:`SensorRig.feed`, a few tuples built under the emulator's lock).  What is
due at that scene's simulated time is produced from it:

* 3D LiDAR: each revolution captured from one scene every ``60 / lidar_rpm`` s
  and sent as one burst of packets, as MORAI does (:mod:`.lidar`);
* 2D LiDAR: one scan every ``1 / lidar2d_hz`` s of simulated time;
* camera: one frame every ``1 / camera_hz`` s, then its boxes.

The first frame / scan is due one period after the clock was reset
(:meth:`reset_clock`: at construction and when the emulator's loop starts).  If
several periods passed since the last one (a slow renderer), one frame is made
from the newest scene and the others are counted as skipped.

Threads: without :meth:`start` (tests, manual ``SimEmulator.step``) the work is
done in the caller's thread, inside ``feed``, so it is deterministic.  After
:meth:`start` it runs in a supervised worker thread
(:class:`morai_bridge.link.workers.Worker` ``sim_emulator_sensors``): ``feed`` only
stores the scene (the newest one wins: an unprocessed older scene is replaced
and counted in ``scenes_replaced``), so a slow sensor never makes the
emulator's ground-truth steps late.  Datagrams leave from the rig's own socket
to ``user_ip``.  No ROS.
"""

import threading
from typing import Dict, NamedTuple, Optional

from morai_bridge.configuration.params import DISABLED
from morai_bridge.link.workers import Worker
from morai_bridge.link.transport import UdpSender
from morai_bridge.wire.units import NS

from .lidar import VelodyneSensor
from .scan2d import Lidar2DSensor
from .scene import Mount, Scene, SceneBoxes

__all__ = ["SensorRig", "SensorsSnapshot", "mount_of", "SENSOR_PREFIXES"]

#: config prefix of each sensor: <prefix>_port, <prefix>_x ... <prefix>_yaw
SENSOR_PREFIXES = ("camera", "lidar", "lidar2d")


def mount_of(cfg, prefix: str) -> Mount:
    """The mount pose ``<prefix>_x, _y, _z, _roll, _pitch, _yaw`` of a config."""
    return Mount(*(float(getattr(cfg, f"{prefix}_{f}")) for f in Mount._fields))


class SensorsSnapshot(NamedTuple):
    """Counters of the sensor streams (camera, 3D LiDAR, 2D LiDAR), in
    :attr:`morai_bridge.emu.sim.snapshot.SimSnapshot.sensor_streams`."""

    ports: Dict[str, int]         # enabled sensor -> destination port
    camera_frames: int = 0        # JPEG frames sent
    camera_datagrams: int = 0     # "MOR" datagrams sent
    camera_box_datagrams: int = 0  # "BOX" datagrams sent
    camera_skipped: int = 0       # frame times that passed without a frame (renderer behind)
    camera_ms: float = 0.0        # mean render + JPEG time per frame, ms
    camera_ms_max: float = 0.0
    camera_jpeg_bytes: int = 0    # size of the last JPEG
    lidar_packets: int = 0        # 1206-byte packets sent
    lidar_revolutions: int = 0    # whole revolutions sent
    lidar_skipped: int = 0        # packets skipped (sender more than a revolution behind)
    lidar_ms_per_rev: float = 0.0  # mean ray-cast + encode time per revolution, ms
    lidar_rpm: float = 0.0        # effective rotation rate (whole firings per revolution)
    lidar2d_scans: int = 0        # 2D scans sent
    lidar2d_skipped: int = 0
    lidar2d_ms: float = 0.0       # mean time per scan, ms
    scenes: int = 0               # world states handed to the sensors (one per step)
    scenes_replaced: int = 0      # replaced by a newer one before the sensor thread took it
    send_errors: int = 0
    last_error: str = ""


class _Periodic:
    """A stream due every ``period_ns`` of simulated time after ``t0``."""

    __slots__ = ("period_ns", "next_ns", "skipped")

    def __init__(self, hz: float):
        self.period_ns = max(1, int(round(NS / float(hz))))
        self.next_ns = self.period_ns
        self.skipped = 0

    def reset(self, t0: int) -> None:
        self.next_ns = int(t0) + self.period_ns

    def due(self, t: int) -> bool:
        if t < self.next_ns:
            return False
        missed = (t - self.next_ns) // self.period_ns
        self.skipped += missed
        self.next_ns += (missed + 1) * self.period_ns
        return True


class SensorRig:
    """The sensors of one emulated ego, from a :class:`~morai_bridge.emu.sim_config.SimConfig`."""

    def __init__(self, cfg, bind_ip: str, user_ip: str):
        self.ports: Dict[str, int] = {p: getattr(cfg, p + "_port") for p in SENSOR_PREFIXES
                                      if getattr(cfg, p + "_port") != DISABLED}
        self.camera = None
        self.lidar: Optional[VelodyneSensor] = None
        self.scan2d: Optional[Lidar2DSensor] = None
        if "camera" in self.ports:
            from .camera import CameraSensor     # PIL only when a camera is configured
            self.camera = CameraSensor(cfg.camera_width, cfg.camera_height, cfg.camera_fov_deg,
                                       cfg.camera_jpeg_quality, cfg.camera_header,
                                       mount_of(cfg, "camera"))
            self._camera_due = _Periodic(cfg.camera_hz)
        if "lidar" in self.ports:
            self.lidar = VelodyneSensor(cfg.lidar_model, cfg.lidar_rpm, cfg.lidar_max_range,
                                        mount_of(cfg, "lidar"))
        if "lidar2d" in self.ports:
            self.scan2d = Lidar2DSensor(cfg.lidar2d_range_max, mount_of(cfg, "lidar2d"))
            self._scan_due = _Periodic(cfg.lidar2d_hz)
        self._sender = UdpSender(bind_ip, user_ip)
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._latest: Optional[Scene] = None
        self.worker: Optional[Worker] = None
        # counters (written by the thread doing the work)
        self.scenes = 0
        self.scenes_replaced = 0
        self.camera_frames = self.camera_datagrams = self.camera_box_datagrams = 0
        self.camera_jpeg_bytes = 0
        self._camera_ms_sum = self._camera_ms_max = 0.0
        self._camera_rendered = 0
        self.lidar_packets = 0
        self.lidar2d_scans = 0
        self.send_errors = 0
        self.last_error = ""

    # ------------------------------------------------------------ life
    def reset_clock(self, time_ns: int) -> None:
        """Restart every schedule at ``time_ns`` (simulated clock)."""
        with self._lock:
            self._latest = None
            if self.lidar is not None:
                self.lidar.reset_clock(time_ns)
            if self.camera is not None:
                self._camera_due.reset(time_ns)
            if self.scan2d is not None:
                self._scan_due.reset(time_ns)

    def start(self, log=None, on_dead=None, backoff_s: float = 0.1) -> "SensorRig":
        """Do the work in a supervised worker thread from now on."""
        if self.worker is None:
            self.worker = Worker("sim_emulator_sensors", self._body, log=log, on_dead=on_dead,
                                 backoff_s=backoff_s).start()
        return self

    def close(self) -> None:
        if self.worker is not None:
            self.worker.stop(2.0)
        self._event.set()
        self._sender.close()

    # ------------------------------------------------------------ work
    def feed(self, scene: Scene) -> None:
        """A new world state (called by the emulator after each physics step)."""
        self.scenes += 1
        if self.worker is None:
            self.process(scene)
            return
        with self._lock:
            if self._latest is not None:
                self.scenes_replaced += 1
            self._latest = scene
        self._event.set()

    def _body(self) -> None:
        if not self._event.wait(0.1):
            return
        with self._lock:
            scene, self._latest = self._latest, None
            self._event.clear()
        if scene is not None:
            self.process(scene)

    def _send(self, port: int, data: bytes) -> bool:
        if self._sender.send(port, data):
            return True
        self.send_errors += 1
        self.last_error = self._sender.last_error
        return False

    def process(self, scene: Scene) -> None:
        """Produce and send what is due at ``scene.time_ns`` (lidar, 2D scan, camera)."""
        boxes = SceneBoxes.of(scene)
        t = scene.time_ns
        if self.lidar is not None:
            port = self.ports["lidar"]
            for packet in self.lidar.update(scene, boxes):
                if self._send(port, packet):
                    self.lidar_packets += 1
        if self.scan2d is not None and self._scan_due.due(t):
            if self._send(self.ports["lidar2d"], self.scan2d.scan(scene, boxes)):
                self.lidar2d_scans += 1
        if self.camera is not None and self._camera_due.due(t):
            frame = self.camera.render(scene, boxes)
            chunks, box_datagrams = self.camera.datagrams(frame)
            port = self.ports["camera"]
            ok = True
            for d in chunks:
                if self._send(port, d):
                    self.camera_datagrams += 1
                else:
                    ok = False
            for d in box_datagrams:
                if self._send(port, d):
                    self.camera_box_datagrams += 1
            if ok:
                self.camera_frames += 1
            self.camera_jpeg_bytes = len(frame.jpeg)
            self._camera_ms_sum += frame.render_ms
            self._camera_ms_max = max(self._camera_ms_max, frame.render_ms)
            self._camera_rendered += 1

    # ------------------------------------------------------------ counters
    def snapshot(self) -> SensorsSnapshot:
        rendered = self._camera_rendered
        lidar, scan = self.lidar, self.scan2d
        return SensorsSnapshot(
            dict(self.ports), self.camera_frames, self.camera_datagrams,
            self.camera_box_datagrams,
            self._camera_due.skipped if self.camera is not None else 0,
            self._camera_ms_sum / rendered if rendered else 0.0, self._camera_ms_max,
            self.camera_jpeg_bytes, self.lidar_packets,
            lidar.revolutions if lidar is not None else 0,
            lidar.skipped if lidar is not None else 0,
            lidar.ms_per_revolution if lidar is not None else 0.0,
            lidar.rpm if lidar is not None else 0.0,
            self.lidar2d_scans, self._scan_due.skipped if scan is not None else 0,
            scan.ms_per_scan if scan is not None else 0.0,
            self.scenes, self.scenes_replaced, self.send_errors, self.last_error)
