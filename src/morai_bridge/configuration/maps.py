"""Maps: where a MORAI map's origin lies on the globe, for the bridge and the emulator alike.

MORAI SIM's map frame is east-north-up metres from the map's origin, a point in UTM; the simulator's
native ROS mode publishes that origin in every ``GPSMessage`` (``eastOffset``, ``northOffset``) and
teams subtract it from their UTM fix to get map coordinates.  A map is given as one value, ``map``:

* a map's name as MORAI writes it (``R_KR_PR_K-city_2025``, ``R_KR_PG_K-City``, ...; case does not
  matter): one data file ``config/maps/<name>.yaml`` each, every value with its source;
* the path of an MGeo folder (MORAI's map export: its ``global_info.json`` holds
  ``local_origin_in_global`` and ``global_coordinate_system``) or of that ``global_info.json``;
* the path of a scenario file MORAI's launcher saved (its ``mapInfo``: ``mapName``, ``eastOffset``,
  ``northOffset``, ``globalCoordinateSystem``);
* ``none``: origin 0, 0, 0, the map frame is UTM itself (what MORAI does for no map known; asked for,
  never silently).

No ROS here: the bridge (``~map``), the emulator (``map``) and the settings generator read the same
files through :func:`load_map`.
"""
import json
import os
import re
from typing import NamedTuple, Tuple

import yaml

#: the map the bridge and the emulator take when none is given: the 2025-26 competition's map
#: (docs/ros_api.md "Maps": the teams' saved scenarios and sensor data name it)
DEFAULT = 'R_KR_PR_K-city_2025'
NONE = 'none'
_KEYS = ('name', 'title', 'utm_zone', 'hemisphere', 'origin', 'sources', 'verified', 'aliases')
_ORIGIN = ('east', 'north', 'up')
_UTM_PROJ = re.compile(r'\+proj=utm\b.*?\+zone=(\d+)(.*)')
_UTM_NAME = re.compile(r'^UTM\s*(\d+)\s*([NS])?$', re.IGNORECASE)


class MapError(ValueError):
    """A map cannot be found or read; the text names the file and the key."""


class MapInfo(NamedTuple):
    name: str                   # MORAI's map name ('' when the source does not say)
    east: float                 # UTM easting of the map origin [m]
    north: float                # UTM northing of the map origin [m]
    up: float = 0.0             # height of the map origin [m]
    utm_zone: int = 52
    hemisphere: str = 'N'
    kind: str = 'table'         # table | mgeo | scenario | none
    path: str = ''              # the file the origin came from
    mgeo_dir: str = ''          # an MGeo folder, when the map was given as one
    title: str = ''
    sources: Tuple[Tuple[str, str], ...] = ()
    verified: str = ''

    def describe(self):
        """One line for logs and /diagnostics."""
        if self.kind == NONE:
            return 'none (origin 0, 0: map:=none)'
        where = {'table': 'config/maps', 'mgeo': 'MGeo ' + self.path, 'scenario': 'scenario ' + self.path}[self.kind]
        return '%s (origin %.3f E, %.3f N, UTM %d%s; from %s)' % (self.name or '?', self.east, self.north,
                                                                   self.utm_zone, self.hemisphere, where)


NO_MAP = MapInfo(name=NONE, east=0.0, north=0.0, kind=NONE, title='no map: the map frame is UTM')


def search_dir_default():
    """config/maps of the source tree, else of an install space (as sim_versions finds its profiles)."""
    here = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..',
                                         'config', 'maps'))
    candidates = [here] + [os.path.join(p, 'share', 'morai_msgs', 'config', 'maps')
                           for p in os.environ.get('CMAKE_PREFIX_PATH', '').split(os.pathsep) if p]
    return next((d for d in candidates if os.path.isdir(d)), None)


def available(search_dir=None):
    """Names of the maps with a data file."""
    d = search_dir or search_dir_default()
    try:
        return sorted(f[:-5] for f in os.listdir(d) if f.endswith('.yaml'))
    except (OSError, TypeError):
        return []


def _number(value, where, key):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MapError(f'{where}: {key} = {value!r} is not a number')
    return float(value)


def parse_table(data, where, name=''):
    """MapInfo from one config/maps file's mapping; MapError naming the key when unusable."""
    if not isinstance(data, dict):
        raise MapError(f'{where}: expected a mapping, got {type(data).__name__}')
    unknown = sorted(set(data) - set(_KEYS))
    if unknown:
        raise MapError(f"{where}: unknown keys {', '.join(unknown)} (known: {', '.join(_KEYS)})")
    origin = data.get('origin')
    if not isinstance(origin, dict) or not {'east', 'north'} <= set(origin):
        raise MapError(f'{where}: origin must be a mapping with east and north (and up) [m]')
    zone = data.get('utm_zone')
    if isinstance(zone, bool) or not isinstance(zone, int) or not 1 <= zone <= 60:
        raise MapError(f'{where}: utm_zone = {zone!r}: a UTM zone number 1..60')
    hemisphere = data.get('hemisphere', 'N')
    if hemisphere not in ('N', 'S'):
        raise MapError(f'{where}: hemisphere = {hemisphere!r}: N or S')
    sources = data.get('sources') or {}
    if not isinstance(sources, dict) or not all(k in _ORIGIN for k in sources):
        raise MapError(f"{where}: sources must map {', '.join(_ORIGIN)} to where each value comes from")
    return MapInfo(name=str(data.get('name') or name), title=str(data.get('title') or ''),
                   east=_number(origin['east'], where, 'origin.east'),
                   north=_number(origin['north'], where, 'origin.north'),
                   up=_number(origin.get('up', 0.0), where, 'origin.up'),
                   utm_zone=zone, hemisphere=hemisphere, kind='table', path=where,
                   sources=tuple(sorted((k, str(v).strip()) for k, v in sources.items())),
                   verified=str(data.get('verified') or '').strip())


def _table(name, search_dir):
    """The data file of map ``name`` (case-insensitive, aliases too), or None."""
    d = search_dir or search_dir_default()
    wanted = name.lower()
    for n in available(d):
        path = os.path.join(d, n + '.yaml')
        if n.lower() == wanted:
            return _read_table(path, n)
    for n in available(d):
        info_path = os.path.join(d, n + '.yaml')
        try:
            with open(info_path) as f:
                data = yaml.safe_load(f) or {}
        except (OSError, yaml.YAMLError) as e:
            raise MapError(f'map {info_path}: {e}') from None
        if wanted in (str(a).lower() for a in data.get('aliases') or ()):
            return _read_table(info_path, n)
    return None


def _read_table(path, name):
    try:
        with open(path) as f:
            return parse_table(yaml.safe_load(f), path, name)
    except (OSError, yaml.YAMLError) as e:
        raise MapError(f'map {path}: {e}') from None


def _read_json(path):
    try:
        with open(path, encoding='utf-8-sig') as f:
            return json.load(f)
    except FileNotFoundError:
        raise MapError(f'map {path}: no such file') from None
    except (OSError, ValueError) as e:
        raise MapError(f'map {path}: not readable JSON: {e}') from None


def utm_zone_of(text, where, key):
    """(zone, hemisphere) of a coordinate system as MORAI writes it: a proj string
    (``+proj=utm +zone=52 +ellps=WGS84 ...``, MGeo) or a name (``UTM52N``, scenario files)."""
    text = str(text or '').strip()
    m = _UTM_PROJ.search(text)
    if m:
        return int(m.group(1)), 'S' if '+south' in m.group(2) else 'N'
    m = _UTM_NAME.match(text)
    if m:
        return int(m.group(1)), (m.group(2) or 'N').upper()
    raise MapError(f'{where}: {key} = {text!r}: not a UTM coordinate system this project reads '
                   '(a "+proj=utm +zone=NN" string or "UTM52N")')


def from_global_info(path):
    """MapInfo of an MGeo folder's ``global_info.json`` (``path``: the folder or the file)."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    file = os.path.join(folder, 'global_info.json') if os.path.isdir(path) else path
    data = _read_json(file)
    if not isinstance(data, dict):
        raise MapError(f'{file}: expected a JSON object')
    origin = data.get('local_origin_in_global')
    if not isinstance(origin, list) or len(origin) < 2:
        raise MapError(f'{file}: local_origin_in_global must be [east, north(, up)]')
    zone, hemi = utm_zone_of(data.get('global_coordinate_system'), file, 'global_coordinate_system')
    name = os.path.basename(os.path.normpath(folder))
    return MapInfo(name=name, east=_number(origin[0], file, 'local_origin_in_global[0]'),
                   north=_number(origin[1], file, 'local_origin_in_global[1]'),
                   up=_number(origin[2], file, 'local_origin_in_global[2]') if len(origin) > 2 else 0.0,
                   utm_zone=zone, hemisphere=hemi, kind='mgeo', path=file, mgeo_dir=folder)


def from_scenario(path, data=None):
    """MapInfo of a MORAI launcher scenario file's ``mapInfo`` (``data``: its parsed JSON, if read)."""
    data = _read_json(path) if data is None else data
    info = data.get('mapInfo') if isinstance(data, dict) else None
    if not isinstance(info, dict):
        raise MapError(f'{path}: no mapInfo object (a scenario file MORAI\'s launcher saved has one)')
    for key in ('eastOffset', 'northOffset'):
        if key not in info:
            raise MapError(f'{path}: mapInfo.{key} is missing')
    zone, hemi = (utm_zone_of(info['globalCoordinateSystem'], path, 'mapInfo.globalCoordinateSystem')
                  if info.get('globalCoordinateSystem') else (52, 'N'))
    return MapInfo(name=str(info.get('mapName') or ''), east=_number(info['eastOffset'], path, 'mapInfo.eastOffset'),
                   north=_number(info['northOffset'], path, 'mapInfo.northOffset'),
                   utm_zone=zone, hemisphere=hemi, kind='scenario', path=path)


def load_map(value, search_dir=None):
    """The map ``value`` names (see the module docstring); MapError saying what is known otherwise."""
    value = str(value or '').strip()
    if not value:
        raise MapError('no map given: a map name (%s), an MGeo folder, a MORAI scenario file, or none'
                       % ', '.join(available(search_dir)))
    if value.lower() == NONE:
        return NO_MAP
    path = os.path.abspath(os.path.expanduser(value))
    if os.sep in value or value.endswith('.json') or os.path.exists(path):
        if os.path.isdir(path) or os.path.basename(path) == 'global_info.json':
            return from_global_info(path)
        if not os.path.exists(path):
            raise MapError(f'map {value!r}: no such file or folder')
        return from_scenario(path)
    found = _table(value, search_dir)
    if found is None:
        raise MapError('map %r: not a known map name (known: %s; or give an MGeo folder, a MORAI scenario file, '
                       'or none)' % (value, ', '.join(available(search_dir)) or 'none'))
    return found
