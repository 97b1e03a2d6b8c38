"""The fast converters of ros/udp_convert (object.__new__ + slot assignment) build the same messages,
byte for byte once serialised, as the generated constructors: bench/check_convert.py's guarantee,
kept in the suite (it needs the built morai_msgs classes, like test_docs)."""

import pytest


def test_fast_converters_equal_the_generated_constructors(check_convert, capsys):
    check_convert.main()          # raises AssertionError naming the converter that differs
    out = capsys.readouterr().out
    assert 'same messages as the generated constructors' in out


def test_the_check_sees_a_difference(check_convert, monkeypatch):
    """A converter that drops one field is caught (the comparison can fail)."""
    fast = check_convert.fast
    real = fast.traffic_light

    def broken(w, stamp, frame_id):
        m = real(w, stamp, frame_id)
        m.trafficLightStatus = m.trafficLightStatus + 1
        return m
    monkeypatch.setattr(fast, 'traffic_light', broken)
    with pytest.raises(AssertionError):
        check_convert.main()
