"""Ego vehicle of the simulator emulator: kinematic bicycle, simple longitudinal modes.

Frame and sign conventions (those of the MORAI map frame, spec section 4):

* x East, y North, metres; heading (yaw) counter-clockwise positive, 0 = East.
* The reference point (reported position, collision-box centre) is the centre
  of the vehicle's footprint.  With equal overhangs it lies halfway between the
  axles; in general it is ``length / 2 - rear_overhang`` ahead of the rear axle.
* The model's front-wheel angle is positive to the LEFT (it turns the heading
  counter-clockwise); commands and the reported ``steer`` use the wire
  convention, positive = RIGHT (spec 4.2): ``wheel angle = -steer * max_steer``.

Longitudinal behaviour per gear and command (all rates in m/s^2):

* P: the vehicle is braked to a standstill at ``max_brake`` and held there.
* N: no drive force; drag (and, in throttle mode, the brake pedal) slow it down.
* D (also M and L) drives forward, R backward.
* cmd_type 1 (throttle): drive = pedal x ``max_accel`` in the gear's direction;
  brake = pedal x ``max_brake`` against the motion; drag
  ``drag_const + drag_quad * v^2`` against the motion.  Brake and drag stop the
  vehicle but never reverse it.
* cmd_type 2 (velocity, km/h): the signed speed tracks ``velocity`` in the
  gear's direction with the simulator's rate limits, at most ``vel_rate_up``
  (+1) when the speed magnitude grows and ``vel_rate_down`` (2) when it shrinks;
  no overshoot.  Negative targets count as 0.
* cmd_type 3 (acceleration): the commanded value, clamped to
  ``[-max_brake, max_accel]``, changes the speed magnitude in the gear's
  direction; deceleration stops at standstill.
* No command (or keyboard mode): pedals released, the vehicle coasts.
* CMD_EXTERNAL (emulator only, e.g. the ERP-42 PCU emulator driving the ego in
  Serial+UDP mode): the speed magnitude is ``velocity_kmh`` at once, in the
  gear's direction (N keeps the current direction); the brake pedal is reported.

Speed magnitude is limited to ``max_speed_kmh``.  Steering follows the command
instantly, or at ``steer_rate_deg_s`` (front-wheel deg/s) when that is > 0.
"""

import math
from typing import FrozenSet, NamedTuple, Optional, Tuple

from morai_bridge.wire.enums import Gear
from morai_bridge.wire.units import KMH_TO_MPS

__all__ = ["GEAR_M", "GEAR_P", "GEAR_R", "GEAR_N", "GEAR_D", "GEAR_L",
           "CMD_EXTERNAL", "CMD_THROTTLE", "CMD_VELOCITY", "CMD_ACCELERATION",
           "VehicleParams", "Drive", "EgoModel", "wrap_deg"]

# plain ints of wire.enums.Gear for the hot path
GEAR_M, GEAR_P, GEAR_R, GEAR_N, GEAR_D, GEAR_L = (
    int(Gear.M), int(Gear.P), int(Gear.R), int(Gear.N), int(Gear.D), int(Gear.L))
CMD_THROTTLE, CMD_VELOCITY, CMD_ACCELERATION = 1, 2, 3   # Ego Ctrl Cmd cmd_type
CMD_EXTERNAL = 0   # ours: speed imposed by another model (velocity_kmh, no rate limits)

_DIRECTION = {GEAR_M: 1, GEAR_D: 1, GEAR_L: 1, GEAR_R: -1, GEAR_N: 0, GEAR_P: 0}


def wrap_deg(angle: float) -> float:
    """Angle in degrees wrapped to [-180, 180)."""
    return (angle + 180.0) % 360.0 - 180.0


def _sign(v: float) -> int:
    return 1 if v > 0 else -1 if v < 0 else 0


class VehicleParams(NamedTuple):
    """Geometry and limits of the ego (defaults: a Kia Niro / Hyundai Ioniq-sized car)."""

    length: float = 4.6
    width: float = 1.9
    height: float = 1.5
    wheelbase: float = 2.7
    rear_overhang: float = 0.95
    max_steer_deg: float = 36.25
    max_accel: float = 3.0
    max_brake: float = 8.0
    drag_const: float = 0.1
    drag_quad: float = 0.0015
    max_speed_kmh: float = 150.0
    vel_rate_up: float = 1.0
    vel_rate_down: float = 2.0
    steer_rate_deg_s: float = 0.0

    @property
    def front_overhang(self) -> float:
        return self.length - self.wheelbase - self.rear_overhang

    @property
    def rear_to_center(self) -> float:
        """Distance from the rear axle forward to the reference point."""
        return self.length / 2.0 - self.rear_overhang

    def check(self) -> None:
        """Raise ValueError naming the first unusable parameter."""
        for name in ("length", "width", "height", "wheelbase", "max_steer_deg", "max_accel",
                     "max_brake", "max_speed_kmh", "vel_rate_up", "vel_rate_down"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a positive number, got {v!r}")
        for name in ("rear_overhang", "drag_const", "drag_quad", "steer_rate_deg_s"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a number >= 0, got {v!r}")
        if self.max_steer_deg >= 89.0:
            raise ValueError(f"max_steer_deg must be below 89, got {self.max_steer_deg!r}")
        if not (self.rear_overhang <= self.length / 2.0 and
                0.0 <= self.front_overhang <= self.length / 2.0):
            raise ValueError(
                f"wheelbase {self.wheelbase} and rear_overhang {self.rear_overhang} do not fit "
                f"length {self.length}: each overhang must be between 0 and length / 2")


class Drive(NamedTuple):
    """One control command in emulator terms (what Ego Ctrl Cmd carries)."""

    cmd_type: int = CMD_THROTTLE
    gear: int = GEAR_D
    velocity_kmh: float = 0.0
    acceleration: float = 0.0
    accel: float = 0.0
    brake: float = 0.0
    steer: float = 0.0
    """Normalised front-wheel angle, -1..1, positive = right."""

    def finite(self) -> bool:
        return all(math.isfinite(v) for v in (self.velocity_kmh, self.acceleration,
                                              self.accel, self.brake, self.steer))


class EgoModel:
    """Mutable ego state advanced by :meth:`step`.  Not thread-safe (the owner locks)."""

    def __init__(self, params: VehicleParams = VehicleParams(), gear: int = GEAR_P):
        params.check()
        self.p = params
        self.x = self.y = self.z = 0.0
        self.roll = self.pitch = 0.0      # deg, carried through from ghost/multi-ego poses
        self.yaw = 0.0                    # rad, CCW from East, unwrapped
        self.v = 0.0                      # m/s, signed (positive forward)
        self.wheel = 0.0                  # rad, front-wheel angle, positive LEFT
        self.gear = gear
        self.accel_pedal = 0.0
        self.brake_pedal = 0.0
        self.a_long = 0.0                 # m/s^2, d(v)/dt of the last step
        self.yaw_rate = 0.0               # rad/s
        self._last = (0.0, 0.0)           # (speed before, dt) of the last step

    # ------------------------------------------------------------------ pose
    def set_pose(self, x: float, y: float, z: float = 0.0, yaw_deg: float = 0.0,
                 speed_kmh: float = 0.0, steer_deg: Optional[float] = None,
                 roll: float = 0.0, pitch: float = 0.0) -> None:
        """Teleport (ghost / scenario start); ``steer_deg`` uses the wire sign (+ right)."""
        self.x, self.y, self.z = float(x), float(y), float(z)
        self.roll, self.pitch = float(roll), float(pitch)
        self.yaw = math.radians(yaw_deg)
        limit = self.p.max_speed_kmh * KMH_TO_MPS
        self.v = max(-limit, min(limit, float(speed_kmh) * KMH_TO_MPS))
        if steer_deg is not None:
            lim = math.radians(self.p.max_steer_deg)
            self.wheel = max(-lim, min(lim, -math.radians(steer_deg)))
        self.a_long = 0.0
        self.yaw_rate = self._yaw_rate(self.v)

    def _beta(self) -> float:
        """Side-slip angle of the reference point (kinematic bicycle)."""
        return math.atan(self.p.rear_to_center * math.tan(self.wheel) / self.p.wheelbase)

    def _yaw_rate(self, v: float) -> float:
        return v * math.cos(self._beta()) * math.tan(self.wheel) / self.p.wheelbase

    @property
    def yaw_deg(self) -> float:
        return wrap_deg(math.degrees(self.yaw))

    @property
    def steer_deg(self) -> float:
        """Front-wheel angle in the wire convention (+ = right)."""
        return -math.degrees(self.wheel)

    def velocity(self, frame: str = "map") -> Tuple[float, float]:
        """Velocity of the reference point, m/s, in the map or the body frame."""
        beta = self._beta()
        angle = beta + (self.yaw if frame == "map" else 0.0)
        return self.v * math.cos(angle), self.v * math.sin(angle)

    def acceleration(self, frame: str = "map") -> Tuple[float, float]:
        """(longitudinal, centripetal) acceleration, m/s^2, rotated into ``frame``."""
        along, alat = self.a_long, self.v * self.yaw_rate
        if frame != "map":
            return along, alat
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return along * c - alat * s, along * s + alat * c

    def box(self):
        """(centre x, centre y, heading rad, length, width) of the footprint."""
        return self.x, self.y, self.yaw, self.p.length, self.p.width

    # ------------------------------------------------------------------ dynamics
    def _longitudinal(self, dt: float, drive: Optional[Drive]) -> float:
        """New signed speed after ``dt``; also sets the reported pedals."""
        p, v = self.p, self.v
        direction = _DIRECTION.get(self.gear, 0)
        if self.gear == GEAR_P:
            self.accel_pedal, self.brake_pedal = 0.0, (drive.brake if drive else 0.0)
            return _toward(v, 0.0, p.max_brake * dt)
        mode = drive.cmd_type if drive is not None else None
        if mode == CMD_EXTERNAL:
            new = (direction or _sign(v) or 1) * max(0.0, drive.velocity_kmh) * KMH_TO_MPS
            self._pedals_from(new - v, dt, v)
            self.brake_pedal = min(1.0, max(0.0, drive.brake))
            return new
        if mode == CMD_VELOCITY and direction:
            target = direction * max(0.0, drive.velocity_kmh) * KMH_TO_MPS
            growing = abs(target) > abs(v) and _sign(target) * _sign(v) >= 0
            if _sign(target) * _sign(v) < 0:
                target = 0.0  # reverse through standstill: slow down first
            rate = p.vel_rate_up if growing else p.vel_rate_down
            new = _toward(v, target, rate * dt)
            self._pedals_from(new - v, dt, v)
            return new
        if mode == CMD_ACCELERATION and direction:
            a = max(-p.max_brake, min(p.max_accel, drive.acceleration))
            new = v + direction * a * dt
            if a < 0 and _sign(new) != _sign(v):
                new = 0.0  # braking stops, it does not reverse
            self._pedals_from(new - v, dt, v)
            return new
        # throttle mode, no command, or velocity/acceleration in N
        accel = min(1.0, max(0.0, drive.accel)) if mode == CMD_THROTTLE else 0.0
        brake = min(1.0, max(0.0, drive.brake)) if mode == CMD_THROTTLE else 0.0
        self.accel_pedal, self.brake_pedal = accel, brake
        push = direction * accel * p.max_accel
        resist = brake * p.max_brake + p.drag_const + p.drag_quad * v * v
        if v != 0.0:
            new = v + (push - _sign(v) * resist) * dt
            if _sign(new) != _sign(v):
                new = 0.0
            return new
        if abs(push) > resist:
            return (push - _sign(push) * resist) * dt
        return 0.0

    def _pedals_from(self, dv: float, dt: float, v: float) -> None:
        """Plausible pedal positions for a speed change made by a controller."""
        a = dv / dt if dt > 0 else 0.0
        along_motion = a * (_sign(v) or _sign(dv) or 1)
        if along_motion > 0:
            self.accel_pedal, self.brake_pedal = min(1.0, along_motion / self.p.max_accel), 0.0
        elif along_motion < 0:
            self.accel_pedal, self.brake_pedal = 0.0, min(1.0, -along_motion / self.p.max_brake)
        else:
            self.accel_pedal = self.brake_pedal = 0.0

    def step(self, dt: float, drive: Optional[Drive],
             blocked: FrozenSet[int] = frozenset()) -> None:
        """Advance by ``dt`` s under ``drive`` (None = no command).

        ``blocked`` holds the travel directions (+1 forward, -1 backward) that an
        object in contact forbids: a speed in a blocked direction becomes 0.
        """
        p = self.p
        if drive is not None and drive.gear in _DIRECTION:
            self.gear = drive.gear
        old_v = self.v
        new_v = self._longitudinal(dt, drive)
        limit = p.max_speed_kmh * KMH_TO_MPS
        new_v = max(-limit, min(limit, new_v))
        if _sign(new_v) in blocked:
            new_v = 0.0
        # steering
        lim = math.radians(p.max_steer_deg)
        if drive is not None:
            target = -max(-1.0, min(1.0, drive.steer)) * lim
            if p.steer_rate_deg_s > 0:
                target = _toward(self.wheel, target, math.radians(p.steer_rate_deg_s) * dt)
            self.wheel = target
        # pose: midpoint rule with the mean speed of the step
        v_mid = 0.5 * (old_v + new_v)
        beta = self._beta()
        rate = self._yaw_rate(v_mid)
        heading = self.yaw + 0.5 * rate * dt + beta
        self.x += v_mid * math.cos(heading) * dt
        self.y += v_mid * math.sin(heading) * dt
        self.yaw += rate * dt
        self.v = new_v
        self.a_long = (new_v - old_v) / dt
        self.yaw_rate = self._yaw_rate(new_v)
        self._last = (old_v, dt)

    def stop(self) -> None:
        """Contact: the speed drops to zero within the step just made."""
        old_v, dt = self._last
        self.a_long = -old_v / dt if dt > 0 else 0.0
        self.v = 0.0
        self.yaw_rate = 0.0


def _toward(value: float, target: float, max_step: float) -> float:
    if value < target:
        return min(target, value + max_step)
    return max(target, value - max_step)
