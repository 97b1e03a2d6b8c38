"""kinematics/dead_reckoning: the bicycle model of the ERP-42 wheel odometry, against poses worked out
by hand (straight line, a closed circle of the radius the wheelbase and angle give, backwards)."""
import math

import pytest

from morai_bridge.kinematics.dead_reckoning import DeadReckoning


def test_straight_ahead_and_back():
    dr = DeadReckoning(1.04)
    assert dr.advance(2.0, 0.0) == (2.0, 0.0, 0.0)
    x, y, yaw = dr.advance(-0.5, 0.0)
    assert (x, y, yaw) == (1.5, 0.0, 0.0)


def test_a_full_circle_closes():
    """At a fixed wheel angle the path is a circle of radius wheelbase / tan(angle) (left: + yaw)."""
    wheelbase, angle = 1.04, 20.0
    radius = wheelbase / math.tan(math.radians(angle))
    dr = DeadReckoning(wheelbase)
    steps = 720
    for _ in range(steps):
        x, y, yaw = dr.advance(2 * math.pi * radius / steps, angle)
    assert x == pytest.approx(0.0, abs=1e-9)
    assert y == pytest.approx(0.0, abs=1e-9)
    assert yaw == pytest.approx(0.0, abs=1e-9)
    # a quarter of the way round: (R, R), heading +90 deg (each step goes the arc's length along its chord: 3e-6 too far)
    dr = DeadReckoning(wheelbase)
    for _ in range(steps // 4):
        x, y, yaw = dr.advance(2 * math.pi * radius / steps, angle)
    assert (x, y) == pytest.approx((radius, radius), rel=1e-5)
    assert yaw == pytest.approx(math.pi / 2)


def test_speed_updates_use_the_elapsed_time():
    dr = DeadReckoning(2.7)
    assert dr.update_speed(10.0, 5.0, 0.0) == (0.0, 0.0, 0.0)      # the first call only sets the time
    assert dr.update_speed(10.5, 4.0, 0.0)[0] == pytest.approx(2.0)
    assert dr.yaw_rate(4.0, 10.0) == pytest.approx(4.0 * math.tan(math.radians(10.0)) / 2.7)
    assert dr.update_encoder(11.0, -1.0, 0.0)[0] == pytest.approx(1.0)


@pytest.mark.parametrize('wheelbase', [0.0, -1.0, math.nan])
def test_a_wheelbase_must_be_positive(wheelbase):
    with pytest.raises(ValueError, match='wheelbase'):
        DeadReckoning(wheelbase)
