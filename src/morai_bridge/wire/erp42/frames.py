"""ERP-42 V3.0 serial protocol: frame codec, stream framer and value conversions.

Everything here is pure Python without ROS imports, so the ROS serial driver,
the PCU emulator and the tests share one implementation.

Wire summary (see ``docs/erp42.md`` for the full description):

* command, UPPER -> PCU: 14 bytes, **big-endian** numbers
  ``"STX" AorM E-STOP GEAR SPEED(u16) STEER(i16) BRAKE ALIVE CR LF``
* feedback, PCU -> UPPER: 18 bytes, **little-endian** numbers
  ``"STX" AorM E-STOP GEAR SPEED(u16) STEER(i16) BRAKE ENC(i32) ALIVE CR LF``

There is no checksum and no length byte; :class:`Framer` recovers frames from
an arbitrary byte stream using the header, the trailer and the enumerated
fields (AorM <= 1, E-STOP <= 1, GEAR <= 2).

Three layers, each usable on its own:

1. codec: :class:`Command` / :class:`Feedback` and ``encode_*`` / ``decode_*``;
2. :class:`Framer` (:class:`CommandFramer`, :class:`FeedbackFramer`);
3. conversions with explicit parameters (:class:`Erp42Params`), in :mod:`.convert` (which imports
   this module, not the other way round):
   :func:`ctrl_to_command`, :func:`stop_command`, :func:`feedback_to_values`,
   :func:`encoder_delta`, :func:`encoder_travel_m`.
"""

import struct
from typing import Any, List, NamedTuple, Optional, Union

__all__ = [
    "STX", "ETX", "COMMAND_LEN", "FEEDBACK_LEN", "COMMAND_STRUCT", "FEEDBACK_STRUCT",
    "GEAR_FORWARD", "GEAR_NEUTRAL", "GEAR_BACKWARD",
    "SPEED_MAX_RAW", "STEER_MAX_RAW", "STEER_RAW_PER_DEG", "LONGL_CMD_VELOCITY",
    "Erp42Error", "CommandRejected",
    "Command", "Feedback",
    "encode_command", "decode_command", "encode_feedback", "decode_feedback",
    "Framer", "CommandFramer", "FeedbackFramer",
]

# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------

#: Frame header: the three ASCII letters S, T, X (not the control character 0x02).
STX = b"STX"
#: Frame trailer: CR LF.
ETX = b"\r\n"

COMMAND_LEN = 14
FEEDBACK_LEN = 18

#: UPPER -> PCU; fields: header, aorm, estop, gear, speed, steer, brake, alive, trailer.
COMMAND_STRUCT = struct.Struct(">3sBBBHhBB2s")
#: PCU -> UPPER; fields: header, aorm, estop, gear, speed, steer, brake, enc, alive, trailer.
FEEDBACK_STRUCT = struct.Struct("<3sBBBHhBiB2s")

GEAR_FORWARD = 0
GEAR_NEUTRAL = 1
GEAR_BACKWARD = 2

#: Protocol range of SPEED (km/h x 10), i.e. 20.0 km/h.
SPEED_MAX_RAW = 200
#: Protocol range of STEER (deg x 71), i.e. about 28.17 deg.
STEER_MAX_RAW = 2000
#: STEER scale: raw units per degree.
STEER_RAW_PER_DEG = 71
#: The only CtrlCmd.longlCmdType that maps onto the PCU's speed command.
LONGL_CMD_VELOCITY = 2

_S, _T = STX[0], STX[1]
_CR, _LF = ETX[0], ETX[1]

# Offsets shared by both directions.
_OFF_AORM, _OFF_ESTOP, _OFF_GEAR = 3, 4, 5


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

class Erp42Error(ValueError):
    """Malformed frame, unencodable value or invalid parameter."""


class CommandRejected(Erp42Error):
    """A CtrlCmd that must not produce a command frame.

    ``reason`` is a short machine-readable tag: ``"unsupported_type"`` (a
    longlCmdType other than 2) or ``"non_finite"`` (NaN or infinity in an
    input).  The driver should drop the message (throttled warning) and must
    not refresh its command timeout with it.
    """

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


# ---------------------------------------------------------------------------
# Frame objects and codec
# ---------------------------------------------------------------------------

class Command(NamedTuple):
    """Raw fields of a 14-byte command frame (UPPER -> PCU)."""

    aorm: int = 1
    """1 = request AUTO, 0 = MANUAL."""
    estop: int = 0
    """1 = emergency stop."""
    gear: int = GEAR_FORWARD
    """0 forward, 1 neutral, 2 backward."""
    speed: int = 0
    """Magnitude, km/h x 10 (protocol range 0..200)."""
    steer: int = 0
    """Degrees x 71, negative = left (protocol range -2000..2000)."""
    brake: int = 1
    """1 = no braking ... brake_max = full braking."""
    alive: int = 0
    """0..255, +1 per frame."""


class Feedback(NamedTuple):
    """Raw fields of an 18-byte feedback frame (PCU -> UPPER)."""

    aorm: int
    estop: int
    gear: int
    speed: int
    """Actual speed magnitude, km/h x 10."""
    steer: int
    """Actual steering, degrees x 71; sign convention is ``feedback_steer_sign``."""
    brake: int
    enc: int
    """Cumulative signed 32-bit encoder count."""
    alive: int
    """The PCU's own counter."""


BytesLike = Union[bytes, bytearray, memoryview]


def _check_int(name: str, value: Any, lo: int, hi: int, what: str) -> None:
    if not isinstance(value, int):
        raise Erp42Error(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if not lo <= value <= hi:
        raise Erp42Error("%s must be in %d..%d (%s), got %r" % (name, lo, hi, what, value))


def _check_enums(aorm: int, estop: int, gear: int) -> None:
    _check_int("aorm", aorm, 0, 1, "0 manual, 1 auto")
    _check_int("estop", estop, 0, 1, "0 off, 1 on")
    _check_int("gear", gear, 0, 2, "0 forward, 1 neutral, 2 backward")


def encode_command(cmd: Command) -> bytes:
    """Pack a :class:`Command` into 14 bytes (big-endian numbers).

    Refuses (``Erp42Error``) enumerations the framer would reject and numbers
    that do not fit the wire type (uint16 SPEED, int16 STEER, uint8 BRAKE and
    ALIVE).  Protocol ranges (SPEED <= 200, |STEER| <= 2000, BRAKE within
    ``brake_min..brake_max``) are *not* enforced here: clamping is the job of
    :func:`ctrl_to_command`, and tests need to send out-of-range values.
    """
    aorm, estop, gear, speed, steer, brake, alive = cmd
    _check_enums(aorm, estop, gear)
    _check_int("speed", speed, 0, 0xFFFF, "uint16 on the wire")
    _check_int("steer", steer, -0x8000, 0x7FFF, "int16 on the wire")
    _check_int("brake", brake, 0, 0xFF, "uint8 on the wire")
    _check_int("alive", alive, 0, 0xFF, "uint8 on the wire")
    return COMMAND_STRUCT.pack(STX, int(aorm), int(estop), gear, speed, steer, brake, alive, ETX)


def encode_feedback(fb: Feedback) -> bytes:
    """Pack a :class:`Feedback` into 18 bytes (little-endian numbers).

    Same checking rules as :func:`encode_command`; ENC must fit an int32
    (wrap it first, the emulator does).
    """
    aorm, estop, gear, speed, steer, brake, enc, alive = fb
    _check_enums(aorm, estop, gear)
    _check_int("speed", speed, 0, 0xFFFF, "uint16 on the wire")
    _check_int("steer", steer, -0x8000, 0x7FFF, "int16 on the wire")
    _check_int("brake", brake, 0, 0xFF, "uint8 on the wire")
    _check_int("enc", enc, -0x80000000, 0x7FFFFFFF, "int32 on the wire")
    _check_int("alive", alive, 0, 0xFF, "uint8 on the wire")
    return FEEDBACK_STRUCT.pack(STX, int(aorm), int(estop), gear, speed, steer, brake, enc,
                                alive, ETX)


def _candidate_problem(buf: BytesLike, pos: int, n: int) -> Optional[str]:
    """Why the n bytes at ``pos`` are not a frame, or None if they pass the framing checks."""
    if bytes(buf[pos:pos + 3]) != STX:
        return f"header {bytes(buf[pos:pos + 3]).hex(' ')} instead of 53 54 58"
    if buf[pos + n - 2] != _CR or buf[pos + n - 1] != _LF:
        return f"trailer {bytes(buf[pos + n - 2:pos + n]).hex(' ')} instead of 0d 0a"
    if buf[pos + _OFF_AORM] > 1:
        return "AorM %d > 1" % buf[pos + _OFF_AORM]
    if buf[pos + _OFF_ESTOP] > 1:
        return "E-STOP %d > 1" % buf[pos + _OFF_ESTOP]
    if buf[pos + _OFF_GEAR] > 2:
        return "GEAR %d > 2" % buf[pos + _OFF_GEAR]
    return None


def _decode(data: BytesLike, n: int, what: str) -> tuple:
    if len(data) != n:
        raise Erp42Error("%s frame must be %d bytes, got %d" % (what, n, len(data)))
    problem = _candidate_problem(data, 0, n)
    if problem is not None:
        raise Erp42Error(f"not a valid {what} frame: {problem}")
    if n == COMMAND_LEN:
        return COMMAND_STRUCT.unpack(data)[1:-1]
    return FEEDBACK_STRUCT.unpack(data)[1:-1]


def decode_command(data: BytesLike) -> Command:
    """Unpack exactly 14 bytes into a :class:`Command`.

    Raises ``Erp42Error`` for a wrong length, header, trailer or enumeration.
    """
    return Command._make(_decode(data, COMMAND_LEN, "command"))


def decode_feedback(data: BytesLike) -> Feedback:
    """Unpack exactly 18 bytes into a :class:`Feedback` (same checks as :func:`decode_command`)."""
    return Feedback._make(_decode(data, FEEDBACK_LEN, "feedback"))


# ---------------------------------------------------------------------------
# Stream framer
# ---------------------------------------------------------------------------

class Framer:
    """Recover fixed-length frames from a serial byte stream (spec section 8).

    ``feed(data)`` appends the bytes just read and returns every frame that
    became complete, in order, as :class:`Command` (``frame_len`` 14) or
    :class:`Feedback` (18) objects.  Feeding a stream in any chunking gives the
    same frames and the same counters.

    Algorithm: search the header with ``bytes.find``; everything before it is
    discarded; wait until N bytes follow the header; accept the candidate if
    the trailer is CR LF and AorM/E-STOP/GEAR are in range, otherwise discard
    only its first byte and search again (a real frame may start inside the
    rejected one).  Without any header, a trailing ``S`` or ``ST`` is kept
    because the header may be split across reads.

    After each ``feed`` at most N-1 bytes remain buffered, so the buffer is
    bounded by construction; ``max_buffer`` is kept as an explicit safety
    limit (oldest bytes dropped and counted as discarded).

    Counters (plain ints, cumulative; :meth:`reset` keeps them unless asked):

    * ``bytes_received`` - all bytes fed;
    * ``frames_ok`` - frames accepted;
    * ``bytes_discarded`` - bytes thrown away (noise, rejected candidate starts);
    * ``candidates_rejected`` - headers whose candidate failed trailer/enum checks;
    * ``soft_speed``, ``soft_steer``, ``soft_brake`` - accepted frames with
      SPEED > 200, |STEER| > 2000, BRAKE outside ``brake_min..brake_max``;
    * ``alive_gaps`` - accepted frames whose ALIVE is not previous + 1 (mod
      256); only when ``check_alive`` (default: feedback framers).  The first
      frame after construction or :meth:`reset` only sets the reference;
    * ``soft_violations`` - sum of the four soft counters.

    Soft checks never reject a frame.
    """

    def __init__(self, frame_len: int, *, brake_min: int = 1, brake_max: int = 150,
                 check_alive: Optional[bool] = None, max_buffer: int = 4096):
        if frame_len == COMMAND_LEN:
            self._struct, self._type = COMMAND_STRUCT, Command
        elif frame_len == FEEDBACK_LEN:
            self._struct, self._type = FEEDBACK_STRUCT, Feedback
        else:
            raise Erp42Error("frame_len must be %d (command) or %d (feedback), got %r"
                             % (COMMAND_LEN, FEEDBACK_LEN, frame_len))
        if max_buffer < frame_len:
            raise Erp42Error(f"max_buffer {max_buffer!r} is smaller than a frame")
        self.frame_len = frame_len
        self.brake_min = brake_min
        self.brake_max = brake_max
        self.check_alive = (frame_len == FEEDBACK_LEN) if check_alive is None else check_alive
        self.max_buffer = max_buffer
        self._buf = bytearray()
        self._last_alive: Optional[int] = None
        self.bytes_received = 0
        self.frames_ok = 0
        self.bytes_discarded = 0
        self.candidates_rejected = 0
        self.soft_speed = 0
        self.soft_steer = 0
        self.soft_brake = 0
        self.alive_gaps = 0
        self.soft_violations = 0

    @property
    def pending(self) -> int:
        """Number of bytes buffered (a partial frame or partial header)."""
        return len(self._buf)

    def reset(self, counters: bool = False) -> None:
        """Forget buffered bytes and the ALIVE reference; call on every (re)open.

        Counters are kept (they are cumulative diagnostics) unless ``counters``.
        """
        self._buf.clear()
        self._last_alive = None
        if counters:
            for name in ("bytes_received", "frames_ok", "bytes_discarded",
                         "candidates_rejected", "soft_speed", "soft_steer", "soft_brake",
                         "alive_gaps", "soft_violations"):
                setattr(self, name, 0)

    def feed(self, data: BytesLike) -> list:
        """Add the bytes just read; return the list of frames completed by them."""
        buf = self._buf
        buf += data
        self.bytes_received += len(data)
        n = self.frame_len
        out: List[Any] = []
        pos = 0
        end = len(buf)
        while True:
            i = buf.find(STX, pos)
            if i < 0:
                # No header: keep a possible header start at the very end.
                keep = 0
                if end - pos >= 2 and buf[end - 2] == _S and buf[end - 1] == _T:
                    keep = 2
                elif end - pos >= 1 and buf[end - 1] == _S:
                    keep = 1
                self.bytes_discarded += end - keep - pos
                pos = end - keep
                break
            self.bytes_discarded += i - pos
            pos = i
            if end - pos < n:
                break  # partial frame: wait for more bytes
            if (buf[pos + n - 2] == _CR and buf[pos + n - 1] == _LF
                    and buf[pos + _OFF_AORM] <= 1 and buf[pos + _OFF_ESTOP] <= 1
                    and buf[pos + _OFF_GEAR] <= 2):
                frame = self._type._make(self._struct.unpack_from(buf, pos)[1:-1])
                self._soft_checks(frame)
                out.append(frame)
                self.frames_ok += 1
                pos += n
            else:
                self.candidates_rejected += 1
                self.bytes_discarded += 1
                pos += 1
        if pos:
            del buf[:pos]
        if len(buf) > self.max_buffer:  # unreachable with the loop above; kept as a guard
            drop = len(buf) - self.max_buffer
            del buf[:drop]
            self.bytes_discarded += drop
        return out

    def _soft_checks(self, frame) -> None:
        bad = 0
        if frame.speed > SPEED_MAX_RAW:
            self.soft_speed += 1
            bad += 1
        if not -STEER_MAX_RAW <= frame.steer <= STEER_MAX_RAW:
            self.soft_steer += 1
            bad += 1
        if not self.brake_min <= frame.brake <= self.brake_max:
            self.soft_brake += 1
            bad += 1
        if self.check_alive:
            last = self._last_alive
            if last is not None and frame.alive != (last + 1) & 0xFF:
                self.alive_gaps += 1
                bad += 1
            self._last_alive = frame.alive
        self.soft_violations += bad


class CommandFramer(Framer):
    """Framer for 14-byte command frames (the PCU/emulator side)."""

    def __init__(self, **kwargs):
        super().__init__(COMMAND_LEN, **kwargs)


class FeedbackFramer(Framer):
    """Framer for 18-byte feedback frames (the bridge side); checks ALIVE gaps."""

    def __init__(self, **kwargs):
        super().__init__(FEEDBACK_LEN, **kwargs)
