"""docs/ros_api.md, "Native ROS mode's names": one row per published stream, its names and type those of
the code (wire/udp/streams.py for udp_bridge, configuration/topic_names.py and the sensor nodes' parameters),
so the table a user reads to port a native-mode stack cannot drift from what the bridges publish."""
import os
import re

import pytest

import helpers
from morai_bridge.configuration import topic_names
from morai_bridge.wire.udp import streams

DOC = os.path.join(helpers.ROOT, 'docs', 'ros_api.md')


@pytest.fixture(scope='module')
def rows():
    with open(DOC) as f:
        text = f.read()
    block = text[text.index('<!-- native_names -->'):text.index('<!-- /native_names -->')]
    out = []
    for line in block.splitlines():     # two tables: the UDP bridge's (generated), the others'
        if not line.startswith('|'):
            continue
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) == 5 and cells[0] != 'native ROS mode' and set(cells[0]) != {'-'}:
            out.append(cells)
    return out


def names(cell):
    return re.findall(r'`(/[^`]+)`', cell)


def test_every_udp_bridge_stream_has_its_row_under_its_own_name(rows):
    for st in streams.FROM_SIM:
        if not st.topic:
            continue
        row = [r for r in rows if names(r[1]) == ['/' + st.topic] or
               (r[1] == 'same' and names(r[0]) == ['/' + st.topic])]
        assert len(row) == 1, st.name
        native, ours, switched, ros_type, _ = row[0]
        assert names(native) == ['/' + st.topic], st.name          # udp_bridge's names are native mode's
        assert switched == 'same' and ros_type == st.ros_type, st.name


def test_the_sensor_topics_the_switch_renames(rows):
    for t in topic_names.SENSOR_TOPICS:
        row = [r for r in rows if names(r[1]) == ['/' + t.ours]]
        assert len(row) == 1, t
        native, ours, switched, ros_type, _ = row[0]
        assert names(native) == names(switched) == ['/' + t.native]
        assert ros_type == t.ros_type


def test_the_other_published_topics_keep_their_names(rows):
    from morai_bridge.nodes import camera_bridge, udp_bridge
    cam = {p.name: p.default for p in camera_bridge.PARAMS}
    bridge = {p.name: p.default for p in udp_bridge.PARAMS}
    want = {'/' + cam['image_topic']: ('/' + cam['image_topic'], 'sensor_msgs/CompressedImage'),
            '/' + cam['camera_info_topic']: (None, 'sensor_msgs/CameraInfo'),
            '/' + cam['boxes_topic']: (None, 'visualization_msgs/MarkerArray'),
            '/' + bridge['navsat_topic']: (None, 'sensor_msgs/NavSatFix')}
    for topic, (native, ros_type) in want.items():
        row = [r for r in rows if names(r[1]) == [topic]]
        assert len(row) == 1, topic
        assert (names(row[0][0]) or [None])[0] == native and row[0][2] == 'same' and row[0][3] == ros_type, row


def test_every_row_states_a_rate(rows):
    assert all(r[4] for r in rows)
    assert len(rows) == len({tuple(r) for r in rows})
