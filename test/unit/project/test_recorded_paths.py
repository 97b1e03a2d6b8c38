"""tools/record_path.py: the path files the closed-loop client tests follow (test/data/paths/) are
what the tool records from its scripts today, and the tool's scripts are what the files say."""
import importlib.util
import math
import os

import pytest

import helpers

TOOL = os.path.join(helpers.ROOT, 'tools', 'record_path.py')
PATHS = os.path.join(helpers.ROOT, 'test', 'data', 'paths')


@pytest.fixture(scope='module')
def rp():
    spec = importlib.util.spec_from_file_location('record_path_under_test', TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_path_file_has_a_route_and_every_route_a_file(rp):
    files = sorted(f[:-4] for f in os.listdir(PATHS) if f.endswith('.txt'))
    assert files == sorted(rp.ROUTES)


@pytest.mark.parametrize('name', ['sedan_course', 'erp42_course'])
def test_the_committed_path_is_what_the_tool_records(rp, name):
    committed = rp.read_path(os.path.join(PATHS, name + '.txt'))
    recorded = [tuple(round(v, 3) for v in p) for p in rp.record(rp.ROUTES[name])]
    why = f'test/data/paths/{name}.txt differs from its recording: run /usr/bin/python3 tools/record_path.py {name}'
    assert len(recorded) == len(committed), why
    worst = max(math.dist(a, b) for a, b in zip(recorded, committed))
    assert worst < 0.002, f'{why} (up to {worst:.3f} m apart)'


def test_a_path_starts_at_the_ego_start_and_ends_at_rest(rp):
    for name, route in rp.ROUTES.items():
        points = rp.read_path(os.path.join(PATHS, name + '.txt'))
        assert points[0] == (0.0, 0.0, 0.0), name         # the emulator's ego start, no scenario
        gaps = [math.dist(a[:2], b[:2]) for a, b in zip(points, points[1:])]
        assert max(gaps) < rp.SPACING_M + 0.3, name        # one step at the top speed at most beyond it
        assert route.legs[-1][1] == 0.0, name              # the script ends with a stop


def test_the_file_format_is_x_y_z_a_line(rp):
    assert rp.path_text([(1.0, -2.5, 0.0), (1.2345678, 2.0, 0.25)]) == '1.000\t-2.500\t0.000\n1.235\t2.000\t0.250\n'


def test_a_profile_without_overhangs_gets_them_split_evenly(rp):
    erp = rp.vehicle_overrides('erp42')
    assert erp['wheelbase'] == 1.04 and erp['max_steer_deg'] == 28.17
    assert erp['rear_overhang'] == pytest.approx((2.02 - 1.04) / 2)
    assert rp.vehicle_overrides(None) == {}


def test_an_unknown_route_is_refused(rp, capsys):
    with pytest.raises(SystemExit):
        rp.main(['nowhere', '--out', os.devnull])
    assert 'no route nowhere' in capsys.readouterr().err
