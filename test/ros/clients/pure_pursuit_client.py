#!/usr/bin/env python3
"""A client as public MORAI examples are written: pure pursuit on a path file and a PID on the speed,
driving with the pedals through ``CtrlCmd(accel=..., brake=..., steering=...)``.  It never sets
``longlCmdType`` (it stays 0, the field's default) and takes ``velocity.x`` of /Ego_topic as its
forward speed.  Its own speed cap: 40 km/h."""
from client import PathClient, main
from tracking import Pid, clamp, pure_pursuit, steer_cmd


class PurePursuitClient(PathClient):
    title = 'pure pursuit + PID, pedals, longlCmdType left at 0, speed = velocity.x'

    def __init__(self, path_file, cap_kmh=40.0, wheelbase=2.7, max_steer_deg=36.25, rate_hz=30.0, **topics):
        super().__init__(path_file, cap_kmh, wheelbase, max_steer_deg, dict(friction=0.2, decel=1.5, preview_m=25.0),
                         rate_hz, **topics)
        self.pid = Pid(kp=0.35, ki=0.08, kd=0.02, dt=1.0 / rate_hz, i_limit=2.0)

    def drive(self, remaining):
        lookahead = max(3.0, min(0.4 * self.speed + 2.5, 10.0))
        steering = pure_pursuit(self.tracker, self.x, self.y, self.yaw, lookahead, self.wheelbase)
        u = self.pid.output(self.plan.target(remaining), self.speed)
        accel, brake = (min(u, 1.0), 0.0) if u > 0 else (0.0, min(-u, 1.0))
        return steer_cmd(clamp(steering, self.max_steer), accel=accel, brake=brake)

    def stop(self):
        return steer_cmd(0.0, accel=0.0, brake=1.0)


if __name__ == '__main__':
    main(PurePursuitClient, 'pure_pursuit_client')
