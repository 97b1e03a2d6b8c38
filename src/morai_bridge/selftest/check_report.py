"""What a morai_check_signs run prints and writes once it has driven: the phase table, the measured wire
signs against the version profile, the bridge parameters, the full-scale steering angle against the
vehicle profile, and (when asked) the measured version and vehicle profiles.  No ROS; the measurement
itself is :mod:`.signs`, the run :mod:`.check_signs`.
"""
import datetime
import os
from typing import NamedTuple, Optional

from morai_bridge.configuration import sim_versions, vehicle_profiles

from . import signs
from .check_options import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REFUSED, PROG

__all__ = ["Report", "SignsOutcome", "write_file"]


class SignsOutcome(NamedTuple):
    exit_status: int
    comparison: Optional[signs.Comparison]
    reason: str                     # why inconclusive / not written ('' otherwise)
    written: str                    # the version profile file written ('' if none)


def _side(side):
    return f"+ = {side}" if side else "not measured"


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


class Report:
    """The report of one run: ``say(text)`` prints a line; ``options`` (:class:`.check_options.Options`)
    say what to write; ``version`` and ``vehicle`` are the profiles compared with (``vehicle`` may be
    None); ``sim_addr`` is where the simulator was, for the written files' comments."""

    def __init__(self, say, options, version, vehicle, sim_addr):
        self.say = say
        self.o = options
        self.version = version
        self.vehicle = vehicle
        self.sim_addr = sim_addr

    def signs(self, verdict) -> SignsOutcome:
        """Print the phases, the signs measured against the profile and the bridge parameters; write the
        version profile when asked (``options.write``) and the measurement is conclusive."""
        o, base = self.o, self.version
        self._phase_table(verdict)
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
            return SignsOutcome(EXIT_INCONCLUSIVE, cmp_, "; ".join(verdict.reasons), "")
        s = cmp_.signs
        self.say("")
        self.say("Bridge parameters for this simulator (ROS side = MORAI native ROS mode: CtrlCmd.steering "
                 "+ left, EgoVehicleStatus.wheel_angle + right):")
        self.say("  steering_sign %d, status_steering_sign %d, ghost_steering_sign %d (ghost: the profile's)"
                 % (s.steering_sign, s.status_steering_sign, s.ghost_steering_sign))
        written = ""
        if o.write:
            written = self._write_version(verdict)
            if not written:
                return SignsOutcome(EXIT_REFUSED, cmp_, f"cannot write {o.write}", "")
            self.say(f"  roslaunch morai_msgs udp_bridge.launch sim_version:={written}")
        elif cmp_.ctrl_agrees and cmp_.status_agrees:
            self.say(f"  the profile agrees: roslaunch morai_msgs udp_bridge.launch sim_version:={base.name}")
        else:
            self.say("  roslaunch morai_msgs udp_bridge.launch sim_version:=%s steering_sign:=%d "
                     "status_steering_sign:=%d   (or --write FILE and sim_version:=FILE)"
                     % (base.name, s.steering_sign, s.status_steering_sign))
        return SignsOutcome(EXIT_OK, cmp_, "", written)

    def _phase_table(self, verdict):
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

    def gain(self, gain):
        """Print the full-scale steering angle; write the vehicle profile when asked
        (``options.write_vehicle``).  Returns the file written ('')."""
        o, vehicle = self.o, self.vehicle
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
        o, base = self.o, self.vehicle
        date = _now()
        source = ("measured by %s on %s: %.2f +- %.2f deg from %d steering phases (%s; simulator at %s:%d, "
                  "sim_version %s)%s" % (
                      PROG, date, gain.full_scale_deg, gain.sigma_deg, len(gain.phases),
                      ", ".join("steer %+.2f: %.2f deg" % (p.steer, p.full_scale_deg) for p in gain.phases),
                      self.sim_addr[0], self.sim_addr[1], self.version.name,
                      "" if base is None else "; profile %s said %.1f" % (base.name, base.max_steering_deg)))
        text = vehicle_profiles.to_yaml(base, gain.full_scale_deg, source, comment=(
            "Vehicle profile written by %s on %s.\nUse: roslaunch morai_msgs udp_bridge.launch vehicle_profile:=%s"
            % (PROG, date, os.path.abspath(os.path.expanduser(o.write_vehicle)))))
        path = write_file(o.write_vehicle, text, self.say)
        if path:
            self.say(f"  wrote {path} (vehicle profile, max_steering_deg {gain.full_scale_deg:.2f})")
        return path

    def _write_version(self, verdict):
        o = self.o
        date = _now()
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
        v = signs.measured_version(self.version, verdict, date, detail)
        text = sim_versions.to_yaml(v, comment=(
            "Simulator version profile written by %s on %s (simulator at %s:%d, based on %s).\n"
            "Use: roslaunch morai_msgs udp_bridge.launch sim_version:=%s"
            % (PROG, date, self.sim_addr[0], self.sim_addr[1], self.version.name, os.path.abspath(o.write))))
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
