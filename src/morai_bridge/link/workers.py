"""Supervised worker threads (no ROS).

Every long-running thread of the bridge runs as a :class:`Worker`: a daemon
thread that calls a loop *body* again and again.  The body does one bounded
step of work (one ``select`` round, one transmit tick) and returns.

If the body raises an unexpected exception, the worker does not die silently
(which on a vehicle means a stack that believes it is driving):

1. the exception is caught at the top of the loop, counted (``errors``) and
   kept (``last_error``, ``last_traceback``);
2. it is logged with its traceback through the ``log`` callable, throttled to
   one message per ``log_period_s`` per worker; the next message says how many
   were suppressed meanwhile;
3. ``state`` becomes ``'restarting'`` and ``on_restart(worker)`` runs on the
   worker's own thread (a serial link closes its port there, so that it
   resumes from a known, closed state);
4. after ``backoff_s`` the worker resumes (``state == 'running'``,
   ``restarts`` + 1).

When it cannot resume -- more than ``max_restarts`` failures within
``window_s`` seconds, a failing ``on_restart`` hook, or a ``BaseException``
such as ``SystemExit`` -- the reason is logged unthrottled, ``on_dead(worker)``
is called, still on the worker's thread, and then ``state`` becomes ``'dead'``
(so whoever sees ``'dead'`` knows that on_dead and the clean-up have run).
A node uses it to shut down with a non-zero exit status so that roslaunch's
``respawn`` can act.

An exception raised after :meth:`Worker.stop` was requested ends the worker
quietly (``'stopped'``): shutting down often makes blocking calls fail.

:class:`LatestSlot` hands the newest item of a fast producer to a slower worker;
:class:`LatestValue` keeps a stream's latest value for services that wait for one.

:func:`worker_diagnostics` turns a list of workers into a diagnostics entry
(level, summary, key/values) so the ROS side stays a one-liner; its levels, :data:`OK`,
:data:`WARN` and :data:`ERROR`, are the project's one definition of diagnostic_msgs' levels.

Tests use :meth:`Worker.inject` to make the next iteration raise.
"""
import collections
import logging
import threading
import time
import traceback

__all__ = ['Worker', 'ThrottledLog', 'LatestSlot', 'LatestValue', 'worker_diagnostics',
           'RUNNING', 'RESTARTING', 'DEAD', 'STOPPED', 'OK', 'WARN', 'ERROR']

RUNNING = 'running'
RESTARTING = 'restarting'
DEAD = 'dead'
STOPPED = 'stopped'

#: The levels of a diagnostics entry: diagnostic_msgs/DiagnosticStatus.OK, WARN and ERROR, defined
#: here, the lowest layer that reports them (worker_diagnostics), to stay free of ROS; every ROS module
#: imports them from here (test/unit/link/test_workers.py checks them against diagnostic_msgs).
OK, WARN, ERROR = 0, 1, 2

_default_logger = logging.getLogger('morai_bridge.link.workers')


def _default_log(text):
    _default_logger.error('%s', text)


class ThrottledLog:
    """Pass at most one message per ``period_s`` to ``log``; count the others.

    The first message after a quiet period says how many were suppressed
    since the previous one that went out.  ``force=True`` always logs.
    Thread-safe.
    """

    def __init__(self, log=None, period_s=5.0, clock=time.monotonic):
        self.log = log or _default_log
        self.period_s = float(period_s)
        self.clock = clock
        self.suppressed = 0        # suppressed since the last message that went out
        self.total_suppressed = 0
        self._last = None
        self._lock = threading.Lock()

    def __call__(self, text, force=False):
        now = self.clock()
        with self._lock:
            if not force and self._last is not None and now - self._last < self.period_s:
                self.suppressed += 1
                self.total_suppressed += 1
                return False
            suppressed, self.suppressed = self.suppressed, 0
            self._last = now
        if suppressed:
            text = '%s\n(%d similar message%s suppressed in the last %.1f s)' % (
                text, suppressed, '' if suppressed == 1 else 's', self.period_s)
        self.log(text)
        return True


class Worker:
    """A daemon thread running ``body()`` in a loop, restarted after errors.

    ``body`` must return within a bounded time (use :meth:`wait` to sleep) so
    that :meth:`stop` is noticed.  Read-only fields: ``name``, ``state``
    (``'running'``, ``'restarting'``, ``'dead'``, ``'stopped'``), ``restarts``
    (times resumed after an error), ``errors`` (exceptions caught),
    ``last_error`` (``'Type: message'``), ``last_traceback`` (text),
    ``last_error_t`` (``time.monotonic()`` of the last error, or None) and
    ``dead_reason``.

    Callbacks, all run on the worker's own thread with the worker as argument:
    ``on_restart`` before resuming after an error (raising makes the worker
    dead), ``on_dead`` once when it is dead, ``on_exit`` when it ends after
    :meth:`stop` (a place to release what the thread owns).
    """

    def __init__(self, name, body, log=None, on_restart=None, on_dead=None, on_exit=None,
                 backoff_s=0.1, max_restarts=5, window_s=60.0, log_period_s=5.0, clock=time.monotonic):
        if max_restarts < 0 or backoff_s < 0 or window_s <= 0 or log_period_s < 0:
            raise ValueError(f'Worker {name}: need max_restarts >= 0, backoff_s >= 0, window_s > 0, log_period_s >= 0')
        self.name = name
        self.state = STOPPED
        self.restarts = 0
        self.errors = 0
        self.last_error = ''
        self.last_traceback = ''
        self.last_error_t = None
        self.dead_reason = ''
        self.backoff_s = float(backoff_s)
        self.max_restarts = int(max_restarts)
        self.window_s = float(window_s)
        self._body = body
        self._log_raw = log or _default_log
        self._log = ThrottledLog(self._log_raw, log_period_s, clock)
        self._on_restart = on_restart
        self._on_dead = on_dead
        self._on_exit = on_exit
        self._clock = clock
        self._failures = collections.deque()     # clock() of recent failures, within window_s
        self._stop = threading.Event()
        self._inject_lock = threading.Lock()
        self._injected = None
        self._thread = None

    def __repr__(self):
        return '<Worker %s %s restarts=%d>' % (self.name, self.state, self.restarts)

    # -- control -------------------------------------------------------------

    def start(self):
        """Start the thread (once).  Returns self."""
        if self._thread is not None:
            raise RuntimeError(f'worker {self.name} already started')
        self._stop.clear()
        self.state = RUNNING
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout=2.0):
        """Ask the loop to end after the current iteration and wait up to
        ``timeout`` for it.  From the worker's own thread it only asks.
        Returns True when the thread has ended (or never started)."""
        self._stop.set()
        t = self._thread
        if t is None:
            if self.state != DEAD:
                self.state = STOPPED
            return True
        if t is threading.current_thread():
            return False
        t.join(timeout)
        return not t.is_alive()

    def join(self, timeout=None):
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)
        return not self.is_alive()

    def is_alive(self):
        t = self._thread
        return t is not None and t.is_alive()

    @property
    def in_worker(self):
        """True when called from this worker's own thread."""
        return self._thread is not None and self._thread is threading.current_thread()

    @property
    def stopping(self):
        """True once :meth:`stop` was called."""
        return self._stop.is_set()

    def wait(self, timeout):
        """Sleep up to ``timeout`` seconds; return True at once if stopping."""
        return self._stop.wait(timeout) if timeout > 0 else self._stop.is_set()

    def inject(self, exc):
        """Fault injection: the next iteration raises ``exc`` (an exception
        instance or class) instead of running the body."""
        if isinstance(exc, type):
            exc = exc(f'injected into worker {self.name}')
        with self._inject_lock:
            self._injected = exc

    # -- the loop ----------------------------------------------------------------

    def _run(self):
        try:
            while not self._stop.is_set():
                try:
                    if self._injected is not None:
                        with self._inject_lock:
                            exc, self._injected = self._injected, None
                        if exc is not None:
                            raise exc
                    self._body()
                except Exception as e:      # noqa: BLE001 - this is the supervisor
                    if self._stop.is_set():
                        break
                    if not self._recover(e, traceback.format_exc()):
                        return
        except BaseException as e:          # SystemExit etc.: cannot resume
            self._record(e, traceback.format_exc())
            self._die(f'{self.name} ended by {self.last_error}')
            return
        finally:
            if self.state != DEAD:
                self.state = STOPPED
                if self._on_exit is not None:
                    try:
                        self._on_exit(self)
                    except Exception:   # noqa: BLE001
                        self._log('worker %s: on_exit callback failed\n%s' % (
                            self.name, traceback.format_exc().rstrip()), force=True)

    def _record(self, e, tb):
        self.errors += 1
        self.last_error = f'{type(e).__name__}: {e}'
        self.last_traceback = tb
        self.last_error_t = self._clock()

    def _recover(self, e, tb):
        """Handle one caught exception; False when the worker is dead."""
        self._record(e, tb)
        now = self.last_error_t
        self.state = RESTARTING
        self._failures.append(now)
        while self._failures and now - self._failures[0] > self.window_s:
            self._failures.popleft()
        if len(self._failures) > self.max_restarts:
            self._die('%s: %d failures within %.0f s (at most %d restarts allowed); last: %s' % (
                self.name, len(self._failures), self.window_s, self.max_restarts, self.last_error))
            return False
        self._log('worker %s: unexpected %s (error %d); restarting in %.2f s\n%s' % (
            self.name, self.last_error, self.errors, self.backoff_s, tb.rstrip()))
        if self._on_restart is not None:
            try:
                self._on_restart(self)
            except Exception as e2:     # noqa: BLE001
                self._record(e2, traceback.format_exc())
                self._die(f'{self.name}: restart hook failed: {self.last_error}')
                return False
        if self.wait(self.backoff_s):
            return False                # stop requested during the back-off
        self.restarts += 1
        self.state = RUNNING
        return True

    def _die(self, reason):
        """Log the death, run on_dead, and only then publish state DEAD: whoever sees DEAD can rely on
        the worker's clean-up (e.g. a released port) and its on_dead having run."""
        self.dead_reason = reason
        try:
            try:
                self._log_raw(f'worker {self.name} is DEAD: {reason}\n{self.last_traceback.rstrip()}')
            except Exception:       # noqa: BLE001 - a broken logger must not hide on_dead
                pass
            if self._on_dead is not None:
                try:
                    self._on_dead(self)
                except Exception:   # noqa: BLE001
                    try:
                        self._log_raw(f'worker {self.name}: on_dead callback failed\n{traceback.format_exc()}')
                    except Exception:   # noqa: BLE001
                        pass
        finally:
            self.state = DEAD


class LatestSlot:
    """A one-item mailbox between a fast producer and a slower consumer: ``put`` replaces
    an item not yet taken (counted in ``skipped``), ``take`` waits for one."""

    def __init__(self):
        self._cond = threading.Condition()
        self._item = None
        self.skipped = 0
        self.taken = 0

    def put(self, item):
        with self._cond:
            if self._item is not None:
                self.skipped += 1
            self._item = item
            self._cond.notify()

    def take(self, timeout):
        with self._cond:
            if self._item is None:
                self._cond.wait(timeout)
            item, self._item = self._item, None
            if item is not None:
                self.taken += 1
            return item


class LatestValue:
    """The latest value a receiving thread puts, and waits in other threads (services) for a
    value that satisfies a predicate.

    :meth:`put` is on the receive path of every datagram of its stream: an attribute store and,
    only while someone waits, a notify.  (Taking a Condition and calling its ``notify_all``, which
    is Python code, cost about 5 us per datagram cache-cold in ``bench/path_cost.py``: as much as
    converting a small stream's message.)  No wake-up is lost: a waiter counts itself in before
    it reads the value, and ``put`` stores the value before it reads the count (the GIL keeps the
    two threads' steps in that order), so either ``put`` sees the waiter and notifies it, or the
    waiter sees the new value.
    """

    def __init__(self):
        self.value = None
        self._cond = threading.Condition(threading.Lock())
        self._waiting = 0

    def put(self, value):
        self.value = value
        if self._waiting:
            with self._cond:
                self._cond.notify_all()

    def wait_for(self, pred, timeout):
        """The first value (the one at hand, or one put within ``timeout`` s) for which
        ``pred(value)`` is true; None when there is none by then."""
        end = time.monotonic() + timeout
        with self._cond:
            self._waiting += 1
            try:
                while True:
                    value = self.value
                    if value is not None and pred(value):
                        return value
                    left = end - time.monotonic()
                    if left <= 0:
                        return None
                    self._cond.wait(left)
            finally:
                self._waiting -= 1


def worker_diagnostics(workers, recent_s=10.0, now=None):
    """Diagnostics of a set of workers: ``(level, summary, [(key, value), ...])``.

    Level (as ``diagnostic_msgs/DiagnosticStatus``): ERROR (2) when a worker
    is dead, is restarting, or failed within the last ``recent_s`` seconds;
    WARN (1) when one is stopped; OK (0) when all run.  Values: each worker's
    state and restart count, and its last error when it has one.
    """
    now = time.monotonic() if now is None else now
    workers = list(workers)
    values = []
    dead, recent, stopped = [], [], []
    for w in workers:
        values.append((f'{w.name} state', w.state))
        values.append((f'{w.name} restarts', str(w.restarts)))
        if w.last_error:
            values.append((f'{w.name} last error', w.last_error))
        if w.state == DEAD:
            dead.append(w)
        elif w.state == RESTARTING or (w.last_error_t is not None and now - w.last_error_t <= recent_s):
            recent.append(w)
        elif w.state == STOPPED:
            stopped.append(w)
    if dead:
        return ERROR, '; '.join(f'worker {w.name} dead: {w.dead_reason or w.last_error}'
                                for w in dead), values
    if recent:
        return ERROR, '; '.join('worker %s restarted (%d so far) after %s' % (w.name, w.restarts, w.last_error)
                                for w in recent), values
    if stopped:
        return WARN, f"stopped: {', '.join((w.name for w in stopped))}", values
    return OK, f'all {len(workers)} workers running', values
