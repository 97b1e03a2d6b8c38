"""Traffic lights and intersection controllers of the simulator emulator.

Both run on the emulator's simulated clock (integer nanoseconds since the
emulator started), so they pause with the simulation and are deterministic.

Traffic lights cycle through a *plan*: a list of ``(status, seconds)`` phases,
status being the wire bit set (1 red, 4 yellow, 16 green, 32 green-left
arrow; spec 4.4).  A light's phase at elapsed time t is found at
``(t + offset_s) mod cycle``.  Default plans per light type (50 s cycles):

====  ==============  ======================================================
type  heads           default plan
====  ==============  ======================================================
0     R-Y-G           green 22 s, yellow 3 s, red 25 s
1     R-Y-GLeft       red + green-left 22 s, yellow 3 s, red 25 s
2     R-Y-GLeft-G     green 17 s, green + green-left 5 s, yellow 3 s, red 25 s
====  ==============  ======================================================

A Set TrafficLight command forces a light's status for ``hold_s`` seconds of
simulated time (0 = until the next Set); status -1 releases it at once.

Intersection controllers (``#IntStatus$``) cycle through their own plan of
``(status, seconds)``; the status values of the real simulator are not
documented, the emulator's default intersection 7 reports 1 while the first
approach has green (0-25 s of the light cycle) and 2 during the second.  Set
Intersection Status jumps to a status with a given elapsed time; a status that
is not in the plan is held for ``UNPLANNED_PHASE_S`` and the plan then restarts
at its first phase.
"""

from typing import NamedTuple, Optional, Sequence, Tuple

from morai_bridge.wire.enums import TrafficLightBit, TrafficLightType
from morai_bridge.wire.units import NS

__all__ = ["TL_RED", "TL_YELLOW", "TL_GREEN", "TL_LEFT", "DEFAULT_PLANS", "LightSpec",
           "IntersectionSpec", "DEFAULT_LIGHTS", "DEFAULT_INTERSECTIONS", "TrafficLight",
           "Intersection", "UNPLANNED_PHASE_S", "check_plan"]

# plain ints of wire.enums.TrafficLightBit
TL_RED, TL_YELLOW, TL_GREEN, TL_LEFT = (
    int(TrafficLightBit.RED), int(TrafficLightBit.YELLOW), int(TrafficLightBit.GREEN),
    int(TrafficLightBit.GREEN_LEFT))
_RYG, _RYG_LEFT, _RYG_LEFT_G = (int(TrafficLightType.RYG), int(TrafficLightType.RYG_LEFT),
                                int(TrafficLightType.RYG_LEFT_G))
UNPLANNED_PHASE_S = 10.0

DEFAULT_PLANS = {
    _RYG: ((TL_GREEN, 22.0), (TL_YELLOW, 3.0), (TL_RED, 25.0)),
    _RYG_LEFT: ((TL_RED | TL_LEFT, 22.0), (TL_YELLOW, 3.0), (TL_RED, 25.0)),
    _RYG_LEFT_G: ((TL_GREEN, 17.0), (TL_GREEN | TL_LEFT, 5.0), (TL_YELLOW, 3.0), (TL_RED, 25.0)),
}


class LightSpec(NamedTuple):
    id: str                                   # 12-character id, e.g. C119BS010007
    type: int = _RYG_LEFT_G                   # traffic_light_type
    offset_s: float = 0.0                     # phase offset into the cycle
    plan: Tuple[Tuple[int, float], ...] = ()  # () = DEFAULT_PLANS[type]


class IntersectionSpec(NamedTuple):
    index: int
    plan: Tuple[Tuple[int, float], ...] = ((1, 25.0), (2, 25.0))
    offset_s: float = 0.0


DEFAULT_LIGHTS = (
    LightSpec("C119BS010007", _RYG_LEFT_G, 0.0),
    LightSpec("C119BS010008", _RYG_LEFT_G, 25.0),
    LightSpec("C119BS010021", _RYG, 0.0),
    LightSpec("C119BS010022", _RYG, 25.0),
)
DEFAULT_INTERSECTIONS = (IntersectionSpec(7),)


def check_plan(plan: Sequence, where: str) -> Tuple[Tuple[int, float], ...]:
    """Validate a ``[(status, seconds), ...]`` plan; ValueError names ``where``."""
    out = []
    if not isinstance(plan, (list, tuple)) or not plan:
        raise ValueError(f"{where}: a plan is a non-empty list of [status, seconds]")
    for k, phase in enumerate(plan):
        if (not isinstance(phase, (list, tuple)) or len(phase) != 2
                or not isinstance(phase[0], int) or isinstance(phase[0], bool)
                or not isinstance(phase[1], (int, float)) or isinstance(phase[1], bool)):
            raise ValueError(f"{where}[{k}]: expected [status (int), seconds (number)], "
                             f"got {phase!r}")
        if not -32768 <= phase[0] <= 32767:
            raise ValueError(f"{where}[{k}]: status {phase[0]} does not fit int16")
        if not phase[1] > 0:
            raise ValueError(f"{where}[{k}]: duration must be > 0 s, got {phase[1]!r}")
        out.append((int(phase[0]), float(phase[1])))
    return tuple(out)


def _ns(seconds: float) -> int:
    return int(round(seconds * NS))


class TrafficLight:
    """One light: plan + optional forced status.  Times are ns since emulator start."""

    def __init__(self, spec: LightSpec):
        self.id = spec.id
        self.type = spec.type
        plan = spec.plan or DEFAULT_PLANS.get(spec.type) or DEFAULT_PLANS[_RYG_LEFT_G]
        self.plan = tuple((s, _ns(d)) for s, d in plan)
        self.cycle = sum(d for _, d in self.plan)
        self.offset = _ns(spec.offset_s)
        self.forced: Optional[int] = None
        self.forced_until: Optional[int] = None   # None with forced set = indefinitely

    def planned(self, t: int) -> int:
        pos = (t + self.offset) % self.cycle
        for status, duration in self.plan:
            if pos < duration:
                return status
            pos -= duration
        return self.plan[-1][0]  # pragma: no cover - rounding guard

    def status(self, t: int) -> int:
        if self.forced is not None:
            if self.forced_until is None or t < self.forced_until:
                return self.forced
            self.forced = self.forced_until = None
        return self.planned(t)

    def force(self, status: int, t: int, hold_s: float) -> None:
        if status == -1:
            self.forced = self.forced_until = None
            return
        self.forced = status
        self.forced_until = t + _ns(hold_s) if hold_s > 0 else None


class Intersection:
    """An intersection controller stepping through its plan."""

    def __init__(self, spec: IntersectionSpec):
        self.index = spec.index
        self.plan = tuple((s, _ns(d)) for s, d in spec.plan)
        self.phase = 0
        self.unplanned: Optional[Tuple[int, int]] = None  # (status, duration) of a Set
        self.in_state = 0
        self.advance(_ns(spec.offset_s))

    @property
    def status(self) -> int:
        return self.unplanned[0] if self.unplanned else self.plan[self.phase][0]

    @property
    def time_s(self) -> float:
        return self.in_state / NS

    def _duration(self) -> int:
        return self.unplanned[1] if self.unplanned else self.plan[self.phase][1]

    def advance(self, dt: int) -> None:
        self.in_state += dt
        while self.in_state >= self._duration():
            self.in_state -= self._duration()
            if self.unplanned is not None:
                self.unplanned = None
                self.phase = 0
            else:
                self.phase = (self.phase + 1) % len(self.plan)

    def set(self, status: int, elapsed_s: float) -> None:
        elapsed = min(max(0, _ns(elapsed_s)), 3600 * NS)  # bounded work per Set
        for k, (s, _) in enumerate(self.plan):
            if s == status:
                self.phase, self.unplanned = k, None
                break
        else:
            self.unplanned = (status, _ns(UNPLANNED_PHASE_S))
        self.in_state = 0
        self.advance(elapsed)
