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

Program use (``src`` on ``PYTHONPATH``)::

    python3 -m morai_bridge.emu.pcu --link /tmp/erp42

All threads are internal: one loop thread does every read, write and
state update; the public methods are thread-safe.  See ``docs/erp42.md``.
"""

import argparse
import enum
import errno
import fcntl
import logging
import math
import os
import random
import select
import signal
import sys
import threading
import time
import tty
from collections import deque
from typing import Callable, NamedTuple, Optional

from morai_bridge.emu.vehicle import VehicleModel, VehicleState
from morai_bridge.wire.erp42 import (
    GEAR_BACKWARD, GEAR_NEUTRAL, SPEED_MAX_RAW, STEER_MAX_RAW, STEER_RAW_PER_DEG, STX,
    Command, CommandFramer, Feedback, encode_feedback, next_alive, round_half_away)

__all__ = ["Mode", "PcuState", "PcuEmulator", "main"]

log = logging.getLogger(__name__)

ALIVE_CHECKS = ("strict", "changing", "off")
FEEDBACK_MODES = ("free_running", "reply")


class Mode(str, enum.Enum):
    """Operating modes of the PCU (spec 7.1).  Values compare equal to their names."""

    INIT = "INIT"
    MANUAL = "MANUAL"
    AUTO = "AUTO"
    AUTO_FAIL = "AUTO_FAIL"
    ESTOP = "ESTOP"

    def __str__(self) -> str:
        return self.value


class PcuState(NamedTuple):
    """Consistent snapshot of the emulator, see :attr:`PcuEmulator.state`."""

    mode: Mode
    connected: bool
    """False between :meth:`PcuEmulator.unplug` and :meth:`PcuEmulator.replug`."""
    device_path: Optional[str]
    rc_auto: bool
    rc_estop: bool
    panel_estop: bool
    command: Optional[Command]
    """Last valid command frame, after clamping to the protocol ranges."""
    speed: int
    """Actual speed, km/h x 10 (magnitude), as reported."""
    steer: int
    """Actual steering in *command* convention (deg x 71, negative = left)."""
    brake: int
    gear: int
    enc: int
    alive_tx: int
    """ALIVE of the next feedback frame."""
    frames_ok: int
    frames_rejected: int
    bytes_discarded: int
    alive_errors: int
    """Frames whose ALIVE failed the ``alive_check``."""
    soft_violations: int
    clamped: int
    """Frames with SPEED, STEER or BRAKE outside the protocol range (clamped)."""
    feedback_sent: int
    feedback_dropped: int
    """Frames not written: pty buffer full, ``drop_feedback`` or write errors."""
    auto_fail_events: int
    """Transitions AUTO -> AUTO_FAIL."""
    overruns: int
    """Ticks that started a full period late (skipped cycles)."""


# ---------------------------------------------------------------------------
# Links
# ---------------------------------------------------------------------------

class _PtyLink:
    """A fresh pseudo-terminal pair; we drive the master, clients open the slave path."""

    def __init__(self):
        master, slave = os.openpty()
        try:
            tty.setraw(master)
            tty.setraw(slave)
            flags = fcntl.fcntl(master, fcntl.F_GETFL)
            fcntl.fcntl(master, fcntl.F_SETFL, flags | os.O_NONBLOCK)
            self.device = os.ttyname(slave)
        except Exception:
            os.close(master)
            os.close(slave)
            raise
        # Keeping our own slave fd open means reads on the master never see EIO
        # while no client has the port open.
        self._master, self._slave = master, slave

    def fileno(self) -> int:
        return self._master

    def read(self) -> bytes:
        try:
            return os.read(self._master, 4096)
        except BlockingIOError:
            return b""

    def write(self, data: bytes) -> int:
        """Write what fits; 0 when the buffer is full (nobody reading the slave)."""
        try:
            return os.write(self._master, data)
        except BlockingIOError:
            return 0

    def close(self) -> None:
        for fd in (self._master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass


class _SerialLink:
    """An existing serial device opened with pyserial (e.g. one end of a null-modem cable)."""

    def __init__(self, port: str, baudrate: int):
        import serial  # local import: only needed for real ports

        self._ser = serial.Serial(port, baudrate, bytesize=8, parity="N", stopbits=1,
                                  timeout=0, write_timeout=0.05, xonxoff=False, rtscts=False,
                                  dsrdtr=False, exclusive=True)
        self._timeout_error = serial.SerialTimeoutException
        self.device = port

    def fileno(self) -> int:
        return self._ser.fileno()

    def read(self) -> bytes:
        return self._ser.read(self._ser.in_waiting or 1)

    def write(self, data: bytes) -> int:
        try:
            return self._ser.write(data) or 0
        except self._timeout_error:
            return 0

    def close(self) -> None:
        self._ser.close()


def _wrap_int32(value: int) -> int:
    return ((value + 0x80000000) & 0xFFFFFFFF) - 0x80000000


def _clamp(v, lo, hi):
    return lo if v < lo else hi if v > hi else v


# ---------------------------------------------------------------------------
# Emulator
# ---------------------------------------------------------------------------

class PcuEmulator:
    """ERP-42 PCU emulator (spec section 12).

    Link: by default a new pty pair (``device_path`` is the slave, e.g.
    ``/dev/pts/5``); with ``port`` an existing serial device opened with
    pyserial.  ``link`` is an optional symlink path pointing at the device,
    re-pointed by :meth:`replug` and removed by :meth:`unplug`/:meth:`close`.

    Protocol behaviour: ``init_s`` (INIT duration after :meth:`start`),
    ``alive_timeout_s`` and ``alive_check`` (``strict`` = +1 mod 256,
    ``changing`` = any different value, ``off``), ``auto_fail_latch`` (leave
    AUTO_FAIL only through an RC Manual -> Auto cycle), ``feedback_mode``
    (``free_running`` every ``period_s`` or ``reply`` = one frame per valid
    command), ``rc_auto`` / ``rc_powered`` (simulated remote controller at
    start-up), ``brake_min`` / ``brake_max``, ``feedback_steer_sign``,
    encoder (``encoder_enabled``, ``encoder_ppr``, ``encoder_sign``,
    ``wheel_radius_m``, ``encoder_start``).

    Vehicle: ``vehicle`` is a :class:`VehicleModel` (rate limits); pass a
    fast one in tests.  Sharing the vehicle with another emulator:

    * ``on_state(VehicleState)`` is called from the loop thread after every
      tick (keep it short; exceptions are logged and counted, never fatal);
    * ``speed_source()`` -> signed m/s or ``None``: if given, its value
      replaces the speed model (the other emulator owns the dynamics), and
      SPEED and ENC are derived from it.

    Fault injection: :attr:`noise_bytes`, :attr:`false_headers`,
    :attr:`split_writes`, :attr:`feedback_paused`, :meth:`drop_feedback`,
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
            raise ValueError("alive_check must be one of %s, got %r" % (ALIVE_CHECKS, alive_check))
        if feedback_mode not in FEEDBACK_MODES:
            raise ValueError("feedback_mode must be one of %s, got %r"
                             % (FEEDBACK_MODES, feedback_mode))
        if not 1 <= brake_min < brake_max <= 255:
            raise ValueError("need 1 <= brake_min < brake_max <= 255, got %r, %r"
                             % (brake_min, brake_max))
        if feedback_steer_sign not in (-1, 1) or encoder_sign not in (-1, 1):
            raise ValueError("feedback_steer_sign and encoder_sign must be -1 or +1")
        for name, v in (("period_s", period_s), ("alive_timeout_s", alive_timeout_s),
                        ("encoder_ppr", encoder_ppr), ("wheel_radius_m", wheel_radius_m)):
            if not (math.isfinite(v) and v > 0):
                raise ValueError("%s must be a positive number, got %r" % (name, v))
        if not (math.isfinite(init_s) and init_s >= 0):
            raise ValueError("init_s must be >= 0, got %r" % (init_s,))

        self.port = port
        self.link_path = os.path.abspath(link) if link else None
        self.baudrate = baudrate
        self.init_s = float(init_s)
        self.alive_timeout_s = float(alive_timeout_s)
        self.alive_check = alive_check
        self.auto_fail_latch = bool(auto_fail_latch)
        self.feedback_mode = feedback_mode
        self.period_s = float(period_s)
        self.brake_min = brake_min
        self.brake_max = brake_max
        self.feedback_steer_sign = feedback_steer_sign
        self.encoder_enabled = bool(encoder_enabled)
        self.encoder_ppr = float(encoder_ppr)
        self.encoder_sign = encoder_sign
        self.wheel_radius_m = float(wheel_radius_m)
        self.encoder_start = int(encoder_start)
        self.vehicle = vehicle if vehicle is not None else VehicleModel()
        self.on_state = on_state
        self.speed_source = speed_source

        #: Random bytes written before every feedback frame (0 = off).
        self.noise_bytes = 0
        #: Write a false header (``STX`` + 2 bytes, always rejected) before every frame.
        self.false_headers = False
        #: Write each feedback frame in this many pieces (<= 1 = one write).
        self.split_writes = 0
        #: Pause between the pieces of a split write.
        self.split_gap_s = 0.002
        #: While true no feedback is written and ALIVE does not advance (silent PCU).
        self.feedback_paused = False

        self._rng = random.Random(seed)
        self._lock = threading.RLock()
        self._requests: deque = deque()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.framer = CommandFramer(brake_min=brake_min, brake_max=brake_max, check_alive=False)

        # Simulated inputs.
        self._rc_auto = bool(rc_auto)
        self._rc_estop = False
        self._panel_estop = False
        self._rc_drive = Command(aorm=0, estop=0, gear=GEAR_NEUTRAL, speed=0, steer=0,
                                 brake=brake_min, alive=0)
        # Platform powered with the RC off: AUTO_FAIL until an RC Manual -> Auto cycle.
        self._latched_fail = not rc_powered

        # Command and watchdog state.
        self._cmd: Optional[Command] = None
        self._cmd_t: Optional[float] = None
        self._ref_alive: Optional[int] = None
        self._last_good_t: Optional[float] = None

        # Outputs.
        self._t0 = time.monotonic()
        self._mode = Mode.INIT
        self._gear = GEAR_NEUTRAL
        self._brake_raw = brake_max
        self._alive_tx = 0
        self._drop_next = 0
        self._last_tick: Optional[float] = None

        self._alive_errors = 0
        self._clamped = 0
        self._sent = 0
        self._dropped = 0
        self._auto_fail_events = 0
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
            self._t0 = time.monotonic()
            self._last_tick = None
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="pcu-emulator", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop the thread, close the link and remove the symlink.  Idempotent."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)
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
            mode = self._update_mode(time.monotonic())
            fr = self.framer
            return PcuState(
                mode=mode, connected=self._link is not None, device_path=self.device_path,
                rc_auto=self._rc_auto, rc_estop=self._rc_estop, panel_estop=self._panel_estop,
                command=self._cmd, speed=self._speed_raw(), steer=self._steer_raw(),
                brake=self._brake_raw, gear=self._gear, enc=self._enc_raw(),
                alive_tx=self._alive_tx, frames_ok=fr.frames_ok,
                frames_rejected=fr.candidates_rejected, bytes_discarded=fr.bytes_discarded,
                alive_errors=self._alive_errors, soft_violations=fr.soft_violations,
                clamped=self._clamped, feedback_sent=self._sent,
                feedback_dropped=self._dropped, auto_fail_events=self._auto_fail_events,
                overruns=self._overruns)

    # -- simulated inputs ----------------------------------------------------

    def set_rc_auto(self, auto: bool) -> None:
        """RC Auto/Manual switch.  A Manual -> Auto change clears a latched AUTO_FAIL."""
        with self._lock:
            if auto and not self._rc_auto:
                self._latched_fail = False
            self._rc_auto = bool(auto)

    def set_rc_estop(self, on: bool) -> None:
        """RC E-stop switch."""
        with self._lock:
            self._rc_estop = bool(on)

    def set_panel_estop(self, on: bool) -> None:
        """E-stop button on the platform's switch panel."""
        with self._lock:
            self._panel_estop = bool(on)

    def set_rc_drive(self, speed: int = 0, steer: int = 0, gear: int = GEAR_NEUTRAL,
                     brake: Optional[int] = None) -> None:
        """What the RC commands in MANUAL mode (raw units like a command frame)."""
        with self._lock:
            self._rc_drive = Command(0, 0, gear, _clamp(speed, 0, SPEED_MAX_RAW),
                                     _clamp(steer, -STEER_MAX_RAW, STEER_MAX_RAW),
                                     self.brake_min if brake is None
                                     else _clamp(brake, self.brake_min, self.brake_max), 0)

    # -- fault injection -----------------------------------------------------

    def drop_feedback(self, count: int = 1) -> None:
        """Lose the next ``count`` feedback frames: ALIVE advances but nothing is written."""
        with self._lock:
            self._drop_next += max(0, int(count))

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

    # -- internals: link -------------------------------------------------------

    def _open_link(self) -> None:
        if self._link is not None:
            return
        link = _SerialLink(self.port, self.baudrate) if self.port else _PtyLink()
        with self._lock:
            self._link = link
            self.framer.reset()
            self._ref_alive = None
        if self.link_path:
            tmp = "%s.%d.tmp" % (self.link_path, os.getpid())
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            os.symlink(link.device, tmp)
            os.replace(tmp, self.link_path)  # atomic re-point
        log.info("PCU emulator link open: %s%s", link.device,
                 " (link %s)" % self.link_path if self.link_path else "")

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
        if t is None or not t.is_alive() or t is threading.current_thread():
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

    def _run(self) -> None:
        period = self.period_s
        deadline = time.monotonic() + period
        while not self._stop.is_set():
            while self._requests:
                self._requests.popleft()()
            link = self._link
            timeout = max(0.0, deadline - time.monotonic())
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
            if now >= deadline:
                self._tick(now)
                deadline += period
                if deadline <= now:
                    # Late by at least one period: skip whole cycles, stay on the grid.
                    missed = int((now - deadline) // period) + 1
                    deadline += missed * period
                    with self._lock:
                        self._overruns += missed
        while self._requests:  # do not leave callers waiting
            self._requests.popleft()()

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
        # ALIVE watchdog.
        gap = self._cmd_t is None or now - self._cmd_t > self.alive_timeout_s
        if gap or self._ref_alive is None:
            correct = self.alive_check == "off"  # first frame after a gap: reference only
        elif self.alive_check == "strict":
            correct = cmd.alive == next_alive(self._ref_alive)
        elif self.alive_check == "changing":
            correct = cmd.alive != self._ref_alive
        else:
            correct = True
        if correct:
            self._last_good_t = now
        elif not gap and self._ref_alive is not None:
            self._alive_errors += 1
        self._ref_alive = cmd.alive
        # Clamp to the protocol ranges.
        speed = _clamp(cmd.speed, 0, SPEED_MAX_RAW)
        steer = _clamp(cmd.steer, -STEER_MAX_RAW, STEER_MAX_RAW)
        brake = _clamp(cmd.brake, self.brake_min, self.brake_max)
        if (speed, steer, brake) != (cmd.speed, cmd.steer, cmd.brake):
            self._clamped += 1
            cmd = cmd._replace(speed=speed, steer=steer, brake=brake)
        self._cmd = cmd
        self._cmd_t = now

    def _evaluate_mode(self, now: float) -> Mode:
        """Mode at ``now`` from inputs and watchdog (no side effects)."""
        if now - self._t0 < self.init_s:
            return Mode.INIT
        fresh = self._cmd_t is not None and now - self._cmd_t <= self.alive_timeout_s
        if self._panel_estop or self._rc_estop or (fresh and self._cmd.estop):
            return Mode.ESTOP
        if not self._rc_auto:
            return Mode.MANUAL
        if self._latched_fail:
            return Mode.AUTO_FAIL
        alive_ok = self._last_good_t is not None and \
            now - self._last_good_t <= self.alive_timeout_s
        if alive_ok and fresh and self._cmd.aorm == 1:
            return Mode.AUTO
        return Mode.AUTO_FAIL

    def _update_mode(self, now: float) -> Mode:
        mode = self._evaluate_mode(now)
        if self._mode == Mode.AUTO and mode == Mode.AUTO_FAIL:
            self._auto_fail_events += 1
            if self.auto_fail_latch:
                self._latched_fail = True
        if mode != self._mode:
            log.info("PCU mode %s -> %s", self._mode, mode)
        self._mode = mode
        return mode

    def _tick(self, now: float) -> None:
        with self._lock:
            dt = 0.0 if self._last_tick is None else min(now - self._last_tick, 0.2)
            self._last_tick = now
            mode = self._update_mode(now)
            if mode == Mode.AUTO:
                src = self._cmd
            elif mode == Mode.MANUAL:
                src = self._rc_drive
            else:
                src = None
            if src is not None:
                self._gear = src.gear
                self._brake_raw = src.brake
                kmh = src.speed / 10.0
                if src.gear == GEAR_BACKWARD:
                    kmh = -kmh
                elif src.gear == GEAR_NEUTRAL:
                    kmh = 0.0
                target_v = kmh / 3.6
                target_steer = math.radians(-src.steer / float(STEER_RAW_PER_DEG))
            else:  # INIT, E-STOP, AUTO_FAIL: centred, stopped, full brake; gear held
                self._brake_raw = self.brake_max
                target_v, target_steer = 0.0, 0.0
            brake_frac = (self._brake_raw - self.brake_min) / float(self.brake_max - self.brake_min)
            external = None
            if self.speed_source is not None:
                try:
                    external = self.speed_source()
                except Exception:  # noqa: BLE001 - a hook must not stop the PCU
                    self._hook_failed("speed_source")
            self.vehicle.step(dt, target_v, target_steer, brake_frac, external)
            snapshot = self.vehicle.snapshot(self._gear, mode.value)
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

    # -- internals: feedback -------------------------------------------------

    def _speed_raw(self) -> int:
        return min(0xFFFF, round_half_away(abs(self.vehicle.speed_mps) * 36.0))

    def _steer_raw(self) -> int:
        raw = round_half_away(-math.degrees(self.vehicle.steer_rad) * STEER_RAW_PER_DEG)
        return _clamp(raw, -0x7FFF, 0x7FFF)

    def _enc_raw(self) -> int:
        if not self.encoder_enabled:
            return 0
        turns = self.vehicle.distance_m / (2.0 * math.pi * self.wheel_radius_m)
        counts = self.encoder_start + self.encoder_sign * math.floor(turns * self.encoder_ppr)
        return _wrap_int32(int(counts))

    def _next_feedback(self, now: float) -> Optional[bytes]:
        """Build the next feedback frame (advancing ALIVE); None if it is to be dropped."""
        mode = self._update_mode(now)
        fb = Feedback(
            aorm=1 if mode == Mode.AUTO else 0,
            estop=1 if mode in (Mode.ESTOP, Mode.AUTO_FAIL) else 0,
            gear=self._gear, speed=self._speed_raw(),
            steer=self.feedback_steer_sign * self._steer_raw(),
            brake=self._brake_raw, enc=self._enc_raw(), alive=self._alive_tx)
        self._alive_tx = next_alive(self._alive_tx)
        if self._drop_next:
            self._drop_next -= 1
            self._dropped += 1
            return None
        return encode_feedback(fb)

    def _send(self, frame: bytes) -> None:
        """Write one feedback frame with the configured faults (loop thread only)."""
        if self._link is None:
            return
        prefix = b""
        if self.noise_bytes > 0:
            prefix += self._rng.randbytes(self.noise_bytes)
        if self.false_headers:
            # GEAR position of this candidate holds the real frame's "S": always rejected.
            prefix += STX + bytes((1, 0))
        if prefix:
            self._write_raw(prefix)
        pieces = max(1, int(self.split_writes))
        if pieces == 1:
            ok = self._write_raw(frame)
        else:
            size = -(-len(frame) // pieces)
            ok = True
            for i in range(0, len(frame), size):
                if i:
                    time.sleep(self.split_gap_s)
                ok = self._write_raw(frame[i:i + size]) and ok
        with self._lock:
            if ok:
                self._sent += 1
            else:
                self._dropped += 1

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


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python3 -m morai_bridge.emu.pcu",
        description="ERP-42 PCU emulator: answers the ERP-42 serial protocol on a new pty "
                    "(default) or an existing serial port, until SIGINT/SIGTERM.")
    p.add_argument("--port", help="use this serial device instead of creating a pty")
    p.add_argument("--link", help="create a symlink at this path pointing to the device")
    p.add_argument("--init-s", type=float, default=3.0, help="INIT duration (default 3.0)")
    p.add_argument("--alive-timeout-s", type=float, default=1.0,
                   help="watchdog: AUTO_FAIL after this long without a correct ALIVE")
    p.add_argument("--alive-check", choices=ALIVE_CHECKS, default="strict")
    p.add_argument("--auto-fail-latch", action="store_true",
                   help="leave AUTO_FAIL only via an RC Manual->Auto cycle")
    p.add_argument("--feedback-mode", choices=FEEDBACK_MODES, default="free_running")
    p.add_argument("--period-s", type=float, default=0.02, help="feedback period (0.02)")
    p.add_argument("--rc-manual", action="store_true", help="RC switch in Manual at start")
    p.add_argument("--rc-off", action="store_true", help="platform powered with the RC off")
    p.add_argument("--brake-min", type=int, default=1)
    p.add_argument("--brake-max", type=int, default=150)
    p.add_argument("--feedback-steer-sign", type=int, choices=(-1, 1), default=-1)
    p.add_argument("--no-encoder", action="store_true",
                   help="ENC always 0 (like the MORAI simulator)")
    p.add_argument("--encoder-ppr", type=float, default=100.0)
    p.add_argument("--encoder-sign", type=int, choices=(-1, 1), default=1)
    p.add_argument("--wheel-radius-m", type=float, default=0.27)
    p.add_argument("--accel-mps2", type=float, default=1.5)
    p.add_argument("--steer-rate-rad-s", type=float, default=0.8)
    p.add_argument("--noise-bytes", type=int, default=0,
                   help="random bytes before every feedback frame (fault injection)")
    p.add_argument("--false-headers", action="store_true",
                   help="a false STX header before every feedback frame")
    p.add_argument("--split-writes", type=int, default=0,
                   help="write each frame in this many pieces")
    p.add_argument("--seed", type=int, help="seed of the noise generator")
    p.add_argument("--status-s", type=float, default=1.0,
                   help="print a status line every this many seconds (0 = never)")
    p.add_argument("-v", "--verbose", action="store_true", help="log mode changes")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(message)s")
    try:
        pcu = PcuEmulator(
            args.port, link=args.link, init_s=args.init_s,
            alive_timeout_s=args.alive_timeout_s, alive_check=args.alive_check,
            auto_fail_latch=args.auto_fail_latch, feedback_mode=args.feedback_mode,
            period_s=args.period_s, rc_auto=not args.rc_manual, rc_powered=not args.rc_off,
            brake_min=args.brake_min, brake_max=args.brake_max,
            feedback_steer_sign=args.feedback_steer_sign,
            encoder_enabled=not args.no_encoder, encoder_ppr=args.encoder_ppr,
            encoder_sign=args.encoder_sign, wheel_radius_m=args.wheel_radius_m,
            vehicle=VehicleModel(accel_mps2=args.accel_mps2,
                                 steer_rate_rad_s=args.steer_rate_rad_s),
            seed=args.seed)
    except (OSError, ValueError) as e:
        print("pcu emulator: %s" % e, file=sys.stderr)
        return 2
    pcu.noise_bytes = args.noise_bytes
    pcu.false_headers = args.false_headers
    pcu.split_writes = args.split_writes

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with pcu:
        print("PCU emulator ready: device=%s%s" % (
            pcu.device_path, " link=%s" % pcu.link_path if pcu.link_path else ""), flush=True)
        while not stop.wait(args.status_s if args.status_s > 0 else 3600.0):
            if args.status_s > 0:
                s = pcu.state
                print("mode=%s speed=%d steer=%d brake=%d gear=%d enc=%d rx_ok=%d "
                      "rx_rejected=%d discarded=%d alive_errors=%d tx=%d" % (
                          s.mode, s.speed, s.steer, s.brake, s.gear, s.enc, s.frames_ok,
                          s.frames_rejected, s.bytes_discarded, s.alive_errors,
                          s.feedback_sent), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
