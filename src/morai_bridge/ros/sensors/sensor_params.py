"""The parameters every sensor bridge node declares, in groups, and MORAI SIM's saved settings.

* :func:`network_params`: ``~sim_ip``, ``~bind_ip``, ``~port``, ``~socket_buffer``;
* :func:`mount_params`: ``~frame_id``, ``~parent_frame``, ``~publish_tf`` and the mount pose
  ``~mount_x`` ... ``~mount_yaw`` (the static TF parent -> frame);
* :func:`tail_params`: ``~stale_timeout``, ``~keep_freed_memory``, ``~fault_injection``;
* :data:`STAMP_PARAM`: ``~stamp_source``;
* :func:`native_names_param`: ``~native_names``, MORAI's native ROS mode's topic names instead of the
  ROS driver's (:mod:`morai_bridge.configuration.topic_names`);
* :data:`SETTINGS_PARAMS` and :func:`apply_settings`: ``~settings``, a SensorInfo file of MORAI
  SIM, overriding the port, mount, frames, topics and sensor options (docs/settings.md).
"""
from morai_bridge.configuration import settings_plan, sim_settings_files
from morai_bridge.configuration.params import Param
from morai_bridge.link import transport
from morai_bridge.ros.supervision import FAULT_INJECTION


def network_params(port, port_doc, buffer_bytes):
    """``~sim_ip``, ``~bind_ip``, ``~port`` and ``~socket_buffer`` of one sensor stream."""
    return [
        Param('sim_ip', '127.0.0.1', 'simulator host; datagrams from other hosts are dropped and counted '
              '(0.0.0.0 accepts any sender)'),
        Param('bind_ip', '127.0.0.1', 'local address the receive port is bound to (0.0.0.0: all)'),
        Param('port', port, port_doc, minimum=0, maximum=65535),
        Param('socket_buffer', buffer_bytes, 'receive buffer asked of the kernel [bytes]; Linux caps it at '
              'net.core.rmem_max unless the node may use SO_RCVBUFFORCE (diagnostics show what was granted)',
              minimum=65536),
    ]


def mount_params(frame_id, what):
    """The sensor's frame and its mount pose on the vehicle (static TF parent -> frame)."""
    return [
        Param('frame_id', frame_id, f'frame of the {what} (TF child of parent_frame)'),
        Param('parent_frame', 'base_link', 'vehicle frame the sensor is mounted on (TF parent)'),
        Param('publish_tf', True, 'broadcast the mount pose as a static transform parent_frame -> frame_id '
              '(false when a URDF / robot_state_publisher already does)'),
        Param('mount_x', 0.0, 'mount position, forward of parent_frame [m]'),
        Param('mount_y', 0.0, 'mount position, left of parent_frame [m]'),
        Param('mount_z', 0.0, 'mount position, above parent_frame [m]'),
        Param('mount_roll', 0.0, 'mount roll about x [deg]', minimum=-360.0, maximum=360.0),
        Param('mount_pitch', 0.0, 'mount pitch about y [deg] (+ = nose down, REP-103)', minimum=-360.0,
              maximum=360.0),
        Param('mount_yaw', 0.0, 'mount yaw about z [deg] (+ = turned left)', minimum=-360.0, maximum=360.0),
    ]


def tail_params(stale_default=1.0):
    return [
        Param('stale_timeout', stale_default, 'no datagram for this long: diagnostics WARN [s]', minimum=0.05),
        Param('keep_freed_memory', True, 'keep freed buffers in the process for the next revolution / frame '
              'instead of returning them to the kernel (glibc mallopt: no page faults at each cut, about 1 ms '
              'per HDL-32E revolution; the process keeps its peak heap)'),
        FAULT_INJECTION,
    ]


#: ``~settings``: the node reads its port, mount pose, frames, topics (and LiDAR model, camera size
#: and FOV) from MORAI SIM's saved sensor settings (docs/settings.md)
SETTINGS_PARAMS = [
    Param('settings', '', 'MORAI SIM sensor settings file (SensorInfo_<vehicle>.json); when set, the sensor\'s '
          'port, addresses, mount pose, frame, topics, LiDAR model and camera size / FOV come from it and '
          'override those parameters (none or "": off; docs/settings.md)', unset='none'),
    Param('settings_sensor', -1, 'with settings: m_SensorUniqueID of the sensor to bridge; -1: the first one '
          'of this kind the settings send over UDP (none: the node exits 0)', minimum=-1),
]


def apply_settings(cfg, params, kind, warn):
    """Overwrite ``cfg`` with what ``cfg.settings`` (a SensorInfo file) gives the ``kind`` sensor
    (camera, lidar, lidar2d); ``warn(text)`` is called for each key of the file that is not read.
    False when the file sends no such sensor over UDP.  Raises
    :class:`~morai_bridge.configuration.sim_settings_files.SettingsError` / :class:`ParamError` naming the key, and
    :class:`~morai_bridge.link.transport.TransportError` when the address the file has the simulator
    send to is not this machine's."""
    sensors = sim_settings_files.load_sensors(cfg.settings)
    for line in sensors.warnings:
        warn(line)
    sensor = settings_plan.node_sensor(kind, sensors, cfg.settings_sensor)
    if sensor is None:
        return False
    declared = {p.name: p for p in params}
    for name, value in settings_plan.sensor_node_params(sensor, False, cfg.parent_frame).items():
        if name in declared:        # cx / cy: only where the camera node declares them
            cfg[name] = declared[name].coerce(value)
    transport.check_local_address(cfg.bind_ip, '~bind_ip', sim_settings_files.address_origin(sensors, sensor))
    return True


def native_names_param(what):
    """``~native_names``: the topics named as MORAI SIM's native ROS mode names them (``what``: which
    names change) instead of by the ROS driver conventions."""
    return Param('native_names', False, f'publish under the topic names of MORAI SIM\'s native ROS mode '
                 f'({what}) instead of the ROS driver names, so that a stack written for native mode runs '
                 f'unchanged; a topic parameter set to a name keeps it (docs/ros_api.md, "Native ROS mode\'s '
                 f'names")')


STAMP_PARAM = Param('stamp_source', 'sim', 'header stamps: sim (the time the simulator put in the packets) or '
                    'ros (receive time)', choices=('sim', 'ros'))
