"""camera_bridge: a MORAI SIM camera over UDP as sensor_msgs images, camera info and box markers.

Node shell: the parameter table and the wiring.  Receiving, reassembly and
publishing: :mod:`morai_bridge.ros.sensors.camera_ros`; codec: :mod:`morai_bridge.wire.camera`;
the shared node main (diagnostics, supervision, static TF):
:func:`morai_bridge.ros.sensors.sensor_bridge.run_node`.  Topics, parameters and
diagnostics: docs/ros_api.md; design notes: docs/sensors_ros.md.
"""
from morai_bridge.ros.sensors import camera_ros
from morai_bridge.ros.sensors.sensor_bridge import run_node
from morai_bridge.ros.sensors.sensor_params import SETTINGS_PARAMS

PARAMS = camera_ros.PARAMS + SETTINGS_PARAMS


def main(argv=None):
    run_node('camera_bridge', PARAMS, camera_ros.CameraBridge)


if __name__ == '__main__':
    main()
