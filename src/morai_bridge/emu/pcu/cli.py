"""``python3 -m morai_bridge.emu.pcu``: the ERP-42 PCU emulator as a program (no ROS).

It prints ``PCU emulator ready: device=/dev/pts/N link=...`` once, then (unless
``--status-s 0``) a status line per interval, and exits cleanly on
SIGINT/SIGTERM, removing the symlink.  Its options are the pcu_emulator node's
(:data:`~morai_bridge.emu.pcu.emulator.PARAMS`; the command line is :func:`~morai_bridge.configuration.params.command_line`'s)
but for ``--link`` and ``--port`` (none by default), ``--rc-manual`` and ``--no-encoder``, and its
own (:data:`OWN_PARAMS`, ``--rc-off``, ``--seed``, ``-v``).  See docs/erp42.md.
"""

import logging
import signal
import sys
import threading

from morai_bridge.configuration.params import Param, command_line

from .emulator import PARAMS, PcuEmulator
from .vehicle import VehicleModel

__all__ = ["main"]

#: the node's parameters this program spells its own way (below)
_SPELLED_OTHERWISE = ("link", "port", "rc_auto", "encoder_enabled")
#: options of this program only
OWN_PARAMS = [
    Param("encoder_sign", 1, "+1 if ENC grows when driving forward", choices=(-1, 1)),
    Param("steer_rate_rad_s", 0.8, "steering rate limit of the simulated platform [rad/s]"),
    Param("false_headers", False, "a false STX header before every feedback frame"),
    Param("status_s", 1.0, "print a status line every this many seconds (0 = never)"),
]


#: the options this program spells its own way, before the node's (help order)
_OWN_SPELLING = [
    Param("port", None, "use this serial device instead of creating a pty", metavar="PORT"),
    Param("link", None, "create a symlink at this path pointing to the device", metavar="LINK"),
    Param("rc_manual", False, "RC switch in Manual at start", switch=True),
    Param("rc_off", False, "platform powered with the RC off", switch=True),
    Param("no_encoder", False, "ENC always 0 (like the MORAI simulator)", switch=True),
]
#: the options after the node's
_LAST = [
    Param("seed", None, "seed of the noise generator", kind=int, metavar="SEED"),
    Param("verbose", False, "log mode changes", flags=("-v", "--verbose")),
]


def _parser():
    return command_line(
        _OWN_SPELLING + [q for q in PARAMS if q.name not in _SPELLED_OTHERWISE] + OWN_PARAMS + _LAST,
        prog="python3 -m morai_bridge.emu.pcu",
        description="ERP-42 PCU emulator: answers the ERP-42 serial protocol on a new pty "
                    "(default) or an existing serial port, until SIGINT/SIGTERM.")


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
        print(f"pcu emulator: {e}", file=sys.stderr)
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
