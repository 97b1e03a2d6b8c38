"""The sign self-test's measurement logic: status samples in, a verdict out.  Pure: no sockets, no ROS.

What a run measures (:mod:`.check_signs` drives the vehicle and collects the samples):

* **Which way a positive Ego Ctrl Cmd ``steer`` turns the car.**  In each steering phase the
  vehicle drives forward at walking speed with a constant wire steer; the turn direction is read
  from the heading the Ego Vehicle Status reports (``yaw``, degrees, counter-clockwise positive,
  not wrapped to +-180: MORAI's manual "The vehicle heading angle increases in the
  counter-clockwise (CCW) direction", docs/versions.md) and, when an IMU stream is given, from
  the IMU yaw rate (``ang_vel_z``, rad/s, + = counter-clockwise = left in 25.S4 per the
  evidence of issue 22).  Driving forward, a heading that increases is a LEFT turn.
* **Which way a positive status ``steer`` points.**  The status steer (front-wheel angle, deg)
  during the same phase, compared with the turn the car made.

Channels that agree decide; channels that disagree make the phase inconclusive (never a guess).
With a second phase of opposite steer (the default), both phases must give the same answer: a
road that curves or slopes the car one way whatever the steer then shows up as a disagreement.

The status ``ang_vel_z`` is reported (its sign is not independently documented) but does not
decide anything.  The Ego Ghost Cmd's steer cannot be measured by driving: its side stays the
profile's.

* **The full-scale steering angle** (what ``steer = 1`` turns the front wheels by), from the same
  phases (:func:`measure_gain`): in each phase's steady window the heading's slope (a least-squares
  fit, with its standard error) is the yaw rate; the kinematic bicycle model turns it into the
  front-wheel angle (the status speed is the velocity's component along the vehicle's x axis,
  docs/units.md, which is the rear axle's speed: no correction for where the status position is);
  that angle over the commanded steer is the full
  scale.  Phases of two steer magnitudes show whether the gain is linear.
"""
import math
from typing import Dict, NamedTuple, Optional, Sequence, Tuple

from morai_bridge.configuration import sim_versions
from morai_bridge.wire.units import KMH_TO_MPS

__all__ = ["Sample", "Phase", "Thresholds", "PhaseResult", "Verdict", "judge", "judge_phase",
           "unwrapped_change", "wrap180", "opposite", "Comparison", "compare", "measured_version",
           "LEFT", "RIGHT", "GainPhase", "Gain", "measure_gain", "steady_yaw_rate", "wheel_angle",
           "LINEAR_WITHIN"]

LEFT, RIGHT = "left", "right"


def opposite(side: Optional[str]) -> Optional[str]:
    return {LEFT: RIGHT, RIGHT: LEFT}.get(side)


class Sample(NamedTuple):
    """One Ego Vehicle Status as the self-test uses it."""

    t: float                        # s: the status clock (packet time, or receive time without one)
    yaw_deg: Optional[float]        # heading, deg, CCW +, wrapped or not (None: not available)
    speed_kmh: float                # signed_vel, km/h (+ forward)
    steer_deg: Optional[float]      # status steer, deg, in the wire's own sign (None: not carried)
    yaw_rate_deg_s: Optional[float] = None   # status ang_vel_z, deg/s (reported, not decisive)
    wheelbase: float = 0.0          # m, from the status (0: unknown) for the full-scale angle


class Phase(NamedTuple):
    """The measurement window of one steering phase: constant wire ``steer``."""

    steer: float                    # the wire steer commanded (normalised -1..1)
    samples: Tuple[Sample, ...]     # status samples of the window, in arrival order
    imu_rates: Tuple[float, ...] = ()   # IMU ang_vel_z, rad/s, received in the window


class Thresholds(NamedTuple):
    """What counts as a measured effect (defaults: a fraction of what 0.3 at 5 km/h gives)."""

    min_heading_deg: float = 1.5    # heading change over the window
    min_imu_rate: float = 0.01      # rad/s, mean IMU yaw rate (0.57 deg/s)
    min_steer_deg: float = 0.3      # mean |status steer| over the window
    min_distance_m: float = 0.5     # driven forward in the window


class PhaseResult(NamedTuple):
    steer: float
    samples: int
    duration_s: float
    distance_m: float               # driven forward (negative: backward)
    mean_speed_kmh: float
    heading_change_deg: Optional[float]   # unwrapped, + = CCW = left
    imu_rate: Optional[float]       # mean IMU ang_vel_z, rad/s
    status_yaw_rate_deg_s: Optional[float]   # mean status ang_vel_z
    status_steer_deg: Optional[float]        # mean status steer
    turn: Optional[str]             # LEFT / RIGHT / None (not measured)
    ctrl_positive: Optional[str]    # where + wire steer turns, by this phase
    status_positive: Optional[str]  # where + status steer points, by this phase
    why: str                        # '' or why something was not measured


class Verdict(NamedTuple):
    ctrl_steer_positive: Optional[str]     # LEFT / RIGHT / None = inconclusive
    status_steer_positive: Optional[str]   # LEFT / RIGHT / None = inconclusive
    phases: Tuple[PhaseResult, ...]
    reasons: Tuple[str, ...]        # why a side is not measured (empty when conclusive)
    notes: Tuple[str, ...]          # observations that decide nothing

    @property
    def conclusive(self) -> bool:
        return self.ctrl_steer_positive is not None and self.status_steer_positive is not None


def wrap180(angle: float) -> float:
    """``angle`` (deg) wrapped to [-180, 180)."""
    return (angle + 180.0) % 360.0 - 180.0


def unwrapped_change(yaws: Sequence[float]) -> float:
    """Total heading change (deg) along successive headings, each step taken the short way
    round: -179 -> 179 is -2, 359.5 -> -0.2 is -0.3 (the status yaw is not wrapped, but a
    wrap of any multiple of 360 between two samples reads as the small step it is)."""
    total = 0.0
    for a, b in zip(yaws, yaws[1:]):
        total += wrap180(b - a)
    return total


def _sign(v: float) -> int:
    return 1 if v > 0 else -1 if v < 0 else 0


def _mean(values):
    values = [v for v in values if v is not None and math.isfinite(v)]
    return sum(values) / len(values) if values else None


def _side(sign: int) -> Optional[str]:
    return LEFT if sign > 0 else RIGHT if sign < 0 else None


def judge_phase(phase: Phase, th: Thresholds = Thresholds()) -> PhaseResult:
    """What one phase shows (see the module docstring)."""
    s = [x for x in phase.samples if math.isfinite(x.t) and math.isfinite(x.speed_kmh)]
    steer = phase.steer
    duration = s[-1].t - s[0].t if len(s) >= 2 else 0.0
    distance = 0.0
    for a, b in zip(s, s[1:]):
        distance += 0.5 * (a.speed_kmh + b.speed_kmh) * KMH_TO_MPS * max(0.0, b.t - a.t)
    mean_speed = _mean(x.speed_kmh for x in s) or 0.0
    yaws = [x.yaw_deg for x in s if x.yaw_deg is not None and math.isfinite(x.yaw_deg)]
    heading = unwrapped_change(yaws) if len(yaws) >= 2 else None
    imu = _mean(phase.imu_rates)
    status_rate = _mean(x.yaw_rate_deg_s for x in s)
    status_steer = _mean(x.steer_deg for x in s)

    def result(turn, why):
        ctrl = status = None
        if turn is not None and steer != 0:
            ctrl = turn if steer > 0 else opposite(turn)
        if turn is not None and status_steer is not None and abs(status_steer) >= th.min_steer_deg:
            status = turn if status_steer > 0 else opposite(turn)
        elif turn is not None and not why:
            why = ('the status steer stayed below %.1f deg (%s): its sign is not measured'
                   % (th.min_steer_deg, 'not carried' if status_steer is None else '%.2f deg' % status_steer))
        return PhaseResult(steer, len(s), duration, distance, mean_speed, heading, imu, status_rate,
                           status_steer, turn, ctrl, status, why)

    if len(s) < 2:
        return result(None, 'no status in the window (%d sample%s)' % (len(s), '' if len(s) == 1 else 's'))
    if steer == 0:
        return result(None, 'no steer commanded')
    if distance < th.min_distance_m:
        return result(None, 'the vehicle drove %.2f m forward in %.1f s (at least %.1f m needed): not moving '
                            '(paused simulation, keyboard mode, parking brake, blocked?)'
                      % (distance, duration, th.min_distance_m))
    votes = {}
    if heading is not None and abs(heading) >= th.min_heading_deg:
        votes['heading'] = _sign(heading)
    if imu is not None and abs(imu) >= th.min_imu_rate:
        votes['IMU yaw rate'] = _sign(imu)
    if not votes:
        parts = []
        if heading is not None:
            parts.append('heading changed %+.2f deg (at least %.1f needed)' % (heading, th.min_heading_deg))
        else:
            parts.append('no heading in the status')
        if imu is not None:
            parts.append('IMU yaw rate %+.4f rad/s (at least %.3f needed)' % (imu, th.min_imu_rate))
        return result(None, 'no turn measured: %s' % '; '.join(parts))
    if len(set(votes.values())) > 1:
        return result(None, 'the channels disagree: heading %+.2f deg but IMU yaw rate %+.4f rad/s'
                      % (heading, imu))
    return result(_side(next(iter(votes.values()))), '')


def judge(phases: Sequence[Phase], th: Thresholds = Thresholds()) -> Verdict:
    """The verdict of a run: which side + turns on the wire, for the command and the status."""
    results = tuple(judge_phase(p, th) for p in phases)
    steering = [r for r in results if r.steer != 0]
    reasons, notes = [], []
    ctrl = status = None
    if not steering:
        reasons.append('no steering phase was measured')
    else:
        missing = [r for r in steering if r.ctrl_positive is None]
        sides = {r.ctrl_positive for r in steering if r.ctrl_positive is not None}
        if missing:
            for r in missing:
                reasons.append('steer %+.2f: %s' % (r.steer, r.why))
        elif len(sides) > 1:
            reasons.append('the phases disagree: %s (the road or the vehicle turns it whatever the '
                           'steer, or the steer is not applied)'
                           % ', '.join('steer %+.2f turned %s' % (r.steer, r.turn) for r in steering))
        else:
            ctrl = sides.pop()
        st = {r.status_positive for r in steering if r.status_positive is not None}
        if ctrl is None:
            pass
        elif not st:
            reasons.append('status steer: ' + '; '.join(r.why for r in steering if r.why))
        elif len(st) > 1:
            reasons.append('status steer: the phases disagree (%s)' % ', '.join(
                'steer %+.2f: status %+.2f deg' % (r.steer, r.status_steer_deg) for r in steering))
        else:
            status = st.pop()
    for r in steering:
        if r.turn is not None and r.status_yaw_rate_deg_s is not None and abs(r.status_yaw_rate_deg_s) > 0.3:
            notes.append('steer %+.2f: status ang_vel_z %+.2f deg/s during a %s turn (status ang_vel_z + = %s)'
                         % (r.steer, r.status_yaw_rate_deg_s, r.turn,
                            r.turn if r.status_yaw_rate_deg_s > 0 else opposite(r.turn)))
    return Verdict(ctrl, status, results, tuple(reasons), tuple(notes))


# ----------------------------------------------------------------------------- the steering gain

#: two steer magnitudes whose full-scale estimates differ by at most this fraction count as linear
LINEAR_WITHIN = 0.05


class GainPhase(NamedTuple):
    steer: float
    effective_deg: float            # front-wheel angle, + = left
    sigma_deg: float                # its standard error (from the heading fit)
    full_scale_deg: float           # |effective| / |steer|
    sigma_full_deg: float


class Gain(NamedTuple):
    phases: Tuple[GainPhase, ...]
    full_scale_deg: Optional[float]         # None: not measured (``why``)
    sigma_deg: Optional[float]              # the estimate's uncertainty (1 sigma)
    by_magnitude: Tuple[Tuple[float, float], ...]   # (|steer|, mean full scale) per magnitude
    linear: Optional[bool]                  # None: one magnitude only
    why: str


def steady_yaw_rate(samples: Sequence[Sample]):
    """(yaw rate, its standard error), rad/s, + = CCW: the least-squares slope of the unwrapped
    heading over the status clock; None with fewer than 3 usable samples or no time span."""
    pts = [(x.t, x.yaw_deg) for x in samples
           if x.yaw_deg is not None and math.isfinite(x.yaw_deg) and math.isfinite(x.t)]
    if len(pts) < 3:
        return None
    yaw = [pts[0][1]]
    for (_, a), (_, b) in zip(pts, pts[1:]):
        yaw.append(yaw[-1] + wrap180(b - a))
    t = [p[0] for p in pts]
    n = len(t)
    tm, ym = sum(t) / n, sum(yaw) / n
    sxx = sum((x - tm) ** 2 for x in t)
    if sxx <= 0:
        return None
    slope = sum((x - tm) * (y - ym) for x, y in zip(t, yaw)) / sxx
    resid = sum((y - ym - slope * (x - tm)) ** 2 for x, y in zip(t, yaw))
    se = math.sqrt(resid / (n - 2) / sxx) if n > 2 else 0.0
    return math.radians(slope), math.radians(se)


def wheel_angle(yaw_rate, forward_mps, wheelbase):
    """Front-wheel angle (rad, + = left) of the kinematic bicycle model that gives ``yaw_rate``
    (rad/s) at the forward speed ``forward_mps``: yaw rate = v_x tan(delta) / L.  v_x, the
    velocity's component along the vehicle's x axis, is the same at every point of that axis (the
    rear axle's speed, the status' signed speed), so the status position needs no correction."""
    return math.atan(yaw_rate * wheelbase / forward_mps)


def measure_gain(phases: Sequence[Phase], wheelbase_default: float = 0.0, th: Thresholds = Thresholds()) -> Gain:
    """The full-scale steering angle from the steering phases (see the module docstring).
    ``wheelbase_default`` (m) serves when the status carries no wheelbase."""
    out, whys = [], []
    for ph in phases:
        if not ph.steer:
            continue
        s = [x for x in ph.samples if math.isfinite(x.t) and math.isfinite(x.speed_kmh)]
        fit = steady_yaw_rate(s)
        speed = _mean(x.speed_kmh for x in s)
        wheelbase = _mean(x.wheelbase for x in s if x.wheelbase and x.wheelbase > 0) or wheelbase_default
        label = 'steer %+.2f' % ph.steer
        if fit is None:
            whys.append('%s: fewer than 3 headings in the steady window' % label)
            continue
        if not speed or speed * KMH_TO_MPS < 0.3:
            whys.append('%s: not moving forward (%.2f km/h)' % (label, speed or 0.0))
            continue
        if not wheelbase:
            whys.append('%s: no wheelbase (the status carries none; give --vehicle-profile)' % label)
            continue
        rate, se = fit
        heading = math.degrees(rate) * (s[-1].t - s[0].t)
        if abs(heading) < th.min_heading_deg:
            whys.append('%s: the heading changed %.2f deg in the steady window (at least %.1f needed)'
                        % (label, heading, th.min_heading_deg))
            continue
        v = speed * KMH_TO_MPS
        angles = [wheel_angle(r, v, wheelbase) for r in (rate - se, rate, rate + se)]
        delta = math.degrees(angles[1])
        sigma = abs(math.degrees(angles[2] - angles[0])) / 2.0
        out.append(GainPhase(ph.steer, delta, sigma, abs(delta) / abs(ph.steer), sigma / abs(ph.steer)))
    if not out:
        return Gain((), None, None, (), None, '; '.join(whys) or 'no steering phase')
    floor = 0.01        # deg: a noiseless simulator fits exactly; weights stay finite
    w = [1.0 / max(p.sigma_full_deg, floor) ** 2 for p in out]
    full = sum(wi * p.full_scale_deg for wi, p in zip(w, out)) / sum(w)
    n = len(out)
    spread = math.sqrt(sum((p.full_scale_deg - full) ** 2 for p in out) / (n - 1)) if n > 1 else 0.0
    sigma = math.sqrt(1.0 / sum(w) + spread ** 2 / n)
    mags = {}
    for p in out:
        mags.setdefault(round(abs(p.steer), 3), []).append(p.full_scale_deg)
    by_mag = tuple(sorted((m, sum(v) / len(v)) for m, v in mags.items()))
    linear = None
    if len(by_mag) > 1:
        values = [v for _, v in by_mag]
        linear = (max(values) - min(values)) / full <= LINEAR_WITHIN
    return Gain(tuple(out), full, sigma, by_mag, linear, '; '.join(whys))


# ----------------------------------------------------------------------------- profiles

class Comparison(NamedTuple):
    """A verdict against a version profile, and the bridge parameters that follow."""

    ctrl_agrees: Optional[bool]     # None: not measured
    status_agrees: Optional[bool]
    measured: "sim_versions.SimVersion"   # the base profile with the measured sides
    signs: "sim_versions.BridgeSigns"     # bridge_signs(measured): ghost stays the profile's


def compare(base, verdict: Verdict) -> Comparison:
    """``verdict`` against profile ``base`` (a :class:`~morai_bridge.configuration.sim_versions.SimVersion`);
    an unmeasured side keeps the profile's value."""
    ctrl = verdict.ctrl_steer_positive or base.ctrl_steer_positive
    status = verdict.status_steer_positive or base.status_steer_positive
    measured = base._replace(ctrl_steer_positive=ctrl, status_steer_positive=status)
    return Comparison(None if verdict.ctrl_steer_positive is None else ctrl == base.ctrl_steer_positive,
                      None if verdict.status_steer_positive is None else status == base.status_steer_positive,
                      measured, sim_versions.bridge_signs(measured))


def measured_version(base, verdict: Verdict, date: str, detail: Dict[str, str] = None):
    """The profile to write: ``base`` with the measured sides, their sources saying
    "measured by morai_check_signs on <date>" (plus ``detail[key]``) and confidence "measured".
    Raises ValueError for an inconclusive verdict (nothing is written then)."""
    if not verdict.conclusive:
        raise ValueError('inconclusive measurement: no profile is written')
    detail = detail or {}
    sources, confidence = dict(base.sources), dict(base.confidence)
    for key in ('ctrl_steer_positive', 'status_steer_positive'):
        text = 'measured by morai_check_signs on %s' % date
        if detail.get(key):
            text += ': ' + detail[key]
        sources[key] = text
        confidence[key] = 'measured'
    ghost = sources.get('ghost_steer_positive', '')
    sources['ghost_steer_positive'] = ('Not measurable by driving (morai_check_signs kept profile %s): %s'
                                       % (base.name, ghost)).rstrip(': ')
    name = base.name if base.name.endswith('-measured') else base.name + '-measured'
    description = ('Profile %s with the steering sides measured by morai_check_signs on %s.%s'
                   % (base.name, date, (' ' + base.description) if base.description else ''))
    return compare(base, verdict).measured._replace(
        name=name, description=description, sources=tuple(sorted(sources.items())),
        confidence=tuple(sorted(confidence.items())), path='')
