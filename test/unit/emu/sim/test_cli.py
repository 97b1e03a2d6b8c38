"""The emulator's program (emu/sim/cli.py, ``python3 -m morai_bridge.emu.sim``)."""

import os
import subprocess
import sys

import helpers

SRC = os.path.join(helpers.ROOT, "src")


def test_program_help():
    env = dict(os.environ, PYTHONPATH=SRC)
    out = subprocess.run([sys.executable, "-m", "morai_bridge.emu.sim", "--help"], env=env,
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    for flag in ("--ctrl-cmd-port", "--ego-status-port", "--deterministic", "--scenario",
                 "--sync-port", "--keyboard-mode"):
        assert flag in out.stdout
