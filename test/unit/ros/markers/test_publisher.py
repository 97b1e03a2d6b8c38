"""The markers node's working part (ros/markers/publisher.py): the traffic light position files."""
import math
import os

import pytest

import helpers

ROOT = helpers.ROOT


def test_demo_light_file_places_exactly_the_demo_scenarios_lights():
    from morai_bridge.emu.sim.scenario import load_scenario
    from morai_bridge.emu.sim.signals import DEFAULT_LIGHTS
    from morai_bridge.ros.markers.publisher import read_light_positions
    demo = load_scenario(os.path.join(ROOT, 'config', 'scenarios'), 'demo')
    lights = demo.traffic_lights if demo.traffic_lights is not None else DEFAULT_LIGHTS
    path, pos = read_light_positions('demo', ROOT)
    assert path == os.path.join(ROOT, 'config', 'traffic_lights', 'demo.yaml')
    assert set(pos) == {lt.id for lt in lights}
    # the light the demo driver obeys stands by its stop point
    from morai_bridge.nodes import demo_driver
    d = {p.name: p.default for p in demo_driver.PARAMS}
    x, y, _, _ = pos[d['light_id']]
    assert math.hypot(x - d['stop_x'], y - d['stop_y']) < d['stop_zone_m']


def test_light_positions_path_forms(tmp_path):
    from morai_bridge.ros.markers.publisher import light_positions_path, read_light_positions
    from morai_bridge.configuration.params import ParamError
    assert light_positions_path('', '/p') is None
    assert light_positions_path('demo', '/p') == '/p/config/traffic_lights/demo.yaml'
    assert light_positions_path('/a/b.yaml', '/p') == '/a/b.yaml'
    f = tmp_path / 'lights.yaml'
    f.write_text('L1: [1, 2, 3]\n')
    assert read_light_positions(str(f)) == (str(f), {'L1': (1.0, 2.0, 3.0, 0.0)})
    f.write_text('L1: [1, 2]\n')
    with pytest.raises(ParamError, match='L1'):
        read_light_positions(str(f))
    with pytest.raises(ParamError, match='cannot read'):
        read_light_positions(str(tmp_path / 'missing.yaml'))
