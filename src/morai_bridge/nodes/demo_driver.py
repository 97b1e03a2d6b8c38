"""demo_driver: a tiny example autonomy node for the demo.

It drives the ego around a circle at a constant speed with morai_msgs/CtrlCmd
(velocity mode), and stops before a stop point while a chosen traffic light
shows red or yellow.  It only uses the bridge's public topics, exactly as a
user's stack would: /Ego_topic and /GetTrafficLightStatus in, /ctrl_cmd out.
"""
import math

import rospy
from morai_msgs.msg import CtrlCmd, EgoVehicleStatus, GetTrafficLightStatus

from morai_bridge.configuration.params import Param, ParamError
from morai_bridge.ros import msg_set
from morai_bridge.ros.params import init_node, load
from morai_bridge.ros.supervision import NodeSupervisor, RosTimer

RED, YELLOW = 1, 4

PARAMS = [
    Param('speed_kmh', 20.0, 'cruise speed [km/h]', minimum=0.0, maximum=60.0),
    Param('radius_m', 20.0, 'radius of the circle [m]', minimum=3.0),
    Param('center_x', 0.0, 'circle centre x in the map frame [m]'),
    Param('center_y', 20.0, 'circle centre y in the map frame [m]'),
    Param('wheelbase_m', 2.7, 'wheelbase used for the steering angle [m]', minimum=0.5),
    Param('gain', 0.08, 'steering correction per metre of radial error [rad/m]', minimum=0.0),
    Param('light_id', 'C119BS010007', 'traffic light to obey ("" = none)'),
    Param('stop_x', 0.0, 'stop point x [m]'),
    Param('stop_y', 40.0, 'stop point y [m]'),
    Param('stop_zone_m', 12.0, 'stop when red/yellow and closer than this to the stop point [m]', minimum=0.0),
    Param('rate_hz', 20.0, 'command rate [Hz]', minimum=1.0, maximum=100.0),
    Param('ego_topic', 'Ego_topic', 'morai_msgs/EgoVehicleStatus input'),
    Param('traffic_light_topic', 'GetTrafficLightStatus', 'morai_msgs/GetTrafficLightStatus input'),
    Param('ctrl_cmd_topic', 'ctrl_cmd', 'morai_msgs/CtrlCmd output'),
]


def steering_for_circle(x, y, heading_deg, cfg):
    """Steering angle [rad, + left] to follow the counter-clockwise circle."""
    dx, dy = x - cfg.center_x, y - cfg.center_y
    dist = math.hypot(dx, dy)
    base = math.atan(cfg.wheelbase_m / cfg.radius_m)
    # heading error against the tangent of a CCW circle
    tangent = math.atan2(dx, -dy)
    err = math.atan2(math.sin(tangent - math.radians(heading_deg)), math.cos(tangent - math.radians(heading_deg)))
    return base + cfg.gain * (dist - cfg.radius_m) + 0.5 * err


class DemoDriver:

    def __init__(self, cfg):
        self.cfg = cfg
        self.ego = None
        self.light = None
        self.pub = rospy.Publisher(cfg.ctrl_cmd_topic, CtrlCmd, queue_size=1)
        rospy.Subscriber(cfg.ego_topic, EgoVehicleStatus, self.on_ego, queue_size=1)
        rospy.Subscriber(cfg.traffic_light_topic, GetTrafficLightStatus, self.on_light, queue_size=10)
        self.stopped_for_light = False
        self.supervisor = NodeSupervisor('demo_driver')
        self.timer = RosTimer('driver', 1.0 / cfg.rate_hz, self.tick, self.supervisor)

    def on_ego(self, m):
        self.ego = m

    def on_light(self, m):
        if m.trafficLightIndex == self.cfg.light_id:
            self.light = m.trafficLightStatus

    def tick(self, _event=None):
        e = self.ego
        if e is None:
            return
        cmd = msg_set.ctrl_cmd(longlCmdType=2,
                               steering=steering_for_circle(e.position.x, e.position.y, e.heading, self.cfg))
        near = math.hypot(e.position.x - self.cfg.stop_x, e.position.y - self.cfg.stop_y) < self.cfg.stop_zone_m
        must_stop = (self.light is not None and self.light != -1 and self.light & (RED | YELLOW)
                     and not self.light & 16)
        if near and must_stop:
            cmd.velocity = 0.0
            if not self.stopped_for_light:
                rospy.loginfo('demo_driver: light %s is red/yellow (%d): stopping', self.cfg.light_id, self.light)
            self.stopped_for_light = True
        else:
            if self.stopped_for_light:
                rospy.loginfo('demo_driver: light is green again: driving on')
            self.stopped_for_light = False
            cmd.velocity = self.cfg.speed_kmh
        self.pub.publish(cmd)


def main(argv=None):
    init_node('demo_driver', PARAMS)
    try:
        node = DemoDriver(load(PARAMS))
    except ParamError as e:
        rospy.logfatal('demo_driver: %s', e)
        raise SystemExit(2)
    raise SystemExit(node.supervisor.spin())


if __name__ == '__main__':
    main()
