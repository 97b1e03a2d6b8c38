"""The emulator's lock-step mode (emu/sim/sync.py) over UDP: start, tick, stop, refusals, embedded control,
the real-time loop, the steer sign per version.  The EmuSync codec itself: wire/test_lockstep.py."""
import socket
import time

import pytest

from morai_bridge.emu.sim import LISTEN_PORTS, SEND_PORTS, SimConfig, SimEmulator
from morai_bridge.wire.udp import lockstep
from morai_bridge.wire import udp
from morai_bridge.wire.udp.lockstep import EmuSyncCmd, EmuSyncTick


# ----------------------------------------------------------------------------- emulator


@pytest.fixture
def world(request):
    """Emulator (deterministic, no thread; the sim_version given as the fixture's parameter, else
    the default) + one user socket receiving every stream."""
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    rx.bind(("127.0.0.1", 0))
    rx.settimeout(2.0)
    port = rx.getsockname()[1]
    kw = {f: -1 for f, _, _ in LISTEN_PORTS.values()}
    kw.update({f: 0 for f, _, _ in SEND_PORTS.values()})
    kw.update(ego_status_port=port, sync_state_port=port, collision_port=port, emulator_sync=True,
              deterministic=True, sim_version=getattr(request, "param", "25.S4"))
    sim = SimEmulator(SimConfig(**kw))
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    w = World(sim, rx, tx)
    yield w
    tx.close()
    rx.close()
    sim.close()


class World:
    def __init__(self, sim, rx, tx):
        self.sim, self.rx, self.tx = sim, rx, tx

    def drain(self):
        self.rx.settimeout(0.02)
        try:
            while True:
                self.rx.recv(65535)
        except socket.timeout:
            pass
        self.rx.settimeout(2.0)

    def request(self, msg, port="sync"):
        """Send one request and return (datagrams before the reply, decoded reply)."""
        self.tx.sendto(lockstep.encode(msg), ("127.0.0.1", self.sim.ports[port]))
        before = []
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            if not self.sim.running:
                self.sim.poll(0.01)
            try:
                self.rx.settimeout(0.01 if not self.sim.running else 1.0)
                d = self.rx.recv(65535)
            except socket.timeout:
                continue
            if d.startswith(b"#EmuSyncState$"):
                return before, lockstep.decode(d)
            before.append(udp.decode(d))
        raise AssertionError("no EmuSyncState reply")


def test_start_tick_stop(world):
    sim = world.sim
    sim.step(3)                                  # some real-time-mode steps first
    world.drain()
    t0 = sim.snapshot().time_ns
    _, r = world.request(EmuSyncCmd(True, 100, "bridge"))
    assert (r.reply_to, r.result, r.sync_on, r.reason) == (1, True, True, 0)
    assert (r.frame, r.time_step_ms, r.user_id) == (0, 100, "bridge")
    assert r.sec * 10 ** 9 + r.nsec == t0
    frame = r.frame
    for k in range(1, 6):
        before, r = world.request(EmuSyncTick(frame + 1))
        assert (r.reply_to, r.result, r.frame) == (2, True, frame + 1)
        frame = r.frame
        # the frame's data went out before the reply, stamped with the frame's time
        status = [m for m in before if isinstance(m, udp.EgoVehicleStatus)]
        assert len(status) == 1
        assert (status[0].sec, status[0].nsec) == (r.sec, r.nsec)
        assert r.sec * 10 ** 9 + r.nsec == t0 + k * 100_000_000
    assert sim.snapshot().time_ns == t0 + 5 * 100_000_000      # exactly N x time_step
    assert sim.snapshot().sync == (True, "bridge", 5, 100)
    world.drain()
    _, r = world.request(EmuSyncCmd(False, 0, "bridge"))
    assert (r.result, r.sync_on, r.frame, r.time_step_ms, r.user_id) == (True, False, 5, 0, "")
    sim.step(1)
    assert sim.snapshot().time_ns == t0 + 5 * 100_000_000 + 20_000_000


def test_tick_for_the_wrong_frame_is_refused(world):
    _, r = world.request(EmuSyncCmd(True, 20, "me"))
    f = r.frame
    _, r = world.request(EmuSyncTick(f + 2))
    assert (r.result, r.reason, r.frame) == (False, lockstep.REASON_WRONG_FRAME, f)
    _, r = world.request(EmuSyncTick(f + 1))
    assert (r.result, r.frame) == (True, f + 1)
    _, r = world.request(EmuSyncTick(f + 1))                   # replay of the current frame
    assert (r.result, r.reason, r.frame) == (False, lockstep.REASON_WRONG_FRAME, f + 1)
    before, r = world.request(EmuSyncTick(0))                  # 0: the next one, unchecked
    assert (r.result, r.frame) == (True, f + 2) and before
    assert world.sim.snapshot().steps == 2


def test_refusals(world):
    _, r = world.request(EmuSyncTick(1))
    assert (r.result, r.reason, r.sync_on) == (False, lockstep.REASON_NOT_SYNC, False)
    for step in (0, 10, 30, 25):
        _, r = world.request(EmuSyncCmd(True, step, "a"))
        assert (r.result, r.reason) == (False, lockstep.REASON_BAD_TIME_STEP), step
    _, r = world.request(EmuSyncCmd(True, 40, "a"))
    assert r.result
    _, r = world.request(EmuSyncCmd(True, 20, "b"))
    assert (r.result, r.reason, r.user_id, r.time_step_ms) == (
        False, lockstep.REASON_OTHER_USER, "a", 40)
    _, r = world.request(EmuSyncCmd(False, 0, "b"))
    assert (r.result, r.sync_on) == (False, True)
    world.sim.set_paused(True)
    _, r = world.request(EmuSyncTick(0))
    assert (r.result, r.reason, r.paused) == (False, lockstep.REASON_PAUSED, True)
    world.sim.set_paused(False)
    _, r = world.request(EmuSyncTick(0))
    assert r.result and r.frame == 1 and world.sim.snapshot().steps == 2   # 40 ms = 2 steps


def test_tick_with_embedded_control(world):
    _, r = world.request(EmuSyncCmd(True, 100, "ctl"))
    frame = r.frame
    for _ in range(10):                                         # 1 s
        _, r = world.request(EmuSyncTick(frame + 1, True, 4, 2, 36.0))
        frame = r.frame
    s = world.sim.snapshot().ego
    assert s.speed_kmh == pytest.approx(3.6, abs=1e-6) and s.gear == 4   # +1 m/s^2
    # gear 0 keeps the gear; has_ctrl False keeps the held command
    _, r = world.request(EmuSyncTick(frame + 1, False, 2, 2, 0.0))
    assert world.sim.snapshot().ego.speed_kmh == pytest.approx(3.96, abs=1e-6)
    _, r = world.request(EmuSyncTick(r.frame + 1, True, 0, 3, 0.0, -2.0))
    s = world.sim.snapshot().ego
    assert s.gear == 4 and s.speed_kmh == pytest.approx(3.96 - 0.72, abs=1e-6)


def test_real_time_loop_stops_in_sync_mode_and_resumes(world):
    sim = world.sim
    sim.start()
    _, r = world.request(EmuSyncCmd(True, 20, "rt"))
    assert r.result
    t_sync = r.sec * 10 ** 9 + r.nsec
    time.sleep(0.3)
    assert sim.snapshot().time_ns == t_sync                     # no advance on its own
    _, r = world.request(EmuSyncTick(r.frame + 1))
    assert r.result and r.sec * 10 ** 9 + r.nsec == t_sync + 20_000_000
    _, r = world.request(EmuSyncCmd(False, 0, "rt"))
    assert not r.sync_on
    assert sim.wait_for(lambda s: s.time_ns >= t_sync + 200_000_000, 3.0)   # real time again


@pytest.mark.parametrize("world,turns", [("25.S4", "left"), ("24.R2", "right")], indirect=["world"])
def test_tick_steer_follows_the_sim_version(world, turns):
    """A tick's steer is an Ego Ctrl Cmd's: + turns left on 25.S4, right on 24.R2 (as the
    network command does; the bridge's sync service sends it with the version's sign)."""
    _, r = world.request(EmuSyncCmd(True, 100, "steer"))
    frame = r.frame
    for _ in range(30):                                          # 3 s at 20 km/h
        _, r = world.request(EmuSyncTick(frame=frame + 1, has_ctrl=True, gear=4, cmd_type=2, velocity=20.0,
                                         steer=0.5))
        frame = r.frame
    yaw = world.sim.snapshot().ego.yaw_deg
    assert (yaw > 5.0) if turns == "left" else (yaw < -5.0), yaw
