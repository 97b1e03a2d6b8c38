"""Small measurements the nodes report on /diagnostics (no ROS).

* :class:`Timing`: percentiles of the last durations of a processing step;
* :class:`Recent`: did a set of error counters grow lately?
* :class:`RateMeter`: rate of a growing counter between two reports;
* :func:`snapshot`: a copy of a counter dict another thread may be growing;
* :class:`BufferUse`: is a socket's receive buffer enough for the stream it receives?
"""
import math
import time


class Timing:
    """The last ``size`` durations (s) of some processing step, for percentiles.

    ``add`` is called by one thread; ``summary`` (another thread) works on a copy.
    """

    def __init__(self, size=512):
        self.size = int(size)
        self.values = [0.0] * self.size
        self.count = 0
        self.max = 0.0

    def add(self, seconds):
        self.values[self.count % self.size] = seconds
        self.count += 1
        if seconds > self.max:
            self.max = seconds

    def percentile(self, q):
        n = min(self.count, self.size)
        if n == 0:
            return None
        data = sorted(self.values[:n])
        return data[max(0, min(n - 1, int(math.ceil(q / 100.0 * n)) - 1))]   # nearest rank

    def summary_ms(self):
        """'p50 / p99 / max' in ms over the window (max since start), or '' before any."""
        if self.count == 0:
            return ''
        return f'{self.percentile(50) * 1000.0:.2f} / {self.percentile(99) * 1000.0:.2f} / {self.max * 1000.0:.2f}'


class Recent:
    """Whether any of some counters grew within the last ``window_s`` seconds (checked when
    ``check(total)`` is called, e.g. at each diagnostics update)."""

    def __init__(self, window_s=10.0, clock=time.monotonic):
        self.window_s = float(window_s)
        self.clock = clock
        self._last_total = 0
        self._last_change = None

    def check(self, total):
        now = self.clock()
        if total != self._last_total:
            self._last_total = total
            self._last_change = now
        return self._last_change is not None and now - self._last_change <= self.window_s


class RateMeter:
    """Rate of a monotonically growing counter between successive calls."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self._prev = None

    def __call__(self, count):
        now = self.clock()
        prev, self._prev = self._prev, (count, now)
        if prev is None or now <= prev[1]:
            return 0.0
        return (count - prev[0]) / (now - prev[1])


def snapshot(mapping):
    """A copy of a dict (or Counter) that another thread may be adding keys to."""
    for _ in range(5):
        try:
            return dict(mapping)
        except RuntimeError:      # changed size during the copy: try again
            continue
    return {}


class BufferUse:
    """Whether a socket's receive buffer is enough for what its stream really sends, decided once
    from what the receiver counted (:class:`~morai_bridge.link.transport.StreamStats` ``bytes`` and
    ``peak_backlog``) over the first ``settle_s`` seconds of data.

    The buffer (``granted`` payload bytes: Linux counts each datagram's bookkeeping too, and doubles
    the size asked for that reason) must hold twice the largest backlog the receiver found waiting
    (a whole LiDAR revolution or camera frame sent in one burst) and ``hold_s`` of the stream at its
    measured byte rate (a pause of the receiving thread: a garbage collection, a slow subscriber).
    :meth:`update` returns None until the verdict, then once ``(enough, holds_s, bytes_per_s,
    peak_backlog)``, then None again."""

    def __init__(self, granted, settle_s=5.0, hold_s=0.1, clock=time.monotonic):
        self.granted = int(granted)
        self.settle_s = float(settle_s)
        self.hold_s = float(hold_s)
        self.clock = clock
        self._start = None
        self.verdict = None

    def update(self, total_bytes, peak_backlog):
        if self.verdict is not None or not total_bytes:
            return None
        now = self.clock()
        if self._start is None:
            self._start = (now, total_bytes)
            return None
        t0, b0 = self._start
        if now - t0 < self.settle_s:
            return None
        rate = (total_bytes - b0) / (now - t0)
        holds = self.granted / rate if rate > 0 else math.inf
        enough = self.granted >= 2 * peak_backlog and holds >= self.hold_s
        self.verdict = (enough, holds, rate, peak_backlog)
        return self.verdict
