"""The newest-sample rule of a stream on a lossy, reordering, duplicating link (no ROS here).

A datagram that carries the time its sample was taken is judged against the last sample published
from the same stream (:class:`SampleOrder`): a later time is ``NEW`` (publish it); the same time is a
``DUPLICATE`` (the link, or the sender, repeated it); an earlier time is ``REORDERED`` (the link held
it back while a newer one overtook it): neither is published.  An earlier time by the window
or more is not a datagram held back by a link (those are late by milliseconds, seldom by more than a
few hundred) but the sender's clock starting again (a simulator restarted, a replay looped):
``RESTART``, published, and the rule starts from it.

Times are integers (nanoseconds for the UDP packets' sec/nsec: a float of 1.7e9 s cannot tell
every nanosecond apart) in any unit, as long as ``window`` and ``period`` are in the same unit;
``period`` is for a clock that wraps (NMEA's time of day: 86,400 s), compared the short way round.
Used by the UDP bridge for every stream stamped from its packets, by its GPS samples (the fix time)
and by the camera (the frame's stamp); docs/reliability.md, "A lossy link".
"""

NEW = 'new'
DUPLICATE = 'duplicates'
REORDERED = 'reordered'
RESTART = 'clock_restarts'
#: the verdicts that are not published (RESTART is: the sender's clock starts again)
NOT_PUBLISHED = (DUPLICATE, REORDERED)
NS = 1000000000


class SampleOrder:
    """Judge each sample time against the last one taken (module docstring).  One thread."""

    __slots__ = ('window', 'period', 'last')

    def __init__(self, window, period=None):
        if not window > 0:
            raise ValueError('window must be > 0, got %r' % (window,))
        if period is not None and not period > 2 * window:
            raise ValueError('period must be more than twice the window, got %r' % (period,))
        self.window = window
        self.period = period
        self.last = None        # the time of the last sample taken (NEW or RESTART)

    def check(self, t):
        """NEW, DUPLICATE, REORDERED or RESTART for a sample taken at ``t``; NEW and RESTART make it
        the last sample."""
        last = self.last
        if last is None:
            self.last = t
            return NEW
        d = t - last
        if self.period is not None:
            half = self.period // 2
            d = (d + half) % self.period - half
        if d > 0:
            self.last = t
            return NEW
        if d == 0:
            return DUPLICATE
        if -d >= self.window:
            self.last = t
            return RESTART
        return REORDERED

    def reset(self):
        """Forget the last sample: the next one is NEW whatever its time."""
        self.last = None
