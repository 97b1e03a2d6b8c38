"""The ERP-42 PCU's protocol state machine: modes, ALIVE watchdog, clamping, feedback contents.

:class:`PcuProtocol` decides, from the simulated inputs (RC switch, E-stops),
the command frames received and the time, which operating mode the PCU is in
(spec 7.1: INIT, MANUAL, AUTO, AUTO_FAIL, E-STOP), what the vehicle is asked to
do, and what the next feedback frame says.  It does no I/O and has no clock or
lock of its own: every method takes ``now`` (``time.monotonic()`` seconds) and
the owner (:class:`~morai_bridge.emu.pcu.PcuEmulator`) serialises the calls.
Units: ERP-42 raw values (speed km/h x 10, steer deg x 71, brake 1..200).
No ROS.
"""

import enum
import logging
import math
from typing import NamedTuple, Optional

from morai_bridge.wire.erp42 import (
    GEAR_BACKWARD, GEAR_NEUTRAL, SPEED_MAX_RAW, STEER_MAX_RAW, STEER_RAW_PER_DEG, Command,
    Feedback)
from morai_bridge.wire.erp42.convert import (
    next_alive, round_half_away)
from morai_bridge.wire.units import MPS_TO_KMH

__all__ = ["Mode", "PcuState", "PcuProtocol", "ALIVE_CHECKS", "FEEDBACK_MODES", "clamp"]

log = logging.getLogger("morai_bridge.emu.pcu")

ALIVE_CHECKS = ("strict", "changing", "off")
FEEDBACK_MODES = ("free_running", "reply")
SPEED_RAW_PER_KMH = 10      # SPEED field: km/h x 10


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


def clamp(v, lo, hi):
    return lo if v < lo else hi if v > hi else v


def _wrap_int32(value: int) -> int:
    return ((value + 0x80000000) & 0xFFFFFFFF) - 0x80000000


class PcuProtocol:
    """Modes, watchdog and feedback of one PCU (options as :class:`PcuEmulator`'s, checked there).

    State read by the owner: ``mode``, ``gear``, ``brake_raw``, ``alive_tx``,
    ``cmd``, the simulated inputs (``rc_auto``, ``rc_estop``, ``panel_estop``)
    and the counters ``alive_errors``, ``clamped``, ``auto_fail_events``.
    """

    def __init__(self, *, init_s: float, alive_timeout_s: float, alive_check: str,
                 auto_fail_latch: bool, rc_auto: bool, rc_powered: bool, brake_min: int,
                 brake_max: int, feedback_steer_sign: int, encoder_enabled: bool,
                 encoder_ppr: float, encoder_sign: int, wheel_radius_m: float,
                 encoder_start: int, now: float):
        self.init_s = float(init_s)
        self.alive_timeout_s = float(alive_timeout_s)
        self.alive_check = alive_check
        self.auto_fail_latch = bool(auto_fail_latch)
        self.brake_min = brake_min
        self.brake_max = brake_max
        self.feedback_steer_sign = feedback_steer_sign
        self.encoder_enabled = bool(encoder_enabled)
        self.encoder_ppr = float(encoder_ppr)
        self.encoder_sign = encoder_sign
        self.wheel_radius_m = float(wheel_radius_m)
        self.encoder_start = int(encoder_start)

        # Simulated inputs.
        self.rc_auto = bool(rc_auto)
        self.rc_estop = False
        self.panel_estop = False
        self.rc_drive = Command(aorm=0, estop=0, gear=GEAR_NEUTRAL, speed=0, steer=0,
                                brake=brake_min, alive=0)
        # Platform powered with the RC off: AUTO_FAIL until an RC Manual -> Auto cycle.
        self.latched_fail = not rc_powered

        # Command and watchdog state.
        self.cmd: Optional[Command] = None
        self.cmd_t: Optional[float] = None
        self.ref_alive: Optional[int] = None
        self.last_good_t: Optional[float] = None

        # Outputs.
        self.t0 = now
        self.mode = Mode.INIT
        self.gear = GEAR_NEUTRAL
        self.brake_raw = brake_max
        self.alive_tx = 0

        self.alive_errors = 0
        self.clamped = 0
        self.auto_fail_events = 0

    # -- simulated inputs ----------------------------------------------------

    def set_rc_auto(self, auto: bool) -> None:
        if auto and not self.rc_auto:
            self.latched_fail = False        # a Manual -> Auto change clears the latch
        self.rc_auto = bool(auto)

    def set_rc_drive(self, speed: int, steer: int, gear: int, brake: Optional[int]) -> None:
        self.rc_drive = Command(0, 0, gear, clamp(speed, 0, SPEED_MAX_RAW),
                                clamp(steer, -STEER_MAX_RAW, STEER_MAX_RAW),
                                self.brake_min if brake is None
                                else clamp(brake, self.brake_min, self.brake_max), 0)

    # -- commands and watchdog -------------------------------------------------

    def restart(self, now: float) -> None:
        """INIT starts again at ``now`` (the emulator's start())."""
        self.t0 = now

    def reset_alive(self) -> None:
        """Forget the ALIVE reference (new link): the next frame only sets it."""
        self.ref_alive = None

    def accept(self, cmd: Command, now: float) -> None:
        """A command frame arrived: ALIVE watchdog, clamping to the protocol ranges."""
        gap = self.cmd_t is None or now - self.cmd_t > self.alive_timeout_s
        if gap or self.ref_alive is None:
            correct = self.alive_check == "off"  # first frame after a gap: reference only
        elif self.alive_check == "strict":
            correct = cmd.alive == next_alive(self.ref_alive)
        elif self.alive_check == "changing":
            correct = cmd.alive != self.ref_alive
        else:
            correct = True
        if correct:
            self.last_good_t = now
        elif not gap and self.ref_alive is not None:
            self.alive_errors += 1
        self.ref_alive = cmd.alive
        speed = clamp(cmd.speed, 0, SPEED_MAX_RAW)
        steer = clamp(cmd.steer, -STEER_MAX_RAW, STEER_MAX_RAW)
        brake = clamp(cmd.brake, self.brake_min, self.brake_max)
        if (speed, steer, brake) != (cmd.speed, cmd.steer, cmd.brake):
            self.clamped += 1
            cmd = cmd._replace(speed=speed, steer=steer, brake=brake)
        self.cmd = cmd
        self.cmd_t = now

    # -- modes -------------------------------------------------------------------

    def evaluate_mode(self, now: float) -> Mode:
        """Mode at ``now`` from inputs and watchdog (no side effects)."""
        if now - self.t0 < self.init_s:
            return Mode.INIT
        fresh = self.cmd_t is not None and now - self.cmd_t <= self.alive_timeout_s
        if self.panel_estop or self.rc_estop or (fresh and self.cmd.estop):
            return Mode.ESTOP
        if not self.rc_auto:
            return Mode.MANUAL
        if self.latched_fail:
            return Mode.AUTO_FAIL
        alive_ok = self.last_good_t is not None and \
            now - self.last_good_t <= self.alive_timeout_s
        if alive_ok and fresh and self.cmd.aorm == 1:
            return Mode.AUTO
        return Mode.AUTO_FAIL

    def update_mode(self, now: float) -> Mode:
        """Evaluate and enter the mode at ``now`` (counts AUTO -> AUTO_FAIL, latches)."""
        mode = self.evaluate_mode(now)
        if self.mode == Mode.AUTO and mode == Mode.AUTO_FAIL:
            self.auto_fail_events += 1
            if self.auto_fail_latch:
                self.latched_fail = True
        if mode != self.mode:
            log.info("PCU mode %s -> %s", self.mode, mode)
        self.mode = mode
        return mode

    def targets(self, now: float):
        """(mode, target speed m/s, target wheel angle rad + left, brake 0..1) at ``now``.

        AUTO follows the last command, MANUAL the RC; INIT, E-STOP and AUTO_FAIL
        stop: centred, full brake, gear held.
        """
        mode = self.update_mode(now)
        if mode == Mode.AUTO:
            src = self.cmd
        elif mode == Mode.MANUAL:
            src = self.rc_drive
        else:
            src = None
        if src is not None:
            self.gear = src.gear
            self.brake_raw = src.brake
            kmh = src.speed / float(SPEED_RAW_PER_KMH)
            if src.gear == GEAR_BACKWARD:
                kmh = -kmh
            elif src.gear == GEAR_NEUTRAL:
                kmh = 0.0
            target_v = kmh / MPS_TO_KMH
            target_steer = math.radians(-src.steer / float(STEER_RAW_PER_DEG))
        else:
            self.brake_raw = self.brake_max
            target_v, target_steer = 0.0, 0.0
        brake_frac = (self.brake_raw - self.brake_min) / float(self.brake_max - self.brake_min)
        return mode, target_v, target_steer, brake_frac

    # -- feedback ----------------------------------------------------------------

    def speed_raw(self, vehicle) -> int:
        return min(0xFFFF, round_half_away(abs(vehicle.speed_mps) * _SPEED_RAW_PER_MPS))

    def steer_raw(self, vehicle) -> int:
        raw = round_half_away(-math.degrees(vehicle.steer_rad) * STEER_RAW_PER_DEG)
        return clamp(raw, -0x7FFF, 0x7FFF)

    def enc_raw(self, vehicle) -> int:
        if not self.encoder_enabled:
            return 0
        turns = vehicle.distance_m / (2.0 * math.pi * self.wheel_radius_m)
        counts = self.encoder_start + self.encoder_sign * math.floor(turns * self.encoder_ppr)
        return _wrap_int32(int(counts))

    def feedback(self, now: float, vehicle) -> Feedback:
        """The next feedback frame's contents; advances ALIVE."""
        mode = self.update_mode(now)
        fb = Feedback(
            aorm=1 if mode == Mode.AUTO else 0,
            estop=1 if mode in (Mode.ESTOP, Mode.AUTO_FAIL) else 0,
            gear=self.gear, speed=self.speed_raw(vehicle),
            steer=self.feedback_steer_sign * self.steer_raw(vehicle),
            brake=self.brake_raw, enc=self.enc_raw(vehicle), alive=self.alive_tx)
        self.alive_tx = next_alive(self.alive_tx)
        return fb


_SPEED_RAW_PER_MPS = MPS_TO_KMH * SPEED_RAW_PER_KMH     # 36.0 exactly
