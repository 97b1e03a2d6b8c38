#!/usr/bin/env python3
"""A client localised as MORAI-EDU's examples teach: position from /gps (latitude and longitude to UTM
52N, minus ``GPSMessage.eastOffset``/``northOffset``: the map frame), heading from /imu's orientation,
speed from /Ego_topic's ``velocity.x``; pure pursuit on a path of the map and a PID on the pedals;
``front_steer`` in the 2026 message set (``steering`` before).  It stops at a stop line while the light
that guards it (by id, from /GetTrafficLightStatus) shows no green, and goes on green.

The UTM conversion is this file's own (the forward series of Krüger, as teams write it or take from
the ``utm`` package); the emulator converts the other way with its own code, so a wrong origin, zone
or sign on either side shows here as a position metres off."""
import math

import rospy
from morai_msgs.msg import GetTrafficLightStatus, GPSMessage
from sensor_msgs.msg import Imu

from client import PathClient, main
from tracking import Pid, clamp, pure_pursuit, steer_cmd

GREEN_BITS = 16 | 32      # GetTrafficLightStatus.trafficLightStatus: green, green-left arrow


def latlon_to_utm(lat_deg, lon_deg, zone):
    """(easting, northing) [m] of a WGS-84 point in UTM ``zone`` (north)."""
    a, f, k0 = 6378137.0, 1 / 298.257223563, 0.9996
    n = f / (2 - f)
    big_a = a / (1 + n) * (1 + n ** 2 / 4 + n ** 4 / 64)
    alpha = (n / 2 - 2 * n ** 2 / 3 + 5 * n ** 3 / 16, 13 * n ** 2 / 48 - 3 * n ** 3 / 5, 61 * n ** 3 / 240)
    lat, dlon = math.radians(lat_deg), math.radians(lon_deg - (6 * zone - 183))
    c = 2 * math.sqrt(n) / (1 + n)
    t = math.sinh(math.atanh(math.sin(lat)) - c * math.atanh(c * math.sin(lat)))
    xi, eta = math.atan2(t, math.cos(dlon)), math.atanh(math.sin(dlon) / math.sqrt(1 + t * t))
    e = eta + sum(al * math.cos(2 * j * xi) * math.sinh(2 * j * eta) for j, al in enumerate(alpha, 1))
    nn = xi + sum(al * math.sin(2 * j * xi) * math.cosh(2 * j * eta) for j, al in enumerate(alpha, 1))
    return 500000.0 + k0 * big_a * e, k0 * big_a * nn


class GpsImuClient(PathClient):
    title = 'GPS/IMU localisation (UTM 52N minus the GPSMessage offsets) + pure pursuit + PID, pedals'

    def __init__(self, path_file, cap_kmh=20.0, wheelbase=2.7, max_steer_deg=36.25, rate_hz=30.0,
                 stop_line=None, light_id='', zone=52, gps_topic='/gps', imu_topic='/imu',
                 light_topic='/GetTrafficLightStatus', **topics):
        """``stop_line``: (x, y) of a stop line on the path, guarded by the light ``light_id``."""
        super().__init__(path_file, cap_kmh, wheelbase, max_steer_deg, dict(friction=0.2, decel=1.5, preview_m=25.0),
                         rate_hz, **topics)
        self.pid = Pid(kp=0.35, ki=0.08, kd=0.02, dt=1.0 / rate_hz, i_limit=2.0)
        self.zone = zone
        self.has_gps = self.has_imu = False
        self.offsets = None              # (east, north) of the last GPSMessage
        self.light_id, self.light = light_id, None
        self.stop_remaining = None       # the path's remaining distance at the stop line
        if stop_line is not None:
            self.tracker.update(*stop_line)
            self.stop_remaining = self.tracker.remaining(*stop_line)
            self.tracker.index = 0
        self.waited_at_red = False       # the client stood at the stop line while the light was not green
        self.subs += [rospy.Subscriber(gps_topic, GPSMessage, self.gps_callback, queue_size=1),
                      rospy.Subscriber(imu_topic, Imu, self.imu_callback, queue_size=1),
                      rospy.Subscriber(light_topic, GetTrafficLightStatus, self.light_callback, queue_size=10)]

    def ego_callback(self, msg):
        # a GPS/IMU stack reads only its speed from the ground truth
        self.speed = msg.velocity.x
        self.is_status = self.has_gps and self.has_imu

    def gps_callback(self, msg):
        if msg.status == 0:
            return
        east, north = latlon_to_utm(msg.latitude, msg.longitude, self.zone)
        self.offsets = (msg.eastOffset, msg.northOffset)
        self.x, self.y = east - msg.eastOffset, north - msg.northOffset
        self.has_gps = True

    def imu_callback(self, msg):
        q = msg.orientation
        self.yaw = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
        self.has_imu = True

    def light_callback(self, msg):
        if msg.trafficLightIndex == self.light_id:
            self.light = msg.trafficLightStatus

    def drive(self, remaining):
        lookahead = max(3.0, min(0.4 * self.speed + 2.5, 10.0))
        steering = pure_pursuit(self.tracker, self.x, self.y, self.yaw, lookahead, self.wheelbase)
        target = self.plan.target(remaining)
        if self.stop_remaining is not None and remaining > self.stop_remaining - 1.0:
            to_line = remaining - self.stop_remaining - 1.0        # stand 1 m before the line
            if self.light is None or not self.light & GREEN_BITS:
                target = min(target, math.sqrt(2.0 * 1.5 * max(0.0, to_line)))
                if to_line < 1.5 and self.speed < 0.05:
                    self.waited_at_red = True
        u = self.pid.output(target, self.speed)
        accel, brake = (min(u, 1.0), 0.0) if u > 0 else (0.0, min(-u, 1.0))
        if target < 0.05 and self.speed < 0.3:
            accel, brake = 0.0, 1.0
        return steer_cmd(clamp(steering, self.max_steer), accel=accel, brake=brake)

    def stop(self):
        return steer_cmd(0.0, accel=0.0, brake=1.0)


if __name__ == '__main__':
    main(GpsImuClient, 'gps_imu_client')
