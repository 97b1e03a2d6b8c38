#!/usr/bin/python3
"""Record the paths that the closed-loop client tests follow (test/data/paths/<route>.txt).

A route is a scripted command sequence: legs of (seconds, speed in km/h, turn radius in m: + left,
- right, 0 straight), the radius turned into the front-wheel angle of the emulated vehicle, sent as
velocity-mode Ego Ctrl Cmd datagrams over a real UDP socket to the simulator emulator, which runs in
this process in deterministic mode (fixed 20 ms steps, stepped by hand, no thread, no stream sent
anywhere).  Between legs the wheel angle turns linearly over STEER_RAMP_S, as a driver turns the wheel;
after the last leg (speed 0) the emulator runs on until the ego stands.  The ego's position is written
every time it has moved SPACING_M from the last written point, and once more where it came to rest: one
point a line, `x<TAB>y<TAB>z` in metres (map frame), the layout of the path files public
MORAI ROS examples record from /Ego_topic and read back with `line.split()`.

The emulator has no randomness in deterministic mode, so the same script gives the same file: the unit
test test/unit/project/test_recorded_paths.py records every route again and compares.

Usage, from a sourced workspace (or with src/ on PYTHONPATH; no ROS needed):

    /usr/bin/python3 tools/record_path.py                 # every route into test/data/paths/
    /usr/bin/python3 tools/record_path.py sedan_course --out /tmp
"""
import math
import os
import socket
import sys
from typing import NamedTuple, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'src'))

from morai_bridge.configuration.params import Param, command_line  # noqa: E402
from morai_bridge.configuration.vehicle_profiles import load_profile  # noqa: E402
from morai_bridge.emu.sim import LISTEN_PORTS, SEND_PORTS, SimConfig, SimEmulator  # noqa: E402
from morai_bridge.wire import udp  # noqa: E402
from morai_bridge.wire.enums import Gear  # noqa: E402

PATHS = os.path.join(ROOT, 'test', 'data', 'paths')
VEHICLES = os.path.join(ROOT, 'config', 'vehicles')
SPACING_M = 0.5          # a point every this many metres of travel
STEER_RAMP_S = 1.0       # the wheel turns from one leg's angle to the next in this time
REST_MPS = 1e-3          # the ego stands below this speed...
REST_S = 1.0             # ...for this long after the last leg: the recording ends
VELOCITY_MODE = 2        # Ego Ctrl Cmd cmd_type: velocity [km/h] and steering


class Route(NamedTuple):
    """A recorded path: the vehicle profile the emulator drives it with (None: the emulator's own
    defaults, MORAI's sedan) and the legs (seconds, km/h, turn radius m: + left, - right, 0 straight)."""
    doc: str
    vehicle: str
    legs: Tuple[Tuple[float, float, float], ...]


def wheel_deg(radius_m, wheelbase_m):
    """The front-wheel angle [deg] of a circle of ``radius_m`` (+ left, - right, 0 straight) for a
    kinematic bicycle with ``wheelbase_m``, at the rear axle (the emulator's reference point is ahead
    of it, so its circle is a little larger)."""
    if radius_m == 0.0:
        return 0.0
    return math.copysign(math.degrees(math.atan(wheelbase_m / abs(radius_m))), radius_m)


ROUTES = {
    # the car clients (pedal and velocity mode): ~510 m with two right angles, an S bend and a hairpin
    'sedan_course': Route(
        'MORAI default sedan, recorded at 36 km/h: straight, left 90 deg (R 30 m), right 90 deg (R 25 m), '
        'S bend (R 40 m), left hairpin (R 22 m), straight, stop',
        None,
        ((12.0, 36.0, 0.0),
         (4.7, 36.0, 30.0),
         (4.5, 36.0, 0.0),
         (3.9, 36.0, -25.0),
         (4.0, 36.0, 0.0),
         (3.0, 36.0, 40.0),
         (3.0, 36.0, -40.0),
         (5.0, 36.0, 0.0),
         (6.9, 36.0, 22.0),
         (5.0, 36.0, 0.0),
         (0.0, 0.0, 0.0))),
    # the ERP-42 client through the serial path: ~210 m of tighter turns at walking-cart speeds
    'erp42_course': Route(
        'ERP-42 geometry (config/vehicles/erp42.yaml), recorded at 12 km/h: straight, left 90 deg (R 8 m), '
        'right 90 deg (R 7 m), left U-turn (R 10 m), S bend (R 12 m), straight, stop',
        'erp42',
        ((11.0, 12.0, 0.0),
         (3.8, 12.0, 8.0),
         (5.0, 12.0, 0.0),
         (3.3, 12.0, -7.0),
         (5.0, 12.0, 0.0),
         (9.4, 12.0, 10.0),
         (5.0, 12.0, 0.0),
         (3.5, 12.0, -12.0),
         (3.5, 12.0, 12.0),
         (14.0, 12.0, 0.0),
         (0.0, 0.0, 0.0))),
}


def vehicle_overrides(name):
    """The emulator options that give its ego a vehicle profile's geometry ({} for None: its defaults).
    A profile without overhangs gets them split evenly (the ERP-42's are not known)."""
    if name is None:
        return {}
    p = load_profile(name, VEHICLES)
    out = {'wheelbase': p.wheelbase_m, 'max_steer_deg': p.max_steering_deg}
    if p.length_m is not None:
        out['length'] = p.length_m
        rear = p.rear_overhang_m
        if rear is None:
            rear = (p.length_m - p.wheelbase_m) / 2.0
        out['rear_overhang'] = rear
    if p.width_m is not None:
        out['width'] = p.width_m
    if p.height_m is not None:
        out['height'] = p.height_m
    return out


def _config(vehicle):
    """Deterministic, only the ctrl-cmd port bound (ephemeral), nothing sent."""
    kw = {field: 0 for field, _, _ in LISTEN_PORTS.values()}
    kw['ctrl_cmd_port'] = -1
    kw.update({field: 0 for field, _, _ in SEND_PORTS.values()})
    kw.update(deterministic=True, initial_gear=int(Gear.D))
    kw.update(vehicle_overrides(vehicle))
    return SimConfig(**kw)


def command_at(legs, t, wheelbase_m):
    """(km/h, wheel deg + left) the script commands at ``t`` s after its start: the leg's speed, and
    its angle reached linearly from the previous leg's over STEER_RAMP_S."""
    start, prev_angle = 0.0, 0.0
    for seconds, kmh, radius in legs:
        angle = wheel_deg(radius, wheelbase_m)
        if t < start + seconds or seconds == 0.0:
            ramp = min(1.0, (t - start) / STEER_RAMP_S)
            return kmh, prev_angle + (angle - prev_angle) * ramp
        start += seconds
        prev_angle = angle
    return legs[-1][1], wheel_deg(legs[-1][2], wheelbase_m)


def record(route):
    """The points [(x, y, z), ...] of ``route``, driven in the emulator."""
    sim = SimEmulator(_config(route.vehicle))
    sign = 1.0 if sim.version.ctrl_steer_positive == 'left' else -1.0
    max_steer = sim.config.max_steer_deg
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    script_s = sum(leg[0] for leg in route.legs)
    try:
        points, sent, rest_steps, step = [], None, 0, 0
        while rest_steps * sim.config.step_s < REST_S:
            t = step * sim.config.step_s
            kmh, angle = command_at(route.legs, t, sim.config.wheelbase)
            cmd = (round(kmh, 6), round(sign * angle / max_steer, 6))
            if cmd != sent:
                _send(sim, sock, cmd)
                sent = cmd
            else:
                sim.step()
            step += 1
            e = sim.snapshot().ego
            here = (e.x, e.y, e.z)
            if not points or math.dist(here[:2], points[-1][:2]) >= SPACING_M:
                points.append(here)
            standing = t > script_s and abs(e.speed_kmh) / 3.6 < REST_MPS
            rest_steps = rest_steps + 1 if standing else 0
        if math.dist(here[:2], points[-1][:2]) > 1e-6:
            points.append(here)
        return points
    finally:
        sock.close()
        sim.close()


def _send(sim, sock, cmd):
    """One velocity-mode Ego Ctrl Cmd, handled (on the loopback interface it is there as soon as
    sendto returns; if not, we wait for it), then one step."""
    kmh, steer = cmd
    before = sim.snapshot().counters['ctrl_cmd'].accepted
    sock.sendto(udp.encode(udp.make(udp.EgoCtrlCmd, ctrl_mode=2, gear=int(Gear.D), cmd_type=VELOCITY_MODE,
                                    velocity=kmh, acceleration=0.0, accel=0.0, brake=0.0, steer=steer)),
                ('127.0.0.1', sim.ports['ctrl_cmd']))
    accepted = lambda s: s.counters['ctrl_cmd'].accepted > before  # noqa: E731
    sim.poll(0.0)
    if not accepted(sim.snapshot()) and not sim.wait_for(accepted, 5.0):
        raise RuntimeError(f'the emulator did not accept the command {cmd}')
    sim.step()


def path_text(points):
    """The file's text: `x<TAB>y<TAB>z` a line, millimetres."""
    return ''.join(f'{x:.3f}\t{y:.3f}\t{z:.3f}\n' for x, y, z in points)


def read_path(path):
    """[(x, y, z), ...] of a path file (any white space between the numbers)."""
    with open(path) as f:
        return [tuple(float(v) for v in line.split()[:3]) for line in f if line.strip()]


def length_m(points):
    return sum(math.dist(a[:2], b[:2]) for a, b in zip(points, points[1:]))


def main(argv=None):
    ap = command_line([
        Param('routes', [], 'routes to record: %s (default: all)' % ', '.join(sorted(ROUTES)), positional=True,
              nargs='*'),
        Param('out', PATHS, 'folder of the path files (default: test/data/paths)', metavar='OUT'),
    ], description=__doc__.split('\n\n')[0])
    args = ap.parse_args(argv)
    unknown = sorted(set(args.routes) - set(ROUTES))
    if unknown:
        ap.error(f"no route {', '.join(unknown)} (known: {', '.join(sorted(ROUTES))})")
    os.makedirs(args.out, exist_ok=True)
    for name in args.routes or sorted(ROUTES):
        points = record(ROUTES[name])
        out = os.path.join(args.out, name + '.txt')
        with open(out, 'w') as f:
            f.write(path_text(points))
        print(f'{out}: {len(points)} points, {length_m(points):.1f} m ({ROUTES[name].doc})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
