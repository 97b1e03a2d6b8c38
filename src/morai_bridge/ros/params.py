"""Private ~parameters from the ROS parameter server.

The parameters themselves are declared without ROS (:mod:`morai_bridge.configuration.params`);
:func:`load` reads each one as ``rospy.get_param('~name', default)`` and checks it there.
"""
import sys

import rospy

from morai_bridge.configuration import params


def load(declared, getter=None):
    """Read every declared parameter; ``getter(name, default)`` defaults to rospy's private params."""
    return params.load(declared, getter or (lambda name, default: rospy.get_param('~' + name, default)))


def init_node(name, declared, argv=None):
    """``rospy.init_node(name)``, unless the command line (``argv``, default ``sys.argv``) asks for
    ``--help``: then the node's parameters are printed (:func:`configuration.params.node_help`) and the
    process exits 0 without contacting a master."""
    args = rospy.myargv(argv=sys.argv if argv is None else argv)[1:]
    if any(a in params.HELP_ARGS for a in args):
        sys.stdout.write(params.node_help(name, declared))
        raise SystemExit(0)
    rospy.init_node(name)
