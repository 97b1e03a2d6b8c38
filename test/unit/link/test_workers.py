"""morai_bridge.link.workers: Worker restarts, death, throttled logging, diagnostics.

Real threads, no mocks; every wait is bounded and generous (shared machine).
"""
import importlib
import os
import re
import threading
import time

import pytest

from morai_bridge.link.workers import (
    DEAD, ERROR, OK, RESTARTING, RUNNING, STOPPED, WARN, LatestSlot, LatestValue, ThrottledLog, Worker, worker_diagnostics)

from helpers import Log, wait_for



class Counter:
    """A loop body that counts its calls and sleeps a little."""

    def __init__(self):
        self.n = 0

    def __call__(self):
        self.n += 1
        time.sleep(0.002)


@pytest.fixture
def workers():
    made = []
    yield made
    for w in made:
        w.stop(1.0)


def make(workers, body=None, **kw):
    kw.setdefault('backoff_s', 0.01)
    w = Worker(f'w{len(workers)}', body or Counter(), **kw)
    workers.append(w)
    return w


def test_injected_exception_is_counted_logged_with_traceback_and_the_worker_resumes(workers):
    log = Log()
    seen = []
    body = Counter()
    w = make(workers, body, log=log, on_restart=lambda wk: seen.append((wk.state, body.n)))
    assert w.state == STOPPED
    w.start()
    assert w.state == RUNNING
    assert wait_for(lambda: body.n > 5)
    w.inject(ValueError('boom'))
    assert wait_for(lambda: w.restarts == 1)
    # the hook ran while restarting, on the worker's thread, before the resume
    assert seen and seen[0][0] == RESTARTING
    n = body.n
    assert wait_for(lambda: body.n > n + 5), 'the body is not called again after the restart'
    assert w.state == RUNNING
    assert (w.errors, w.restarts) == (1, 1)
    assert w.last_error == 'ValueError: boom'
    assert 'Traceback (most recent call last)' in w.last_traceback and 'ValueError: boom' in w.last_traceback
    assert len(log.lines) == 1
    assert 'w0' in log.lines[0] and 'Traceback (most recent call last)' in log.lines[0]
    assert 'ValueError: boom' in log.lines[0]
    assert w.last_error_t is not None and w.is_alive()


def test_exception_from_the_body_itself_is_caught(workers):
    calls = []

    def body():
        calls.append(1)
        if len(calls) == 3:
            raise KeyError('third call')
        time.sleep(0.002)

    log = Log()
    w = make(workers, body, log=log).start()
    assert wait_for(lambda: len(calls) > 10)
    assert (w.errors, w.restarts, w.state) == (1, 1, RUNNING)
    assert "KeyError: 'third call'" in log.lines[0]
    assert 'in body' in log.lines[0]        # the traceback reaches into the body


def test_state_is_restarting_during_the_backoff(workers):
    w = make(workers, backoff_s=0.5).start()
    w.inject(RuntimeError)
    assert wait_for(lambda: w.state == RESTARTING, 1.0)
    time.sleep(0.2)
    assert w.state == RESTARTING and w.restarts == 0
    assert wait_for(lambda: w.state == RUNNING, 2.0)
    assert w.restarts == 1
    assert 'injected into worker' in w.last_error


def test_repeated_failures_make_it_dead_and_on_dead_fires_once(workers):
    dead = []
    log = Log()
    body = Counter()
    w = make(workers, body, log=log, max_restarts=3, window_s=30.0, on_dead=dead.append).start()
    for i in range(4):
        assert wait_for(lambda: w.state == RUNNING and w.errors == i)
        w.inject(OSError('failure %d' % i))
        assert wait_for(lambda: w.errors == i + 1)
    assert wait_for(lambda: w.state == DEAD)
    assert wait_for(lambda: not w.is_alive())
    assert dead == [w]
    assert w.restarts == 3 and w.errors == 4
    assert '4 failures' in w.dead_reason and 'failure 3' in w.dead_reason
    n = body.n
    time.sleep(0.1)
    assert body.n == n, 'a dead worker still runs its body'
    assert any('DEAD' in line and 'Traceback' in line for line in log.lines)
    w.stop()
    assert w.state == DEAD      # stop() does not hide a death


def test_failures_outside_the_window_do_not_accumulate(workers):
    dead = []
    w = make(workers, max_restarts=1, window_s=0.3, on_dead=dead.append).start()
    for i in range(3):
        w.inject(ValueError('spaced %d' % i))
        assert wait_for(lambda: w.restarts == i + 1)
        time.sleep(0.4)
    assert w.state == RUNNING and not dead


def test_failing_restart_hook_makes_it_dead(workers):
    dead = []

    def hook(worker):
        raise OSError('cannot reopen')

    w = make(workers, on_restart=hook, on_dead=dead.append, log=Log()).start()
    w.inject(ValueError('first'))
    assert wait_for(lambda: w.state == DEAD)
    assert dead == [w]
    assert 'restart hook failed' in w.dead_reason and 'cannot reopen' in w.dead_reason


def test_base_exception_makes_it_dead(workers):
    dead = []
    w = make(workers, on_dead=dead.append, log=Log()).start()
    w.inject(SystemExit(3))
    assert wait_for(lambda: w.state == DEAD)
    assert dead == [w] and not wait_for(lambda: w.is_alive(), 0.1)


def test_log_is_throttled_and_reports_suppressed_messages(workers):
    log = Log()
    w = make(workers, log=log, log_period_s=0.5, max_restarts=100, backoff_s=0.0).start()
    for i in range(10):
        w.inject(ValueError('burst %d' % i))
        assert wait_for(lambda: w.restarts == i + 1)
    assert len(log.lines) == 1 and 'burst 0' in log.lines[0]
    time.sleep(0.6)
    w.inject(ValueError('later'))
    assert wait_for(lambda: len(log.lines) == 2)
    assert 'later' in log.lines[1]
    assert '9 similar messages suppressed' in log.lines[1]
    assert w.errors == 11


def test_stop_ends_quietly_even_if_the_body_fails_while_stopping(workers):
    log = Log()
    stopping = threading.Event()

    def body():
        if stopping.is_set():
            raise OSError('socket closed under me')
        time.sleep(0.01)

    w = make(workers, body, log=log).start()
    stopping.set()
    assert w.stop(2.0)
    assert w.state == STOPPED and not w.is_alive()
    assert log.lines == [] and w.errors == 0


def test_on_exit_runs_on_the_worker_thread_after_stop(workers):
    seen = []
    w = make(workers, on_exit=lambda wk: seen.append((wk.state, threading.current_thread().name)))
    w.start()
    time.sleep(0.02)
    assert seen == []
    assert w.stop(2.0)
    assert seen == [(STOPPED, 'w0')]


def test_wait_returns_at_once_when_stopped(workers):
    slept = []

    def body():
        t = time.monotonic()
        w.wait(5.0)
        slept.append(time.monotonic() - t)

    w = make(workers, body).start()
    time.sleep(0.05)
    t = time.monotonic()
    assert w.stop(2.0)
    assert time.monotonic() - t < 1.0
    assert w.state == STOPPED


def test_throttled_log_alone():
    log = Log()
    t = [0.0]
    th = ThrottledLog(log, 5.0, clock=lambda: t[0])
    assert th('a')
    t[0] = 1.0
    assert not th('b') and not th('c')
    assert th('forced', force=True)
    t[0] = 7.0
    assert th('d')
    assert log.lines[0] == 'a' and log.lines[1].startswith('forced')
    assert '2 similar messages suppressed' in log.lines[1]
    assert log.lines[2] == 'd'
    assert th.total_suppressed == 2


def test_diagnostics_helper(workers):
    a = make(workers).start()
    b = make(workers).start()
    level, text, values = worker_diagnostics([a, b])
    assert level == OK and text == 'all 2 workers running'
    assert ('w0 state', 'running') in values and ('w1 restarts', '0') in values
    b.inject(ValueError('glitch'))
    assert wait_for(lambda: b.restarts == 1 and b.state == RUNNING)
    level, text, values = worker_diagnostics([a, b], recent_s=10.0)
    assert level == ERROR and 'w1' in text and 'glitch' in text
    assert ('w1 restarts', '1') in values and ('w1 last error', 'ValueError: glitch') in values
    # once the restart is older than the period, back to OK
    level, _, _ = worker_diagnostics([a, b], recent_s=10.0, now=time.monotonic() + 11.0)
    assert level == OK
    a.stop()
    level, text, _ = worker_diagnostics([a, b], now=time.monotonic() + 11.0)
    assert level == WARN and 'w0' in text
    c = make(workers, max_restarts=0, log=Log()).start()
    c.inject(ValueError('fatal'))
    assert wait_for(lambda: c.state == DEAD)
    level, text, values = worker_diagnostics([a, b, c], now=time.monotonic() + 100.0)
    assert level == ERROR and 'w2 dead' in text
    assert ('w2 state', 'dead') in values


def test_latest_slot_keeps_the_newest():
    s = LatestSlot()
    assert s.take(0.0) is None
    s.put(1)
    s.put(2)
    s.put(3)
    assert s.take(0.0) == 3 and s.skipped == 2 and s.taken == 1
    assert s.take(0.01) is None


def test_latest_value_returns_the_value_at_hand_or_waits_for_one():
    v = LatestValue()
    t0 = time.monotonic()
    assert v.wait_for(lambda x: True, 0.05) is None          # nothing yet: the timeout
    assert time.monotonic() - t0 >= 0.05
    v.put(3)
    assert v.wait_for(lambda x: x == 3, 0.0) == 3             # the value at hand, without waiting
    assert v.wait_for(lambda x: x > 3, 0.02) is None
    putter = threading.Timer(0.05, v.put, (7,))
    putter.start()
    assert v.wait_for(lambda x: x > 3, 5.0) == 7              # one put later by another thread
    putter.join()


def test_latest_value_put_does_not_take_the_lock_when_nobody_waits():
    """The receive path must not block behind a service thread: with nobody waiting, put is a store."""
    v = LatestValue()
    with v._cond:                     # another thread could hold it; put must not need it
        v.put(1)
    assert v.value == 1


def test_latest_value_loses_no_wake_up():
    """A waiter that starts just before or after the put it waits for sees it, every time: the put
    and the waiter race in each round (a lost wake-up would leave the waiter asleep until its 60 s
    timeout; 2 s is a generous bound for a thread to wake)."""
    v = LatestValue()
    got = []
    for k in range(1, 301):
        waiter = threading.Thread(target=lambda k=k: got.append(v.wait_for(lambda x: x >= k, 60.0)), daemon=True)
        waiter.start()
        if k % 2:
            time.sleep(0)              # let the waiter in first every other round
        v.put(k)
        waiter.join(2.0)
        assert not waiter.is_alive(), f'round {k}: the put did not wake the waiter'
    assert got == list(range(1, 301))


def test_the_levels_are_diagnostic_msgs_and_defined_only_here():
    """OK, WARN, ERROR are DiagnosticStatus's 0, 1, 2 (checked against diagnostic_msgs when it can be
    imported), and the ROS modules that report levels take these instead of defining their own."""
    assert (OK, WARN, ERROR) == (0, 1, 2)
    try:
        from diagnostic_msgs.msg import DiagnosticStatus
    except ImportError:
        DiagnosticStatus = None
    if DiagnosticStatus is not None:
        assert (OK, WARN, ERROR) == (DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR)
    src = os.path.join(os.path.dirname(importlib.import_module('morai_bridge').__file__))
    defined = []
    for dirpath, _, files in os.walk(src):
        for f in files:
            if f.endswith('.py'):
                with open(os.path.join(dirpath, f), encoding='utf-8') as fh:
                    if re.search(r'(?m)^OK, WARN, ERROR = ', fh.read()):
                        defined.append(os.path.relpath(os.path.join(dirpath, f), src))
    assert defined == [os.path.join('link', 'workers.py')]
    if DiagnosticStatus is not None:
        for name in ('sensors.sensor_bridge', 'udp_bridge.diagnostics', 'erp42.driver'):
            module = importlib.import_module('morai_bridge.ros.' + name)
            assert (module.OK, module.WARN, module.ERROR) == (OK, WARN, ERROR), name
