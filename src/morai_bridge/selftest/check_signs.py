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
   times and repeated until the status shows the ego stopped (at most ``--stop-time`` s):
   after a run, a refusal, an error or Ctrl-C;
5. judges the samples (:func:`.signs.judge`), prints the wire signs, compares them with the
   ``--sim-version`` profile, prints the bridge parameters and, with ``--write FILE``, writes a
   version profile ``udp_bridge.launch sim_version:=FILE`` loads;
6. measures the full-scale steering angle from the same phases (:func:`.signs.measure_gain`; with
   ``--gain`` two more phases at a second steer magnitude show whether the gain is linear), prints
   it against the ``--vehicle-profile``'s maximum and, with ``--write-vehicle FILE``, writes that
   vehicle profile with the measured maximum (``vehicle_profile:=FILE``).

Exit status: 0 measured, 1 inconclusive (nothing written), 2 refused to start / usage / I/O error,
3 aborted during the run, 130 interrupted (Ctrl-C).  In every case the stop command was sent.
"""
import datetime
import math
import os
import selectors
import sys
import time
import traceback
from typing import NamedTuple, Optional

from morai_bridge.configuration import sim_versions, vehicle_profiles
from morai_bridge.configuration.params import FROM_PROFILE, FROM_VERSION, NO_IMU
from morai_bridge.link.transport import UdpSender, bind_udp, resolve_host
from morai_bridge.wire import streams, udp
from morai_bridge.wire.enums import CtrlMode, Gear, LonglCmdType

from . import signs
from .signs import Phase, Sample, Thresholds

__all__ = ["Options", "SignCheck", "RunResult", "stop_command", "drive_command", "steer_plan", "planned_time",
           "PROG", "EXIT_OK", "EXIT_INCONCLUSIVE", "EXIT_REFUSED", "EXIT_ABORTED", "EXIT_INTERRUPTED"]

PROG = "morai_check_signs"
EXIT_OK, EXIT_INCONCLUSIVE, EXIT_REFUSED, EXIT_ABORTED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
#: the ego's speed limit of this tool (km/h): a sign test is done at walking speed
MAX_TEST_SPEED = 10.0
#: how many stop commands go out at once (UDP may lose one), then one per status until stopped
STOP_REPEATS = 5
#: below this |speed| (km/h) the ego counts as stopped
STOPPED_KMH = 0.5
_AUTO, _KEYBOARD = int(CtrlMode.AUTO), int(CtrlMode.KEYBOARD)
_GEAR_NAMES = {int(g): g.name for g in Gear}


class Options(NamedTuple):
    version: object                 # SimVersion: the profile to compare with (and default ports, size)
    sim_ip: str = "127.0.0.1"       # where the simulator listens for Ego Ctrl Cmd
    ctrl_port: int = streams.BY_NAME["ctrl_cmd"].port
    ctrl_bytes: int = FROM_PROFILE  # 55 or 59; 0 = the version's
    listen_ip: str = "0.0.0.0"
    status_port: int = FROM_VERSION  # -1 = the version's ego_status port; 0 = ANY_FREE_PORT (tests)
    imu_port: int = NO_IMU          # -1 = no IMU; 0 = ANY_FREE_PORT (tests)
    speed_kmh: float = 5.0
    steer: float = 0.3
    accel_time: float = 4.0
    phase_time: float = 3.0
    settle_time: float = 1.0
    reverse: bool = True
    max_start_speed: float = 2.0
    abort_speed: float = 0.0        # 0 = 2 x speed_kmh
    status_timeout: float = 3.0
    max_run_time: float = 30.0
    stop_time: float = 3.0
    yes: bool = False
    write: str = ""
    thresholds: Thresholds = Thresholds()
    gain: bool = False              # two more phases at a second steer magnitude (linearity)
    vehicle: object = None          # VehicleProfile to compare the full-scale angle with (None: none)
    write_vehicle: str = ""


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


def drive_command(speed_kmh, steer, data_length=23):
    """Velocity control, gear D, wire ``steer`` (normalised; the rear steer, if any, 0)."""
    return udp.make(udp.EgoCtrlCmd, data_length=data_length, ctrl_mode=_AUTO, gear=int(Gear.D),
                    cmd_type=int(LonglCmdType.VELOCITY), velocity=float(speed_kmh), steer=float(steer),
                    rear_steer=0.0 if data_length == 27 else None)


def stop_command(gear=int(Gear.D), data_length=23):
    """The stop: pedal mode, brake 1, accelerator 0, velocity 0, steer 0 (as the bridge's safe
    state), in the gear the vehicle reported (D when unknown)."""
    return udp.make(udp.EgoCtrlCmd, data_length=data_length, ctrl_mode=_AUTO, gear=int(gear),
                    cmd_type=int(LonglCmdType.THROTTLE), velocity=0.0, accel=0.0, brake=1.0, steer=0.0,
                    rear_steer=0.0 if data_length == 27 else None)


def _side(side):
    return f"+ = {side}" if side else "not measured"


class SignCheck:
    """One self-test run.  The sockets are bound by the constructor (read :attr:`ports`); call
    :meth:`run` once, then :meth:`close` (or use ``with``)."""

    def __init__(self, options: Options, out=None, confirm=None, clock=time.monotonic):
        o = options
        self.o = o
        self.out = out or sys.stdout
        self.confirm = confirm              # confirm(text) -> bool; None: no terminal
        self.monotonic = clock
        self.ctrl_bytes = o.version.ctrl_cmd_bytes if o.ctrl_bytes == FROM_PROFILE else o.ctrl_bytes
        if self.ctrl_bytes not in (55, 59):
            raise ValueError(f"ctrl_bytes must be 55 or 59, got {self.ctrl_bytes!r}")
        self.data_length = 23 if self.ctrl_bytes == 55 else 27
        self.abort_speed = o.abort_speed or 2.0 * o.speed_kmh
        self.status_port = o.version.port("ego_status") if o.status_port == FROM_VERSION else o.status_port
        self._sel = selectors.DefaultSelector()
        self._socks = {}
        self.sender = None
        try:
            sim_ip = resolve_host(o.sim_ip, "--sim-ip")
            listen_ip = resolve_host(o.listen_ip, "--listen-ip")
            self._socks["status"] = bind_udp(listen_ip, self.status_port, "--status-port", ip_param="--listen-ip")
            if o.imu_port != NO_IMU:
                self._socks["imu"] = bind_udp(listen_ip, o.imu_port, "--imu-port", ip_param="--listen-ip")
            self.sender = UdpSender(listen_ip, sim_ip)
        except Exception:
            self.close()
            raise
        for name, s in self._socks.items():
            self._sel.register(s, selectors.EVENT_READ, name)
        #: bound port per stream ('status', 'imu')
        self.ports = {n: s.getsockname()[1] for n, s in self._socks.items()}
        self.sim_addr = (sim_ip, o.ctrl_port)
        self.last = None            # last EgoVehicleStatus
        self.last_from = None
        self.imu_rates = []         # (monotonic, ang_vel_z) since the last take
        self.counts = {"status": 0, "imu": 0, "other": 0, "bad": 0}
        self.last_bad = ""
        self.stop_sent = 0
        self._clock_mode = None     # 'packet' or 'receive'

    # ------------------------------------------------------------------ plumbing
    def close(self):
        try:
            self._sel.close()
        except Exception:   # noqa: BLE001 - closing is best effort
            pass
        for s in self._socks.values():
            s.close()
        if self.sender is not None:
            self.sender.close()

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

    def send(self, msg):
        data = udp.encode(msg)
        try:
            self.sender.sock.sendto(data, self.sim_addr)
        except OSError as e:
            self.say("warning: cannot send Ego Ctrl Cmd to %s:%d: %s" % (self.sim_addr + (e.strerror or e,)))
            return False
        return True

    def _receive(self, timeout):
        """Read what arrives within ``timeout`` s; returns the new statuses [(msg, t_rx, addr)]."""
        got = []
        for key, _ in self._sel.select(max(0.0, timeout)):
            sock, name = key.fileobj, key.data
            while True:
                try:
                    data, addr = sock.recvfrom(65535)
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:     # e.g. ICMP port unreachable of an earlier send
                    break
                now = self.monotonic()
                try:
                    msg, _ = udp.decode_tolerant(data)
                except udp.DecodeError as e:
                    self.counts["bad"] += 1
                    self.last_bad = "%s:%d sent %d B to the %s port: %s" % (addr[0], addr[1], len(data), name, e)
                    continue
                if name == "status" and isinstance(msg, udp.EgoVehicleStatus):
                    self.counts["status"] += 1
                    self.last, self.last_from = msg, addr
                    got.append((msg, now, addr))
                elif name == "imu" and isinstance(msg, udp.ImuData):
                    self.counts["imu"] += 1
                    self.imu_rates.append((now, msg.ang_vel_z))
                else:
                    self.counts["other"] += 1
                    self.last_bad = "%s:%d sent a %s to the %s port" % (addr[0], addr[1], type(msg).__name__, name)
        return got

    def _wait_status(self, timeout):
        """The first status that arrives within ``timeout`` s (wall), or None."""
        end = self.monotonic() + timeout
        while True:
            got = self._receive(end - self.monotonic())
            if got:
                return got[-1]
            if self.monotonic() >= end:
                return None

    def _drain(self):
        while self._receive(0):
            pass
        self.imu_rates = []

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
        reason, status, verdict = "", None, None
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
        verdict = signs.judge(phases, self.o.thresholds)
        vehicle = self.o.vehicle
        gain = signs.measure_gain(phases, vehicle.wheelbase_m if vehicle is not None else 0.0, self.o.thresholds)
        result = self._report(verdict, stopped)
        written = self._report_gain(gain)
        if result.exit_status == EXIT_OK and self.o.write_vehicle and not written:
            result = result._replace(exit_status=EXIT_REFUSED, reason=f"cannot write {self.o.write_vehicle}")
        return result._replace(gain=gain, written_vehicle=written)

    def _say_stop(self, stopped):
        where = "%s:%d" % self.sim_addr
        if stopped is None:
            self.say("stop command sent %d times to %s (no status: cannot see whether the ego stopped)"
                     % (self.stop_sent, where))
        elif stopped:
            self.say("stop command sent %d times to %s; the ego is stopped" % (self.stop_sent, where))
        else:
            self.say("WARNING: stop command sent %d times to %s but the ego still moves at %.1f km/h: "
                     "stop it in the simulator" % (self.stop_sent, where, self.last.signed_vel))

    def _check_start(self, first):
        o = self.o
        if first is None:
            more = ""
            if self.counts["bad"] or self.counts["other"]:
                more = (" (%d datagrams arrived there, none an Ego Vehicle Status; last: %s)"
                        % (self.counts["bad"] + self.counts["other"], self.last_bad))
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
        steer = "wire steer " + " then ".join(f"{v:+.2f}" for v in steer_plan(o.steer, o.reverse, o.gain))
        secs = planned_time(o.accel_time, o.phase_time, o.reverse, o.gain)
        return ("The ego will drive FORWARD at %.1f km/h for up to %.0f s (about %.0f m), %s, then brake to a "
                "stop.  Make sure the road ahead and to both sides is clear." % (
                    o.speed_kmh, secs, o.speed_kmh / 3.6 * secs, steer))

    def _checked_drive(self):
        o = self.o
        self.say("%s: Ego Vehicle Status on %s:%d%s, Ego Ctrl Cmd (%d B) to %s:%d, profile %s" % (
            PROG, o.listen_ip, self.ports["status"],
            (", IMU on %s:%d" % (o.listen_ip, self.ports["imu"])) if "imu" in self.ports else "",
            self.ctrl_bytes, self.sim_addr[0], self.sim_addr[1], o.version.name))
        first = self._wait_status(o.status_timeout)
        self._check_start(first)
        self.say("status from %s:%d: %s" % (first[2][0], first[2][1], self.describe(first[0])))
        self.say(self._plan_text())
        if not o.yes:
            if self.confirm is None:
                raise _Refused("not confirmed: no terminal to ask on (run it on a terminal, or pass --yes "
                               "once the ego is in a safe place)")
            if not self.confirm("Start? [y/N] "):
                raise _Refused("not confirmed")
            self._drain()
            again = self._wait_status(o.status_timeout)
            self._check_start(again)
        return self._drive()

    def _drive(self):
        o = self.o
        plan = [("accelerate", 0.0, o.accel_time)]
        plan += [(f"steer {v:+.2f}", v, o.phase_time) for v in steer_plan(o.steer, o.reverse, o.gain)]
        start_wall = self.monotonic()
        self._drain()
        index, phase_t0 = 0, None
        windows = [[] for _ in plan]
        imu = [[] for _ in plan]
        last_t, last_advance = None, self.monotonic()
        last_rx = self.monotonic()
        self.say("driving: %s" % ", ".join("%s (%.1f s)" % (p[0], p[2]) for p in plan))
        self.send(drive_command(o.speed_kmh, 0.0, self.data_length))
        while True:
            now = self.monotonic()
            if now - start_wall > o.max_run_time:
                raise _Aborted(f"the run took more than {o.max_run_time:g} s of wall time (--max-run-time)")
            got = self._receive(min(0.1, o.status_timeout))
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
                                             and msg.signed_vel >= 0.9 * o.speed_kmh)
                if done:
                    index += 1
                    if index == len(plan):
                        return self._phases(plan, windows, imu)
                    phase_t0, elapsed = t, 0.0
                    name, steer, length = plan[index]
                if elapsed >= (o.settle_time if steer else 0.0):
                    windows[index].append(self._sample(msg, t))
                    imu[index].extend(w for r, w in self.imu_rates)
                self.imu_rates = []
            self.send(drive_command(o.speed_kmh, plan[index][1], self.data_length))

    def _phases(self, plan, windows, imu):
        return [Phase(steer, tuple(w), tuple(r)) for (name, steer, length), w, r in zip(plan, windows, imu)]

    def stop(self):
        """Send the stop command STOP_REPEATS times, then once per status until the ego is stopped
        (at most ``stop_time`` s).  Returns True (stopped), False (still moving) or None (no status).
        Never raises; a Ctrl-C here cuts the wait short, not the first stop commands."""
        gear = self.last.gear if self.last is not None and 1 <= self.last.gear <= 5 else int(Gear.D)
        cmd = stop_command(gear, self.data_length)
        sent = 0
        while sent < STOP_REPEATS:
            try:        # a second Ctrl-C must not cut these short
                while sent < STOP_REPEATS:
                    sent += 1
                    if self.send(cmd):
                        self.stop_sent += 1
            except KeyboardInterrupt:
                pass
        seen_stopped = None
        try:
            t0 = self.monotonic()
            end = t0 + self.o.stop_time
            while self.monotonic() < end:
                got = self._receive(min(0.05, max(0.0, end - self.monotonic())))
                for msg, _, _ in got:
                    seen_stopped = abs(msg.signed_vel) < STOPPED_KMH
                if got:
                    if self.send(cmd):
                        self.stop_sent += 1
                    if seen_stopped:
                        break
                elif self.last is None and self.monotonic() - t0 > 0.2:
                    break       # no status at all: nothing to wait for
        except KeyboardInterrupt:
            pass
        except Exception as e:    # noqa: BLE001 - the stop commands went out already
            self.say(f"warning: while waiting for the ego to stop: {type(e).__name__}: {e}")
        return seen_stopped

    # ------------------------------------------------------------------ the report
    def _report(self, verdict, stopped):
        o, base = self.o, self.o.version
        self.say("")
        self.say("%-11s %6s %7s %7s %6s %11s %10s %13s  %s" % (
            "phase", "steer", "time s", "dist m", "km/h", "heading", "IMU rad/s", "status steer", "turn"))
        names = ["accelerate"] + [f"steer {r.steer:+.2f}" for r in verdict.phases[1:]]
        for name, r in zip(names, verdict.phases):
            self.say("%-11s %+6.2f %7.1f %7.2f %6.2f %11s %10s %13s  %s" % (
                name, r.steer, r.duration_s, r.distance_m, r.mean_speed_kmh,
                "-" if r.heading_change_deg is None else "%+.2f deg" % r.heading_change_deg,
                "-" if r.imu_rate is None else "%+.4f" % r.imu_rate,
                "-" if r.status_steer_deg is None else "%+.2f deg" % r.status_steer_deg,
                r.turn or "-"))
        for n in verdict.notes:
            self.say("note: " + n)
        cmp_ = signs.compare(base, verdict)
        self.say("")
        self.say("Measured wire signs (this simulator):")

        def agree(flag, side):
            if flag is None:
                return f"profile {base.name}: + = {side} (kept)"
            return f"profile {base.name}: + = {side}, {'agrees' if flag else 'DIFFERS'}"
        self.say("  Ego Ctrl Cmd steer:       %-14s (%s)" % (
            _side(verdict.ctrl_steer_positive), agree(cmp_.ctrl_agrees, base.ctrl_steer_positive)))
        self.say("  Ego Vehicle Status steer: %-14s (%s)" % (
            _side(verdict.status_steer_positive), agree(cmp_.status_agrees, base.status_steer_positive)))
        self.say("  Ego Ghost Cmd steer:      not measurable by driving: the profile's + = %s is kept"
                 % base.ghost_steer_positive)
        if not verdict.conclusive:
            self.say("")
            self.say(f"INCONCLUSIVE: {'; '.join(verdict.reasons)}")
            self.say("Nothing written.  Check that the simulator plays (not paused), the ego is in automatic "
                     "mode on a flat open area, and try a larger --steer or --phase-time.")
            return RunResult(EXIT_INCONCLUSIVE, verdict, cmp_, "; ".join(verdict.reasons), self.stop_sent,
                             stopped, "")
        s = cmp_.signs
        self.say("")
        self.say("Bridge parameters for this simulator (ROS side = MORAI native ROS mode: CtrlCmd.steering "
                 "+ left, EgoVehicleStatus.wheel_angle + right):")
        self.say("  steering_sign %d, status_steering_sign %d, ghost_steering_sign %d (ghost: the profile's)"
                 % (s.steering_sign, s.status_steering_sign, s.ghost_steering_sign))
        written = ""
        if o.write:
            written = self._write(verdict)
            if not written:
                return RunResult(EXIT_REFUSED, verdict, cmp_, f"cannot write {o.write}", self.stop_sent,
                                 stopped, "")
            self.say(f"  roslaunch morai_msgs udp_bridge.launch sim_version:={written}")
        elif cmp_.ctrl_agrees and cmp_.status_agrees:
            self.say(f"  the profile agrees: roslaunch morai_msgs udp_bridge.launch sim_version:={base.name}")
        else:
            self.say("  roslaunch morai_msgs udp_bridge.launch sim_version:=%s steering_sign:=%d "
                     "status_steering_sign:=%d   (or --write FILE and sim_version:=FILE)"
                     % (base.name, s.steering_sign, s.status_steering_sign))
        return RunResult(EXIT_OK, verdict, cmp_, "", self.stop_sent, stopped, written)

    def _report_gain(self, gain):
        """Print the full-scale steering angle; write the vehicle profile when asked.  Returns the
        file written ('')."""
        o, vehicle = self.o, self.o.vehicle
        self.say("")
        self.say("Full-scale steering angle (the front-wheel angle of Ego Ctrl Cmd steer = 1; kinematic estimate "
                 "from the heading's slope, speed and wheelbase in each phase's steady part):")
        for p in gain.phases:
            self.say("  steer %+.2f: front wheels %+.2f +- %.2f deg (+ left) -> full scale %.1f +- %.1f deg"
                     % (p.steer, p.effective_deg, p.sigma_deg, p.full_scale_deg, p.sigma_full_deg))
        if gain.full_scale_deg is None:
            self.say(f"  not measured: {gain.why}")
            if o.write_vehicle:
                self.say(f"  nothing written to {o.write_vehicle}")
            return ""
        if gain.why:
            self.say(f"  (left out: {gain.why})")
        if gain.linear is None:
            lin = "linearity not checked: one steer magnitude (--gain adds a second)"
        else:
            values = [v for _, v in gain.by_magnitude]
            lin = "%s: %s differ by %.1f %%" % (
                "linear" if gain.linear else "NOT LINEAR", " and ".join(
                    "%.1f deg at steer %.2f" % (v, m) for m, v in gain.by_magnitude),
                100.0 * (max(values) - min(values)) / gain.full_scale_deg)
        self.say(f"  measured: {gain.full_scale_deg:.1f} +- {gain.sigma_deg:.1f} deg ({lin})")
        if vehicle is not None:
            ratio = gain.full_scale_deg / vehicle.max_steering_deg
            agrees = abs(gain.full_scale_deg - vehicle.max_steering_deg) <= max(1.0, 2.0 * gain.sigma_deg)
            self.say("  vehicle profile %s: max_steering_deg %g: %s" % (
                vehicle.name, vehicle.max_steering_deg, "agrees" if agrees else
                "DIFFERS: with this profile the wheels turn %.2f times the CtrlCmd.steering asked for; use "
                "max_steering_deg:=%.1f (or --write-vehicle FILE and vehicle_profile:=FILE)"
                % (ratio, gain.full_scale_deg)))
        if not o.write_vehicle:
            return ""
        return self._write_vehicle(gain)

    def _write_vehicle(self, gain):
        o = self.o
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        base = o.vehicle
        source = ("measured by %s on %s: %.2f +- %.2f deg from %d steering phases (%s; simulator at %s:%d, "
                  "sim_version %s)%s" % (
                      PROG, date, gain.full_scale_deg, gain.sigma_deg, len(gain.phases),
                      ", ".join("steer %+.2f: %.2f deg" % (p.steer, p.full_scale_deg) for p in gain.phases),
                      self.sim_addr[0], self.sim_addr[1], o.version.name,
                      "" if base is None else "; profile %s said %.1f" % (base.name, base.max_steering_deg)))
        text = vehicle_profiles.to_yaml(base, gain.full_scale_deg, source, comment=(
            "Vehicle profile written by %s on %s.\nUse: roslaunch morai_msgs udp_bridge.launch vehicle_profile:=%s"
            % (PROG, date, os.path.abspath(os.path.expanduser(o.write_vehicle)))))
        path = write_file(o.write_vehicle, text, self.say)
        if path:
            self.say(f"  wrote {path} (vehicle profile, max_steering_deg {gain.full_scale_deg:.2f})")
        return path

    def _write(self, verdict):
        o = self.o
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        steering = [r for r in verdict.phases if r.steer]
        detail = {
            "ctrl_steer_positive": "; ".join(
                "wire steer %+.2f at %.1f km/h turned %s (heading %s%s)" % (
                    r.steer, r.mean_speed_kmh, r.turn,
                    "-" if r.heading_change_deg is None else "%+.1f deg" % r.heading_change_deg,
                    "" if r.imu_rate is None else ", IMU yaw rate %+.3f rad/s" % r.imu_rate) for r in steering),
            "status_steer_positive": "; ".join(
                f"status steer {r.status_steer_deg:+.2f} deg during a {r.turn} turn" for r in steering),
        }
        v = signs.measured_version(o.version, verdict, date, detail)
        text = sim_versions.to_yaml(v, comment=(
            "Simulator version profile written by %s on %s (simulator at %s:%d, based on %s).\n"
            "Use: roslaunch morai_msgs udp_bridge.launch sim_version:=%s"
            % (PROG, date, self.sim_addr[0], self.sim_addr[1], o.version.name, os.path.abspath(o.write))))
        path = write_file(o.write, text, self.say)
        if path:
            self.say("")
            self.say(f"wrote {path} (profile {v.name})")
        return path


def write_file(name, text, say):
    """Write ``text`` to ``name`` whole or not at all; the absolute path, or '' (said why)."""
    path = os.path.abspath(os.path.expanduser(name))
    tmp = path + ".tmp%d" % os.getpid()
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        say(f"{PROG}: cannot write {path}: {e.strerror or e}")
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return ""
    return path


def steer_plan(steer, reverse=True, gain=False):
    """The wire steer of each steering phase: +steer (and -steer); with ``gain`` a second
    magnitude too (twice the first, or half of it when twice would pass 1)."""
    mags = [steer]
    if gain:
        mags.append(2.0 * steer if 2.0 * steer <= 1.0 else steer / 2.0)
    return [v for m in mags for v in ((m, -m) if reverse else (m,))]


def planned_time(accel_time, phase_time, reverse, gain=False):
    """The longest a drive takes as planned, s (simulated time)."""
    return accel_time + phase_time * len(steer_plan(1.0, reverse, gain))
