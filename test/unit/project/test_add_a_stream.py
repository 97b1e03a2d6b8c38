"""Adding a ground-truth (simulator -> user) stream takes its layout, its row, its converter and its
emulator builder, nothing else (docs/architecture.md, "Where to add things").

A child process declares a made-up stream the way the code declares its own (a layout with
``udp_schema.define_message`` before the package ``wire.udp`` runs its ``__init__``, which compiles the
registry, a row with ``streams.add``, an entry in ``sim_to_ros.CONVERTERS`` and one in
``emu.sim.builders.BUILDERS``), before the modules that read those tables are imported, and then checks that
the stream reaches:

* the emulator: its ``made_up_port`` and ``made_up_hz`` options exist, and a step sends the datagram
  on a real loopback UDP socket to the port given by that option;
* the bridge's receive path: ``SimReceiver.feed`` of that datagram decodes it and publishes what the
  converter made (rospy's Publisher replaced by a recorder: no ROS master);
* the generated launch files (``tools/gen_launch.launch_text`` of udp_bridge and sim_emulator), the
  docs' port table (``ports_table``) and the per-stream tables of docs/ros_api.md and docs/emulator.md
  (``stream_table``: the row's ``doc`` and ``emu_doc``);
* the suite's per-stream checks (the stamp rule, the newest-sample rule's counters, the Header rule in every
  message set, one table per direction, the plain converter's type and the converter cases), run on the
  rows with the made-up one among them: its type is morai_msgs/IntersectionStatus, which has the Header.
"""
import json
import os
import subprocess
import sys

import helpers

CHILD = r'''
import json
import socket
import sys

sys.path.insert(0, sys.argv[1])                      # tools/, for gen_launch
# the package wire.udp compiles the MORAI registry when its __init__ runs: it is made here and runs below,
# after the made-up layout, as editing wire/udp/layouts.py would have it
import importlib.util
import morai_bridge.wire
UDP_SPEC = importlib.util.find_spec('morai_bridge.wire.udp')
UDP_PACKAGE = importlib.util.module_from_spec(UDP_SPEC)
sys.modules['morai_bridge.wire.udp'] = UDP_PACKAGE
from morai_bridge.wire.udp import layouts as udp_layouts, schema as udp_schema  # noqa: F401  (the MORAI layouts, not yet compiled)
assert not hasattr(UDP_PACKAGE, 'PROTOCOL')

# 1. its layout
MadeUp = udp_schema.define_message(
    'MadeUp', 'made_up', b'#MadeUp$', 'sim->user', 'A made-up ground-truth stream.',
    [udp_schema.Variant(12, udp_schema.table((('sec', 'i', 's'), ('nsec', 'i', 'ns'),
                                              ('value', 'f', 'm; a made-up quantity'))))],
    current=12)

# 2. its row (wire.udp compiles the registry, the made-up layout included)
UDP_SPEC.loader.exec_module(UDP_PACKAGE)
morai_bridge.wire.udp = UDP_PACKAGE
from morai_bridge.wire import udp
from morai_bridge.wire.udp import streams
assert udp.PROTOCOL and MadeUp in udp.MESSAGE_CLASSES
# a message type with a Header first in every message set (the Header rule), and, stamped from its packets,
# the newest-sample rule's counters
streams.add(streams.Stream('made_up', 9555, streams.SIM_TO_USER, (MadeUp,), 'made_up_topic',
                           'morai_msgs/IntersectionStatus', stamp=streams.PACKET, counters=streams.ordered(),
                           sim_row='Made Up', emu_hz=25.0, emu_hz_doc='Made Up rate',
                           doc=('`#MadeUp$` (33 B)', 'as sent', 'intersection_index = value x 2'),
                           emu_doc=('9555', '25 Hz', '`#MadeUp$` 12 → 33 B'),
                           native_rate='not in native ROS mode (made up)'))

# 3. its converter
from morai_msgs.msg import IntersectionStatus
from morai_bridge.ros.udp_bridge import sim_to_ros


def made_up(w, stamp, frame_id):
    m = IntersectionStatus()
    m.header.stamp, m.header.frame_id = stamp, frame_id
    m.intersection_index = int(w.value * 2.0)
    return m


sim_to_ros.CONVERTERS['made_up'] = made_up

# 4. its emulator builder
from morai_bridge.emu.sim import builders


def build_made_up(step):
    return (udp.make(MadeUp, sec=step.sec, nsec=step.nsec, value=2.0),)


builders.BUILDERS['made_up'] = build_made_up

out = {}
# the emulator: the options made from the row, the datagram on the option's port
from morai_bridge.emu.sim import LISTEN_PORTS, SEND_PORTS, FIELD_DOCS, SimConfig, SimEmulator
rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rx.bind(('127.0.0.1', 0))
rx.settimeout(5.0)
kw = {field: 0 for field, _, _ in list(LISTEN_PORTS.values()) + list(SEND_PORTS.values())}
kw['made_up_port'] = rx.getsockname()[1]
out['defaults'] = [SimConfig().made_up_port, SimConfig().made_up_hz, FIELD_DOCS['made_up_hz']]
with SimEmulator(SimConfig(deterministic=True, **kw)) as sim:
    out['dst_ports'] = sorted(sim.dst_ports)
    sim.step(1)
    data = rx.recv(65535)
out['datagram'] = data.hex()
w = udp.decode(data)
out['decoded'] = [type(w).__name__, w.value]

# the bridge's receive path: decoded, converted by the referenced converter, published
import rospy
published = []


class Recorder:
    def __init__(self, topic, cls, queue_size=None):
        self.topic = topic

    def publish(self, m):
        published.append((self.topic, m.intersection_index))


rospy.Publisher = Recorder
from morai_bridge.configuration.params import Config
from morai_bridge.nodes import udp_bridge
from morai_bridge.ros.udp_bridge.sim_receive import SimReceiver
cfg = Config({p.name: p.default for p in udp_bridge.PARAMS})
out['bridge_defaults'] = [cfg.made_up_port, cfg.made_up_topic]
receiver = SimReceiver(cfg, '127.0.0.1', '127.0.0.1', live=False, clock=rospy.Time)
out['fed'] = receiver.feed(9555, data)
out['published'] = [p for p in published if p[0] == 'made_up_topic']
out['counted'] = receiver.stats['made_up'].published

# the generated launch files and the docs' port table
import gen_launch
out['udp_bridge_launch'] = [line for line in gen_launch.launch_text('udp_bridge').splitlines() if 'made_up' in line]
out['sim_emulator_launch'] = [line for line in gen_launch.launch_text('sim_emulator').splitlines()
                              if 'made_up' in line]
out['ports_table'] = [line for line in gen_launch.ports_table().splitlines() if 'made_up' in line]
out['doc_tables'] = [line for marker in sorted(gen_launch.STREAM_TABLES)
                     for line in gen_launch.stream_table(marker).splitlines() if 'made_up' in line]
out['other_tables'] = [line for _, table in gen_launch.OTHER_TABLES.values()
                       for line in table().splitlines() if 'made_up' in line]

# the suite's per-stream checks, run with the made-up row among the streams (the docs' tables aside: those say
# `bash tools/dev.sh regen` is due)
import importlib.util
import os


def checks(rel, names):
    spec = importlib.util.spec_from_file_location(os.path.basename(rel)[:-3], os.path.join(sys.argv[2], rel))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in names:
        getattr(module, name)()
    return names


sys.path.insert(0, sys.argv[2])                      # test/unit: helpers, convert_cases
ran = checks('wire/udp/test_streams.py', ['test_stamp_rule_follows_the_wire',
                                          'test_the_newest_sample_rule_s_counters_are_declared_by_every_timed_stream',
                                          'test_the_header_rule_holds_for_every_received_stream_in_every_message_set',
                                          'test_a_streams_wire_name_is_its_name'])
ran += checks('ros/udp_bridge/test_sim_receive_streams.py', [
    'test_every_topic_has_a_message_type_of_the_built_workspace', 'test_every_received_stream_has_a_converter_or_a_receiver_method',
    'test_each_stream_is_in_exactly_one_table_of_its_direction', 'test_plain_converters_make_the_declared_type',
    'test_topic_and_queue_parameters_come_from_the_rows'])
import convert_cases
out['converter_cases'] = convert_cases.check_converters([udp.make(MadeUp, sec=1, nsec=2, value=3.0)]).get('made_up')
out['checks'] = ran
print(json.dumps(out))
'''


def test_a_made_up_stream_reaches_the_emulator_the_bridge_the_launch_files_and_the_docs():
    # the child needs ROS's Python (rospy, std_msgs): without it (the py38 layer) this stops here, and
    # conftest.py reports the test as needing ROS instead of a failure inside the child
    import rospy  # noqa: F401
    import std_msgs.msg  # noqa: F401
    tools = os.path.join(helpers.ROOT, 'tools')
    run = subprocess.run([sys.executable, '-c', CHILD, tools, os.path.join(helpers.ROOT, 'test', 'unit')],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out['defaults'] == [9555, 25.0, 'Made Up rate']
    assert out['dst_ports'] == ['made_up']
    assert out['decoded'] == ['MadeUp', 2.0]
    assert bytes.fromhex(out['datagram']).startswith(b'#MadeUp$')
    assert out['bridge_defaults'] == [9555, 'made_up_topic']
    assert out['fed'] is True
    assert out['published'] == [['made_up_topic', 4]] and out['counted'] == 1
    assert any('name="made_up_port" default="9555"' in line for line in out['udp_bridge_launch'])
    assert any('name="made_up_topic" default="made_up_topic"' in line for line in out['udp_bridge_launch'])
    assert any('name="made_up_port" default="9555"' in line for line in out['sim_emulator_launch'])
    assert any('name="made_up_hz" default="25.0"' in line for line in out['sim_emulator_launch'])
    assert len(out['ports_table']) == 1 and out['ports_table'][0].startswith('| Made Up | network settings |')
    assert '`made_up_port:=`' in out['ports_table'][0]
    # the per-stream tables of docs/ros_api.md and docs/emulator.md: its row's doc columns
    assert out['doc_tables'] == ['| `made_up` | 9555 | 25 Hz | `#MadeUp$` 12 → 33 B |',
                                 '| `made_up_topic` | morai_msgs/IntersectionStatus | `#MadeUp$` (33 B) | as sent | '
                                 'intersection_index = value x 2 |']
    # docs/emulator.md's per-stream options and docs/ros_api.md's native names: from the row too
    assert out['other_tables'] == ["| `made_up_port` | `9555` | destination port of the made up stream (0 disabled) |",
                                   '| `made_up_hz` | `25.0` | Made Up rate |',
                                   '| `/made_up_topic` | `/made_up_topic` | same | morai_msgs/IntersectionStatus | '
                                   'not in native ROS mode (made up) |']
    # the suite's per-stream checks hold for it (a converter case came from the row, no edit of convert_cases.py)
    assert len(out['checks']) == 9 and out['converter_cases'] == 2
