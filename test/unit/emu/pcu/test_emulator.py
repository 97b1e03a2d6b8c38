"""PCU emulator over a real pty, driven by a pyserial client (no mocks).

Timing assertions are deliberately loose: the machine is shared.
"""

import os
import signal
import subprocess
import sys
import time

import pytest
import serial

import helpers
from morai_bridge.emu.pcu import Mode, PcuEmulator
from morai_bridge.emu.pcu.vehicle import VehicleModel, VehicleState
from morai_bridge.wire.erp42 import (
    Command, FeedbackFramer, encode_command)
from morai_bridge.wire.erp42.convert import (
    next_alive)

SRC = os.path.join(helpers.ROOT,
                   "src")


def fast_vehicle():
    return VehicleModel(accel_mps2=20.0, decel_mps2=20.0, brake_decel_mps2=20.0,
                        steer_rate_rad_s=5.0)


#: how long a test waits for a state the emulator reaches within a few frames (pump returns as soon as it
#: holds): a budget, not a timing assertion, so that a loaded machine does not fail it (1 s did, with five
#: agents on two cores)
WAIT_S = 5.0


class Client:
    """What a bridge does, reduced: 50 Hz command frames, framed feedback reads."""

    def __init__(self, path):
        self.ser = serial.Serial(path, 115200, timeout=0.005, write_timeout=0.05,
                                 exclusive=True)
        self.ser.reset_input_buffer()
        self.framer = FeedbackFramer()
        self.alive = 0
        self.cmd = None  # template Command sent every cycle (None = silent)
        self.frames = []

    def pump(self, seconds, until=None):
        """Send/receive for up to ``seconds``; stop early when ``until()`` is true."""
        end = time.monotonic() + seconds
        next_tx = time.monotonic()
        while time.monotonic() < end:
            if self.cmd is not None and time.monotonic() >= next_tx:
                self.ser.write(encode_command(self.cmd._replace(alive=self.alive)))
                self.alive = next_alive(self.alive)
                next_tx += 0.02
            self.frames += self.framer.feed(self.ser.read(self.ser.in_waiting or 1))
            if until is not None and until():
                return True
        return until() if until is not None else True

    def close(self):
        self.ser.close()


@pytest.fixture
def make(tmp_path):
    made = []

    def factory(**kw):
        kw.setdefault("init_s", 0.0)
        kw.setdefault("vehicle", fast_vehicle())
        kw.setdefault("link", str(tmp_path / "erp42"))
        pcu = PcuEmulator(**kw).start()
        client = Client(pcu.link_path or pcu.device_path)
        made.append((pcu, client))
        return pcu, client

    yield factory
    for pcu, client in made:
        client.close()
        pcu.close()


DRIVE = Command(aorm=1, estop=0, gear=0, speed=100, steer=-710, brake=1)


def test_pty_and_symlink(tmp_path):
    link = str(tmp_path / "pcu")
    pcu = PcuEmulator(link=link)
    try:
        assert pcu.device_path.startswith("/dev/pts/")
        assert os.readlink(link) == pcu.device_path
    finally:
        pcu.close()
    assert not os.path.lexists(link)


def test_free_running_feedback_rate(make):
    pcu, c = make()
    c.pump(0.1)
    n0 = len(c.frames)
    t0 = time.monotonic()
    c.pump(1.0)
    rate = (len(c.frames) - n0) / (time.monotonic() - t0)
    assert 30 <= rate <= 70, rate
    alives = [f.alive for f in c.frames]
    assert all(b == (a + 1) % 256 for a, b in zip(alives, alives[1:]))
    # No commands: after INIT the PCU reports AUTO_FAIL, stopped, full brake.
    last = c.frames[-1]
    assert (last.aorm, last.estop, last.speed, last.brake) == (0, 1, 0, 150)


def test_init_ignores_commands_then_auto(make):
    pcu, c = make(init_s=0.4)
    c.cmd = DRIVE
    c.pump(0.2)
    assert pcu.state.mode == Mode.INIT
    assert c.frames and all(f.speed == 0 and f.brake == 150 and f.aorm == 0 for f in c.frames)
    assert c.pump(1.5, until=lambda: pcu.state.mode == Mode.AUTO)


def test_commands_drive_the_vehicle(make):
    pcu, c = make()
    c.cmd = DRIVE
    assert c.pump(2.0, until=lambda: c.frames and c.frames[-1].speed == 100
                  and c.frames[-1].steer == 710)
    fb = c.frames[-1]
    assert (fb.aorm, fb.estop, fb.gear, fb.brake) == (1, 0, 0, 1)
    assert pcu.state.mode == "AUTO" and pcu.state.steer == -710
    enc_forward = fb.enc
    assert enc_forward > 0
    # Reverse: GEAR 2 with a positive SPEED magnitude; the vehicle passes through 0.
    c.cmd = Command(aorm=1, gear=2, speed=30, steer=0, brake=1)
    assert c.pump(2.0, until=lambda: c.frames[-1].gear == 2 and c.frames[-1].speed == 30)
    c.pump(0.3)
    assert c.frames[-1].enc < enc_forward  # travelling backward counts down
    assert pcu.state.alive_errors == 0 and pcu.state.frames_rejected == 0


def test_speed_is_rate_limited(make):
    pcu, c = make(vehicle=VehicleModel(accel_mps2=1.0))
    c.cmd = Command(speed=200)
    c.pump(0.5, until=lambda: pcu.state.mode == "AUTO")
    c.pump(0.5)
    # 1 m/s^2 for at most ~0.5 s: well below 20 km/h but moving.
    assert 0 < c.frames[-1].speed < 100


def test_command_estop_and_recovery(make):
    pcu, c = make()
    c.cmd = DRIVE
    assert c.pump(2.0, until=lambda: c.frames and c.frames[-1].speed == 100)
    c.cmd = DRIVE._replace(estop=1)
    assert c.pump(2.0, until=lambda: c.frames[-1].estop == 1 and c.frames[-1].speed == 0
                  and c.frames[-1].steer == 0)
    assert pcu.state.mode == Mode.ESTOP and c.frames[-1].brake == 150
    c.cmd = DRIVE
    assert c.pump(2.0, until=lambda: c.frames[-1].aorm == 1 and c.frames[-1].speed == 100)


@pytest.mark.parametrize("switch", ["set_rc_estop", "set_panel_estop"])
def test_rc_and_panel_estop(make, switch):
    pcu, c = make()
    c.cmd = DRIVE
    assert c.pump(2.0, until=lambda: c.frames and c.frames[-1].aorm == 1)
    getattr(pcu, switch)(True)
    assert c.pump(WAIT_S, until=lambda: c.frames[-1].estop == 1 and c.frames[-1].speed == 0)
    assert pcu.state.mode == Mode.ESTOP
    getattr(pcu, switch)(False)
    assert c.pump(WAIT_S, until=lambda: pcu.state.mode == Mode.AUTO)


def test_auto_fail_when_frames_stop_and_recovery(make):
    pcu, c = make(alive_timeout_s=0.3)
    c.cmd = DRIVE
    assert c.pump(2.0, until=lambda: c.frames and c.frames[-1].speed == 100)
    c.cmd = None  # bridge dies
    c.pump(0.2)
    assert pcu.state.mode == Mode.AUTO  # still inside the watchdog time
    assert c.pump(WAIT_S, until=lambda: pcu.state.mode == Mode.AUTO_FAIL)
    assert c.pump(WAIT_S, until=lambda: c.frames[-1].speed == 0 and c.frames[-1].steer == 0)
    fb = c.frames[-1]
    assert (fb.aorm, fb.estop, fb.brake) == (0, 1, 150)
    c.cmd = DRIVE  # frames resume (auto_fail_latch off)
    assert c.pump(WAIT_S, until=lambda: pcu.state.mode == Mode.AUTO)
    assert pcu.state.auto_fail_events == 1


def test_auto_fail_latch_needs_rc_cycle(make):
    pcu, c = make(alive_timeout_s=0.2, auto_fail_latch=True)
    c.cmd = DRIVE
    assert c.pump(WAIT_S, until=lambda: c.frames and c.frames[-1].aorm == 1)
    c.cmd = None
    assert c.pump(WAIT_S, until=lambda: c.frames[-1].estop == 1)
    c.cmd = DRIVE
    c.pump(0.4)
    assert pcu.state.mode == Mode.AUTO_FAIL
    pcu.set_rc_auto(False)
    c.pump(0.1)
    assert pcu.state.mode == Mode.MANUAL
    pcu.set_rc_auto(True)
    assert c.pump(WAIT_S, until=lambda: pcu.state.mode == Mode.AUTO)


def test_strict_alive_counts_a_skip_and_frozen_alive_fails(make):
    pcu, c = make(alive_timeout_s=0.3)
    c.cmd = DRIVE
    assert c.pump(WAIT_S, until=lambda: pcu.state.mode == Mode.AUTO)
    c.alive = next_alive(c.alive)  # skip one value
    c.pump(0.2)
    assert pcu.state.alive_errors == 1
    assert pcu.state.mode == Mode.AUTO  # one bad frame is not a second without ALIVE
    # Frozen ALIVE: frames keep coming but never increment.
    c.cmd = None
    frozen = encode_command(DRIVE._replace(alive=7))
    end = time.monotonic() + 0.6
    while time.monotonic() < end:
        c.ser.write(frozen)
        c.pump(0.02)
    assert pcu.state.mode == Mode.AUTO_FAIL
    assert pcu.state.alive_errors > 10


def test_changing_alive_check_accepts_skips_rejects_repeats(make):
    pcu, c = make(alive_check="changing")
    for a in (0, 1, 5, 9, 9, 3):
        c.ser.write(encode_command(DRIVE._replace(alive=a)))
        c.pump(0.02)
    c.pump(0.1)
    assert pcu.state.frames_ok == 6
    assert pcu.state.alive_errors == 1


def test_aorm_zero_is_auto_fail_and_manual_ignores_commands(make):
    pcu, c = make()
    c.cmd = DRIVE._replace(aorm=0)
    c.pump(0.3)
    assert pcu.state.mode == Mode.AUTO_FAIL and c.frames[-1].speed == 0
    pcu.set_rc_auto(False)
    c.cmd = DRIVE
    c.pump(0.3)
    assert pcu.state.mode == Mode.MANUAL
    assert c.frames[-1].aorm == 0 and c.frames[-1].speed == 0
    pcu.set_rc_drive(speed=50, gear=0)
    assert c.pump(WAIT_S, until=lambda: c.frames[-1].speed == 50)


def test_powered_with_rc_off_needs_rc_cycle(make):
    pcu, c = make(rc_powered=False)
    c.cmd = DRIVE
    c.pump(0.3)
    assert pcu.state.mode == Mode.AUTO_FAIL
    pcu.set_rc_auto(False)
    pcu.set_rc_auto(True)
    assert c.pump(WAIT_S, until=lambda: pcu.state.mode == Mode.AUTO)


def test_out_of_range_commands_are_clamped_and_counted(make):
    pcu, c = make()
    c.cmd = Command(speed=250, steer=-2500, brake=0)
    c.pump(0.2)
    s = pcu.state
    assert s.command.speed == 200 and s.command.steer == -2000 and s.command.brake == 1
    assert s.clamped >= 5 and s.soft_violations >= 15


def test_command_stream_with_noise_and_split_writes(make):
    pcu, c = make()
    frames = [encode_command(DRIVE._replace(alive=a)) for a in range(20)]
    noise = b"\x0d\x0aST\x00STX\x07"  # includes a false header (AorM 7)
    for f in frames:
        c.ser.write(noise)
        c.ser.write(f[:5])
        c.ser.flush()
        time.sleep(0.002)
        c.ser.write(f[5:])
        c.pump(0.01)
    c.pump(0.1)
    s = pcu.state
    assert s.frames_ok == 20 and s.alive_errors == 0
    assert s.bytes_discarded == 20 * len(noise) and s.frames_rejected == 20
    assert s.mode == Mode.AUTO


def test_emulator_noise_and_split_feedback_still_framed(make):
    pcu, c = make(seed=1)
    pcu.noise_bytes = 9
    pcu.false_headers = True
    pcu.split_writes = 3
    c.pump(0.6)
    fr = c.framer
    assert len(c.frames) >= 15
    assert fr.bytes_discarded >= 9 * len(c.frames)
    assert fr.candidates_rejected >= len(c.frames) - 1
    assert fr.alive_gaps == 0  # nothing lost despite the garbage


def test_dropped_and_paused_feedback(make):
    pcu, c = make()
    c.pump(0.2)
    pcu.drop_feedback(3)
    c.pump(0.2)
    assert c.framer.alive_gaps == 1
    assert pcu.state.feedback_dropped == 3
    pcu.feedback_paused = True
    c.pump(0.05)
    n = len(c.frames)
    c.pump(0.3)
    assert len(c.frames) == n
    pcu.feedback_paused = False
    assert c.pump(0.5, until=lambda: len(c.frames) > n)


def test_reply_mode_sends_one_frame_per_command(make):
    pcu, c = make(feedback_mode="reply")
    c.pump(0.3)
    assert c.frames == []
    for a in range(10):
        c.ser.write(encode_command(DRIVE._replace(alive=a)))
        c.pump(0.02)
    c.pump(0.1)
    assert len(c.frames) == 10


def test_inject_false_header_between_frames(make):
    pcu, c = make()
    c.pump(0.1)
    pcu.inject(b"STX\x01\x00\x09garbage")
    c.pump(0.2)
    assert c.framer.candidates_rejected >= 1 and c.framer.alive_gaps == 0


def test_unplug_and_replug_through_the_symlink(make):
    pcu, c = make()
    link = pcu.link_path
    old_dev = pcu.device_path
    c.pump(0.2)
    assert c.frames
    pcu.unplug()
    assert not os.path.lexists(link) and not os.path.exists(old_dev)
    assert pcu.device_path is None and not pcu.state.connected
    # The open client sees the disconnection: SerialException from read/write, or a
    # plain OSError (EIO) from in_waiting; SerialException is an OSError subclass.
    with pytest.raises(OSError):
        c.pump(0.2)
    c.close()
    pcu.replug()
    assert os.path.islink(link) and os.readlink(link) == pcu.device_path
    c2 = Client(link)
    try:
        c2.cmd = DRIVE
        assert c2.pump(2.0, until=lambda: c2.frames and c2.frames[-1].speed == 100)
        assert pcu.state.mode == Mode.AUTO
    finally:
        c2.close()


def test_encoder_wraps_and_can_be_disabled(make):
    pcu, c = make(encoder_start=2 ** 31 - 50, encoder_ppr=1000.0)
    c.cmd = DRIVE
    assert c.pump(2.0, until=lambda: c.frames and c.frames[-1].enc < 0)
    pcu2, c2 = make(encoder_enabled=False, link=None)
    c2.cmd = DRIVE
    assert c2.pump(2.0, until=lambda: c2.frames and c2.frames[-1].speed == 100)
    assert {f.enc for f in c2.frames} == {0}


def test_feedback_steer_sign_plus_one(make):
    pcu, c = make(feedback_steer_sign=1)
    c.cmd = DRIVE
    assert c.pump(2.0, until=lambda: c.frames and c.frames[-1].steer == -710)


def test_state_hook_and_external_speed(make):
    seen = []
    pcu, c = make(on_state=seen.append, speed_source=lambda: 5.0 / 3.6)
    c.cmd = DRIVE
    assert c.pump(WAIT_S, until=lambda: c.frames and c.frames[-1].speed == 50)
    assert seen and isinstance(seen[-1], VehicleState)
    assert seen[-1].speed_mps == pytest.approx(5.0 / 3.6) and seen[-1].mode == "AUTO"
    assert seen[-1].steer_rad > 0  # left-positive in the hook


def test_invalid_options_are_refused():
    with pytest.raises(ValueError, match="alive_check"):
        PcuEmulator(alive_check="sometimes")
    with pytest.raises(ValueError, match="feedback_mode"):
        PcuEmulator(feedback_mode="burst")
    with pytest.raises(ValueError, match="brake_min"):
        PcuEmulator(brake_min=0)


def test_command_line_program(tmp_path):
    link = str(tmp_path / "cli")
    env = dict(os.environ, PYTHONPATH=SRC)
    out = subprocess.run([sys.executable, "-m", "morai_bridge.emu.pcu", "--help"], env=env,
                         capture_output=True, text=True, timeout=20)
    assert out.returncode == 0 and "--alive-check" in out.stdout
    proc = subprocess.Popen([sys.executable, "-m", "morai_bridge.emu.pcu", "--link", link,
                             "--init-s", "0", "--status-s", "0"], env=env,
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert "device=/dev/pts/" in line and link in line
        c = Client(link)
        try:
            assert c.pump(WAIT_S, until=lambda: len(c.frames) >= 5)
        finally:
            c.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
        proc.stdout.close()
    assert not os.path.lexists(link)
