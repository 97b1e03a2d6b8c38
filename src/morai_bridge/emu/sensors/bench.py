"""CPU time of the emulated sensors: ``python3 -m morai_bridge.emu.sensors.bench``.

Casts / renders in the calling thread (no sockets) against a scene of
``--objects`` boxes around the ego (default 12: cars, pedestrians, obstacles
within 40 m, some in the camera's view), and prints per LiDAR model the time of
one revolution (ray casting + packet encoding), the camera's time per frame
(rendering + JPEG) at the given sizes, and the 2D LiDAR's time per scan.
Median of ``--repeat`` runs.  No ROS.
"""

import math
import random
import statistics
import time

from morai_bridge.configuration.params import Param, parse_args
from morai_bridge.wire import velodyne

from .camera import CameraSensor
from .lidar import VelodyneSensor
from .scan2d import Lidar2DSensor
from .scene import Mount, Scene, SceneBoxes

__all__ = ["bench_scene", "lidar_ms", "camera_ms", "scan_ms", "main"]


def bench_scene(objects: int = 12, seed: int = 1) -> Scene:
    """Ego at the origin heading East; ``objects`` boxes 5..40 m around it."""
    rng = random.Random(seed)
    sizes = {1: (4.6, 1.9, 1.5), 0: (0.5, 0.5, 1.75), 2: (1.0, 1.0, 1.0)}
    objs = []
    for k in range(objects):
        kind = (1, 0, 2)[k % 3]
        r, a = rng.uniform(5.0, 40.0), rng.uniform(-math.pi, math.pi)
        if k % 2 == 0:                       # every other one ahead, in the camera's view
            a = rng.uniform(-0.6, 0.6)
        length, width, height = sizes[kind]
        objs.append((k + 1, kind, r * math.cos(a), r * math.sin(a), 0.0,
                     rng.uniform(-math.pi, math.pi), length, width, height))
    return Scene(0, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0), tuple(objs))


def _median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(1000.0 * (time.perf_counter() - t))
    return statistics.median(times)


def lidar_ms(model: str, scene: Scene, rpm: float = 600.0, repeat: int = 5) -> float:
    """ms per revolution (cast + encode of one revolution's packets)."""
    sensor = VelodyneSensor(model, rpm, 100.0, Mount(0.0, 0.0, 1.9))
    sensor.reset_clock(0)
    per_rev = int(math.ceil(sensor.packets_per_revolution)) * sensor.cpp

    def one():
        sensor.cast_columns(0, per_rev, scene, SceneBoxes.of(scene))
    return _median_ms(one, repeat)


def camera_ms(width: int, height: int, scene: Scene, repeat: int = 5) -> float:
    """ms per frame (render + JPEG + datagrams)."""
    cam = CameraSensor(width, height, 90.0, 80, "v24", Mount(1.5, 0.0, 1.4))
    return _median_ms(lambda: cam.datagrams(cam.render(scene)), repeat)


def scan_ms(scene: Scene, repeat: int = 20) -> float:
    sensor = Lidar2DSensor(10.0, Mount(2.4, 0.0, 0.5))
    return _median_ms(lambda: sensor.scan(scene), repeat)


#: the command line (configuration.params)
PARAMS = [
    Param("objects", 12, "boxes around the ego", minimum=0),
    Param("repeat", 5, "runs per measure (the median is printed)", minimum=1),
    Param("models", ",".join(velodyne.MODELS), "LiDAR models, comma separated"),
    Param("sizes", "640x360,1280x720", "camera sizes WIDTHxHEIGHT, comma separated"),
]


def main(argv=None) -> int:
    args = parse_args(PARAMS, argv, prog="python3 -m morai_bridge.emu.sensors.bench",
                      description=__doc__.split("\n\n")[0])
    scene = bench_scene(args.objects)
    print("scene: %d objects" % args.objects)
    for model in args.models.split(","):
        s = VelodyneSensor(model, 600.0, 100.0)
        ms = lidar_ms(model, scene, repeat=args.repeat)
        rays = s.columns * s.model.lasers
        print("lidar %-10s %5d rays/rev %7.1f packets/rev: %6.1f ms per revolution "
              "(%.0f %% of one core at 600 rpm)" % (model, rays, s.packets_per_revolution, ms,
                                                    ms / 100.0 * 100.0))
    for size in args.sizes.split(","):
        w, h = (int(v) for v in size.split("x"))
        ms = camera_ms(w, h, scene, args.repeat)
        print("camera %4dx%-4d: %6.1f ms per frame (%.0f %% of one core at 10 Hz)"
              % (w, h, ms, ms / 100.0 * 100.0))
    print(f"lidar2d: {scan_ms(scene):.2f} ms per scan")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
