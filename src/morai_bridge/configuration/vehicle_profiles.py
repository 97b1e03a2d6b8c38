"""Named vehicle profiles: maximum steering angle, wheelbase, size and overhangs.

A profile is a small YAML file (``config/vehicles/<name>.yaml`` of this package,
or any file given by its path) with these keys, lengths in metres and angles in
degrees:

* ``max_steering_deg`` (required): front-wheel angle that Ego Ctrl Cmd
  ``steer = 1`` means; the bridge divides commanded angles by it.
* ``wheelbase_m`` (required).
* ``length_m``, ``width_m``, ``height_m``, ``front_overhang_m``,
  ``rear_overhang_m``: optional, ``null`` when not known.
* ``name``, ``description``, ``sources`` (key -> where the value comes from) and
  ``verified`` (keys checked against real simulator traffic): documentation.

:func:`load_profile` takes a profile name (looked up in a directory the caller
passes, e.g. the package's ``config/vehicles``) or a path, and returns a
:class:`VehicleProfile`; anything unusable raises :class:`ProfileError` naming
the file and key.  No ROS: the nodes find the directory with rospkg.
"""
import math
import os
import re
from typing import NamedTuple, Optional, Tuple

import yaml

from morai_bridge.configuration.params import FROM_PROFILE

REQUIRED = ('max_steering_deg', 'wheelbase_m')
OPTIONAL = ('length_m', 'width_m', 'height_m', 'front_overhang_m', 'rear_overhang_m')
_NAME = re.compile(r'^[A-Za-z0-9_.-]+$')


class ProfileError(ValueError):
    """A vehicle profile cannot be found or used; the text says which and why."""


class VehicleProfile(NamedTuple):
    name: str
    max_steering_deg: float
    wheelbase_m: float
    length_m: Optional[float] = None
    width_m: Optional[float] = None
    height_m: Optional[float] = None
    front_overhang_m: Optional[float] = None
    rear_overhang_m: Optional[float] = None
    description: str = ''
    verified: Tuple[str, ...] = ()
    path: str = ''


def is_path(name_or_path):
    """True when ``name_or_path`` names a file rather than a profile name."""
    return os.sep in name_or_path or name_or_path.endswith(('.yaml', '.yml'))


def available(search_dir):
    """Profile names in ``search_dir`` (sorted; [] when the directory does not exist)."""
    try:
        files = os.listdir(search_dir)
    except OSError:
        return []
    return sorted(f[:-5] for f in files if f.endswith('.yaml'))


def profile_path(name_or_path, search_dir):
    """The file of a profile name (``search_dir/<name>.yaml``) or the path itself."""
    if not name_or_path:
        known = available(search_dir) if search_dir else []
        raise ProfileError('no vehicle profile given (a name such as %s, or a path to a YAML file)'
                           % (', '.join(known) or 'morai_sedan'))
    if is_path(name_or_path):
        return os.path.abspath(os.path.expanduser(name_or_path))
    if not _NAME.match(name_or_path):
        raise ProfileError('vehicle profile name %r: only letters, digits, "_", "-" and "." (or give a path)'
                           % name_or_path)
    if search_dir is None:
        raise ProfileError('vehicle profile %r given by name but no profile directory is known: give a path'
                           % name_or_path)
    return os.path.join(search_dir, name_or_path + '.yaml')


def _number(data, key, where, required):
    v = data.get(key)
    if v is None:
        if required:
            raise ProfileError(f'{where}: {key} is missing')
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        raise ProfileError(f'{where}: {key} = {v!r} is not a number >= 0')
    return float(v)


def parse_profile(data, where='vehicle profile', name=''):
    """VehicleProfile from a mapping (the parsed YAML); ProfileError when unusable."""
    if not isinstance(data, dict):
        raise ProfileError(f'{where}: expected a mapping of keys, got {type(data).__name__}')
    unknown = sorted(set(data) - set(REQUIRED + OPTIONAL + ('name', 'description', 'sources', 'verified')))
    if unknown:
        raise ProfileError(f"{where}: unknown keys {', '.join(unknown)} (known: {', '.join(REQUIRED + OPTIONAL)})")
    values = {k: _number(data, k, where, True) for k in REQUIRED}
    values.update((k, _number(data, k, where, False)) for k in OPTIONAL)
    if not 1.0 <= values['max_steering_deg'] < 90.0:
        raise ProfileError(f"{where}: max_steering_deg = {values['max_steering_deg']!r} is not in 1..90")
    if values['wheelbase_m'] <= 0.0:
        raise ProfileError(f'{where}: wheelbase_m must be > 0')
    verified = data.get('verified') or ()
    if not isinstance(verified, (list, tuple)) or not set(verified) <= set(REQUIRED + OPTIONAL):
        raise ProfileError(f"{where}: verified must list keys of {', '.join(REQUIRED + OPTIONAL)}")
    return VehicleProfile(name=str(data.get('name') or name), description=str(data.get('description') or ''),
                          verified=tuple(verified), **values)


def load_profile(name_or_path, search_dir=None):
    """The profile ``name_or_path``: a name looked up in ``search_dir``, or a YAML file's path."""
    path = profile_path(name_or_path, search_dir)
    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except FileNotFoundError:
        known = available(search_dir) if search_dir else []
        raise ProfileError('vehicle profile %r: no file %s%s' % (
            name_or_path, path, (' (known profiles: %s)' % ', '.join(known)) if known else '')) from None
    except (OSError, yaml.YAMLError) as e:
        raise ProfileError(f'vehicle profile {path}: {e}') from None
    name = os.path.splitext(os.path.basename(path))[0]
    return parse_profile(data, path, name)._replace(path=path)


def choose(explicit, from_profile):
    """The value in force: an explicitly set parameter overrides the profile's value; FROM_PROFILE (0)
    or less leaves it to the profile."""
    return float(explicit) if explicit and explicit > FROM_PROFILE else from_profile


def to_yaml(base, max_steering_deg, source, comment=''):
    """The text of a profile file: ``base`` (a VehicleProfile) with ``max_steering_deg`` measured
    (``source`` says how; the key is then listed as verified).  What the sign self-test writes."""
    data = {'name': (base.name if base.name.endswith('-measured') else base.name + '-measured')}
    if base.description:
        data['description'] = base.description
    data['max_steering_deg'] = round(float(max_steering_deg), 2)
    for k in REQUIRED[1:] + OPTIONAL:
        if getattr(base, k) is not None:
            data[k] = getattr(base, k)
    data['sources'] = {'max_steering_deg': source}
    data['verified'] = sorted(set(base.verified) | {'max_steering_deg'})
    head = ''.join(f'# {line}\n' for line in comment.splitlines())
    return head + yaml.safe_dump(data, default_flow_style=False, sort_keys=False)
