"""The stream declarations of wire/streams.py are what the ROS side runs: every stream with a topic
resolves to a message type of the built workspace, a converter (or a receiver/sender method of
ros/sim_receive.py, ros/command_sender.py) that makes that type, and the topic and queue parameters
and data lengths the bridge uses come from the row.  (Moved from wire/test_streams.py, which needs
no ROS, in issue 42.)"""
import roslib.message
import rospy

from morai_bridge.ros import command_sender, ros_to_sim, sim_receive, sim_to_ros
from morai_bridge.wire import streams, udp

RECEIVED = [s for s in streams.FROM_SIM if s.topic]
SENT = [s for s in streams.TO_SIM if s.topic]


def test_every_topic_has_a_message_type_of_the_built_workspace():
    for s in RECEIVED + SENT:
        cls = roslib.message.get_message_class(s.ros_type)
        assert cls is not None and cls._type == s.ros_type, s


def test_every_received_stream_has_a_converter_or_a_receiver_method():
    for s in streams.FROM_SIM:
        method = getattr(sim_receive.SimReceiver, '_on_' + s.name, None)
        assert method is not None or callable(getattr(sim_to_ros, s.converter, None)), s.name


def test_every_command_has_a_converter_or_a_sender_method():
    for s in SENT:
        method = getattr(command_sender.CommandSender, '_build_' + s.name, None)
        assert method is not None or callable(getattr(ros_to_sim, s.converter, None)), s.name


def test_plain_converters_make_the_declared_type():
    # the streams without a receiver method go straight to their converter: (w, stamp, frame_id)
    plain = [s for s in RECEIVED if not hasattr(sim_receive.SimReceiver, '_on_' + s.name)]
    assert plain, 'every stream has a method: the plain path is not exercised'
    for s in plain:
        m = getattr(sim_to_ros, s.converter)(udp.make(s.classes[0]), rospy.Time(3, 4), 'map')
        assert m._type == s.ros_type
        assert m.header.stamp == rospy.Time(3, 4) and m.header.frame_id == 'map'


def test_sender_builders_return_lists_of_the_streams_class():
    # the commands without a sender method: their converter's packet(s), of the stream's wire class
    checked = []
    for s in SENT:
        if hasattr(command_sender.CommandSender, '_build_' + s.name):
            continue
        m = roslib.message.get_message_class(s.ros_type)()
        try:
            p = getattr(ros_to_sim, s.converter)(m)
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
