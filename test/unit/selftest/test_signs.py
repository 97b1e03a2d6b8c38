"""morai_check_signs' measurement logic (selftest/signs.py, pure): status samples in, a verdict, a
measured profile and the steering gain out.  Runs against the emulator: test_check_signs.py.

Expected signs come from the profiles (config/sim_versions, each with its sources) and, where a
test says so, directly from outside evidence (cited per test; the ledger is docs/versions.md).
"""
import math

import pytest
from morai_bridge.selftest import signs
from morai_bridge.selftest.signs import (LEFT, RIGHT, Phase, Sample, compare, judge,
                                         measured_version, unwrapped_change)
from morai_bridge.configuration import sim_versions


# ----------------------------------------------------------------------------- the verdict (pure)

def drive(steer, yaw0, yaw_rate_deg_s, status_steer, speed=5.0, seconds=2.0, hz=50, imu=None, wheelbase=2.7):
    """A steering phase: ``seconds`` of status at ``hz`` with a constant yaw rate (deg/s, + CCW)."""
    n = int(seconds * hz) + 1
    samples = tuple(Sample(i / hz, yaw0 + yaw_rate_deg_s * i / hz, speed, status_steer, yaw_rate_deg_s, wheelbase)
                    for i in range(n))
    return Phase(steer, samples, tuple(imu or ()))


def test_unwrapped_change_takes_the_short_way_round():
    assert unwrapped_change([170.0, 179.0, -179.0, -170.0]) == pytest.approx(20.0)
    assert unwrapped_change([-170.0, -179.5, 179.5, 170.0]) == pytest.approx(-20.0)
    # the status yaw is not wrapped (roll -359.45 in a live 25.S4 status): any multiple of 360 between samples
    assert unwrapped_change([359.5, -0.2, 0.3]) == pytest.approx(0.8)
    assert unwrapped_change([10.0, 730.5]) == pytest.approx(0.5)


def test_a_left_turn_with_positive_steer_and_negative_status_steer():
    v = judge([drive(0.0, 0.0, 0.0, 0.0), drive(0.3, 0.0, 5.0, -10.0), drive(-0.3, 10.0, -5.0, 10.0)])
    assert (v.ctrl_steer_positive, v.status_steer_positive) == (LEFT, RIGHT)
    assert v.conclusive and not v.reasons
    plus = v.phases[1]
    assert plus.turn == LEFT and plus.heading_change_deg == pytest.approx(10.0)
    assert plus.distance_m == pytest.approx(5.0 / 3.6 * 2.0)


def test_the_same_turn_whatever_the_steer_is_inconclusive():
    """A road that curves the car left whatever the steer: the two phases disagree."""
    v = judge([drive(0.3, 0.0, 5.0, -10.0), drive(-0.3, 10.0, 5.0, 10.0)])
    assert v.ctrl_steer_positive is None and not v.conclusive
    assert "disagree" in v.reasons[0]


def test_no_heading_change_is_inconclusive_and_says_why():
    v = judge([drive(0.3, 90.0, 0.2, -0.1)])
    assert v.ctrl_steer_positive is None and v.status_steer_positive is None
    assert "no turn measured" in v.reasons[0] and "heading changed +0.40 deg" in v.reasons[0]


def test_not_moving_is_inconclusive():
    v = judge([drive(0.3, 0.0, 5.0, -10.0, speed=0.0)])
    assert not v.conclusive and "not moving" in v.reasons[0]


def test_heading_and_imu_disagreeing_decide_nothing():
    v = judge([drive(0.3, 0.0, 5.0, -10.0, imu=[-0.08] * 50)])
    assert v.ctrl_steer_positive is None and "channels disagree" in v.reasons[0]


def test_a_status_without_steer_leaves_the_status_side_unmeasured():
    v = judge([drive(0.3, 0.0, 5.0, 0.05)])
    assert v.ctrl_steer_positive == LEFT and v.status_steer_positive is None
    assert not v.conclusive and "status steer" in v.reasons[0]


def test_evidence_aisw_25s4_positive_wire_steer_gives_a_positive_imu_yaw_rate_left():
    """Outside evidence (issue 22's research, docs/versions.md "Ego Ctrl Cmd steer"): The-GIGACHA/2026_AISW
    measured on MORAI 25.S4.MolitComp03 (src/aisw_2026/tools/test/SITE_CHECKLIST.md @c7798bcb, 2026-09-17:
    "조향 부호 | + = 좌회전" = "+ = left turn"); their tool tools/test/morai_site_check.py sends raw wire steer
    +0.15 then -0.15 and reads the IMU angular_velocity z, expecting z > 0 for +0.15 ("정상(+좌)").  IMU z is
    + = CCW in 25.S4 (eriverOoO/heven-ad-2026 MORAI_25S4_REVERSE_ENGINEERING_REPORT_2026-08-01.md L355-361:
    angular z = -localRigid.y, from the simulator's code).
    Magnitude from their formula at 3 m/s: about 0.087 rad/s.  Heading is not used here: the IMU alone decides."""
    speed = 3.0 * 3.6
    plus = Phase(0.15, tuple(Sample(i / 40, None, speed, None) for i in range(81)), (0.087,) * 80)
    minus = Phase(-0.15, tuple(Sample(2 + i / 40, None, speed, None) for i in range(81)), (-0.087,) * 80)
    v = judge([plus, minus])
    assert v.ctrl_steer_positive == LEFT
    assert v.phases[0].turn == LEFT and v.phases[1].turn == RIGHT
    # the status steer was not part of that measurement: not claimed
    assert v.status_steer_positive is None and not v.conclusive
    # the 25.S4 profile agrees on the command side
    assert compare(sim_versions.load_version("25.S4"), v).ctrl_agrees is True


def test_evidence_heading_is_ccw_positive_and_not_wrapped():
    """MORAI SIM Standard manual, Local Map Coordinate System
    (help-morai-sim-standard-4-7-en.scrollhelp.site/mssumev/Local-Map-Coordinate-System.148048391.html): "The vehicle
    heading angle increases in the counter-clockwise (CCW) direction"; a live 25.S4 status has yaw -177.02 (not
    wrapped to 0..360).  A heading going 178 -> -177.02 is a left turn of 4.98 deg, not a right turn of 355."""
    samples = tuple(Sample(i * 0.5, y, 5.0, -8.0) for i, y in enumerate((178.0, 179.5, -178.5, -177.02)))
    v = judge([Phase(0.3, samples)])
    assert v.phases[0].heading_change_deg == pytest.approx(4.98)
    assert v.ctrl_steer_positive == LEFT and v.status_steer_positive == RIGHT


def test_the_measured_profile_loads_and_keeps_the_rest(tmp_path):
    base = sim_versions.load_version("25.S4")
    v = judge([drive(0.3, 0.0, -5.0, 10.0), drive(-0.3, -10.0, 5.0, -10.0)])    # + right, status + right
    m = measured_version(base, v, "2026-11-23 20:00 UTC", {"ctrl_steer_positive": "wire +0.30 turned right"})
    path = tmp_path / "mine.yaml"
    path.write_text(sim_versions.to_yaml(m))
    got = sim_versions.load_version(str(path))
    assert (got.ctrl_steer_positive, got.status_steer_positive) == (RIGHT, RIGHT)
    assert got.ghost_steer_positive == base.ghost_steer_positive
    for key in ("ctrl_steer_positive", "status_steer_positive"):
        assert dict(got.confidence)[key] == "measured"
        assert dict(got.sources)[key].startswith("measured by morai_check_signs on 2026-11-23")
    assert "wire +0.30 turned right" in dict(got.sources)["ctrl_steer_positive"]
    assert "Not measurable by driving" in dict(got.sources)["ghost_steer_positive"]
    assert got._replace(name="", description="", sources=(), confidence=(), path="") == base._replace(
        ctrl_steer_positive=RIGHT, name="", description="", sources=(), confidence=(), path="")
    assert sim_versions.bridge_signs(got) == (-1, 1, 1)


def test_an_inconclusive_verdict_makes_no_profile():
    with pytest.raises(ValueError, match="inconclusive"):
        measured_version(sim_versions.load_version("25.S4"), judge([drive(0.3, 0.0, 0.0, 0.0)]), "today")


# ----------------------------------------------------------------------------- the steering gain

def test_wheel_angle_inverts_the_kinematic_bicycle():
    """yaw rate = v_x tan(delta) / L, v_x the forward speed (the status' signed speed): inverted exactly."""
    for delta_deg in (5.0, 24.0, -20.0, 60.0):
        rate = 1.4 * math.tan(math.radians(delta_deg)) / 3.0
        assert math.degrees(signs.wheel_angle(rate, 1.4, 3.0)) == pytest.approx(delta_deg, abs=1e-9)


def test_wheel_angle_of_the_emulated_car_needs_no_reference_point_correction():
    """The emulator's car (kinematic bicycle, status position at the box centre, 1.35 m ahead of the
    rear axle) turning with its wheels at 20 deg: its status' signed speed (the forward component, as
    the simulator's) and yaw rate give back 20 deg; the centre's speed (|velocity|) would give 19.7."""
    from morai_bridge.emu.sim.ego import EgoModel, VehicleParams
    car = EgoModel(VehicleParams())
    car.set_pose(0.0, 0.0, speed_kmh=18.0, steer_deg=-20.0)          # wire steer + right: 20 deg left
    forward, lateral = car.velocity("body")
    assert lateral > 0.1
    assert math.degrees(signs.wheel_angle(car.yaw_rate, forward, car.p.wheelbase)) == pytest.approx(20.0, abs=1e-9)
    assert math.degrees(signs.wheel_angle(car.yaw_rate, math.hypot(forward, lateral), car.p.wheelbase)) < 19.8


def test_steady_yaw_rate_is_the_slope_with_its_error():
    samples = [signs.Sample(0.1 * k, 179.0 + 2.0 * 0.1 * k + (0.05 if k % 2 else -0.05), 5.0, 1.0)
               for k in range(20)]                                   # 2 deg/s across +-180, +-0.05 noise
    rate, se = signs.steady_yaw_rate(samples)
    assert math.degrees(rate) == pytest.approx(2.0, abs=0.05)
    assert 0 < math.degrees(se) < 0.05
    assert signs.steady_yaw_rate(samples[:2]) is None


def test_the_gain_is_not_measured_without_a_turn():
    g = signs.measure_gain([signs.Phase(0.3, tuple(signs.Sample(0.1 * k, 10.0, 5.0, 1.0, wheelbase=3.0)
                                                   for k in range(20)))])
    assert g.full_scale_deg is None and "heading changed 0.00 deg" in g.why
