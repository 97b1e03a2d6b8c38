"""Emulated pedestrians (emu/sim/actors.py) report their real walking velocity (fidelity item 9).

The sample pedestrian walks at 4 km/h with a sideways drift of up to 0.3 m.  Its
Object Info velocity must be that walk: magnitude 4 km/h (to float32), in the
frame the emulator reports (``velocity_frame``: by default its own body frame,
x along its heading, so (4 km/h, 0); in the map frame the derivative of the
reported position), continuous from packet to packet (only the turn at each
end of its path reverses it), and never the numerical derivative of a random
walk (which jumped between about -15 and +10 km/h sideways at 50 Hz).
"""

import math
import socket
import struct

import pytest

from morai_bridge.emu.sim.actors import Actor
from morai_bridge.emu.sim.scenario import OBJ_PEDESTRIAN, ActorSpec, PathSpec, load_scenario
from morai_bridge.emu.sim import LISTEN_PORTS, SEND_PORTS, SimConfig, SimEmulator
from morai_bridge.emu.sim.config import DEFAULT_SCENARIO_DIR
from morai_bridge.wire import udp
from morai_bridge.wire.units import KMH_TO_MPS, MPS_TO_KMH

STEP = 0.02                      # the emulator's step, s
F32_EPS = 2.0 ** -23             # float32 relative precision


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def walk(actor, steps, dt=STEP):
    """[(x, y, vx, vy, offset)] of ``actor`` after each of ``steps`` updates (SI units)."""
    out = []
    for _ in range(steps):
        actor.update(dt)
        out.append((actor.x, actor.y, actor.vx, actor.vy, actor.offset))
    return out


def check_walk(samples, speed, direction, wander, dt=STEP):
    """Magnitude, frame, continuity and bounds of a back-and-forth walk along ``direction``."""
    ux, uy = direction
    turns = 0
    for k, (x, y, vx, vy, offset) in enumerate(samples):
        assert math.hypot(vx, vy) == pytest.approx(speed, rel=1e-9), k
        assert abs(offset) <= wander + 1e-9, (k, offset)
        if k == 0:
            continue
        px, py, pvx, pvy, _ = samples[k - 1]
        along, p_along = vx * ux + vy * uy, pvx * ux + pvy * uy
        if along * p_along < 0:          # the turn at an end of the path
            turns += 1
            assert abs(along + p_along) < 0.1 * speed, k
            continue
        # continuous: bounded acceleration (1 m/s^2 is plenty for a walker)
        assert math.hypot(vx - pvx, vy - pvy) <= 1.0 * dt, (k, (pvx, pvy), (vx, vy))
        # map frame: the velocity is the derivative of the position
        assert (x - px) / dt == pytest.approx(vx, abs=0.02 * speed), k
        assert (y - py) / dt == pytest.approx(vy, abs=0.02 * speed), k
    return turns


def test_sample_pedestrian_walks_at_its_speed_over_a_long_run():
    sc = load_scenario(DEFAULT_SCENARIO_DIR, "sample")
    spec = {p.id: p for p in sc.pedestrians}[101]
    assert spec.speed_kmh == 4.0 and spec.wander_m == 0.3
    (x0, y0), (x1, y1) = spec.path.a, spec.path.b
    length = math.hypot(x1 - x0, y1 - y0)
    direction = ((x1 - x0) / length, (y1 - y0) / length)
    samples = walk(Actor(spec, seed=0), 30000)          # 10 minutes at 50 Hz
    turns = check_walk(samples, 4.0 * KMH_TO_MPS, direction, 0.3)
    assert turns >= 30                  # 18 m at 4 km/h: a turn every 16 s
    # it does drift sideways, smoothly
    offsets = [s[4] for s in samples]
    assert max(offsets) > 0.1 and min(offsets) < -0.1


@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("speed_kmh,wander", [(1.0, 2.0), (4.0, 0.3), (6.0, 1.0), (4.0, 0.0)])
def test_any_walker_reports_its_speed(seed, speed_kmh, wander):
    spec = ActorSpec(7, OBJ_PEDESTRIAN, (0.5, 0.5, 1.75), 0.0, 0.0, 0.0, 0.0, speed_kmh,
                     PathSpec("line", (0.0, 0.0), (-6.0, 8.0)), wander)
    samples = walk(Actor(spec, seed=seed), 6000)
    check_walk(samples, speed_kmh * KMH_TO_MPS, (-0.6, 0.8), wander)


def object_records(frame, obj_id=101, seconds=30):
    """Every Object Info record of ``obj_id`` the emulator sends in ``seconds`` of the sample scenario,
    with ``velocity_frame`` ``frame`` (None: the default)."""
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    rx.bind(("127.0.0.1", 0))
    rx.settimeout(0.2)
    kw = {field: -1 for field, _, _ in LISTEN_PORTS.values()}
    for name, (field, _, _) in SEND_PORTS.items():
        kw[field] = rx.getsockname()[1] if name == "object_info" else 0
    if frame is not None:
        kw["velocity_frame"] = frame
    sim = SimEmulator(SimConfig(deterministic=True, scenario="sample", **kw))
    records = []
    try:
        for _ in range(seconds):                 # 50 steps = 1 s
            sim.step(50)
            got = 0
            while got < 50:
                msg = udp.decode(rx.recv(65535))
                got += 1
                records += [o for o in msg.objects if o.obj_id == obj_id]
    finally:
        sim.close()
        rx.close()
    assert len(records) == 50 * seconds
    return records


def to_map(o):
    """(vx, vy) km/h of a body-frame record, turned by its heading into the map frame."""
    h = math.radians(o.heading)
    return o.vel_x * math.cos(h) - o.vel_y * math.sin(h), o.vel_x * math.sin(h) + o.vel_y * math.cos(h)


def check_records(records, map_velocity):
    """Magnitude 4 km/h, heading = direction of the walk, continuity, and the map-frame velocity
    (``map_velocity(record)``) equal to the derivative of the reported position."""
    speed = 4.0
    previous = None
    for k, o in enumerate(records):
        assert o.obj_type == 0
        v = math.hypot(o.vel_x, o.vel_y)
        assert abs(v - speed) <= 4 * F32_EPS * speed, (k, o.vel_x, o.vel_y)
        vx, vy = map_velocity(o)
        # the drift is slow: the sideways (x) velocity of this north-south walker stays small
        assert abs(vx) < 0.5 * speed, (k, vx)
        # heading = direction of the walk (deg, map frame, counter-clockwise from East)
        assert math.radians(o.heading) == pytest.approx(math.atan2(vy, vx), abs=1e-5)
        if previous is not None:
            pvx, pvy = map_velocity(previous)
            if vy * pvy > 0:
                assert math.hypot(vx - pvx, vy - pvy) <= 1.0 * STEP * MPS_TO_KMH, k
                # the derivative of the position (float32 positions: 1e-3 m of a 20 ms step)
                mid = ((vx + pvx) / 2, (vy + pvy) / 2)
                assert (o.pos_x - previous.pos_x) / STEP * MPS_TO_KMH == pytest.approx(mid[0], abs=0.3), k
                assert (o.pos_y - previous.pos_y) / STEP * MPS_TO_KMH == pytest.approx(mid[1], abs=0.3), k
        previous = o


def test_object_info_of_the_emulator_carries_the_walking_velocity_in_its_body_frame():
    """Through the emulator and the wire, at the defaults: every Object Info record of pedestrian
    101 carries (4 km/h, 0) along its own heading (the manual: ObjectStatus.velocity along the
    object's own x axis), which the heading turns into the walk on the map."""
    records = object_records(None)
    for k, o in enumerate(records):
        assert o.vel_x == pytest.approx(4.0, rel=4 * F32_EPS) and abs(o.vel_y) <= 4 * F32_EPS * 4.0, k
    check_records(records, to_map)
    assert f32(records[0].vel_x) == records[0].vel_x


def test_object_info_in_the_map_frame_is_the_walk_on_the_map():
    """``velocity_frame='map'``: the same walk as a map-frame vector."""
    records = object_records("map")
    check_records(records, lambda o: (o.vel_x, o.vel_y))
    assert f32(records[0].vel_y) == records[0].vel_y
