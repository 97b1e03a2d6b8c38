"""A MORAI scenario file on an MGeo map in the emulator (emu/sim/world.py with mgeo.py and
scenario.from_morai): test/data/morai's loop and scenario, both written here in MORAI's layouts."""
import math

import pytest

import helpers
from morai_bridge.emu.sim import SimEmulator
from morai_bridge.emu.sim.config import SimConfig
from morai_bridge.emu.sim.geo import utm_to_latlon
from morai_bridge.emu.sim.world import SPAWN_IDS

DATA = helpers.ROOT + '/test/data/morai'
SCENARIO = DATA + '/scenario_testloop.json'
MGEO = DATA + '/mgeo_testloop'


def quiet(**kw):
    """Every port off (the World is read through the emulator's snapshot)."""
    from morai_bridge.emu.sim.config import LISTEN_PORTS, SEND_PORTS
    ports = {f: 0 for f, _, _ in list(LISTEN_PORTS.values()) + list(SEND_PORTS.values())}
    return SimConfig(**dict(ports, deterministic=True, **kw))


@pytest.fixture
def sim():
    s = SimEmulator(quiet(map=MGEO, scenario=SCENARIO))
    yield s
    s.close()


def seconds(sim, t):
    sim.step(int(round(t / sim.world.step_s)))


def test_the_file_puts_the_ego_pedestrian_obstacle_and_vehicle_where_it_says(sim):
    snap = sim.snapshot()
    assert (snap.ego.x, snap.ego.y, snap.ego.yaw_deg, snap.ego.gear) == (30.0, 0.0, 0.0, 4)
    objs = {o.id: o for o in snap.objects}
    assert (objs[12].x, objs[12].y) == (60.0, 86.0)
    assert (objs[13].x, objs[13].y, objs[13].length, objs[13].width, objs[13].height) == (120.0, -8.0, 2.0, 2.0, 3.0)
    assert (objs[11].x, objs[11].y) == pytest.approx((100.0, 80.0))
    assert sim.world.origin == (302595.0, 4124145.0, 52)


def test_the_gps_is_the_map_origin_plus_the_antenna(tmp_path):
    with SimEmulator(quiet(map=MGEO, scenario=SCENARIO, gps_mount_x=1.0, gps_mount_z=1.2)) as s:
        w = s.world
        x, y, z = w.gps_antenna()
        assert (x, y, z) == pytest.approx((31.0, 0.0, 1.2))
        from morai_bridge.emu.sim import packets
        gga, _ = packets.gps(w.ego, w.time_ns, w.config, w.version, False, w.gps_antenna(), w.origin)
        g = gga                            # the sentence as the emulator sends it, decoded
        lat, lon = utm_to_latlon(302595.0 + 31.0, 4124145.0, 52)
        assert (g.latitude, g.longitude) == pytest.approx((lat, lon), abs=2e-6)   # 4 decimals of arc-minute


def test_a_vehicle_follows_its_link_and_the_next_ones(sim):
    seconds(sim, 34.0)                        # 10 km/h: 94 m, the 85 m to L05's end and into L06
    v = {o.id: o for o in sim.snapshot().objects}[11]
    a = sim.world.actors[11]
    assert a.cursor.link.idx == 'L06'
    assert math.hypot(v.x - 15.0, v.y - 65.0) == pytest.approx(15.0, abs=0.1)    # on the corner's arc
    seconds(sim, 120.0)
    assert a.cursor.link.idx in {'L01', 'L09', 'L02', 'L03', 'L04', 'L05', 'L06', 'L07', 'L08'}   # never the spur


def test_a_pedestrian_waits_for_the_ego_then_walks_once(sim):
    seconds(sim, 3.0)
    assert sim.world.actors[12].waiting and (sim.world.actors[12].x, sim.world.actors[12].y) == (60.0, 86.0)
    sim.world.ego.set_pose(60.0, 70.0, 0.0, 90.0)        # 16 m from it: within its activeDistance of 25 m
    seconds(sim, 1.0)
    p = sim.world.actors[12]
    assert not p.waiting and 60.5 < p.x < 62.0            # 4 km/h: 1.1 m in a second
    seconds(sim, 20.0)
    assert (p.x, p.y, p.vx) == pytest.approx((68.0, 86.0, 0.0))   # once: at its last waypoint, standing


def test_spawn_points_add_vehicles_on_their_link_up_to_their_maximum(sim):
    seconds(sim, 1.0)
    spawned = sorted(i for i in sim.world.actors if i >= SPAWN_IDS[0])
    assert spawned == [SPAWN_IDS[0]]
    first = sim.world.actors[SPAWN_IDS[0]]
    assert first.cursor.link.idx == 'L05' and first.speed == pytest.approx(10.0 / 3.6)
    seconds(sim, 40.0)
    assert sorted(i for i in sim.world.actors if i >= SPAWN_IDS[0]) == [SPAWN_IDS[0], SPAWN_IDS[0] + 1]


def test_lights_are_the_map_s_and_tl_list_starts_them_in_phase(sim):
    lights = {lt.id: lt for lt in sim.snapshot().lights}
    assert set(lights) == {'C119TL000001', 'C119TL000002'}
    # tlList: index 0 in phase 1 (yellow, 3 s), 2 s into it; index 1 in phase 0 (red), 2 s in
    assert (lights['C119TL000001'].status, lights['C119TL000002'].status) == (4, 1)
    seconds(sim, 1.5)
    assert {lt.id: lt.status for lt in sim.snapshot().lights}['C119TL000001'] == 1     # then red


def test_what_is_not_played_is_named(caplog):
    with caplog.at_level('WARNING'):
        SimEmulator(quiet(scenario=SCENARIO)).close()          # no MGeo map: links, spawns and tlList
    text = caplog.text
    for words in ('vehicle 11: drives on link L05, but no MGeo map', 'spawn point 14: no MGeo map',
                  'tlList: 2 lights', 'shadedAreaList: 1 element', 'object 13: no size known for DataID 40100001'):
        assert words in text, words


def test_a_malformed_map_or_scenario_stops_the_emulator_with_the_file_named(tmp_path):
    bad = tmp_path / 'scene.json'
    bad.write_text('{"egoVehicle": {"initPosition": {"rot": {}}}, "mapInfo": {"eastOffset": 1, "northOffset": 2}}')
    with pytest.raises(ValueError, match='scene.json: egoVehicle.initPosition.pos: missing'):
        SimEmulator(quiet(scenario=str(bad)))
    with pytest.raises(ValueError, match='no such file or folder'):
        SimEmulator(quiet(map=str(tmp_path / 'nowhere')))
