"""CtrlCmd -> command frame and feedback -> message values (spec section 10)."""

import dataclasses
import math

import pytest
from hypothesis import given, strategies as st

import helpers
from morai_bridge.wire.erp42 import (
    Command, CommandRejected, Erp42Error, Feedback, decode_feedback, encode_command)
from morai_bridge.wire.erp42.convert import (
    DEFAULT_PARAMS, Erp42Params, encoder_delta, encoder_travel_m, feedback_to_values,
    ctrl_to_command, next_alive, round_half_away, stop_command)

V = helpers.load_vectors("erp42")
TOL = V["conventions"]["float_tolerance"]


def cmd(velocity=0.0, steering=0.0, brake=0.0, params=DEFAULT_PARAMS, alive=0, **kw):
    """Call ctrl_to_command like a driver does for a CtrlCmd with longlCmdType 2."""
    return ctrl_to_command(2, 0.0, brake, steering, velocity, 0.0, params, alive, **kw)


@pytest.mark.parametrize("vec", V["ctrlcmd_to_command"], ids=lambda v: v["name"])
def test_ctrlcmd_vectors(vec):
    c = vec["input"]["ctrl_cmd"]
    params = Erp42Params.from_mapping(vec["input"]["params"])
    out = ctrl_to_command(c["longlCmdType"], c.get("accel", 0.0), c["brake"], c["steering"],
                          c["velocity"], c.get("acceleration", 0.0), params,
                          vec["fields"]["alive"], prev_gear=0, feedback_speed=0)
    assert out == Command(**vec["fields"])
    assert encode_command(out) == bytes.fromhex(vec["hex"])


def test_acceptance_example_10kmh_left_0_1rad():
    out = cmd(10.0, 0.1)
    assert out.speed == 100
    assert out.steer == -round_half_away(math.degrees(0.1) * 71) == -407
    assert encode_command(out)[6:10] == bytes.fromhex("0064fe69")


@pytest.mark.parametrize("t", [0, 1, 3, 4, -1])
def test_only_velocity_control_is_accepted(t):
    with pytest.raises(CommandRejected) as ei:
        ctrl_to_command(t, 0.0, 0.0, 0.0, 5.0)
    assert ei.value.reason == "unsupported_type"
    assert isinstance(ei.value, Erp42Error)


@pytest.mark.parametrize("field", range(5))
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_inputs_never_produce_a_frame(field, bad):
    args = [0.0, 0.0, 0.0, 5.0, 0.0]  # accel, brake, steering, velocity, acceleration
    args[field] = bad
    with pytest.raises(CommandRejected) as ei:
        ctrl_to_command(2, *args)
    assert ei.value.reason == "non_finite"


def test_zero_velocity_keeps_previous_gear():
    assert cmd(0.0, prev_gear=2, feedback_speed=0).gear == 2
    assert cmd(0.0).gear == 0
    assert cmd(0.0, prev_gear=1).gear == 1


def test_gear_interlock_holds_until_standstill():
    moving = cmd(-5.0, prev_gear=0, feedback_speed=30)
    assert (moving.gear, moving.speed, moving.brake) == (0, 0, DEFAULT_PARAMS.brake_max)
    unknown = cmd(-5.0, prev_gear=0, feedback_speed=None)
    assert (unknown.gear, unknown.speed, unknown.brake) == (0, 0, 150)
    stopped = cmd(-5.0, prev_gear=0, feedback_speed=0)
    assert (stopped.gear, stopped.speed, stopped.brake) == (2, 50, 1)
    # Same direction while moving is not affected.
    assert cmd(5.0, prev_gear=0, feedback_speed=30).speed == 50
    # Interlock off: direction changes immediately.
    free = dataclasses.replace(DEFAULT_PARAMS, gear_interlock=False)
    assert cmd(-5.0, params=free, prev_gear=0, feedback_speed=30).gear == 2


def test_steering_keeps_its_value_while_interlocked():
    assert cmd(-5.0, 0.1, prev_gear=0, feedback_speed=10).steer == -407


def test_estop_request_forces_stop_fields():
    out = cmd(10.0, 0.1, brake=0.0, alive=9, estop=True)
    assert out == Command(1, 1, 0, 0, -407, 150, 9)


def test_clamps_follow_parameters():
    p = Erp42Params(max_speed_kmh=5.0, max_steer_deg=10.0)
    assert cmd(12.0, params=p).speed == 50
    assert cmd(-12.0, params=p, feedback_speed=0).speed == 50
    assert cmd(0.0, -1.0, params=p).steer == 710
    assert cmd(0.0, 1.0, params=p).steer == -710


def test_steering_offset_is_left_positive_degrees():
    p = Erp42Params(steering_offset_deg=1.0)
    assert cmd(0.0, 0.0, params=p).steer == -71


@pytest.mark.parametrize("b,expected", [(-0.5, 1), (0.0, 1), (0.5, 76), (1.0, 150), (7.0, 150)])
def test_brake_mapping_and_clip(b, expected):
    # 0.5 * 149 = 74.5: a tie, rounded away from zero (75), not to even (74).
    assert cmd(brake=b).brake == expected


def test_round_half_away():
    assert [round_half_away(x) for x in (0.5, 1.5, 2.5, -0.5, -2.5, 2.49, -2.51)] == \
        [1, 2, 3, -1, -3, 2, -3]


def test_speed_tie_rounds_away_from_zero():
    assert cmd(0.25).speed == 3  # 2.5 -> 3 (built-in round would give 2)


@given(st.floats(-100, 100), st.floats(-3, 3), st.floats(-2, 2),
       st.sampled_from([0, 1, 2]), st.one_of(st.none(), st.integers(0, 200)), st.booleans())
def test_mapped_commands_are_always_in_protocol_range(v, s, b, prev, fbs, estop):
    out = cmd(v, s, b, prev_gear=prev, feedback_speed=fbs, estop=estop)
    assert 0 <= out.speed <= 200 and -2000 <= out.steer <= 2000 and 1 <= out.brake <= 150
    assert out.aorm == 1
    encode_command(out)


def test_stop_command_matches_vector():
    vec = next(v for v in V["frames"] if v["name"] == "cmd_stop_full_brake")
    assert encode_command(stop_command(DEFAULT_PARAMS, 42)) == bytes.fromhex(vec["hex"])
    assert stop_command(alive=1, gear=2, steer=-300, estop=True) == Command(1, 1, 2, 0, -300, 150, 1)


def test_next_alive_wraps():
    assert next_alive(0) == 1 and next_alive(254) == 255 and next_alive(255) == 0


@pytest.mark.parametrize("vec", V["feedback_to_messages"], ids=lambda v: v["name"])
def test_feedback_vectors(vec):
    fb = Feedback(**vec["fields"])
    assert decode_feedback(bytes.fromhex(vec["hex"])) == fb
    out = feedback_to_values(fb, Erp42Params.from_mapping(vec["input"]["params"]))
    info, ego = vec["expected"]["erp42_info"], vec["expected"]["ego_vehicle_status"]
    assert out.velocity_kmh == pytest.approx(info["velocity"], abs=TOL)
    assert out.steering_deg == pytest.approx(info["steering"], abs=TOL)
    assert out.velocity_mps == pytest.approx(ego["velocity_x"], abs=TOL)
    assert out.steering_deg == pytest.approx(ego["wheel_angle"], abs=TOL)
    assert out.brake == pytest.approx(ego["brake"], abs=TOL)
    assert (out.gear, out.enc, out.alive) == (fb.gear, fb.enc, fb.alive)


def test_feedback_brake_is_clipped():
    assert feedback_to_values(Feedback(1, 0, 0, 0, 0, 0, 0, 0)).brake == 0.0
    assert feedback_to_values(Feedback(1, 0, 0, 0, 0, 255, 0, 0)).brake == 1.0


def test_command_and_feedback_steering_conventions_agree():
    # A PCU reporting feedback_steer_sign x (command STEER) is read back as the commanded angle.
    for sign in (-1, 1):
        p = Erp42Params(feedback_steer_sign=sign)
        c = cmd(0.0, 0.2, params=p)
        back = feedback_to_values(Feedback(1, 0, 0, 0, sign * c.steer, 1, 0, 0), p)
        assert back.steering_deg == pytest.approx(math.degrees(0.2), abs=1 / 71)


def test_encoder_delta_wraps_as_int32():
    assert encoder_delta(100, 150) == 50
    assert encoder_delta(150, 100) == -50
    assert encoder_delta(2 ** 31 - 1, -2 ** 31) == 1
    assert encoder_delta(-2 ** 31, 2 ** 31 - 1) == -1


def test_encoder_travel():
    p = Erp42Params(encoder_ppr=100, wheel_radius_m=0.27, encoder_sign=-1)
    assert encoder_travel_m(100, p) == pytest.approx(-2 * math.pi * 0.27)
    assert encoder_travel_m(100, dataclasses.replace(p, encoder_enabled=False)) == 0.0


@pytest.mark.parametrize("kw", [
    dict(max_speed_kmh=25.0), dict(max_steer_deg=30.0), dict(brake_min=0), dict(brake_max=256),
    dict(brake_min=150, brake_max=150), dict(feedback_steer_sign=0), dict(encoder_sign=2),
    dict(encoder_ppr=0), dict(wheel_radius_m=-1.0), dict(max_speed_kmh=math.nan),
    dict(rate_hz=0), dict(brake_max=150.0),
])
def test_invalid_params_are_refused(kw):
    with pytest.raises(Erp42Error, match="invalid ERP-42 parameter"):
        Erp42Params(**kw)


def test_params_defaults_and_from_mapping():
    p = DEFAULT_PARAMS
    assert (p.max_speed_kmh, p.max_steer_deg, p.brake_min, p.brake_max) == (20.0, 28.17, 1, 150)
    assert (p.feedback_steer_sign, p.encoder_ppr, p.encoder_sign, p.wheel_radius_m) == \
        (-1, 100.0, 1, 0.27)
    assert (p.speed_limit_raw, p.steer_limit_raw) == (200, 2000)
    q = Erp42Params.from_mapping({"~brake_max": 200, "max_speed_kmh": 10, "port": "/dev/x",
                                  "unrelated": 1})
    assert (q.brake_max, q.max_speed_kmh, q.port) == (200, 10.0, "/dev/x")
    assert isinstance(q.max_speed_kmh, float)
