#!/usr/bin/python3
"""Stress the ERP-42 serial link with unplug/replug at chosen moments (no ROS).

    flock /tmp/morai_heavy.lock /usr/bin/python3 tools/stress_erp42.py [--cycles 200] [--seed 1]

Runs the PCU emulator (``morai_bridge.emu.pcu``) on a pty behind a symlink and
an :class:`~morai_bridge.link.serial_port.Erp42Link` on that symlink, with a
driver thread setting a 5 km/h command at 50 Hz.  Each cycle pulls the device
(``PcuEmulator.unplug``: both pty ends closed, symlink removed -- what pulling a
USB-serial adapter does to an open client) at one of these moments, then
plugs it back (``replug``: a new pty, symlink re-pointed):

* ``mid_write``  -- inside the link's ``write``: half a frame is written, the
  device is pulled, the link writes the other half;
* ``mid_read``   -- inside the link's ``read``, after ``select`` reported data;
* ``after_open`` -- the device is pulled and plugged back, and pulled again
  right after the link reopened it, before the link used the new port;
* ``backoff``    -- the path comes back as a node that cannot be opened (a
  regular file), the link fails 1-3 opens and backs off, and the real device
  returns at a random point of that back-off;
* ``random``     -- at a random time, from the tool's own thread.

The first three are hooks in a ``serial.Serial`` subclass the tool passes as
the link's ``opener``: real pyserial on a real pty, with a call-out inside
``write``/``read``/after open.  The device stays away 0-200 ms.

Recovery time: from the moment the device is back (``replug`` returned) until
the PCU has read 3 valid command frames from the new pty (as in
test/ros/test_erp42_serial.py; at 50 Hz that takes at least 40 ms) and the
link has delivered a feedback frame from it.  The time to the first valid
frame is printed too.  Exit status 1 unless: every cycle
recovered, each within 1 s, no worker died, the PCU saw no frame out of the
protocol's range, no rejected frame and no ALIVE error.
"""
import dataclasses
import math
import os
import random
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'src'))

import serial  # noqa: E402

from morai_bridge.configuration.params import Param, parse_args  # noqa: E402
from morai_bridge.emu.pcu import PcuEmulator  # noqa: E402
from morai_bridge.emu.pcu.vehicle import VehicleModel  # noqa: E402
from morai_bridge.link.serial_port import Erp42Link  # noqa: E402
from morai_bridge.wire import erp42  # noqa: E402
from morai_bridge.wire.erp42 import convert as erp42_convert

MOMENTS = ('mid_write', 'mid_read', 'after_open', 'backoff', 'random')
HOOKED = ('mid_write', 'mid_read', 'after_open')
RECOVERY_LIMIT_S = 1.0


class Probe:
    """One armed moment; the first I/O call that reaches it runs ``action`` there."""

    def __init__(self):
        self.lock = threading.Lock()
        self.armed = None
        self.action = None
        self.fired = threading.Event()

    def arm(self, moment, action):
        with self.lock:
            self.fired.clear()
            self.armed, self.action = moment, action

    def disarm(self):
        with self.lock:
            self.armed = None

    def hit(self, moment):
        with self.lock:
            if self.armed != moment:
                return False
            self.armed = None
            action = self.action
        action()
        self.fired.set()
        return True


PROBE = Probe()


class ProbedSerial(serial.Serial):
    """pyserial on the real pty, with call-outs inside write and read."""

    def write(self, data):
        if len(data) > 1 and PROBE.armed == 'mid_write':
            half = len(data) // 2
            n = super().write(data[:half])
            PROBE.hit('mid_write')          # the device goes away here, half a frame written
            return n + super().write(data[half:])
        return super().write(data)

    def read(self, size=1):
        PROBE.hit('mid_read')               # select() said readable; the device goes away now
        return super().read(size)


def opener(path, baud):
    port = ProbedSerial(path, baud, timeout=0.02, write_timeout=0.2)
    PROBE.hit('after_open')
    return port


def wait_for(pred, timeout, step=0.001):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


def percentile(values, q):
    if not values:
        return float('nan')
    s = sorted(values)
    return s[max(0, int(math.ceil(q * len(s))) - 1)]


class Rig:
    def __init__(self, seed, verbose):
        self.tmp = tempfile.mkdtemp(prefix='stress_erp42_')
        self.path = os.path.join(self.tmp, 'erp42')
        self.not_a_tty = os.path.join(self.tmp, 'not_a_tty')
        open(self.not_a_tty, 'wb').close()
        self.verbose = verbose
        self.logs = []
        self.feedback = 0
        self.pcu = PcuEmulator(link=self.path, init_s=0.0, seed=seed,
                               vehicle=VehicleModel(accel_mps2=10.0, decel_mps2=10.0))
        self.pcu.start()
        params = dataclasses.replace(erp42_convert.DEFAULT_PARAMS, port=self.path, shutdown_stop_s=0.2)
        kw = dict(on_feedback=self._on_feedback, on_state=self._on_state, opener=opener)
        try:
            self.link = Erp42Link(params, log=self._log, **kw)
        except TypeError:       # a link without supervision (for before/after comparisons)
            self.link = Erp42Link(params, **kw)
        self._stop = threading.Event()
        self._driver = threading.Thread(target=self._drive, name='stress_driver', daemon=True)

    def _on_feedback(self, fb, t):
        self.feedback += 1

    def _on_state(self, text):
        if self.verbose:
            print(f'    link: {text}')

    def _log(self, text):
        self.logs.append(text)
        print('    LOG: %s' % text.replace('\n', '\n         '))

    def _drive(self):
        i = 0
        while not self._stop.wait(0.02):
            i += 1
            try:
                self.link.set_ctrl(2, 0.0, 0.0, 0.05 * math.sin(i / 25.0), 5.0, 0.0)
            except erp42.CommandRejected:
                return

    def workers(self):
        ws = getattr(self.link, 'workers', None)
        if ws is not None:
            return [(w.name, w.state, w.restarts) for w in ws]
        # the pre-supervisor link: two bare threads
        return [(t.name, 'running' if t.is_alive() else 'dead', 0)
                for t in (getattr(self.link, '_tx', None), getattr(self.link, '_rx', None)) if t]

    def sending_fresh(self):
        return getattr(self.link, 'sending_fresh', getattr(self.link, '_sending_fresh', False))

    def start(self):
        self.link.start()
        self._driver.start()

    def close(self):
        self._stop.set()
        self._driver.join(1.0)
        self.link.stop()
        self.pcu.close()
        for p in (self.path, self.not_a_tty):
            try:
                os.unlink(p)
            except OSError:
                pass
        try:
            os.rmdir(self.tmp)
        except OSError:
            pass

    def point_path_at_not_a_tty(self):
        tmp = self.path + '.stress'
        try:
            os.unlink(tmp)
        except OSError:
            pass
        os.symlink(self.not_a_tty, tmp)
        os.replace(tmp, self.path)

    def cycle(self, moment, rng):
        """One pull/replug; returns (recovery seconds or None, how the pull happened)."""
        how = moment
        if moment == 'after_open':
            # pull the device, and pull it again right after the link reopened it
            time.sleep(rng.uniform(0.0, 0.1))
            self.pcu.unplug()
            time.sleep(rng.uniform(0.0, 0.1))
            PROBE.arm(moment, self.pcu.unplug)
            self.pcu.replug()
            if not PROBE.fired.wait(2.0):
                PROBE.disarm()
                if not PROBE.fired.wait(0.5):
                    how = moment + '(not reached: pulled from the tool)'
                    self.pcu.unplug()
        elif moment in HOOKED:
            PROBE.arm(moment, self.pcu.unplug)
            if not PROBE.fired.wait(2.0):
                PROBE.disarm()
                if not PROBE.fired.wait(0.5):       # (it may have fired just now)
                    how = moment + '(not reached: pulled from the tool)'
                    self.pcu.unplug()
        else:
            time.sleep(rng.uniform(0.0, 0.1))
            self.pcu.unplug()
        if moment == 'backoff':
            time.sleep(rng.uniform(0.0, 0.03))
            self.point_path_at_not_a_tty()
            stats = self.link.stats
            f0 = stats.open_failures
            k = rng.randint(1, 3)
            if not wait_for(lambda: stats.open_failures >= f0 + k, 3.0):
                how = 'backoff(no failed open seen)'
            time.sleep(rng.uniform(0.0, 0.05 * 2 ** (k - 1)))   # somewhere in the current back-off
        else:
            time.sleep(rng.uniform(0.0, 0.2))
        self.pcu.replug()
        t0 = time.monotonic()
        n0 = self.pcu.state.frames_ok
        f0 = self.feedback
        first = []

        def recovered():
            n = self.pcu.state.frames_ok
            if n > n0 and not first:
                first.append(time.monotonic() - t0)
            return n >= n0 + 3 and self.feedback > f0

        ok = wait_for(recovered, 5.0)
        r = time.monotonic() - t0 if ok else None
        return r, (first[0] if first else None), how


def main(argv=None):
    args = parse_args([
        Param('cycles', 200, 'fault cycles to run', minimum=1),
        Param('seed', 1, 'seed of the fault choices'),
        Param('verbose', False, 'one line per cycle and link state changes', flags=('-v', '--verbose')),
    ], argv, description=__doc__.split('\n\n')[0])

    rng = random.Random(args.seed)
    rig = Rig(args.seed, args.verbose)
    rig.start()
    t_start = time.monotonic()
    recoveries = []
    failures = []
    by_moment = {m: [] for m in MOMENTS}
    not_reached = 0
    fresh_resumed = 0
    done = 0
    first_frames = []
    try:
        if not wait_for(lambda: rig.pcu.state.frames_ok > 10, 5.0):
            print('the link never sent frames to the PCU emulator')
            return 1
        for i in range(args.cycles):
            moment = rng.choice(MOMENTS)
            r, r_first, how = rig.cycle(moment, rng)
            if r_first is not None:
                first_frames.append(r_first)
            if 'not' in how:
                not_reached += 1
            done = i + 1
            if r is None:
                failures.append((i + 1, how))
                print('cycle %d (%s): NO RECOVERY within 5 s; workers %s' % (i + 1, how, rig.workers()))
                if any(w[1] == 'dead' for w in rig.workers()):
                    print('a worker is dead: nothing will recover, stopping after %d cycles' % done)
                    break
            else:
                recoveries.append(r)
                by_moment[moment].append(r)
                if wait_for(rig.sending_fresh, 1.0):
                    fresh_resumed += 1
            if args.verbose:
                print('cycle %3d %-12s recovery %s' % (i + 1, how, '-' if r is None else '%.3f s' % r))
            time.sleep(rng.uniform(0.05, 0.25))      # drive normally for a while
    finally:
        elapsed = time.monotonic() - t_start
        workers = rig.workers()
        st = rig.pcu.state
        ls = rig.link.stats
        rig.close()

    restarts = sum(w[2] for w in workers)
    dead = [w[0] for w in workers if w[1] == 'dead']
    out_of_range = st.clamped + st.soft_violations
    worst = max(recoveries) if recoveries else float('nan')
    print('stress_erp42: %d of %d cycles in %.0f s (seed %d)' % (done, args.cycles, elapsed, args.seed))
    print('  recoveries            %d/%d' % (len(recoveries), args.cycles))
    print('  recovery after the device returned [s]: median %.3f  p99 %.3f  worst %.3f' % (
        percentile(recoveries, 0.5), percentile(recoveries, 0.99), worst))
    print('  first frame at the PCU after the device returned [s]: median %.3f  p99 %.3f  worst %.3f' % (
        percentile(first_frames, 0.5), percentile(first_frames, 0.99),
        max(first_frames) if first_frames else float('nan')))
    for m in MOMENTS:
        v = by_moment[m]
        if v:
            print(f'    {m:11} {len(v):3} cycles  median {percentile(v, 0.5):.3f}  worst {max(v):.3f}')
    print('  hooked moments not reached (pulled from the tool instead): %d' % not_reached)
    print('  fresh commands resumed after the reconnect: %d/%d' % (fresh_resumed, len(recoveries)))
    print('  workers               %s' % ', '.join('%s %s (%d restarts)' % w for w in workers))
    print('  worker restarts       %d' % restarts)
    print(f'  dead workers          {len(dead)}')
    print('  PCU: frames ok %d, out of range %d (clamped %d, soft %d), rejected %d, ALIVE errors %d' % (
        st.frames_ok, out_of_range, st.clamped, st.soft_violations, st.frames_rejected, st.alive_errors))
    print('  link: frames sent %d, outages %d, reconnects %d, write errors %d, read errors %d, '
          'open failures %d, TX overruns %d' % (
              ls.frames_sent, ls.outage_count, ls.reconnects, ls.write_errors, ls.read_errors,
              ls.open_failures, getattr(ls, 'tx_overruns', 0)))
    print(f'  error log lines       {len(rig.logs)}')
    checks = [
        ('every cycle recovered', len(recoveries) == args.cycles),
        (f'every recovery within {RECOVERY_LIMIT_S:.1f} s', bool(recoveries) and worst <= RECOVERY_LIMIT_S),
        ('no dead worker', not dead),
        ('no frame out of range at the PCU', out_of_range == 0),
        ('no rejected frame at the PCU', st.frames_rejected == 0),
        ('no ALIVE error at the PCU', st.alive_errors == 0),
    ]
    for name, ok in checks:
        print(f"  {name:34} {'ok' if ok else 'FAILED'}")
    failed = [n for n, ok in checks if not ok]
    print('RESULT: %s' % ('PASS' if not failed else 'FAIL (%s)' % '; '.join(failed)))
    return 0 if not failed else 1


if __name__ == '__main__':
    sys.exit(main())
