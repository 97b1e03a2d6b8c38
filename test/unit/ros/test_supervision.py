"""morai_bridge.ros.supervision.RosTimer: rospy.Timer's job in a supervised worker (real threads,
rospy's own clock; no master: wall time stands in for ROS time, as rospy does before /clock)."""
import os
import subprocess
import sys
import time

import pytest
import rospy
import rospy.rostime

from morai_bridge.link.workers import DEAD, RUNNING, STOPPED
from morai_bridge.ros.supervision import RosTimer

from helpers import wait_for


class Supervisor:
    """What RosTimer uses of a NodeSupervisor, without rospy.signal_shutdown (that would end this process's
    rospy for the other tests)."""

    def __init__(self):
        self.lines, self.dead, self.watched = [], [], []

    def log(self, text):
        self.lines.append(text)

    def on_dead(self, worker):
        self.dead.append(worker)

    def watch(self, workers_of):
        self.watched.append(workers_of)


@pytest.fixture(autouse=True)
def rostime():
    rospy.rostime.set_rostime_initialized(True)
    yield


@pytest.fixture
def timers():
    made = []

    def make(*args, **kw):
        t = RosTimer(*args, **kw)
        made.append(t)
        return t
    yield make
    for t in made:
        t.stop()


def test_ticks_at_the_period(timers):
    ticks = []
    t = timers('tick', 0.02, lambda: ticks.append(time.monotonic()))
    assert wait_for(lambda: len(ticks) >= 10, timeout=5.0)
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert sorted(gaps)[len(gaps) // 2] == pytest.approx(0.02, abs=0.01)
    assert t.worker.state == RUNNING and t.ticks >= 10
    t.stop()
    assert t.worker.state == STOPPED
    n = len(ticks)
    time.sleep(0.1)
    assert len(ticks) == n


def test_a_raising_callback_is_logged_and_the_timer_goes_on(timers):
    sup = Supervisor()
    calls = []

    def tick():
        calls.append(1)
        if len(calls) == 2:
            raise ValueError('bug in a tick')
    t = timers('diagnostics', 0.02, tick, sup)
    assert [w() for w in sup.watched] == [[t.worker]]       # listed in the node's 'Workers' entry
    assert wait_for(lambda: len(calls) >= 6, timeout=5.0)
    assert t.worker.errors == 1 and t.worker.restarts == 1 and t.worker.state == RUNNING
    assert len(sup.lines) == 1 and 'bug in a tick' in sup.lines[0] and 'Traceback' in sup.lines[0]
    assert sup.dead == []


def test_a_callback_that_always_raises_ends_dead_and_tells_the_node(timers):
    sup = Supervisor()

    def tick():
        raise RuntimeError('always')
    t = timers('markers', 0.01, tick, sup)
    assert wait_for(lambda: t.worker.state == DEAD, timeout=10.0)
    assert sup.dead == [t.worker] and 'always' in t.worker.dead_reason


def test_period_must_be_positive():
    with pytest.raises(ValueError, match='period'):
        RosTimer('bad', 0.0, lambda: None)


SHUTDOWN_DURING_A_TICK = r'''
import sys, time
import rospy, rospy.rostime
from morai_bridge.link.workers import STOPPED
from morai_bridge.ros.supervision import RosTimer
rospy.rostime.set_rostime_initialized(True)
lines, dead = [], []
class Sup:
    log = staticmethod(lines.append)
    on_dead = staticmethod(dead.append)
    def watch(self, workers_of):
        pass
def tick():
    if sys.argv[1] == 'shutdown':
        rospy.signal_shutdown('test')       # the node shuts down while this tick runs ...
    raise rospy.ROSException('publish() to a closed topic')     # ... and its publisher is closed
t = RosTimer('driver', 0.01, tick, Sup())
deadline = time.monotonic() + 5.0
while t.worker.state != STOPPED and not lines and time.monotonic() < deadline:
    time.sleep(0.01)
print('state=%s errors=%d lines=%d dead=%d' % (t.worker.state, t.worker.errors, len(lines), len(dead)))
t.stop()
'''


@pytest.mark.parametrize('case', ['shutdown', 'running'])
def test_a_tick_failing_because_the_node_shut_down_is_not_an_error(case):
    """rospy closes the publishers at shutdown under a running tick; that must end the timer quietly,
    while the same exception in a running node is an error (logged, restarted)."""
    out = subprocess.run([sys.executable, '-c', SHUTDOWN_DURING_A_TICK, case], capture_output=True, text=True,
                         timeout=30, env=dict(os.environ, ROS_MASTER_URI='http://127.0.0.1:1'))
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-1]
    if case == 'shutdown':
        assert last == f'state={STOPPED} errors=0 lines=0 dead=0', out.stdout + out.stderr
    else:
        assert ' errors=1 lines=1 dead=0' in last, out.stdout + out.stderr      # logged once, then restarted
