"""The node part every closed-loop client has: /Ego_topic in, /ctrl_cmd out at a fixed rate, a path
file followed to its end, and a stop there that the client keeps commanding.

A client subclasses :class:`PathClient` with its control law (:meth:`PathClient.drive`) and its stop
command (:meth:`PathClient.stop`).  The test runs it in its own process (:meth:`PathClient.run`); as a
node of its own, each client module has a ``main()`` (``rosrun``-style: the path file as ``~path``).
"""
import math

import rospy
from morai_msgs.msg import CtrlCmd, EgoVehicleStatus

from tracking import PathTracker, SpeedPlan, read_path

STOP_TOLERANCE_M = 0.3    # the client commands its stop this close to the path's last point


class PathClient:
    #: how the client is described in the test's output
    title = ''

    def __init__(self, path_file, cap_kmh, wheelbase, max_steer_deg, plan, rate_hz=30.0, ego_topic='/Ego_topic',
                 ctrl_topic='/ctrl_cmd'):
        """``cap_kmh``: the client's own speed cap; ``wheelbase`` [m] and ``max_steer_deg`` (the largest
        front-wheel angle): its vehicle; ``plan``: the rest of its :class:`SpeedPlan` (friction, decel,
        preview_m, creep)."""
        self.path = read_path(path_file)
        self.tracker = PathTracker(self.path)
        self.cap_kmh = cap_kmh
        self.wheelbase = wheelbase
        self.max_steer = math.radians(max_steer_deg)
        self.plan = SpeedPlan(self.tracker, cap_kmh / 3.6, **plan)
        self.rate_hz = rate_hz
        self.x = self.y = self.yaw = self.speed = 0.0
        self.is_status = False
        #: where the ego was [x, y] when the client commanded its stop (None: still driving)
        self.stopped_at = None
        #: the highest speed the client itself saw [m/s] (its own reading of the status)
        self.top_seen = 0.0
        self.ctrl_pub = rospy.Publisher(ctrl_topic, CtrlCmd, queue_size=1)
        self.subs = [rospy.Subscriber(ego_topic, EgoVehicleStatus, self.ego_callback, queue_size=1)]

    def ego_callback(self, msg):
        self.x, self.y = msg.position.x, msg.position.y
        self.yaw = math.radians(msg.heading)
        self.speed = self.speed_of(msg)
        self.is_status = True

    def speed_of(self, msg):
        """The client's speed [m/s] from the status (overridden by a client that reads it elsewhere)."""
        return msg.velocity.x

    def step(self):
        """One control period: the command for the latest state."""
        self.top_seen = max(self.top_seen, self.speed)
        if self.stopped_at is None:
            self.tracker.update(self.x, self.y)
            remaining = self.tracker.remaining(self.x, self.y)
            if remaining > STOP_TOLERANCE_M:
                return self.drive(remaining)
            self.stopped_at = (self.x, self.y)
            rospy.loginfo('%s: at the end of the path, %.2f m left: stop', type(self).__name__, remaining)
        return self.stop()

    def drive(self, remaining):
        raise NotImplementedError

    def stop(self):
        raise NotImplementedError

    def run(self, until=lambda: False):
        """Publish a command every period until ``until()`` or shutdown."""
        rate = rospy.Rate(self.rate_hz)
        while not rospy.is_shutdown() and not until():
            if self.is_status:
                self.ctrl_pub.publish(self.step())
            rate.sleep()

    def close(self):
        for s in self.subs:
            s.unregister()
        self.ctrl_pub.unregister()


def main(cls, name):
    """Run ``cls`` as a node: ``~path`` the path file; it drives until Ctrl-C."""
    rospy.init_node(name)
    cls(rospy.get_param('~path')).run()
