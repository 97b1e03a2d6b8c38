#!/usr/bin/python3
"""The ERP-42 PCU emulator in a process of its own, recording when each command frame arrived.

Usage: pcu_timed.py LINK OUT.json

Creates a pty with the symlink LINK, prints "READY" once the link exists, and
runs the emulator (free-running 50 Hz feedback, encoder on) until SIGINT or
SIGTERM; then writes OUT.json: [[monotonic time, alive], ...] per command
frame, and the emulator's final state.  A process of its own so that nothing
else (rospy threads) competes with the emulator loop for the GIL: the arrival
times are time.monotonic() right after the read that completed each frame.
"""
import json
import signal
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from morai_bridge.configuration.params import Param, parse_args  # noqa: E402
from morai_bridge.emu.pcu import PcuEmulator  # noqa: E402

#: the command line (configuration.params)
PARAMS = [Param("link", "", "the symlink to create to the emulator's pty", positional=True, metavar="LINK"),
          Param("out", "", "the JSON file written at the end: command frame arrivals and the final state",
                positional=True, metavar="OUT.json")]


class TimedPcu(PcuEmulator):
    def __init__(self, *a, **kw):
        self.arrivals = []
        super().__init__(*a, **kw)

    def _accept_command(self, cmd, now):
        self.arrivals.append((now, cmd.alive))
        super()._accept_command(cmd, now)


def main(argv=None):
    args = parse_args(PARAMS, argv, description=__doc__, raw_help=True)
    link, out = args.link, args.out
    done = threading.Event()
    signal.signal(signal.SIGINT, lambda *a: done.set())
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    pcu = TimedPcu(link=link, init_s=1.0).start()
    print("READY", flush=True)
    while not done.is_set():
        signal.pause()          # no periodic wake-up of this thread: only the emulator loop runs
    st = pcu.state
    pcu.close()
    with open(out, "w") as f:
        json.dump({"arrivals": pcu.arrivals, "mode": st.mode.name, "alive_errors": st.alive_errors,
                   "overruns": st.overruns, "feedback_sent": st.feedback_sent}, f)


if __name__ == "__main__":
    main()
