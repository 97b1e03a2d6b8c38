#!/usr/bin/env python3
"""An ERP-42 client: pure pursuit on a path file and a speed in km/h (``longlCmdType = 2``, the only
command the ERP-42 platform takes) on /ctrl_cmd, which ``erp42_serial`` turns into serial frames.  Its
pose comes from /Ego_topic (the simulator's ground truth over UDP, Serial+UDP mode), its speed from the
platform's own feedback (/erp42_serial/erp42_info, km/h), as on the real vehicle.  Its own speed cap:
15 km/h (the platform's limit is 20)."""
import rospy
from morai_msgs.msg import ERP42Info

from client import PathClient, main
from tracking import clamp, pure_pursuit, velocity_cmd


class Erp42Client(PathClient):
    title = 'ERP-42: pure pursuit + speed in km/h through erp42_serial, speed from ERP42Info'

    def __init__(self, path_file, cap_kmh=15.0, wheelbase=1.04, max_steer_deg=28.17, rate_hz=20.0,
                 info_topic='/erp42_serial/erp42_info', **topics):
        super().__init__(path_file, cap_kmh, wheelbase, max_steer_deg,
                         dict(friction=0.15, decel=1.0, preview_m=8.0, creep=0.5), rate_hz, **topics)
        self.has_info = False
        self.subs.append(rospy.Subscriber(info_topic, ERP42Info, self.info_callback, queue_size=1))

    def speed_of(self, msg):
        return self.speed          # from the platform's feedback, not the status

    def info_callback(self, msg):
        self.speed = msg.velocity / 3.6
        self.has_info = True

    def drive(self, remaining):
        lookahead = max(2.0, min(0.6 * self.speed + 1.5, 5.0))
        steering = pure_pursuit(self.tracker, self.x, self.y, self.yaw, lookahead, self.wheelbase)
        return velocity_cmd(clamp(steering, self.max_steer), self.plan.target(remaining) * 3.6)

    def stop(self):
        return velocity_cmd(0.0, 0.0, brake=1.0)


if __name__ == '__main__':
    main(Erp42Client, 'erp42_client')
