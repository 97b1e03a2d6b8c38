"""What the emulator sends (emu/sim/builders.py, emu/sim/packets.py), over real UDP sockets: the
status frames and units, objects, GPS and IMU, the packet variants and what differs per
simulator version."""

import json
import math

import pytest

from morai_bridge.emu.sim.ego import VehicleParams, wrap_deg
from morai_bridge.wire.udp import nmea
from morai_bridge.wire import udp
from sim_peers import scenario_load


# ----------------------------------------------------------------------------- ego dynamics

def test_status_velocity_is_km_h_in_the_body_frame_by_default(make_sim, rx):
    """Heading north at 36 km/h: the velocity along the vehicle's x axis, as the simulator sends it
    (docs/units.md: the real captures' signed speed equals vel_x, not the map-frame component)."""
    sim, client = make_sim(ego_yaw_deg=90.0)
    client.ctrl(cmd_type=2, velocity=36.0)
    sim.step(600)
    m = rx.messages(udp.EgoVehicleStatus)[-1]
    assert m.signed_vel == pytest.approx(36.0, abs=1e-4)
    assert m.vel_x == pytest.approx(36.0, abs=1e-3) and m.vel_y == pytest.approx(0.0, abs=1e-3)
    assert m.yaw == pytest.approx(90.0) and m.pos_y > 50


def test_signed_speed_equals_vel_x_while_turning(make_sim, rx):
    """At the defaults, in a steady left turn: every status' signed_vel equals vel_x (the same float32),
    the side-slip of the box centre shows as vel_y > 0 (left) and the centripetal acceleration as
    acc_y = v x yaw rate > 0; the map-frame reading (the vector's component along the heading) misses
    the signed speed, as it misses it in the real captures."""
    sim, client = make_sim(ego_yaw_deg=154.8)
    client.ctrl(cmd_type=2, velocity=20.0, steer=0.5)
    sim.step(400)                                             # 20 km/h reached (+1 m/s^2)
    rx.raw()
    sim.step(500)                                             # 10 s: a whole circle
    msgs = rx.messages(udp.EgoVehicleStatus)
    assert len(msgs) == 500
    for m in msgs:
        assert m.signed_vel == m.vel_x and m.vel_x == pytest.approx(20.0 * math.cos(math.atan(
            VehicleParams().rear_to_center * math.tan(math.radians(0.5 * 36.25)) / VehicleParams().wheelbase)),
            rel=1e-6)
        assert m.vel_y > 1.0 and m.acc_x == pytest.approx(0.0, abs=1e-6)
        assert m.acc_y == pytest.approx(math.hypot(m.vel_x, m.vel_y) / 3.6 * math.radians(m.ang_vel_z), rel=1e-5)
    turned = sum(wrap_deg(b.yaw - a.yaw) for a, b in zip(msgs, msgs[1:]))
    assert turned > 360.0
    miss = [m.vel_x * math.cos(math.radians(m.yaw)) + m.vel_y * math.sin(math.radians(m.yaw)) - m.signed_vel
            for m in msgs]
    assert math.sqrt(sum(d * d for d in miss) / len(miss)) > 0.5 * msgs[0].signed_vel


def test_velocity_frame_map_reports_the_map_vector(make_sim, rx):
    """``velocity_frame='map'`` (kept to reproduce a client that assumed it): heading north, the
    vector points north; signed_vel stays the forward speed."""
    sim, client = make_sim(ego_yaw_deg=90.0, velocity_frame="map")
    client.ctrl(cmd_type=2, velocity=36.0)
    sim.step(600)
    m = rx.messages(udp.EgoVehicleStatus)[-1]
    assert m.signed_vel == pytest.approx(36.0, abs=1e-4)
    assert m.vel_x == pytest.approx(0.0, abs=1e-3) and m.vel_y == pytest.approx(36.0, abs=1e-3)
    client.ctrl(cmd_type=2, velocity=36.0, steer=0.5)
    sim.step(100)
    rx.raw()
    sim.step(1)
    m = rx.messages(udp.EgoVehicleStatus)[-1]
    h = math.radians(m.yaw)
    forward = m.vel_x * math.cos(h) + m.vel_y * math.sin(h)     # the map vector turned into the body frame
    assert forward == pytest.approx(m.signed_vel, rel=1e-5) and m.vel_x < -1.0


# ----------------------------------------------------------------------------- world

def test_scenario_objects_are_sorted_nearest_first(make_sim, rx):
    sim, client = make_sim(only=("object_info", "sim_status"))
    client.send("scenario_load", scenario_load("sample"))
    sim.step(25)
    got = rx.messages()
    info = [m for m in got if isinstance(m, udp.ObjectInfo)][-1]
    ego = sim.snapshot().ego
    dist = [math.hypot(r.pos_x - ego.x, r.pos_y - ego.y) for r in info.objects]
    assert dist == sorted(dist)
    assert len(info.objects) == 7
    assert sorted(r.obj_id for r in info.objects) == [1, 2, 3, 101, 102, 201, 202]
    types = {r.obj_id: r.obj_type for r in info.objects}
    assert types[1] == 1 and types[101] == 0 and types[201] == 2
    npc1 = next(r for r in info.objects if r.obj_id == 1)
    assert npc1.vel_x == pytest.approx(30.0, abs=1e-3) and npc1.link_id == "A219BS010391"
    assert npc1.heading == 0.0
    status = [m for m in got if isinstance(m, udp.SimStatus)][-1]
    assert (status.command, status.command_option, status.result) == (0x0013, "sample/31", 1)
    assert sim.snapshot().scenario == "sample"


def test_object_info_holds_the_20_nearest(make_sim, rx, tmp_path):
    obstacles = [{"id": k, "position": [3.0 + 2.0 * k, 5.0]} for k in range(1, 26)]
    (tmp_path / "many.json").write_text(json.dumps({"obstacles": obstacles[::-1]}))
    sim, _ = make_sim(only=("object_info",), scenario_dir=str(tmp_path))
    assert sim.load_scenario("many") == 1
    sim.step(1)
    info = rx.messages(udp.ObjectInfo)[-1]
    assert [r.obj_id for r in info.objects] == list(range(1, 21))
    assert len(sim.snapshot().objects) == 25


# ----------------------------------------------------------------------------- GPS / IMU

def test_gps_nmea_and_imu(make_sim, rx):
    sim, client = make_sim(only=("gps", "imu"), map="R_KR_PG_K-City")
    sim.step(1)
    raw = rx.raw()
    text = [d for d in raw if d.startswith(b"$")]
    assert [d[:6] for d in text] == [b"$GPGGA", b"$GPRMC"]
    assert all(d.endswith(b"\r\n") and d.count(b"$") == 1 for d in text)
    gga, rmc = (nmea.parse(d) for d in text)
    # map origin = K-City UTM offset (zone 52N)
    assert gga.latitude == pytest.approx(37.229324, abs=2e-6)
    assert gga.longitude == pytest.approx(126.773298, abs=2e-6)
    assert rmc.date.year == 1970 and rmc.status == "A"          # deterministic clock from 0
    imu = [udp.decode(d) for d in raw if d.startswith(b"#IMUData$")][0]
    assert imu.ori_w == pytest.approx(1.0) and imu.lin_acc_z == pytest.approx(9.80665)
    # 100 m north moves the latitude by ~0.0009 deg
    client.ctrl(cmd_type=2, velocity=36.0)
    client.send("ego_ghost", udp.make(udp.EgoGhostCmd, position_y=100.0, rotation_z=90.0,
                                      speed=36.0))
    rx.raw()
    sim.step(5)
    rmc = [nmea.parse(d) for d in rx.raw() if d.startswith(b"$GPRMC")][-1]
    assert rmc.latitude - gga.latitude == pytest.approx(100.3 / 111000, rel=0.01)
    # 25.S4 (the default): 10 m/s x 0.00053995 prints 0.0 knots (heven report); course = heading north
    assert rmc.speed_knots == 0.0
    assert rmc.course_deg == pytest.approx(0.0, abs=0.1)


@pytest.mark.parametrize("version, knots, course", [
    ("24.R2", 10 / 0.514444, 0.0),          # a correct speed in knots (assumed: no moving 2024 capture)
    ("25.S4", 0.0, 0.0),                    # 10 m/s x 0.00053995 = 0.0054: "000.0"
])
def test_gps_rmc_speed_and_course_per_version(make_sim, rx, version, knots, course):
    """RMC as each version writes it: heading east-north-east while the ego drives north-east would
    tell heading from course; here the ego drives north with heading north, course 0 either way,
    and reversing tells them apart (below)."""
    sim, client = make_sim(only=("gps",), sim_version=version)
    client.ctrl(cmd_type=2, velocity=36.0)
    client.send("ego_ghost", udp.make(udp.EgoGhostCmd, position_y=100.0, rotation_z=90.0, speed=36.0))
    sim.step(3)
    rmc = [nmea.parse(d) for d in rx.raw() if d.startswith(b"$GPRMC")][-1]
    assert rmc.speed_knots == pytest.approx(knots, abs=0.1)
    assert rmc.course_deg == pytest.approx(course, abs=0.1)


def test_gps_time_fraction_per_version(make_sim, rx):
    """24.R2 writes tenths (the 2024 capture: .5 .7 .9 at 5 Hz); 25.S4 the milliseconds unpadded
    (HHMMSS.{ms:D1}: 20 ms -> '.20', the heven report)."""
    for version, want in (("24.R2", b"000000.0"), ("25.S4", b"000000.20")):
        sim, client = make_sim(only=("gps",), sim_version=version)
        rx.raw()
        sim.step(1)                               # deterministic clock: 20 ms after 00:00:00
        gga = [d for d in rx.raw() if d.startswith(b"$GPGGA")][-1]
        assert gga.split(b",")[1] == want, (version, gga)


def test_gps_blackout_zone_sends_zero_position_with_a_fix(make_sim, rx, tmp_path):
    """Inside a scenario's gps_blackouts box the GPS sends 0000.0000,N,00000.0000,E while GGA still
    says quality 1 and RMC status A (AISW udp_bridge.py, heven report); outside, the position."""
    (tmp_path / "tunnel.json").write_text(json.dumps({
        "ego": {"position": [0.0, 0.0], "yaw_deg": 90.0},
        "gps_blackouts": [{"min": [-5.0, -5.0], "max": [5.0, 5.0]}]}))
    sim, client = make_sim(only=("gps",), scenario="tunnel", scenario_dir=str(tmp_path), map="R_KR_PG_K-City")
    sim.step(1)
    gga, rmc = [d for d in rx.raw() if d.startswith(b"$")][-2:]
    assert gga.split(b",")[2:7] == [b"0000.0000", b"N", b"00000.0000", b"E", b"1"]
    assert rmc.split(b",")[2:7] == [b"A", b"0000.0000", b"N", b"00000.0000", b"E"]
    client.send("ego_ghost", udp.make(udp.EgoGhostCmd, position_y=50.0, rotation_z=90.0))
    sim.step(5)                           # GPS at 10 Hz: due again within 5 steps of 20 ms
    gga = nmea.parse([d for d in rx.raw() if d.startswith(b"$GPGGA")][-1])
    assert gga.latitude == pytest.approx(37.2297, abs=1e-3)


def test_multi_ego_scene_sends_other_egos_as_type_minus_one(make_sim, rx):
    """config/scenarios/multi_ego.json: the two other egos in Object Info with obj_type -1 (MORAI's
    "Ego vehicle", ObjectStatus.msg of MORAI-ROS_morai_msgs 115255c) and their size; our own ego is
    not in the list; the NPC keeps type 1."""
    sim, client = make_sim(only=("object_info",), scenario="multi_ego")
    sim.step(1)
    m = [udp.decode(d) for d in rx.raw() if d.startswith(b"#MoraiObjInfo$")][-1]
    by_id = {r.obj_id: r for r in m.objects}
    assert set(by_id) == {2, 3, 10}
    assert (by_id[2].obj_type, by_id[3].obj_type, by_id[10].obj_type) == (-1, -1, 1)
    assert by_id[3].size_x == pytest.approx(4.635) and by_id[3].pos_x == pytest.approx(15.0)
    assert by_id[3].wheelbase == pytest.approx(3.0)


def test_imu_catch_up_burst(make_sim, rx):
    """imu_burst_every_s: the IMU datagram repeated back to back (same stamp and state), as 25.S4's
    scheduler sends it (heven report 6.6: packets under 2 ms apart with the same stamp)."""
    sim, client = make_sim(only=("imu",), imu_burst_every_s=0.1, imu_burst_copies=3)
    sim.step(10)                          # 0.2 s at 50 Hz: 10 datagrams + 2 bursts of 2 extra
    raw = [d for d in rx.raw() if d.startswith(b"#IMUData$")]
    assert len(raw) == 10 + 2 * 2
    repeats = sum(1 for a, b in zip(raw, raw[1:]) if a == b)
    assert repeats == 4


# ----------------------------------------------------------------------------- program, docs

@pytest.mark.parametrize("status_dl,objects_dl,collision_dl", [
    (216, 2120, 140), (152, 2128, 148), (132, 2120, 140), (94, 2128, 148)])
def test_other_packet_variants(make_sim, rx, status_dl, objects_dl, collision_dl):
    sim, client = make_sim(only=("ego_status", "object_info", "collision"),
                           ego_status_data_length=status_dl,
                           object_info_data_length=objects_dl,
                           collision_data_length=collision_dl)
    sim.load_scenario("obstacle_ahead")
    client.ctrl(cmd_type=3, acceleration=3.0)       # reaches the obstacle after ~3.4 s
    sim.step(200)
    got = rx.messages()
    status = [m for m in got if isinstance(m, udp.EgoVehicleStatus)]
    assert len(status) == 200 and {m.data_length for m in status} == {status_dl}
    assert status[-1].pos_x > 10.0 and status[-1].gear == 4
    assert (status[-1].sec is None) == (status_dl in (94, 132))
    assert {m.data_length for m in got if isinstance(m, udp.ObjectInfo)} == {objects_dl}
    hits = [m for m in got if isinstance(m, udp.CollisionData)]
    assert hits and {m.data_length for m in hits} == {collision_dl}
    assert hits[-1].records[0].obj_id == 1


# ----------------------------------------------------------------------------- simulator versions

def test_competition_status_withholds_position(make_sim, rx):
    """As the live 181-B competition status of 2026-10-01: data_length 152, position, vel_y/z and
    acceleration 0, vel_x the forward speed (equal to signed_vel), the rest filled."""
    sim, client = make_sim(only=("ego_status", "competition_status"), sim_version="25.S4.MolitComp03",
                           ego_x=30.0, ego_y=-5.0)
    client.ctrl(cmd_type=2, velocity=20.0, steer=0.2)
    sim.step(100)
    rx.raw()
    sim.step(1)
    msgs = rx.messages(udp.EgoVehicleStatus)
    full = [m for m in msgs if m.data_length == 200][-1]
    comp = [m for m in msgs if m.data_length == 152][-1]
    assert (comp.pos_x, comp.pos_y, comp.vel_y, comp.acc_x, comp.acc_y) == (0.0,) * 5
    assert full.pos_x != 0.0 and comp.vel_x == pytest.approx(full.signed_vel) and comp.vel_x > 5.0
    assert (comp.yaw, comp.steer, comp.size_x, comp.sec, comp.nsec) == (full.yaw, full.steer, full.size_x,
                                                                        full.sec, full.nsec)


@pytest.mark.parametrize("version,size", [("24.R2", 115), ("25.S4", 115), ("26.R1", 107)])
def test_imu_datagram_per_version(make_sim, rx, version, size):
    sim, _ = make_sim(only=("imu",), sim_version=version)
    sim.step(2)
    data = rx.raw()
    assert data and {len(d) for d in data} == {size}
    m = udp.decode(data[-1])
    assert (m.sec is None) == (size == 107) and m.lin_acc_z == pytest.approx(9.80665)


def test_collision_slots_per_version(make_sim, rx):
    """Nothing hit: 24.R2 sends five all-zero slots (the 2024 captures), 25.S4 obj_type -1 slots, the
    first with the ego's position (The-GIGACHA/2026_AISW)."""
    for version in ("24.R2", "25.S4"):
        sim, _ = make_sim(only=("collision",), sim_version=version, ego_x=12.5, ego_y=-3.0)
        sim.step(1)
        m = rx.messages(udp.CollisionData)[-1]
        if version == "24.R2":
            assert m.records == ()
        else:
            assert [r.obj_type for r in m.records] == [-1] * 5
            assert (m.records[0].pos_x, m.records[0].pos_y) == (12.5, -3.0)


# ----------------------------------------------------------------------------- the builders' table

def test_every_simulator_stream_has_one_builder_and_a_way_to_be_due():
    """builders.BUILDERS is keyed by the simulator -> user streams (the lock-step extension's reply
    aside), and each of them is due by a rate option or, an event stream, at every step."""
    from morai_bridge.emu.sim import builders
    from morai_bridge.wire.udp import streams
    assert set(builders.BUILDERS) == {s.name for s in streams.FROM_SIM if not s.extension}
    for s in streams.FROM_SIM:
        assert bool(s.emu_hz) != s.event, s.name
        assert callable(builders.BUILDERS.get(s.name)) or s.extension, s.name
