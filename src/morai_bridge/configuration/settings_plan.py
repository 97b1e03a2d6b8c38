"""The bridge nodes that MORAI SIM's saved settings call for: which nodes, their names, and the
values of their private parameters.  No ROS.

Input: the :class:`~.sim_settings_files.SensorSettings` and
:class:`~.sim_settings_files.NetworkSettings` :mod:`.sim_settings_files` read.  :func:`plan` turns
them into :class:`NodePlan` entries: node type, node name and the values of its private parameters
(names of the nodes' PARAMS tables; the launch writer in :mod:`morai_bridge.nodes.morai_settings`
checks them against those tables), what is not started and why, and the udp_bridge streams left
off (:class:`StreamOff`).  :func:`node_sensor` / :func:`sensor_node_params` are the same for one
sensor node that reads ``~settings`` itself.  Facts and their sources: docs/settings.md.
"""
from typing import Dict, NamedTuple, Tuple

from morai_bridge.configuration import sim_versions, topic_names
from morai_bridge.configuration.sim_settings_files import BRIDGE_SENSORS, COMM_NAMES, COMM_UDP, SENSOR_NODES, \
    SettingsError, address_origin
from morai_bridge.wire import streams as wire_streams

__all__ = ['NodePlan', 'Plan', 'StreamOff', 'plan', 'node_params', 'node_sensor', 'sensor_node_params',
           'UNLISTED_KEPT']

#: udp_bridge streams that a network file may leave out while the simulator still sends them (or
#: listens for them) on MORAI's default port: with a network file that has no entry for one, the plan
#: keeps that port instead of switching it off.  The public 25.S4 files save the ego network's rows
#: (the PUBSUB_TYPEs of sim_settings_files.PUBSUB_STREAMS) and none of these; a 25.S4.MolitComp03
#: team receives and sends these on the default ports all the same (evidence in docs/settings.md,
#: "Streams a network file leaves out").
#: Every other stream the file does not configure is left off and reported.
_HEVEN_COVERAGE = 'eriverOoO/heven-ad-2026 @4d26e0e docs/morai/protocol-coverage.md (development profile, 25.S4)'
UNLISTED_KEPT = {
    'traffic_light': _HEVEN_COVERAGE + ' receives it on 7502 (typed); the 2024 captures: 7502',
    'intersection': _HEVEN_COVERAGE + ' receives it on 9102 (typed); the 2024 captures: 9102',
    'vehicle_collision': _HEVEN_COVERAGE + ' receives it on 9108 (typed)',
    'set_intersection': _HEVEN_COVERAGE + ' sends it to 9132',
    'sensor_control': _HEVEN_COVERAGE + ' sends it to 9103',
    'lamps': _HEVEN_COVERAGE + ' sends it to 9097',
    'scenario_load': _HEVEN_COVERAGE + ' sends it to 9099',
    'save_sensor_data': _HEVEN_COVERAGE + ' sends it to 9105',
    'npc_ghost': _HEVEN_COVERAGE + ' sends it to 9101',
}

# ----------------------------------------------------------------------------- the nodes

class NodePlan(NamedTuple):
    node: str            # node type (script name)
    name: str            # node name
    params: Dict         # private parameter -> value
    source: str          # what it comes from, for the launch file's comment
    bind_origin: str = ''  # the file and key ~bind_ip was read from ('' when given), for errors


class StreamOff(NamedTuple):
    """A udp_bridge stream the plan leaves off (port 0), why, and the port that would enable it."""
    stream: str          # the stream (its port parameter: stream + '_port')
    why: str             # what the settings say (or do not say) about it
    port: int            # MORAI's default port for it in the default simulator version (0: none)


class Plan(NamedTuple):
    nodes: Tuple[NodePlan, ...]
    not_started: Tuple[str, ...]      # one line per sensor or stream the settings do not send over UDP
    notes: Tuple[str, ...]            # facts the user should see (poses for a URDF, mismatches)
    warnings: Tuple[str, ...] = ()    # keys of the files that were not read (unknown or misplaced)
    streams_off: Tuple[StreamOff, ...] = ()   # udp_bridge streams left off, when it is in the plan


def _prefix(kind, s, many):
    """Relative topic prefix of a sensor without rosConfig.Topic: '' alone, 'camera_<uid>/' among many."""
    return '%s_%d/' % (kind, s.uid) if many else ''


def _mount(pose, parent_frame):
    return {'parent_frame': parent_frame, 'mount_x': pose.x, 'mount_y': pose.y, 'mount_z': pose.z,
            'mount_roll': pose.roll, 'mount_pitch': pose.pitch, 'mount_yaw': pose.yaw}


def _fmt_pose(p):
    return 'x %.3f y %.3f z %.3f m, roll %.1f pitch %.1f yaw %.1f deg' % p


def sensor_node_params(s, many, parent_frame='base_link', sim_ip=None, bind_ip=None, native_names=False):
    """Private parameters of the node that bridges UDP sensor ``s`` (camera, lidar or lidar2d).  A topic the
    file names (``rosConfig.Topic``: what the simulator would publish it as in native ROS mode) is kept; one it
    does not name is the naming convention's (``native_names``: MORAI's native ROS mode's)."""
    p = {'sim_ip': sim_ip or s.host_ip, 'bind_ip': bind_ip or s.dest_ip, 'port': s.dest_port}
    if native_names:
        p['native_names'] = True
    p.update(_mount(s.pose, parent_frame))
    pre = _prefix(s.kind, s, many)
    if s.frame_id:
        p['frame_id'] = s.frame_id
    elif many:
        p['frame_id'] = '%s_%d' % (s.kind, s.uid)
    if s.kind == 'camera':
        x = s.extra
        p.update(width=x['width'], height=x['height'], fov_deg=x['fov_deg'], cx=x['cx'], cy=x['cy'])
        if 'frame_id' in p:
            p['optical_frame_id'] = p['frame_id'] + '_optical'
        if s.topic:
            base = s.topic[:-len('/compressed')] if s.topic.endswith('/compressed') else s.topic
            p.update(image_topic=s.topic, camera_info_topic=base + '/camera_info')
        elif pre:
            p.update(image_topic=pre + 'image_jpeg/compressed', camera_info_topic=pre + 'image_jpeg/camera_info')
        if pre:         # one camera's boxes and images per namespace (a rosConfig.Topic names only the image)
            p.update(boxes_topic=pre + 'camera/boxes', raw_topic=pre + 'image_raw',
                     annotated_topic=pre + 'camera/boxes_image')
    elif s.kind == 'lidar':
        p['model'] = s.extra['model']
        if s.topic:
            p['topic'] = s.topic
        elif pre:
            p['topic'] = pre + topic_names.name('lidar', 'topic', native_names)
    elif s.kind == 'lidar2d':
        if 'range_max' in s.extra:
            p['range_max'] = s.extra['range_max']
        if s.topic:
            p['topic'] = s.topic
        elif pre:
            p['topic'] = pre + topic_names.name('lidar2d', 'topic', native_names)
    return p


def _node_name(kind, s, many):
    base = SENSOR_NODES[kind]
    return '%s_%d' % (base, s.uid) if many else base


def plan(sensors=None, network=None, parent_frame='base_link', sim_ip=None, bind_ip=None, udp_bridge=False,
         native_names=False):
    """The nodes that bridge what ``sensors`` (:class:`SensorSettings`) and ``network``
    (:class:`NetworkSettings`) send over UDP; either may be None.  udp_bridge is in the plan with a
    network file or when GPS / IMU are sent over UDP, always with ``udp_bridge`` (its ~settings).
    ``native_names``: the sensor topics the file does not name get MORAI's native ROS mode's names."""
    nodes, off, notes = [], [], []
    bridge = {}
    listen = []         # (file: key, address) of every stream udp_bridge receives: the address it binds
    if sensors is not None:
        for kind in ('camera', 'lidar', 'lidar2d'):
            udp = [s for s in sensors.sensors if s.kind == kind and s.udp]
            for s in udp:
                params = sensor_node_params(s, len(udp) > 1, parent_frame, sim_ip, bind_ip, native_names)
                nodes.append(NodePlan(SENSOR_NODES[kind], _node_name(kind, s, len(udp) > 1), params,
                                      '%s (m_SensorUniqueID %d)' % (s.key, s.uid)))
                if kind == 'camera' and s.extra.get('fx_file') is not None \
                        and abs(s.extra['fx_file'] - s.extra['fx']) > 1.0:
                    notes.append('%s: focalLengthpixel %.1f disagrees with cameraFOV %.1f deg at %d px '
                                 '(%.1f px); CameraInfo uses the FOV' % (s.key, s.extra['fx_file'],
                                                                        s.extra['fov_deg'], s.extra['width'],
                                                                        s.extra['fx']))
        for s in sensors.sensors:
            if not s.udp:
                off.append('%s (%s, m_SensorUniqueID %d): %s%s' % (
                    s.key, s.kind, s.uid, s.comm_name,
                    ' on %s' % s.topic if s.comm_name == 'ROS' and s.topic else ''))
        for kind in BRIDGE_SENSORS:
            udp = [s for s in sensors.sensors if s.kind == kind and s.udp]
            for s in udp[1:]:
                off.append('%s (%s, m_SensorUniqueID %d): UDP port %d, but udp_bridge receives one %s stream '
                           '(%s is used)' % (s.key, kind, s.uid, s.dest_port, kind, udp[0].key))
            if udp:
                s = udp[0]
                bridge[f'{kind}_port'] = s.dest_port
                if s.topic:
                    bridge[f'{kind}_topic'] = s.topic
                if s.frame_id:
                    bridge[f'{kind}_frame_id'] = s.frame_id
                bridge.setdefault('sim_ip', sim_ip or s.host_ip)
                listen.append((address_origin(sensors, s), s.dest_ip))
                notes.append('%s (%s, frame %s): mount %s relative to %s; udp_bridge publishes no TF for it'
                             % (s.key, kind, s.frame_id or '-', _fmt_pose(s.pose), parent_frame))
            elif any(s.kind == kind for s in sensors.sensors):
                bridge[f'{kind}_port'] = 0
        for name, count in sensors.ignored_lists:
            off.append('%s: %d sensor(s), no UDP codec in this bridge' % (name, count))
    if network is not None:
        by_stream = {}
        for n in network.entries:
            if n.stream is not None and n.net_type == COMM_UDP and n.port is not None:
                by_stream.setdefault(n.stream, n)
        for stream, n in sorted(by_stream.items()):
            bridge[f'{stream}_port'] = n.port
            if sim_ip is None and n.host_ip:
                bridge.setdefault('sim_ip', n.host_ip)
            if n.dest_ip:
                listen.append((f'{network.path}: {n.key}.config.udpConfig.destinationIP', n.dest_ip))
        for n in network.entries:       # (the known streams left off: Plan.streams_off)
            if n.stream is None:
                off.append('%s: PUBSUB_TYPE %d (netType %s): stream unknown to this bridge'
                           % (n.key, n.pubsub, COMM_NAMES.get(n.net_type, n.net_type)))
    # udp_bridge: with a network file, or when the sensor file sends GPS / IMU over UDP
    streams_off = ()
    if udp_bridge or network is not None or any(v for k, v in bridge.items() if k.endswith('_port')):
        taken = {n.params['port']: n.name for n in nodes}        # the sensor nodes' receive ports
        streams_off, kept = _unconfigured(bridge, sensors, network, taken)
        if kept:
            notes.append('udp_bridge: streams the network settings leave out, on MORAI\'s default port all '
                         'the same (the simulator uses them there; docs/settings.md): %s'
                         % ', '.join('%s %d' % (name, bridge[name + '_port']) for name in kept))
        if network is None:
            notes.append('udp_bridge: no network settings given: its vehicle and simulator streams keep '
                         'their default ports')
        if sim_ip is not None:
            bridge['sim_ip'] = sim_ip
        origin = ''
        if bind_ip is not None:
            bridge['bind_ip'] = bind_ip
        elif listen:
            bridge['bind_ip'], origin = _one_address(listen), listen[0][0]
        what = ' and '.join(p for p, x in ((sensors and sensors.path, sensors), (network and network.path, network))
                            if x is not None)
        nodes.append(NodePlan('udp_bridge', 'udp_bridge', bridge, what, origin))
    warnings = (sensors.warnings if sensors is not None else ()) + (network.warnings if network is not None else ())
    return Plan(tuple(nodes), tuple(off), tuple(notes), warnings, tuple(streams_off))


def _default_port(name):
    """MORAI's default port of udp_bridge stream ``name`` in the default simulator version (0: none)."""
    if name in sim_versions.VERSIONED_PORTS:
        return sim_versions.load_version(sim_versions.DEFAULT).port(name)
    return wire_streams.BY_NAME[name].port


def _unconfigured(bridge, sensors, network, taken=None):
    """With a network file, set udp_bridge's port of every stream ``bridge`` has no port for yet: MORAI's
    default for those of :data:`UNLISTED_KEPT` the file has no entry for (unless that port is already a
    receive port here: ``bridge``'s or ``taken``, {port: node}), else 0.  Returns ([StreamOff] of the streams
    left off, GPS and IMU included when the sensor file does not send them over UDP; [names] of the streams
    kept at their default port)."""
    off = [StreamOff(name, 'not sent over UDP by %s' % sensors.path, _default_port(name))
           for name in wire_streams.SENSOR_STREAMS if sensors is not None and bridge.get(f'{name}_port') == 0]
    if network is None:
        return off, []
    entries = {}
    for n in network.entries:
        if n.stream is not None:
            entries.setdefault(n.stream, n)
    used = {wire_streams.SIM_TO_USER: dict(taken or {})}     # direction -> {port: its user} in the plan
    for st in wire_streams.STREAMS:
        if bridge.get(f'{st.name}_port'):
            used.setdefault(st.direction, {})[bridge[f'{st.name}_port']] = st.name
    kept = []
    for st in wire_streams.STREAMS:
        param = f'{st.name}_port'
        if param in bridge:
            continue
        bridge[param] = 0
        if st.extension:            # our emulator's lock-step ports: never from a simulator's settings
            continue
        port = _default_port(st.name)
        n = entries.get(st.name)
        if st.name in wire_streams.SENSOR_STREAMS:
            why = 'not sent over UDP by %s' % (sensors.path if sensors is not None else 'the sensor settings (none given)')
        elif n is None and st.name in UNLISTED_KEPT and port:
            if port in used.get(st.direction, {}):
                off.append(StreamOff(st.name, 'not in %s, and its default port %d is %s\'s port here'
                                     % (network.path, port, used[st.direction][port]), port))
                continue
            bridge[param] = port
            used.setdefault(st.direction, {})[port] = st.name
            kept.append(st.name)
            continue
        elif n is None:
            why = f'not in {network.path}'
        elif n.net_type == COMM_UDP:
            why = f'{network.path}: {n.key}: its ego control is not UDP (EgoCtrlConfig.commType)'
        else:
            why = '%s: %s: netType %d (%s)' % (network.path, n.key, n.net_type, COMM_NAMES.get(n.net_type, 'unknown'))
        off.append(StreamOff(st.name, why, port))
    return off, kept


def _one_address(listen):
    """The one address udp_bridge binds for streams the settings send to ``listen`` [(where, ip)]."""
    addresses = sorted({ip for _, ip in listen})
    if len(addresses) > 1:
        first = {ip: where for where, ip in reversed(listen)}
        raise SettingsError('udp_bridge binds one address, but the settings send its streams to %s; make them one '
                            'address in the simulator\'s settings, or choose one with --bind-ip (0.0.0.0: every '
                            'address of this machine)' % ' and '.join('%s (%s)' % (ip, first[ip]) for ip in addresses))
    return addresses[0]


def node_params(kind, sensors, uid=-1, parent_frame='base_link'):
    """Parameters of the one ``kind`` node (camera, lidar, lidar2d) for sensor ``uid`` (-1: the first
    sent over UDP), or None when the settings send no such sensor over UDP (for ``~settings``)."""
    s = node_sensor(kind, sensors, uid)
    return None if s is None else sensor_node_params(s, False, parent_frame)


def node_sensor(kind, sensors, uid=-1):
    """The :class:`~.sim_settings_files.Sensor` the one ``kind`` node bridges (see :func:`node_params`), or None."""
    udp = [s for s in sensors.sensors if s.kind == kind and s.udp]
    if uid >= 0:
        match = [s for s in sensors.sensors if s.kind == kind and s.uid == uid]
        if not match:
            raise SettingsError('%s: no %s with m_SensorUniqueID %d' % (sensors.path, kind, uid))
        if not match[0].udp:
            raise SettingsError('%s: %s (m_SensorUniqueID %d) is sent over %s, not UDP'
                                % (sensors.path, match[0].key, uid, match[0].comm_name))
        return match[0]
    return udp[0] if udp else None
