"""The nodes find the package's vehicle profiles (ros/package_config.py).
"""
import os

import helpers

ROOT = helpers.ROOT
PROFILES = os.path.join(ROOT, 'config', 'vehicles')


def test_nodes_find_the_profiles_of_the_package():
    from morai_bridge.ros import package_config as profiles
    d = profiles.profile_dir()
    assert d is not None and os.path.samefile(d, PROFILES)
    assert profiles.load_vehicle_profile('erp42').max_steering_deg == 28.17
