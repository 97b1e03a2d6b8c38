"""Documentation that must match the code: parameter tables in docs/ros_api.md."""
import importlib.util
import os

import pytest

import helpers

ROOT = helpers.ROOT
_spec = importlib.util.spec_from_file_location('gen_launch', os.path.join(ROOT, 'tools', 'gen_launch.py'))
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)


def test_every_generated_launch_file_is_checked_and_regenerated():
    # the nodes below are those whose launch file says it is generated (what regen writes)
    assert sorted(gen.generated_nodes()) == sorted(GENERATED)


GENERATED = ['udp_bridge', 'erp42_serial', 'capture_replay', 'sim_emulator', 'demo_driver', 'pcu_emulator', 'markers',
             'camera_bridge', 'lidar_bridge', 'lidar2d_bridge']


@pytest.mark.parametrize('node', GENERATED)
def test_param_table_matches_node(node):
    text = open(os.path.join(ROOT, 'docs', 'ros_api.md')).read()
    assert gen.docs_with_table(text, node) == text, (
        f'docs/ros_api.md is out of date for {node}: run bash tools/dev.sh regen')


@pytest.mark.parametrize('node', GENERATED)
def test_launch_file_is_generated_from_params(node):
    text = open(os.path.join(ROOT, 'launch', node + '.launch')).read()
    assert gen.launch_text(node) == text, 'launch/%s.launch is stale: run bash tools/dev.sh regen' % node


@pytest.mark.parametrize('doc', gen.PORT_DOCS)
def test_port_table_matches_the_profiles(doc):
    """The port tables of README, docs/versions.md and docs/day_one.md are the data's (config/sim_versions/,
    wire/udp/streams.py)."""
    text = open(os.path.join(ROOT, doc)).read()
    assert gen.PORT_MARKER.search(text), f'{doc} holds no <!-- ports --> table'
    assert gen.docs_with_ports(text) == text, '%s: the port table is out of date: run bash tools/dev.sh regen' % doc


@pytest.mark.parametrize('marker', sorted(gen.STREAM_TABLES))
def test_per_stream_doc_tables_are_the_rows(marker):
    """Issue 49: the per-stream tables of docs/ros_api.md (topics) and docs/emulator.md (ports) are written from the
    rows' doc columns (wire/udp/streams.Stream.doc, emu_doc), one row per stream of the direction."""
    doc = gen.STREAM_TABLES[marker][0]
    text = open(os.path.join(ROOT, doc)).read()
    assert '<!-- %s -->' % marker in text, f'{doc} holds no <!-- {marker} --> table'
    assert gen.docs_with_stream_tables(text) == text, f'{doc}: {marker} is out of date: run bash tools/dev.sh regen'
    table = gen.stream_table(marker)
    from morai_bridge.wire.udp import streams
    direction, topics = gen.STREAM_TABLES[marker][2:4]
    assert len(table.splitlines()) == 2 + sum(1 for st in streams.STREAMS if st.direction == direction
                                              and (st.topic or not topics))


@pytest.mark.parametrize('marker', sorted(gen.OTHER_TABLES))
def test_other_per_stream_doc_tables_are_the_rows(marker):
    """Issue 49: docs/emulator.md's per-stream options (port, rate) and the UDP bridge's part of docs/ros_api.md's
    native names table are written from the rows (emu/sim/config's table, Stream.native_rate)."""
    doc, table = gen.OTHER_TABLES[marker]
    text = open(os.path.join(ROOT, doc)).read()
    assert '<!-- %s -->' % marker in text, f'{doc} holds no <!-- {marker} --> table'
    assert gen.docs_with_stream_tables(text) == text, f'{doc}: {marker} is out of date: run bash tools/dev.sh regen'
    from morai_bridge.wire.udp import streams
    body = table()
    for st in streams.STREAMS:
        if marker == gen.EMULATOR_STREAM_OPTIONS:
            assert '| `%s` |' % st.param in body, st.name
        elif st.direction == streams.SIM_TO_USER and st.topic:
            assert '| `/%s` | `/%s` | same |' % (st.topic, st.topic) in body, st.name


def test_readme_demo_argument_table_is_the_launch_files():
    """README's table of demo.launch's arguments is generated from launch/demo.launch (issue 43)."""
    text = open(os.path.join(ROOT, 'README.md')).read()
    assert '<!-- demo-args -->' in text, 'README.md holds no <!-- demo-args --> table'
    assert gen.docs_with_demo_args(text) == text, \
        "README.md's demo argument table is out of date: run /usr/bin/python3 tools/gen_launch.py demo-args"
    table = gen.launch_args_table('demo')
    for name in ('driver', 'sensors', 'rviz', 'sim_version'):
        assert f'| `{name}` |' in table, name
