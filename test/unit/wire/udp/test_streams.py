"""The stream declarations of wire/udp/streams.py, without ROS: the stamp rule follows the wire, the
counters of a stream's own meaning are declared with it, and the topic tables of docs/ros_api.md are the declarations.
What the ROS side makes of each row (message types, converters, parameters) is checked in
test/unit/ros/udp_bridge/test_sim_receive_streams.py."""
from morai_bridge.wire.udp import streams

RECEIVED = [s for s in streams.FROM_SIM if s.topic]
SENT = [s for s in streams.TO_SIM if s.topic]


def test_stamp_rule_follows_the_wire():
    # a stream is stamped with its packet's time exactly when its packets carry one
    for s in streams.FROM_SIM:
        if s.extension:
            continue
        carries_time = 'sec' in s.classes[0]._fields
        assert (s.stamp == streams.PACKET) == carries_time, s.name


def test_counters_of_a_stream_s_own_meaning_are_declared_with_it_not_in_the_link_layer():
    from morai_bridge.link.transport import StreamStats
    common = set(StreamStats.__slots__)
    for s in streams.STREAMS:
        names = [c.name for c in s.counters]
        assert len(set(names)) == len(names), s.name
        for c in s.counters:
            assert isinstance(c, streams.Counter) and c.label and c.name not in common, (s.name, c)
        st = StreamStats(s.name, names)
        assert st.counts == dict.fromkeys(names, 0)
    # the link layer names no stream's meaning: no counter of a row is spelt in link/transport.py
    import os
    from helpers import ROOT
    text = open(os.path.join(ROOT, 'src', 'morai_bridge', 'link', 'transport.py')).read()
    for s in streams.STREAMS:
        for c in s.counters:
            assert c.name not in text, c.name


def _topic_table(heading):
    """(topic, type) rows of the udp_bridge section's table under ``heading`` in docs/ros_api.md."""
    import os
    import re

    from helpers import ROOT
    text = open(os.path.join(ROOT, 'docs', 'ros_api.md')).read()
    start = text.index(heading)                 # the first such heading is the udp_bridge node's
    block = text[start:text.index('\n\n', text.index('|---', start))]
    return re.findall(r'^\| `([^`]+)` \| ([\w/]+) \|', block, re.M)


def test_the_topic_tables_of_the_docs_are_the_declarations():
    published = _topic_table('### Published topics')
    for s in RECEIVED:
        assert (s.topic, s.ros_type) in published, s.name
    subscribed = _topic_table('### Subscribed topics')
    assert sorted(subscribed) == sorted((s.topic, s.ros_type) for s in SENT)


#: streams whose wire name cannot be theirs (docs/codec.md "Type names"): the competition status
#: shares the ego status layout, sync carries two classes, gps is NMEA text
WIRE_NAME_EXCEPTIONS = {'competition_status': ('ego_status',),
                        'sync': ('emu_sync_cmd', 'emu_sync_tick'),
                        'gps': ('gps_nmea',)}


def test_a_streams_wire_name_is_its_name():
    # one name per stream from the wire (TYPE_NAME, udp.classify) to the dump and the docs
    for s in streams.STREAMS:
        names = tuple(c.TYPE_NAME for c in s.classes)
        assert names == WIRE_NAME_EXCEPTIONS.get(s.name, (s.name,)), s.name


def _sets():
    import re
    from helpers import ROOT
    text = open(ROOT + '/CMakeLists.txt').read()
    return re.search(r'set\(MORAI_MSGS_SETS ([^)]*)\)', text).group(1).split()


def _effective_msg(set_name, type_name):
    """The .msg file of ``type_name`` in message set ``set_name``: each set layers over the ones before it;
    None when the set does not have it (dropped, or never)."""
    import os
    from helpers import ROOT
    sets = _sets()
    found = None
    for s in sets[:sets.index(set_name) + 1]:
        dropped = os.path.join(ROOT, 'msg_sets', s, 'dropped.txt')
        if os.path.exists(dropped) and type_name in open(dropped).read().split():
            found = None
        path = os.path.join(ROOT, 'msg_sets', s, 'msg', type_name + '.msg')
        if os.path.exists(path):
            found = path
    return found


def test_the_header_rule_holds_for_every_received_stream_in_every_message_set():
    """wire/udp/streams.py's Header rule: a received stream's message type has ``Header header`` first."""
    checked = 0
    for set_name in _sets():
        for s in RECEIVED:
            package, name = s.ros_type.split('/')
            if package != 'morai_msgs':
                assert s.ros_type in ('sensor_msgs/Imu',), f'{s.name}: {s.ros_type} is not known to have a Header'
                continue
            path = _effective_msg(set_name, name)
            assert path is not None, f'{s.name}: set {set_name} has no {name}'
            fields = [line.split('#')[0].split() for line in open(path)]
            fields = [f for f in fields if len(f) >= 2 and '=' not in f[1]]
            assert fields[0][:2] in (['Header', 'header'], ['std_msgs/Header', 'header']), \
                f'{s.name}: {name} of set {set_name} does not start with Header header ({path})'
            checked += 1
    assert checked >= 3 * 9


def test_the_newest_sample_rule_s_counters_are_declared_by_every_timed_stream():
    """wire/sample_order.py: every received stream stamped from its packets (and GPS, by its fix time) declares
    reordered, duplicates and clock_restarts, with their rates on /diagnostics."""
    for s in streams.FROM_SIM:
        names = {c.name: c for c in s.counters}
        if s.stamp == streams.PACKET or s.name == 'gps':
            for n in ('reordered', 'duplicates', 'clock_restarts'):
                assert n in names and names[n].rate, (s.name, n)
        else:
            assert 'reordered' not in names, s.name


def test_per_stream_facts_are_row_fields_not_names_built_from_strings():
    """Issue 49 item 2: a stream's port and topic parameters are its row's (param, topic_param), and the IMU's
    arrival stamp under a version whose IMU seconds are the host's clock is its row's host_clock; the UDP bridge
    spells none of them from a stream's name."""
    import os
    import re
    from morai_bridge.configuration import sim_versions
    from helpers import ROOT
    imu = streams.BY_NAME['imu']
    assert (imu.param, imu.topic_param) == ('imu_port', 'imu_topic')
    versions = {v: sim_versions.load_version(v) for v in ('24.R2', '25.S4')}
    assert [imu.stamped_by_packet(versions[v]) for v in ('24.R2', '25.S4')] == [True, False]
    assert streams.BY_NAME['ego_status'].stamped_by_packet(versions['25.S4'])
    assert not streams.BY_NAME['traffic_light'].stamped_by_packet(versions['24.R2'])
    built = re.compile(r"""\+ ?['"]_(port|topic)['"]|\}_(port|topic)['"]|== ?'imu'""")
    for rel in ('ros/udp_bridge', 'ros/recordings', 'nodes/udp_bridge.py', 'ros/package_config.py'):
        path = os.path.join(ROOT, 'src', 'morai_bridge', rel)
        files = [os.path.join(path, f) for f in os.listdir(path) if f.endswith('.py')] if os.path.isdir(path) else [path]
        for f in files:
            for i, line in enumerate(open(f), 1):
                assert not built.search(line), f'{f}:{i}: {line.strip()}'
