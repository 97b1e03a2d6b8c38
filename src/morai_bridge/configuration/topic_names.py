"""The two names of each sensor topic: this package's default (the ROS driver conventions) and MORAI
SIM's native ROS mode's; ``~native_names`` of the sensor nodes chooses.  No ROS.

MORAI's native ROS mode (the simulator publishing through rosbridge) takes each sensor's topic from
its sensor settings (``rosConfig.Topic``); the defaults it saves are the names below (docs/ros_api.md,
"Native ROS mode's names", gives the sources: MORAI's manual, the simulator's own saved settings, public
code written against native mode).  Where the two names differ, the node's topic parameter defaults to
:data:`BY_CONVENTION` and :func:`resolve` fills in the name of the convention in force.  The UDP bridge's
topics (:mod:`morai_bridge.wire.udp.streams`) and the camera's image already are the native names, so a
switch changes nothing there.
"""
from typing import NamedTuple

__all__ = ['BY_CONVENTION', 'SensorTopic', 'SENSOR_TOPICS', 'name', 'resolve']

#: a topic parameter left at this value is named by the convention in force (``~native_names``)
BY_CONVENTION = ''


class SensorTopic(NamedTuple):
    kind: str       # the sensor kind (camera, lidar, lidar2d: SensorBridge.kind, morai_settings' kinds)
    param: str      # its topic parameter
    ours: str       # the default name: the ROS driver convention
    native: str     # MORAI's native ROS mode's default name
    ros_type: str


#: the sensor topics whose native name differs from the ROS driver's (relative names, as the node's
#: parameters take them)
SENSOR_TOPICS = (
    SensorTopic('lidar', 'topic', 'velodyne_points', 'lidar3D', 'sensor_msgs/PointCloud2'),
    SensorTopic('lidar2d', 'topic', 'scan', 'lidar2D', 'sensor_msgs/LaserScan'),
)
_BY_KIND = {}
for _t in SENSOR_TOPICS:
    _BY_KIND.setdefault(_t.kind, []).append(_t)


def name(kind, param, native):
    """The name of the ``kind`` sensor's topic ``param`` under the chosen convention."""
    for t in _BY_KIND.get(kind, ()):
        if t.param == param:
            return t.native if native else t.ours
    raise KeyError(f'the {kind} node has no topic parameter {param!r} named by convention')


def resolve(kind, cfg):
    """Fill each topic parameter of the ``kind`` sensor's node left at :data:`BY_CONVENTION` in ``cfg``
    (a mapping holding ``native_names``) with the convention's name; names set otherwise are kept."""
    for t in _BY_KIND.get(kind, ()):
        if cfg[t.param] == BY_CONVENTION:
            cfg[t.param] = t.native if cfg['native_names'] else t.ours
    return cfg
