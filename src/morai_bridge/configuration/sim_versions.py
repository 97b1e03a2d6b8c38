"""Simulator version profiles: what the MORAI simulator means on the wire, per release.

The packets' layouts are the same across releases (the codec decodes every size variant by
itself); what differs is meaning and defaults.  One YAML file per release
(``config/sim_versions/<name>.yaml`` of this package, or any file given by its path) states:

* ``ctrl_steer_positive``: ``left`` or ``right``: where a positive Ego Ctrl Cmd ``steer`` turns.
* ``status_steer_positive``: the same for the Ego Vehicle Status ``steer`` it reports.
* ``ghost_steer_positive``: the same for the Ego Ghost Cmd ``steer_angle``.
* ``ctrl_cmd_bytes``: 55 (front steer) or 59 (front + rear steer): the Ego Ctrl Cmd it expects.
* ``imu_bytes``: 107 (no time) or 115 (sec/nsec): the IMU datagram it sends.
* ``empty_collision_slot``: ``zero`` (all-zero) or ``minus_one`` (obj_type -1; the first slot
  carries the ego's position): how it fills Collision Data slots without a collision.
* ``packet_clock``: ``simulation`` (sec/nsec = simulation time) or ``host_wall_clock`` (the
  simulator host's wall clock at millisecond resolution).
* ``imu_seconds``: ``utc`` or ``local``: the IMU's sec is the host's local time (25.S4:
  DateTime.Now with UTC milliseconds), wrong by the time zone on a host not set to UTC; the
  bridge then stamps IMU messages when they arrive.
* ``ports``: default destination ports that differ from :mod:`morai_bridge.wire.udp.streams` (only the streams in
  :data:`VERSIONED_PORTS`): e.g. the competition build's ego status on 911.
* ``name``, ``description``, ``sources`` and ``confidence`` (key -> measured / single source /
  inferred): documentation, shown in docs/versions.md.

From these follow the bridge's signs (:func:`bridge_signs`): MORAI's native ROS mode publishes
CtrlCmd.steering + left and EgoVehicleStatus.wheel_angle + right (negative for a left turn),
and the bridge publishes exactly that (docs/units.md).  No ROS here: the bridge, the emulator
and the self-test read the same profiles.
"""
import os
import re
from typing import NamedTuple, Tuple

import yaml

from morai_bridge.configuration.params import FROM_VERSION
from morai_bridge.wire.udp import streams

DEFAULT = '25.S4'
SIDES = ('left', 'right')
#: sim -> user streams whose default port a version may change (their rows' ``versioned``; the
#: competition status, which only the competition build sends, has port 0 = not sent)
VERSIONED_PORTS = {s.name: s.port for s in streams.STREAMS if s.versioned}
_KEYS = ('ctrl_steer_positive', 'status_steer_positive', 'ghost_steer_positive', 'ctrl_cmd_bytes', 'imu_bytes',
         'empty_collision_slot', 'packet_clock', 'imu_seconds', 'nmea_time', 'rmc_speed', 'rmc_course', 'ports')
_DOC_KEYS = ('name', 'description', 'sources', 'confidence')
_CHOICES = {'ctrl_steer_positive': SIDES, 'status_steer_positive': SIDES, 'ghost_steer_positive': SIDES,
            'ctrl_cmd_bytes': (55, 59), 'imu_bytes': (107, 115), 'empty_collision_slot': ('zero', 'minus_one'),
            'packet_clock': ('simulation', 'host_wall_clock'), 'imu_seconds': ('utc', 'local'),
            'nmea_time': ('tenths', 'milliseconds'), 'rmc_speed': ('knots', 'mps_x_0.00053995'),
            'rmc_course': ('course_over_ground', 'heading')}
#: keys a profile may leave out (files written before they existed), with the value then taken.  The
#: GPS output keys are read by the emulator only: the bridge publishes neither the NMEA time nor RMC
#: speed or course (docs/versions.md).
_OPTIONAL = {'nmea_time': 'tenths', 'rmc_speed': 'knots', 'rmc_course': 'course_over_ground'}
_CONFIDENCE = ('measured', 'single source', 'inferred', 'documented')
_NAME = re.compile(r'^[A-Za-z0-9_.-]+$')


class VersionError(ValueError):
    """A version profile cannot be found or used; the text says which and why."""


class SimVersion(NamedTuple):
    name: str
    ctrl_steer_positive: str
    status_steer_positive: str
    ghost_steer_positive: str
    ctrl_cmd_bytes: int
    imu_bytes: int
    empty_collision_slot: str
    packet_clock: str
    imu_seconds: str
    # GPS sentences: the UTC time's fraction (hhmmss.s tenths, or hhmmss.<ms> unpadded), what RMC's
    # speed field holds (knots, or m/s x 0.00053995: 25.S4's defect) and its course (over ground, or
    # the sensor's heading)
    nmea_time: str = _OPTIONAL['nmea_time']
    rmc_speed: str = _OPTIONAL['rmc_speed']
    rmc_course: str = _OPTIONAL['rmc_course']
    ports: Tuple[Tuple[str, int], ...] = ()
    description: str = ''
    sources: Tuple[Tuple[str, str], ...] = ()
    confidence: Tuple[Tuple[str, str], ...] = ()
    path: str = ''

    def port(self, stream):
        """The version's default destination port of ``stream`` (a key of VERSIONED_PORTS)."""
        return dict(self.ports).get(stream, VERSIONED_PORTS[stream])


class BridgeSigns(NamedTuple):
    steering_sign: int          # wire ctrl steer = sign x CtrlCmd.steering (normalised)
    status_steering_sign: int   # EgoVehicleStatus.wheel_angle = sign x wire status steer
    ghost_steering_sign: int    # wire ghost steer_angle = sign x GhostMessage.steering_angle


def bridge_signs(v):
    """The bridge's signs for version ``v``: CtrlCmd.steering is + left (native ROS mode),
    EgoVehicleStatus.wheel_angle and GhostMessage.steering_angle are + right (native ROS mode
    reports -10 deg for a 10 deg left turn; the ghost angle is the one the status then reports)."""
    return BridgeSigns(1 if v.ctrl_steer_positive == 'left' else -1,
                       1 if v.status_steer_positive == 'right' else -1,
                       1 if v.ghost_steer_positive == 'right' else -1)


def search_dir_default():
    """config/sim_versions of the source tree this module belongs to, else of an install space
    (``<prefix>/share/morai_msgs/config/sim_versions`` for each prefix of ``CMAKE_PREFIX_PATH``,
    which a sourced catkin workspace sets); None when neither exists."""
    here = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..',
                                         'config', 'sim_versions'))
    candidates = [here] + [os.path.join(p, 'share', 'morai_msgs', 'config', 'sim_versions')
                           for p in os.environ.get('CMAKE_PREFIX_PATH', '').split(os.pathsep) if p]
    return next((d for d in candidates if os.path.isdir(d)), None)


def available(search_dir):
    try:
        return sorted(f[:-5] for f in os.listdir(search_dir) if f.endswith('.yaml'))
    except (OSError, TypeError):
        return []


def _pairs(data, key, where, check):
    v = data.get(key) or {}
    if not isinstance(v, dict):
        raise VersionError(f'{where}: {key} must be a mapping')
    for k, x in v.items():
        check(k, x)
    return tuple(sorted(v.items()))


def parse_version(data, where='simulator version', name=''):
    """SimVersion from a mapping (the parsed YAML); VersionError naming the key when unusable."""
    if not isinstance(data, dict):
        raise VersionError(f'{where}: expected a mapping of keys, got {type(data).__name__}')
    unknown = sorted(set(data) - set(_KEYS + _DOC_KEYS))
    if unknown:
        raise VersionError(f"{where}: unknown keys {', '.join(unknown)} (known: {', '.join(_KEYS)})")
    values = {}
    for key, choices in _CHOICES.items():
        if key not in data and key in _OPTIONAL:
            continue
        if key not in data:
            raise VersionError(f"{where}: {key} is missing (one of {', '.join(map(str, choices))})")
        if data[key] not in choices or isinstance(data[key], bool):
            raise VersionError(f"{where}: {key} = {data[key]!r}: must be one of {', '.join(map(str, choices))}")
        values[key] = data[key]
    def port_ok(k, p):
        if k not in VERSIONED_PORTS:
            raise VersionError('%s: ports.%s: only %s have version-dependent ports (set ~%s_port instead)'
                               % (where, k, ', '.join(sorted(VERSIONED_PORTS)), k))
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p <= 65535:
            raise VersionError(f'{where}: ports.{k} = {p!r} is not a port number (0..65535)')

    def text_ok(k, t):
        if k not in _KEYS:
            raise VersionError(f'{where}: sources/confidence name unknown key {k!r}')

    def conf_ok(k, t):
        text_ok(k, t)
        if t not in _CONFIDENCE:
            raise VersionError(f"{where}: confidence.{k} = {t!r}: one of {', '.join(_CONFIDENCE)}")
    return SimVersion(name=str(data.get('name') or name), description=str(data.get('description') or '').strip(),
                      ports=_pairs(data, 'ports', where, port_ok),
                      sources=_pairs(data, 'sources', where, text_ok),
                      confidence=_pairs(data, 'confidence', where, conf_ok), **values)


def load_version(name_or_path, search_dir=None):
    """The profile ``name_or_path``: a name looked up in ``search_dir`` (default: the source
    tree's config/sim_versions), or the path of a YAML file."""
    search_dir = search_dir or search_dir_default()
    if not name_or_path:
        raise VersionError('no simulator version given (one of %s, or a path to a YAML file)'
                           % ', '.join(available(search_dir)))
    if os.sep in name_or_path or name_or_path.endswith(('.yaml', '.yml')):
        path = os.path.abspath(os.path.expanduser(name_or_path))
    elif not _NAME.match(name_or_path):
        raise VersionError('simulator version %r: only letters, digits, "_", "-" and "." (or give a path)'
                           % name_or_path)
    elif search_dir is None:
        raise VersionError('simulator version %r given by name but no profile directory is known: give a path'
                           % name_or_path)
    else:
        path = os.path.join(search_dir, name_or_path + '.yaml')
    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except FileNotFoundError:
        raise VersionError('simulator version %r: no file %s (known versions: %s)'
                           % (name_or_path, path, ', '.join(available(search_dir)) or 'none')) from None
    except (OSError, yaml.YAMLError) as e:
        raise VersionError(f'simulator version {path}: {e}') from None
    return parse_version(data, path, os.path.splitext(os.path.basename(path))[0])._replace(path=path)


def resolve_ports(values, version):
    """``values`` (stream name -> port) with FROM_VERSION replaced by the version's port."""
    return {k: version.port(k) if v == FROM_VERSION and k in VERSIONED_PORTS else v
                for k, v in values.items()}


def port_table(search_dir=None):
    """stream (VERSIONED_PORTS) -> [(version name, its port)] over the shipped profiles (for docs)."""
    versions = [load_version(n, search_dir) for n in available(search_dir or search_dir_default())]
    return {k: [(v.name, v.port(k)) for v in versions] for k in VERSIONED_PORTS}


def versions_receiving(stream, port, search_dir=None):
    """Names of the shipped profiles whose default destination port of ``stream`` (any
    sim -> user stream) is ``port``: which ``sim_version`` would have received it there."""
    if stream not in VERSIONED_PORTS:
        return available(search_dir or search_dir_default()) if port == streams.BY_NAME[stream].port else []
    return [name for name, p in port_table(search_dir)[stream] if p == port]


def to_yaml(version, comment=''):
    """The text of a profile file for ``version`` (what the sign self-test writes)."""
    data = {k: getattr(version, k) for k in _KEYS}
    data['ports'] = dict(version.ports)
    data['name'] = version.name
    if version.description:
        data['description'] = version.description
    data['sources'] = dict(version.sources)
    data['confidence'] = dict(version.confidence)
    head = ''.join(f'# {line}\n' for line in comment.splitlines())
    return head + yaml.safe_dump(data, default_flow_style=False, sort_keys=False)


def as_dict(version):
    return {k: getattr(version, k) for k in _KEYS}
