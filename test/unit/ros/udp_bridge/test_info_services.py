"""The information services' messages (ros/udp_bridge/info_services.py): traffic light, vehicle spec, map spec.
"""
import os

import pytest

import helpers

ROOT = helpers.ROOT
PROFILES = os.path.join(ROOT, 'config', 'vehicles')


def status(**kw):
    from morai_bridge.wire import udp
    return udp.make(udp.EgoVehicleStatus, data_length=200, sec=1, nsec=0, **kw)


def test_tl_info_of_a_seen_and_an_unseen_light():
    import rospy
    from morai_bridge.ros.udp_bridge import info_services
    m = info_services.tl_info('C119BS010007', (33, 2, rospy.Time(5, 6)), 'map')
    assert (m.idx, m.status, m.header.stamp, m.header.frame_id) == ('C119BS010007', 33, rospy.Time(5, 6), 'map')
    m = info_services.tl_info('NOSUCHLIGHT1', None, 'map')
    assert (m.idx, m.status, m.header.stamp.is_zero()) == ('NOSUCHLIGHT1', 0, True)


def test_vehicle_spec_from_status_else_profile():
    from morai_bridge.ros.udp_bridge import info_services
    from morai_bridge.configuration import vehicle_profiles as vp
    erp = vp.load_profile('erp42', PROFILES)
    m = info_services.vehicle_spec(erp, 28.17)
    assert (m.size.x, m.size.y, m.size.z, m.wheel_base, m.overhang, m.rear_overhang, m.max_steering) == (
        2.02, 1.16, 0.0, pytest.approx(1.04), 0.0, 0.0, 28.17)
    w = status(size_x=4.5, size_y=1.8, size_z=1.4, overhang=0.9, wheelbase=2.75, rear_overhang=0.85)
    m = info_services.vehicle_spec(vp.load_profile('morai_sedan', PROFILES), 36.25, w)
    assert (m.size.x, m.wheel_base, m.overhang, m.rear_overhang, m.max_steering) == (
        4.5, 2.75, pytest.approx(0.9), pytest.approx(0.85), 36.25)


def test_map_spec_is_utm_of_the_zone():
    from morai_bridge.ros.udp_bridge import info_services
    m = info_services.map_spec(0, 52, 302459.942, 4122635.537, 28.991)
    assert (m.utm_num, m.central_meridian, m.scale_factor, m.false_easting, m.false_northing) == (
        52, 129.0, 0.9996, 500000.0, 0.0)
    assert (m.utm_offset.x, m.utm_offset.y, m.utm_offset.z, m.ellipse) == (302459.942, 4122635.537, 28.991,
                                                                            'WGS84')
