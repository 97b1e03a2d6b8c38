"""Meaning at the ROS boundary, checked against MORAI's manuals (fidelity issue, ROS side).

1. MultiEgoSetting.ctrl_mode: the ROS manual's 16 = automode (and 2) -> wire 2.
2. Vehicle profiles in the nodes: the ERP-42 steers up to 28.17 deg, not 36.25.
3. Steering signs: + = left on the ROS side both ways; a command read back through the
   simulator emulator is what was commanded (commands, status, ghost).

Elsewhere: EventInfo codes (test_sim_services.py), the profiles themselves
(configuration/test_vehicle_profiles.py), the information services (test_info_services.py).

Needs the built workspace (morai_msgs message classes, roslaunch); no ROS master.
"""
import math
import os
import socket

import pytest

import helpers

ROOT = helpers.ROOT
PROFILES = os.path.join(ROOT, 'config', 'vehicles')


def param_default(module, name):
    import importlib
    mod = importlib.import_module('morai_bridge.nodes.' + module)
    return next(p.default for p in mod.PARAMS if p.name == name)


# ----------------------------------------------------------------------------- 1. MultiEgoSetting

def multi_ego_msg(modes):
    from morai_msgs.msg import MultiEgoSetting
    n = len(modes)
    return MultiEgoSetting(number_of_ego_vehicle=n, camera_index=0, ego_index=list(range(n)),
                           global_position_x=[1.0] * n, global_position_y=[2.0] * n, global_position_z=[0.0] * n,
                           global_roll=[0.0] * n, global_pitch=[0.0] * n, global_yaw=[90.0] * n,
                           velocity=[0.0] * n, gear=[4] * n, ctrl_mode=list(modes))


def test_multi_ego_ctrl_mode_16_is_automode_on_the_wire():
    from morai_bridge.ros.udp_bridge import ros_to_sim
    p = ros_to_sim.multi_ego(multi_ego_msg([16, 1, 2]))
    assert [e.ctrl_mode for e in p.egos] == [2, 1, 2]


@pytest.mark.parametrize('mode', [0, 3, 4, 15, 17, -1])
def test_multi_ego_other_ctrl_modes_refused(mode):
    from morai_bridge.ros.udp_bridge import ros_to_sim
    with pytest.raises(ros_to_sim.CommandError, match='16'):
        ros_to_sim.multi_ego(multi_ego_msg([mode]))


def test_multi_ego_codes_declared_in_enums():
    from morai_bridge.wire import enums
    assert enums.MultiEgoCtrlMode.AUTO == 16 and enums.MultiEgoCtrlMode.KEYBOARD == 1
    assert enums.MULTI_EGO_TO_WIRE_CTRL_MODE == {1: enums.CtrlMode.KEYBOARD, 16: enums.CtrlMode.AUTO,
                                                 2: enums.CtrlMode.AUTO}


# ----------------------------------------------------------------------------- 2. vehicle profiles in the nodes

def test_bridge_defaults_take_max_steering_from_the_profile():
    assert param_default('udp_bridge', 'vehicle_profile') == 'morai_sedan'
    assert param_default('udp_bridge', 'max_steering_deg') == 0.0
    assert param_default('erp42_serial', 'vehicle_profile') == 'erp42'
    assert param_default('erp42_serial', 'max_steer_deg') == 0.0
    assert param_default('erp42_serial', 'wheelbase_m') == 0.0


def test_erp42_steering_normalised_by_28_17_deg():
    """The issue: ERP-42 steering came out x0.78 because 36.25 deg was used in every mode."""
    from morai_msgs.msg import CtrlCmd
    from morai_bridge.ros.udp_bridge import ros_to_sim
    from morai_bridge.configuration import vehicle_profiles as vp
    erp = vp.load_profile('erp42', PROFILES)
    max_deg = vp.choose(param_default('udp_bridge', 'max_steering_deg'), erp.max_steering_deg)
    half = CtrlCmd(longlCmdType=2, steering=math.radians(28.17 / 2))
    p = ros_to_sim.ctrl_cmd(half, 4, 2, max_deg, -1)
    assert p.steer == pytest.approx(-0.5, abs=1e-6)


def test_erp42_serial_takes_clamp_and_wheelbase_from_the_profile():
    from morai_bridge.nodes.erp42_serial import PARAMS, with_profile
    from morai_bridge.configuration.params import ParamError
    from morai_bridge.ros.params import load
    from morai_bridge.configuration import vehicle_profiles as vp
    cfg = load(PARAMS, getter=lambda n, d: d)
    erp = vp.load_profile('erp42', PROFILES)
    out = with_profile(cfg, erp)
    assert (out.max_steer_deg, out.wheelbase_m) == (28.17, 1.04)
    cfg['max_steer_deg'], cfg['wheelbase_m'] = 20.0, 1.1
    out = with_profile(cfg, erp)
    assert (out.max_steer_deg, out.wheelbase_m) == (20.0, 1.1)
    cfg['max_steer_deg'] = 0.0
    with pytest.raises(ParamError, match='exceeds the ERP-42'):
        with_profile(cfg, vp.load_profile('morai_sedan', PROFILES))


def launch_params(name, args=()):
    config = pytest.importorskip('roslaunch.config')
    import roslaunch.xmlloader
    path = os.path.join(ROOT, 'launch', name)
    cfg = config.ROSLaunchConfig()
    loader = roslaunch.xmlloader.XmlLoader()
    argv = list(args)
    loader.load(path, cfg, argv=argv, verbose=False)
    return {k: v.value for k, v in cfg.params.items()}


def test_serial_mode_launch_files_select_the_erp42_profile():
    p = launch_params('erp42_serial_udp.launch')
    assert p['/udp_bridge/vehicle_profile'] == 'erp42'
    assert p['/erp42_serial/vehicle_profile'] == 'erp42'
    assert p['/udp_bridge/max_steering_deg'] == 0.0          # the profile decides
    assert launch_params('erp42_serial_ros.launch')['/erp42_serial/vehicle_profile'] == 'erp42'
    assert launch_params('erp42_serial.launch')['/erp42_serial/vehicle_profile'] == 'erp42'
    assert launch_params('udp_bridge.launch')['/udp_bridge/vehicle_profile'] == 'morai_sedan'


# ----------------------------------------------------------------------------- 3. steering signs

def status(**kw):
    from morai_bridge.wire import udp
    return udp.make(udp.EgoVehicleStatus, data_length=200, sec=1, nsec=0, **kw)


VERSIONS = ('24.R2', '25.S4', '25.S4.MolitComp03', '26.R1')


def version_signs(name):
    from morai_bridge.configuration import sim_versions
    return sim_versions.bridge_signs(sim_versions.load_version(name))


def test_sign_parameters_default_to_the_sim_version():
    """The signs and the command size are the simulator version's unless set (0 = the version's)."""
    from morai_bridge.configuration import sim_versions
    for name in ('steering_sign', 'status_steering_sign', 'ghost_steering_sign', 'ctrl_cmd_bytes'):
        assert param_default('udp_bridge', name) == 0, name
    assert param_default('udp_bridge', 'sim_version') == sim_versions.DEFAULT == '25.S4'


def test_command_sign_per_version_follows_the_evidence():
    """24.R2: MORAI's UDP examples send a + left steering angle negated (MORAI-DriveExample_UDP
    network/udp_manager.py: steering_input = -rad2deg(steering) / max): wire + = right.
    25.S4: + = left turn, measured on 25.S4.MolitComp03 (The-GIGACHA/2026_AISW
    SITE_CHECKLIST.md @c7798bc, 2026-09-17): CtrlCmd.steering goes out unnegated."""
    assert version_signs('24.R2').steering_sign == -1
    assert version_signs('25.S4').steering_sign == 1
    assert version_signs('25.S4.MolitComp03').steering_sign == 1


def test_status_wheel_angle_is_native_ros_mode():
    """Native ROS mode reports wheel_angle -10 deg for a 10 deg LEFT turn (wonsukHeo1025/2025-HL-FMA-
    Driverless-Morai-Simulation MORAI_SIGN_CONVENTIONS.md, checked against the GUI); the UDP status is
    taken to carry the same number (+ right), so the bridge copies it in every shipped version."""
    import rospy
    from morai_bridge.ros.udp_bridge import sim_to_ros
    for v in VERSIONS:
        sign = version_signs(v).status_steering_sign
        m = sim_to_ros.ego_status(status(steer=-10.0), rospy.Time(1), 'map', sign)
        assert m.wheel_angle == -10.0, v             # a 10 deg left turn: -10, as native ROS mode
    assert sim_to_ros.ego_status(status(steer=-5.5), rospy.Time(1), 'map', -1).wheel_angle == 5.5


def test_ghost_steering_angle_uses_the_wheel_angle_convention():
    from geometry_msgs.msg import Vector3
    from morai_msgs.msg import GhostMessage
    from morai_bridge.ros.udp_bridge import ros_to_sim
    g = GhostMessage(position=Vector3(1.0, 2.0, 0.0), rotation=Vector3(0.0, 0.0, 90.0), velocity=10.0,
                     steering_angle=4.0)
    for v in VERSIONS:
        assert ros_to_sim.ego_ghost(g, version_signs(v).ghost_steering_sign).steer_angle == 4.0, v
    assert ros_to_sim.ego_ghost(g, -1).steer_angle == -4.0


class Emulator:
    """The simulator emulator on ephemeral ports, stepped by hand; its ego status comes to ``rx``."""

    def __init__(self, version='25.S4'):
        from morai_bridge.emu.sim import LISTEN_PORTS, SEND_PORTS, SimConfig, SimEmulator
        self.rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.rx.bind(('127.0.0.1', 0))
        kw = {field: -1 for field, _, _ in LISTEN_PORTS.values()}
        for name, (field, _, _) in SEND_PORTS.items():
            kw[field] = self.rx.getsockname()[1] if name == 'ego_status' else 0
        self.sim = SimEmulator(SimConfig(deterministic=True, sim_version=version, **kw))
        self.tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def send(self, port, packet):
        from morai_bridge.wire import udp
        before = self.sim.snapshot().counters[port].accepted
        self.tx.sendto(udp.encode(packet), ('127.0.0.1', self.sim.ports[port]))
        assert self.sim.wait_for(lambda s: s.counters[port].accepted > before, 2.0), 'not accepted'

    def last_status(self):
        from morai_bridge.wire import udp
        self.rx.settimeout(0.2)
        last = None
        try:
            while True:
                last = udp.decode(self.rx.recv(65535))
        except socket.timeout:
            pass
        return last

    def close(self):
        self.sim.close()
        self.rx.close()
        self.tx.close()


@pytest.fixture(params=VERSIONS)
def emulator(request):
    e = Emulator(request.param)
    e.version = request.param
    yield e
    e.close()


def test_round_trip_through_the_emulator_reads_back_what_was_commanded(emulator):
    """CtrlCmd.steering +0.2 rad (left) -> bridge -> emulator -> status -> EgoVehicleStatus: -11.46 deg
    (native ROS mode: - for a left turn), with each version's signs in the bridge and the emulator."""
    import rospy
    from morai_msgs.msg import CtrlCmd
    from morai_bridge.ros.udp_bridge import ros_to_sim, sim_to_ros
    from morai_bridge.configuration import vehicle_profiles as vp
    sedan = vp.load_profile(param_default('udp_bridge', 'vehicle_profile'), PROFILES)
    max_deg = vp.choose(param_default('udp_bridge', 'max_steering_deg'), sedan.max_steering_deg)
    for steering in (0.2, -0.3):
        cmd = CtrlCmd(longlCmdType=2, velocity=10.0, steering=steering)
        signs = version_signs(emulator.version)
        emulator.send('ctrl_cmd', ros_to_sim.ctrl_cmd(cmd, 4, 2, max_deg, signs.steering_sign))
        emulator.sim.step(3)
        w = emulator.last_status()
        m = sim_to_ros.ego_status(w, rospy.Time(1), 'map', signs.status_steering_sign)
        assert m.wheel_angle == pytest.approx(-math.degrees(steering), abs=1e-3)
    emulator.sim.step(100)
    assert emulator.sim.snapshot().ego.yaw_deg < 0      # the last command (-0.3 rad, right) turned clockwise


def test_ghost_round_trip_through_the_emulator(emulator):
    import rospy
    from geometry_msgs.msg import Vector3
    from morai_msgs.msg import GhostMessage
    from morai_bridge.ros.udp_bridge import ros_to_sim, sim_to_ros
    signs = version_signs(emulator.version)
    g = GhostMessage(position=Vector3(5.0, 6.0, 0.0), rotation=Vector3(0.0, 0.0, 30.0), velocity=0.0,
                     steering_angle=-7.5)     # wheels 7.5 deg to the left, in wheel_angle's convention
    emulator.send('ego_ghost', ros_to_sim.ego_ghost(g, signs.ghost_steering_sign))
    emulator.sim.step(2)
    m = sim_to_ros.ego_status(emulator.last_status(), rospy.Time(1), 'map', signs.status_steering_sign)
    assert (m.position.x, m.position.y) == (5.0, 6.0)
    assert m.wheel_angle == pytest.approx(-7.5, abs=1e-4)
    # placed moving with the wheels to the left, the ego turns counter-clockwise
    g.velocity = 20.0
    emulator.send('ego_ghost', ros_to_sim.ego_ghost(g, signs.ghost_steering_sign))
    emulator.sim.step(50)
    assert emulator.sim.snapshot().ego.yaw_deg > 31.0


# ----------------------------------------------------------------------------- 4. CtrlCmd: refused, mapped, clamped

def ctrl(**kw):
    from morai_msgs.msg import CtrlCmd
    from morai_bridge.ros import msg_set
    if msg_set.CTRL_FRONT_REAR and 'steering' in kw:
        kw['front_steer'] = kw.pop('steering')
    return CtrlCmd(**kw)


def ctrl_packet(m, **kw):
    from morai_bridge.ros.udp_bridge import ros_to_sim
    notes = []
    return ros_to_sim.ctrl_cmd(m, 4, 2, 36.25, 1, notes=notes, **kw), notes


def test_longl_cmd_type_zero_is_sent_as_pedal_control_and_noted():
    """MORAI's own ROS driving example fills accel / brake / steering and leaves longlCmdType at 0."""
    p, notes = ctrl_packet(ctrl(accel=0.4, brake=0.0, steering=0.1))
    assert (p.cmd_type, p.accel, p.brake) == (1, 0.4, 0.0)
    assert p.steer == pytest.approx(math.degrees(0.1) / 36.25)
    assert notes == ['longlCmdType 0 sent as 1']


@pytest.mark.parametrize('zero_as', [2, 3])
def test_longl_cmd_type_zero_follows_the_parameter(zero_as):
    p, notes = ctrl_packet(ctrl(velocity=12.0, acceleration=0.5), zero_as=zero_as)
    assert p.cmd_type == zero_as
    assert notes == [f'longlCmdType 0 sent as {zero_as}']


@pytest.mark.parametrize('cmd_type', [-1, 4, 7, 127])
def test_longl_cmd_types_the_packet_does_not_know_are_refused(cmd_type):
    from morai_bridge.ros.udp_bridge import ros_to_sim
    with pytest.raises(ros_to_sim.CommandError, match=f'longlCmdType = {cmd_type}'):
        ctrl_packet(ctrl(longlCmdType=cmd_type))


def test_longl_cmd_type_zero_refused_when_asked():
    from morai_bridge.ros.udp_bridge import ros_to_sim
    with pytest.raises(ros_to_sim.CommandError, match='zero_longl_cmd_type is 0'):
        ctrl_packet(ctrl(accel=0.4), zero_as=0)


def test_pedals_and_steering_beyond_range_are_clamped_and_noted():
    p, notes = ctrl_packet(ctrl(longlCmdType=1, accel=1.5, brake=-0.2, steering=-2.0))
    assert (p.accel, p.brake, p.steer) == (1.0, 0.0, -1.0)
    assert sorted(notes) == sorted(['accel outside 0..1: clamped', 'brake outside 0..1: clamped',
                                    notes[-1]]) and 'beyond the maximum wheel angle' in notes[-1]
    p, notes = ctrl_packet(ctrl(longlCmdType=2, velocity=20.0, steering=0.1))
    assert notes == []


@pytest.mark.parametrize('field', ['accel', 'brake', 'velocity', 'acceleration', 'steering'])
def test_non_finite_ctrl_values_are_refused(field):
    from morai_bridge.ros.udp_bridge import ros_to_sim
    with pytest.raises(ros_to_sim.CommandError, match='refused, nothing sent'):
        ctrl_packet(ctrl(longlCmdType=1, **{field: float('nan')}))


def test_zero_longl_cmd_type_default_is_pedal_control():
    assert param_default('udp_bridge', 'zero_longl_cmd_type') == 1
    assert param_default('udp_bridge', 'ctrl_cmd_timeout') > 0
