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
3. conversions with explicit parameters (:class:`Erp42Params`):
   :func:`ctrl_to_command`, :func:`stop_command`, :func:`feedback_to_values`,
   :func:`encoder_delta`, :func:`encoder_travel_m`.
"""

import dataclasses
import math
import struct
from typing import Any, List, Mapping, NamedTuple, Optional, Union

__all__ = [
    "STX", "ETX", "COMMAND_LEN", "FEEDBACK_LEN", "COMMAND_STRUCT", "FEEDBACK_STRUCT",
    "GEAR_FORWARD", "GEAR_NEUTRAL", "GEAR_BACKWARD",
    "SPEED_MAX_RAW", "STEER_MAX_RAW", "STEER_RAW_PER_DEG", "LONGL_CMD_VELOCITY",
    "Erp42Error", "CommandRejected",
    "Command", "Feedback",
    "encode_command", "decode_command", "encode_feedback", "decode_feedback",
    "Framer", "CommandFramer", "FeedbackFramer",
    "Erp42Params", "DEFAULT_PARAMS",
    "round_half_away", "next_alive",
    "ctrl_to_command", "stop_command",
    "FeedbackValues", "feedback_to_values", "encoder_delta", "encoder_travel_m",
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
        raise Erp42Error("%s must be an int, got %s %r" % (name, type(value).__name__, value))
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
        return "header %s instead of 53 54 58" % bytes(buf[pos:pos + 3]).hex(" ")
    if buf[pos + n - 2] != _CR or buf[pos + n - 1] != _LF:
        return "trailer %s instead of 0d 0a" % bytes(buf[pos + n - 2:pos + n]).hex(" ")
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
        raise Erp42Error("not a valid %s frame: %s" % (what, problem))
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
            raise Erp42Error("max_buffer %r is smaller than a frame" % (max_buffer,))
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


# ---------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Erp42Params:
    """Bridge parameters of spec section 11 with their defaults (names without ``~``).

    The conversion functions read only the fields they need; the rest are
    here so that the driver node has one validated source of defaults.
    Construct with keywords, derive variants with ``dataclasses.replace``, or
    build from a dict of ROS parameters with :meth:`from_mapping`.
    Invalid values raise ``Erp42Error`` at construction.
    """

    port: str = "/dev/ttyUSB0"
    baud: int = 115200
    rate_hz: float = 50.0
    cmd_timeout_s: float = 0.5
    feedback_timeout_s: float = 0.1
    reconnect_period_s: float = 1.0
    shutdown_stop_s: float = 1.0
    shutdown_estop: bool = False
    max_speed_kmh: float = 20.0
    max_steer_deg: float = 28.17
    steering_offset_deg: float = 0.0
    brake_min: int = 1
    brake_max: int = 150
    feedback_steer_sign: int = -1
    encoder_enabled: bool = True
    encoder_ppr: float = 100.0
    encoder_sign: int = 1
    wheel_radius_m: float = 0.27
    wheelbase_m: float = 1.040
    gear_interlock: bool = True
    frame_id: str = "base_link"
    ground_truth_topic: str = ""

    def __post_init__(self):
        def need(ok: bool, text: str) -> None:
            if not ok:
                raise Erp42Error("invalid ERP-42 parameter: " + text)

        def finite(name: str) -> float:
            v = getattr(self, name)
            need(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
                 "%s must be a finite number, got %r" % (name, v))
            return v

        need(0.0 <= finite("max_speed_kmh") <= SPEED_MAX_RAW / 10.0,
             "max_speed_kmh must be in 0..20.0, got %r" % (self.max_speed_kmh,))
        need(0.0 <= finite("max_steer_deg") <= 28.17,
             "max_steer_deg must be in 0..28.17, got %r" % (self.max_steer_deg,))
        need(abs(finite("steering_offset_deg")) <= 28.17,
             "steering_offset_deg must be within +-28.17, got %r" % (self.steering_offset_deg,))
        for name in ("brake_min", "brake_max"):
            v = getattr(self, name)
            need(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 255,
                 "%s must be an int in 1..255 (0 is never sent), got %r" % (name, v))
        need(self.brake_min < self.brake_max,
             "brake_min %r must be below brake_max %r" % (self.brake_min, self.brake_max))
        for name in ("feedback_steer_sign", "encoder_sign"):
            need(getattr(self, name) in (-1, 1), "%s must be -1 or +1, got %r"
                 % (name, getattr(self, name)))
        for name in ("rate_hz", "cmd_timeout_s", "feedback_timeout_s", "reconnect_period_s",
                     "encoder_ppr", "wheel_radius_m", "wheelbase_m"):
            need(finite(name) > 0, "%s must be > 0, got %r" % (name, getattr(self, name)))
        need(finite("shutdown_stop_s") >= 0,
             "shutdown_stop_s must be >= 0, got %r" % (self.shutdown_stop_s,))
        need(isinstance(self.baud, int) and self.baud > 0, "baud must be a positive int")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> "Erp42Params":
        """Build from a mapping (e.g. private ROS parameters); unknown keys are ignored.

        A leading ``~`` in a key is accepted.  Integers given for float fields
        are converted; everything else is validated as is.
        """
        known = {f.name: f for f in dataclasses.fields(cls)}
        kwargs = {}
        for key, value in values.items():
            name = key[1:] if key.startswith("~") else key
            if name not in known:
                continue
            if known[name].type in (float, "float") and isinstance(value, int) \
                    and not isinstance(value, bool):
                value = float(value)
            kwargs[name] = value
        return cls(**kwargs)

    @property
    def speed_limit_raw(self) -> int:
        """Largest SPEED a command may carry: min(200, round(max_speed_kmh x 10))."""
        return min(SPEED_MAX_RAW, round_half_away(self.max_speed_kmh * 10.0))

    @property
    def steer_limit_raw(self) -> int:
        """Largest |STEER| a command may carry: min(2000, round(max_steer_deg x 71))."""
        return min(STEER_MAX_RAW, round_half_away(self.max_steer_deg * STEER_RAW_PER_DEG))


DEFAULT_PARAMS = Erp42Params()


# ---------------------------------------------------------------------------
# CtrlCmd -> command frame (spec 10.1)
# ---------------------------------------------------------------------------

def round_half_away(x: float) -> int:
    """Round to the nearest integer, ties away from zero (2.5 -> 3, -2.5 -> -3).

    Python's ``round`` rounds ties to even and must not be used for frame values.
    """
    r = math.floor(abs(x) + 0.5)
    return int(r) if x >= 0 else -int(r)


def next_alive(alive: int) -> int:
    """The ALIVE value following ``alive``: +1, wrapping 255 -> 0."""
    return (alive + 1) & 0xFF


def _clamp(v: int, lo: int, hi: int) -> int:
    return lo if v < lo else hi if v > hi else v


def stop_command(params: Erp42Params = DEFAULT_PARAMS, alive: int = 0, *,
                 gear: int = GEAR_FORWARD, steer: int = 0, estop: bool = False) -> Command:
    """The stop frame of spec 9.1: AorM 1, SPEED 0, BRAKE = brake_max.

    Pass the previous command's ``gear`` and ``steer`` to keep them unchanged
    (no swerve while braking); ``estop`` sets E-STOP = 1.
    """
    return Command(aorm=1, estop=1 if estop else 0, gear=gear, speed=0, steer=steer,
                   brake=params.brake_max, alive=alive)


def ctrl_to_command(longl_cmd_type: int, accel: float, brake: float, steering_rad: float,
                    velocity_kmh: float, acceleration: float = 0.0,
                    params: Erp42Params = DEFAULT_PARAMS, alive: int = 0, *,
                    prev_gear: int = GEAR_FORWARD, feedback_speed: Optional[int] = None,
                    estop: bool = False) -> Command:
    """Convert the fields of a ``morai_msgs/CtrlCmd`` into a :class:`Command`.

    Positional order follows CtrlCmd (longlCmdType, accel, brake, steering,
    velocity, acceleration).  Only ``longlCmdType == 2`` (velocity control) is
    accepted; ``velocity_kmh`` [km/h, signed] and ``steering_rad`` [rad,
    positive = left, REP-103] drive the frame, ``brake`` [0..1] sets BRAKE.

    Raises :class:`CommandRejected` for another longlCmdType or when any of
    the five numeric inputs is NaN or infinite; no frame is produced then
    (the caller keeps sending its previous command or stop frames).

    * GEAR: velocity > 0 -> forward, < 0 -> backward, == 0 -> ``prev_gear``.
    * Gear interlock (``params.gear_interlock``): a GEAR different from
      ``prev_gear`` is only sent when ``feedback_speed`` (raw SPEED of the
      latest feedback) is 0.  Until then, and whenever the feedback speed is
      unknown (``None``), the result keeps ``prev_gear`` with SPEED 0 and
      BRAKE = brake_max.  The caller must pass the returned ``gear`` back as
      the next ``prev_gear``.
    * SPEED = round(|velocity| x 10) clamped to ``params.speed_limit_raw``.
    * STEER = round(-(degrees(steering) + steering_offset_deg) x 71) clamped
      to +-``params.steer_limit_raw`` (wire convention: negative = left).
    * BRAKE = brake_min + round(clip(brake, 0, 1) x (brake_max - brake_min)).
    * ``estop`` (an E-stop request) gives E-STOP 1, SPEED 0, BRAKE = brake_max.
    * AorM is always 1; ``alive`` is copied (the TX tick owns the counter).

    Rounding is half away from zero.
    """
    if longl_cmd_type != LONGL_CMD_VELOCITY:
        raise CommandRejected(
            "unsupported_type",
            "longlCmdType %r is not supported by the ERP-42 (only 2 = velocity control)"
            % (longl_cmd_type,))
    for name, value in (("accel", accel), ("brake", brake), ("steering", steering_rad),
                        ("velocity", velocity_kmh), ("acceleration", acceleration)):
        if not math.isfinite(value):
            raise CommandRejected("non_finite", "CtrlCmd.%s is %r; command dropped" % (name, value))

    if velocity_kmh > 0:
        gear = GEAR_FORWARD
    elif velocity_kmh < 0:
        gear = GEAR_BACKWARD
    else:
        gear = prev_gear

    speed = _clamp(round_half_away(abs(velocity_kmh) * 10.0), 0, params.speed_limit_raw)

    degrees_left = math.degrees(steering_rad) + params.steering_offset_deg
    limit = params.steer_limit_raw
    steer = _clamp(round_half_away(-degrees_left * STEER_RAW_PER_DEG), -limit, limit)

    frac = min(1.0, max(0.0, brake))
    brake_raw = params.brake_min + round_half_away(frac * (params.brake_max - params.brake_min))

    if params.gear_interlock and gear != prev_gear and feedback_speed != 0:
        # Direction change requested while (possibly) moving: hold and brake.
        gear, speed, brake_raw = prev_gear, 0, params.brake_max

    if estop:
        return Command(1, 1, gear, 0, steer, params.brake_max, alive)
    return Command(1, 0, gear, speed, steer, brake_raw, alive)


# ---------------------------------------------------------------------------
# Feedback -> message values (spec 10.2)
# ---------------------------------------------------------------------------

class FeedbackValues(NamedTuple):
    """Physical values derived from one feedback frame.

    Message mapping:

    * ERP42Info.velocity = ``velocity_kmh``; ERP42Info.steering = ``steering_deg``
    * EgoVehicleStatus.velocity.x = ``velocity_mps``; .wheel_angle (or
      .front_steer_angle) = ``steering_deg``; .brake = ``brake``; .accel = 0
    * ``aorm``, ``estop``, ``gear``, ``enc``, ``alive`` are the raw fields for
      diagnostics and the encoder topic.
    """

    velocity_kmh: float
    """Signed speed [km/h]; negative when GEAR = 2."""
    velocity_mps: float
    """Signed speed [m/s]."""
    steering_deg: float
    """Wheel angle [deg], positive = left."""
    brake: float
    """Applied brake 0..1 (clipped)."""
    aorm: int
    estop: int
    gear: int
    enc: int
    alive: int


def feedback_to_values(fb: Feedback, params: Erp42Params = DEFAULT_PARAMS) -> FeedbackValues:
    """Convert a :class:`Feedback` into :class:`FeedbackValues`.

    velocity = SPEED / 10 km/h, negated in GEAR 2; steering =
    -feedback_steer_sign x STEER / 71 degrees (left-positive); brake =
    (BRAKE - brake_min) / (brake_max - brake_min) clipped to 0..1.
    ``steering_offset_deg`` is not applied to feedback.
    """
    v = fb.speed / 10.0
    if fb.gear == GEAR_BACKWARD:
        v = -v
    steering = -params.feedback_steer_sign * fb.steer / float(STEER_RAW_PER_DEG)
    b = (fb.brake - params.brake_min) / float(params.brake_max - params.brake_min)
    b = min(1.0, max(0.0, b))
    return FeedbackValues(velocity_kmh=v, velocity_mps=v / 3.6, steering_deg=steering + 0.0,
                          brake=b, aorm=fb.aorm, estop=fb.estop, gear=fb.gear, enc=fb.enc,
                          alive=fb.alive)


def encoder_delta(previous: int, current: int) -> int:
    """Signed 32-bit difference ``current - previous`` of a wrapping encoder count."""
    return ((current - previous + 0x80000000) & 0xFFFFFFFF) - 0x80000000


def encoder_travel_m(delta: int, params: Erp42Params = DEFAULT_PARAMS) -> float:
    """Wheel travel [m] for an encoder increment: sign x delta x 2 pi r / ppr.

    Returns 0.0 when ``params.encoder_enabled`` is false.
    """
    if not params.encoder_enabled:
        return 0.0
    return params.encoder_sign * delta * 2.0 * math.pi * params.wheel_radius_m / params.encoder_ppr
