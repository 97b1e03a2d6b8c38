"""Maps (configuration/maps.py, config/maps/*.yaml): the origin values against files MORAI's tools wrote
(test/data/sim_evidence/map_origins.tsv), and every form of ``map`` a user may give."""
import json
import os
from pathlib import Path

import pytest

import helpers
from morai_bridge.configuration import maps

ROOT = Path(helpers.ROOT)
TABLE = str(ROOT / 'config' / 'maps')
EVIDENCE = ROOT / 'test' / 'data' / 'sim_evidence' / 'map_origins.tsv'
MGEO = ROOT / 'test' / 'data' / 'morai' / 'mgeo_testloop'


def evidence_rows():
    for line in EVIDENCE.read_text().splitlines():
        if line and not line.startswith('#'):
            name, east, north, up, source = line.split('\t')
            yield name, float(east), float(north), None if up == '-' else float(up), source


def test_every_shipped_map_has_evidence_and_agrees_with_it():
    rows = list(evidence_rows())
    assert {r[0] for r in rows} == set(maps.available(TABLE))
    for name, east, north, up, source in rows:
        m = maps.load_map(name, TABLE)
        assert (m.east, m.north) == pytest.approx((east, north), abs=1e-3), source
        if up is not None:
            assert m.up == pytest.approx(up, abs=1e-3), source
        assert m.kind == 'table' and m.utm_zone == 52 and m.hemisphere == 'N'
        assert dict(m.sources).keys() == {'east', 'north', 'up'}, f'{name}: a source for every value'


def test_the_default_is_the_competition_map_and_is_shipped():
    assert maps.DEFAULT in maps.available(TABLE)
    m = maps.load_map(maps.DEFAULT, TABLE)
    assert (m.east, m.north) == (302595.0, 4124145.0)


@pytest.mark.parametrize('given', ['r_kr_pr_k-city_2025', 'R_KR_PR_K-CITY_2025', 'kcity2025', ' K-City-2025 '])
def test_names_are_case_insensitive_and_aliases_work(given):
    assert maps.load_map(given, TABLE).name == 'R_KR_PR_K-city_2025'


def test_none_is_origin_zero_and_says_so():
    m = maps.load_map('none', TABLE)
    assert (m.east, m.north, m.kind) == (0.0, 0.0, 'none')
    assert 'map:=none' in m.describe()


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(maps.MapError) as e:
        maps.load_map('R_KR_PG_Nowhere', TABLE)
    assert 'R_KR_PR_K-city_2025' in str(e.value) and 'MGeo' in str(e.value)


def test_an_empty_value_is_an_error_not_a_silent_zero():
    with pytest.raises(maps.MapError):
        maps.load_map('', TABLE)


@pytest.mark.parametrize('form', ['folder', 'file'])
def test_an_mgeo_folder_or_its_global_info(form):
    path = str(MGEO) if form == 'folder' else str(MGEO / 'global_info.json')
    m = maps.load_map(path, TABLE)
    assert (m.east, m.north, m.up, m.utm_zone, m.kind) == (302595.0, 4124145.0, 0.0, 52, 'mgeo')
    assert m.mgeo_dir == str(MGEO) and m.name == 'mgeo_testloop'


def test_a_morai_scenario_file_gives_its_map_info(tmp_path):
    # the mapInfo of MORAI's launcher files (MORAI-EDU/dsc_2nd chapter6/morai_scen.json, heven-ad-2026's)
    p = tmp_path / 'scene.json'
    p.write_text(json.dumps({'version': 1.0, 'mapInfo': {
        'mapName': 'R_KR_PG_K-City', 'eastOffset': 302459.942, 'northOffset': 4122635.537,
        'globalCoordinateSystem': 'UTM52N', 'scenarioCoordinateSystem': 'ENU'}}))
    m = maps.load_map(str(p), TABLE)
    assert (m.name, m.east, m.north, m.utm_zone, m.kind) == ('R_KR_PG_K-City', 302459.942, 4122635.537, 52,
                                                               'scenario')


@pytest.mark.parametrize('text,zone', [('+proj=utm +zone=52 +ellps=WGS84 +units=m +no_defs', (52, 'N')),
                                       ('UTM52N', (52, 'N')), ('utm 33', (33, 'N')),
                                       ('+proj=utm +zone=19 +south +datum=WGS84', (19, 'S'))])
def test_coordinate_systems_as_morai_writes_them(text, zone):
    assert maps.utm_zone_of(text, 'f', 'k') == zone


@pytest.mark.parametrize('content,key', [
    ('{"mapInfo": {"eastOffset": 1.0}}', 'mapInfo.northOffset'),
    ('{"mapInfo": {"eastOffset": "x", "northOffset": 2}}', 'mapInfo.eastOffset'),
    ('{"egoVehicle": {}}', 'mapInfo'),
    ('{"mapInfo": {"eastOffset": 1, "northOffset": 2, "globalCoordinateSystem": "TM_Korea"}}',
     'globalCoordinateSystem'),
    ('{not json', 'not readable JSON'),
])
def test_a_malformed_scenario_names_the_file_and_the_key(tmp_path, content, key):
    p = tmp_path / 'bad.json'
    p.write_text(content)
    with pytest.raises(maps.MapError) as e:
        maps.load_map(str(p), TABLE)
    assert str(p) in str(e.value) and key in str(e.value)


def test_a_malformed_global_info_names_the_key(tmp_path):
    (tmp_path / 'global_info.json').write_text('{"local_origin_in_global": [1.0], '
                                               '"global_coordinate_system": "UTM52N"}')
    with pytest.raises(maps.MapError, match='local_origin_in_global'):
        maps.load_map(str(tmp_path), TABLE)


def test_a_missing_path_is_an_error(tmp_path):
    with pytest.raises(maps.MapError, match='no such file'):
        maps.load_map(str(tmp_path / 'nothing' / 'here.json'), TABLE)


@pytest.mark.parametrize('bad,key', [({'origin': {'east': 1.0}}, 'origin'), ({'utm_zone': 99}, 'utm_zone'),
                                     ({'colour': 'red'}, 'unknown keys'), ({'sources': {'x': 'y'}}, 'sources')])
def test_a_malformed_table_file_names_the_key(bad, key):
    good = {'name': 'm', 'utm_zone': 52, 'origin': {'east': 1.0, 'north': 2.0}}
    with pytest.raises(maps.MapError, match=key):
        maps.parse_table(dict(good, **bad), 'm.yaml')
