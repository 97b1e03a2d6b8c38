"""The stream declarations of wire/udp/streams.py are what the ROS side runs: every stream with a topic
resolves to a message type of the built workspace, a converter (or a receiver/sender method of
ros/udp_bridge/sim_receive.py, ros/udp_bridge/command_sender.py) that makes that type, and the topic and
queue parameters and data lengths the bridge uses come from the row.  (Moved from wire/test_streams.py, which needs
no ROS, in issue 42.)"""
import roslib.message
import rospy

from morai_bridge.ros.udp_bridge import command_sender, ros_to_sim, sim_receive, sim_to_ros
from morai_bridge.wire.udp import streams
from morai_bridge.wire import udp

RECEIVED = [s for s in streams.FROM_SIM if s.topic]
SENT = [s for s in streams.TO_SIM if s.topic]


def test_every_topic_has_a_message_type_of_the_built_workspace():
    for s in RECEIVED + SENT:
        cls = roslib.message.get_message_class(s.ros_type)
        assert cls is not None and cls._type == s.ros_type, s


def test_every_received_stream_has_a_converter_or_a_receiver_method():
    for s in streams.FROM_SIM:
        method = sim_receive.SimReceiver.METHODS.get(s.name)
        assert method is not None or callable(sim_to_ros.CONVERTERS.get(s.name)), s.name


def test_every_command_has_a_converter_or_a_sender_method():
    for s in SENT:
        method = command_sender.CommandSender.METHODS.get(s.name)
        assert method is not None or callable(ros_to_sim.CONVERTERS.get(s.name)), s.name


def test_each_stream_is_in_exactly_one_table_of_its_direction():
    """One handler per stream and nothing in a table that does not run: a received stream is in the
    receiver's methods or in sim_to_ros.CONVERTERS, a command with a topic in the sender's methods or in
    ros_to_sim.CONVERTERS, never in both, and the tables hold nothing else (sim_control has no topic: its
    packets are the services')."""
    received = {s.name for s in streams.FROM_SIM}
    sent = {s.name for s in SENT}
    for methods, converters, names in ((sim_receive.SimReceiver.METHODS, sim_to_ros.CONVERTERS, received),
                                       (command_sender.CommandSender.METHODS, ros_to_sim.CONVERTERS, sent)):
        assert not set(methods) & set(converters), set(methods) & set(converters)
        assert set(methods) | set(converters) == names
    for table in (sim_receive.SimReceiver.METHODS, command_sender.CommandSender.METHODS):
        for name, method in table.items():
            assert callable(method) and name in method.__name__, (name, method)


def test_plain_converters_make_the_declared_type():
    # the streams without a receiver method go straight to their converter: (w, stamp, frame_id)
    plain = [s for s in RECEIVED if s.name in sim_to_ros.CONVERTERS]
    assert plain, 'every stream has a method: the plain path is not exercised'
    for s in plain:
        m = sim_to_ros.CONVERTERS[s.name](udp.make(s.classes[0]), rospy.Time(3, 4), 'map')
        assert m._type == s.ros_type
        assert m.header.stamp == rospy.Time(3, 4) and m.header.frame_id == 'map'


def test_sender_builders_return_lists_of_the_streams_class():
    # the commands without a sender method: their converter's packet(s), of the stream's wire class
    checked = []
    for s in SENT:
        if s.name not in ros_to_sim.CONVERTERS:
            continue
        m = roslib.message.get_message_class(s.ros_type)()
        try:
            p = ros_to_sim.CONVERTERS[s.name](m)
        except ros_to_sim.CommandError:
            continue          # a default message the converter refuses (e.g. an empty scenario name)
        for packet in (p if isinstance(p, list) else [p]):
            assert isinstance(packet, s.classes), s.name
        checked.append(s.name)
    assert len(checked) >= 5, checked


def test_topic_and_queue_parameters_come_from_the_rows():
    topics = {p.name: p.default for p in sim_receive.TOPIC_PARAMS + command_sender.TOPIC_PARAMS}
    for s in RECEIVED + SENT:
        assert topics[s.name + '_topic'] == s.topic
    # event topics keep every message; control commands keep only the newest
    assert [s.name for s in RECEIVED if s.queue] == [s.name for s in RECEIVED if s.event]
    assert streams.BY_NAME['ctrl_cmd'].queue == 1


def test_command_data_lengths_from_sizes():
    assert command_sender.data_length_of(udp.EgoCtrlCmd, 55) == 23
    assert command_sender.data_length_of(udp.EgoCtrlCmd, 59) == 27
    assert command_sender.data_length_of(udp.SetTrafficLight, 47) == 15
