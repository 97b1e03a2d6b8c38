"""Fault injection of the ERP-42 PCU emulator: what a noisy line, a bad cable or a silent PCU does.

:class:`FaultInjection` is a mixin of :class:`~morai_bridge.emu.pcu.PcuEmulator`.
Knobs (plain attributes, change them at any time): ``noise_bytes``,
``false_headers``, ``split_writes`` / ``split_gap_s``, ``feedback_paused``;
actions: :meth:`drop_feedback`, :meth:`inject`, :meth:`unplug`, :meth:`replug`.
:meth:`_send` writes one feedback frame with the configured faults (loop
thread only).  No ROS.
"""

import random
import time

from morai_bridge.wire.erp42 import STX

__all__ = ["FaultInjection"]


class FaultInjection:
    """Fault knobs and the fault-aware frame writer (uses the emulator's lock and link)."""

    def _init_faults(self, seed) -> None:
        #: Random bytes written before every feedback frame (0 = off).
        self.noise_bytes = 0
        #: Write a false header (``STX`` + 2 bytes, always rejected) before every frame.
        self.false_headers = False
        #: Write each feedback frame in this many pieces (<= 1 = one write).
        self.split_writes = 0
        #: Pause between the pieces of a split write.
        self.split_gap_s = 0.002
        #: While true no feedback is written and ALIVE does not advance (silent PCU).
        self.feedback_paused = False
        self._rng = random.Random(seed)
        self._drop_next = 0

    # -- actions -----------------------------------------------------------------

    def drop_feedback(self, count: int = 1) -> None:
        """Lose the next ``count`` feedback frames: ALIVE advances but nothing is written."""
        with self._lock:
            self._drop_next += max(0, int(count))

    def inject(self, data: bytes) -> None:
        """Write raw bytes to the client (between frames), e.g. a false header."""
        self._call(lambda: self._write_raw(bytes(data)))

    def unplug(self) -> None:
        """Close the link as if the cable were pulled.

        For a pty: master and slave are closed, so the device path disappears
        and an open client gets I/O errors; the symlink is removed.  The
        emulator keeps running (the watchdog drops to AUTO_FAIL).
        """
        self._call(self._close_link)

    def replug(self) -> None:
        """Open a new link (a new pty pair) and re-point the symlink; the framer is reset."""
        self._call(self._open_link)

    # -- internals -----------------------------------------------------------------

    def _take_drop(self) -> bool:
        """True (and counted as dropped) when the next frame is to be lost (lock held)."""
        if self._drop_next:
            self._drop_next -= 1
            self._dropped += 1
            return True
        return False

    def _noise(self, n: int) -> bytes:
        # as random.Random.randbytes (Python 3.9+): the same bytes for the same seed
        return self._rng.getrandbits(n * 8).to_bytes(n, "little")

    def _send(self, frame: bytes) -> None:
        """Write one feedback frame with the configured faults (loop thread only)."""
        if self._link is None:
            return
        prefix = b""
        if self.noise_bytes > 0:
            prefix += self._noise(self.noise_bytes)
        if self.false_headers:
            # GEAR position of this candidate holds the real frame's "S": always rejected.
            prefix += STX + bytes((1, 0))
        if prefix:
            self._write_raw(prefix)
        pieces = max(1, int(self.split_writes))
        if pieces == 1:
            ok = self._write_raw(frame)
        else:
            size = -(-len(frame) // pieces)
            ok = True
            for i in range(0, len(frame), size):
                if i:
                    time.sleep(self.split_gap_s)
                ok = self._write_raw(frame[i:i + size]) and ok
        with self._lock:
            if ok:
                self._sent += 1
            else:
                self._dropped += 1
