"""MORAI launcher scenario files in the emulator (emu/morai_scenario.py): the file of test/data/morai, written
here in the layout of the files MORAI's launcher saved, and malformed copies of it."""
import copy
import json

import pytest

import helpers
from morai_bridge.emu.sim import morai_scenario as ms

FILE = helpers.ROOT + '/test/data/morai/scenario_testloop.json'


@pytest.fixture(scope='module')
def data():
    with open(FILE) as f:
        return json.load(f)


def test_every_element_is_read(data):
    s = ms.load_morai_scene(FILE)
    assert (s.map_info.name, s.map_info.east, s.map_info.north) == ('R_KR_PR_K-city_2025', 302595.0, 4124145.0)
    assert s.ego == ms.Pose(30.0, 0.0, 0.0, 0.0) and s.ego_gear == 4
    v, = s.vehicles
    assert (v.uid, v.link, v.speed_kmh, v.active_m >= ms.ALWAYS_ACTIVE) == (11, 'L05', 10.0, True)
    assert v.pose[:2] == (100.0, 80.0) and v.pose.yaw_deg == 180.0
    p, = s.pedestrians
    assert (p.uid, p.active_m, p.speed_kmh, p.loop, p.moving_m) == (12, 25.0, 4.0, False, 8.0)
    assert p.waypoints == ((60.0, 86.0), (68.0, 86.0))       # Unity's x = -east, z = -north
    o, = s.objects
    assert (o.uid, o.data_id, o.scale, o.pose[:2]) == (13, 40100001, (2.0, 3.0, 2.0), (120.0, -8.0))
    sp, = s.spawns
    assert (sp.uid, sp.link, sp.maximum, sp.period_s, sp.speed_kmh) == (14, 'L05', 2, 15.0, 10.0)
    assert s.lights == (ms.MoraiLight(0, 1, 2.0), ms.MoraiLight(1, 0, 2.0))
    assert s.notes == ('shadedAreaList: 1 element(s) not played (the emulator has no model of them)',)


def test_numbers_written_as_morai_displays_them(data):
    d = copy.deepcopy(data)
    d['egoVehicle']['initPosition']['pos'] = {'x': '1,232.436', 'y': '-5.5'}
    assert ms.parse_morai_scene(d, 'f').ego[:2] == (1232.436, -5.5)


def test_the_emulator_format_is_told_apart(data):
    assert ms.is_morai_scene(data)
    assert not ms.is_morai_scene({'ego': {'position': [0, 0]}, 'vehicles': []})


def _broken(data, edit):
    d = copy.deepcopy(data)
    edit(d)
    return d


@pytest.mark.parametrize('edit,key', [
    (lambda d: d.pop('mapInfo'), 'mapInfo'),
    (lambda d: d['egoVehicle']['initPosition'].pop('pos'), 'egoVehicle.initPosition.pos'),
    (lambda d: d['vehicleList'][0].update(UNIQUEID='eleven'), 'vehicleList[0].UNIQUEID'),
    (lambda d: d['pedestrianList'][0]['rot'].update(yaw='north'), 'pedestrianList[0].rot.yaw'),
    (lambda d: d['objectList'][0]['scale'].update(y=0.0), 'objectList[0].scale'),
    (lambda d: d['objectList'][0].update(UNIQUEID=11), 'UNIQUEID 11'),
    (lambda d: d['tlList'][0].update(index=-1), 'tlList[0].index'),
    (lambda d: d.update(vehicleList={}), 'vehicleList'),
])
def test_a_malformed_file_names_the_file_and_the_key(data, edit, key):
    with pytest.raises(ms.MoraiScenarioError) as e:
        ms.parse_morai_scene(_broken(data, edit), '/x/scene.json')
    assert '/x/scene.json' in str(e.value) and key in str(e.value), str(e.value)


def test_not_json_and_not_a_launcher_file(tmp_path):
    p = tmp_path / 'a.json'
    p.write_text('{"ego": {}}')
    with pytest.raises(ms.MoraiScenarioError, match='not a scenario file of MORAI'):
        ms.load_morai_scene(str(p))
    p.write_text('{oops')
    with pytest.raises(ms.MoraiScenarioError, match='not readable JSON'):
        ms.load_morai_scene(str(p))
