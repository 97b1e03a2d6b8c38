"""``python3 -m morai_bridge.emu.pcu``: the ERP-42 PCU emulator as a program (no ROS).

It prints ``PCU emulator ready: device=/dev/pts/N link=...`` once, then (unless
``--status-s 0``) a status line per interval, and exits cleanly on
SIGINT/SIGTERM, removing the symlink.  See docs/erp42.md.
"""

import argparse
import logging
import signal
import sys
import threading

from .pcu import PcuEmulator
from .pcu_protocol import ALIVE_CHECKS, FEEDBACK_MODES
from .pcu_vehicle import VehicleModel

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python3 -m morai_bridge.emu.pcu",
        description="ERP-42 PCU emulator: answers the ERP-42 serial protocol on a new pty "
                    "(default) or an existing serial port, until SIGINT/SIGTERM.")
    p.add_argument("--port", help="use this serial device instead of creating a pty")
    p.add_argument("--link", help="create a symlink at this path pointing to the device")
    p.add_argument("--init-s", type=float, default=3.0, help="INIT duration (default 3.0)")
    p.add_argument("--alive-timeout-s", type=float, default=1.0,
                   help="watchdog: AUTO_FAIL after this long without a correct ALIVE")
    p.add_argument("--alive-check", choices=ALIVE_CHECKS, default="strict")
    p.add_argument("--auto-fail-latch", action="store_true",
                   help="leave AUTO_FAIL only via an RC Manual->Auto cycle")
    p.add_argument("--feedback-mode", choices=FEEDBACK_MODES, default="free_running")
    p.add_argument("--period-s", type=float, default=0.02, help="feedback period (0.02)")
    p.add_argument("--rc-manual", action="store_true", help="RC switch in Manual at start")
    p.add_argument("--rc-off", action="store_true", help="platform powered with the RC off")
    p.add_argument("--brake-min", type=int, default=1)
    p.add_argument("--brake-max", type=int, default=150)
    p.add_argument("--feedback-steer-sign", type=int, choices=(-1, 1), default=-1)
    p.add_argument("--no-encoder", action="store_true",
                   help="ENC always 0 (like the MORAI simulator)")
    p.add_argument("--encoder-ppr", type=float, default=100.0)
    p.add_argument("--encoder-sign", type=int, choices=(-1, 1), default=1)
    p.add_argument("--wheel-radius-m", type=float, default=0.27)
    p.add_argument("--accel-mps2", type=float, default=1.5)
    p.add_argument("--steer-rate-rad-s", type=float, default=0.8)
    p.add_argument("--noise-bytes", type=int, default=0,
                   help="random bytes before every feedback frame (fault injection)")
    p.add_argument("--false-headers", action="store_true",
                   help="a false STX header before every feedback frame")
    p.add_argument("--split-writes", type=int, default=0,
                   help="write each frame in this many pieces")
    p.add_argument("--seed", type=int, help="seed of the noise generator")
    p.add_argument("--status-s", type=float, default=1.0,
                   help="print a status line every this many seconds (0 = never)")
    p.add_argument("-v", "--verbose", action="store_true", help="log mode changes")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(message)s")
    try:
        pcu = PcuEmulator(
            args.port, link=args.link, init_s=args.init_s,
            alive_timeout_s=args.alive_timeout_s, alive_check=args.alive_check,
            auto_fail_latch=args.auto_fail_latch, feedback_mode=args.feedback_mode,
            period_s=args.period_s, rc_auto=not args.rc_manual, rc_powered=not args.rc_off,
            brake_min=args.brake_min, brake_max=args.brake_max,
            feedback_steer_sign=args.feedback_steer_sign,
            encoder_enabled=not args.no_encoder, encoder_ppr=args.encoder_ppr,
            encoder_sign=args.encoder_sign, wheel_radius_m=args.wheel_radius_m,
            vehicle=VehicleModel(accel_mps2=args.accel_mps2,
                                 steer_rate_rad_s=args.steer_rate_rad_s),
            seed=args.seed)
    except (OSError, ValueError) as e:
        print("pcu emulator: %s" % e, file=sys.stderr)
        return 2
    pcu.noise_bytes = args.noise_bytes
    pcu.false_headers = args.false_headers
    pcu.split_writes = args.split_writes

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with pcu:
        print("PCU emulator ready: device=%s%s" % (
            pcu.device_path, " link=%s" % pcu.link_path if pcu.link_path else ""), flush=True)
        while not stop.wait(args.status_s if args.status_s > 0 else 3600.0):
            if args.status_s > 0:
                s = pcu.state
                print("mode=%s speed=%d steer=%d brake=%d gear=%d enc=%d rx_ok=%d "
                      "rx_rejected=%d discarded=%d alive_errors=%d tx=%d" % (
                          s.mode, s.speed, s.steer, s.brake, s.gear, s.enc, s.frames_ok,
                          s.frames_rejected, s.bytes_discarded, s.alive_errors,
                          s.feedback_sent), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
