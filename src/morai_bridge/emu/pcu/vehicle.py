"""The ERP-42 PCU emulator's vehicle: a deliberately small rate-limited model.

Not a dynamics simulation: speed and wheel angle move toward their targets
with rate limits, and travelled distance is integrated.  This is enough to
produce plausible feedback (speed converging, encoder counting, steering
turning over time).  The PCU emulator's ``on_state`` hook hands its
:class:`VehicleState` to another model (the simulator emulator's ego in the
Serial+UDP mode).  (Was ``morai_bridge.emu.pcu_vehicle``.)

Units are SI with ROS conventions: speed in m/s (positive forward, negative
backward), wheel angle in rad (positive left), brake 0..1.
"""

import math
from typing import NamedTuple, Optional

__all__ = ["VehicleState", "VehicleModel"]


class VehicleState(NamedTuple):
    """Snapshot handed to state hooks (e.g. ``PcuEmulator(on_state=...)``)."""

    speed_mps: float
    """Signed speed, positive forward."""
    steer_rad: float
    """Front wheel angle, positive left."""
    gear: int
    """Gear in ERP-42 numbering: 0 forward, 1 neutral, 2 backward."""
    brake: float
    """Applied brake 0..1."""
    distance_m: float
    """Signed odometer since the model was created (backward travel subtracts)."""
    mode: str = ""
    """Operating mode of the owner (e.g. ``"AUTO"``), empty if not applicable."""


def _approach(current: float, target: float, rate_up: float, rate_down: float,
              dt: float, stop_at_zero: bool = True) -> float:
    """Move ``current`` toward ``target``; ``rate_up`` when |value| grows, else ``rate_down``.

    With ``stop_at_zero`` a sign change is split: the value stops at zero
    first, so reversing always passes through standstill.
    """
    if current == target:
        return current
    growing = (current >= 0 and target > current) or (current <= 0 and target < current)
    step = (rate_up if growing else rate_down) * dt
    if target > current:
        new = min(target, current + step)
    else:
        new = max(target, current - step)
    if stop_at_zero and ((current > 0 > new) or (current < 0 < new)):
        new = 0.0
    return new


class VehicleModel:
    """Rate-limited speed and steering with odometry.

    Parameters: ``accel_mps2`` (speed magnitude increase), ``decel_mps2``
    (decrease without brake), ``brake_decel_mps2`` (added deceleration at
    full brake, scaled by the brake fraction), ``steer_rate_rad_s``.
    Attributes ``speed_mps``, ``steer_rad``, ``brake``, ``distance_m`` may be
    read at any time; :meth:`step` is not thread-safe (the owner serialises).
    """

    def __init__(self, accel_mps2: float = 1.5, decel_mps2: float = 1.5,
                 brake_decel_mps2: float = 3.0, steer_rate_rad_s: float = 0.8):
        for name, v in (("accel_mps2", accel_mps2), ("decel_mps2", decel_mps2),
                        ("steer_rate_rad_s", steer_rate_rad_s)):
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a positive number, got {v!r}")
        if not (math.isfinite(brake_decel_mps2) and brake_decel_mps2 >= 0):
            raise ValueError(f"brake_decel_mps2 must be >= 0, got {brake_decel_mps2!r}")
        self.accel_mps2 = accel_mps2
        self.decel_mps2 = decel_mps2
        self.brake_decel_mps2 = brake_decel_mps2
        self.steer_rate_rad_s = steer_rate_rad_s
        self.speed_mps = 0.0
        self.steer_rad = 0.0
        self.brake = 0.0
        self.distance_m = 0.0

    def step(self, dt: float, target_speed_mps: float, target_steer_rad: float,
             brake: float = 0.0, external_speed_mps: Optional[float] = None) -> None:
        """Advance by ``dt`` seconds toward the targets.

        ``brake`` (0..1) adds deceleration whenever the speed magnitude is
        decreasing; it does not by itself pull the target to zero.  If
        ``external_speed_mps`` is given, it replaces the speed model (another
        component owns the dynamics) and only odometry and steering run here.
        """
        if dt <= 0:
            return
        self.brake = min(1.0, max(0.0, brake))
        old = self.speed_mps
        if external_speed_mps is not None:
            new = float(external_speed_mps)
        else:
            down = self.decel_mps2 + self.brake * self.brake_decel_mps2
            new = _approach(old, target_speed_mps, self.accel_mps2, down, dt)
        self.speed_mps = new
        self.distance_m += 0.5 * (old + new) * dt
        self.steer_rad = _approach(self.steer_rad, target_steer_rad, self.steer_rate_rad_s,
                                   self.steer_rate_rad_s, dt, stop_at_zero=False)

    def snapshot(self, gear: int, mode: str = "") -> VehicleState:
        return VehicleState(self.speed_mps, self.steer_rad, gear, self.brake, self.distance_m,
                            mode)
