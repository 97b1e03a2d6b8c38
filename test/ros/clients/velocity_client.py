#!/usr/bin/env python3
"""A velocity-mode client: Stanley steering on a path file, the target speed in km/h with
``longlCmdType = 2`` (the simulator's own speed control does the rest).  It reads ``velocity.x`` of
/Ego_topic as its speed (Stanley's gain is divided by it).  Its own speed cap: 30 km/h."""
from client import PathClient, main
from tracking import clamp, stanley, velocity_cmd


class VelocityClient(PathClient):
    title = 'Stanley + velocity mode (longlCmdType 2, km/h)'

    def __init__(self, path_file, cap_kmh=30.0, wheelbase=2.7, max_steer_deg=36.25, rate_hz=20.0, **topics):
        super().__init__(path_file, cap_kmh, wheelbase, max_steer_deg, dict(friction=0.2, decel=1.5, preview_m=20.0),
                         rate_hz, **topics)

    def drive(self, remaining):
        steering = stanley(self.tracker, self.x, self.y, self.yaw, self.speed, self.wheelbase, gain=1.5)
        return velocity_cmd(clamp(steering, self.max_steer), self.plan.target(remaining) * 3.6)

    def stop(self):
        return velocity_cmd(0.0, 0.0, brake=1.0)


if __name__ == '__main__':
    main(VelocityClient, 'velocity_client')
