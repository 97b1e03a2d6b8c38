"""The emulator's lock-step extension (ours, not the simulator's; opt-in with ``emulator_sync``).

``#EmuSyncCmd$`` starts or stops sync mode, ``#EmuSyncTick$`` advances one
frame (``time_step_ms``) and sends every stream for it, and each request is
answered with one ``#EmuSyncState$`` on ``sync_state_port``
(codec :mod:`morai_bridge.wire.udp.lockstep`, semantics in docs/emulator.md).

:class:`LockStep` is a part of :class:`~morai_bridge.emu.sim.emulator.SimEmulator` (its ``sync_mode``):
it owns the mode's state (on, the user, the time step, the frame) and reaches the world only
through the few :class:`LockStepHooks` the emulator gives it; its handler runs with the
emulator's lock held.  The sync
socket and the sync_state stream exist only when ``SimConfig.emulator_sync`` is True, so
without it none of this is reachable.  No ROS.
"""

import logging
from typing import Callable, NamedTuple

from morai_bridge.wire.udp import lockstep
from morai_bridge.wire.units import NS

from .snapshot import SyncSnapshot

__all__ = ["LockStep", "LockStepHooks"]

log = logging.getLogger("morai_bridge.emu.sim")


class LockStepHooks(NamedTuple):
    """What the lock-step mode asks of its emulator (the emulator's lock is held when it asks)."""

    clock_ns: Callable[[], int]         # the simulated clock, ns
    paused: Callable[[], bool]          # the simulation is paused (SimControl)
    drive: Callable[[object], bool]     # apply an EmuSyncTick's embedded control command
    advance: Callable[[int], None]      # advance this many physics steps, then send every stream
    reply: Callable[[bytes], None]      # send an EmuSyncState datagram on the sync_state port, if it is on


class LockStep:
    """The lock-step mode of one :class:`~morai_bridge.emu.sim.emulator.SimEmulator`: its own state (on, the
    user, the time step, the frame) and the requests that change it; the world is reached through
    the :class:`LockStepHooks` only (lock held)."""

    def __init__(self, step_ns: int, hooks: LockStepHooks):
        self.step_ns = step_ns
        self.hooks = hooks
        self.on = False
        self.user = ""
        self.step_ms = 0
        #: ticks made (EmuSyncTick frames)
        self.frame = 0

    def snapshot(self) -> SyncSnapshot:
        return SyncSnapshot(self.on, self.user, self.frame, self.step_ms)

    def request(self, m) -> bool:
        """Handle an EmuSyncCmd or EmuSyncTick; the reply goes to the sync_state port."""
        reply = self._cmd(m) if isinstance(m, lockstep.EmuSyncCmd) else self._tick(m)
        self.hooks.reply(lockstep.encode(reply))
        return reply.result

    def _state(self, reply_to, result, reason) -> lockstep.EmuSyncState:
        sec, nsec = divmod(self.hooks.clock_ns(), NS)
        return lockstep.EmuSyncState(reply_to, self.on, result, self.hooks.paused(), reason,
                                     self.frame, self.step_ms if self.on else 0,
                                     sec, nsec, self.user if self.on else "")

    def _cmd(self, m) -> lockstep.EmuSyncState:
        refuse = lambda reason: self._state(lockstep.REPLY_CMD, False, reason)  # noqa: E731
        if self.on and m.user_id != self.user:
            return refuse(lockstep.REASON_OTHER_USER)
        if m.start:
            step_ms = self.step_ns // 1_000_000
            if m.time_step_ms < step_ms or m.time_step_ms % step_ms:
                return refuse(lockstep.REASON_BAD_TIME_STEP)
            self.on, self.user = True, m.user_id
            self.step_ms = m.time_step_ms
            log.info("sync mode on for %r: frame %d, time_step %d ms", m.user_id, self.frame,
                     m.time_step_ms)
        elif self.on:
            self.on = False
            log.info("sync mode off at frame %d: back to real time", self.frame)
        return self._state(lockstep.REPLY_CMD, True, lockstep.REASON_OK)

    def _tick(self, m) -> lockstep.EmuSyncState:
        refuse = lambda reason: self._state(lockstep.REPLY_TICK, False, reason)  # noqa: E731
        if not self.on:
            return refuse(lockstep.REASON_NOT_SYNC)
        if self.hooks.paused():
            return refuse(lockstep.REASON_PAUSED)
        if m.frame != 0 and m.frame != self.frame + 1:
            return refuse(lockstep.REASON_WRONG_FRAME)
        if m.has_ctrl:
            self.hooks.drive(m)
        self.hooks.advance(self.step_ms * 1_000_000 // self.step_ns)
        self.frame += 1
        return self._state(lockstep.REPLY_TICK, True, lockstep.REASON_OK)
