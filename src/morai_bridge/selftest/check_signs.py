"""morai_check_signs: drive the ego a few metres with a small steer and measure the wire's signs.

Speaks UDP to the simulator directly (:mod:`morai_bridge.wire.udp`, :mod:`morai_bridge.link.transport`),
so it measures the wire itself, whatever a bridge is set to; no ROS.  docs/check_signs.md is the
user's guide.  A run:

1. listens for Ego Vehicle Status (and the IMU with ``--imu-port``); refuses to start (exit 2)
   when none arrives within ``--status-timeout``, when the ego moves faster than
   ``--max-start-speed``, when the status says the simulator is in keyboard mode (it ignores
   network commands then), or when nobody confirms on a terminal (``--yes`` skips the question);
2. commands velocity control at ``--speed`` km/h, gear D: straight until the speed is reached
   (at most ``--accel-time`` s), then wire steer ``+--steer`` for ``--phase-time`` s, then
   ``-steer`` for as long (``--one-way`` skips it).  Times are the status packets' clock;
3. aborts (exit 3) when the speed exceeds ``--abort-speed``, the status stops, the simulator
   switches to keyboard mode, its clock stops, or the run exceeds ``--max-run-time`` s of wall
   time;
4. ALWAYS ends with a stop command (pedal mode, brake 1, velocity 0, steer 0) sent several
   times and repeated until the status shows the ego stopped (at most ``STOP_TIME``, 3 s):
   after a run, a refusal, an error or Ctrl-C;
5. judges the samples (:func:`.signs.judge`), prints the wire signs, compares them with the
   ``--sim-version`` profile, prints the bridge parameters and, with ``--write FILE``, writes a
   version profile ``udp_bridge.launch sim_version:=FILE`` loads;
6. measures the full-scale steering angle from the same phases (:func:`.signs.measure_gain`; with
   ``--gain`` two more phases at a second steer magnitude show whether the gain is linear), prints
   it against the ``--vehicle-profile``'s maximum and, with ``--write-vehicle FILE``, writes that
   vehicle profile with the measured maximum (``vehicle_profile:=FILE``).

Modules, by job: :mod:`.check_options` the options (a Param table and :class:`~.check_options.Options`,
one declaration for the command line and the run), :mod:`.check_link` the sockets, commands and stop,
this module the run (:class:`SignCheck`), :mod:`.check_report` what it prints and writes,
:mod:`.check_signs_cli` the command line.

Exit status: 0 measured, 1 inconclusive (nothing written), 2 refused to start / usage / I/O error,
3 aborted during the run, 130 interrupted (Ctrl-C).  In every case the stop command was sent.
"""
import math
import sys
import time
import traceback
from typing import NamedTuple, Optional

from morai_bridge.wire.enums import CtrlMode, Gear

from . import signs
from .check_link import STOP_REPEATS, STOP_TIME, STOPPED_KMH, CheckLink, drive_command, stop_command
from .check_options import (EXIT_ABORTED, EXIT_INCONCLUSIVE, EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED,
                            MAX_TEST_SPEED, PROG, RUN_TIME_MARGIN, Options)
from .check_report import Report, write_file
from .signs import Phase, Sample, Thresholds

__all__ = ["Options", "SignCheck", "RunResult", "stop_command", "drive_command", "steer_plan", "planned_time",
           "write_file", "PROG", "MAX_TEST_SPEED", "STOP_REPEATS", "STOP_TIME", "STOPPED_KMH", "EXIT_OK",
           "EXIT_INCONCLUSIVE", "EXIT_REFUSED", "EXIT_ABORTED", "EXIT_INTERRUPTED"]

_AUTO, _KEYBOARD = int(CtrlMode.AUTO), int(CtrlMode.KEYBOARD)
_GEAR_NAMES = {int(g): g.name for g in Gear}


class RunResult(NamedTuple):
    exit_status: int
    verdict: Optional[signs.Verdict]   # None unless the drive completed
    comparison: Optional[signs.Comparison]
    reason: str                     # why it refused / aborted ('' otherwise)
    stop_sent: int                  # stop commands sent
    stopped: Optional[bool]         # the status showed the ego stopped afterwards (None: no status)
    written: str                    # the profile file written ('' if none)
    gain: Optional[signs.Gain] = None   # the full-scale steering angle measured (None unless driven)
    written_vehicle: str = ""       # the vehicle profile file written ('' if none)


class _Refused(Exception):
    pass


class _Aborted(Exception):
    pass


class SignCheck:
    """One self-test run with ``options`` (:class:`~.check_options.Options`) against the simulator
    ``version`` (the SimVersion that ``options.sim_version`` names: default ports, command size, the
    signs compared with); ``vehicle``: the VehicleProfile the full-scale angle is compared with (None:
    none); ``thresholds``: the verdict's (:class:`.signs.Thresholds`); ``stop_time``: how long the stop
    waits for the ego to stop (s).  The sockets are bound by the constructor (read :attr:`ports`); call
    :meth:`run` once, then :meth:`close` (or use ``with``)."""

    def __init__(self, options: Options, version, vehicle=None, out=None, confirm=None, clock=time.monotonic,
                 thresholds: Thresholds = Thresholds(), stop_time=STOP_TIME):
        o = options
        self.o = o
        self.version = version
        self.vehicle = vehicle
        self.thresholds = thresholds
        self.stop_time = stop_time          # the longest wait for the ego to stop, s (wall)
        self.out = out or sys.stdout
        self.confirm = confirm              # confirm(text) -> bool; None: no terminal
        self.monotonic = clock
        self.abort_speed = o.abort_speed or 2.0 * o.speed
        self.max_run_time = o.max_run_time or planned_time(o.accel_time, o.phase_time, o.one_way,
                                                           o.gain) + RUN_TIME_MARGIN
        self.link = CheckLink(o, version, self.say, clock)
        self._clock_mode = None     # 'packet' or 'receive'

    @property
    def ports(self):
        """Bound port per stream ('status', 'imu')."""
        return self.link.ports

    @property
    def sim_addr(self):
        """Where the commands go: (ip, port)."""
        return self.link.sim_addr

    @sim_addr.setter
    def sim_addr(self, addr):
        self.link.sim_addr = addr

    @property
    def stop_sent(self):
        return self.link.stop_sent

    # ------------------------------------------------------------------ plumbing
    def close(self):
        self.link.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def say(self, text=""):
        self.out.write(text + "\n")
        try:
            self.out.flush()
        except (AttributeError, ValueError):
            pass

    def _clock(self, msg, t_rx):
        """The status clock: the packet's time when it carries one (sec/nsec), else receive time."""
        if self._clock_mode is None:
            self._clock_mode = "packet" if getattr(msg, "sec", None) is not None else "receive"
        if self._clock_mode == "packet" and msg.sec is not None:
            return msg.sec + msg.nsec * 1e-9
        return t_rx

    def _sample(self, msg, t):
        return Sample(t, msg.yaw, msg.signed_vel, msg.steer, msg.ang_vel_z, msg.wheelbase or 0.0)

    def describe(self, msg):
        mode = {_AUTO: "automatic", _KEYBOARD: "keyboard"}.get(msg.ctrl_mode, "unknown")
        return ("ctrl_mode %d (%s), gear %s, speed %.2f km/h, heading %.1f deg, steer %.2f deg, "
                "position (%.1f, %.1f)" % (msg.ctrl_mode, mode, _GEAR_NAMES.get(msg.gear, msg.gear),
                                           msg.signed_vel, msg.yaw, msg.steer, msg.pos_x, msg.pos_y))

    # ------------------------------------------------------------------ the run
    def run(self) -> RunResult:
        """Check, drive, stop, judge (see the module docstring)."""
        reason, status = "", None
        phases = None
        try:
            try:
                phases = self._checked_drive()
                status = None
            except _Refused as e:
                reason, status = str(e), EXIT_REFUSED
            except _Aborted as e:
                reason, status = str(e), EXIT_ABORTED
            except KeyboardInterrupt:
                reason, status = "interrupted (Ctrl-C)", EXIT_INTERRUPTED
            except Exception as e:    # noqa: BLE001 - stop first, then report the error
                reason, status = f"error: {type(e).__name__}: {e}", EXIT_ABORTED
                sys.stderr.write(traceback.format_exc())
        finally:
            stopped = self.stop()
        if status is not None:
            word = {EXIT_REFUSED: "refused to start", EXIT_ABORTED: "aborted",
                    EXIT_INTERRUPTED: "interrupted"}[status]
            self.say(f"{PROG}: {word}: {reason}")
            self._say_stop(stopped)
            return RunResult(status, None, None, reason, self.stop_sent, stopped, "")
        self._say_stop(stopped)
        verdict = signs.judge(phases, self.thresholds)
        vehicle = self.vehicle
        gain = signs.measure_gain(phases, vehicle.wheelbase_m if vehicle is not None else 0.0, self.thresholds)
        report = Report(self.say, self.o, self.version, vehicle, self.sim_addr)
        outcome = report.signs(verdict)
        written = report.gain(gain)
        status, reason = outcome.exit_status, outcome.reason
        if status == EXIT_OK and self.o.write_vehicle and not written:
            status, reason = EXIT_REFUSED, f"cannot write {self.o.write_vehicle}"
        return RunResult(status, verdict, outcome.comparison, reason, self.stop_sent, stopped, outcome.written,
                         gain, written)

    def _say_stop(self, stopped):
        where = "%s:%d" % self.sim_addr
        if stopped is None:
            self.say("stop command sent %d times to %s (no status: cannot see whether the ego stopped)"
                     % (self.stop_sent, where))
        elif stopped:
            self.say("stop command sent %d times to %s; the ego is stopped" % (self.stop_sent, where))
        else:
            self.say("WARNING: stop command sent %d times to %s but the ego still moves at %.1f km/h: "
                     "stop it in the simulator" % (self.stop_sent, where, self.link.last.signed_vel))

    def _check_start(self, first):
        o = self.o
        if first is None:
            more = ""
            if self.link.counts["bad"] or self.link.counts["other"]:
                more = (" (%d datagrams arrived there, none an Ego Vehicle Status; last: %s)"
                        % (self.link.counts["bad"] + self.link.counts["other"], self.link.last_bad))
            raise _Refused("no Ego Vehicle Status on %s:%d within %.1f s%s: check the simulator's network "
                           "settings (Ego Vehicle Status destination = this PC, port %d), --status-port, "
                           "--sim-version and the firewall"
                           % (o.listen_ip, self.ports["status"], o.status_timeout, more, self.ports["status"]))
        msg = first[0]
        if not math.isfinite(msg.signed_vel) or abs(msg.signed_vel) > o.max_start_speed:
            raise _Refused("the ego moves at %.1f km/h (at most %.1f km/h to start, --max-start-speed): "
                           "stop it in a safe place first" % (msg.signed_vel, o.max_start_speed))
        if msg.ctrl_mode == _KEYBOARD:
            raise _Refused("the simulator is in keyboard mode (status ctrl_mode 1): it ignores network "
                           "commands; switch the ego to automatic control (ctrl_mode 2) in the simulator")
        if msg.ctrl_mode != _AUTO:
            self.say("note: status ctrl_mode %d is neither keyboard (1) nor automatic (2): going on"
                     % msg.ctrl_mode)

    def _plan_text(self):
        o = self.o
        steer = "wire steer " + " then ".join(f"{v:+.2f}" for v in steer_plan(o.steer, o.one_way, o.gain))
        secs = planned_time(o.accel_time, o.phase_time, o.one_way, o.gain)
        return ("The ego will drive FORWARD at %.1f km/h for up to %.0f s (about %.0f m), %s, then brake to a "
                "stop.  Make sure the road ahead and to both sides is clear." % (
                    o.speed, secs, o.speed / 3.6 * secs, steer))

    def _checked_drive(self):
        o = self.o
        self.say("%s: Ego Vehicle Status on %s:%d%s, Ego Ctrl Cmd (%d B) to %s:%d, profile %s" % (
            PROG, o.listen_ip, self.ports["status"],
            (", IMU on %s:%d" % (o.listen_ip, self.ports["imu"])) if "imu" in self.ports else "",
            self.link.ctrl_bytes, self.sim_addr[0], self.sim_addr[1], self.version.name))
        first = self.link.wait_status(o.status_timeout)
        self._check_start(first)
        self.say("status from %s:%d: %s" % (first[2][0], first[2][1], self.describe(first[0])))
        self.say(self._plan_text())
        if not o.yes:
            if self.confirm is None:
                raise _Refused("not confirmed: no terminal to ask on (run it on a terminal, or pass --yes "
                               "once the ego is in a safe place)")
            if not self.confirm("Start? [y/N] "):
                raise _Refused("not confirmed")
            self.link.drain()
            again = self.link.wait_status(o.status_timeout)
            self._check_start(again)
        return self._drive()

    def _drive(self):
        o = self.o
        plan = [("accelerate", 0.0, o.accel_time)]
        plan += [(f"steer {v:+.2f}", v, o.phase_time) for v in steer_plan(o.steer, o.one_way, o.gain)]
        start_wall = self.monotonic()
        self.link.drain()
        index, phase_t0 = 0, None
        windows = [[] for _ in plan]
        imu = [[] for _ in plan]
        last_t, last_advance = None, self.monotonic()
        last_rx = self.monotonic()
        self.say("driving: %s" % ", ".join("%s (%.1f s)" % (p[0], p[2]) for p in plan))
        self.link.drive(o.speed, 0.0)
        while True:
            now = self.monotonic()
            if now - start_wall > self.max_run_time:
                raise _Aborted(f"the run took more than {self.max_run_time:g} s of wall time (--max-run-time)")
            got = self.link.receive(min(0.1, o.status_timeout))
            now = self.monotonic()
            if not got:
                if now - last_rx > o.status_timeout:
                    raise _Aborted(f"no Ego Vehicle Status for {o.status_timeout:.1f} s")
                continue
            last_rx = now
            for msg, t_rx, _ in got:
                if msg.ctrl_mode == _KEYBOARD:
                    raise _Aborted("the simulator switched to keyboard mode")
                if not math.isfinite(msg.signed_vel) or abs(msg.signed_vel) > self.abort_speed:
                    raise _Aborted("the ego reached %.1f km/h (abort above %.1f km/h, --abort-speed)"
                                   % (msg.signed_vel, self.abort_speed))
                t = self._clock(msg, t_rx)
                if last_t is None or t > last_t:
                    last_t, last_advance = t, t_rx
                elif t_rx - last_advance > o.status_timeout:
                    raise _Aborted("the status clock has not advanced for %.1f s (simulation paused?)"
                                   % o.status_timeout)
                t = last_t
                if phase_t0 is None:
                    phase_t0 = t
                elapsed = t - phase_t0
                name, steer, length = plan[index]
                done = elapsed >= length or (index == 0 and elapsed >= 0.5
                                             and msg.signed_vel >= 0.9 * o.speed)
                if done:
                    index += 1
                    if index == len(plan):
                        return self._phases(plan, windows, imu)
                    phase_t0, elapsed = t, 0.0
                    name, steer, length = plan[index]
                if elapsed >= (o.settle_time if steer else 0.0):
                    windows[index].append(self._sample(msg, t))
                    imu[index].extend(w for r, w in self.link.imu_rates)
                self.link.imu_rates = []
            self.link.drive(o.speed, plan[index][1])

    def _phases(self, plan, windows, imu):
        return [Phase(steer, tuple(w), tuple(r)) for (name, steer, length), w, r in zip(plan, windows, imu)]

    def stop(self):
        """The stop that ends every run (:meth:`.check_link.CheckLink.stop`, at most :attr:`stop_time` s):
        True (the ego stopped), False (still moving) or None (no status).  Never raises."""
        return self.link.stop(self.stop_time)


def steer_plan(steer, one_way=False, gain=False):
    """The wire steer of each steering phase: +steer (and -steer unless ``one_way``); with ``gain`` a
    second magnitude too (twice the first, or half of it when twice would pass 1)."""
    mags = [steer]
    if gain:
        mags.append(2.0 * steer if 2.0 * steer <= 1.0 else steer / 2.0)
    return [v for m in mags for v in ((m,) if one_way else (m, -m))]


def planned_time(accel_time, phase_time, one_way=False, gain=False):
    """The longest a drive takes as planned, s (simulated time)."""
    return accel_time + phase_time * len(steer_plan(1.0, one_way, gain))
