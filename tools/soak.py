#!/usr/bin/python3
"""Soak run (not part of the test suite): everything at full rate for N minutes.

    bash tools/soak.sh [minutes]          (default 10)

Starts a private ROS master, the simulator emulator with an ERP-42 PCU on a
pty, udp_bridge on every stream, erp42_serial on the pty, and the demo driver
(commands at 20 Hz, 15 km/h).  Every minute it prints the messages received
per topic, the bridge's per-stream counters from /diagnostics, and the RSS of
each process; at the end whether memory stayed flat (growth of the bridge's
RSS between minute 2 and the end under 2 MiB).  Exit status 1 when a process
died, errors were counted, or memory grew.
"""
import os
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'src'))

from morai_bridge.configuration.params import Param, parse_args  # noqa: E402

MASTER_PORT = 11511
LINK = '/tmp/morai_soak_erp42'
#: the command line (configuration.params)
PARAMS = [Param('minutes', 10.0, 'how long to run; a line of figures every whole minute', positional=True, nargs='?',
                metavar='MINUTES')]


def main(argv=None):
    minutes = parse_args(PARAMS, argv, description=__doc__, raw_help=True).minutes
    os.environ['ROS_MASTER_URI'] = 'http://127.0.0.1:%d' % MASTER_PORT
    import psutil
    import roslaunch
    import rospy
    from diagnostic_msgs.msg import DiagnosticArray
    from morai_msgs.msg import EgoVehicleStatus, ERP42Info, ObjectStatusList

    core = subprocess.Popen(['roscore', '-p', str(MASTER_PORT)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(3.0)
    uuid = roslaunch.rlutil.get_or_generate_uuid(None, False)
    roslaunch.configure_logging(uuid)
    launch = os.path.join(ROOT, 'launch')
    parent = roslaunch.parent.ROSLaunchParent(uuid, [
        (os.path.join(launch, 'sim_emulator.launch'), ['scenario:=demo', 'erp42_link:=' + LINK, 'output:=log']),
        (os.path.join(launch, 'udp_bridge.launch'), ['output:=log']),
        (os.path.join(launch, 'erp42_serial.launch'), ['port:=' + LINK, 'encoder_enabled:=false', 'output:=log']),
        (os.path.join(launch, 'demo_driver.launch'), ['speed_kmh:=15.0', 'output:=log'])])
    parent.start()
    rospy.init_node('soak_monitor', disable_signals=True)
    counts = {'/Ego_topic': 0, '/Object_topic': 0, '/erp42_serial/erp42_info': 0}
    lock = threading.Lock()

    def counter(topic):
        def cb(_m):
            with lock:
                counts[topic] += 1
        return cb
    rospy.Subscriber('/Ego_topic', EgoVehicleStatus, counter('/Ego_topic'), queue_size=100)
    rospy.Subscriber('/Object_topic', ObjectStatusList, counter('/Object_topic'), queue_size=100)
    rospy.Subscriber('/erp42_serial/erp42_info', ERP42Info, counter('/erp42_serial/erp42_info'), queue_size=100)
    diag = {}

    def on_diag(m):
        for s in m.status:
            diag[s.name] = {kv.key: kv.value for kv in s.values}
    rospy.Subscriber('/diagnostics', DiagnosticArray, on_diag, queue_size=50)

    def procs():
        out = {}
        for p in psutil.process_iter(['cmdline']):
            cmd = ' '.join(p.info['cmdline'] or [])
            for name in ('udp_bridge', 'erp42_serial', 'sim_emulator', 'demo_driver'):
                if f'__name:={name}' in cmd:
                    out[name] = p
        return out

    time.sleep(5.0)
    ps = procs()
    print('soak: %.0f min; processes: %s' % (minutes, ', '.join('%s pid %d' % (n, p.pid) for n, p in ps.items())))
    rss = {n: [] for n in ps}
    failed = []
    t0 = time.monotonic()
    last = dict(counts)
    try:
        for minute in range(1, int(minutes) + 1):
            time.sleep(max(0.0, t0 + 60.0 * minute - time.monotonic()))
            with lock:
                now = dict(counts)
            rates = ', '.join('%s %d (%.1f Hz)' % (t, now[t], (now[t] - last[t]) / 60.0) for t in now)
            last = now
            mem = []
            for n, p in ps.items():
                try:
                    r = p.memory_info().rss / 2 ** 20
                except psutil.Error:
                    failed.append(f'{n} died')
                    r = float('nan')
                rss[n].append(r)
                mem.append(f'{n} {r:.1f} MiB')
            errs = []
            for name, d in diag.items():
                if name.startswith('udp_bridge: UDP ') and 'decode errors' in d:
                    bad = int(d['decode errors']) + int(d['wrong type']) + int(d['from unexpected hosts'])
                    if bad:
                        errs.append('%s: %d' % (name, bad))
            link = diag.get('erp42_serial: ERP-42 serial link', {})
            print('[%2d min] received: %s' % (minute, rates))
            print('         bridge errors: %s; serial: frames sent %s, feedback %s, discarded bytes %s, '
                  'reconnects %s' % (', '.join(errs) or 'none', link.get('frames sent'), link.get('feedback frames'),
                                     link.get('bytes discarded'), link.get('reconnects')))
            print(f"         RSS: {', '.join(mem)}", flush=True)
            if errs:
                failed.append('bridge errors at minute %d' % minute)
    finally:
        parent.shutdown()
        core.terminate()
    b = rss.get('udp_bridge', [])
    if len(b) >= 3:
        growth = b[-1] - b[1]
        print(f"bridge RSS from minute 2 to the end: {growth:+.2f} MiB ({'flat' if growth < 2.0 else 'GROWING'})")
        if growth >= 2.0:
            failed.append(f'bridge memory grew {growth:.2f} MiB')
    print(f"soak: {'; '.join(failed) if failed else 'OK'}")
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
