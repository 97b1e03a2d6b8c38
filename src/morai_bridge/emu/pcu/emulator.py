"""ERP-42 PCU emulator: the vehicle side of the serial protocol, on a pty or a serial port.

It stands in for the ERP-42 Platform Control Unit (or the MORAI simulator's
serial emulation) so that the serial bridge can be tested without hardware,
including the failure cases: it frames 14-byte commands with the same
:class:`~morai_bridge.wire.erp42.Framer` as the bridge, runs the operating
modes (INIT, MANUAL, AUTO, AUTO_FAIL, E-STOP) with the ALIVE watchdog,
simulates speed/steering/brake/encoder with :class:`VehicleModel`, and sends
18-byte feedback frames every 20 ms (or one per command).

Library use::

    with PcuEmulator(init_s=0.0, link="/tmp/erp42") as pcu:
        ...  # open "/tmp/erp42" (or pcu.device_path) with pyserial
        pcu.state.mode

Program use (``src`` on ``PYTHONPATH``; the CLI is :mod:`.cli`)::

    python3 -m morai_bridge.emu.pcu --link /tmp/erp42

This module is the :class:`PcuEmulator`: the loop thread, the link's life and
the wiring.  Around it, by job:

=====================  ==========================================================
:mod:`.protocol`       modes, ALIVE watchdog, clamping, feedback contents; PcuState
:mod:`.faults`         fault injection (noise, false headers, split writes, ...)
:mod:`.link`           the pty pair or the serial port
:mod:`.vehicle`        the small rate-limited vehicle model
:mod:`.cli`            ``python3 -m morai_bridge.emu.pcu``
=====================  ==========================================================

All threads are internal: one loop thread does every read, write and
state update; the public methods are thread-safe.  See ``docs/erp42.md``.
"""

import errno
import logging
import math
import os
import select
import threading
import time
from collections import deque
from typing import Callable, Optional

from morai_bridge.configuration.params import Param
from morai_bridge.link.workers import Worker
from morai_bridge.wire.erp42 import GEAR_NEUTRAL, Command, CommandFramer, encode_feedback

from .faults import Faults
from .link import open_link
from .protocol import ALIVE_CHECKS, FEEDBACK_MODES, Mode, PcuProtocol, PcuState
from .vehicle import VehicleModel, VehicleState

__all__ = ["Mode", "PcuState", "PcuEmulator", "ALIVE_CHECKS", "FEEDBACK_MODES", "PARAMS"]

log = logging.getLogger("morai_bridge.emu.pcu")

#: The emulator's options: the pcu_emulator node's ~params and the program's options (:mod:`.cli`,
#: which spells link, port, rc_auto and encoder_enabled its own way and adds a few of its own).
PARAMS = [
    Param('link', '/tmp/erp42', 'symlink to the emulated device (the path erp42_serial opens); "" = none'),
    Param('port', '', 'use this existing serial device instead of creating a pty (pty or "" = create one)',
          unset='pty'),
    Param('init_s', 3.0, 'INIT phase after start: no command obeyed [s]', minimum=0.0),
    Param('alive_timeout_s', 1.0, 'AUTO_FAIL after this long without a correct ALIVE [s]', minimum=0.05),
    Param('alive_check', 'strict', 'ALIVE check: strict (+1), changing, off', choices=ALIVE_CHECKS),
    Param('auto_fail_latch', False, 'leave AUTO_FAIL only through an RC Manual -> Auto cycle'),
    Param('feedback_mode', 'free_running', 'free_running (every period_s) or reply (one per command)',
          choices=FEEDBACK_MODES),
    Param('period_s', 0.02, 'feedback period [s]', minimum=0.005),
    Param('rc_auto', True, 'RC Auto/Manual switch in Auto at start'),
    Param('brake_min', 1, 'BRAKE value meaning no braking'),
    Param('brake_max', 150, 'BRAKE value meaning full braking'),
    Param('feedback_steer_sign', -1, 'sign of feedback STEER relative to the command', choices=(-1, 1)),
    Param('encoder_enabled', True, 'false: ENC always 0 (like the MORAI simulator)'),
    Param('encoder_ppr', 100.0, 'encoder counts per wheel revolution'),
    Param('wheel_radius_m', 0.27, 'wheel radius [m]'),
    Param('accel_mps2', 1.5, 'speed rate limit of the simulated platform [m/s^2]', minimum=0.01),
    Param('noise_bytes', 0, 'random bytes before every feedback frame (fault injection)', minimum=0),
    Param('split_writes', 0, 'write every feedback frame in this many pieces (fault injection)', minimum=0),
]


class PcuEmulator:
    """ERP-42 PCU emulator (spec section 12).

    Link: by default a new pty pair (``device_path`` is the slave, e.g.
    ``/dev/pts/5``); with ``port`` an existing serial device opened with
    pyserial.  ``link`` is an optional symlink path pointing at the device,
    re-pointed by :meth:`replug` and removed by :meth:`unplug`/:meth:`close`.

    Protocol behaviour (:class:`PcuProtocol`, at :attr:`protocol`): ``init_s``
    (INIT duration after :meth:`start`), ``alive_timeout_s`` and
    ``alive_check`` (``strict`` = +1 mod 256, ``changing`` = any different
    value, ``off``), ``auto_fail_latch`` (leave AUTO_FAIL only through an RC
    Manual -> Auto cycle), ``rc_auto`` / ``rc_powered`` (simulated remote
    controller at start-up), ``brake_min`` / ``brake_max``,
    ``feedback_steer_sign``, encoder (``encoder_enabled``, ``encoder_ppr``,
    ``encoder_sign``, ``wheel_radius_m``, ``encoder_start``).  Here:
    ``feedback_mode`` (``free_running`` every ``period_s`` or ``reply`` = one
    frame per valid command).

    Vehicle: ``vehicle`` is a :class:`VehicleModel` (rate limits); pass a
    fast one in tests.  Sharing the vehicle with another emulator:

    * ``on_state(VehicleState)`` is called from the loop thread after every
      tick (keep it short; exceptions are logged and counted, never fatal);
    * ``speed_source()`` -> signed m/s or ``None``: if given, its value
      replaces the speed model (the other emulator owns the dynamics), and
      SPEED and ENC are derived from it.

    Fault injection (the knobs of :attr:`faults`, a :class:`~.faults.Faults`, also attributes
    here): :attr:`noise_bytes`, :attr:`false_headers`, :attr:`split_writes`,
    :attr:`split_gap_s`, :attr:`feedback_paused`; actions :meth:`drop_feedback`,
    :meth:`inject`, :meth:`unplug`, :meth:`replug`.
    """

    def __init__(self, port: Optional[str] = None, *, link: Optional[str] = None,
                 baudrate: int = 115200, init_s: float = 3.0, alive_timeout_s: float = 1.0,
                 alive_check: str = "strict", auto_fail_latch: bool = False,
                 feedback_mode: str = "free_running", period_s: float = 0.02,
                 rc_auto: bool = True, rc_powered: bool = True,
                 brake_min: int = 1, brake_max: int = 150, feedback_steer_sign: int = -1,
                 encoder_enabled: bool = True, encoder_ppr: float = 100.0,
                 encoder_sign: int = 1, wheel_radius_m: float = 0.27, encoder_start: int = 0,
                 vehicle: Optional[VehicleModel] = None,
                 on_state: Optional[Callable[[VehicleState], None]] = None,
                 speed_source: Optional[Callable[[], Optional[float]]] = None,
                 seed: Optional[int] = None):
        if alive_check not in ALIVE_CHECKS:
            raise ValueError(f"alive_check must be one of {ALIVE_CHECKS}, got {alive_check!r}")
        if feedback_mode not in FEEDBACK_MODES:
            raise ValueError(f"feedback_mode must be one of {FEEDBACK_MODES}, got {feedback_mode!r}")
        if not 1 <= brake_min < brake_max <= 255:
            raise ValueError(f"need 1 <= brake_min < brake_max <= 255, got {brake_min!r}, {brake_max!r}")
        if feedback_steer_sign not in (-1, 1) or encoder_sign not in (-1, 1):
            raise ValueError("feedback_steer_sign and encoder_sign must be -1 or +1")
        for name, v in (("period_s", period_s), ("alive_timeout_s", alive_timeout_s),
                        ("encoder_ppr", encoder_ppr), ("wheel_radius_m", wheel_radius_m)):
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a positive number, got {v!r}")
        if not (math.isfinite(init_s) and init_s >= 0):
            raise ValueError(f"init_s must be >= 0, got {init_s!r}")

        self.port = port
        self.link_path = os.path.abspath(link) if link else None
        self.baudrate = baudrate
        self.feedback_mode = feedback_mode
        self.period_s = float(period_s)
        self.vehicle = vehicle if vehicle is not None else VehicleModel()
        self.on_state = on_state
        self.speed_source = speed_source
        #: the protocol state machine (modes, watchdog, feedback contents); the lock guards it
        self.protocol = PcuProtocol(
            init_s=init_s, alive_timeout_s=alive_timeout_s, alive_check=alive_check,
            auto_fail_latch=auto_fail_latch, rc_auto=rc_auto, rc_powered=rc_powered,
            brake_min=brake_min, brake_max=brake_max, feedback_steer_sign=feedback_steer_sign,
            encoder_enabled=encoder_enabled, encoder_ppr=encoder_ppr, encoder_sign=encoder_sign,
            wheel_radius_m=wheel_radius_m, encoder_start=encoder_start, now=time.monotonic())
        #: the fault knobs (noise, false headers, split writes, paused feedback, frames to drop)
        self.faults = Faults(seed)

        self._lock = threading.RLock()
        self._requests: deque = deque()
        self._stop = threading.Event()
        self._thread: Optional[Worker] = None     # the supervised loop
        self._log_error = None
        self._on_dead = None
        self.framer = CommandFramer(brake_min=brake_min, brake_max=brake_max, check_alive=False)

        # loop
        self._deadline = 0.0
        self._last_tick: Optional[float] = None
        # counters
        self._sent = 0
        self._failed_writes = 0
        self._overruns = 0
        self._hook_errors = 0

        self._link = None
        self._open_link()

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> "PcuEmulator":
        """Start the loop thread; INIT (``init_s``) starts now.  Returns self."""
        if self._thread is not None:
            raise RuntimeError("PcuEmulator already started")
        with self._lock:
            self.protocol.restart(time.monotonic())
            self._last_tick = None
        self._stop.clear()
        self._deadline = time.monotonic() + self.period_s
        self._thread = Worker("pcu_emulator_loop", self._loop_once,
                              log=self._log_error or (lambda text: log.error("%s", text)),
                              on_dead=self._on_dead, backoff_s=self.period_s).start()
        return self

    def supervise(self, log_error=None, on_dead=None) -> "PcuEmulator":
        """Where the loop's errors are logged and who is told when it cannot resume (before start())."""
        self._log_error = log_error
        self._on_dead = on_dead
        return self

    @property
    def workers(self):
        """The supervised worker threads (for diagnostics)."""
        return [self._thread] if self._thread is not None else []

    def close(self) -> None:
        """Stop the thread, close the link and remove the symlink.  Idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.stop(2.0)
        self._close_link()

    def __enter__(self) -> "PcuEmulator":
        if self._thread is None:
            self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- properties ----------------------------------------------------------

    @property
    def device_path(self) -> Optional[str]:
        """Path a client opens: the pty slave or the serial port; None while unplugged."""
        link = self._link
        return link.device if link is not None else None

    @property
    def state(self) -> PcuState:
        """A consistent snapshot of mode, outputs and counters."""
        with self._lock:
            p, fr, v = self.protocol, self.framer, self.vehicle
            mode = p.update_mode(time.monotonic())
            return PcuState(
                mode=mode, connected=self._link is not None, device_path=self.device_path,
                rc_auto=p.rc_auto, rc_estop=p.rc_estop, panel_estop=p.panel_estop,
                command=p.cmd, speed=p.speed_raw(v), steer=p.steer_raw(v),
                brake=p.brake_raw, gear=p.gear, enc=p.enc_raw(v),
                alive_tx=p.alive_tx, frames_ok=fr.frames_ok,
                frames_rejected=fr.candidates_rejected, bytes_discarded=fr.bytes_discarded,
                alive_errors=p.alive_errors, soft_violations=fr.soft_violations,
                clamped=p.clamped, feedback_sent=self._sent,
                feedback_dropped=self.faults.dropped + self._failed_writes,
                auto_fail_events=p.auto_fail_events,
                overruns=self._overruns)

    # -- simulated inputs ----------------------------------------------------

    def set_rc_auto(self, auto: bool) -> None:
        """RC Auto/Manual switch.  A Manual -> Auto change clears a latched AUTO_FAIL."""
        with self._lock:
            self.protocol.set_rc_auto(auto)

    def set_rc_estop(self, on: bool) -> None:
        """RC E-stop switch."""
        with self._lock:
            self.protocol.rc_estop = bool(on)

    def set_panel_estop(self, on: bool) -> None:
        """E-stop button on the platform's switch panel."""
        with self._lock:
            self.protocol.panel_estop = bool(on)

    def set_rc_drive(self, speed: int = 0, steer: int = 0, gear: int = GEAR_NEUTRAL,
                     brake: Optional[int] = None) -> None:
        """What the RC commands in MANUAL mode (raw units like a command frame)."""
        with self._lock:
            self.protocol.set_rc_drive(speed, steer, gear, brake)

    # -- fault injection -------------------------------------------------------

    @property
    def noise_bytes(self) -> int:
        """Random bytes written before every feedback frame (0 = off): ``faults.noise_bytes``."""
        return self.faults.noise_bytes

    @noise_bytes.setter
    def noise_bytes(self, value: int) -> None:
        self.faults.noise_bytes = value

    @property
    def false_headers(self) -> bool:
        """A false header before every frame: ``faults.false_headers``."""
        return self.faults.false_headers

    @false_headers.setter
    def false_headers(self, value: bool) -> None:
        self.faults.false_headers = value

    @property
    def split_writes(self) -> int:
        """Each feedback frame in this many writes: ``faults.split_writes``."""
        return self.faults.split_writes

    @split_writes.setter
    def split_writes(self, value: int) -> None:
        self.faults.split_writes = value

    @property
    def split_gap_s(self) -> float:
        """Pause between the pieces of a split write: ``faults.split_gap_s``."""
        return self.faults.split_gap_s

    @split_gap_s.setter
    def split_gap_s(self, value: float) -> None:
        self.faults.split_gap_s = value

    @property
    def feedback_paused(self) -> bool:
        """No feedback written, ALIVE not advancing (a silent PCU): ``faults.feedback_paused``."""
        return self.faults.feedback_paused

    @feedback_paused.setter
    def feedback_paused(self, value: bool) -> None:
        self.faults.feedback_paused = value

    def drop_feedback(self, count: int = 1) -> None:
        """Lose the next ``count`` feedback frames: ALIVE advances but nothing is written."""
        with self._lock:
            self.faults.drop(count)

    def inject(self, data: bytes) -> None:
        """Write raw bytes to the client (between frames), e.g. a false header."""
        self._call(lambda: self._write_raw(bytes(data)))

    def unplug(self) -> None:
        """Close the link as if the cable were pulled.

        For a pty: master and slave are closed, so the device path disappears
        and an open client gets I/O errors; the symlink is removed.  The
        emulator keeps running (the watchdog drops to AUTO_FAIL).
        """
        self._call(self._close_link)

    def replug(self) -> None:
        """Open a new link (a new pty pair) and re-point the symlink; the framer is reset."""
        self._call(self._open_link)

    def _send(self, frame: bytes) -> None:
        """Write one feedback frame with the configured faults (loop thread only)."""
        if self._link is None:
            return
        prefix = self.faults.prefix()
        if prefix:
            self._write_raw(prefix)
        ok = True
        for k, piece in enumerate(self.faults.pieces(frame)):
            if k:
                time.sleep(self.faults.split_gap_s)
            ok = self._write_raw(piece) and ok
        with self._lock:
            if ok:
                self._sent += 1
            else:
                self._failed_writes += 1

    # -- internals: link -------------------------------------------------------

    def _open_link(self) -> None:
        if self._link is not None:
            return
        link = open_link(self.port, self.baudrate)
        with self._lock:
            self._link = link
            self.framer.reset()
            self.protocol.reset_alive()
        if self.link_path:
            tmp = "%s.%d.tmp" % (self.link_path, os.getpid())
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            os.symlink(link.device, tmp)
            os.replace(tmp, self.link_path)  # atomic re-point
        log.info("PCU emulator link open: %s%s", link.device,
                 f" (link {self.link_path})" if self.link_path else "")

    def _close_link(self) -> None:
        with self._lock:
            link, self._link = self._link, None
        if link is not None:
            link.close()
        if self.link_path and os.path.islink(self.link_path):
            try:
                os.unlink(self.link_path)
            except FileNotFoundError:
                pass

    def _call(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` on the loop thread (where all I/O happens) and wait for it."""
        t = self._thread
        if t is None or not t.is_alive() or t.in_worker:
            fn()
            return
        done = threading.Event()
        box = []

        def wrapped():
            try:
                fn()
            except BaseException as e:  # handed back to the caller
                box.append(e)
            finally:
                done.set()

        self._requests.append(wrapped)
        if not done.wait(timeout=5.0):
            raise TimeoutError("PCU emulator loop did not run the request")
        if box:
            raise box[0]

    # -- internals: loop -------------------------------------------------------

    def _loop_once(self) -> None:
        """One iteration: run queued requests, read until the deadline, then tick.

        Free-running feedback is real time: a loop late by whole periods skips
        those cycles and stays on its grid (counted in ``overruns``); the
        vehicle model integrates the real elapsed time (at most 0.2 s).
        """
        while self._requests:
            self._requests.popleft()()
        link = self._link
        timeout = max(0.0, self._deadline - time.monotonic())
        if link is not None:
            try:
                ready = select.select([link.fileno()], [], [], timeout)[0]
            except (OSError, ValueError):
                ready = []
                self._stop.wait(timeout)
            if ready:
                self._read(link)
        else:
            self._stop.wait(timeout)
        now = time.monotonic()
        if now >= self._deadline:
            self._tick(now)
            period = self.period_s
            self._deadline += period
            if self._deadline <= now:
                # Late by at least one period: skip whole cycles, stay on the grid.
                missed = int((now - self._deadline) // period) + 1
                self._deadline += missed * period
                with self._lock:
                    self._overruns += missed

    def _read(self, link) -> None:
        try:
            data = link.read()
        except OSError as e:  # includes serial.SerialException
            if getattr(e, "errno", None) in (errno.EAGAIN, errno.EINTR):
                return
            log.warning("PCU emulator read failed (%s); link closed", e)
            self._close_link()
            return
        if not data:
            return
        now = time.monotonic()
        replies = []
        with self._lock:
            for cmd in self.framer.feed(data):
                self._accept_command(cmd, now)
                if self.feedback_mode == "reply" and not self.feedback_paused:
                    replies.append(self._next_feedback(now))
        for fb in replies:
            if fb is not None:
                self._send(fb)

    def _accept_command(self, cmd: Command, now: float) -> None:
        """A complete command frame arrived (lock held)."""
        self.protocol.accept(cmd, now)

    def _tick(self, now: float) -> None:
        with self._lock:
            dt = 0.0 if self._last_tick is None else min(now - self._last_tick, 0.2)
            self._last_tick = now
            mode, target_v, target_steer, brake_frac = self.protocol.targets(now)
            external = None
            if self.speed_source is not None:
                try:
                    external = self.speed_source()
                except Exception:  # noqa: BLE001 - a hook must not stop the PCU
                    self._hook_failed("speed_source")
            self.vehicle.step(dt, target_v, target_steer, brake_frac, external)
            snapshot = self.vehicle.snapshot(self.protocol.gear, mode.value)
            fb = None
            if self.feedback_mode == "free_running" and not self.feedback_paused \
                    and self._link is not None:
                fb = self._next_feedback(now)
        if fb is not None:
            self._send(fb)
        if self.on_state is not None:
            try:
                self.on_state(snapshot)
            except Exception:  # noqa: BLE001
                self._hook_failed("on_state")

    def _hook_failed(self, name: str) -> None:
        self._hook_errors += 1
        if self._hook_errors == 1 or self._hook_errors % 500 == 0:
            log.exception("PCU emulator hook %s raised (%d errors so far)", name,
                          self._hook_errors)

    def _next_feedback(self, now: float) -> Optional[bytes]:
        """Build the next feedback frame (advancing ALIVE); None if it is to be dropped."""
        fb = self.protocol.feedback(now, self.vehicle)
        if self.faults.take_drop():
            return None
        return encode_feedback(fb)

    def _write_raw(self, data: bytes) -> bool:
        link = self._link
        if link is None:
            return False
        try:
            n = link.write(data)
        except OSError as e:
            log.warning("PCU emulator write failed (%s)", e)
            return False
        return n == len(data)

