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


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


@pytest.mark.parametrize('granted, rate, peak, enough', [
    (4194304, 2e6, 90000, True),        # a VLP-16 burst, 2 MB/s: holds 2 s and 46 bursts
    (212992, 1.5e6, 90000, True),       # a stock kernel's cap: 142 ms and 2.4 bursts
    (212992, 1.5e6, 120000, False),     # a burst more than half the buffer
    (212992, 3e6, 60000, False),        # 71 ms of the stream: less than the 100 ms pause it must ride out
])
def test_buffer_use_decides_once_from_the_measured_rate_and_backlog(granted, rate, peak, enough):
    clock = Clock()
    use = measure.BufferUse(granted, settle_s=5.0, clock=clock)
    assert use.update(0, 0) is None                     # no data yet: nothing to say
    assert use.update(1000, peak) is None                # the first data: the measurement starts
    clock.t += 4.0
    assert use.update(1000 + int(4 * rate), peak) is None
    clock.t += 1.0
    verdict = use.update(1000 + int(5 * rate), peak)
    assert verdict is not None and verdict[0] is enough
    assert verdict[1] == pytest.approx(granted / rate, rel=1e-3) and verdict[2] == pytest.approx(rate, rel=1e-3)
    clock.t += 10.0
    assert use.update(1000 + int(15 * rate), peak) is None   # said once
