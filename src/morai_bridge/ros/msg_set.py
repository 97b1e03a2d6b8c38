"""The morai_msgs message set this workspace built, read from the generated classes.

``catkin_make -DMORAI_MSGS_SET=2022|2024|2026`` chooses the set (CMakeLists.txt; docs/versions.md,
"Message sets"); the bridge asks the generated classes which fields they have, so that nothing is
configured twice and nothing can get out of step with the build:

- 2022 (morai-developergroup/morai_msgs d6088cb): ``EgoVehicleStatus.wheel_angle``,
  ``CtrlCmd.steering``;
- 2024 (MORAI-ROS_morai_msgs 6fd5332): the status gains ``lateral_offset`` and a tyre block,
  CollisionData a second list ``collision_objecta``;
- 2026 (MORAI-ROS_morai_msgs 115255c, tag 26.r1): ``front_steer_angle`` / ``rear_steer_angle``
  replace ``wheel_angle``, ``front_steer`` / ``rear_steer`` replace ``steering``, and the status
  gains the lane distances.

:func:`unfilled` is how a node refuses, at start, a build whose messages have fields no set has
(an upstream commit that no set follows): the converters would leave them unset.
"""
from morai_msgs.msg import CollisionData, CtrlCmd, EgoVehicleStatus


def has(cls, field):
    """True when the generated message class ``cls`` has the field."""
    return field in cls.__slots__


#: EgoVehicleStatus has front_steer_angle and rear_steer_angle (2026), else wheel_angle
STATUS_FRONT_REAR = has(EgoVehicleStatus, 'front_steer_angle')
#: EgoVehicleStatus has lateral_offset and the twelve tyre fields (2024, 2026)
STATUS_TYRES = has(EgoVehicleStatus, 'tire_lateral_force_fl')
#: EgoVehicleStatus has the lane distances and cross_track_error (2026)
STATUS_LANE = has(EgoVehicleStatus, 'cross_track_error')
#: CollisionData has the second list collision_objecta (2024, 2026)
COLLISION_SECOND_LIST = has(CollisionData, 'collision_objecta')
#: CtrlCmd has front_steer and rear_steer (2026), else steering
CTRL_FRONT_REAR = has(CtrlCmd, 'front_steer')

#: every set, oldest first (CMakeLists.txt MORAI_MSGS_SETS)
SETS = ('2022', '2024', '2026')
#: the set's name
NAME = '2026' if CTRL_FRONT_REAR else '2024' if COLLISION_SECOND_LIST else '2022'
#: what the UDP link carries and this set has no field for, for the bridge's start-up line
NOT_CARRIED = {
    '2022': ' (no field for the status packet\'s tyre block, rear steer and lane distances: set 2026 has them)',
    '2024': ' (no field for the status packet\'s rear steer and lane distances: set 2026 has them)',
    '2026': '',
}[NAME]


def unfilled(msg):
    """The fields of a message (a converter's output) that were never assigned."""
    return [name for name in msg.__slots__ if not hasattr(msg, name)]


def front_steering(cmd):
    """A CtrlCmd's front wheel angle [rad], + left, in either set's field."""
    return cmd.front_steer if CTRL_FRONT_REAR else cmd.steering


def ctrl_cmd(**fields):
    """A CtrlCmd of this set from set-neutral fields: ``steering`` (front, rad, + left) is written
    to ``front_steer`` in the 2026 set; ``rear_steer`` (rad) exists only there and must be 0
    elsewhere."""
    steering = fields.pop('steering', 0.0)
    rear = fields.pop('rear_steer', 0.0)
    if CTRL_FRONT_REAR:
        return CtrlCmd(front_steer=steering, rear_steer=rear, **fields)
    if rear:
        raise ValueError(f'CtrlCmd of set {NAME} has no rear_steer')
    return CtrlCmd(steering=steering, **fields)


def set_wheel_angles(status, front_deg, rear_deg=0.0):
    """Write the front (and, in the 2026 set, rear) wheel angle [deg] into an EgoVehicleStatus."""
    if STATUS_FRONT_REAR:
        status.front_steer_angle = front_deg
        status.rear_steer_angle = rear_deg
    else:
        status.wheel_angle = front_deg


def front_wheel_angle(status):
    """An EgoVehicleStatus's front wheel angle [deg] in either set's field."""
    return status.front_steer_angle if STATUS_FRONT_REAR else status.wheel_angle
