#!/usr/bin/python3
"""The "serial floor" of the ERP-42 benchmark: the best cadence plain Python gets on this machine now.

Usage: serial_floor.py PORT RATE_HZ

Opens PORT with pyserial (as the node does) and writes a stop frame (ALIVE +1
per frame) on absolute deadlines of 1/RATE_HZ with time.sleep, from one
thread; another thread reads and discards the feedback.  No ROS, no command
conversion, no reconnection logic.  Runs until SIGINT/SIGTERM.  Measured by
the same PCU emulator at the same time as the node, its jitter is what the
machine's scheduling alone costs, so the node's own contribution is the
difference.
"""
import signal
import sys
import threading
import time
from pathlib import Path

import serial

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from morai_bridge.configuration.params import Param, parse_args  # noqa: E402
from morai_bridge.wire import erp42  # noqa: E402
from morai_bridge.wire.erp42 import convert as erp42_convert

#: the command line (configuration.params)
PARAMS = [Param("port", "", "the serial port to write to (a pty of the PCU emulator)", positional=True, metavar="PORT"),
          Param("rate", None, "frames per second", kind=float, above=0.0, positional=True, metavar="RATE_HZ")]


def main(argv=None):
    args = parse_args(PARAMS, argv, description=__doc__, raw_help=True)
    port, rate = args.port, args.rate
    done = threading.Event()
    signal.signal(signal.SIGINT, lambda *a: done.set())
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    s = serial.Serial(port, 115200, timeout=0.02, write_timeout=0.2)

    def drain():
        while not done.is_set():
            s.read(max(1, s.in_waiting))
    threading.Thread(target=drain, daemon=True).start()
    frames = [erp42.encode_command(erp42_convert.stop_command(alive=a)) for a in range(256)]
    period = 1.0 / rate
    deadline = time.monotonic()
    alive = 0
    while not done.is_set():
        s.write(frames[alive])
        alive = (alive + 1) & 0xFF
        deadline += period
        delay = deadline - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    s.close()


if __name__ == "__main__":
    main()
