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


def test_the_map_fills_the_origin_parameters_left_to_it_and_a_given_value_overrides():
    from morai_bridge.configuration.params import Config
    from morai_bridge.ros import package_config
    cfg = Config(map='r_kr_pg_k-city', gps_east_offset=0.0, gps_north_offset=4122000.0, map_origin_z=0.0,
                 map_utm_zone=0)
    out, m = package_config.apply_map(cfg)
    assert m.name == 'R_KR_PG_K-City'
    assert (out.gps_east_offset, out.gps_north_offset, out.map_origin_z, out.map_utm_zone) == \
        (302459.942, 4122000.0, 28.991, 52)
    assert cfg.gps_east_offset == 0.0, 'the given cfg is left as it was'
    out, m = package_config.apply_map(Config(map='none', gps_east_offset=0.0, gps_north_offset=0.0))
    assert (out.gps_east_offset, out.gps_north_offset, m.kind) == (0.0, 0.0, 'none')


def test_a_map_without_a_data_file_is_a_clear_error():
    import pytest
    from morai_bridge.configuration.maps import MapError
    from morai_bridge.configuration.params import Config
    from morai_bridge.ros import package_config
    with pytest.raises(MapError, match='known: .*R_KR_PR_K-city_2025'):
        package_config.apply_map(Config(map='R_KR_PR_Atlantis', gps_east_offset=0.0, gps_north_offset=0.0))
