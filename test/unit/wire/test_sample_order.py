"""wire/sample_order.py: the newest-sample rule."""
import pytest

from morai_bridge.wire.sample_order import DUPLICATE, NEW, NS, REORDERED, RESTART, SampleOrder


def verdicts(order, times):
    return [order.check(t) for t in times]


def test_new_duplicate_reordered_restart():
    o = SampleOrder(window=NS)
    t = 1700000000 * NS
    assert verdicts(o, [t, t + 20, t + 20, t + 10, t + 40]) == [NEW, NEW, DUPLICATE, REORDERED, NEW]
    assert o.last == t + 40
    # back by more than the window: the clock started again; the rule goes on from there
    assert verdicts(o, [t - 5 * NS, t - 5 * NS, t - 5 * NS + 1]) == [RESTART, DUPLICATE, NEW]


def test_nanoseconds_apart_are_told_apart():
    o = SampleOrder(window=NS)
    t = 1764400000 * NS + 123456789
    assert verdicts(o, [t, t + 1, t]) == [NEW, NEW, REORDERED]


def test_a_wrapping_clock_is_compared_the_short_way_round():
    day = 86400 * 1000
    o = SampleOrder(window=1000, period=day)
    assert verdicts(o, [day - 100, 50, day - 50, 50]) == [NEW, NEW, REORDERED, DUPLICATE]


def test_reset_and_bad_arguments():
    o = SampleOrder(window=10)
    o.check(100)
    o.reset()
    assert o.check(5) == NEW
    with pytest.raises(ValueError):
        SampleOrder(window=0)
    with pytest.raises(ValueError):
        SampleOrder(window=10, period=15)
