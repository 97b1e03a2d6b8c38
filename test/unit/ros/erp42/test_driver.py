"""The ERP-42 ROS layer (ros/erp42/driver.py) without a ROS master.

:class:`Erp42Core` is the driver's ROS logic without publishers or a ROS clock: a
morai_msgs/CtrlCmd handed to the serial link, a feedback frame turned into every message
it produces (ERP42Info, EgoVehicleStatus, TwistStamped, Odometry, the encoder Int32),
and the two diagnostics tasks, run here on diagnostic_updater's DiagnosticStatusWrapper.

Where a link is needed it is the real one (:class:`Erp42Link`, pyserial) on a real pty
opened by the real PCU emulator; feedback frames from the spec are written into the pty
by the emulator (``inject``) with its own feedback paused.  Expected values come from
the shared spec (spec/erp42.md sections 9, 10, 13; vectors in test/data/erp42_vectors.json,
a copy of spec/erp42_vectors.json) and from the hand computations written next to them;
docs/ros_api.md gives the diagnostics' texts and levels.

Timing assertions are loose: the machine is shared.
"""
import dataclasses
import math
from io import BytesIO

import pytest
import rospy
from diagnostic_msgs.msg import DiagnosticStatus
from diagnostic_updater import DiagnosticStatusWrapper
from geometry_msgs.msg import Vector3
from morai_msgs.msg import CtrlCmd, EgoVehicleStatus, ERP42Info

from morai_bridge.emu.pcu import PcuEmulator
from morai_bridge.emu.pcu.vehicle import VehicleModel
from morai_bridge.link.serial_port import Erp42Link
from morai_bridge.ros.erp42.driver import Erp42Core, receive_stamp
from morai_bridge.wire.erp42 import Command, CommandRejected, Feedback, decode_feedback, encode_command
from morai_bridge.wire.erp42.convert import DEFAULT_PARAMS, Erp42Params

import helpers
from helpers import Log, wait_for

V = helpers.load_vectors('erp42')
TOL = V['conventions']['float_tolerance']          # 1e-6
FRAMES = {f['name']: f for f in V['frames']}

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR

# Not the defaults, so that a frame id taken from the wrong place shows.
FRAME, ODOM = 'erp_base', 'erp_odom'
STAMP = rospy.Time(1700000000, 250000000)

# Hand computations shared below (spec 11 defaults: wheel_radius_m 0.27, encoder_ppr 100,
# wheelbase_m 1.040).
WHEEL_TURN_M = 2.0 * math.pi * 0.27                 # 1.696460 m per 100 counts
WHEELBASE = 1.040


def frame(name):
    """The spec's feedback frame ``name``, decoded from its bytes."""
    return decode_feedback(bytes.fromhex(FRAMES[name]['hex']))


def fb(**fields):
    """A feedback frame's fields: stopped, forward, AUTO, no brake, unless given."""
    base = dict(aorm=1, estop=0, gear=0, speed=0, steer=0, brake=1, enc=0, alive=0)
    base.update(fields)
    return Feedback(**base)


def core(**params):
    return Erp42Core(dataclasses.replace(DEFAULT_PARAMS, **params), frame_id=FRAME, odom_frame_id=ODOM)


def status(task, **kw):
    """(level, message, {key: value}) of a diagnostics task run on a DiagnosticStatusWrapper."""
    s = DiagnosticStatusWrapper()
    task(s, **kw)
    return s.level, s.message, {kv.key: kv.value for kv in s.values}


def roundtrip(msg):
    """What a subscriber receives: the message serialized and read back (float32 fields rounded)."""
    buf = BytesIO()
    msg.serialize(buf)
    out = type(msg)()
    out.deserialize(buf.getvalue())
    return out


# ============================================================================ feedback -> messages

@pytest.mark.parametrize('vec', V['feedback_to_messages'], ids=lambda v: v['name'])
def test_feedback_vectors_to_erp42info_and_ego_status(vec):
    """spec 10.2, vectors feedback_to_messages: km/h and deg (left +) in ERP42Info, m/s, deg and
    brake 0..1 in EgoVehicleStatus; what the serial link does not carry is 0."""
    c = Erp42Core(Erp42Params.from_mapping(vec['input']['params']), frame_id=FRAME, odom_frame_id=ODOM)
    f = decode_feedback(bytes.fromhex(vec['hex']))
    assert f == Feedback(**vec['fields'])
    m = c.feedback_messages(f, 10.0, STAMP)
    exp_info, exp_ego = vec['expected']['erp42_info'], vec['expected']['ego_vehicle_status']
    assert isinstance(m.info, ERP42Info) and isinstance(m.ego, EgoVehicleStatus)
    for info in (m.info, roundtrip(m.info)):        # ERP42Info is float32: the vectors' values are exact in it
        assert info.velocity == pytest.approx(exp_info['velocity'], abs=TOL)
        assert info.steering == pytest.approx(exp_info['steering'], abs=TOL)
        assert info.longlCmdType == 0                # no link: no fresh command is being executed
        assert (info.position_x, info.position_y, info.position_z, info.roll, info.pitch, info.yaw) == (0,) * 6
    for ego in (m.ego, roundtrip(m.ego)):
        assert ego.velocity.x == pytest.approx(exp_ego['velocity_x'], abs=TOL)
        assert (ego.velocity.y, ego.velocity.z) == (0.0, 0.0)
        assert ego.wheel_angle == pytest.approx(exp_ego['wheel_angle'], abs=TOL)
        assert ego.brake == pytest.approx(exp_ego['brake'], abs=TOL)
        assert ego.accel == 0.0                      # not available on the serial link
        assert ego.header.stamp == STAMP and ego.header.frame_id == FRAME
        assert (ego.position.x, ego.position.y, ego.position.z, ego.heading) == (0.0, 0.0, 0.0, 0.0)
        assert (ego.acceleration.x, ego.acceleration.y, ego.acceleration.z, ego.unique_id) == (0.0, 0.0, 0.0, 0)


@pytest.mark.parametrize('vec', V['feedback_to_messages'], ids=lambda v: v['name'])
def test_feedback_vectors_to_twist(vec):
    """docs/ros_api.md: twist linear.x = v [m/s], angular.z = v tan(delta) / wheelbase [rad/s],
    stamped like ego_status in ~frame_id.  With the vectors' v and delta: forward 2.777778 m/s at
    +10 deg -> +0.470959 rad/s; reverse -0.972222 m/s at -20 deg -> +0.340250 rad/s (backing with
    the wheels to the right turns the nose left); stopped -> 0."""
    c = Erp42Core(Erp42Params.from_mapping(vec['input']['params']), frame_id=FRAME, odom_frame_id=ODOM)
    m = c.feedback_messages(decode_feedback(bytes.fromhex(vec['hex'])), 10.0, STAMP)
    v = vec['expected']['ego_vehicle_status']['velocity_x']
    delta = vec['expected']['ego_vehicle_status']['wheel_angle']
    assert m.twist.header.stamp == STAMP and m.twist.header.frame_id == FRAME
    assert m.twist.twist.linear.x == pytest.approx(v, abs=TOL)
    assert m.twist.twist.angular.z == pytest.approx(v * math.tan(math.radians(delta)) / WHEELBASE, abs=TOL)
    assert (m.twist.twist.linear.y, m.twist.twist.linear.z, m.twist.twist.angular.x,
            m.twist.twist.angular.y) == (0.0,) * 4
    w = {'map_fb_forward_sign_minus1': 0.470959, 'map_fb_forward_sign_plus1': -0.470959,
         'map_fb_reverse': 0.340250, 'map_fb_estop_brake': 0.0}[vec['name']]
    assert m.twist.twist.angular.z == pytest.approx(w, abs=1e-6)


@pytest.mark.parametrize('name', ['fb_auto_forward_10kmh', 'fb_reverse_3_5kmh', 'fb_manual_idle',
                                  'fb_encoder_int32_max', 'fb_encoder_int32_min'])
def test_encoder_message_is_the_raw_signed_count(name):
    """spec 10.2: ENC is published raw as std_msgs/Int32 (signed int32, the vectors' values)."""
    m = core().feedback_messages(frame(name), 10.0, STAMP)
    assert m.encoder.data == FRAMES[name]['fields']['enc']
    assert roundtrip(m.encoder).data == FRAMES[name]['fields']['enc']


def test_no_encoder_message_when_the_encoder_is_disabled():
    """encoder_enabled false (the MORAI simulator has no encoder): no ~encoder message."""
    m = core(encoder_enabled=False).feedback_messages(frame('fb_auto_forward_10kmh'), 10.0, STAMP)
    assert m.encoder is None


def test_ground_truth_fills_position_and_heading_not_the_motion():
    """spec 10.2 with ground_truth_topic: ERP42Info position_x/y/z and yaw (deg), EgoVehicleStatus
    position, heading and acceleration come from the ground truth; speed, wheel angle, brake,
    stamp and frame still from the feedback frame."""
    c = core()
    truth = EgoVehicleStatus()
    truth.header.stamp, truth.header.frame_id = rospy.Time(5, 0), 'map'
    truth.position = Vector3(12.5, -3.25, 0.5)
    truth.heading = 135.0
    truth.acceleration = Vector3(0.75, 0.0, 0.0)
    truth.velocity = Vector3(99.0, 0.0, 0.0)
    truth.wheel_angle, truth.brake = -7.0, 0.5
    c.on_truth(truth)
    m = c.feedback_messages(frame('fb_auto_forward_10kmh'), 10.0, STAMP)
    info = roundtrip(m.info)
    assert (info.position_x, info.position_y, info.position_z, info.yaw) == (12.5, -3.25, 0.5, 135.0)
    assert (info.roll, info.pitch) == (0.0, 0.0)
    assert info.velocity == 10.0 and info.steering == 10.0           # vector map_fb_forward_sign_minus1
    ego = m.ego
    assert (ego.position.x, ego.position.y, ego.position.z, ego.heading) == (12.5, -3.25, 0.5, 135.0)
    assert (ego.acceleration.x, ego.acceleration.y, ego.acceleration.z) == (0.75, 0.0, 0.0)
    assert ego.velocity.x == pytest.approx(10.0 / 3.6, abs=TOL)
    assert (ego.wheel_angle, ego.brake) == (10.0, 0.0)
    assert ego.header.stamp == STAMP and ego.header.frame_id == FRAME


# ---------------------------------------------------------------------------- odometry

def odom_pose(m):
    p, q = m.odom.pose.pose.position, m.odom.pose.pose.orientation
    return (p.x, p.y, p.z), (q.x, q.y, q.z, q.w)


def test_odometry_frames_stamp_and_start_at_the_origin():
    """Odometry in ~odom_frame_id with child ~frame_id; the first frame only sets the encoder
    reference: identity pose; the twist is the TwistStamped's (REP-105: in the child frame)."""
    m = core().feedback_messages(frame('fb_auto_forward_10kmh'), 10.0, STAMP)
    assert m.odom.header.stamp == STAMP
    assert (m.odom.header.frame_id, m.odom.child_frame_id) == (ODOM, FRAME)
    assert odom_pose(m) == ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
    assert m.odom.twist.twist.linear.x == pytest.approx(10.0 / 3.6, abs=TOL)
    assert m.odom.twist.twist.angular.z == pytest.approx(0.470959, abs=1e-6)


def test_odometry_from_the_encoder_straight():
    """100 counts at encoder_ppr 100 = one wheel turn = 2 pi 0.27 m = 1.696460 m along x."""
    c = core()
    c.feedback_messages(fb(speed=100, enc=1000, alive=0), 10.0, STAMP)
    m = c.feedback_messages(fb(speed=100, enc=1100, alive=1), 10.02, STAMP)
    (x, y, z), q = odom_pose(m)
    assert x == pytest.approx(1.696460, abs=1e-6)
    assert (y, z) == (0.0, 0.0)
    assert q == (0.0, 0.0, 0.0, 1.0)


def test_odometry_from_the_encoder_turning_left():
    """One wheel turn (1.696460 m) with the wheels at +10 deg (raw STEER +710, feedback_steer_sign
    -1, vector map_fb_forward_sign_minus1): bicycle model, heading change
    1.696460 tan(10 deg) / 1.04 = 0.287627 rad; midpoint integration:
    x = 1.696460 cos(0.143813) = 1.678947, y = 1.696460 sin(0.143813) = 0.243133;
    quaternion about z: (0, 0, sin(0.143813), cos(0.143813)) = (0, 0, 0.143318, 0.989677)."""
    c = core()
    c.feedback_messages(fb(speed=100, steer=710, enc=0), 10.0, STAMP)
    m = c.feedback_messages(fb(speed=100, steer=710, enc=100, alive=1), 10.02, STAMP)
    (x, y, _), (qx, qy, qz, qw) = odom_pose(m)
    assert (x, y) == (pytest.approx(1.678947, abs=1e-6), pytest.approx(0.243133, abs=1e-6))
    assert (qx, qy) == (0.0, 0.0)
    assert (qz, qw) == (pytest.approx(0.143318, abs=1e-6), pytest.approx(0.989677, abs=1e-6))


def test_odometry_encoder_wraps_as_int32():
    """spec 6: ENC is a wrapping int32; from the vector fb_encoder_int32_max (2147483647) to
    fb_encoder_int32_min (-2147483648) is +1 count = 1.696460 / 100 = 0.016965 m forward."""
    c = core()
    c.feedback_messages(frame('fb_encoder_int32_max'), 10.0, STAMP)
    m = c.feedback_messages(frame('fb_encoder_int32_min'), 10.02, STAMP)
    assert odom_pose(m)[0] == (pytest.approx(0.016965, abs=1e-6), 0.0, 0.0)


@pytest.mark.parametrize('encoder_sign,enc1,x', [
    (1, -50, -0.848230),        # reversing: ENC falls by 50 counts = half a wheel turn backwards
    (-1, -100, 1.696460),       # an encoder counting down when driving forward (encoder_sign -1)
])
def test_odometry_encoder_sign(encoder_sign, enc1, x):
    """spec 10.2: travel = encoder_sign x dENC x 2 pi r / ppr."""
    c = core(encoder_sign=encoder_sign)
    c.feedback_messages(fb(gear=2 if x < 0 else 0, speed=30, enc=0), 10.0, STAMP)
    m = c.feedback_messages(fb(gear=2 if x < 0 else 0, speed=30, enc=enc1, alive=1), 10.02, STAMP)
    assert odom_pose(m)[0] == (pytest.approx(x, abs=1e-6), 0.0, 0.0)


@pytest.mark.parametrize('gear,speed,x', [
    (0, 100, 1.388889),         # 10 km/h = 2.777778 m/s forward for 0.5 s
    (2, 35, -0.486111),         # 3.5 km/h = 0.972222 m/s in reverse (GEAR 2) for 0.5 s
])
def test_odometry_without_encoder_integrates_speed(gear, speed, x):
    """encoder_enabled false: travel = signed speed x dt between the feedback read times
    (monotonic); ENC (here 5000) is ignored."""
    c = core(encoder_enabled=False)
    c.feedback_messages(fb(gear=gear, speed=speed, enc=0), 20.0, STAMP)
    m = c.feedback_messages(fb(gear=gear, speed=speed, enc=5000, alive=1), 20.5, STAMP)
    assert odom_pose(m) == ((pytest.approx(x, abs=1e-6), 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
    assert m.encoder is None


# ---------------------------------------------------------------------------- stamp

def test_receive_stamp_is_the_read_time():
    """spec 10.2: header.stamp = host time at which the frame's last byte was read.  The link
    reports that instant on the monotonic clock; read 0.25 s before now -> now - 0.25 s."""
    assert receive_stamp(49.75, rospy.Time(100, 0), 50.0) == rospy.Time(99, 750000000)
    assert receive_stamp(50.0, rospy.Time(100, 0), 50.0) == rospy.Time(100, 0)
    # a read time after `now` (clocks read in the other order) is not moved into the future
    assert receive_stamp(50.001, rospy.Time(100, 0), 50.0) == rospy.Time(100, 0)
    # simulated time not started yet (0): stays 0, never negative
    assert receive_stamp(49.0, rospy.Time(0, 0), 50.0) == rospy.Time(0, 0)


# ============================================================================ the rig: link + PCU emulator

def fast_vehicle():
    return VehicleModel(accel_mps2=20.0, decel_mps2=20.0, brake_decel_mps2=20.0, steer_rate_rad_s=5.0)


class Rig:
    """The PCU emulator on a pty, an Erp42Link (pyserial) opening it, an Erp42Core on the link;
    every feedback frame the link delivers becomes messages (``msgs``, stamped STAMP)."""

    def __init__(self, path, paused, params):
        p = dataclasses.replace(DEFAULT_PARAMS, port=path, shutdown_stop_s=0.0, **params)
        self.pcu = PcuEmulator(link=path, init_s=0.0, vehicle=fast_vehicle(), seed=1, brake_max=p.brake_max,
                               feedback_steer_sign=p.feedback_steer_sign)
        self.pcu.feedback_paused = paused     # True: no feedback but what the test injects
        self.core = Erp42Core(p, frame_id=FRAME, odom_frame_id=ODOM)
        self.msgs = []
        self.log = Log()
        self.link = Erp42Link(p, on_feedback=lambda f, t: self.msgs.append(self.core.feedback_messages(f, t, STAMP)),
                              log=self.log)
        self.core.link = self.link

    def start(self):
        self.pcu.start()
        self.link.start()
        assert wait_for(lambda: self.link.connected, 5.0), self.link.stats.last_error
        return self

    def close(self):
        self.link.stop()
        self.pcu.close()

    def command(self):
        """The last command frame the PCU read (ALIVE left out)."""
        c = self.pcu.state.command
        return None if c is None else c._replace(alive=0)

    def wait_command(self, **fields):
        want = Command(**dict(dict(aorm=1, estop=0, gear=0, speed=0, steer=0, brake=1), alive=0, **fields))
        ok = wait_for(lambda: self.command() == want, 5.0)
        assert ok, f'the PCU reads {self.command()!r}, expected {want!r}'

    def inject(self, hexes):
        """Write the feedback frames (hex strings) into the link; wait until the link read them."""
        n_frames, n_msgs = self.link.framer.frames_ok + len(hexes), len(self.msgs) + len(hexes)
        for h in hexes:
            self.pcu.inject(bytes.fromhex(h))
        assert wait_for(lambda: self.link.framer.frames_ok >= n_frames and len(self.msgs) >= n_msgs, 5.0), \
            (self.link.framer.frames_ok, n_frames, len(self.msgs), n_msgs)


@pytest.fixture
def rig(tmp_path):
    made = []

    def factory(paused=False, **params):
        r = Rig(str(tmp_path / (f'erp42_{len(made)}')), paused, params)
        made.append(r)
        return r.start()

    yield factory
    for r in made:
        r.close()


def ctrl(longl=2, accel=0.0, brake=0.0, steering=0.0, velocity=0.0, acceleration=0.0):
    return CtrlCmd(longlCmdType=longl, accel=accel, brake=brake, steering=steering, velocity=velocity,
                   acceleration=acceleration)


# ============================================================================ /ctrl_cmd -> command frames

@pytest.mark.parametrize('vec', V['ctrlcmd_to_command'], ids=lambda v: v['name'])
def test_ctrlcmd_vectors_reach_the_pcu(rig, vec):
    """spec 10.1, vectors ctrlcmd_to_command: the CtrlCmd handed to the link arrives at the PCU as
    the vector's frame (ALIVE aside: the link's TX tick owns it).  The reverse vector needs the
    standstill the emulator reports (gear interlock)."""
    r = rig(cmd_timeout_s=5.0, **vec['input']['params'])
    assert wait_for(lambda: r.link.last_feedback is not None, 5.0)
    c = vec['input']['ctrl_cmd']
    assert r.core.submit_ctrl(ctrl(c['longlCmdType'], c.get('accel', 0.0), c['brake'], c['steering'],
                                   c['velocity'], c.get('acceleration', 0.0))) is None
    want = dict(vec['fields'])
    alive = want.pop('alive')
    r.wait_command(**want)
    # byte for byte the vector's frame once its ALIVE is put in
    assert encode_command(r.pcu.state.command._replace(alive=alive)) == bytes.fromhex(vec['hex'])
    assert r.link.stats.commands_accepted == 1 and r.core.last_reject == ''


def test_ctrlcmd_fields_go_to_their_places(rig):
    """Each CtrlCmd field to its own place: velocity 5 km/h -> SPEED 50 forward; steering -0.1 rad
    (right) -> STEER +407 (vector map_ctrlcmd_reverse_5kmh_right); brake 0.25 -> BRAKE 38 (vector
    map_ctrlcmd_brake_quarter_150); accel and acceleration unused in velocity mode."""
    r = rig(cmd_timeout_s=5.0)
    assert r.core.submit_ctrl(ctrl(2, accel=0.9, brake=0.25, steering=-0.1, velocity=5.0,
                                   acceleration=3.0)) is None
    r.wait_command(gear=0, speed=50, steer=407, brake=38)


def test_ctrlcmd_out_of_range_is_clamped(rig):
    """spec 10.1 / ctrl_to_command's documentation: SPEED clamped to round(max_speed_kmh x 10),
    STEER to +-round(max_steer_deg x 71), brake clipped to 0..1 before scaling.
    max_speed_kmh 12 -> 15 km/h sends SPEED 120; max_steer_deg 20 -> 0.6 rad (34.4 deg left)
    sends STEER -1420 and -0.6 rad +1420; brake 1.5 -> BRAKE 150, -0.5 -> 1."""
    r = rig(cmd_timeout_s=5.0, max_speed_kmh=12.0, max_steer_deg=20.0)
    r.core.submit_ctrl(ctrl(velocity=15.0, steering=0.6, brake=1.5))
    r.wait_command(speed=120, steer=-1420, brake=150)
    r.core.submit_ctrl(ctrl(velocity=3.0, steering=-0.6, brake=-0.5))
    r.wait_command(speed=30, steer=1420, brake=1)
    # nothing out of the protocol's range reached the PCU
    assert (r.pcu.state.clamped, r.pcu.state.soft_violations) == (0, 0)


def test_throttle_mode_maps_the_pedal_to_a_speed(rig):
    """docs/ros_api.md: longlCmdType 1 (pedals) is a velocity command of accel x max_speed_kmh
    forward: accel 0.5 -> 10 km/h -> SPEED 100; accel 2.0 is clipped to 1 -> SPEED 200;
    brake still maps to BRAKE (0.25 -> 38)."""
    r = rig(cmd_timeout_s=5.0)
    assert r.core.submit_ctrl(ctrl(1, accel=0.5, steering=0.1)) is None
    r.wait_command(speed=100, steer=-407)
    r.core.submit_ctrl(ctrl(1, accel=2.0, brake=0.25))
    r.wait_command(speed=200, brake=38)


@pytest.mark.parametrize('field', ['accel', 'brake', 'steering', 'velocity', 'acceleration'])
@pytest.mark.parametrize('bad', [math.nan, math.inf, -math.inf], ids=['nan', 'inf', '-inf'])
def test_non_finite_ctrlcmd_is_refused_with_its_field_named(field, bad):
    """spec 10.1: reject NaN/inf; Erp42Link.set_ctrl's text: 'CtrlCmd.<field> is <value>; command
    dropped'.  Nothing is stored (the link is not even started: no frame could carry it)."""
    c = core()
    c.link = Erp42Link(c.params)
    m = ctrl(velocity=5.0)
    setattr(m, field, bad)
    e = c.submit_ctrl(m)
    assert isinstance(e, CommandRejected) and e.reason == 'non_finite'
    assert str(e) == f'CtrlCmd.{field} is {bad!r}; command dropped'
    assert c.last_reject == str(e)
    assert (c.link.stats.commands_rejected, c.link.stats.commands_accepted) == (1, 0)


@pytest.mark.parametrize('longl,throttle', [(0, True), (3, True), (4, True), (-1, True), (1, False)])
def test_unsupported_longl_cmd_type_is_refused(longl, throttle):
    """spec 10.1: only velocity control (2), and pedals (1) in throttle mode; 3 (acceleration)
    has no equivalent on the PCU."""
    c = core()
    c.link = Erp42Link(c.params, throttle_mode=throttle)
    e = c.submit_ctrl(ctrl(longl, accel=0.5, velocity=5.0))
    assert isinstance(e, CommandRejected) and e.reason == 'unsupported_type'
    assert str(e) == 'longlCmdType %d is not supported by the ERP-42 (only 2 = velocity control)' % longl
    assert c.last_reject == str(e) and c.link.stats.commands_rejected == 1


def test_a_refused_command_changes_nothing_on_the_wire(rig):
    """A longlCmdType 3 and a NaN after a good command: the good one keeps running (frames keep
    coming), the refusals are counted and the last one is shown in the link's diagnostics."""
    r = rig(cmd_timeout_s=5.0)
    r.core.submit_ctrl(ctrl(velocity=8.0, steering=0.05))
    r.wait_command(speed=80, steer=-203)             # 0.05 rad = 2.8648 deg -> round(-203.40) = -203
    assert r.core.submit_ctrl(ctrl(3, velocity=2.0)) is not None
    assert r.core.submit_ctrl(ctrl(velocity=math.nan)) is not None
    n = r.pcu.state.frames_ok
    assert wait_for(lambda: r.pcu.state.frames_ok >= n + 10, 5.0)
    assert r.command() == Command(1, 0, 0, 80, -203, 1, 0)
    _, _, values = status(r.core.diag_link)
    assert (values['commands accepted'], values['commands rejected']) == ('1', '2')
    assert values['last rejected command'] == 'CtrlCmd.velocity is nan; command dropped'


def test_reverse_waits_for_standstill(rig):
    """spec 10.1 gear interlock: a direction change only when the feedback SPEED is 0.  Before any
    feedback (speed unknown) and while the PCU reports motion (vector fb_auto_forward_10kmh: SPEED
    100) the frame keeps GEAR 0 with SPEED 0 and BRAKE brake_max (150), steering already applied
    (-0.1 rad -> STEER +407); a standstill frame (vector fb_manual_idle: SPEED 0) releases it:
    GEAR 2, SPEED 50, BRAKE 1 (vector map_ctrlcmd_reverse_5kmh_right)."""
    r = rig(cmd_timeout_s=5.0, paused=True)
    assert r.core.submit_ctrl(ctrl(velocity=-5.0, steering=-0.1)) is None
    r.wait_command(gear=0, speed=0, steer=407, brake=150)
    r.inject([FRAMES['fb_auto_forward_10kmh']['hex']])
    n = r.pcu.state.frames_ok
    assert wait_for(lambda: r.pcu.state.frames_ok >= n + 5, 5.0)
    assert r.command() == Command(1, 0, 0, 0, 407, 150, 0)
    r.inject([FRAMES['fb_manual_idle']['hex']])
    r.wait_command(gear=2, speed=50, steer=407, brake=1)


def test_command_timeout_gives_stop_frames_and_longl_cmd_type_0(rig):
    """spec 9.2: no command for cmd_timeout_s -> stop frames (SPEED 0, BRAKE brake_max, gear and
    steering held: vector cmd_stop_full_brake's fields); ERP42Info.longlCmdType is 2 while a fresh
    command runs, 0 otherwise (spec 10.2)."""
    r = rig(cmd_timeout_s=0.3)
    assert wait_for(lambda: r.msgs, 5.0)
    assert r.msgs[-1].info.longlCmdType == 0
    r.core.submit_ctrl(ctrl(velocity=4.0, steering=0.1))
    r.wait_command(speed=40, steer=-407)
    assert wait_for(lambda: r.link.sending_fresh and r.msgs[-1].info.longlCmdType == 2, 5.0)
    r.wait_command(speed=0, steer=-407, brake=150)   # after 0.3 s without a command
    assert wait_for(lambda: not r.link.sending_fresh and r.msgs[-1].info.longlCmdType == 0, 5.0)
    assert r.link.stats.timeouts == 1


def test_closed_loop_messages_follow_the_pcu(rig):
    """10 km/h and 0.1 rad left: STEER round(-5.729578 x 71) = -407 on the wire (the rostest's
    acceptance example); the emulator steers 407/71 = 5.732394 deg and, with feedback_steer_sign
    -1, reports raw +407, which the bridge reads back as +5.732394 deg (left); SPEED 100 ->
    10.0 km/h = 2.777778 m/s; the encoder counts up and the odometry moves forward and left."""
    r = rig(cmd_timeout_s=5.0)
    r.core.submit_ctrl(ctrl(velocity=10.0, steering=0.1))

    def arrived():
        m = r.msgs[-1] if r.msgs else None
        return m is not None and m.info.velocity == 10.0 and m.odom.pose.pose.position.x > 0.5
    assert wait_for(arrived, 10.0), r.msgs[-1] if r.msgs else None
    m = r.msgs[-1]
    assert m.info.longlCmdType == 2
    assert m.info.steering == pytest.approx(5.732394, abs=1e-6)
    assert m.ego.wheel_angle == pytest.approx(5.732394, abs=1e-6)
    assert m.ego.velocity.x == pytest.approx(2.777778, abs=1e-6)
    assert m.ego.brake == 0.0
    assert m.twist.twist.angular.z == pytest.approx(2.777778 * math.tan(math.radians(5.732394)) / WHEELBASE, abs=1e-5)
    assert m.encoder.data > 0
    p = m.odom.pose.pose
    assert p.position.y > 0 and p.orientation.z > 0      # a left turn: y and yaw grow (REP-103)


def test_feedback_frames_over_the_pty(rig):
    """The spec's frames written into the pty come out of the link as the same messages as the
    decoded frames give (vectors map_fb_*, feedback_steer_sign -1), and the encoder Int32."""
    r = rig(paused=True)
    vecs = [v for v in V['feedback_to_messages'] if v['input']['params']['feedback_steer_sign'] == -1]
    n0 = len(r.msgs)
    r.inject([v['hex'] for v in vecs])
    got = r.msgs[n0:]
    assert len(got) == len(vecs)
    for v, m in zip(vecs, got):
        e = v['expected']
        assert (m.info.velocity, m.info.steering) == (pytest.approx(e['erp42_info']['velocity'], abs=TOL),
                                                      pytest.approx(e['erp42_info']['steering'], abs=TOL))
        assert m.ego.velocity.x == pytest.approx(e['ego_vehicle_status']['velocity_x'], abs=TOL)
        assert m.ego.wheel_angle == pytest.approx(e['ego_vehicle_status']['wheel_angle'], abs=TOL)
        assert m.ego.brake == pytest.approx(e['ego_vehicle_status']['brake'], abs=TOL)
        assert m.encoder.data == v['fields']['enc']


# ============================================================================ diagnostics

def test_diag_link_port_missing(tmp_path):
    """docs/ros_api.md: ERROR when the port is closed; the reason is the link's last error."""
    path = str(tmp_path / 'no_such_device')
    c = core(port=path, shutdown_stop_s=0.0)
    c.link = Erp42Link(c.params, log=Log())
    c.link.start()
    try:
        level, message, values = status(c.diag_link)
    finally:
        c.link.stop()
    assert level == ERROR
    assert message == f'port {path} closed: device {path} does not exist'
    assert (values['port'], values['connected'], values['frames sent']) == (path, 'False', '0')
    assert (values['outages'], values['outage durations [s]']) == ('1', 'ongoing')
    assert values['last error'] == f'device {path} does not exist'


def test_diag_link_no_feedback_then_garbage(rig):
    """spec 7.3 / 8 rule 11: connected but silent -> ERROR 'no feedback from the PCU yet'; bytes
    that never make a frame -> ERROR 'bytes but no valid frames: ...'."""
    r = rig(paused=True)
    level, message, values = status(r.core.diag_link)
    assert (level, message) == (ERROR, 'no feedback from the PCU yet')
    assert values['connected'] == 'True'
    assert wait_for(lambda: r.link.stats.frames_sent >= 3, 5.0)
    _, _, values = status(r.core.diag_link)
    # no command yet: every frame sent is a stop frame (spec 9.1, startup)
    assert int(values['frames sent']) >= 3
    # (a frame may be sent between reading the two counters)
    assert abs(int(values['stop frames sent']) - int(values['frames sent'])) <= 1
    r.pcu.inject(b'\x00' * 40)
    assert wait_for(lambda: r.link.framer.bytes_received == 40, 5.0)
    level, message, values = status(r.core.diag_link)
    assert (level, message) == (ERROR, 'bytes but no valid frames: wrong baud rate or a different firmware variant?')
    assert (values['bytes received'], values['bytes discarded'], values['feedback frames']) == ('40', '40', '0')


def test_diag_link_levels_by_feedback_age(rig):
    """spec 7.3: feedback stale after feedback_timeout_s (0.1 s: WARN), lost after 1 s (ERROR);
    fresh feedback without any command yet: OK, sending stop frames.  Ages are taken at a given
    monotonic time after the frame's read time."""
    r = rig(paused=True)
    r.inject([FRAMES['fb_auto_forward_10kmh']['hex']])
    t = r.link.last_feedback[1]
    assert status(r.core.diag_link, now=t + 0.09)[:2] == (
        OK, 'no fresh command: sending stop frames (speed 0, full brake)')
    assert status(r.core.diag_link, now=t + 0.3)[:2] == (WARN, 'feedback stale (0.30 s old)')
    assert status(r.core.diag_link, now=t + 0.99)[:2] == (WARN, 'feedback stale (0.99 s old)')
    assert status(r.core.diag_link, now=t + 1.5)[:2] == (ERROR, 'feedback lost (1.5 s old)')
    # the stale threshold is the parameter
    r.core.params = dataclasses.replace(r.core.params, feedback_timeout_s=0.5)
    assert status(r.core.diag_link, now=t + 0.3)[0] == OK
    # and without a clock given, a frame not renewed goes stale by itself
    assert wait_for(lambda: status(r.core.diag_link)[0] == WARN, 5.0)


def test_diag_link_commands_and_timeout(rig):
    """OK 'sending commands' while a fresh command runs; after the command timeout the link sends
    stop frames again, now a WARN (commands came and stopped) rather than the idle OK."""
    r = rig(cmd_timeout_s=0.3)
    assert wait_for(lambda: r.link.last_feedback is not None, 5.0)
    r.core.submit_ctrl(ctrl(velocity=3.0))
    assert wait_for(lambda: r.link.sending_fresh, 5.0)
    level, message, values = status(r.core.diag_link, now=r.link.last_feedback[1])
    assert (level, message) == (OK, 'sending commands')
    assert (values['commands accepted'], values['command timeouts']) == ('1', '0')
    assert wait_for(lambda: not r.link.sending_fresh, 5.0)
    level, message, values = status(r.core.diag_link, now=r.link.last_feedback[1])
    assert (level, message) == (WARN, 'no fresh command: sending stop frames (speed 0, full brake)')
    assert values['command timeouts'] == '1'
    assert int(values['stop frames sent']) < int(values['frames sent'])


def test_diag_link_framing_counters(rig):
    """The framer's counters in the diagnostics: frames, a false header (spec 8 rule 6: one
    candidate rejected, its 'S' discarded with the rest up to the real frame), a BRAKE outside
    brake_min..brake_max (soft check, spec 8 rule 8), feedback ALIVE gaps."""
    r = rig(paused=True)
    base = r.link.framer.frames_ok
    # fb_auto_forward_10kmh (ALIVE 7), then fb_reverse_3_5kmh (ALIVE 200): one gap
    r.inject([FRAMES['fb_auto_forward_10kmh']['hex'], FRAMES['fb_reverse_3_5kmh']['hex']])
    # "STX" 01 00 then a frame: the candidate's GEAR byte is the real frame's "S" (0x53 > 2)
    r.pcu.inject(bytes.fromhex('53 54 58 01 00'))
    # fb_manual_idle (ALIVE 100) with BRAKE 200 > brake_max 150: accepted, one soft violation, ALIVE gap
    r.inject(['53 54 58 00 00 01 00 00 00 00 C8 00 00 00 00 64 0D 0A'])
    _, _, values = status(r.core.diag_link)
    assert int(values['feedback frames']) - base == 3
    assert values['candidates rejected'] == '1'
    assert values['bytes discarded'] == '5'
    assert values['soft-check violations'] == '3'   # 2 ALIVE gaps + 1 BRAKE
    assert values['feedback ALIVE gaps'] == '2'


def test_diag_link_unplug_and_replug(rig):
    """spec 9.5: an unplugged adapter is ERROR with the reason; the outage is listed as ongoing,
    then with its duration once the port is back, and counted as a reconnect."""
    r = rig()
    assert wait_for(lambda: r.link.last_feedback is not None, 5.0)
    path = r.link.p.port
    r.pcu.unplug()
    # the first error is the read or the vanished path; once the path is gone, every retry says so
    assert wait_for(lambda: not r.link.connected and r.link.stats.last_error == f'device {path} does not exist', 5.0)
    level, message, values = status(r.core.diag_link)
    assert (level, message) == (ERROR, f'port {path} closed: device {path} does not exist')
    assert values['connected'] == 'False' and values['outage durations [s]'] == 'ongoing'
    r.pcu.replug()
    assert wait_for(lambda: r.link.connected, 5.0)
    _, _, values = status(r.core.diag_link)
    assert (values['outages'], values['reconnects']) == ('1', '1')
    d = values['outage durations [s]']
    assert d != 'ongoing' and 0.0 <= float(d) < 5.0 and len(d.split('.')[1]) == 2


def test_diag_pcu_without_feedback():
    c = core()
    c.link = Erp42Link(c.params)
    assert status(c.diag_pcu) == (WARN, 'no feedback yet', {})


@pytest.mark.parametrize('name,level,message,mode,gear', [
    ('fb_auto_forward_10kmh', OK, 'AUTO', 'AUTO', 'forward'),
    ('fb_reverse_3_5kmh', OK, 'AUTO', 'AUTO', 'backward'),
    ('fb_estop_alive_255', WARN, 'E-STOP active (or AUTO_FAIL)', 'AUTO', 'neutral'),
    ('fb_manual_idle', WARN, 'PCU in MANUAL mode: commands are ignored (RC switch)', 'MANUAL', 'neutral'),
])
def test_diag_pcu_from_spec_frames(rig, name, level, message, mode, gear):
    """spec 9.6: the mode the PCU reports (AorM, E-STOP, GEAR) and the raw fields; WARN on E-STOP
    or MANUAL.  The frame is the spec's, read by the link from the pty."""
    r = rig(paused=True)
    r.inject([FRAMES[name]['hex']])
    f = FRAMES[name]['fields']
    assert r.link.last_feedback[0] == Feedback(**f)
    assert status(r.core.diag_pcu) == (level, message, {
        'mode': mode, 'e-stop': str(f['estop']), 'gear': gear, 'speed raw': str(f['speed']),
        'steer raw': str(f['steer']), 'brake raw': str(f['brake']), 'encoder': str(f['enc']),
        'alive': str(f['alive'])})


def test_diag_pcu_estop_in_manual_mode_reports_the_estop(rig):
    """E-STOP takes precedence over MANUAL: fb_manual_idle with the E-STOP byte set."""
    r = rig(paused=True)
    r.inject(['53 54 58 00 01 01 00 00 00 00 01 00 00 00 00 64 0D 0A'])
    level, message, values = status(r.core.diag_pcu)
    assert (level, message) == (WARN, 'E-STOP active (or AUTO_FAIL)')
    assert (values['mode'], values['e-stop']) == ('MANUAL', '1')
