"""lidar_bridge: a MORAI SIM 3D LiDAR (Velodyne-format packets over UDP) as sensor_msgs/PointCloud2.

Node shell: the parameter table and the wiring.  Revolutions and clouds:
:mod:`morai_bridge.ros.sensors.lidar_ros`; codec: :mod:`morai_bridge.wire.velodyne`; the
shared node main (diagnostics, supervision, static TF):
:func:`morai_bridge.ros.sensors.sensor_bridge.run_node`.  Topics, parameters and
diagnostics: docs/ros_api.md; design notes: docs/sensors_ros.md.
"""
from morai_bridge.ros.sensors import lidar_ros
from morai_bridge.ros.sensors.sensor_bridge import run_node
from morai_bridge.ros.sensors.sensor_params import SETTINGS_PARAMS

PARAMS = lidar_ros.PARAMS + SETTINGS_PARAMS


def main(argv=None):
    run_node('lidar_bridge', PARAMS, lidar_ros.LidarBridge)


if __name__ == '__main__':
    main()
