"""The launch writer of the saved settings (configuration/settings_launch.py) on its own: node tables made
here (the real ones, and the command around it: test/unit/nodes/test_morai_settings.py)."""
import xml.etree.ElementTree as ET

import pytest

from morai_bridge.configuration import settings_launch as sl
from morai_bridge.configuration import settings_plan
from morai_bridge.configuration.params import Param

TABLES = {
    'lidar_bridge': [Param('port', 2368, 'UDP port', minimum=0, maximum=65535),
                     Param('model', 'VLP16', 'LiDAR model', choices=('VLP16', 'HDL32E')),
                     Param('topic', 'velodyne_points', 'topic')],
    'udp_bridge': [Param('sim_version', '25.S4', 'release'), Param('map', 'R_KR_PR_K-city_2025', 'map'),
                   Param('gps_port', 9091, 'port'), Param('gps_topic', 'gps', 'topic')],
}
NO_LOW_PORTS = type('Ports', (), {'low': (), 'offset': 0, 'lines': ()})()


def plan_of(*nodes):
    return settings_plan.Plan(tuple(settings_plan.NodePlan(n, n, params, 'from x') for n, params in nodes), (), ())


def test_values_are_written_checked_and_in_the_table_s_order():
    text = sl.launch_xml(plan_of(('lidar_bridge', {'model': 'HDL32E', 'port': 2370})), ['f.json'], TABLES,
                         NO_LOW_PORTS)
    node = ET.fromstring(text).find('node')
    assert [(p.get('name'), p.get('type'), p.get('value')) for p in node.iter('param')] == \
        [('port', 'int', '2370'), ('model', 'str', 'HDL32E')]


@pytest.mark.parametrize('params,words', [({'rpm': 600}, 'lidar_bridge declares no parameter ~rpm'),
                                          ({'model': 'HDL64'}, '~model'), ({'port': 70000}, '~port')])
def test_a_name_or_value_the_node_does_not_take_is_refused(params, words):
    with pytest.raises(sl.LaunchError, match=words):
        sl.launch_xml(plan_of(('lidar_bridge', params)), ['x'], TABLES, NO_LOW_PORTS)


def test_udp_bridge_s_version_and_map_are_arguments():
    text = sl.launch_xml(plan_of(('udp_bridge', {'gps_port': 9297})), ['x'], TABLES, NO_LOW_PORTS, map_name='none')
    root = ET.fromstring(text)
    args = {a.get('name'): a.get('default') for a in root.iter('arg')}
    assert (args['sim_version'], args['map'], args['gps_port']) == ('25.S4', 'none', '9297')
    values = {p.get('name'): p.get('value') for p in root.find('node').iter('param')}
    assert (values['map'], values['gps_port']) == ('$(arg map)', '$(arg gps_port)')


def test_a_node_type_no_table_has_is_an_error():
    with pytest.raises(sl.LaunchError, match="no node type 'camera_bridge'"):
        sl.checked_params('camera_bridge', {}, TABLES)
