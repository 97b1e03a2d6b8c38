"""``python3 -m morai_bridge.emu.sim``: the simulator emulator as a program (no ROS).

Every :class:`~morai_bridge.emu.sim.config.SimConfig` field is a flag (``_``
becoming ``-``; :data:`~morai_bridge.emu.sim.config.PARAMS` through
:func:`~morai_bridge.configuration.params.add_options`); booleans take ``--name`` / ``--no-name``.  The sensors too:
``--camera-port 1232 --lidar-port 2368 --lidar-model HDL32E --lidar2d-port 2370``.  Program-only flags:
``--status-s``, ``--list-scenarios``, ``-v/--verbose``.  It logs the bound and
destination ports, one status line every ``--status-s`` seconds, and stops on
Ctrl-C / SIGTERM.
"""

import logging
import os
import signal
import sys
import threading

from morai_bridge.configuration.params import Param, command_line

from .emulator import SimEmulator
from .config import PARAMS, SimConfig

__all__ = ["main"]

log = logging.getLogger("morai_bridge.emu.sim")


#: options of this program only (after SimConfig's)
OWN_PARAMS = [
    Param("status_s", 5.0, "print a status line every this many seconds (0 = never)", metavar="STATUS_S"),
    Param("list_scenarios", False, "list the scenarios in --scenario-dir and exit", switch=True),
    Param("verbose", False, "debug logging", flags=("-v", "--verbose")),
]


def _parser():
    return command_line(
        PARAMS + OWN_PARAMS, prog="python3 -m morai_bridge.emu.sim", defaults_in_help=True,
        description="MORAI simulator emulator: the simulator side of the UDP protocol "
                    "(see docs/emulator.md). Ctrl-C stops it. Booleans: --name / --no-name.")


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.list_scenarios:
        try:
            names = sorted(f[:-5] for f in os.listdir(args.scenario_dir) if f.endswith(".json"))
        except OSError as e:
            print(f"cannot list {args.scenario_dir}: {e}", file=sys.stderr)
            return 2
        print("\n".join(names))
        return 0
    cfg = SimConfig(**{f: getattr(args, f) for f in SimConfig._fields})
    try:
        sim = SimEmulator(cfg)
    except (ValueError, RuntimeError, OSError) as e:
        print(f"morai sim emulator: {e}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with sim:
        sim.start()
        log.info("listening on %s: %s", cfg.listen_ip,
                 ", ".join(f"{n} {p}" for n, p in sim.ports.items()))
        log.info("sending to %s: %s", cfg.user_ip,
                 ", ".join(f"{n} {p}" for n, p in sim.dst_ports.items()))
        if sim.sensors is not None:
            log.info("sensors to %s: %s", cfg.user_ip,
                     ", ".join(f"{n} {p}" for n, p in sim.sensors.ports.items()))
        while not stop.wait(args.status_s if args.status_s > 0 else 3600):
            s = sim.snapshot()
            e = s.ego
            log.info("t=%d.%03d %s ego (%.1f, %.1f) yaw %.1f v %.1f km/h gear %d mode %d, "
                     "%d objects, contacts %s%s", s.sec, s.nsec // 1_000_000,
                     "PAUSED" if s.paused else "playing", e.x, e.y, e.yaw_deg, e.speed_kmh,
                     e.gear, e.ctrl_mode, len(s.objects), list(s.collisions) or "none",
                     f", sync frame {s.sync.frame}" if s.sync.on else "")
            if s.sensor_streams is not None:
                r = s.sensor_streams
                log.info("sensors: camera %d frames (%.1f ms each), lidar %d packets / %d "
                         "revolutions (%.1f ms each), 2D %d scans; skipped %d / %d / %d",
                         r.camera_frames, r.camera_ms, r.lidar_packets, r.lidar_revolutions,
                         r.lidar_ms_per_rev, r.lidar2d_scans, r.camera_skipped,
                         r.lidar_skipped, r.lidar2d_skipped)
    return 0


if __name__ == "__main__":
    sys.exit(main())
