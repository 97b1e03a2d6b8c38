"""The MORAI simulator emulator: the simulator's side of the UDP protocol (docs/emulator.md).

The library's names, from the modules that hold them: :class:`~.emulator.SimEmulator` (the
sockets and the loop) around a :class:`~.world.World`, :class:`~.config.SimConfig` and its
tables, the snapshot types.  ``python3 -m morai_bridge.emu.sim`` runs :func:`.cli.main`.  No ROS.
"""

from .config import DEFAULT_SCENARIO_DIR, EXTENSION_STREAMS, FIELD_DOCS, LISTEN_PORTS, SEND_PORTS, SimConfig
from .emulator import MAX_CATCHUP, SimEmulator
from .snapshot import (EgoSnapshot, IntersectionSnapshot, LightSnapshot, ObjectSnapshot, PortCounters,
                       SimSnapshot, SimStatusSnapshot, SyncSnapshot)
from .world import World

__all__ = ["SimConfig", "SimEmulator", "World", "SimSnapshot", "EgoSnapshot", "ObjectSnapshot",
           "LightSnapshot", "IntersectionSnapshot", "PortCounters", "SyncSnapshot",
           "SimStatusSnapshot", "LISTEN_PORTS", "SEND_PORTS", "EXTENSION_STREAMS", "FIELD_DOCS",
           "DEFAULT_SCENARIO_DIR", "MAX_CATCHUP"]
