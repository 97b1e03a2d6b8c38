"""``python3 -m morai_bridge.emu.sim``: the simulator emulator's program (:mod:`.cli`)."""
import sys

from .cli import main

sys.exit(main())
