"""The simulator emulator in MORAI's Serial+UDP mode: an ERP-42 PCU emulator drives the ego.

The PCU emulator (:class:`~morai_bridge.emu.pcu.emulator.PcuEmulator`) runs on a
pseudo-terminal (or a serial port); every state it computes from the commands
it obeys drives the emulated ego through :meth:`SimEmulator.drive_external`
(speed, gear, steering, brake), while the simulator's UDP streams go on as
usual.  The ``sim_emulator`` node uses it with ``~erp42_link``.  No ROS.
"""

import math

from morai_bridge.wire.enums import Gear
from morai_bridge.wire.erp42 import GEAR_BACKWARD, GEAR_FORWARD, GEAR_NEUTRAL
from morai_bridge.wire.units import MPS_TO_KMH

from ..pcu import PcuEmulator

__all__ = ["ERP_TO_MORAI_GEAR", "drive_from_pcu", "start_pcu"]

#: ERP-42 gear (PCU emulator) -> MORAI gear of the emulated ego
ERP_TO_MORAI_GEAR = {GEAR_FORWARD: int(Gear.D), GEAR_NEUTRAL: int(Gear.N), GEAR_BACKWARD: int(Gear.R)}


def drive_from_pcu(sim, max_steer_deg):
    """A PCU emulator ``on_state`` hook that drives ``sim``'s ego: the PCU's speed (km/h, in
    the gear's direction), gear (unknown: N), brake, and steering normalised by
    ``max_steer_deg`` (the PCU's + left becomes the wire's + right), clamped to +-1."""
    def on_state(st):
        gear = ERP_TO_MORAI_GEAR.get(st.gear, int(Gear.N))
        steer = -math.degrees(st.steer_rad) / max_steer_deg     # wire + = right
        sim.drive_external(speed_kmh=abs(st.speed_mps) * MPS_TO_KMH, gear=gear,
                           steer=max(-1.0, min(1.0, steer)), brake=st.brake)
    return on_state


def start_pcu(sim, link, init_s, max_steer_deg, log_error=None, on_dead=None):
    """A started PCU emulator on a pty with the symlink ``link`` (INIT phase ``init_s``
    seconds, encoder off as in the simulator) whose motion drives ``sim``'s ego; its
    worker is supervised with ``log_error`` and ``on_dead``."""
    return PcuEmulator(link=link, init_s=init_s, encoder_enabled=False,
                       on_state=drive_from_pcu(sim, max_steer_deg)).supervise(log_error, on_dead).start()
