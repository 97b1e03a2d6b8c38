"""The emulator's lock-step extension (ours, not the simulator's; opt-in with ``emulator_sync``).

``#EmuSyncCmd$`` starts or stops sync mode, ``#EmuSyncTick$`` advances one
frame (``time_step_ms``) and sends every stream for it, and each request is
answered with one ``#EmuSyncState$`` on ``sync_state_port``
(codec :mod:`morai_bridge.wire.lockstep`, semantics in docs/emulator.md).

:class:`LockStep` is a part of :class:`~morai_bridge.emu.sim.SimEmulator` (its ``lockstep``):
it holds the mode's own state (on, the user, the time step) and drives the emulator through
its public-to-the-package steps; its handler runs with the emulator's lock held.  The sync
socket and the sync_state stream exist only when ``SimConfig.emulator_sync`` is True, so
without it none of this is reachable.  No ROS.
"""

import logging

from morai_bridge.wire import lockstep
from morai_bridge.wire.units import NS

from .sim_vehicle import Drive

__all__ = ["LockStep"]

log = logging.getLogger("morai_bridge.emu.sim")


class LockStep:
    """The lock-step mode of one :class:`~morai_bridge.emu.sim.SimEmulator` (lock held)."""

    def __init__(self, sim):
        self.sim = sim
        self.on = False
        self.user = ""
        self.step_ms = 0

    def request(self, m) -> bool:
        """Handle an EmuSyncCmd or EmuSyncTick; the reply goes to the sync_state port."""
        sim = self.sim
        reply = self._cmd(m) if isinstance(m, lockstep.EmuSyncCmd) else self._tick(m)
        if "sync_state" in sim.dst_ports:
            sim._send("sync_state", lockstep.encode(reply))
        return reply.result

    def _state(self, reply_to, result, reason) -> lockstep.EmuSyncState:
        sim = self.sim
        sec, nsec = divmod(sim._time_ns, NS)
        return lockstep.EmuSyncState(reply_to, self.on, result, sim._paused, reason,
                                     sim._frame, self.step_ms if self.on else 0,
                                     sec, nsec, self.user if self.on else "")

    def _cmd(self, m) -> lockstep.EmuSyncState:
        sim = self.sim
        refuse = lambda reason: self._state(lockstep.REPLY_CMD, False, reason)  # noqa: E731
        if self.on and m.user_id != self.user:
            return refuse(lockstep.REASON_OTHER_USER)
        if m.start:
            step_ms = sim._step_ns // 1_000_000
            if m.time_step_ms < step_ms or m.time_step_ms % step_ms:
                return refuse(lockstep.REASON_BAD_TIME_STEP)
            self.on, self.user = True, m.user_id
            self.step_ms = m.time_step_ms
            log.info("sync mode on for %r: frame %d, time_step %d ms", m.user_id, sim._frame,
                     m.time_step_ms)
        elif self.on:
            self.on = False
            log.info("sync mode off at frame %d: back to real time", sim._frame)
        return self._state(lockstep.REPLY_CMD, True, lockstep.REASON_OK)

    def _tick(self, m) -> lockstep.EmuSyncState:
        sim = self.sim
        refuse = lambda reason: self._state(lockstep.REPLY_TICK, False, reason)  # noqa: E731
        if not self.on:
            return refuse(lockstep.REASON_NOT_SYNC)
        if sim._paused:
            return refuse(lockstep.REASON_PAUSED)
        if m.frame != 0 and m.frame != sim._frame + 1:
            return refuse(lockstep.REASON_WRONG_FRAME)
        if m.has_ctrl:
            gear = m.gear if m.gear else sim._ego.gear
            # the steer is an Ego Ctrl Cmd's: + left or + right as the sim_version says
            sim._accept_drive(Drive(m.cmd_type, gear, m.velocity, m.acceleration, m.accel,
                                    m.brake, sim._ctrl_sign * m.steer))
        for _ in range(self.step_ms * 1_000_000 // sim._step_ns):
            sim._advance()
        sim._frame += 1
        sim._publish(set(sim._periods) | {"collision", "vehicle_collision"})
        return self._state(lockstep.REPLY_TICK, True, lockstep.REASON_OK)
