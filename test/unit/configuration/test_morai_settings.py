"""configuration.morai_settings: the former module, now the names of sim_settings_files (reading the
files: test_sim_settings_files.py) and settings_plan (the nodes they call for: test_settings_plan.py)
for the importers not moved yet.  The launch XML (nodes.morai_settings): nodes/test_morai_settings.py."""
from morai_bridge.configuration import morai_settings as ms
from morai_bridge.configuration import settings_plan, sim_settings_files

#: every public name of the module before its split
FORMER_NAMES = (
    'SettingsError', 'COMM_UDP', 'COMM_NAMES', 'LIDAR3D_TYPES', 'PUBSUB_STREAMS', 'PUBSUB_COMPETITION_STATUS',
    'UNLISTED_KEPT', 'SENSOR_LISTS', 'SENSOR_NODES', 'BRIDGE_SENSORS', 'VELODYNE_UNIT', 'Pose', 'Sensor',
    'SensorSettings', 'NetworkEntry', 'NetworkSettings', 'wrap_deg', 'rep103_pose', 'SENSOR_CFG_NAMES',
    'SENSOR_KEYS', 'NETWORK_KEYS', 'key_warnings', 'load_sensors', 'parse_sensors', 'load_network',
    'parse_network', 'NodePlan', 'StreamOff', 'Plan', 'sensor_node_params', 'plan', 'node_params',
    'address_origin', 'node_sensor')


def test_every_former_name_is_the_new_modules_object():
    for name in FORMER_NAMES:
        own = [m for m in (sim_settings_files, settings_plan) if name in m.__all__]
        assert len(own) == 1, name
        assert getattr(ms, name) is getattr(own[0], name), name
    assert sorted(ms.__all__) == sorted(sim_settings_files.__all__ + settings_plan.__all__)


def test_it_defines_nothing_of_its_own():
    own = [n for n, v in vars(ms).items() if not n.startswith('__') and getattr(v, '__module__', None) == ms.__name__]
    assert own == []
