"""MORAI SIM's saved settings files (``SensorInfo_<vehicle>.json``, network ``NetworkInfo*.json``)
read and checked into plain objects.  No ROS.

What the files hold and where each fact comes from: docs/settings.md.  In short:

* Sensor file: lists ``cameraList``, ``Lidar3DList``, ``Lidar2DList``, ``GPSList``, ``IMUList``
  (and radar / ultrasonic / ground-truth lists the bridge has no codec for).  Each entry has
  ``pos`` (m, strings), ``rot`` (deg, 0..360, strings) and one configuration object (``cc``,
  ``lc``, ``gc``, ``ic``, ...: found here as the object that holds ``commType``) with
  ``commType`` (1 UDP, 3 ROS), ``udpConfig`` (``hostIP`` / ``hostPort`` = the simulator's
  sending side, ``destinationIP`` / ``destinationPort`` = where it sends) and ``rosConfig``
  (``Topic``, ``frameID``).
* Network file: ``egoNetworkData[].listEgoNetworkInfo[]``, per stream ``netType`` (0 off,
  1 UDP, 3 ROS), ``PUBSUB_TYPE`` (which stream), ``Division_TYPE`` and ``config.udpConfig``;
  ego control's channel is ``EgoCtrlConfig``.

:func:`load_sensors` / :func:`load_network` validate a whole file and raise
:class:`SettingsError` naming the key (``cameraList[1].cc.udpConfig.destinationPort``) of the
first thing that is missing or unusable, so that nothing is started from half a file; the keys
a file has that MORAI does not write there are warnings (:func:`key_warnings`).  What the bridge
makes of the result (its nodes and their parameters) is :mod:`.settings_plan`'s.
"""
import difflib
import json
import math
from typing import Dict, NamedTuple, Optional, Tuple

from morai_bridge.wire.udp.streams import BY_NAME, SIM_TO_USER, STREAMS

__all__ = ['SettingsError', 'Pose', 'Sensor', 'SensorSettings', 'NetworkEntry', 'NetworkSettings',
           'load_sensors', 'load_network', 'parse_sensors', 'parse_network', 'rep103_pose', 'wrap_deg',
           'key_warnings', 'address_origin', 'sensor_key', 'COMM_UDP', 'COMM_ROS', 'COMM_NAMES', 'LIDAR3D_TYPES',
           'PUBSUB_STREAMS',
           'PUBSUB_COMPETITION_STATUS', 'SENSOR_LISTS', 'SENSOR_NODES', 'BRIDGE_SENSORS', 'VELODYNE_UNIT',
           'SENSOR_CFG_NAMES', 'SENSOR_KEYS', 'NETWORK_KEYS']


class SettingsError(ValueError):
    """A settings file cannot be used; the text names the file and the key."""


#: commType / netType values.  1 and 3 are seen in the public files (UDP, ROS); 0 is the value
#: of network entries that are switched off.  Anything but 1 is not started.
COMM_UDP = 1
COMM_ROS = 3
COMM_NAMES = {0: 'off', COMM_UDP: 'UDP', COMM_ROS: 'ROS'}

#: lidar3DType -> (our codec's model, evidence).  Unknown values are an error naming the value.
LIDAR3D_TYPES = {
    0: ('VLP16', 'eriverOoO/heven-ad-2026: lidar3DType 0 with 16-channel VLP-16 packets seen live '
                 '(25.S4 report, 75 packets per scan)'),
    13: ('HDL32E', 'tangycore/morai_baqu4: lidar3DType 13 decoded with velodyne_pointcloud model HDL-32E, '
                   '32db.yaml (src/baqu4_tf/launch/lidar.launch)'),
}

#: PUBSUB_TYPE -> (udp_bridge stream, direction, evidence).  rx: the simulator sends, the bridge
#: binds ``config.udpConfig.destinationPort``; tx: the simulator listens on ``hostPort`` (ego
#: control: ``EgoCtrlConfig.udpConfig.hostPort``).  The stream rows (wire/udp/streams.py) declare them.
PUBSUB_STREAMS = {s.pubsub: (s.name, 'rx' if s.direction == SIM_TO_USER else 'tx', s.pubsub_source)
                  for s in STREAMS if s.pubsub and s.name != 'competition_status'}
#: the 25.S4 competition build's vehicle status (the #MoraiInfo$ layout with position withheld):
#: udp_bridge's competition_status port, published on /Competition_topic (heven network-persistence.md)
PUBSUB_COMPETITION_STATUS = BY_NAME['competition_status'].pubsub

SENSOR_LISTS = (('cameraList', 'camera'), ('Lidar3DList', 'lidar'), ('Lidar2DList', 'lidar2d'),
                ('GPSList', 'gps'), ('IMUList', 'imu'))
#: kinds with a sensor node (one node each) and the node type
SENSOR_NODES = {'camera': 'camera_bridge', 'lidar': 'lidar_bridge', 'lidar2d': 'lidar2d_bridge'}
#: kinds udp_bridge receives (one of each)
BRIDGE_SENSORS = ('gps', 'imu')
#: velodyneUnit: counts per mm (0.5 = 2 mm per count, the only unit of VLP16 and HDL32E)
VELODYNE_UNIT = 0.5


class Pose(NamedTuple):
    """Mount pose, REP-103 (x forward, y left, z up; m) and fixed-axis roll, pitch, yaw in deg
    (R = Rz(yaw) Ry(pitch) Rx(roll); pitch + = nose down, yaw + = turned left)."""
    x: float
    y: float
    z: float
    roll: float
    pitch: float
    yaw: float


class Sensor(NamedTuple):
    kind: str            # camera, lidar, lidar2d, gps, imu, or the list name for lists we do not bridge
    key: str             # e.g. 'cameraList[2]'
    uid: int             # m_SensorUniqueID
    comm: int            # commType
    pose: Pose
    host_ip: str
    host_port: int
    dest_ip: str
    dest_port: int
    topic: str           # rosConfig.Topic ('' unset)
    frame_id: str        # rosConfig.frameID ('' unset)
    extra: Dict          # camera: width, height, fov_deg, fx_file, cx, cy; lidar: model, lidar3d_type;
                         # lidar2d: range_max

    @property
    def udp(self):
        return self.comm == COMM_UDP

    @property
    def comm_name(self):
        return COMM_NAMES.get(self.comm, 'commType %d' % self.comm)


class SensorSettings(NamedTuple):
    path: str
    sensors: Tuple[Sensor, ...]
    ignored_lists: Tuple[Tuple[str, int], ...]      # (list name, entries) of lists without a codec
    warnings: Tuple[str, ...] = ()                  # keys not read (unknown or misplaced), with their path


class NetworkEntry(NamedTuple):
    key: str             # e.g. 'egoNetworkData[0].listEgoNetworkInfo[3]'
    ego: int             # UNIQUEID
    net_type: int
    pubsub: int
    division: int
    host_ip: str
    port: Optional[int]  # the port the bridge uses (rx: destinationPort, tx: hostPort), None if unknown
    stream: Optional[str]
    dest_ip: str = ''    # rx: destinationIP, the address the simulator sends to (the bridge binds it)


class NetworkSettings(NamedTuple):
    path: str
    entries: Tuple[NetworkEntry, ...]
    warnings: Tuple[str, ...] = ()                  # keys not read (unknown or misplaced), with their path


# ----------------------------------------------------------------------------- helpers

def wrap_deg(a):
    """An angle in deg to (-180, 180] (MORAI saves 0..360: 290 -> -70, 330 -> -30)."""
    a = math.fmod(float(a), 360.0)
    if a > 180.0:
        a -= 360.0
    elif a <= -180.0:
        a += 360.0
    return a + 0.0     # no -0.0


def rep103_pose(pos, rot):
    """REP-103 mount pose from MORAI's ``pos`` {x, y, z} (m) and ``rot`` {roll, pitch, yaw} (deg).

    MORAI's sensor frame is already the vehicle's x forward, y left, z up (its manual: origin at
    the middle of the rear axle, ENU axes), and its angles have REP-103's signs (pitch + = nose
    down, yaw + = turned left; roll's sign is inferred, see docs/settings.md), so the conversion
    is: positions as they are, angles wrapped from 0..360 to (-180, 180]."""
    return Pose(float(pos['x']), float(pos['y']), float(pos['z']),
                wrap_deg(rot['roll']), wrap_deg(rot['pitch']), wrap_deg(rot['yaw']))


def _where(path, key):
    return f'{path}: {key}' if key else path


def _get(obj, name, key, path, kinds=None):
    """obj[name] (must exist, and be of ``kinds`` when given)."""
    if not isinstance(obj, dict):
        raise SettingsError(f'{_where(path, key)}: expected an object')
    if name not in obj:
        raise SettingsError('%s: missing' % _where(path, '%s.%s' % (key, name) if key else name))
    v = obj[name]
    if kinds is not None and (not isinstance(v, kinds) or isinstance(v, bool) and bool not in kinds):
        raise SettingsError('%s=%r: expected %s' % (_where(path, '%s.%s' % (key, name) if key else name), v,
                                                     ' or '.join(k.__name__ for k in kinds)))
    return v


def _number(obj, name, key, path, minimum=None, maximum=None, exclusive=False):
    """A finite number, also from a string ('1.900': MORAI saves poses as strings)."""
    raw = _get(obj, name, key, path)
    full = f'{key}.{name}' if key else name
    try:
        if isinstance(raw, bool):
            raise ValueError
        v = float(raw)
    except (TypeError, ValueError):
        raise SettingsError(f'{_where(path, full)}={raw!r}: expected a number') from None
    if not math.isfinite(v):
        raise SettingsError(f'{_where(path, full)}={raw!r}: expected a finite number')
    if minimum is not None and (v <= minimum if exclusive else v < minimum):
        raise SettingsError(f"{_where(path, full)}={raw!r}: must be {'>' if exclusive else '>='} {minimum!r}")
    if maximum is not None and (v >= maximum if exclusive else v > maximum):
        raise SettingsError(f"{_where(path, full)}={raw!r}: must be {'<' if exclusive else '<='} {maximum!r}")
    return v


def _int(obj, name, key, path, minimum=None, maximum=None):
    raw = _get(obj, name, key, path)
    full = f'{key}.{name}' if key else name
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or float(raw) != int(raw):
        raise SettingsError(f'{_where(path, full)}={raw!r}: expected a whole number')
    v = int(raw)
    if (minimum is not None and v < minimum) or (maximum is not None and v > maximum):
        raise SettingsError(f'{_where(path, full)}={raw!r}: must be in {minimum}..{maximum}')
    return v


def _port(obj, name, key, path):
    return _int(obj, name, key, path, 1, 65535)


def _read_json(path, what):
    try:
        with open(path, 'rb') as f:
            raw = f.read()
    except OSError as e:
        raise SettingsError(f'{path}: cannot read the {what} file: {e.strerror or e}') from None
    try:
        return json.loads(raw.decode('utf-8-sig'))
    except UnicodeDecodeError as e:
        raise SettingsError(f'{path}: not UTF-8 text: {e}') from None
    except ValueError as e:
        raise SettingsError(f'{path}: not JSON (a partial or damaged file?): {e}') from None


# ----------------------------------------------------------------------------- the keys MORAI writes

#: What MORAI SIM writes, at every level this module reads: the keys of the public files
#: (test/data/morai_settings/: two 25.S4-era sensor and network files, identical key sets).  An object
#: is a dict of key -> the schema of its value (None: not looked into); a list is [schema of an entry].
#: A key that is not here is reported by :func:`key_warnings` (a typo, or a block in the wrong place,
#: would otherwise be ignored without a word).
_UDP_KEYS = dict.fromkeys(('hostIP', 'hostPort', 'destinationIP', 'destinationPort', 'receiveTimeout',
                           'isBufferThreadActivated', 'receiveBufferSize', 'sizeOfAuxHeader'))
_ROS_KEYS = dict.fromkeys(('handlerType', 'ConnectionTimeout', 'RosBridgeServerUrl', 'RosBridgeIP', 'RosBridgePort',
                           'Topic', 'RosMessageOnOff', 'frameID', 'childFrameID'))
_COMMON_CFG = ('commType', 'sensorName', 'sensorPeriod', 'sensorType', 'canConfig', 'serialConfig', 'gnGenerator')
_NOISE = tuple(f'{kind}{q}_{axis}' for kind in ('bi', 'rd', 'wn') for q, axes in
               (('Acc', 'xyz'), ('AngV', ('roll', 'pitch', 'yaw'))) for axis in axes)
_SENSOR_CFG = {
    'cc': _COMMON_CFG + ('bVizBoundingBox', 'bboxROSConfig', 'cameraFOV', 'cameraResHeight', 'cameraResWidth',
                         'cameraType', 'compressedRatio', 'depthbit', 'focalLengthmm', 'focalLengthpixel',
                         'lensDistortion', 'maxDepthRange', 'minDepthRange', 'modelType', 'paramType', 'principalPoint',
                         'sensorShift', 'sensorSize', 'vizBoundingBox2D', 'vizBoundingBox3D'),
    'lc': _COMMON_CFG + ('fireDistance', 'frequencyIndex', 'gamma', 'intensityType', 'isVizPointCloud', 'lidar3DType',
                         'noiseRatio', 'optEq', 'reflecity', 'velodyneUnit'),
    'gc': _COMMON_CFG + ('gpsStatus',),
    'ic': _COMMON_CFG + _NOISE,
}


def _sensor_entry(cfg_name):
    cfg = dict.fromkeys(_SENSOR_CFG[cfg_name or 'lc'])
    cfg.update(udpConfig=_UDP_KEYS, rosConfig=_ROS_KEYS)
    if cfg_name == 'cc':
        cfg['principalPoint'] = dict.fromkeys(('x', 'y', '_x', '_y'))
    return {'m_SensorType': None, 'm_SensorUniqueID': None, 'm_TargetUniqueID': None,
            'pos': dict.fromkeys('xyz'), 'rot': dict.fromkeys(('roll', 'pitch', 'yaw')), cfg_name or '': cfg}


#: cameraList -> cc, ...; the 2D LiDAR's configuration object is in no public file: its name is
#: unknown, so there ('' in the schema) any object holding commType is taken as it, with the 3D
#: LiDAR's keys (fireDistance is read from it: inferred, docs/settings.md)
SENSOR_CFG_NAMES = {'cameraList': 'cc', 'Lidar3DList': 'lc', 'GPSList': 'gc', 'IMUList': 'ic', 'Lidar2DList': None}
SENSOR_KEYS = {name: [_sensor_entry(cfg)] for name, cfg in SENSOR_CFG_NAMES.items()}
SENSOR_KEYS.update(dict.fromkeys(('DelphiRadarList', 'GroundTruthList', 'LightList', 'RadarList', 'UltrasonicList')))
_OTHER_CONFIGS = dict.fromkeys(('ros2Config', 'serialConfig', 'canConfig'))
NETWORK_KEYS = {'egoNetworkData': [{
    'UNIQUEID': None, 'connectedType': None, 'frameRate': None,
    'listEgoNetworkInfo': [{
        'netType': None, 'PUBSUB_TYPE': None, 'Division_TYPE': None,
        'config': dict(_OTHER_CONFIGS, commType=None, pubSleepTime=None, pubFrequency=None, udpConfig=_UDP_KEYS,
                       rosConfig=_ROS_KEYS, lcmConfig=None, GrpcConfig=None),
        'EgoCtrlConfig': dict(_OTHER_CONFIGS, egoCtrlMode=None, _PUBSUB_TYPE=None, commType=None, ctrlSleepTime=None,
                              ghostModeFlag=None, m_drivingStateInit=None, udpConfig=_UDP_KEYS, rosConfig=_ROS_KEYS),
    }],
}]}


def _levels(schema, path='', out=None):
    """{key: [the paths of the objects MORAI writes it in]} of a schema, for 'belongs in' hints."""
    out = {} if out is None else out
    if isinstance(schema, list):
        _levels(schema[0], path + '[]', out)
    elif isinstance(schema, dict):
        for k, sub in schema.items():
            if k:
                out.setdefault(k, []).append(path or 'the top level')
            _levels(sub, f'{path}.{k}' if path else k, out)
    return out


def key_warnings(doc, schema, path):
    """One line per key of ``doc`` (a file at ``path``) that ``schema`` does not have at that place:
    its path and a likely meant key, or where MORAI writes it."""
    where = _levels(schema)
    out = []

    def walk(obj, sch, key):
        if isinstance(sch, list) and isinstance(obj, list):
            for i, item in enumerate(obj):
                walk(item, sch[0], '%s[%d]' % (key, i))
        elif isinstance(sch, dict) and isinstance(obj, dict):
            sch = dict(sch)
            if '' in sch:          # a 2D LiDAR entry: the object holding commType is its configuration
                cfg = sch.pop('')
                sch.update((k, cfg) for k, v in obj.items() if isinstance(v, dict) and 'commType' in v)
            for k, v in obj.items():
                full = f'{key}.{k}' if key else k
                if k in sch:
                    walk(v, sch[k], full)
                    continue
                near = [m for m in sch if m and m.lower() == k.lower()] or \
                    difflib.get_close_matches(k, [m for m in sch if m], 1, 0.8)
                hint = (f'did you mean {near[0]}?' if near else
                        f"MORAI writes {k} in {' and '.join(sorted(set(where[k])))}, not here" if k in where
                        else 'no MORAI settings file we know has it here')
                out.append(f'{path}: {full}: {hint}; ignored')

    walk(doc, schema, '')
    return out


# ----------------------------------------------------------------------------- sensor file

def load_sensors(path):
    """:class:`SensorSettings` of a ``SensorInfo_<vehicle>.json`` file."""
    return parse_sensors(_read_json(path, 'sensor settings'), path)


def _config_object(entry, key, path):
    """The configuration object of a sensor entry (cc, lc, gc, ic, ...): the one holding commType."""
    names = [k for k, v in entry.items() if isinstance(v, dict) and 'commType' in v]
    if len(names) != 1:
        raise SettingsError('%s: %s configuration object (cc, lc, gc, ic, ... with commType)'
                            % (_where(path, key), 'no' if not names else 'more than one (%s)' % ', '.join(names)))
    return names[0], entry[names[0]]


def parse_sensors(doc, path='<settings>'):
    if not isinstance(doc, dict):
        raise SettingsError(f'{path}: expected a JSON object with cameraList, Lidar3DList, ... at the top')
    known = [name for name, _ in SENSOR_LISTS if name in doc]
    if not known:
        raise SettingsError('%s: not a MORAI sensor settings file: none of %s found'
                            % (path, ', '.join(n for n, _ in SENSOR_LISTS)))
    sensors, ignored = [], []
    for list_name, kind in SENSOR_LISTS:
        entries = doc.get(list_name, [])
        if not isinstance(entries, list):
            raise SettingsError(f'{_where(path, list_name)}: expected a list')
        for i, entry in enumerate(entries):
            sensors.append(_parse_sensor(entry, kind, '%s[%d]' % (list_name, i), path))
    for list_name, entries in sorted(doc.items()):
        if list_name.endswith('List') and list_name not in dict(SENSOR_LISTS) and isinstance(entries, list) \
                and entries:
            ignored.append((list_name, len(entries)))
    _check_unique(sensors, path)
    return SensorSettings(path, tuple(sensors), tuple(ignored), tuple(key_warnings(doc, SENSOR_KEYS, path)))


def _parse_sensor(entry, kind, key, path):
    if not isinstance(entry, dict):
        raise SettingsError(f'{_where(path, key)}: expected an object')
    uid = _int(entry, 'm_SensorUniqueID', key, path)
    pos = _get(entry, 'pos', key, path, (dict,))
    rot = _get(entry, 'rot', key, path, (dict,))
    values = {n: _number(pos, n, key + '.pos', path) for n in ('x', 'y', 'z')}
    angles = {n: _number(rot, n, key + '.rot', path) for n in ('roll', 'pitch', 'yaw')}
    pose = rep103_pose(values, angles)
    cname, cfg = _config_object(entry, key, path)
    ck = f'{key}.{cname}'
    comm = _int(cfg, 'commType', ck, path)
    ros = cfg.get('rosConfig') if isinstance(cfg.get('rosConfig'), dict) else {}
    topic = ros.get('Topic') if isinstance(ros.get('Topic'), str) else ''
    frame_id = ros.get('frameID') if isinstance(ros.get('frameID'), str) else ''
    host_ip, host_port, dest_ip, dest_port, extra = '', 0, '', 0, {}
    if comm == COMM_UDP and (kind in SENSOR_NODES or kind in BRIDGE_SENSORS):
        uk = ck + '.udpConfig'
        udp = _get(cfg, 'udpConfig', ck, path, (dict,))
        host_ip = _get(udp, 'hostIP', uk, path, (str,))
        dest_ip = _get(udp, 'destinationIP', uk, path, (str,))
        host_port = _port(udp, 'hostPort', uk, path)
        dest_port = _port(udp, 'destinationPort', uk, path)
        extra = _KIND_EXTRA.get(kind, lambda *a: {})(cfg, ck, path)
    return Sensor(kind, key, uid, comm, pose, host_ip, host_port, dest_ip, dest_port, topic.strip(),
                  frame_id.strip(), extra)


def _camera_extra(cfg, ck, path):
    width = _int(cfg, 'cameraResWidth', ck, path, 1, 65535)
    height = _int(cfg, 'cameraResHeight', ck, path, 1, 65535)
    fov = _number(cfg, 'cameraFOV', ck, path, 0.0, 180.0, exclusive=True)
    pp = _get(cfg, 'principalPoint', ck, path, (dict,))
    cx = _number(pp, 'x', ck + '.principalPoint', path, 0.0, width)
    cy = _number(pp, 'y', ck + '.principalPoint', path, 0.0, height)
    fx_file = _number(cfg, 'focalLengthpixel', ck, path, 0.0, exclusive=True) if 'focalLengthpixel' in cfg else None
    fx_fov = (width / 2.0) / math.tan(math.radians(fov) / 2.0)
    return {'width': width, 'height': height, 'fov_deg': fov, 'cx': cx, 'cy': cy, 'fx_file': fx_file,
            'fx': fx_fov}


def _lidar_extra(cfg, ck, path):
    t = _int(cfg, 'lidar3DType', ck, path)
    if t not in LIDAR3D_TYPES:
        raise SettingsError('%s=%d: unknown LiDAR type (known: %s); the bridge cannot tell which elevation '
                            'table it sends' % (_where(path, ck + '.lidar3DType'), t,
                                                ', '.join('%d = %s' % (k, v[0]) for k, v in
                                                          sorted(LIDAR3D_TYPES.items()))))
    if 'velodyneUnit' in cfg:
        unit = _number(cfg, 'velodyneUnit', ck, path)
        if abs(unit - VELODYNE_UNIT) > 1e-9:
            raise SettingsError('%s=%r: the bridge decodes 2 mm per count (velodyneUnit 0.5 counts per mm); '
                                'other units are not supported' % (_where(path, ck + '.velodyneUnit'), unit))
    return {'model': LIDAR3D_TYPES[t][0], 'lidar3d_type': t}


def _lidar2d_extra(cfg, ck, path):
    # no public file has a 2D LiDAR; its range is read from fireDistance, the 3D LiDAR's name (inferred)
    if 'fireDistance' in cfg:
        return {'range_max': _number(cfg, 'fireDistance', ck, path, 0.0, exclusive=True)}
    return {}


_KIND_EXTRA = {'camera': _camera_extra, 'lidar': _lidar_extra, 'lidar2d': _lidar2d_extra}


def _check_unique(sensors, path):
    """Two UDP sensors cannot share a destination port; two started sensors cannot share a frame
    or a topic."""
    for field, what in (('dest_port', 'destination port'), ('frame_id', 'rosConfig.frameID'),
                        ('topic', 'rosConfig.Topic')):
        seen = {}
        for s in sensors:
            bridged = s.udp and (s.kind in SENSOR_NODES or s.kind in BRIDGE_SENSORS)
            if not bridged:
                continue
            v = getattr(s, field)
            if not v:
                continue
            if v in seen:
                raise SettingsError(f'{path}: {seen[v].key} and {s.key} have the same {what} {v!r}')
            seen[v] = s


# ----------------------------------------------------------------------------- network file

def load_network(path):
    """:class:`NetworkSettings` of a network settings file (``egoNetworkData``)."""
    return parse_network(_read_json(path, 'network settings'), path)


def parse_network(doc, path='<network>'):
    egos = _get(doc, 'egoNetworkData', '', path, (list,))
    entries = []
    warnings = key_warnings(doc, NETWORK_KEYS, path)
    for e, ego in enumerate(egos):
        ek = 'egoNetworkData[%d]' % e
        uid = _int(ego, 'UNIQUEID', ek, path)
        infos = _get(ego, 'listEgoNetworkInfo', ek, path, (list,))
        for i, info in enumerate(infos):
            key = '%s.listEgoNetworkInfo[%d]' % (ek, i)
            n = _parse_net_entry(info, uid, key, path)
            entries.append(n)
            ctrl = info.get('EgoCtrlConfig')
            if n.pubsub != 771 and isinstance(ctrl, dict) and ctrl.get('commType') == COMM_UDP:
                warnings.append('%s: %s.EgoCtrlConfig.commType is 1 (UDP) in a PUBSUB_TYPE %d entry: ego control is '
                                'read from the PUBSUB_TYPE 771 entry only; ignored' % (path, key, n.pubsub))
            if n.pubsub == 771 and n.net_type == COMM_UDP and n.port is None:
                warnings.append('%s: %s.EgoCtrlConfig.commType is not 1 (UDP) although the entry\'s netType is 1: '
                                'the simulator takes no control over UDP, so udp_bridge sends no ctrl_cmd' % (path, key))
    streams = {}
    for n in entries:
        if n.stream is None or n.port is None:
            continue
        if n.stream in streams and streams[n.stream].port != n.port:
            raise SettingsError('%s: %s and %s both set udp_bridge\'s %s port (%d, %d)'
                                % (path, streams[n.stream].key, n.key, n.stream, streams[n.stream].port, n.port))
        streams[n.stream] = n
    return NetworkSettings(path, tuple(entries), tuple(warnings))


def _parse_net_entry(info, uid, key, path):
    net = _int(info, 'netType', key, path)
    pubsub = _int(info, 'PUBSUB_TYPE', key, path)
    division = _int(info, 'Division_TYPE', key, path) if 'Division_TYPE' in info else 0
    known = PUBSUB_STREAMS.get(pubsub)
    if pubsub == PUBSUB_COMPETITION_STATUS:
        known = ('competition_status', 'rx')
    stream, port, host_ip, dest_ip = None, None, '', ''
    if known is not None:
        stream, direction = known[:2]
        if net == COMM_UDP:
            if pubsub == 771:
                ck = key + '.EgoCtrlConfig'
                ctrl = _get(info, 'EgoCtrlConfig', key, path, (dict,))
                if _int(ctrl, 'commType', ck, path) == COMM_UDP:
                    udp = _get(ctrl, 'udpConfig', ck, path, (dict,))
                    port = _port(udp, 'hostPort', ck + '.udpConfig', path)
                    host_ip = _get(udp, 'hostIP', ck + '.udpConfig', path, (str,))
            else:
                ck = key + '.config'
                cfg = _get(info, 'config', key, path, (dict,))
                udp = _get(cfg, 'udpConfig', ck, path, (dict,))
                port = _port(udp, 'destinationPort' if direction == 'rx' else 'hostPort', ck + '.udpConfig', path)
                host_ip = _get(udp, 'hostIP', ck + '.udpConfig', path, (str,))
                if direction == 'rx':
                    dest_ip = _get(udp, 'destinationIP', ck + '.udpConfig', path, (str,)).strip()
    return NetworkEntry(key, uid, net, pubsub, division, host_ip, port, stream, dest_ip)


def sensor_key(s, leaf):
    """The key of ``leaf`` (``commType``, ``udpConfig.destinationPort``, ...) in sensor ``s``'s entry:
    ``GPSList[0].gc.udpConfig.destinationPort``."""
    cfg = SENSOR_CFG_NAMES.get(s.key.split('[')[0]) or '<configuration>'     # the 2D LiDAR's name is unknown
    return f'{s.key}.{cfg}.{leaf}'


def address_origin(sensors, s, leaf='udpConfig.destinationIP'):
    """Where sensor ``s``'s destinationIP (the address its node binds; or another ``leaf``, its
    destinationPort) is in the file, for errors."""
    return f'{sensors.path}: {sensor_key(s, leaf)}'
