"""MGeo maps in the emulator (emu/mgeo.py) on the small map of test/data/morai/mgeo_testloop, written here
in MGeo's layout, and on malformed copies of it."""
import json
import math
import shutil

import pytest

import helpers
from morai_bridge.emu.sim import mgeo

MGEO = helpers.ROOT + '/test/data/morai/mgeo_testloop'


@pytest.fixture(scope='module')
def loop():
    return mgeo.load_mgeo(MGEO)


def test_links_nodes_and_lights_are_read(loop):
    assert len(loop.links) == 10 and len(loop.nodes) == 10
    assert [lt.idx for lt in loop.lights] == ['C119TL000001', 'C119TL000002']     # file order: tlList's index
    l01 = loop.links['L01']
    assert l01.points[0][:2] == (15.0, 0.0) and l01.points[-1][:2] == (100.0, 0.0)
    assert l01.length == pytest.approx(85.0) and l01.max_speed_kmh == 30.0
    assert [n.idx for n in loop.stop_lines()] == ['N02']
    assert loop.lights[0].wire_type == 0 and loop.lights[1].wire_type == 2       # R-Y-G; R-Y-GLeft-G


def test_successors_follow_the_nodes_in_file_order(loop):
    assert loop.successors('L01') == ('L09',)
    assert loop.successors('L02') == ('L03', 'S01')          # the spur is listed after the loop
    assert loop.successors('S01') == ()


def test_a_cursor_drives_round_the_loop_and_stops_at_a_dead_end(loop):
    c = mgeo.LinkCursor(loop, 'L01')
    total = sum(loop.links[k].length for k in ('L01', 'L09', 'L02', 'L03', 'L04', 'L05', 'L06', 'L07', 'L08'))
    x, y, z, yaw = c.advance(10.0)
    assert (x, y, yaw) == pytest.approx((25.0, 0.0, 0.0))
    x, y, _, _ = c.advance(total - 10.0)                       # once round: back at the start
    assert (x, y) == pytest.approx((15.0, 0.0), abs=1e-6) and c.link.idx == 'L01'
    corner = mgeo.LinkCursor(loop, 'L02', loop.links['L02'].length / 2)
    x, y, _, yaw = corner.pose()
    assert math.hypot(x - 145.0, y - 15.0) == pytest.approx(15.0, abs=0.06)   # on the 15 m arc (10° chords)
    assert yaw == pytest.approx(math.radians(45.0), abs=math.radians(5.1))
    spur = mgeo.LinkCursor(loop, 'L02', choose=lambda ids: ids[-1])
    spur.advance(100.0)
    assert spur.link.idx == 'S01' and spur.stopped and spur.pose()[:2] == pytest.approx((190.0, 15.0))


def test_a_vehicle_is_put_on_its_link_at_the_nearest_point(loop):
    c = mgeo.LinkCursor(loop, 'L03')
    assert c.nearest(161.0, 40.0) == pytest.approx(25.0)


def test_controller_plans_with_yellow_before_red(loop):
    plans = loop.light_plans()
    assert plans['C119TL000001'] == ('IntTL1', ((16, 17.0), (4, 3.0), (1, 20.0)))
    assert plans['C119TL000002'] == ('IntTL1', ((1, 20.0), (48, 17.0), (4, 3.0)))


def _copy(tmp_path):
    d = tmp_path / 'm'
    shutil.copytree(MGEO, d)
    return d


@pytest.mark.parametrize('file,edit,words', [
    ('link_set.json', lambda d: d[0].pop('points'), ['link_set.json', 'L01', 'points missing']),
    ('link_set.json', lambda d: d[0].update(points=[[0, 0, 0]]), ['L01', 'at least two points']),
    ('node_set.json', lambda d: d[1].update(point=['a', 1]), ['node_set.json', 'N02', 'point']),
    ('intersection_controller_data.json', lambda d: d[0]['TLState'][0].update(lightcolor=['SG', 'Purple']),
     ['IntTL1', 'lightcolor', 'Purple']),
    ('intersection_controller_set.json', lambda d: d[0]['TL'][0].append('C119NOPE'),
     ['C119NOPE', 'traffic_light_set.json']),
])
def test_a_malformed_file_names_the_file_and_the_key(tmp_path, file, edit, words):
    d = _copy(tmp_path)
    data = json.loads((d / file).read_text())
    edit(data)
    (d / file).write_text(json.dumps(data))
    with pytest.raises(mgeo.MGeoError) as e:
        mgeo.load_mgeo(str(d))
    for w in words:
        assert w in str(e.value)


def test_a_missing_link_set_or_folder_is_an_error(tmp_path):
    d = _copy(tmp_path)
    (d / 'link_set.json').unlink()
    with pytest.raises(mgeo.MGeoError, match='no link_set.json'):
        mgeo.load_mgeo(str(d))
    with pytest.raises(mgeo.MGeoError, match='no such folder'):
        mgeo.load_mgeo(str(tmp_path / 'absent'))


def test_lights_without_controller_groups_have_no_plan(tmp_path):
    # MORAI-EDU's K-City ships its plans with an empty intersection_controller_set.json
    d = _copy(tmp_path)
    (d / 'intersection_controller_set.json').write_text('[]')
    assert mgeo.load_mgeo(str(d)).light_plans() == {}
