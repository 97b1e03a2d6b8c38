"""ros/recordings/bag_check (morai_bag_check): per topic and publisher of a bag, messages, rate, first message and
gaps, by header.seq or by intervals; exit status 0 / 1 (a gap) / 2 (usage, unreadable bag).

Every bag here is a real one, written by rosbag's Python API in tmp_path, and the seq the program reads
from the serialized bytes is compared with genpy's own deserialization for every installed type that
rospy numbers.
"""
import importlib
import inspect
import io
import shutil

import pytest

rosbag = pytest.importorskip('rosbag', reason='rosbag (ROS 1) not installed')
import genpy  # noqa: E402
import rospy  # noqa: E402
from geometry_msgs.msg import TransformStamped  # noqa: E402
from morai_msgs.msg import EgoVehicleStatus  # noqa: E402
from sensor_msgs.msg import Imu  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from morai_bridge.ros.recordings import bag_check  # noqa: E402

T0 = 1000.0


def imu(seq):
    m = Imu()
    m.header.seq = seq
    return m


def ego(seq):
    m = EgoVehicleStatus()
    m.header.seq = seq
    return m


def tf():
    return TFMessage([TransformStamped()])


def stream(topic, publisher, make, n, hz, start=0.0, skip=(), seq0=1):
    """``n`` messages at ``hz`` from ``start`` s, numbered from ``seq0``; the indices in ``skip`` are left
    out (lost).  ``make(seq)`` builds one."""
    return [(T0 + start + i / hz, topic, publisher, make(seq0 + i)) for i in range(n) if i not in skip]


def write_bag(path, *streams):
    """A bag of ``streams`` (lists of (time, topic, publisher, message)), in time order, one connection
    per (topic, publisher) with the publisher as its callerid, as rosbag record writes them.  rosbag's
    writer keeps one connection per topic: its connection of the topic is swapped per publisher."""
    messages = sorted((m for s in streams for m in s), key=lambda m: m[0])
    connections = {}
    with rosbag.Bag(str(path), 'w') as bag:
        for t, topic, publisher, msg in messages:
            key = (topic, publisher)
            if key in connections:
                bag._topic_connections[topic] = connections[key]
            else:
                bag._topic_connections.pop(topic, None)
            bag.write(topic, msg, rospy.Time.from_sec(t), connection_header={
                'topic': topic, 'type': msg._type, 'md5sum': msg._md5sum, 'message_definition': msg._full_text,
                'callerid': publisher})
            connections[key] = bag._topic_connections[topic]
    return str(path)


def run(capsys, *argv):
    """(exit status, stdout, stderr) of morai_bag_check ``argv``."""
    try:
        status = bag_check.main([str(a) for a in argv])
    except SystemExit as e:
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


def rows(out):
    """The table's rows by (topic, publisher): the other columns, split."""
    table = {}
    for line in out.splitlines():
        cells = line.split()
        if len(cells) >= 7 and cells[0].startswith('/') and line.startswith('  /'):
            table[(cells[0], cells[1])] = cells[2:]
    return table


def clean(tmp_path, name='clean.bag'):
    return write_bag(tmp_path / name,
                     stream('/imu', '/udp_bridge', imu, 200, 50.0),
                     stream('/Ego_topic', '/udp_bridge', ego, 200, 50.0),
                     stream('/tf', '/udp_bridge', lambda s: tf(), 200, 50.0, start=0.001))


# ---------------------------------------------------------------- the verdicts


def test_a_clean_bag_exits_0_with_a_row_per_topic_and_publisher(tmp_path, capsys):
    status, out, err = run(capsys, clean(tmp_path))
    assert status == 0, out + err
    table = rows(out)
    assert table[('/imu', '/udp_bridge')] == ['200', '50.00', '0.00', 'header.seq', '0']
    assert table[('/tf', '/udp_bridge')] == ['200', '50.00', '0.00', 'intervals', '0']
    assert 'GAP' not in out
    assert out.splitlines()[0].endswith('4.0 s from its first message to its last, 600 messages, 3 topics, '
                                        '3 publishers')
    assert out.splitlines()[-1] == 'result: no gap (publishers: 2 by header.seq, 1 by intervals)'


def test_a_dropped_seq_exits_1_and_names_topic_publisher_and_seq(tmp_path, capsys):
    path = write_bag(tmp_path / 'lost.bag', stream('/imu', '/udp_bridge', imu, 200, 50.0, skip={50, 120, 121}),
                     stream('/gps/fix', '/udp_bridge', lambda s: imu(s), 40, 10.0))
    status, out, _ = run(capsys, path)
    assert status == 1
    assert rows(out)[('/imu', '/udp_bridge')] == ['197', '49.25', '0.00', 'header.seq', '3']
    assert '  GAP /imu from /udp_bridge: 1 lost between 0.98 s and 1.02 s (header.seq 50 then 52)' in out
    assert '  GAP /imu from /udp_bridge: 2 lost between 2.38 s and 2.44 s (header.seq 120 then 123)' in out
    assert rows(out)[('/gps/fix', '/udp_bridge')][-1] == '0'
    assert out.splitlines()[-1].startswith('result: GAPS: 3 messages lost by 1 publisher on 1 topic ')


def test_a_gap_in_a_topic_without_header_is_found_by_its_intervals(tmp_path, capsys):
    path = write_bag(tmp_path / 'tf.bag', stream('/tf', '/udp_bridge', lambda s: tf(), 200, 50.0,
                                                 skip=set(range(100, 110))))
    status, out, _ = run(capsys, path)
    assert status == 1
    assert rows(out)[('/tf', '/udp_bridge')][-2:] == ['intervals', '10']
    assert ('GAP /tf from /udp_bridge: 10 lost between 1.98 s and 2.20 s (0.220 s without a message, 11 x the '
            'median 0.020 s)') in out
    # one lost message is within --gap-factor 3: an interval of 2 periods is not judged a gap
    path = write_bag(tmp_path / 'one.bag', stream('/tf', '/udp_bridge', lambda s: tf(), 200, 50.0, skip={100}))
    assert run(capsys, path)[0] == 0
    assert run(capsys, path, '--gap-factor', '1.5')[0] == 1


def test_an_interval_made_up_by_a_burst_is_late_delivery_not_a_gap(tmp_path, capsys):
    """A recorder busy for 0.1 s gets the five messages that waited at once: late, not lost."""
    times = [i / 50.0 for i in range(200)]
    times[100:105] = [2.083 + k * 0.0005 for k in range(5)]
    path = write_bag(tmp_path / 'burst.bag', [(T0 + t, '/tf', '/udp_bridge', tf()) for t in times])
    status, out, _ = run(capsys, path)
    assert status == 0, out
    assert 'note /tf from /udp_bridge: late, not lost: nothing between 1.98 s and 2.08 s, then 5 messages at ' \
           'once' in out


def test_many_gaps_are_counted_after_the_first_ten(tmp_path, capsys):
    path = write_bag(tmp_path / 'many.bag', stream('/imu', '/udp_bridge', imu, 500, 50.0, skip=set(range(10, 480, 20))))
    status, out, _ = run(capsys, path)
    assert status == 1
    assert rows(out)[('/imu', '/udp_bridge')][-1] == '24'
    assert out.count('  GAP /imu from /udp_bridge: 1 lost between ') == 10
    assert '  ... /imu from /udp_bridge: 14 more gaps' in out


def test_a_late_first_message_is_reported_and_is_not_a_loss(tmp_path, capsys):
    """The issue's /imu: it begins 1.2 s after the bag, so it holds fewer messages than rate x length."""
    path = write_bag(tmp_path / 'late.bag', stream('/Ego_topic', '/udp_bridge', ego, 1500, 50.0),
                     stream('/imu', '/udp_bridge', imu, 1440, 50.0, start=1.2, seq0=61))
    status, out, _ = run(capsys, path)
    assert status == 0, out
    assert rows(out)[('/imu', '/udp_bridge')] == ['1440', '50.00', '1.20', 'header.seq', '0']
    assert 'A late first message is not a loss' in out
    assert out.splitlines()[-1] == 'result: no gap (publishers: 2 by header.seq)'


# ---------------------------------------------------------------- exit status 2


def test_a_missing_file_and_one_that_is_no_bag_exit_2(tmp_path, capsys):
    status, out, err = run(capsys, tmp_path / 'none.bag')
    assert (status, out) == (2, '')
    assert err.startswith(f"morai_bag_check: cannot read {tmp_path / 'none.bag'}: ") and 'No such file' in err
    text = tmp_path / 'notes.bag'
    text.write_text('not a bag\n')
    status, out, err = run(capsys, clean(tmp_path), text)
    assert (status, out) == (2, ''), 'nothing is checked when a bag cannot be read'
    assert err.startswith(f'morai_bag_check: cannot read {text}: ')


def test_a_damaged_bag_exits_2(tmp_path, capsys):
    """Bytes overwritten inside a chunk: rosbag stops on a record it cannot read."""
    path = clean(tmp_path)
    with open(path, 'r+b') as f:
        f.seek(8000)
        f.write(b'\xff' * 4000)
    status, out, err = run(capsys, path)
    assert status == 2
    assert err.startswith(f'morai_bag_check: cannot read {path}: '), err


def test_a_recording_that_did_not_close_exits_2_and_says_reindex(tmp_path, capsys):
    """What `rosbag record` leaves when it is killed: a .bag.active without its index."""
    bag = rosbag.Bag(str(tmp_path / 'drive.bag'), 'w', chunk_threshold=1024)
    for i in range(100):
        bag.write('/imu', imu(i), rospy.Time.from_sec(T0 + i / 50.0))
    bag.flush()
    active = tmp_path / 'drive.bag.active'
    shutil.copy(str(tmp_path / 'drive.bag'), str(active))
    bag.close()
    status, out, err = run(capsys, active)
    assert (status, out) == (2, '')
    assert err == f'morai_bag_check: {active} is not indexed (a recording that did not close): ' \
                  f'rosbag reindex {active}\n'


@pytest.mark.parametrize('argv', [[], ['--gap-factor', '1'], ['--min-messages', '2'], ['--no-such-option']],
                         ids=['no-bag', 'factor-1', 'min-2', 'unknown'])
def test_usage_errors_exit_2(tmp_path, capsys, argv):
    status, out, err = run(capsys, *(argv + ([] if not argv else [clean(tmp_path)])))
    assert (status, out) == (2, '')
    assert err.startswith('usage: morai_bag_check ')


# ---------------------------------------------------------------- what is not a loss, and what is not judged


def test_a_publisher_restart_is_noted_not_counted(tmp_path, capsys):
    path = write_bag(tmp_path / 'restart.bag', stream('/imu', '/udp_bridge', imu, 100, 50.0, seq0=400),
                     stream('/imu', '/udp_bridge', imu, 100, 50.0, start=2.0, seq0=1))
    status, out, _ = run(capsys, path)
    assert status == 0, out
    assert 'note /imu from /udp_bridge: restarted between 1.98 s and 2.00 s: header.seq 499 then 1 (not counted ' \
           'as a loss)' in out


def test_a_publisher_that_leaves_seq_unset_is_checked_by_its_intervals(tmp_path, capsys):
    path = write_bag(tmp_path / 'unset.bag', stream('/imu', '/cpp_node', lambda s: imu(0), 200, 50.0,
                                                    skip=set(range(100, 110))))
    status, out, _ = run(capsys, path)
    assert status == 1
    assert rows(out)[('/imu', '/cpp_node')][-2:] == ['intervals', '10']
    assert 'note /imu from /cpp_node: header.seq unset (always 0): checked by intervals' in out


def test_the_publishers_of_one_topic_are_checked_apart(tmp_path, capsys):
    """/diagnostics: every node publishes it, each numbering its own messages, at 1 Hz plus forced updates."""
    from diagnostic_msgs.msg import DiagnosticArray

    def diag(seq):
        m = DiagnosticArray()
        m.header.seq = seq
        return m
    irregular = [0.0, 0.3, 1.0, 2.0, 2.1, 2.15, 3.0, 4.0, 5.0, 5.5, 6.0, 7.0]
    path = write_bag(tmp_path / 'diag.bag',
                     [(T0 + t, '/diagnostics', '/udp_bridge', diag(10 + i)) for i, t in enumerate(irregular)],
                     stream('/diagnostics', '/lidar_bridge', diag, 8, 1.0, start=0.5, skip={4}))
    status, out, _ = run(capsys, path)
    assert status == 1
    table = rows(out)
    assert table[('/diagnostics', '/udp_bridge')][-2:] == ['header.seq', '0']
    assert table[('/diagnostics', '/lidar_bridge')] == ['7', '0.86', '0.50', 'header.seq', '1']
    assert 'GAP /diagnostics from /lidar_bridge: 1 lost between 3.50 s and 5.50 s (header.seq 4 then 6)' in out


def test_latched_irregular_and_sparse_topics_are_not_judged(tmp_path, capsys):
    path = write_bag(tmp_path / 'sparse.bag',
                     [(T0, '/tf_static', '/lidar_bridge', tf()), (T0 + 0.01, '/tf_static', '/camera_bridge', tf())],
                     stream('/camera/boxes', '/camera_bridge', lambda s: tf(), 100, 10.0, skip=set(range(20, 40))),
                     stream('/events', '/driver', lambda s: tf(), 50, 10.0, skip=set(range(20, 30))),
                     stream('/few', '/driver', lambda s: tf(), 9, 1.0, skip={4}))
    status, out, _ = run(capsys, path)
    table = rows(out)
    assert table[('/tf_static', '/lidar_bridge')] == ['1', '-', '0.00', 'not', 'judged', '(irregular)', '-']
    assert table[('/camera/boxes', '/camera_bridge')][3:] == ['not', 'judged', '(irregular)', '-']
    assert table[('/few', '/driver')][3:] == ['not', 'judged', '(8', 'messages)', '-']
    assert (status, table[('/events', '/driver')][-2:]) == (1, ['intervals', '10'])
    status, out, _ = run(capsys, path, '--irregular', '/events')
    assert (status, rows(out)[('/events', '/driver')][3:]) == (0, ['not', 'judged', '(irregular)', '-'])
    assert out.splitlines()[-1] == 'result: no gap (publishers: 5 not judged)'
    assert run(capsys, path, '--min-messages', '8')[0] == 1


def test_joined_pieces_of_one_recording_are_checked_as_one(tmp_path, capsys):
    """rosbag record --split: a gap between two pieces is only seen with --joined."""
    whole = stream('/imu', '/udp_bridge', imu, 300, 50.0, skip={150})
    first = write_bag(tmp_path / 'drive_1.bag', [m for m in whole if m[0] < T0 + 3.0])
    second = write_bag(tmp_path / 'drive_2.bag', [m for m in whole if m[0] >= T0 + 3.0])
    assert run(capsys, first)[0] == run(capsys, second)[0] == 0
    status, out, _ = run(capsys, second, first, '--joined')
    assert status == 1
    assert out.splitlines()[0].startswith(f'{first}, {second}: 6.0 s from its first message to its last, '
                                          '299 messages')
    assert 'GAP /imu from /udp_bridge: 1 lost between 2.98 s and 3.02 s (header.seq 150 then 152)' in out
    status, out, _ = run(capsys, first, second)
    assert status == 0 and out.count('result: no gap') == 2


def test_topic_checks_only_the_topics_given(tmp_path, capsys):
    path = write_bag(tmp_path / 'two.bag', stream('/imu', '/udp_bridge', imu, 100, 50.0, skip={50}),
                     stream('/Ego_topic', '/udp_bridge', ego, 100, 50.0))
    status, out, _ = run(capsys, path, '--topic', '/Ego_topic')
    assert (status, set(rows(out))) == (0, {('/Ego_topic', '/udp_bridge')})
    assert run(capsys, path, '--topic', '/Ego_topic', '--topic', '/imu')[0] == 1


def test_an_empty_bag_says_so(tmp_path, capsys):
    path = tmp_path / 'empty.bag'
    rosbag.Bag(str(path), 'w').close()
    assert run(capsys, path) == (0, f'{path}: no messages\n', '')


# ---------------------------------------------------------------- the per-message path


def message_classes():
    """Every message class of the packages a MORAI recording holds."""
    found = []
    for package in ('morai_msgs', 'std_msgs', 'geometry_msgs', 'sensor_msgs', 'nav_msgs', 'diagnostic_msgs',
                    'tf2_msgs', 'visualization_msgs', 'rosgraph_msgs'):
        module = importlib.import_module(package + '.msg')
        found += [c for _, c in inspect.getmembers(module, inspect.isclass) if issubclass(c, genpy.Message)]
    return sorted(set(found), key=lambda c: c._type)


def test_the_seq_read_from_the_bytes_is_genpys_for_every_numbered_type(tmp_path):
    """rospy numbers a type's header.seq where genpy says it has a header (``_has_header``: a first field
    ``Header header``); bag_check reads those four bytes.  For every type, through a real bag: the seq
    rospy's serialize_message writes, as bag_check reads it and as genpy deserializes it."""
    classes = message_classes()
    numbered = [c for c in classes if c._has_header]
    assert {'sensor_msgs/Imu', 'morai_msgs/EgoVehicleStatus', 'diagnostic_msgs/DiagnosticArray',
            'sensor_msgs/PointCloud2', 'nav_msgs/Odometry'} <= {c._type for c in numbered}
    assert {'tf2_msgs/TFMessage', 'visualization_msgs/MarkerArray', 'rosgraph_msgs/Clock', 'morai_msgs/CtrlCmd',
            'std_msgs/Header'} <= {c._type for c in classes if not c._has_header}
    path = str(tmp_path / 'types.bag')
    with rosbag.Bag(path, 'w') as bag:
        for i, cls in enumerate(classes):
            buff = io.BytesIO()
            rospy.msg.serialize_message(buff, 0x01020304 + i, cls())     # length, then the message
            bag.write('/t%d' % i, (cls._type, buff.getvalue()[4:], cls._md5sum, cls), rospy.Time(T0 + i), raw=True)
    report = bag_check.Report([path])
    with rosbag.Bag(path) as bag:
        report.read([bag])
        deserialized = {topic: msg for topic, msg, _ in bag.read_messages()}
    for i, cls in enumerate(classes):
        track = report.tracks[('/t%d' % i, None)]
        assert track.numbered == cls._has_header, cls._type
        if cls._has_header:
            assert track.seqs == [deserialized['/t%d' % i].header.seq] == [0x01020304 + i], cls._type


def test_no_message_is_deserialized(tmp_path, capsys, monkeypatch):
    """The bag is read raw: a class whose deserialize fails changes nothing."""
    path = clean(tmp_path)
    made = rosbag.bag._get_message_type

    def refusing(info):
        cls = made(info)

        def deserialize(self, data):
            raise AssertionError(f'{cls._type} deserialized')
        return type(cls.__name__, (cls,), {'deserialize': deserialize, '__slots__': ()})
    monkeypatch.setattr(rosbag.bag, '_get_message_type', refusing)
    with pytest.raises(AssertionError, match='deserialized'):
        with rosbag.Bag(path) as bag:
            next(bag.read_messages())
    assert run(capsys, path)[0] == 0
