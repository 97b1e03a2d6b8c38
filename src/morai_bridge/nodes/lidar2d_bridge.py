"""lidar2d_bridge: a MORAI SIM 2D LiDAR over UDP as sensor_msgs/LaserScan.

Node shell: the parameter table and the wiring.  Scans: :mod:`morai_bridge.ros.sensors.lidar2d_ros`;
codec: :mod:`morai_bridge.wire.lidar2d`; the shared node main (diagnostics,
supervision, static TF): :func:`morai_bridge.ros.sensors.sensor_bridge.run_node`.
Topics, parameters and diagnostics: docs/ros_api.md; design notes: docs/sensors_ros.md.
"""
from morai_bridge.ros.sensors import lidar2d_ros
from morai_bridge.ros.sensors.sensor_bridge import run_node
from morai_bridge.ros.sensors.sensor_params import SETTINGS_PARAMS

PARAMS = lidar2d_ros.PARAMS + SETTINGS_PARAMS


def main(argv=None):
    run_node('lidar2d_bridge', PARAMS, lidar2d_ros.Lidar2dBridge)


if __name__ == '__main__':
    main()
