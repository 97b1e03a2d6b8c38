"""Simulator version profiles (wire/sim_versions, config/sim_versions) and the meanings that differ
between releases, each checked against outside evidence: real packets (test/data/sim_evidence),
published measurements and saved settings of teams that drove the simulator, MORAI's own examples.
Nothing here takes its expected value from our emulator."""
import math
import os
from pathlib import Path

import pytest

import helpers
from morai_bridge.configuration import sim_versions as sv
from morai_bridge.configuration import vehicle_profiles
from morai_bridge.wire import udp

ROOT = Path(helpers.ROOT)
EVIDENCE = ROOT / 'test' / 'data' / 'sim_evidence'
VERSIONS = ('24.R2', '25.S4', '25.S4.MolitComp03', '26.R1')


def hexfile(name):
    lines = (EVIDENCE / name).read_text().splitlines()
    return bytes.fromhex(''.join(x for x in lines if not x.startswith('#')))


def version(name):
    return sv.load_version(name, str(ROOT / 'config' / 'sim_versions'))


# ----------------------------------------------------------------------------- the profiles

def test_every_shipped_profile_loads_and_documents_its_facts():
    assert sv.available(str(ROOT / 'config' / 'sim_versions')) == sorted(VERSIONS)
    for name in VERSIONS:
        v = version(name)
        assert v.name == name and v.description
        confidence = dict(v.confidence)
        for key in ('ctrl_steer_positive', 'status_steer_positive', 'ctrl_cmd_bytes', 'imu_bytes',
                    'empty_collision_slot', 'packet_clock'):
            assert key in dict(v.sources), (name, key)
            assert confidence[key] in ('measured', 'single source', 'inferred', 'documented'), (name, key)


def test_default_is_25_S4_with_a_command_25_S4_accepts():
    """The default is the release teams drove in 2025-2026; its Ego Ctrl Cmd is the 55 bytes that
    25.S4's receive buffer holds (heven-ad-2026 NetworkInfo: EgoCtrlConfig receiveBufferSize 55)."""
    assert sv.DEFAULT == '25.S4'
    v = version(sv.DEFAULT)
    assert v.ctrl_cmd_bytes == 55
    rows = [r.split('\t') for r in (EVIDENCE / 'networkinfo_25s4_molitcomp03_ports.tsv').read_text().splitlines()
            if not r.startswith('#')]
    head, rows = rows[0], rows[1:]
    ctrl = [dict(zip(head, r)) for r in rows if dict(zip(head, r))['ctrl_commType'] == '1']
    assert [(c['ctrl_hostPort'], c['ctrl_receiveBufferSize']) for c in ctrl] == [('9093', str(v.ctrl_cmd_bytes))]


def test_command_steering_side_per_version():
    """24.R2: MORAI's UDP examples negate a + left planner angle (MORAI-DriveExample_UDP
    network/udp_manager.py L62): wire + = right.  25.S4: "+ = left turn" measured on
    25.S4.MolitComp03 (The-GIGACHA/2026_AISW SITE_CHECKLIST.md @c7798bc)."""
    assert version('24.R2').ctrl_steer_positive == 'right'
    assert version('25.S4').ctrl_steer_positive == 'left'
    assert version('25.S4.MolitComp03').ctrl_steer_positive == 'left'
    assert sv.bridge_signs(version('24.R2')).steering_sign == -1      # what the bridge sent before
    assert sv.bridge_signs(version('25.S4')).steering_sign == 1       # + CtrlCmd.steering leaves as +


def test_status_wheel_angle_is_copied_as_native_ros_mode_publishes_it():
    """Native ROS mode: wheel_angle -10 deg for a 10 deg left turn (wonsukHeo1025 MORAI_SIGN_CONVENTIONS.md):
    + right, the convention the status is taken to carry in every shipped version."""
    for name in VERSIONS:
        assert version(name).status_steer_positive == 'right'
        assert sv.bridge_signs(version(name)).status_steering_sign == 1


def test_competition_build_ports():
    """heven-ad-2026 docs/morai/network-persistence.md: the build's defaults are 908 -> 909 for the
    competition status (CompetitioninfoPublisher, PUBSUB_TYPE 295) and 910 -> 911 for the full ego
    status (MoraiInfoPublisher, 770); the collision stream's source port is 9091 (NetworkInfo)."""
    comp = version('25.S4.MolitComp03')
    assert (comp.port('competition_status'), comp.port('ego_status')) == (909, 911)
    rows = [r.split('\t') for r in (EVIDENCE / 'networkinfo_25s4_molitcomp03_ports.tsv').read_text().splitlines()
            if not r.startswith('#')]
    table = [dict(zip(rows[0], r)) for r in rows[1:]]
    collision = next(r for r in table if r['PUBSUB_TYPE'] == '261')
    assert (collision['hostPort'], collision['destinationPort']) == ('9091', '9092')
    for name in ('25.S4', '25.S4.MolitComp03', '26.R1'):
        # the bridge must not bind the simulator's collision source port on a shared host
        assert version(name).port('gps') != int(collision['hostPort']), name
    assert version('24.R2').port('gps') == 9091 and version('24.R2').port('competition_status') == 0


def test_profile_errors_name_the_key(tmp_path):
    good = sv.as_dict(version('25.S4'))
    good['ports'] = dict(good['ports'])
    for key, value, match in [('ctrl_steer_positive', 'up', 'ctrl_steer_positive'),
                              ('ctrl_cmd_bytes', 57, 'ctrl_cmd_bytes'),
                              ('ports', {'object_info': 1}, 'ports.object_info'),
                              ('ports', {'gps': 70000}, 'ports.gps'),
                              ('colour', 'red', 'unknown keys colour')]:
        data = dict(good, **{key: value})
        with pytest.raises(sv.VersionError, match=match):
            sv.parse_version(data, 'x.yaml')
    missing = dict(good)
    del missing['imu_bytes']
    with pytest.raises(sv.VersionError, match='imu_bytes is missing'):
        sv.parse_version(missing, 'x.yaml')
    with pytest.raises(sv.VersionError, match='known versions: 24.R2, 25.S4'):
        version('27.R9')


def test_a_written_profile_loads_back(tmp_path):
    v = version('25.S4')._replace(name='mine', ctrl_steer_positive='right')
    p = tmp_path / 'mine.yaml'
    p.write_text(sv.to_yaml(v, 'written by a test'))
    back = sv.load_version(str(p))
    assert back._replace(path='') == v._replace(path='')


# ----------------------------------------------------------------------------- real packets

def test_a_real_25_S4_status_decodes_with_every_field():
    """The live 181-B competition status of 2026-10-01 (25.S4 competition build): every field of the
    152 variant, values as the capture's own test asserts them; its size is the Ioniq 5 profile's."""
    m = udp.decode(hexfile('live_25s4_competition_status_181.hex'))
    assert type(m) is udp.EgoVehicleStatus and m.data_length == 152
    assert (m.sec, m.nsec, m.ctrl_mode, m.gear) == (1790834745, 634000000, 2, 4)
    assert m.nsec % 1000000 == 0                        # the host's wall clock in milliseconds
    assert m.signed_vel == pytest.approx(-7.99324e-05, rel=1e-4) and m.accel == pytest.approx(0.18275133)
    assert (m.pos_x, m.pos_y, m.pos_z, m.acc_x, m.acc_y, m.acc_z) == (0.0,) * 6    # withheld
    assert m.yaw == pytest.approx(-177.022, abs=1e-3) and m.roll == pytest.approx(-359.44662, abs=1e-4)
    assert (m.ang_vel_x, m.ang_vel_y, m.ang_vel_z) == pytest.approx((0.000289403, 0.016954718, 0.002878771),
                                                                    rel=1e-5)
    assert m.steer == pytest.approx(-1.31452417) and m.link_id == 'A2256W001086' and m.map_data_id == 134
    ioniq = vehicle_profiles.load_profile('ioniq5', str(ROOT / 'config' / 'vehicles'))
    got = (m.size_x, m.size_y, m.size_z, m.overhang, m.wheelbase, m.rear_overhang)
    want = (ioniq.length_m, ioniq.width_m, ioniq.height_m, ioniq.front_overhang_m, ioniq.wheelbase_m,
            ioniq.rear_overhang_m)
    assert got == pytest.approx(want, abs=1e-6)
    # not in the capture: a team's measurement, 0.575 rad at steer 1 (The-GIGACHA/2026_AISW udp_bridge.py)
    assert ioniq.max_steering_deg == pytest.approx(math.degrees(0.575), abs=0.05)
    assert 'max_steering_deg' not in ioniq.verified


def test_imu_107_and_115_bytes():
    """115 B with sec/nsec (25.S4 live; the values are a real 25.S4 IMU snapshot of heven-ad-2026),
    and the manuals' 107 B without (the same bytes less the 8 of the time)."""
    data = hexfile('heven_25s4_imu_115_constructed.hex')
    m = udp.decode(data)
    assert len(data) == 115 and m.data_length == 88 and (m.sec, m.nsec) == (1785560206, 346348928)
    assert (m.ori_x, m.ori_y, m.ori_z, m.ori_w) == pytest.approx(
        (-0.00101118790917099, -0.00247233617119491, -0.719679176807404, -0.694301605224609))
    assert m.lin_acc_z == pytest.approx(9.7786865234375)
    short = bytearray(data[:25] + data[33:])
    short[9:13] = (80).to_bytes(4, 'little')        # data_length after '#IMUData$'
    s = udp.decode(bytes(short))
    assert len(short) == 107 and s.data_length == 80 and s.sec is None and s.nsec is None
    assert s._replace(sec=m.sec, nsec=m.nsec, data_length=88) == m


# ----------------------------------------------------------------------------- empty slots

def collision_messages(w):
    """The bridge's CollisionData of a collision packet."""
    pytest.importorskip('rospy')
    import rospy
    from morai_bridge.ros.udp_bridge import sim_to_ros
    return sim_to_ros.collision(w, rospy.Time(1, 2), 'map')


def test_type_minus_one_collision_slots_publish_nothing():
    """heven-ad-2026's 25.S4 fixture: one collision and four obj_type -1 slots: exactly one collision
    (their test expects 1); the 2024 capture's all-zero slots: none."""
    m = collision_messages(udp.decode(hexfile('heven_synthetic_collision_181.hex')))
    assert [(o.unique_id, o.type, o.position.x, o.position.y, o.position.z) for o in m.collision_object] == [
        (7, 1, 1.0, 2.0, 3.0)]
    assert (m.global_offset_x, m.global_offset_y) == (100.0, 200.0)
    m = collision_messages(udp.decode(hexfile('cap2024_collision_181_allzero.hex')))
    assert m.collision_object == [] and (m.global_offset_x, m.global_offset_y, m.global_offset_z) == (0.0,) * 3


def test_25_S4_no_collision_packet_with_the_ego_in_slot_0():
    """25.S4 with nothing hit: slot 0 obj_type -1 (0xFFFF) carrying the ego's position, the other slots
    -1 too (The-GIGACHA/2026_AISW udp_bridge.py: "0xffff = no collision", slot 0 = ego position):
    published with no object, in any slot order."""
    empty = udp.CollisionRecord(-1, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    ego = empty._replace(pos_x=152.25, pos_y=-1043.5, pos_z=0.75)
    for records in [(ego,) + (empty,) * 4, (empty, empty, ego, empty, empty)]:
        w = udp.decode(udp.encode(udp.make(udp.CollisionData, 148, sec=1, nsec=0, records=records)))
        assert len(w.records) == 5                  # the codec keeps them: not all zero
        assert collision_messages(w).collision_object == []
    hit = udp.CollisionRecord(1, 42, 10.0, 11.0, 0.0, 302459.9, 4122635.5, 0.0)
    w = udp.decode(udp.encode(udp.make(udp.CollisionData, 148, sec=1, nsec=0, records=(ego, hit, empty))))
    m = collision_messages(w)
    assert [(o.unique_id, o.type) for o in m.collision_object] == [(42, 1)]
    assert m.global_offset_x == pytest.approx(302459.9, abs=0.01)     # float32 on the wire


def test_type_minus_one_objects_publish_nothing():
    pytest.importorskip('rospy')
    import rospy
    from morai_bridge.ros.udp_bridge import sim_to_ros
    rec = udp.ObjectRecord(0, -1, 5.0, 6.0, 0.0, 0.0, 4.6, 1.9, 1.5, 0.9, 2.8, 0.9, 0, 0, 0, 0, 0, 0, '')
    car = rec._replace(obj_id=3, obj_type=1)
    w = udp.make(udp.ObjectInfo, 2128, sec=1, nsec=0, objects=(rec, car, rec._replace(pos_x=0.0)))
    m = sim_to_ros.object_info(udp.decode(udp.encode(w)), rospy.Time(1), 'map')
    assert (m.num_of_npcs, m.num_of_pedestrian, m.num_of_obstacle) == (1, 0, 0)


def test_search_dir_default_is_the_source_tree():
    assert sv.search_dir_default() == os.path.join(str(ROOT), 'config', 'sim_versions')
