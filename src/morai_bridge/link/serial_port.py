"""ERP-42 serial link: command transmission, feedback reception, reconnection.

No ROS here: :class:`Erp42Link` owns the serial port, and the ROS node
(``morai_bridge.nodes.erp42_serial``) only feeds it commands and publishes
what it reports.  Behaviour follows docs/erp42.md (section 7):

* TX at ``rate_hz`` on absolute deadlines (no drift; a tick that is a full
  period late skips whole periods, counted in ``stats.tx_overruns``).  Each
  tick sends the latest accepted command, or a stop frame (SPEED 0, full
  brake, gear and steering held) when there is none, when it is older than
  ``cmd_timeout_s``, or when it predates the last (re)connection.  ALIVE steps
  by one per frame written and wraps 255 -> 0.
* RX: between ticks the same thread waits in ``select`` on the port; what
  arrives goes through a :class:`FeedbackFramer`.  Each valid frame is handed
  to the ``erp42_feedback`` worker, which calls ``on_feedback(feedback,
  monotonic_time)``; a slow or failing callback therefore never delays a
  command frame (callback exceptions are counted in ``stats.callback_errors``).
* A read/write error or a vanished device path closes the port; it is reopened
  as soon as the device path exists again (checked every tick).  Failed opens
  of the same device node back off from 50 ms, doubling, up to
  ``reconnect_period_s``; a different node at the path (the device came back)
  is tried at once.  Each outage is recorded with its duration.
* :meth:`Erp42Link.stop` sends stop frames for ``shutdown_stop_s``, then
  closes.

Threading invariant
-------------------
The port object is created, used (``read``, ``write``, ``in_waiting``,
``fileno``, ``reset_input_buffer``) and closed **only on the ``erp42_io``
worker thread** -- including the worker's restart, exit and death hooks,
which run on that thread too.  Only after that thread has ended may
:meth:`stop` close a port left open.  No other thread calls anything on the
port (``connected`` only compares the attribute with None), so no thread can
use a port that another is closing; the ``_owner`` check enforces this at
every open, tick, read and close.  Other threads only write plain values
(the latest command under ``_lock``, the E-stop flag, the shutdown deadline)
that the I/O thread reads at its next tick.
"""
import collections
import errno
import grp
import math
import os
import select
import termios
import threading
import time
import traceback

import serial

from morai_bridge.link.workers import ThrottledLog, Worker
from morai_bridge.wire import erp42
from morai_bridge.wire.erp42 import convert as erp42_convert

LONGL_THROTTLE = 1

#: What a read, write or flush on a vanished device raises (pyserial wraps most
#: errors in SerialException; in_waiting raises a bare OSError, tcflush a
#: termios.error).
IO_ERRORS = (serial.SerialException, OSError, termios.error)

FEEDBACK_QUEUE = 64        # frames waiting for on_feedback (about 1.3 s at 50 Hz)
OUTAGE_HISTORY = 100       # outages kept with their times (all are counted in outage_count)


def permission_advice(path, error):
    """'' unless ``error`` is a refused open of ``path``; then what a normal user does about it: the
    device's group (dialout for USB serial adapters on Debian and Ubuntu), joined once."""
    if getattr(error, 'errno', None) != errno.EACCES and 'Permission denied' not in str(error):
        return ''
    try:
        group = grp.getgrgid(os.stat(path).st_gid).gr_name
    except (OSError, KeyError):
        group = 'dialout'
    if group == 'root':
        return ('; only root may open it: give it to a group (a udev rule with GROUP="dialout", MODE="0660") '
                'and join that group')
    return ('; a normal user needs the device\'s group %s: sudo usermod -aG %s $USER, then log out and in '
            '(id shows the groups in force)' % (group, group))


class LinkStats:
    """Counters for diagnostics; written by the link threads, read by anyone."""

    def __init__(self):
        self.frames_sent = 0
        self.stop_frames_sent = 0
        self.write_errors = 0
        self.read_errors = 0
        self.open_failures = 0
        self.reconnects = 0
        # the last OUTAGE_HISTORY outages as [start, end or None] (monotonic seconds); a link
        # that runs for months with a flaky cable must not grow without bound
        self.outages = collections.deque(maxlen=OUTAGE_HISTORY)
        self.outage_count = 0      # every outage since start
        self.last_error = ''
        self.commands_accepted = 0
        self.commands_rejected = 0
        self.timeouts = 0          # transitions from a fresh command to stop frames
        self.tx_overruns = 0       # TX periods skipped because a tick came a full period late
        self.callback_errors = 0   # exceptions raised by on_feedback
        self.feedback_dropped = 0  # frames on_feedback was too slow to take


class Erp42Link:
    """Drive an ERP-42 PCU over a serial port.

    ``params`` is an :class:`erp42_convert.Erp42Params`.  ``on_feedback(fb, t)`` is
    called from the ``erp42_feedback`` thread for every valid feedback frame
    (``t``: ``time.monotonic()`` when it was read).  ``on_state(text)`` reports
    connection changes (from the I/O thread).  ``opener(path, baud)`` makes the
    port (default: ``serial.Serial`` with a 20 ms read and 200 ms write
    timeout); it must return an object with pyserial's ``fileno``, ``read``,
    ``write``, ``in_waiting``, ``reset_input_buffer`` and ``close``.

    Supervision: ``log(text)`` receives worker errors with tracebacks
    (throttled) and callback errors; ``on_dead(worker)`` is called when a
    worker cannot be restarted (more than ``max_restarts`` failures within
    ``restart_window_s``), after the port was closed.  :attr:`workers` lists
    the two workers, ``erp42_io`` and ``erp42_feedback``.
    """

    def __init__(self, params, on_feedback=None, on_state=None, opener=None, throttle_mode=True,
                 log=None, on_dead=None, max_restarts=5, restart_window_s=60.0):
        self.p = params
        self.on_feedback = on_feedback or (lambda fb, t: None)
        self.on_state = on_state or (lambda text: None)
        self.throttle_mode = throttle_mode
        self._opener = opener or self._open_serial
        self._user_on_dead = on_dead
        self.stats = LinkStats()
        self.framer = erp42.FeedbackFramer(brake_min=params.brake_min, brake_max=params.brake_max)
        self._period = 1.0 / params.rate_hz
        self._lock = threading.Lock()
        # -- owned by the erp42_io thread (see the module docstring) --
        self._owner = None
        self._port = None
        self._deadline = 0.0
        self._next_open = 0.0
        self._backoff = 0.0
        self._failed_node = None   # (st_dev, st_ino, st_rdev) of the node whose open failed
        self._alive = 0
        self._gear = erp42.GEAR_FORWARD
        self._steer = 0
        # -- written by the I/O thread, read by anyone --
        self._connected_since = None
        self._last_cmd = None
        self._feedback = None      # (Feedback, t)
        self._sending_fresh = False
        # -- written by other threads, read by the I/O thread --
        self._ctrl = None          # (fields tuple, monotonic receive time), under _lock
        self._estop = False
        self._accepting = True
        self._shutdown_until = None
        # -- feedback hand-over to the callback thread --
        self._fb_queue = collections.deque(maxlen=FEEDBACK_QUEUE)
        self._fb_ready = threading.Event()
        self._first_attempt = threading.Event()
        self._cb_log = ThrottledLog(log, 5.0)
        self._io = Worker('erp42_io', self._io_step, log=log, on_restart=self._io_restart,
                          on_dead=self._io_dead, on_exit=self._io_exit,
                          max_restarts=max_restarts, window_s=restart_window_s)
        self._cb = Worker('erp42_feedback', self._dispatch_step, log=log, on_dead=on_dead,
                          max_restarts=max_restarts, window_s=restart_window_s)

    # -- public API -------------------------------------------------------

    def start(self):
        """Start both workers; returns after the first attempt to open the port."""
        self._deadline = time.monotonic()
        self._io.start()
        self._cb.start()
        self._first_attempt.wait(2.0)

    @property
    def connected(self):
        return self._port is not None

    @property
    def sending_fresh(self):
        """True while the frames sent carry a fresh command (not stop frames)."""
        return self._sending_fresh

    @property
    def workers(self):
        """The link's :class:`~morai_bridge.link.workers.Worker` objects (I/O, feedback)."""
        return (self._io, self._cb)

    @property
    def last_command(self):
        """The last frame written (a :class:`erp42.Command`), or None."""
        return self._last_cmd

    @property
    def last_feedback(self):
        return self._feedback

    def set_ctrl(self, longl_cmd_type, accel, brake, steering, velocity, acceleration, now=None):
        """Accept a CtrlCmd's fields, or raise :class:`erp42.CommandRejected`.

        Throttle mode (longlCmdType 1) is mapped to a velocity command of
        accel x max_speed_kmh forward: the PCU only has a speed set-point.
        Acceleration mode (3) is refused, as are NaN/inf values.
        """
        if not self._accepting:
            raise erp42.CommandRejected('shutdown', 'the driver is shutting down; command dropped')
        fields = (longl_cmd_type, accel, brake, steering, velocity, acceleration)
        for name, v in zip(('accel', 'brake', 'steering', 'velocity', 'acceleration'), fields[1:]):
            if not math.isfinite(v):
                self.stats.commands_rejected += 1
                raise erp42.CommandRejected('non_finite', f'CtrlCmd.{name} is {v!r}; command dropped')
        if longl_cmd_type == LONGL_THROTTLE and self.throttle_mode:
            pedal = min(1.0, max(0.0, accel))
            fields = (erp42.LONGL_CMD_VELOCITY, 0.0, brake, steering, pedal * self.p.max_speed_kmh, 0.0)
        try:
            self._convert(fields)      # validate now, convert again at every tick
        except erp42.CommandRejected:
            self.stats.commands_rejected += 1
            raise
        with self._lock:
            self._ctrl = (fields, time.monotonic() if now is None else now)
        self.stats.commands_accepted += 1

    def set_estop(self, on):
        self._estop = bool(on)

    def stop(self):
        """Send stop frames for shutdown_stop_s, then close the port and end the workers.

        The I/O thread sends the frames and closes the port itself.  Only if
        it has ended without doing so (never started, dead) is the port
        closed here, once that thread is gone.
        """
        self._accepting = False
        with self._lock:
            self._ctrl = None
        if self._shutdown_until is None:
            self._shutdown_until = time.monotonic() + self.p.shutdown_stop_s
        if self._io.is_alive():
            self._io.join(self.p.shutdown_stop_s + 2.0)
        if self._io.is_alive():         # stuck (e.g. a blocking opener): ask, wait a bit more
            self._io.stop(1.0)
        self._cb.stop(0)
        self._fb_ready.set()
        self._cb.join(1.0)
        if not self._io.is_alive():
            self._owner = threading.get_ident()     # the I/O thread is gone: the port is ours
            self._close('shutdown')
        # else: still stuck; it was asked to stop and closes the port on its way out (_io_exit)

    # -- the I/O thread ----------------------------------------------------

    def _check_owner(self):
        if self._owner != threading.get_ident():
            raise RuntimeError('Erp42Link: the port may only be used by the erp42_io thread '
                               '(owner %r, caller %r)' % (self._owner, threading.get_ident()))

    def _open_serial(self, port, baud):
        return serial.Serial(port, baud, timeout=0.02, write_timeout=0.2)

    def _io_step(self):
        """One iteration of the I/O loop: a TX tick when due, else wait for feedback."""
        if self._owner is None:
            self._owner = threading.get_ident()
        now = time.monotonic()
        if self._deadline is None:      # first step after a restart: back on a fresh grid
            self._deadline = now
        if now >= self._deadline:
            self._tick(now)
            self._first_attempt.set()
            self._deadline += self._period
            late = time.monotonic() - self._deadline
            if late >= 0:       # a full period late: skip whole periods, stay on the grid
                missed = int(late // self._period) + 1
                self._deadline += missed * self._period
                self.stats.tx_overruns += missed
            return
        port = self._port
        if port is None:
            self._io.wait(self._deadline - now)
            return
        try:
            ready = select.select([port.fileno()], [], [], self._deadline - now)[0]
        except IO_ERRORS + (ValueError,) as e:     # fd no longer valid: the device is gone
            self.stats.read_errors += 1
            self._close(f'select failed: {e}')
            return
        if ready:
            self._receive(port)

    def _tick(self, now):
        self._check_owner()
        if self._shutdown_until is not None and now >= self._shutdown_until:
            self._close('shutdown')
            self._io.stop(0)
            return
        port = self._port
        if port is None:
            port = self._try_open(now)
            if port is None:
                return
        elif not os.path.exists(self.p.port):
            self._close(f'device {self.p.port} disappeared')
            return
        cmd, is_stop = self._next_command(now)
        cmd = cmd._replace(alive=self._alive)
        data = erp42.encode_command(cmd)
        try:
            port.write(data)
        except IO_ERRORS as e:
            self.stats.write_errors += 1
            self._close(f'write failed: {e}')
            return
        self._alive = erp42_convert.next_alive(self._alive)
        self._last_cmd = cmd
        self.stats.frames_sent += 1
        if is_stop:
            self.stats.stop_frames_sent += 1

    def _receive(self, port):
        self._check_owner()
        try:
            n = port.in_waiting
            # readable with nothing waiting = hang-up: read() raises then
            data = port.read(n if n > 0 else 1)
        except IO_ERRORS as e:
            self.stats.read_errors += 1
            self._close(f'read failed: {e}')
            return
        if not data:
            return
        t = time.monotonic()
        frames = self.framer.feed(data)
        if not frames:
            return
        for fb in frames:
            self._feedback = (fb, t)
            if len(self._fb_queue) == FEEDBACK_QUEUE:    # the append drops the oldest
                self.stats.feedback_dropped += 1
            self._fb_queue.append((fb, t))
        self._fb_ready.set()

    def _try_open(self, now):
        """Open the port if it is time to; return it or None.

        While the device path is absent this costs one stat() per tick, so a
        returning device is picked up within a tick.  Failed opens of the same
        device node back off from 50 ms doubling up to reconnect_period_s; a
        different node at the path is tried at once."""
        self._check_owner()
        path = self.p.port
        try:
            st = os.stat(path)
        except OSError:
            self._failed_node = None
            self._mark_outage(now, f'device {path} does not exist')
            return None
        node = (st.st_dev, st.st_ino, st.st_rdev)
        if node == self._failed_node and now < self._next_open:
            return None
        port = None
        try:
            port = self._opener(path, self.p.baud)
            port.reset_input_buffer()
        except Exception as e:      # noqa: BLE001 - any failure to open is a failed open
            if port is not None:
                try:
                    port.close()
                except Exception:   # noqa: BLE001
                    pass
            self.stats.open_failures += 1
            if node != self._failed_node:
                self._backoff = 0.0
            self._failed_node = node
            self._backoff = min(self.p.reconnect_period_s, max(0.05, self._backoff * 2.0))
            self._next_open = now + self._backoff
            self._mark_outage(now, f'cannot open {path}: {e}{permission_advice(path, e)}')
            return None
        self._failed_node = None
        self._backoff = 0.0
        self.framer.reset()
        with self._lock:
            self._port = port
            self._connected_since = now
        outages = self.stats.outages
        if outages and outages[-1][1] is None:
            outages[-1][1] = now
            if self.stats.frames_sent or self.stats.outage_count > 1:
                self.stats.reconnects += 1
            self._report_state(f'port {path} open after {now - outages[-1][0]:.2f} s')
        return port

    def _mark_outage(self, now, why):
        self.stats.last_error = why
        if not self.stats.outages or self.stats.outages[-1][1] is not None:
            self._begin_outage(now)
            self._report_state(why)

    def _begin_outage(self, now):
        self.stats.outages.append([now, None])
        self.stats.outage_count += 1

    def _close(self, why):
        self._check_owner()
        port = self._port
        with self._lock:
            self._port = None
        if port is None:
            return
        try:
            port.close()
        except Exception:   # noqa: BLE001 - closing a vanished device may fail; it is closed anyway
            pass
        if why != 'shutdown':
            self._begin_outage(time.monotonic())
            self.stats.last_error = why
            self._report_state(f'port {self.p.port} lost: {why}')

    def _io_restart(self, worker):
        """Restart hook (on the I/O thread): resume from a closed port."""
        self._owner = threading.get_ident()
        self._close(f'restarted after {worker.last_error}')
        self.framer.reset()
        self._failed_node = None
        self._deadline = None           # re-anchored after the back-off, not counted as overruns

    def _io_exit(self, worker):
        """The I/O worker ends (stop requested): it closes the port it owns."""
        self._owner = threading.get_ident()
        self._close('shutdown')

    def _io_dead(self, worker):
        """The I/O worker cannot go on: release the port, then tell the user."""
        try:
            self._owner = threading.get_ident()
            self._close(f'I/O worker dead: {worker.dead_reason}')
        except Exception:   # noqa: BLE001
            pass
        self._first_attempt.set()
        if self._user_on_dead is not None:
            self._user_on_dead(worker)

    def _convert(self, fields):
        fb = self._feedback
        return erp42_convert.ctrl_to_command(
            fields[0], fields[1], fields[2], fields[3], fields[4], fields[5], self.p, 0,
            prev_gear=self._gear, feedback_speed=fb[0].speed if fb else None, estop=self._estop)

    def _next_command(self, now):
        with self._lock:
            ctrl = self._ctrl
            since = self._connected_since
        fresh = (ctrl is not None and now - ctrl[1] <= self.p.cmd_timeout_s
                 and since is not None and ctrl[1] >= since)
        if self._sending_fresh and not fresh:
            self.stats.timeouts += 1
        if fresh:
            try:
                cmd = self._convert(ctrl[0])
            except erp42.CommandRejected:
                cmd = None
            if cmd is not None:
                self._sending_fresh = True
                self._gear, self._steer = cmd.gear, cmd.steer
                return cmd, False
        self._sending_fresh = False
        shutting = self._shutdown_until is not None
        estop = self._estop or (shutting and self.p.shutdown_estop)
        return erp42_convert.stop_command(self.p, 0, gear=self._gear, steer=self._steer, estop=estop), True

    # -- the feedback thread -------------------------------------------------

    def _dispatch_step(self):
        if not self._fb_ready.wait(0.2):
            return
        self._fb_ready.clear()
        while not self._cb.stopping:
            try:
                fb, t = self._fb_queue.popleft()
            except IndexError:
                return
            try:
                self.on_feedback(fb, t)
            except Exception as e:      # noqa: BLE001 - user code: count, log, go on
                self._callback_failed('on_feedback', e)

    def _callback_failed(self, name, e):
        self.stats.callback_errors += 1
        self._cb_log('Erp42Link: %s raised %s: %s (%d callback errors so far)\n%s' % (
            name, type(e).__name__, e, self.stats.callback_errors, traceback.format_exc().rstrip()))

    def _report_state(self, text):
        try:
            self.on_state(text)
        except Exception as e:      # noqa: BLE001 - user code must not stop the I/O thread
            self._callback_failed('on_state', e)
