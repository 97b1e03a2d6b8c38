"""Fault injection of the ERP-42 PCU emulator: what a noisy line, a bad cable or a silent PCU does.

:class:`Faults` holds the knobs (plain attributes, change them at any time): ``noise_bytes``,
``false_headers``, ``split_writes`` / ``split_gap_s``, ``feedback_paused``, and the frames still to
drop; it says what to write around one feedback frame (:meth:`Faults.prefix`,
:meth:`Faults.pieces`) and whether to drop it (:meth:`Faults.take_drop`).  The
:class:`~.emulator.PcuEmulator` holds one (its ``faults``), shows the knobs as its own attributes,
and does the writing and the link's actions (``drop_feedback``, ``inject``, ``unplug``,
``replug``).  No ROS.
"""

import random

from morai_bridge.wire.erp42 import STX

__all__ = ["Faults"]


class Faults:
    """The fault knobs and the frames still to drop (the emulator's lock guards :meth:`drop` and
    :meth:`take_drop`)."""

    def __init__(self, seed=None):
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
        #: feedback frames dropped so far (ALIVE advanced, nothing written)
        self.dropped = 0
        self._rng = random.Random(seed)
        self._drop_next = 0

    def drop(self, count: int) -> None:
        """Lose the next ``count`` feedback frames."""
        self._drop_next += max(0, int(count))

    def take_drop(self) -> bool:
        """True (and counted as dropped) when the next frame is to be lost."""
        if self._drop_next:
            self._drop_next -= 1
            self.dropped += 1
            return True
        return False

    def _noise(self, n: int) -> bytes:
        # as random.Random.randbytes (Python 3.9+): the same bytes for the same seed
        return self._rng.getrandbits(n * 8).to_bytes(n, "little")

    def prefix(self) -> bytes:
        """What to write before a feedback frame: noise, a false header, or nothing."""
        prefix = b""
        if self.noise_bytes > 0:
            prefix += self._noise(self.noise_bytes)
        if self.false_headers:
            # GEAR position of this candidate holds the real frame's "S": always rejected.
            prefix += STX + bytes((1, 0))
        return prefix

    def pieces(self, frame: bytes) -> list:
        """The writes one frame is split into (one unless ``split_writes`` > 1)."""
        pieces = max(1, int(self.split_writes))
        if pieces == 1:
            return [frame]
        size = -(-len(frame) // pieces)
        return [frame[i:i + size] for i in range(0, len(frame), size)]
