"""The simulator emulator's sensors: camera (+ boxes), Velodyne-format 3D LiDAR, 2D LiDAR over UDP.

MORAI SIM in UDP mode also sends its sensors over UDP; the emulator reproduces
those streams from its scenario (facts: the project's sensor specification,
``sensors.md``; byte layouts: the codecs :mod:`morai_bridge.wire.camera`,
:mod:`morai_bridge.wire.velodyne`, :mod:`morai_bridge.wire.lidar2d`, whose
encoders are used here).  All sensors are off unless their port is set
(``camera_port``, ``lidar_port``, ``lidar2d_port`` of
:class:`~morai_bridge.emu.sim_config.SimConfig`).

=================  ==============================================================
:mod:`.scene`      the frozen world (:class:`Scene`), mount poses, vectorised ray casting
:mod:`.lidar`      :class:`VelodyneSensor`: rays of a Velodyne model -> 1206-byte packets
:mod:`.camera`     :class:`CameraSensor`: perspective rendering (PIL), JPEG, boxes
:mod:`.scan2d`     :class:`Lidar2DSensor`: 360-sample planar scan
:mod:`.rig`        :class:`SensorRig`: schedules them from the emulator's steps, sends
:mod:`.bench`      ``python3 -m morai_bridge.emu.sensors.bench``: CPU time per sensor
=================  ==============================================================

Importing this package needs numpy; the camera also needs PIL (imported only
when a camera is configured).  The emulator imports it only when a sensor port
is set.  No ROS.
"""

from .lidar import VelodyneSensor
from .rig import SensorRig, mount_of
from .scan2d import Lidar2DSensor
from .scene import Mount, Scene, SceneBoxes, cast_rays, rpy_matrix, sensor_pose

__all__ = ["Scene", "SceneBoxes", "Mount", "cast_rays", "rpy_matrix", "sensor_pose",
           "VelodyneSensor", "Lidar2DSensor", "SensorRig", "mount_of"]
