"""ERP-42 serial link: command transmission, feedback reception, reconnection.

No ROS here: :class:`Erp42Link` owns the serial port and two threads, and the
ROS node (``morai_bridge.nodes.erp42_serial``) only feeds it commands and
publishes what it reports.  Behaviour follows docs/erp42.md:

* TX thread at ``rate_hz`` on absolute deadlines (no drift).  Each tick sends
  the latest accepted command, or a stop frame (SPEED 0, full brake, gear and
  steering held) when there is none, when it is older than ``cmd_timeout_s``,
  or when it predates the last reconnection.  ALIVE steps by one per frame
  written and wraps 255 -> 0.
* RX thread: reads whatever is waiting into a :class:`FeedbackFramer`; each
  valid frame goes to ``on_feedback(feedback, monotonic_time)``.
* A read/write error or a vanished device closes the port; the TX thread
  reopens it as soon as the device path exists again (failed opens back off
  up to ``reconnect_period_s``).  Each outage is recorded with its duration.
* :meth:`stop` sends stop frames for ``shutdown_stop_s``, then closes.
"""
import math
import os
import threading
import time

import serial

from morai_bridge.wire import erp42

LONGL_THROTTLE = 1


class LinkStats(object):
    """Counters for diagnostics; written by the link threads, read by anyone."""

    def __init__(self):
        self.frames_sent = 0
        self.stop_frames_sent = 0
        self.write_errors = 0
        self.read_errors = 0
        self.open_failures = 0
        self.reconnects = 0
        self.outages = []          # list of [start, end or None] (monotonic seconds)
        self.last_error = ''
        self.commands_accepted = 0
        self.commands_rejected = 0
        self.timeouts = 0          # transitions from a fresh command to stop frames


class Erp42Link(object):
    """Drive an ERP-42 PCU over a serial port.

    ``params`` is an :class:`erp42.Erp42Params`.  ``on_feedback(fb, t)`` is
    called from the RX thread for every valid feedback frame.  ``opener`` makes
    the port (default: ``serial.Serial``); tests pass the same with other
    timeouts.
    """

    def __init__(self, params, on_feedback=None, on_state=None, opener=None, throttle_mode=True):
        self.p = params
        self.on_feedback = on_feedback or (lambda fb, t: None)
        self.on_state = on_state or (lambda text: None)
        self.throttle_mode = throttle_mode
        self._opener = opener or self._open_serial
        self.stats = LinkStats()
        self.framer = erp42.FeedbackFramer(brake_min=params.brake_min, brake_max=params.brake_max)
        self._lock = threading.Lock()
        self._port = None
        self._connected_since = None
        self._next_open = 0.0
        self._backoff = 0.0
        self._ctrl = None          # (fields tuple, monotonic receive time)
        self._estop = False
        self._alive = 0
        self._gear = erp42.GEAR_FORWARD
        self._steer = 0
        self._last_cmd = None
        self._feedback = None      # (Feedback, t)
        self._sending_fresh = False
        self._accepting = True
        self._shutdown_until = None
        self._stop = threading.Event()
        self._tx = threading.Thread(target=self._tx_loop, name='erp42_tx', daemon=True)
        self._rx = threading.Thread(target=self._rx_loop, name='erp42_rx', daemon=True)

    # -- public API -------------------------------------------------------

    def start(self):
        self._try_open(time.monotonic())
        self._tx.start()
        self._rx.start()

    @property
    def connected(self):
        return self._port is not None

    @property
    def sending_fresh(self):
        """True while the frames written carry a fresh accepted command (not stop frames)."""
        return self._sending_fresh

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
                raise erp42.CommandRejected('non_finite', 'CtrlCmd.%s is %r; command dropped' % (name, v))
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
        """Send stop frames for shutdown_stop_s, then close the port and end the threads."""
        self._accepting = False
        with self._lock:
            self._ctrl = None
        self._shutdown_until = time.monotonic() + self.p.shutdown_stop_s
        if self._tx.is_alive():
            self._tx.join(self.p.shutdown_stop_s + 2.0)
        self._stop.set()
        self._rx.join(1.0)
        self._close('shutdown')

    # -- internals -------------------------------------------------------

    def _open_serial(self, port, baud):
        return serial.Serial(port, baud, timeout=0.02, write_timeout=0.2)

    def _try_open(self, now):
        """Open the port if it is time to.  While the device path is absent this
        costs one stat() per tick, so a returning device is picked up within a
        tick; failed opens of an existing path back off from 50 ms doubling up to
        reconnect_period_s."""
        if now < self._next_open:
            return False
        if not os.path.exists(self.p.port):
            self._mark_outage(now, 'device %s does not exist' % self.p.port)
            return False
        try:
            port = self._opener(self.p.port, self.p.baud)
            port.reset_input_buffer()
        except (serial.SerialException, OSError, ValueError) as e:
            self.stats.open_failures += 1
            self._backoff = min(self.p.reconnect_period_s, max(0.05, self._backoff * 2.0))
            self._next_open = now + self._backoff
            self._mark_outage(now, 'cannot open %s: %s' % (self.p.port, e))
            return False
        self._backoff = 0.0
        self.framer.reset()
        with self._lock:
            self._port = port
            self._connected_since = now
        if self.stats.outages and self.stats.outages[-1][1] is None:
            self.stats.outages[-1][1] = now
            if self.stats.frames_sent or len(self.stats.outages) > 1:
                self.stats.reconnects += 1
            self.on_state('port %s open after %.2f s' % (self.p.port, now - self.stats.outages[-1][0]))
        return True

    def _mark_outage(self, now, why):
        self.stats.last_error = why
        if not self.stats.outages or self.stats.outages[-1][1] is not None:
            self.stats.outages.append([now, None])
            self.on_state(why)

    def _close(self, why):
        with self._lock:
            port, self._port = self._port, None
        if port is not None:
            try:
                port.close()
            except (serial.SerialException, OSError):
                pass
            if why != 'shutdown':
                self.stats.outages.append([time.monotonic(), None])
                self.stats.last_error = why
                self.on_state('port %s lost: %s' % (self.p.port, why))

    def _convert(self, fields):
        fb = self._feedback
        return erp42.ctrl_to_command(
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
        self._sending_fresh = fresh
        if fresh:
            try:
                cmd = self._convert(ctrl[0])
            except erp42.CommandRejected:
                cmd = None
            if cmd is not None:
                self._gear, self._steer = cmd.gear, cmd.steer
                return cmd, False
        shutting = self._shutdown_until is not None
        estop = self._estop or (shutting and self.p.shutdown_estop)
        return erp42.stop_command(self.p, 0, gear=self._gear, steer=self._steer, estop=estop), True

    def _tx_loop(self):
        period = 1.0 / self.p.rate_hz
        deadline = time.monotonic()
        while not self._stop.is_set():
            now = time.monotonic()
            if self._shutdown_until is not None and now >= self._shutdown_until:
                return
            port = self._port
            if port is None:
                self._try_open(now)
            else:
                if not os.path.exists(self.p.port):
                    self._close('device %s disappeared' % self.p.port)
                else:
                    cmd, is_stop = self._next_command(now)
                    cmd = cmd._replace(alive=self._alive)
                    try:
                        port.write(erp42.encode_command(cmd))
                    except (serial.SerialException, OSError) as e:
                        self.stats.write_errors += 1
                        self._close('write failed: %s' % e)
                    else:
                        self._alive = erp42.next_alive(self._alive)
                        self._last_cmd = cmd
                        self.stats.frames_sent += 1
                        if is_stop:
                            self.stats.stop_frames_sent += 1
            deadline += period
            delay = deadline - time.monotonic()
            if delay < -period:          # fell behind (e.g. blocked open): resynchronise
                deadline = time.monotonic()
                delay = 0.0
            if delay > 0:
                time.sleep(delay)

    def _rx_loop(self):
        while not self._stop.is_set():
            port = self._port
            if port is None:
                time.sleep(0.02)
                continue
            try:
                data = port.read(max(1, port.in_waiting))
            except (serial.SerialException, OSError, TypeError, AttributeError) as e:
                # TypeError/AttributeError: pyserial after a concurrent close()
                if self._port is port:
                    self.stats.read_errors += 1
                    self._close('read failed: %s' % e)
                continue
            if not data:
                continue
            t = time.monotonic()
            for fb in self.framer.feed(data):
                self._feedback = (fb, t)
                self.on_feedback(fb, t)
