"""Vehicle profiles (wire/vehicle_profiles.py, config/vehicles): the shipped ones, the sedan's sizes
against the captured status, profiles by path and their errors, an explicit parameter over the
profile.
"""
import os

import pytest

import helpers

ROOT = helpers.ROOT
PROFILES = os.path.join(ROOT, 'config', 'vehicles')


def test_profiles_shipped():
    from morai_bridge.configuration import vehicle_profiles as vp
    assert {'morai_sedan', 'erp42'} <= set(vp.available(PROFILES))
    sedan = vp.load_profile('morai_sedan', PROFILES)
    assert (sedan.max_steering_deg, sedan.wheelbase_m) == (36.25, 2.795)
    assert (sedan.length_m, sedan.width_m, sedan.height_m) == (4.845, 1.835, 1.455)
    assert (sedan.front_overhang_m, sedan.rear_overhang_m) == (0.965, 1.085)
    assert sedan.length_m == pytest.approx(sedan.front_overhang_m + sedan.wheelbase_m + sedan.rear_overhang_m)
    erp = vp.load_profile('erp42', PROFILES)
    assert (erp.max_steering_deg, erp.wheelbase_m) == (28.17, 1.04)
    assert erp.verified == ()                         # nothing of it checked against traffic


def test_sedan_profile_matches_the_captured_status():
    """The sizes marked verified are those of the ego status in the shared captures."""
    cap = os.path.join(ROOT, '..', 'shared', 'captures', 'MORAI_909.pcap')
    if not os.path.exists(cap):
        cap = '/work/shared/captures/MORAI_909.pcap'
    if not os.path.exists(cap):
        pytest.skip('shared captures not present')
    from morai_bridge.wire import capture, udp
    from morai_bridge.configuration import vehicle_profiles as vp
    sedan = vp.load_profile('morai_sedan', PROFILES)
    got = set()
    for _, _, _, data in capture.read_capture(cap):
        m = udp.decode(data)
        got.add(tuple(round(v, 3) for v in (m.size_x, m.size_y, m.size_z, m.overhang, m.wheelbase,
                                            m.rear_overhang)))
    assert got == {(sedan.length_m, sedan.width_m, sedan.height_m, sedan.front_overhang_m, sedan.wheelbase_m,
                    sedan.rear_overhang_m)}
    assert set(sedan.verified) == {'length_m', 'width_m', 'height_m', 'front_overhang_m', 'wheelbase_m',
                                   'rear_overhang_m'}


def test_profile_by_path_and_errors(tmp_path):
    from morai_bridge.configuration import vehicle_profiles as vp
    f = tmp_path / 'kart.yaml'
    f.write_text('max_steering_deg: 30\nwheelbase_m: 1.2\nlength_m: null\n')
    p = vp.load_profile(str(f))
    assert (p.name, p.max_steering_deg, p.wheelbase_m, p.length_m, p.path) == ('kart', 30.0, 1.2, None, str(f))
    with pytest.raises(vp.ProfileError, match='known profiles: .*erp42.*morai_sedan'):
        vp.load_profile('nosuchcar', PROFILES)
    f.write_text('wheelbase_m: 1.2\n')
    with pytest.raises(vp.ProfileError, match='max_steering_deg is missing'):
        vp.load_profile(str(f))
    f.write_text('max_steering_deg: 30\nwheelbase_m: 1.2\nmax_steer: 3\n')
    with pytest.raises(vp.ProfileError, match='unknown keys max_steer'):
        vp.load_profile(str(f))
    f.write_text('max_steering_deg: .nan\nwheelbase_m: 1.2\n')
    with pytest.raises(vp.ProfileError, match='not a number'):
        vp.load_profile(str(f))
    with pytest.raises(vp.ProfileError, match='no profile directory'):
        vp.load_profile('erp42', None)
    with pytest.raises(vp.ProfileError):
        vp.load_profile('', PROFILES)


def test_explicit_parameter_overrides_the_profile():
    from morai_bridge.configuration import vehicle_profiles as vp
    assert vp.choose(0.0, 28.17) == 28.17          # not set: the profile's
    assert vp.choose(30.0, 28.17) == 30.0          # set: wins
