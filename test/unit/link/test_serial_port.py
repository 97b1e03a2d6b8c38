"""Erp42Link against the PCU emulator on real pty pairs, opened with pyserial (no mocks).

The emulator's ``unplug()`` closes both ends of its pty and removes the
symlink the link opens, exactly what pulling a USB-serial adapter does to
an open client; ``replug()`` makes a new pty and re-points the symlink.

Timing assertions are loose: the machine is shared.
"""
import dataclasses
import os
import random
import threading
import time

import pytest
import serial

from morai_bridge.emu.pcu import Mode, PcuEmulator
from morai_bridge.emu.pcu.vehicle import VehicleModel
from morai_bridge.link.serial_port import Erp42Link
from morai_bridge.link.workers import DEAD, RUNNING, STOPPED
from morai_bridge.wire import erp42
from morai_bridge.wire.erp42 import convert as erp42_convert

from helpers import Log, wait_for


def fast_vehicle():
    return VehicleModel(accel_mps2=20.0, decel_mps2=20.0, brake_decel_mps2=20.0, steer_rate_rad_s=5.0)


class Opener:
    """The default opener, keeping every port it opened (to check they get closed)."""

    def __init__(self):
        self.ports = []

    def __call__(self, path, baud):
        p = serial.Serial(path, baud, timeout=0.02, write_timeout=0.2)
        self.ports.append(p)
        return p


class Driver:
    """Publishes a command at ``hz`` from its own thread, like a ROS subscriber callback."""

    def __init__(self, link, velocity=10.0, steering=0.1, hz=50.0):
        self.link, self.velocity, self.steering, self.period = link, velocity, steering, 1.0 / hz
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop.wait(self.period):
            try:
                self.link.set_ctrl(2, 0.0, 0.0, self.steering, self.velocity, 0.0)
            except erp42.CommandRejected:
                return

    def stop(self):
        self._stop.set()
        self._t.join(1.0)


@pytest.fixture
def rig(tmp_path):
    """rig(**params) -> (pcu, link, feedback list, log, opener).  Everything is closed afterwards."""
    made = []
    path = str(tmp_path / 'erp42')

    def factory(start_pcu=True, link_kw=None, pcu_kw=None, **params):
        pcu = None
        if start_pcu:
            kw = dict(link=path, init_s=0.0, vehicle=fast_vehicle(), seed=1)
            kw.update(pcu_kw or {})
            pcu = PcuEmulator(**kw).start()
        fbs = []
        log = Log()
        opener = Opener()
        p = dataclasses.replace(erp42_convert.DEFAULT_PARAMS, port=path, **params)
        kw = dict(on_feedback=lambda fb, t: fbs.append((fb, t)), log=log, opener=opener)
        kw.update(link_kw or {})
        link = Erp42Link(p, **kw)
        made.append((pcu, link))
        return pcu, link, fbs, log, opener

    factory.path = path
    yield factory
    for pcu, link in made:
        link.stop()
        if pcu is not None:
            pcu.close()


def recover(pcu, n_frames=3, timeout=2.0):
    """Time until the PCU has read ``n_frames`` more valid commands, or None."""
    t0 = time.monotonic()
    n0 = pcu.state.frames_ok
    if wait_for(lambda: pcu.state.frames_ok >= n0 + n_frames, timeout):
        return time.monotonic() - t0
    return None


def speed(pcu):
    """SPEED of the last command the PCU accepted (None before the first)."""
    c = pcu.state.command
    return None if c is None else c.speed


def assert_clean_pcu(pcu):
    st = pcu.state
    assert st.alive_errors == 0, 'ALIVE did not step by one'
    assert (st.clamped, st.soft_violations, st.frames_rejected) == (0, 0, 0), st


def assert_workers_healthy(link):
    for w in link.workers:
        assert w.state == RUNNING and w.is_alive(), w
        assert (w.errors, w.restarts) == (0, 0), (w, w.last_traceback)


# ---------------------------------------------------------------------------

def test_frames_at_rate_on_absolute_deadlines_and_feedback(rig):
    pcu, link, fbs, log, _ = rig(shutdown_stop_s=0.0)
    link.start()
    assert link.connected
    drv = Driver(link)
    try:
        assert wait_for(lambda: link.sending_fresh, 1.0)
        s0, t0 = link.stats.frames_sent + link.stats.tx_overruns, time.monotonic()
        p0 = pcu.state.frames_ok
        f0 = len(fbs)
        time.sleep(3.0)
        s1, t1 = link.stats.frames_sent + link.stats.tx_overruns, time.monotonic()
        p1 = pcu.state.frames_ok
    finally:
        drv.stop()
    # on the 50 Hz grid: every period either sent a frame or was counted as skipped
    assert abs((s1 - s0) - (t1 - t0) * 50.0) <= 3, (s1 - s0, t1 - t0)
    rate = (p1 - p0) / (t1 - t0)
    assert 40.0 <= rate <= 55.0, f'PCU received {rate:.1f} frames/s'
    fb_rate = (len(fbs) - f0) / (t1 - t0)
    assert 35.0 <= fb_rate <= 60.0, f'on_feedback called {fb_rate:.1f} times/s'
    c = pcu.state.command
    assert (c.aorm, c.estop, c.gear, c.speed, c.steer, c.brake) == (1, 0, 0, 100, -407, 1)
    assert pcu.state.mode == Mode.AUTO
    assert link.last_feedback is not None and link.last_feedback[0].aorm == 1
    assert_clean_pcu(pcu)
    assert_workers_healthy(link)
    assert log.lines == []


def test_stop_frames_without_command_and_after_timeout(rig):
    pcu, link, _, _, _ = rig(cmd_timeout_s=0.3, shutdown_stop_s=0.0)
    link.start()
    assert wait_for(lambda: pcu.state.frames_ok > 5, 3.0)
    c = pcu.state.command
    assert (c.speed, c.brake, c.estop) == (0, 150, 0), 'no command yet: stop frames'
    assert not link.sending_fresh
    link.set_ctrl(2, 0.0, 0.0, 0.0, 5.0, 0.0)
    assert wait_for(lambda: speed(pcu) == 50, 0.5)
    assert link.sending_fresh
    t0 = time.monotonic()
    assert wait_for(lambda: speed(pcu) == 0, 2.0)
    assert 0.2 <= time.monotonic() - t0 <= 0.8
    assert pcu.state.command.brake == 150
    assert not link.sending_fresh
    assert link.stats.timeouts == 1
    assert link.stats.stop_frames_sent > 0


def test_command_from_before_a_reconnect_is_not_resumed(rig):
    pcu, link, _, _, _ = rig(cmd_timeout_s=0.9, shutdown_stop_s=0.0)
    link.start()
    link.set_ctrl(2, 0.0, 0.0, 0.0, 5.0, 0.0)
    assert wait_for(lambda: speed(pcu) == 50, 0.5)
    pcu.unplug()
    time.sleep(0.05)
    pcu.replug()
    assert recover(pcu) is not None
    # the command is 0.1-0.2 s old, well within cmd_timeout_s, but predates the reconnect
    assert speed(pcu) == 0 and pcu.state.command.brake == 150
    assert not link.sending_fresh
    link.set_ctrl(2, 0.0, 0.0, 0.0, 5.0, 0.0)
    assert wait_for(lambda: speed(pcu) == 50, 0.5)


def test_unplug_replug_while_tx_and_rx_are_busy_many_times(rig):
    """40 pulls at random moments while commands go out at 50 Hz and a noisy
    feedback stream comes in: every time the link recovers, no worker ever
    fails, and the PCU never sees a bad frame or an ALIVE error."""
    pcu, link, fbs, log, opener = rig(shutdown_stop_s=0.0, reconnect_period_s=0.2)
    pcu.noise_bytes = 5
    pcu.split_writes = 2
    link.start()
    drv = Driver(link)
    rng = random.Random(42)
    times = []
    try:
        assert recover(pcu) is not None
        for i in range(40):
            time.sleep(rng.uniform(0.0, 0.06))     # somewhere in a TX period / a feedback read
            pcu.unplug()
            time.sleep(rng.uniform(0.0, 0.05))
            pcu.replug()
            r = recover(pcu)
            assert r is not None, 'no recovery after replug %d' % (i + 1)
            times.append(r)
        n = len(fbs)
        assert wait_for(lambda: len(fbs) > n + 10, 2.0), 'feedback does not flow after the last replug'
    finally:
        drv.stop()
    assert max(times) < 1.0, times
    assert_workers_healthy(link)
    assert_clean_pcu(pcu)
    assert len(link.stats.outages) >= 40 and link.stats.reconnects >= 40
    assert link.stats.outage_count == len(link.stats.outages)      # fewer than OUTAGE_HISTORY here
    assert all(end is not None for _, end in link.stats.outages)
    # every port but the current one was closed by the link
    assert all(not p.is_open for p in opener.ports[:-1]) and opener.ports[-1].is_open
    assert link.framer.bytes_discarded > 0          # the noise really was there
    assert log.lines == []


def test_injected_exception_in_io_worker_restarts_from_a_closed_port(rig):
    pcu, link, fbs, log, opener = rig(shutdown_stop_s=0.0)
    link.start()
    drv = Driver(link)
    try:
        assert wait_for(lambda: link.sending_fresh and pcu.state.mode == Mode.AUTO, 2.0)
        io, cb = link.workers
        outages, reconnects, first_port = len(link.stats.outages), link.stats.reconnects, opener.ports[-1]
        io.inject(ValueError('injected I/O fault'))
        assert wait_for(lambda: io.restarts == 1, 2.0)
        assert recover(pcu) is not None
        assert wait_for(lambda: link.sending_fresh, 1.0)
    finally:
        drv.stop()
    assert io.state == RUNNING and io.is_alive() and io.errors == 1
    assert 'injected I/O fault' in io.last_error
    assert not first_port.is_open, 'the restart did not close the port'
    assert len(opener.ports) == 2 and opener.ports[-1].is_open
    assert len(link.stats.outages) == outages + 1 and link.stats.reconnects == reconnects + 1
    assert link.stats.outage_count == len(link.stats.outages)
    assert 'restarted after ValueError' in link.stats.last_error
    assert cb.restarts == 0 and cb.state == RUNNING
    # ALIVE went on by one across the restart (the PCU's watchdog never lost track)
    assert_clean_pcu(pcu)
    assert pcu.state.auto_fail_events == 0
    assert len(log.lines) == 1 and 'Traceback' in log.lines[0] and 'injected I/O fault' in log.lines[0]


def test_injected_exception_in_feedback_worker_resumes(rig):
    pcu, link, fbs, log, _ = rig(shutdown_stop_s=0.0)
    link.start()
    assert wait_for(lambda: len(fbs) > 5, 3.0)
    io, cb = link.workers
    cb.inject(RuntimeError('injected callback-thread fault'))
    assert wait_for(lambda: cb.restarts == 1, 2.0)
    n = len(fbs)
    assert wait_for(lambda: len(fbs) > n + 10, 2.0), 'feedback no longer delivered'
    assert cb.state == RUNNING and cb.is_alive()
    assert io.restarts == 0 and io.errors == 0 and link.stats.reconnects == 0
    assert 'Traceback' in log.lines[0] and 'injected callback-thread fault' in log.lines[0]


def test_failing_callback_is_counted_and_does_not_touch_the_link(rig):
    calls = []

    def bad(fb, t):
        calls.append(t)
        raise ZeroDivisionError('bug in the node')

    pcu, link, _, log, _ = rig(shutdown_stop_s=0.0, link_kw=dict(on_feedback=bad))
    link.start()
    assert wait_for(lambda: len(calls) > 50, 3.0)
    assert link.stats.callback_errors >= 50
    assert_workers_healthy(link)
    assert len(log.lines) == 1, 'callback errors are logged at most once per 5 s'
    assert 'ZeroDivisionError: bug in the node' in log.lines[0] and 'Traceback' in log.lines[0]
    assert link.stats.reconnects == 0 and link.connected


def test_slow_callback_does_not_delay_commands(rig):
    def slow(fb, t):
        time.sleep(0.1)

    pcu, link, _, _, _ = rig(shutdown_stop_s=0.0, link_kw=dict(on_feedback=slow))
    link.start()
    assert wait_for(lambda: pcu.state.frames_ok > 5, 3.0)
    p0, t0 = pcu.state.frames_ok, time.monotonic()
    time.sleep(2.0)
    rate = (pcu.state.frames_ok - p0) / (time.monotonic() - t0)
    assert rate >= 40.0, f'a 100 ms callback slowed commands to {rate:.1f} Hz'
    assert_clean_pcu(pcu)


def test_io_worker_dead_after_repeated_failures(rig):
    dead = []
    pcu, link, _, log, opener = rig(shutdown_stop_s=0.0,
                                    link_kw=dict(on_dead=dead.append, max_restarts=2))
    link.start()
    io = link.workers[0]
    for i in range(3):
        assert wait_for(lambda: io.state == RUNNING and link.connected, 2.0)
        io.inject(OSError('fault %d' % i))
        assert wait_for(lambda: io.errors == i + 1, 2.0)
    assert wait_for(lambda: io.state == DEAD, 2.0)
    assert dead == [io]
    assert not link.connected and not opener.ports[-1].is_open, 'a dead link must release the port'
    n = pcu.state.frames_ok
    time.sleep(0.2)
    assert pcu.state.frames_ok == n, 'frames still sent by a dead worker'
    assert any('DEAD' in line for line in log.lines)
    link.stop()         # must not hang or raise
    assert io.state == DEAD


def test_stop_sends_stop_frames_for_shutdown_stop_s_then_closes(rig):
    pcu, link, _, _, opener = rig(shutdown_stop_s=0.5)
    link.start()
    drv = Driver(link)
    assert wait_for(lambda: speed(pcu) == 100, 2.0)
    drv.stop()
    link.set_ctrl(2, 0.0, 0.0, 0.1, 10.0, 0.0)
    n0 = pcu.state.frames_ok
    t0 = time.monotonic()
    link.stop()
    took = time.monotonic() - t0
    n1 = pcu.state.frames_ok
    assert 0.45 <= took <= 1.5, took
    assert 15 <= n1 - n0 <= 35, '%d frames during a 0.5 s shutdown' % (n1 - n0)
    c = pcu.state.command
    assert (c.speed, c.brake, c.estop) == (0, 150, 0)
    assert c.steer == -407, 'steering is held in stop frames'
    assert not link.connected and not opener.ports[-1].is_open
    assert all(w.state == STOPPED and not w.is_alive() for w in link.workers)
    with pytest.raises(erp42.CommandRejected) as e:
        link.set_ctrl(2, 0.0, 0.0, 0.0, 5.0, 0.0)
    assert e.value.reason == 'shutdown'
    time.sleep(0.1)
    assert pcu.state.frames_ok == n1, 'frames after stop() returned'
    assert_clean_pcu(pcu)


def test_stop_with_shutdown_estop(rig):
    pcu, link, _, _, _ = rig(shutdown_stop_s=0.2, shutdown_estop=True)
    link.start()
    link.set_ctrl(2, 0.0, 0.0, 0.0, 5.0, 0.0)
    assert wait_for(lambda: speed(pcu) == 50, 1.0)
    link.stop()
    c = pcu.state.command
    assert (c.estop, c.speed, c.brake) == (1, 0, 150)


def test_io_worker_closes_its_port_when_it_is_stopped_directly(rig):
    pcu, link, _, _, opener = rig(shutdown_stop_s=0.0)
    link.start()
    assert link.connected
    assert link.workers[0].stop(2.0)
    assert not link.connected and not opener.ports[-1].is_open


def test_start_without_device_then_device_appears(rig):
    _, link, _, _, _ = rig(start_pcu=False, shutdown_stop_s=0.0)
    link.start()
    assert not link.connected
    assert 'does not exist' in link.stats.last_error
    pcu = PcuEmulator(link=rig.path, init_s=0.0, vehicle=fast_vehicle()).start()
    try:
        t0 = time.monotonic()
        assert wait_for(lambda: link.connected, 1.0)
        assert time.monotonic() - t0 < 0.2
        assert recover(pcu) is not None
        assert link.stats.reconnects == 0 and link.stats.outages[0][1] is not None
    finally:
        link.stop()
        pcu.close()


def test_failed_opens_back_off_and_a_returning_device_is_tried_at_once(rig, tmp_path):
    not_a_tty = tmp_path / 'not_a_tty'
    not_a_tty.write_bytes(b'')
    os.symlink(str(not_a_tty), rig.path)          # the path exists but cannot be opened as a port
    _, link, _, _, _ = rig(start_pcu=False, shutdown_stop_s=0.0, reconnect_period_s=1.0)
    link.start()
    time.sleep(1.6)
    failures = link.stats.open_failures
    # 0, 0.05, 0.15, 0.35, 0.75, 1.55 s: 6 attempts, not one per 20 ms tick (80)
    assert 4 <= failures <= 8, failures
    assert 'cannot open' in link.stats.last_error
    pcu = PcuEmulator(link=rig.path, init_s=0.0, vehicle=fast_vehicle()).start()   # re-points the link
    try:
        t0 = time.monotonic()
        assert wait_for(lambda: link.connected, 1.5)
        assert time.monotonic() - t0 < 0.2, 'the back-off delayed a returning device'
        assert recover(pcu) is not None
    finally:
        link.stop()
        pcu.close()


def test_only_the_io_thread_may_touch_the_port(rig):
    pcu, link, _, _, _ = rig(shutdown_stop_s=0.0)
    link.start()
    with pytest.raises(RuntimeError, match='erp42_io'):
        link._close('from the wrong thread')
    assert link.connected


def test_outage_history_is_bounded_and_every_outage_counted(rig):
    """A cable that fails thousands of times over months: the link keeps the last
    OUTAGE_HISTORY outages with their times and counts all of them."""
    from morai_bridge.link.serial_port import OUTAGE_HISTORY
    pcu, link, fbs, log, opener = rig()
    n = OUTAGE_HISTORY * 3 + 7
    for i in range(n):
        link._mark_outage(float(i), 'unplugged %d' % i)
        link._mark_outage(float(i) + 0.1, 'still unplugged')   # the same outage: not counted again
        link.stats.outages[-1][1] = i + 0.5                     # what reopening the port does
    assert link.stats.outage_count == n
    assert len(link.stats.outages) == OUTAGE_HISTORY
    assert list(link.stats.outages)[-1] == [float(n - 1), n - 0.5]
    assert list(link.stats.outages)[0][0] == float(n - OUTAGE_HISTORY)
