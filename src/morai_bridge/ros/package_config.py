"""Vehicle and simulator-version profiles and maps for the nodes: the package's ``config/vehicles``,
``config/sim_versions`` and ``config/maps`` (found with rospkg), or a path.

The profile formats and their checks are in :mod:`morai_bridge.configuration.vehicle_profiles` and
:mod:`morai_bridge.configuration.sim_versions` (no ROS).
"""
import os

import rospkg

from morai_bridge.configuration import maps, sim_versions, vehicle_profiles
from morai_bridge.configuration.params import FROM_MAP, FROM_PROFILE, FROM_VERSION
from morai_bridge.link.transport import shift_privileged
from morai_bridge.wire.udp import streams

PACKAGE = 'morai_msgs'


def package_dir():
    """The package's directory: found with rospkg, else the source tree this module belongs to."""
    try:
        return rospkg.RosPack().get_path(PACKAGE)
    except rospkg.ResourceNotFound:
        return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..'))


def profile_dir(sub='vehicles'):
    """The package's config/<sub> directory (None when it cannot be found)."""
    d = os.path.join(package_dir(), 'config', sub)
    return d if os.path.isdir(d) else None


def load_vehicle_profile(name_or_path):
    """The VehicleProfile ``name_or_path`` (a name in config/vehicles, or a path); ProfileError if unusable."""
    return vehicle_profiles.load_profile(name_or_path, profile_dir())


def load_sim_version(name_or_path):
    """The SimVersion ``name_or_path`` (a name in config/sim_versions, or a path); VersionError if unusable."""
    return sim_versions.load_version(name_or_path, profile_dir('sim_versions'))


def load_map(value):
    """The MapInfo of ``value`` (a name in config/maps, an MGeo folder, a MORAI scenario file, or none);
    MapError if unusable."""
    return maps.load_map(value, profile_dir('maps'))


#: parameter -> the MapInfo field that fills it when the parameter is left at FROM_MAP
MAP_FILLED = (('gps_east_offset', 'east'), ('gps_north_offset', 'north'), ('map_origin_z', 'up'),
              ('map_utm_zone', 'utm_zone'))


def apply_map(cfg):
    """(cfg with the origin parameters left at FROM_MAP filled from ``cfg.map``, that MapInfo).  Those
    of MAP_FILLED that ``cfg`` has (capture_replay has no map service parameters); a value given
    overrides the map's."""
    m = load_map(cfg.map)
    out = type(cfg)(cfg)
    for key, field in MAP_FILLED:
        if key in out and out[key] == FROM_MAP:
            out[key] = getattr(m, field)
    return out, m


def apply_sim_version(cfg):
    """(cfg with the parameters left to the version filled in, the SimVersion of ``cfg.sim_version``).

    Left to the version: the steering signs at 0, ``ctrl_cmd_bytes`` at 0 and the versioned ports
    at -1 (those of ``cfg`` that exist: capture_replay has no command parameters).  Then every
    port below 1024 moves by ``privileged_port_offset`` where ``cfg`` has one (udp_bridge)."""
    v = load_sim_version(cfg.sim_version)
    signs = sim_versions.bridge_signs(v)._asdict()
    out = type(cfg)(cfg)
    for k, value in signs.items():
        if k in out and out[k] == FROM_PROFILE:
            out[k] = value
    if out.get('ctrl_cmd_bytes') == FROM_PROFILE:
        out['ctrl_cmd_bytes'] = v.ctrl_cmd_bytes
    for stream in sim_versions.VERSIONED_PORTS:
        key = streams.BY_NAME[stream].param
        if out.get(key) == FROM_VERSION:
            out[key] = v.port(stream)
    offset = out.get('privileged_port_offset', 0)
    for key in out:
        if key.endswith('_port'):
            out[key] = shift_privileged(out[key], offset)
    return out, v
