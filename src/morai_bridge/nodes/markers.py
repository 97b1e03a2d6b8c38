"""markers: MORAI ground truth as a visualization_msgs/MarkerArray for RViz.

Subscribes to the bridge's (or the simulator's own) /Ego_topic, /Object_topic,
/GetTrafficLightStatus and /CollisionData, keeps the latest of each, and every
``1 / ~rate_hz`` s publishes the whole scene on ``~markers_topic``: the ego as
a box with a velocity arrow, every object as a box coloured by type with its id,
traffic lights whose position is known (``~traffic_light_positions``) with their
lit heads, and collisions as short-lived spheres.  Markers of objects that
vanished, or whose input went silent for ``~stale_s``, are DELETEd.  The
message building is in :mod:`morai_bridge.ros.markers.shapes` (pure functions), the node's working part
in :mod:`morai_bridge.ros.markers.publisher`.
"""
import rospy

from morai_bridge.configuration.params import Param, ParamError
from morai_bridge.ros.markers.publisher import MarkersNode
from morai_bridge.ros.params import init_node, load
from morai_bridge.ros.supervision import NodeSupervisor

PARAMS = [
    Param('frame_id', 'map', 'frame of every marker (the bridge\'s frame_id)'),
    Param('markers_topic', 'morai/markers', 'published visualization_msgs/MarkerArray'),
    Param('ego_topic', 'Ego_topic', 'morai_msgs/EgoVehicleStatus input'),
    Param('object_topic', 'Object_topic', 'morai_msgs/ObjectStatusList input'),
    Param('traffic_light_topic', 'GetTrafficLightStatus', 'morai_msgs/GetTrafficLightStatus input'),
    Param('collision_topic', 'CollisionData', 'morai_msgs/CollisionData input'),
    Param('rate_hz', 10.0, 'marker publishing rate [Hz]', minimum=0.5, maximum=100.0),
    Param('stale_s', 2.0, 'delete the markers of an input silent for this long [s] (0 = never)', minimum=0.0),
    Param('ego_length', 4.6, 'length of the ego box [m] (EgoVehicleStatus has no size)', minimum=0.1),
    Param('ego_width', 1.9, 'width of the ego box [m]', minimum=0.1),
    Param('ego_height', 1.5, 'height of the ego box [m]', minimum=0.1),
    Param('ego_velocity_frame', 'body', 'frame of EgoVehicleStatus.velocity: body (x forward, y left, what the '
          'simulator sends: the arrow is turned by the heading) or map (an emulator run with velocity_frame:=map)',
          choices=('body', 'map')),
    Param('velocity_arrow_s', 1.0, 'velocity arrow length = speed [m/s] x this [s]', minimum=0.0),
    Param('labels', True, 'show each object\'s id as text'),
    Param('text_height', 1.5, 'height of the id labels [m]', minimum=0.1),
    Param('traffic_light_positions', '', 'traffic light positions: none (or ""), a name in config/traffic_lights '
          '(e.g. demo), or a YAML file path', unset='none'),
    Param('collision_lifetime_s', 2.0, 'lifetime of a collision marker [s]', minimum=0.1),
    Param('collision_diameter', 2.0, 'diameter of a collision marker [m]', minimum=0.1),
]


def main(argv=None):
    init_node('markers', PARAMS)
    try:
        supervisor = NodeSupervisor('markers')
        MarkersNode(load(PARAMS), supervisor)
    except ParamError as e:
        rospy.logfatal('markers: %s', e)
        raise SystemExit(2)
    raise SystemExit(supervisor.spin())


if __name__ == '__main__':
    main()
