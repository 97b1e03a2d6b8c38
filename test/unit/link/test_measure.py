"""morai_bridge.link.measure: the percentiles, rates and recency the nodes report on /diagnostics."""
from collections import Counter

import pytest

from morai_bridge.link import measure


def test_timing_percentiles():
    t = measure.Timing(size=100)
    assert t.summary_ms() == '' and t.percentile(50) is None
    for i in range(1, 201):                 # the window keeps the last 100: 101..200 ms
        t.add(i / 1000.0)
    assert t.percentile(50) == pytest.approx(0.150)
    assert t.percentile(99) == pytest.approx(0.199)
    assert t.max == pytest.approx(0.200)
    assert t.summary_ms() == '150.00 / 199.00 / 200.00'


def test_recent_and_rate():
    now = [0.0]
    r = measure.Recent(10.0, clock=lambda: now[0])
    assert not r.check(0)
    now[0] = 1.0
    assert r.check(1)
    now[0] = 10.9
    assert r.check(1)
    now[0] = 11.1
    assert not r.check(1)
    rate = measure.RateMeter(clock=lambda: now[0])
    assert rate(0) == 0.0
    now[0] += 2.0
    assert rate(30) == pytest.approx(15.0)


def test_snapshot_copies():
    c = Counter(a=1)
    s = measure.snapshot(c)
    c['b'] += 1
    assert s == {'a': 1}
