"""Vehicle profiles for the nodes: the package's ``config/vehicles`` (found with rospkg) or a path.

The profile format and its checks are in :mod:`morai_bridge.wire.vehicle_profiles` (no ROS).
"""
import os

import rospkg

from morai_bridge.wire import vehicle_profiles

PACKAGE = 'morai_msgs'


def profile_dir():
    """The package's config/vehicles directory (None when it cannot be found)."""
    try:
        base = rospkg.RosPack().get_path(PACKAGE)
    except rospkg.ResourceNotFound:
        # not on ROS_PACKAGE_PATH: the source tree this module belongs to
        base = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..')
    d = os.path.normpath(os.path.join(base, 'config', 'vehicles'))
    return d if os.path.isdir(d) else None


def load_vehicle_profile(name_or_path):
    """The VehicleProfile ``name_or_path`` (a name in config/vehicles, or a path); ProfileError if unusable."""
    return vehicle_profiles.load_profile(name_or_path, profile_dir())
