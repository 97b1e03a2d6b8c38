"""The ERP-42 PCU emulator: the vehicle's side of the serial protocol (docs/erp42.md).

The library's names, from the modules that hold them: :class:`~.emulator.PcuEmulator` and its
``PARAMS``, the protocol's :class:`~.protocol.Mode` and :class:`~.protocol.PcuState`.
``python3 -m morai_bridge.emu.pcu`` runs :func:`.cli.main`.  No ROS.
"""

from .emulator import PARAMS, PcuEmulator
from .protocol import ALIVE_CHECKS, FEEDBACK_MODES, Mode, PcuState

__all__ = ["Mode", "PcuState", "PcuEmulator", "ALIVE_CHECKS", "FEEDBACK_MODES", "PARAMS"]
