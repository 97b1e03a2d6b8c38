"""The emulator's lock-step extension (ours, not the simulator's; opt-in with ``emulator_sync``).

``#EmuSyncCmd$`` starts or stops sync mode, ``#EmuSyncTick$`` advances one
frame (``time_step_ms``) and sends every stream for it, and each request is
answered with one ``#EmuSyncState$`` on ``sync_state_port``
(codec :mod:`morai_bridge.wire.lockstep`, semantics in docs/emulator.md).

:class:`SyncExtension` is a mixin of :class:`~morai_bridge.emu.sim.SimEmulator`;
its handlers run with the emulator's lock held.  The sync socket and the
sync_state stream exist only when ``SimConfig.emulator_sync`` is True, so
without it none of this is reachable.  No ROS.
"""

import logging

from morai_bridge.wire import lockstep

from .sim_vehicle import Drive

__all__ = ["SyncExtension", "SYNC_HANDLERS"]

log = logging.getLogger("morai_bridge.emu.sim")

NS = 1_000_000_000


class SyncExtension:
    """Lock-step mode of :class:`~morai_bridge.emu.sim.SimEmulator` (lock held)."""

    def _on_sync_request(self, m) -> bool:
        reply = self._sync_cmd(m) if isinstance(m, lockstep.EmuSyncCmd) else self._sync_tick(m)
        if "sync_state" in self.dst_ports:
            self._send("sync_state", lockstep.encode(reply))
        return reply.result

    def _sync_state(self, reply_to, result, reason) -> lockstep.EmuSyncState:
        sec, nsec = divmod(self._time_ns, NS)
        return lockstep.EmuSyncState(reply_to, self._sync_on, result, self._paused, reason,
                                     self._frame, self._sync_step_ms if self._sync_on else 0,
                                     sec, nsec, self._sync_user if self._sync_on else "")

    def _sync_cmd(self, m) -> lockstep.EmuSyncState:
        refuse = lambda reason: self._sync_state(lockstep.REPLY_CMD, False, reason)  # noqa: E731
        if self._sync_on and m.user_id != self._sync_user:
            return refuse(lockstep.REASON_OTHER_USER)
        if m.start:
            step_ms = self._step_ns // 1_000_000
            if m.time_step_ms < step_ms or m.time_step_ms % step_ms:
                return refuse(lockstep.REASON_BAD_TIME_STEP)
            self._sync_on, self._sync_user = True, m.user_id
            self._sync_step_ms = m.time_step_ms
            log.info("sync mode on for %r: frame %d, time_step %d ms", m.user_id, self._frame,
                     m.time_step_ms)
        elif self._sync_on:
            self._sync_on = False
            log.info("sync mode off at frame %d: back to real time", self._frame)
        return self._sync_state(lockstep.REPLY_CMD, True, lockstep.REASON_OK)

    def _sync_tick(self, m) -> lockstep.EmuSyncState:
        refuse = lambda reason: self._sync_state(lockstep.REPLY_TICK, False, reason)  # noqa: E731
        if not self._sync_on:
            return refuse(lockstep.REASON_NOT_SYNC)
        if self._paused:
            return refuse(lockstep.REASON_PAUSED)
        if m.frame != 0 and m.frame != self._frame + 1:
            return refuse(lockstep.REASON_WRONG_FRAME)
        if m.has_ctrl:
            gear = m.gear if m.gear else self._ego.gear
            # the steer is an Ego Ctrl Cmd's: + left or + right as the sim_version says
            self._accept_drive(Drive(m.cmd_type, gear, m.velocity, m.acceleration, m.accel,
                                     m.brake, self._ctrl_sign * m.steer))
        for _ in range(self._sync_step_ms * 1_000_000 // self._step_ns):
            self._advance()
        self._frame += 1
        self._publish(set(self._periods) | {"collision", "vehicle_collision"})
        return self._sync_state(lockstep.REPLY_TICK, True, lockstep.REASON_OK)


#: message class -> name of its handler method
SYNC_HANDLERS = {
    lockstep.EmuSyncCmd: "_on_sync_request",
    lockstep.EmuSyncTick: "_on_sync_request",
}
