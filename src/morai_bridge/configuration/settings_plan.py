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
from typing import Dict, NamedTuple, Optional, Tuple

from morai_bridge.configuration import sim_versions, topic_names
from morai_bridge.configuration.sim_settings_files import BRIDGE_SENSORS, COMM_NAMES, COMM_ROS, COMM_UDP, \
    PUBSUB_COMPETITION_STATUS, SENSOR_NODES, SettingsError, address_origin, sensor_key
from morai_bridge.wire.udp import streams as wire_streams

__all__ = ['NodePlan', 'Plan', 'StreamOff', 'LowPort', 'plan', 'node_params', 'node_sensor', 'sensor_node_params',
           'implied_version', 'low_ports', 'UNLISTED_KEPT']

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
    port_origins: Optional[Dict] = None   # port parameter -> the file and key it was read from


class StreamOff(NamedTuple):
    """A udp_bridge stream the plan leaves off (port 0), why, and the port that would enable it."""
    stream: str          # the stream (its port parameter: wire.udp.streams.BY_NAME[stream].param)
    why: str             # what the settings say (or do not say) about it
    port: int            # MORAI's default port for it in the simulator version (0: none)
    switch: str = ''     # a row of the files that is not UDP: what to set in it to make it UDP ('' no row)
    ros_topic: str = ''  # that row sends over ROS: the topic the simulator publishes (or subscribes to) itself


class Plan(NamedTuple):
    nodes: Tuple[NodePlan, ...]
    not_started: Tuple[str, ...]      # one line per sensor or stream the settings do not send over UDP
    notes: Tuple[str, ...]            # facts the user should see (poses for a URDF, mismatches)
    warnings: Tuple[str, ...] = ()    # keys of the files that were not read (unknown or misplaced)
    streams_off: Tuple[StreamOff, ...] = ()   # udp_bridge streams left off, when it is in the plan
    sim_version: str = ''             # the simulator version the files imply ('' none: sim_version_why says why)
    sim_version_why: str = ''         # why that version, or why none (with udp_bridge in the plan)
    ros_topics: Tuple[Tuple[str, str], ...] = ()   # (topic, sensor) the simulator publishes over ROS itself


class LowPort(NamedTuple):
    """A port below 1024 the plan gives a node (:func:`low_ports`)."""
    node: str            # node name
    param: str           # its port parameter
    port: int
    receive: bool        # True: the node binds it (the simulator sends there); False: the simulator listens there
    origin: str          # the file and key it was read from ('' a default)


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


#: what a sensor sent over ROS gets when no udp_bridge port can take it: the simulator keeps publishing it
_KEEP_ROS = 'keep ROS and leave the bridge off'


def _ros_line(s, advice=''):
    """The not-started line of sensor ``s`` (not sent over UDP): a ROS row gets ``advice`` (one way or the
    other, never both: :data:`_KEEP_ROS`, or switch the row to UDP)."""
    line = '%s (%s, m_SensorUniqueID %d): %s%s' % (s.key, s.kind, s.uid, s.comm_name,
                                                   ' on %s' % s.topic if s.comm == COMM_ROS and s.topic else '')
    return f'{line}; {advice}' if advice and s.comm == COMM_ROS else line


def plan(sensors=None, network=None, parent_frame='base_link', sim_ip=None, bind_ip=None, udp_bridge=False,
         native_names=False):
    """The nodes that bridge what ``sensors`` (:class:`SensorSettings`) and ``network``
    (:class:`NetworkSettings`) send over UDP; either may be None.  udp_bridge is in the plan with a
    network file or when GPS / IMU are sent over UDP, always with ``udp_bridge`` (its ~settings).
    ``native_names``: the sensor topics the file does not name get MORAI's native ROS mode's names."""
    nodes, off, notes = [], [], []
    bridge, origins = {}, {}
    listen = []         # (file: key, address) of every stream udp_bridge receives: the address it binds
    ros_topics = []     # (topic, sensor) of the sensors the simulator publishes over ROS itself
    with_bridge = udp_bridge or network is not None or sensors is not None and any(
        s.udp for s in sensors.sensors if s.kind in BRIDGE_SENSORS)
    version, version_why = implied_version(network)
    if sensors is not None:
        for kind in ('camera', 'lidar', 'lidar2d'):
            udp = [s for s in sensors.sensors if s.kind == kind and s.udp]
            for s in udp:
                params = sensor_node_params(s, len(udp) > 1, parent_frame, sim_ip, bind_ip, native_names)
                nodes.append(NodePlan(SENSOR_NODES[kind], _node_name(kind, s, len(udp) > 1), params,
                                      '%s (m_SensorUniqueID %d)' % (s.key, s.uid),
                                      port_origins={'port': address_origin(sensors, s, 'udpConfig.destinationPort')}))
                if kind == 'camera' and s.extra.get('fx_file') is not None \
                        and abs(s.extra['fx_file'] - s.extra['fx']) > 1.0:
                    notes.append('%s: focalLengthpixel %.1f disagrees with cameraFOV %.1f deg at %d px '
                                 '(%.1f px); CameraInfo uses the FOV' % (s.key, s.extra['fx_file'],
                                                                        s.extra['fov_deg'], s.extra['width'],
                                                                        s.extra['fx']))
        for s in sensors.sensors:
            if s.udp:
                continue
            if s.comm == COMM_ROS and s.topic:
                ros_topics.append((s.topic, '%s (%s, m_SensorUniqueID %d)' % (s.key, s.kind, s.uid)))
            same = [x for x in sensors.sensors if x.kind == s.kind]
            if s.kind in BRIDGE_SENSORS and with_bridge and not any(x.udp for x in same):
                if s is same[0]:
                    continue        # its udp_bridge stream's line says it (Plan.streams_off)
                advice = "%s (udp_bridge receives one %s stream, %s's)" % (_KEEP_ROS, s.kind, same[0].key)
            elif s.kind in BRIDGE_SENSORS and any(x.udp for x in same):
                advice = "%s (udp_bridge receives one %s stream, %s's)" % (
                    _KEEP_ROS, s.kind, [x for x in same if x.udp][0].key)
            else:
                advice = "%s, or switch the simulator's row to UDP (%s 1) and run morai_settings again" % (
                    _KEEP_ROS, sensor_key(s, 'commType'))
            off.append(_ros_line(s, advice))
        for kind in BRIDGE_SENSORS:
            udp = [s for s in sensors.sensors if s.kind == kind and s.udp]
            for s in udp[1:]:
                off.append('%s (%s, m_SensorUniqueID %d): UDP port %d, but udp_bridge receives one %s stream '
                           '(%s is used)' % (s.key, kind, s.uid, s.dest_port, kind, udp[0].key))
            if udp:
                s = udp[0]
                bridge[f'{kind}_port'] = s.dest_port
                origins[f'{kind}_port'] = address_origin(sensors, s, 'udpConfig.destinationPort')
                if s.topic:
                    bridge[f'{kind}_topic'] = s.topic
                if s.frame_id:
                    bridge[f'{kind}_frame_id'] = s.frame_id
                bridge.setdefault('sim_ip', sim_ip or s.host_ip)
                listen.append((address_origin(sensors, s), s.dest_ip))
                notes.append('%s (%s, frame %s): mount %s relative to %s; udp_bridge publishes no TF for it'
                             % (s.key, kind, s.frame_id or '-', _fmt_pose(s.pose), parent_frame)
                             + ('; the emulator sends its fix from there with gps_mount_x:=%.3f gps_mount_y:=%.3f '
                                'gps_mount_z:=%.3f' % s.pose[:3] if kind == 'gps' else ''))
            elif any(s.kind == kind for s in sensors.sensors):
                bridge[f'{kind}_port'] = 0
                # where the simulator publishes it now, so that the stream, once switched to UDP, takes its place
                s = [s for s in sensors.sensors if s.kind == kind][0]
                if s.topic:
                    bridge[f'{kind}_topic'] = s.topic
                if s.frame_id:
                    bridge[f'{kind}_frame_id'] = s.frame_id
        for name, count in sensors.ignored_lists:
            off.append('%s: %d sensor(s), no UDP codec in this bridge' % (name, count))
    if network is not None:
        by_stream = {}
        for n in network.entries:
            if n.stream is not None and n.net_type == COMM_UDP and n.port is not None:
                by_stream.setdefault(n.stream, n)
        for stream, n in sorted(by_stream.items()):
            param = wire_streams.BY_NAME[stream].param
            bridge[param] = n.port
            origins[param] = f'{network.path}: {n.key}.{_port_key(stream)}'
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
    if with_bridge:
        taken = {n.params['port']: n.name for n in nodes}        # the sensor nodes' receive ports
        streams_off, kept = _unconfigured(bridge, sensors, network, taken, version)
        if kept:
            notes.append('udp_bridge: streams the network settings leave out, on MORAI\'s default port all '
                         'the same (the simulator uses them there; docs/settings.md): %s'
                         % ', '.join('%s %d' % (name, bridge[wire_streams.BY_NAME[name].param]) for name in kept))
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
        nodes.append(NodePlan('udp_bridge', 'udp_bridge', bridge, what, origin, origins))
    else:
        version, version_why = '', ''
    warnings = (sensors.warnings if sensors is not None else ()) + (network.warnings if network is not None else ())
    return Plan(tuple(nodes), tuple(off), tuple(notes), warnings, tuple(streams_off), version, version_why,
                tuple(ros_topics))


def _port_key(stream):
    """The key of a network file entry that holds udp_bridge's port of ``stream``: the simulator's destination
    port of what it sends, its host port of what it receives (ego control: in EgoCtrlConfig)."""
    if stream == 'ctrl_cmd':
        return 'EgoCtrlConfig.udpConfig.hostPort'
    return 'config.udpConfig.' + ('destinationPort' if wire_streams.BY_NAME[stream].direction ==
                                  wire_streams.SIM_TO_USER else 'hostPort')


def implied_version(network, search_dir=None):
    """(name, why) of the simulator version (config/sim_versions) that the network settings imply, or
    ('', why none).  The one fact of a saved file that tells releases apart is the competition status row
    (PUBSUB_TYPE 295): only a build that sends that stream lists it, and the shipped profiles say which
    build that is (the ones with a competition_status port)."""
    names = sim_versions.available(search_dir or sim_versions.search_dir_default())
    competition = [name for name, port in sim_versions.port_table(search_dir)['competition_status'] if port]
    if network is None:
        return '', 'no network settings given (a sensor file says nothing of the release)'
    rows = [n for n in network.entries if n.pubsub == PUBSUB_COMPETITION_STATUS]
    if rows and len(competition) == 1:
        return competition[0], ('%s: %s is the competition status row (PUBSUB_TYPE %d), which only %s sends '
                                '(config/sim_versions/%s.yaml)' % (network.path, rows[0].key,
                                                                   PUBSUB_COMPETITION_STATUS, competition[0],
                                                                   competition[0]))
    if rows:
        return '', ('%s: %s is the competition status row (PUBSUB_TYPE %d), but %s of the profiles send it'
                    % (network.path, rows[0].key, PUBSUB_COMPETITION_STATUS,
                       ' and '.join(competition) if competition else 'none'))
    return '', ('%s has no competition status row (PUBSUB_TYPE %d), and nothing else in a saved file tells %s '
                'apart' % (network.path, PUBSUB_COMPETITION_STATUS,
                           ', '.join(n for n in names if n not in competition)))


def low_ports(p):
    """[:class:`LowPort`] of every port below 1024 plan ``p`` gives a node: ports only root may bind on a
    stock Linux (net.ipv4.ip_unprivileged_port_start 1024), or that the simulator listens on."""
    out = []
    for n in p.nodes:
        origins = n.port_origins or {}
        for param, port in n.params.items():
            if not (param == 'port' or param.endswith('_port')) or not 0 < port < 1024:
                continue
            stream = wire_streams.BY_NAME.get(param[:-len('_port')]) if n.node == 'udp_bridge' else None
            receive = stream is None or stream.direction == wire_streams.SIM_TO_USER
            out.append(LowPort(n.name, param, port, receive, origins.get(param, '')))
    return out


def _default_port(name, version=''):
    """MORAI's default port of udp_bridge stream ``name`` in simulator version ``version`` ('' the default
    version; 0: none)."""
    if name in sim_versions.VERSIONED_PORTS:
        return sim_versions.load_version(version or sim_versions.DEFAULT).port(name)
    return wire_streams.BY_NAME[name].port


def _sensor_off(name, sensors, version):
    """The :class:`StreamOff` of udp_bridge's ``name`` stream (gps, imu) when the sensor file has that sensor
    but not over UDP: why, and how its row becomes the stream (its topic: where the simulator publishes it)."""
    port = _default_port(name, version)
    s = [s for s in sensors.sensors if s.kind == name][0]
    why = 'not sent over UDP by %s: %s' % (sensors.path, _ros_line(s))
    switch = '%s 1, %s %d' % (sensor_key(s, 'commType'), sensor_key(s, 'udpConfig.destinationPort'), port)
    topic = s.topic or '/' + wire_streams.BY_NAME[name].topic
    return StreamOff(name, why, port, switch, topic if s.comm == COMM_ROS else '')


def _unconfigured(bridge, sensors, network, taken=None, version=''):
    """With a network file, set udp_bridge's port of every stream ``bridge`` has no port for yet: MORAI's
    default for those of :data:`UNLISTED_KEPT` the file has no entry for (unless that port is already a
    receive port here: ``bridge``'s or ``taken``, {port: node}), else 0.  Returns ([StreamOff] of the streams
    left off, GPS and IMU included when the sensor file does not send them over UDP; [names] of the streams
    kept at their default port).  Ports are ``version``'s ('' the default version)."""
    off = [_sensor_off(name, sensors, version)
           for name in wire_streams.SENSOR_STREAMS
           if sensors is not None and bridge.get(wire_streams.BY_NAME[name].param) == 0]
    if network is None:
        return off, []
    entries = {}
    for n in network.entries:
        if n.stream is not None:
            entries.setdefault(n.stream, n)
    used = {wire_streams.SIM_TO_USER: dict(taken or {})}     # direction -> {port: its user} in the plan
    for st in wire_streams.STREAMS:
        if bridge.get(st.param):
            used.setdefault(st.direction, {})[bridge[st.param]] = st.name
    kept = []
    for st in wire_streams.STREAMS:
        param = st.param
        if param in bridge:
            continue
        bridge[param] = 0
        if st.extension:            # our emulator's lock-step ports: never from a simulator's settings
            continue
        port = _default_port(st.name, version)
        n = entries.get(st.name)
        switch, topic = '', ''
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
        else:
            if n.net_type == COMM_UDP:
                why = f'{network.path}: {n.key}: its ego control is not UDP (EgoCtrlConfig.commType)'
                switch = 'EgoCtrlConfig.commType 1, EgoCtrlConfig.udpConfig.hostPort %d' % port
            else:
                why = '%s: %s: netType %d (%s)' % (network.path, n.key, n.net_type,
                                                   COMM_NAMES.get(n.net_type, 'unknown'))
                switch = 'netType 1%s, %s %d' % (', EgoCtrlConfig.commType 1' if st.name == 'ctrl_cmd' else '',
                                                 _port_key(st.name), port)
            if n.net_type == COMM_ROS and st.topic:
                topic = '/' + st.topic
        off.append(StreamOff(st.name, why, port, switch, topic))
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
