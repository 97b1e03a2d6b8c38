"""The built workspace's morai_msgs message set: its generated classes, rosmsg, and the bridge's
converters in that set.  The sets test layer (sets_check.py) runs this file in the workspace of
every set, with MORAI_EXPECT_MSGS_SET naming the set it built; alone it checks whatever set the
sourced workspace has."""
import importlib
import json
import math
import os
import subprocess
import sys

import pytest
import rospy
from morai_msgs.msg import CollisionData, EgoVehicleStatus

from morai_bridge.ros import msg_set
from morai_bridge.ros.udp_bridge import ros_to_sim, sim_to_ros
from morai_bridge.ros.udp_bridge.ros_to_sim import CommandError
from morai_bridge.wire import udp
from morai_bridge.wire.udp import samples as udp_samples

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'test', 'unit'))
import convert_cases as cases  # noqa: E402  (the converter checks of test_sim_to_ros)
SET = msg_set.NAME
TABLE = json.load(open(os.path.join(ROOT, 'test', 'data', 'msg_sets', SET + '.json')))['types']
STAMP = rospy.Time(12, 345)


def test_the_workspace_built_the_expected_set():
    assert SET in msg_set.SETS
    expected = os.environ.get('MORAI_EXPECT_MSGS_SET')
    if expected:
        assert SET == expected


@pytest.mark.parametrize('full', sorted(TABLE))
def test_generated_class_md5_is_upstreams(full):
    v = TABLE[full]
    mod = importlib.import_module('morai_msgs.' + v['kind'])
    name = full.split('/')[1]
    cls = getattr(mod, name)
    assert (cls._type, cls._md5sum) == (full, v['md5'])
    if v['kind'] == 'srv':
        assert getattr(mod, name + 'Request')._md5sum == v['request_md5']
        assert getattr(mod, name + 'Response')._md5sum == v['response_md5']


def test_no_type_beyond_the_set_is_generated():
    """A type an earlier build of another set generated must not linger (CMakeLists.txt removes
    the generated code when the set changes; a workspace per set in tools/dev.sh)."""
    import morai_msgs.msg
    import morai_msgs.srv
    msgs = {n for n in dir(morai_msgs.msg) if hasattr(getattr(morai_msgs.msg, n), '_md5sum')}
    srvs = {n for n in dir(morai_msgs.srv) if hasattr(getattr(morai_msgs.srv, n), '_request_class')}
    want = {full.split('/')[1]: v['kind'] for full, v in TABLE.items()}
    # a service also generates <Name>Request and <Name>Response message classes in morai_msgs.srv
    assert msgs == {n for n, k in want.items() if k == 'msg'}
    assert srvs == {n for n, k in want.items() if k == 'srv'}
    gen = os.path.dirname(morai_msgs.msg.__file__)
    assert sorted(f[1:-3] for f in os.listdir(gen) if f.startswith('_') and f.endswith('.py') and f != '__init__.py') == \
        sorted(n for n, k in want.items() if k == 'msg')


def test_the_types_carried_from_a_branch_are_there_for_python_and_cpp():
    """Sets 2024 and 2026 carry the new types of MORAI's beta_drive branch (tools/msg_sets.py add;
    docs/versions.md): a package written against that branch imports them (Python) and includes them
    (C++) from this workspace, with the branch's md5."""
    with open(os.path.join(ROOT, 'test', 'data', 'msg_sets', SET + '.json')) as f:
        carried = [t for a in json.load(f).get('additive', ()) for t in a['types']]
    assert len(carried) == (0 if SET == '2022' else 10)
    include = [os.path.join(p, 'include', 'morai_msgs') for p in os.environ['CMAKE_PREFIX_PATH'].split(':')
               if os.path.isdir(os.path.join(p, 'include', 'morai_msgs'))][0]
    import morai_msgs.msg
    for full in carried:
        name = full.split('/')[1]
        assert getattr(morai_msgs.msg, name)._md5sum == TABLE[full]['md5']
        with open(os.path.join(include, name + '.h')) as f:
            assert '"%s"' % TABLE[full]['md5'] in f.read()


def test_rosmsg_and_rossrv_read_the_set():
    def out(*args):
        return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60,
                              check=True).stdout.strip()
    assert out('rosmsg', 'md5', 'morai_msgs/EgoVehicleStatus') == TABLE['morai_msgs/EgoVehicleStatus']['md5']
    assert out('rossrv', 'md5', 'morai_msgs/MoraiWaitForTickSrv') == TABLE['morai_msgs/MoraiWaitForTickSrv']['md5']
    shown = out('rosmsg', 'show', 'morai_msgs/EgoVehicleStatus').split()
    assert ('front_steer_angle' in shown) == (SET == '2026') and ('wheel_angle' in shown) == (SET != '2026')
    assert ('cross_track_error' in shown) == (SET == '2026') and ('lateral_offset' in shown) == (SET != '2022')
    shown = out('rosmsg', 'show', 'morai_msgs/CtrlCmd').split()
    assert ('front_steer' in shown) == (SET == '2026') and ('steering' in shown) == (SET != '2026')


def test_the_bridge_starts_with_this_set():
    assert sim_to_ros.message_set_problems() == []
    assert msg_set.NOT_CARRIED == '' if SET == '2026' else 'set 2026 has them' in msg_set.NOT_CARRIED


def roundtrip(msg):
    """The message complete (every field set and of its type, at every depth: convert_cases.complete)
    and as a subscriber reads it back."""
    cases.complete(msg, msg._type)
    return type(msg)().deserialize(cases.serialized(msg))


def status_sample(data_length):
    sample = [m for _, m in udp_samples.per_variant() if type(m) is udp.EgoVehicleStatus
              and m.data_length == data_length][0]
    return udp.decode(udp.encode(sample))


@pytest.mark.parametrize('data_length', [216, 200, 152, 132, 94])
@pytest.mark.parametrize('sign', [1, -1])
def test_ego_status_fills_every_field_the_set_has(data_length, sign):
    w = status_sample(data_length)
    m = sim_to_ros.ego_status(w, STAMP, 'map', sign)
    assert msg_set.unfilled(m) == []
    back = roundtrip(m)
    if msg_set.STATUS_TYRES:       # the wire's tyre names are the message's
        assert sim_to_ros.TYRE_FIELDS == tuple(n for n in m.__slots__ if n.startswith(('tire_', 'side_slip_')))
    assert back.header.stamp == STAMP and back.heading == pytest.approx(w.yaw)
    f32 = lambda x: pytest.approx(x, rel=1e-6, abs=1e-6)  # noqa: E731  (float32 fields)
    assert msg_set.front_wheel_angle(back) == f32(sign * w.steer)
    if SET == '2026':
        assert back.rear_steer_angle == f32(sign * (w.rear_steer or 0.0))
        assert (back.distance_left_lane_boundary, back.distance_right_lane_boundary, back.cross_track_error) == (
            f32(w.distance_left_lane_boundary or 0.0), f32(w.distance_right_lane_boundary or 0.0),
            f32(w.cross_track_error or 0.0))
    if SET in ('2024', '2026'):
        assert back.lateral_offset == 0.0
        for name in ('tire_lateral_force_fl', 'side_slip_angle_rr', 'tire_cornering_stiffness_rl'):
            assert getattr(back, name) == f32(getattr(w, name) or 0.0)
        assert (w.tire_lateral_force_fl is not None) == (data_length in (200, 216))
    if data_length == 216:
        assert w.rear_steer and w.cross_track_error      # the sample carries non-zero values


def test_collision_fills_every_field_the_set_has():
    w = udp.decode(udp.encode(udp_samples.per_stream()['collision']))
    m = sim_to_ros.collision(w, STAMP, 'map')
    assert msg_set.unfilled(m) == []
    back = roundtrip(m)
    assert len(back.collision_object) == len([r for r in w.records if r.obj_type >= 0]) > 0
    if SET != '2022':
        assert back.collision_objecta == []
    assert isinstance(back, CollisionData)


def test_ctrl_cmd_front_steer_in_the_sets_field():
    cmd = msg_set.ctrl_cmd(longlCmdType=2, velocity=20.0, steering=math.radians(10.0))
    assert msg_set.front_steering(cmd) == pytest.approx(math.radians(10.0))
    for data_length in (23, 27):
        p = ros_to_sim.ctrl_cmd(cmd, 4, 2, 40.0, -1, data_length)
        assert p.steer == pytest.approx(-0.25) and p.cmd_type == 2 and p.velocity == 20.0
        assert p.rear_steer == (0.0 if data_length == 27 else None)
        assert udp.decode(udp.encode(p)).steer == pytest.approx(-0.25)


def test_rear_steer_only_where_set_and_packet_have_it():
    if SET != '2026':
        with pytest.raises(ValueError):
            msg_set.ctrl_cmd(longlCmdType=2, rear_steer=0.1)
        return
    cmd = msg_set.ctrl_cmd(longlCmdType=2, steering=math.radians(8.0), rear_steer=math.radians(-4.0))
    p = ros_to_sim.ctrl_cmd(cmd, 4, 2, 40.0, 1, 27)
    assert (p.steer, p.rear_steer) == (pytest.approx(0.2), pytest.approx(-0.1))
    p = ros_to_sim.ctrl_cmd(cmd, 4, 2, 40.0, 1, 27, max_rear_steering_deg=8.0)
    assert p.rear_steer == pytest.approx(-0.5)
    with pytest.raises(CommandError, match='rear_steer'):
        ros_to_sim.ctrl_cmd(cmd, 4, 2, 40.0, 1, 23)       # the 55-byte command has no rear steer
    cmd.rear_steer = float('nan')
    with pytest.raises(CommandError, match='rear_steer'):
        ros_to_sim.ctrl_cmd(cmd, 4, 2, 40.0, 1, 27)


def test_ghost_fields_no_packet_carries_are_refused_unless_zero():
    from morai_msgs.msg import MultiEgoSetting, NpcGhostCmd, NpcGhostInfo
    npc = NpcGhostInfo(unique_id=3, name='2015_Kia_K5')
    assert len(ros_to_sim.npc_ghost(NpcGhostCmd(npc_list=[npc])).npcs) == 1
    ego = MultiEgoSetting(number_of_ego_vehicle=1, camera_index=0, ego_index=[0], global_position_x=[1.0],
                          global_position_y=[2.0], global_position_z=[0.0], global_roll=[0.0], global_pitch=[0.0],
                          global_yaw=[90.0], velocity=[0.0], gear=[4], ctrl_mode=[16])
    assert len(ros_to_sim.multi_ego(ego).egos) == 1
    if SET != '2026':
        assert not hasattr(npc, 'steering_angle')
        return
    npc.steering_angle = 5.0
    with pytest.raises(CommandError, match='steering_angle'):
        ros_to_sim.npc_ghost(NpcGhostCmd(npc_list=[npc]))
    ego.brake_light = [True]
    with pytest.raises(CommandError, match=r'brake_light\[0\]'):
        ros_to_sim.multi_ego(ego)


def test_an_unknown_field_stops_the_bridge(monkeypatch):
    """A build no set matches (e.g. upstream's feature/control-status branch adds
    EgoVehicleStatus.ctrl_mode) is refused at start, not published with a field unset."""
    class Extended(EgoVehicleStatus):
        __slots__ = ['ctrl_mode']
        _type = 'morai_msgs/EgoVehicleStatus'
    monkeypatch.setattr(sim_to_ros, 'EgoVehicleStatus', Extended)
    problems = sim_to_ros.message_set_problems()
    assert len(problems) == 1 and 'morai_msgs/EgoVehicleStatus has ctrl_mode' in problems[0]
