"""Private ~parameters from the ROS parameter server.

The parameters themselves are declared without ROS (:mod:`morai_bridge.configuration.params`);
:func:`load` reads each one as ``rospy.get_param('~name', default)`` and checks it there.
"""
import rospy

from morai_bridge.configuration import params


def load(declared, getter=None):
    """Read every declared parameter; ``getter(name, default)`` defaults to rospy's private params."""
    return params.load(declared, getter or (lambda name, default: rospy.get_param('~' + name, default)))
