"""The markers node (nodes/markers.py): its parameter table, launch file and docs, its topics."""
import importlib.util
import os
import re

import helpers
from morai_bridge.ros.markers import shapes as mk

ROOT = helpers.ROOT


def test_ego_size_defaults_are_the_emulators_vehicle():
    from morai_bridge.emu.sim.ego import VehicleParams
    from morai_bridge.nodes import markers as node
    d = {p.name: p.default for p in node.PARAMS}
    v = VehicleParams()
    assert (d['ego_length'], d['ego_width'], d['ego_height']) == (v.length, v.width, v.height)
    assert mk.Style().ego_size == (v.length, v.width, v.height)


# ----------------------------------------------------------------------------- node table, launch, docs

_spec = importlib.util.spec_from_file_location('gen_launch', os.path.join(ROOT, 'tools', 'gen_launch.py'))
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)


def test_markers_launch_file_is_generated_from_params():
    text = open(os.path.join(ROOT, 'launch', 'markers.launch')).read()
    assert gen.launch_text('markers') == text, 'run /usr/bin/python3 tools/gen_launch.py markers'


def test_markers_param_table_matches_node():
    text = open(os.path.join(ROOT, 'docs', 'ros_api.md')).read()
    assert gen.docs_with_table(text, 'markers') == text, 'run /usr/bin/python3 tools/gen_launch.py markers'


def test_every_topic_is_a_param_and_queue_sizes_are_set():
    from morai_bridge.nodes import markers as node
    names = [p.name for p in node.PARAMS]
    for t in ('markers_topic', 'ego_topic', 'object_topic', 'traffic_light_topic', 'collision_topic', 'frame_id'):
        assert t in names
    from morai_bridge.ros.markers import publisher as marker_publisher
    src = open(marker_publisher.__file__).read()
    calls = re.findall(r'rospy\.(?:Publisher|Subscriber)\([^)]*\)', src)
    assert len(calls) == 5 and all('queue_size=' in c for c in calls)
