"""``python3 -m morai_bridge.emu.pcu``: the ERP-42 PCU emulator's program (:mod:`.cli`)."""
import sys

from .cli import main

sys.exit(main())
