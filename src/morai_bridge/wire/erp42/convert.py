"""ERP-42 value conversions: CtrlCmd -> command frames, feedback frames -> SI values.

Layer 3 of :mod:`morai_bridge.wire.erp42` (which re-exports every name here):
the parameters of the bridge (:class:`Erp42Params`, spec section 11) and the
conversions that use them: :func:`ctrl_to_command`, :func:`stop_command`,
:func:`feedback_to_values`, :func:`encoder_delta`, :func:`encoder_travel_m`.
Pure Python, no ROS.
"""

import dataclasses
import math
from typing import Any, Mapping, NamedTuple, Optional

from .frames import (GEAR_BACKWARD, GEAR_FORWARD, LONGL_CMD_VELOCITY, SPEED_MAX_RAW,
                    STEER_MAX_RAW, STEER_RAW_PER_DEG, Command, CommandRejected, Erp42Error, Feedback)

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
                 f"{name} must be a finite number, got {v!r}")
            return v

        need(0.0 <= finite("max_speed_kmh") <= SPEED_MAX_RAW / 10.0,
             f"max_speed_kmh must be in 0..20.0, got {self.max_speed_kmh!r}")
        need(0.0 <= finite("max_steer_deg") <= 28.17,
             f"max_steer_deg must be in 0..28.17, got {self.max_steer_deg!r}")
        need(abs(finite("steering_offset_deg")) <= 28.17,
             f"steering_offset_deg must be within +-28.17, got {self.steering_offset_deg!r}")
        for name in ("brake_min", "brake_max"):
            v = getattr(self, name)
            need(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 255,
                 f"{name} must be an int in 1..255 (0 is never sent), got {v!r}")
        need(self.brake_min < self.brake_max,
             f"brake_min {self.brake_min!r} must be below brake_max {self.brake_max!r}")
        for name in ("feedback_steer_sign", "encoder_sign"):
            need(getattr(self, name) in (-1, 1), f"{name} must be -1 or +1, got {getattr(self, name)!r}")
        for name in ("rate_hz", "cmd_timeout_s", "feedback_timeout_s", "reconnect_period_s",
                     "encoder_ppr", "wheel_radius_m", "wheelbase_m"):
            need(finite(name) > 0, f"{name} must be > 0, got {getattr(self, name)!r}")
        need(finite("shutdown_stop_s") >= 0,
             f"shutdown_stop_s must be >= 0, got {self.shutdown_stop_s!r}")
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
            f"longlCmdType {longl_cmd_type!r} is not supported by the ERP-42 (only 2 = velocity control)")
    for name, value in (("accel", accel), ("brake", brake), ("steering", steering_rad),
                        ("velocity", velocity_kmh), ("acceleration", acceleration)):
        if not math.isfinite(value):
            raise CommandRejected("non_finite", f"CtrlCmd.{name} is {value!r}; command dropped")

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
