"""Planar dead reckoning of a car-like vehicle (bicycle model), no ROS.

:class:`DeadReckoning` integrates travelled distance and front-wheel angle into
a pose (x, y, yaw) in an odometry frame that starts at the origin.  Distance
comes from the wheel encoder when there is one (:meth:`update_encoder`), else
from speed x elapsed time (:meth:`update_speed`).  Midpoint integration of the
heading over each step.
"""
import math

from morai_bridge.wire.units import wrap_pi


class DeadReckoning:

    def __init__(self, wheelbase_m):
        if not wheelbase_m > 0:
            raise ValueError(f'wheelbase must be > 0, got {wheelbase_m!r}')
        self.wheelbase = float(wheelbase_m)
        self.x = 0.0
        self.y = 0.0
        self.yaw = 0.0            # rad, counter-clockwise from the odometry frame's x axis
        self._prev_t = None

    @property
    def pose(self):
        return self.x, self.y, self.yaw

    def yaw_rate(self, speed_mps, steering_deg):
        """Yaw rate [rad/s] of the bicycle model at this speed and front-wheel angle (+ left)."""
        return speed_mps * math.tan(math.radians(steering_deg)) / self.wheelbase

    def advance(self, distance_m, steering_deg):
        """Move ``distance_m`` (negative: backwards) with the front wheels at ``steering_deg``."""
        dyaw = distance_m * math.tan(math.radians(steering_deg)) / self.wheelbase
        mid = self.yaw + dyaw / 2.0
        self.x += distance_m * math.cos(mid)
        self.y += distance_m * math.sin(mid)
        self.yaw = wrap_pi(self.yaw + dyaw)
        return self.pose

    def update_speed(self, t, speed_mps, steering_deg):
        """Advance by speed x (t - previous t); the first call only sets the time."""
        ds = 0.0 if self._prev_t is None else speed_mps * (t - self._prev_t)
        self._prev_t = t
        return self.advance(ds, steering_deg)

    def update_encoder(self, t, distance_m, steering_deg):
        """Advance by a distance measured since the previous call (e.g. from encoder counts)."""
        self._prev_t = t
        return self.advance(distance_m, steering_deg)
