#!/usr/bin/python3
"""Sensors and ground truth in one run: LiDARs, cameras and the udp_bridge together, each at its own rate.

    bash tools/dev.sh build && source <(bash tools/dev.sh env)
    flock /tmp/morai_heavy.lock /usr/bin/python3 bench/bench_combined.py [--seconds 20] [--warmup 3] [--quick]
        [--lidars hdl32e,vlp16] [--rpm 600] [--lidar-burst] [--cameras 1] [--camera-hz 30] [--width 1280]
        [--height 720] [--rate 120] [--gps-hz HZ] [--imu-hz HZ] [--state-queue-size 1] [--json out.json]

The 2026 competition's heaviest allowed rig (four UDP cameras at 30 Hz, one VLP-16 at 15 Hz, GPS 30 Hz,
IMU 50 Hz, ground truth 50 Hz; docs/benchmarks.md, "The competition rig (issue 48 item 7)"):

    bench/bench_combined.py --lidars vlp16 --rpm 900 --lidar-burst --cameras 4 --camera-hz 30
        --rate 50 --gps-hz 30 --imu-hz 50

A benchmark, not a timed test.  bench/bench_sensors.py measures each sensor node alone and
bench/bench_e2e.py the udp_bridge alone; here they all run at the same time on the same cores:

* ``lidar_bridge`` per LiDAR of ``--lidars``, in namespace /hdl32e or /vlp16, on its own port, fed by
  its own sender process at ``--rpm``: paced packet by packet like a real sensor (HDL-32E at 600 rpm:
  181 packets per revolution, about 1,808 packets/s; VLP-16: about 754 packets/s), or with
  ``--lidar-burst`` as MORAI 25.S4 sends it: each revolution captured at once and its packets sent
  back to back, rpm / 60 times a second (VLP-16 at 900 rpm: 50 packets, 15 times a second);
* ``camera_bridge`` per camera of ``--cameras``, in namespace /camera1 ... /cameraN, each on its own
  UDP port (in MORAI's UDP mode every camera is a stream of its own, on its own port): a ``--width`` x
  ``--height`` JPEG of a road scene at ``--camera-hz``; one sender process plays the simulator and
  sends each frame to every camera's port in turn, each camera's chunks in one burst (all cameras
  rendered in one simulator frame: their bursts come back to back, the worst alignment);
* ``udp_bridge`` in namespace /bench_bridge_<rate>, fed by bench/e2e_sender.py on all nine sim -> user
  streams: the seven ground-truth streams at ``--rate``, GPS at ``--gps-hz`` and IMU at ``--imu-hz``
  (both ``--rate`` when not given); its topics are counted in a separate subscriber process (so that
  its small messages do not share this process's interpreter lock with the cloud and image
  subscribers).

The sender processes are bench/bench_sensors.py's (one per LiDAR, one for all cameras): the device
time in each LiDAR packet is the sender's wall clock, so a cloud's stamp names its revolution, and the
camera frames carry the send time as their stamp.  All senders start together; after ``--warmup``
seconds the measured window of ``--seconds`` begins.

Per stream:

* lost at the node: what reached the node's port but was never read (the kernel's drop counter of the
  socket, from ``ss``, and packets / datagrams sent - read by the node, whole run) or was read and
  never published (LiDAR revolutions sent - clouds published, the first revolution being incomplete
  by design; camera frames sent - published; udp_bridge datagrams received - published);
* lost at the subscriber: revolutions (frames) whose last packet (chunk) was sent in the window and
  for which no cloud (image) with that stamp reached this process's subscriber; for the udp_bridge,
  datagrams sent - messages received by its subscriber, per topic, whole run;
* latency in the node, from its /diagnostics: LiDAR, the last packet of a revolution read -> the
  cloud's publish() returned (the node's last 512 revolutions); camera, the frame's last chunk read
  -> image and camera info published (last 512 frames).  The udp_bridge does not time itself: for
  its stamped topics the figure is the subscriber's (send -> callback, which includes the node);
* latency at the subscriber: the moment the sender sent the revolution's last packet (the frame's
  last chunk) -> the message arrived and was deserialised in this process (CLOCK_MONOTONIC, shared by
  the processes).

CPU: psutil user + system time of each process over the window, % of one core; the bridges summed.
Machine: CPU time of every process over the window, split into this benchmark's processes (nodes,
senders, subscribers, roscore, roslaunch) and the rest, and the load average before and after.
Sockets: net.core.rmem_max, whether this process may force a larger buffer (CAP_NET_ADMIN: root
may, so its nodes get ~socket_buffer whatever rmem_max says; run under ``setpriv --bounding-set
-net_admin`` to measure what a normal user gets), and each port's granted buffer and drops.

Targets: 0 lost at the nodes and at the subscribers; LiDAR latency in the node p99 <= 5 ms; the
bridges together <= 100 % of one core (one of the two cores of the development machine); HDL-32E
lidar_bridge <= 25 % of a core and each camera_bridge <= 10 % (bench/bench_sensors.py's); the
udp_bridge <= 15 % at 120 Hz (bench/run.py's target, defined for the bridge alone; judged only at
``--rate 120`` with GPS and IMU at that rate too).  Private ROS master on a free port, every UDP port
free on 127.0.0.1; stops only what it started.
"""
import json
import multiprocessing
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / 'src'))

import bench_e2e  # noqa: E402
import bench_sensors as bs  # noqa: E402
from morai_bridge.configuration.params import Param, parse_args  # noqa: E402
import e2e_streams  # noqa: E402
from run import Master  # noqa: E402

TARGET_LIDAR_CPU = bs.TARGET_LIDAR_CPU          # HDL-32E, % of one core
TARGET_CAMERA_CPU = bs.TARGET_CAMERA_CPU        # each camera_bridge, % of one core
TARGET_LIDAR_P99_MS = bs.TARGET_LIDAR_P99_MS    # last packet -> cloud, ms
TARGET_UDP_CPU = 15.0                           # udp_bridge at 120 Hz (bench/run.py TARGET_CPU)
TARGET_UDP_CPU_RATE = 120                       # the rate that target is defined at
TARGET_BRIDGES_CPU = 100.0                      # every bridge together: one core of the machine's two
NODE_LAT_KEY = 'latency, last packet of a revolution read -> cloud published, p50 / p99 / max [ms]'
NODE_PUB_KEY = 'publish time, closing packet read -> cloud published, p50 / p99 / max [ms]'
CAM_PUB_KEY = 'publish time p50 / p99 / max [ms]'
LIDARS = {'hdl32e': ('HDL32E', 'HDL-32E'), 'vlp16': ('VLP16', 'VLP-16')}   # namespace: ~model, label
COMPETITION_RIG = ('The 2026 competition\'s heaviest allowed rig: --lidars vlp16 --rpm 900 --lidar-burst --cameras 4 '
                   '--camera-hz 30 --rate 50 --gps-hz 30 --imu-hz 50 (docs/benchmarks.md, "The competition rig")')
GROUND_TRUTH = [n for n in e2e_streams.NAMES if n not in ('gps', 'imu')]
CAP_NET_ADMIN = 12                              # linux/capability.h


def udp_ns(rate):
    """The udp_bridge's namespace for a run at ``rate`` Hz (bench_e2e.Sut names it so)."""
    return '/bench_bridge_%d' % rate


def lidar_list(text):
    """--lidars: LiDAR names, comma separated, or none."""
    names = [] if text.strip().lower() == 'none' else [w.strip().lower() for w in text.split(',') if w.strip()]
    unknown = [n for n in names if n not in LIDARS]
    if unknown or len(set(names)) != len(names):
        raise ValueError('expected some of %s, each once, comma separated, or none' % ', '.join(LIDARS))
    return names


OPTIONS = [
    Param('seconds', 20.0, 'measured time [s]', above=0.0),
    Param('warmup', 3.0, 'warm-up before measuring [s]', minimum=0.0),
    Param('quick', False, '5 s measured after 2 s warm-up (smoke test)', switch=True),
    Param('lidars', 'hdl32e,vlp16', 'the LiDARs, comma separated (%s) or none: each its own lidar_bridge, port '
          'and sender process' % ', '.join(LIDARS), check=lidar_list, metavar='LIST'),
    Param('rpm', 600.0, 'LiDAR rotation [rpm] (900: a VLP-16 at 15 Hz)', above=0.0),
    Param('lidar_burst', False, "LiDARs sent MORAI's way: each revolution at once, its packets back to back, "
          'rpm / 60 times a second (MORAI 25.S4); without it paced packet by packet, like a real sensor',
          switch=True),
    Param('cameras', 1, 'cameras, each its own UDP port and camera_bridge process (namespaces /camera1 ...)',
          minimum=0, maximum=16),
    Param('camera_hz', 30.0, 'camera frame rate [Hz]', above=0.0),
    Param('width', 1280, 'camera width [px]', minimum=1),
    Param('height', 720, 'camera height [px]', minimum=1),
    Param('rate', 120, "rate of the udp_bridge's ground-truth streams (ego status, objects, traffic lights, "
          'collisions, intersection, NPC collisions, sim status), and of GPS and IMU unless given [Hz]', minimum=1),
    Param('gps_hz', None, 'GPS (NMEA) rate into the udp_bridge [Hz]; default: --rate', kind=float, above=0.0),
    Param('imu_hz', None, 'IMU rate into the udp_bridge [Hz]; default: --rate', kind=float, above=0.0),
    Param('state_queue_size', 1, "udp_bridge's ~state_queue_size (1: its default; 100: as docs/day_one.md "
          'records with)', minimum=1),
    Param('json', '', 'also write the results here (JSON)', metavar='FILE'),
]


# ---------------------------------------------------------------------------- udp subscriber process

def udp_collector(conn, ns):
    """Child process: bench_e2e.Collector on the udp_bridge's topics, on command."""
    cmd = conn.recv()
    if cmd[0] != 'start':
        return
    import rospy
    rospy.init_node('bench_combined_udp', disable_signals=True)
    col = bench_e2e.Collector(ns)
    try:
        col.wait_connected(30.0)
        conn.send(('ready',))
    except RuntimeError as e:
        conn.send(('error', str(e)))
        return
    while True:
        cmd = conn.recv()
        if cmd[0] == 'window':
            col.window = (cmd[1], cmd[2])
        elif cmd[0] == 'finish':
            conn.send({'count': dict(col.count), 'lat': {k: v for k, v in col.lat.items()}})
            col.close()
            return


# ---------------------------------------------------------------------------- helpers

class Diag:
    """Every /diagnostics entry, by status name (the nodes put their port in it)."""

    def __init__(self):
        import rospy
        from diagnostic_msgs.msg import DiagnosticArray
        self.lock = threading.Lock()
        self.values = {}
        self.sub = rospy.Subscriber('/diagnostics', DiagnosticArray, self.cb, queue_size=50)

    def cb(self, m):
        with self.lock:
            for s in m.status:
                self.values[s.name] = {kv.key: kv.value for kv in s.values}

    def entry(self, word, port):
        tag = '(port %d)' % port
        with self.lock:
            for name, v in self.values.items():
                if word in name and tag in name:
                    return dict(v)
        return {}


def triple(text):
    """'p50 / p99 / max' -> three floats (nan when absent)."""
    try:
        return [float(v) for v in text.split(' / ')]
    except (AttributeError, ValueError):
        return [float('nan')] * 3


def to_int(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def stop_group(p, timeout=20.0):
    """SIGINT to a process group this benchmark started (roslaunch), then SIGKILL if needed."""
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGINT)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def machine_busy_seconds():
    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, 'iowait', 0.0)


def proc_seconds(procs):
    out = {}
    for key, p in procs.items():
        try:
            c = p.cpu_times()
            out[key] = c.user + c.system
        except psutil.Error:
            out[key] = None
    return out


def our_processes():
    """pid -> psutil.Process of this process and everything below it (nodes, senders, roscore)."""
    me = psutil.Process()
    found = {me.pid: me}
    for c in me.children(recursive=True):
        found[c.pid] = c
    return found


def describe(p, known):
    """A short label of one of this benchmark's processes (taken while it runs)."""
    if p.pid in known:
        return known[p.pid]
    try:
        cmd = p.cmdline()
    except psutil.Error:
        return '?'
    words = [os.path.basename(w) for w in cmd[:3] if not w.startswith('-')]
    if words and words[0].startswith('python'):
        words = words[1:]
    return ' '.join(words[:1]) or '?'


def rmem_max():
    with open('/proc/sys/net/core/rmem_max') as f:
        return int(f.read())


def may_force_buffers():
    """True when this process has CAP_NET_ADMIN, so the nodes it starts may use SO_RCVBUFFORCE and get
    their ~socket_buffer whatever net.core.rmem_max says (root does, unless dropped with setpriv)."""
    with open('/proc/self/status') as f:
        caps = dict(line.split(':', 1) for line in f if line.startswith('Cap'))
    return bool(int(caps['CapEff'], 16) >> CAP_NET_ADMIN & 1)


SS_SOCKET = re.compile(r'^\S+\s+\d+\s+\d+\s+127\.0\.0\.1:(\d+)\s.*\n\s*skmem:\(([^)]*)\)', re.M)


def udp_sockets(ports):
    """port -> {'buffer': the socket's receive buffer as the kernel accounts it (sk_rcvbuf: twice what
    SO_RCVBUF was granted), 'drops': datagrams the kernel dropped at it} of the UDP sockets bound to
    those ports on 127.0.0.1 (``ss -uanm``; the senders' sockets are on other ports)."""
    out = {}
    text = subprocess.run(['ss', '-uanm'], stdout=subprocess.PIPE, universal_newlines=True).stdout
    for m in SS_SOCKET.finditer(text):
        port = int(m.group(1))
        if port in ports:
            mem = dict(re.findall(r'([a-z]+)(\d+)', m.group(2)))
            out[port] = {'buffer': int(mem.get('rb', 0)), 'drops': int(mem.get('d', 0))}
    return out


def sched_ns(pid):
    """tid -> (ns run on a core, ns runnable but waiting for one) of every thread of ``pid`` so far
    (/proc/PID/task/TID/schedstat; {} when the kernel does not keep it)."""
    out = {}
    for tid in os.listdir('/proc/%d/task' % pid):
        try:
            with open('/proc/%d/task/%s/schedstat' % (pid, tid)) as f:
                run, wait = f.read().split()[:2]
        except (OSError, ValueError):
            continue
        out[tid] = (int(run), int(wait))
    return out


def pct_ms(values):
    """p50 / p99 / max of ms values (nan when none)."""
    return {'p50': bs.pct(values, 50), 'p99': bs.pct(values, 99), 'max': max(values) if values else float('nan'),
            'n': len(values)}


# ---------------------------------------------------------------------------- main

def main():
    a = parse_args(OPTIONS, description=__doc__.split('\n')[0], epilog=COMPETITION_RIG)
    if a.quick:
        a.seconds, a.warmup = 5.0, 2.0
    UDP_NS = udp_ns(a.rate)
    stream_hz = {n: float(a.rate) for n in GROUND_TRUTH}
    stream_hz.update(gps=a.gps_hz or float(a.rate), imu=a.imu_hz or float(a.rate))

    log_dir = HERE / 'out' / ('combined-logs-' + time.strftime('%Y%m%d-%H%M%S'))
    log_dir.mkdir(parents=True, exist_ok=True)
    os.environ['ROS_LOG_DIR'] = str(log_dir / 'ros')
    lidar_ports = {ns: bs.free_port() for ns in a.lidars}
    camera_ports = [bs.free_port() for _ in range(a.cameras)]
    cam_names = ['camera%d' % (i + 1) for i in range(a.cameras)]
    udp_ports = {n: bench_e2e.free_udp_port() for n in e2e_streams.NAMES}
    jpeg = bs.scene_jpeg(a.width, a.height) if a.cameras else b''

    started, senders, children = [], {}, []
    master = sut = None
    sink = None
    stop_drain = threading.Event()
    devnull = open(os.devnull, 'w')
    results = {'seconds': a.seconds, 'warmup': a.warmup, 'rpm': a.rpm, 'lidar_burst': a.lidar_burst,
               'cameras': a.cameras, 'camera_hz': a.camera_hz, 'udp_rate': a.rate, 'stream_hz': stream_hz,
               'state_queue_size': a.state_queue_size, 'rmem_max': rmem_max(),
               'may_force_buffers': may_force_buffers(), 'cores': psutil.cpu_count(),
               'loadavg_before': os.getloadavg()}
    try:
        master = Master(str(log_dir))          # sets ROS_MASTER_URI for this process and its children
        # every forked child before any thread or rospy in this process
        plays = [(ns, lidar_ports[ns], 0) for ns in a.lidars]
        if a.cameras:
            plays.append(('cameras', 0, camera_ports))
        for key, lidar_port, camera_port in plays:
            parent, child = multiprocessing.Pipe()
            p = multiprocessing.Process(target=bs.sender, args=(child, lidar_port, camera_port), daemon=True,
                                        name='sender_' + key)
            p.start()
            senders[key] = (parent, p)
        col_parent, col_child = multiprocessing.Pipe()
        col_proc = multiprocessing.Process(target=udp_collector, args=(col_child, UDP_NS), daemon=True,
                                           name='udp_collector')
        col_proc.start()
        children.append(col_proc)

        sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)   # where the udp_bridge's commands would go
        sink.bind(('127.0.0.1', 0))
        sink.settimeout(0.2)

        def drain():
            while not stop_drain.is_set():
                try:
                    sink.recv(65535)
                except OSError:
                    pass
        threading.Thread(target=drain, daemon=True).start()

        env = dict(os.environ)

        def launch(args):
            started.append(subprocess.Popen(['roslaunch', 'morai_msgs'] + args + ['output:=log'], env=env,
                                            stdout=devnull, stderr=subprocess.STDOUT, start_new_session=True))
        for ns in a.lidars:
            launch(['lidar_bridge.launch', 'ns:=/' + ns, 'port:=%d' % lidar_ports[ns], 'model:=' + LIDARS[ns][0],
                    'frame_id:=velodyne_' + ns])
        for name, port in zip(cam_names, camera_ports):
            launch(['camera_bridge.launch', 'ns:=/' + name, 'port:=%d' % port, 'frame_id:=' + name,
                    'optical_frame_id:=%s_optical' % name])
        sut = bench_e2e.Sut('bridge', a.rate, udp_ports, sink.getsockname()[1], str(log_dir),
                            extra=['state_queue_size:=%d' % a.state_queue_size])
        assert sut.ns == UDP_NS, sut.ns
        pids = {'udp_bridge': sut.pid}
        for ns in a.lidars:
            pids['lidar_bridge ' + ns] = bs.node_pid(f'/{ns}/lidar_bridge')
        for name in cam_names:
            pids['camera_bridge ' + name] = bs.node_pid(f'/{name}/camera_bridge')

        import rospy
        from sensor_msgs.msg import CameraInfo, CompressedImage, PointCloud2
        rospy.init_node('bench_combined', disable_signals=True)
        arrivals = {ns: bs.Arrivals(f'/{ns}/velodyne_points', PointCloud2) for ns in a.lidars}
        arrivals.update((name, bs.Arrivals(f'/{name}/image_jpeg/compressed', CompressedImage)) for name in cam_names)
        infos = [bs.Arrivals(f'/{name}/image_jpeg/camera_info', CameraInfo) for name in cam_names]
        diag = bench_e2e.DiagWatch()
        ndiag = Diag()
        col_parent.send(('start',))
        end = time.monotonic() + 30.0
        subs = [x.sub for x in arrivals.values()] + [x.sub for x in infos]
        while not all(s.get_num_connections() >= 1 for s in subs):
            if time.monotonic() > end:
                raise RuntimeError('sensor topics not connected: %s'
                                   % [s.name for s in subs if s.get_num_connections() < 1])
            time.sleep(0.05)
        reply = col_parent.recv()
        if reply[0] != 'ready':
            raise RuntimeError(f'udp collector: {reply[1:]}')
        time.sleep(1.0)                       # let the nodes settle after start-up

        # -- one timeline for everything
        t0_wall, t0_mono = time.time() + 1.0, time.monotonic() + 1.0
        ws, we = t0_mono + a.warmup, t0_mono + a.warmup + a.seconds
        col_parent.send(('window', t0_wall + a.warmup, t0_wall + a.warmup + a.seconds))
        e2e = subprocess.Popen([bench_e2e.PY, str(HERE / 'e2e_sender.py'), '--ports', json.dumps(udp_ports),
                                '--rate', str(a.rate), '--stream-rates', json.dumps(stream_hz),
                                '--t0', repr(t0_wall), '--seconds', str(a.warmup + a.seconds + 0.5)],
                               stdout=subprocess.PIPE, cwd=str(HERE))
        time.sleep(max(0.0, t0_mono - time.monotonic()))
        total = a.warmup + a.seconds
        for ns in a.lidars:
            senders[ns][0].send(('lidar_burst' if a.lidar_burst else 'lidar', LIDARS[ns][0], a.rpm, total))
        if a.cameras:
            senders['cameras'][0].send(('camera', jpeg, a.camera_hz, total))

        time.sleep(max(0.0, ws - time.monotonic()))
        procs = our_processes()
        known = {pid: k for k, pid in pids.items()}
        known.update((p.pid, 'sender ' + k) for k, (_, p) in senders.items())
        known.update({os.getpid(): 'sensor subscribers (this process)', col_proc.pid: 'udp_bridge subscriber',
                      e2e.pid: 'e2e_sender', master.proc.pid: 'roscore'})
        labels = {pid: describe(p, known) for pid, p in procs.items()}
        node_procs = {k: procs.get(pid) or psutil.Process(pid) for k, pid in pids.items()}
        c0 = proc_seconds(procs)
        n0 = proc_seconds(node_procs)
        q0 = {k: sched_ns(pid) for k, pid in pids.items()}
        busy0, m0 = machine_busy_seconds(), time.monotonic()
        time.sleep(max(0.0, we - time.monotonic()))
        c1 = proc_seconds(procs)
        n1 = proc_seconds(node_procs)
        q1 = {k: sched_ns(pid) for k, pid in pids.items()}
        busy1, m1 = machine_busy_seconds(), time.monotonic()
        wall = m1 - m0
        results['loadavg_after'] = os.getloadavg()

        sent = {k: senders[k][0].recv() for k in senders}
        udp_sent = json.loads(e2e.communicate(timeout=60)[0])
        time.sleep(1.5)                       # clouds and images in flight

        def packets_sent(ns):
            revs, per_rev, _ = sent[ns]
            return len(revs) * per_rev + (0 if a.lidar_burst else 1)   # paced: one more closes the last
        chunks_sent = len(sent['cameras'][0]) * sent['cameras'][1] if a.cameras else 0

        def caught_up():
            """The nodes' counters (once a second on /diagnostics) have seen everything sent."""
            udp = diag.streams(UDP_NS)
            return (all(to_int(ndiag.entry('LiDAR', lidar_ports[ns]).get('packets')) == packets_sent(ns)
                        for ns in a.lidars)
                    and all(to_int(ndiag.entry('Camera', port).get('datagrams received')) == chunks_sent
                            for port in camera_ports)
                    and all(udp.get(n, {}).get('received', -1) >= udp_sent['sent'][n] for n in e2e_streams.NAMES))
        end = time.monotonic() + 4.0
        while time.monotonic() < end and not caught_up():
            time.sleep(0.2)
        sockets = udp_sockets(set(lidar_ports.values()) | set(camera_ports) | set(udp_ports.values()))
        col_parent.send(('finish',))
        udp_rx = col_parent.recv()

        # -- CPU
        cpu = {k: 100.0 * (n1[k] - n0[k]) / wall for k in pids if n0[k] is not None and n1[k] is not None}
        ours = {pid: 100.0 * (c1[pid] - c0[pid]) / wall for pid in c0
                if c0[pid] is not None and c1.get(pid) is not None}
        machine_pct = 100.0 * (busy1 - busy0) / wall
        ours_total = sum(ours.values())
        results['bridges_cpu'] = cpu
        results['bridges_cpu_percent'] = sum(cpu.values())
        results['bridges_waiting_percent'] = {k: 100.0 * sum(w - q0[k].get(tid, (0, 0))[1] for tid, (_, w) in
                                                             q1[k].items()) / 1e9 / wall for k in pids}
        results['machine'] = {
            'window_s': wall, 'busy_percent_of_one_core': machine_pct,
            'busy_percent_of_all_cores': machine_pct / psutil.cpu_count(),
            'this_benchmark_percent_of_one_core': ours_total,
            'other_processes_percent_of_one_core': machine_pct - ours_total,
            'by_process': sorted(((labels[pid], round(v, 1)) for pid, v in ours.items() if v >= 0.5),
                                 key=lambda x: -x[1])}

        # -- LiDARs
        results['lidars'] = {}
        for ns in a.lidars:
            model, label = LIDARS[ns]
            revs, per_rev, pkt_rate = sent[ns]
            arr = arrivals[ns]
            lat, lost, widths = [], 0, []
            in_window = [(f, t) for f, t in revs if ws <= t < we]
            with arr.lock:
                for first_us, t_last in in_window:
                    key = (first_us // 1000000, (first_us % 1000000) * 1000)
                    t = arr.by_stamp.get(key)
                    if t is None:
                        lost += 1
                    else:
                        lat.append((t - t_last) * 1e3)
                        widths.append(arr.width[key])
            d = ndiag.entry('LiDAR', lidar_ports[ns])
            node_lat = triple(d.get(NODE_LAT_KEY))
            read, published = to_int(d.get('packets')), to_int(d.get('clouds published'))
            sock = sockets.get(lidar_ports[ns], {})
            results['lidars'][ns] = {
                'model': model, 'label': label, 'port': lidar_ports[ns], 'cpu_percent': cpu.get('lidar_bridge ' + ns),
                'sent_as': 'bursts' if a.lidar_burst else 'paced',
                'packets_per_revolution': per_rev, 'packet_rate': pkt_rate,
                'revolutions_sent_in_window': len(in_window), 'clouds_matched': len(lat), 'revolutions_lost': lost,
                'packets_sent_total': packets_sent(ns), 'packets_read_by_node': read,
                'revolutions_sent_total': len(revs), 'clouds_published_by_node': published,
                # the first revolution's start is not seen (paced) or not judged (bursts): incomplete by design
                'packets_lost_at_node': None if read is None else packets_sent(ns) - read,
                'revolutions_lost_in_node': None if published is None else len(revs) - 1 - published,
                'socket_drops': sock.get('drops'), 'socket_buffer': sock.get('buffer'),
                'receive_buffer_diag': d.get('receive buffer [bytes]'),
                'partial_revolutions_dropped': to_int(d.get('partial revolutions dropped')),
                'bad_datagrams': to_int(d.get('bad datagrams')),
                'points_per_cloud': [min(widths), max(widths)] if widths else None,
                'sub_latency_ms': pct_ms(lat),
                'node_latency_ms': {'p50': node_lat[0], 'p99': node_lat[1], 'max': node_lat[2]},
                'node_publish_ms': d.get(NODE_PUB_KEY),
                'sender_bursty': d.get('sender bursty (whole revolutions at once)'),
                'decoded_piece_by_piece': d.get('revolutions decoded piece by piece'),
                'decoded_at_once': d.get('revolutions decoded at once')}

        # -- cameras
        results['camera_list'] = []
        if a.cameras:
            frames, chunks, frame_rate = sent['cameras']
        for i, (name, port) in enumerate(zip(cam_names, camera_ports)):
            arr = arrivals[name]
            in_window = [(s, times[i]) for s, times in frames if ws <= times[i] < we]
            with arr.lock:
                lat = [(arr.by_stamp[s] - t) * 1e3 for s, t in in_window if s in arr.by_stamp]
            d = ndiag.entry('Camera', port)
            node_pub = triple(d.get(CAM_PUB_KEY))
            read, published = to_int(d.get('datagrams received')), to_int(d.get('frames published'))
            sock = sockets.get(port, {})
            results['camera_list'].append({
                'name': name, 'port': port, 'width': a.width, 'height': a.height, 'jpeg_bytes': len(jpeg),
                'chunks_per_frame': chunks, 'frame_rate': frame_rate,
                'cpu_percent': cpu.get('camera_bridge ' + name),
                'frames_sent_in_window': len(in_window), 'images_matched': len(lat),
                'frames_lost': len(in_window) - len(lat), 'frames_sent_total': len(frames),
                'datagrams_sent_total': chunks_sent, 'datagrams_read_by_node': read,
                'datagrams_lost_at_node': None if read is None else chunks_sent - read,
                'frames_published_by_node': published,
                'frames_lost_in_node': None if published is None else len(frames) - published,
                'frames_dropped_by_node': to_int(d.get('frames dropped')),
                'socket_drops': sock.get('drops'), 'socket_buffer': sock.get('buffer'),
                'receive_buffer_diag': d.get('receive buffer [bytes]'),
                'sub_latency_ms': pct_ms(lat),
                'node_publish_ms': {'p50': node_pub[0], 'p99': node_pub[1], 'max': node_pub[2]}})

        # -- udp_bridge
        counters = diag.streams(UDP_NS)
        streams, lost_total = {}, 0
        for name in e2e_streams.NAMES:
            n_sent = udp_sent['sent'][name]
            c = counters.get(name, {})
            sock = sockets.get(udp_ports[name], {})
            topics = {}
            for topic in e2e_streams.TOPICS[name]:
                n_rx = udp_rx['count'].get(topic, 0)
                lost_total += n_sent - n_rx
                lat = sorted(1e3 * v for v in udp_rx['lat'].get(topic, []))
                topics[topic] = {'received': n_rx, 'lost': n_sent - n_rx,
                                 'latency_ms': pct_ms(lat) if lat else None}
            streams[name] = {
                'hz': stream_hz[name], 'sent': n_sent, 'received_by_node': c.get('received'),
                'published_by_node': c.get('published'), 'decode_errors': c.get('decode_errors'),
                'lost_at_node': None if not c else (n_sent - c['received']) + (c['received'] - c['published']),
                'socket_drops': sock.get('drops'), 'socket_buffer': sock.get('buffer'), 'topics': topics}
        results['udp_bridge'] = {
            'rate': a.rate, 'cpu_percent': cpu.get('udp_bridge'), 'messages_lost': lost_total,
            'messages_sent': sum(s['sent'] * len(s['topics']) for s in streams.values()),
            'sender': udp_sent, 'streams': streams}
    finally:
        for key, (conn, p) in senders.items():
            try:
                conn.send(('quit',))
            except OSError:
                pass
            p.join(5.0)
            if p.is_alive():
                p.terminate()
                p.join(2.0)
        for p in children:
            p.join(2.0)
            if p.is_alive():
                p.terminate()
                p.join(2.0)
        for p in reversed(started):
            stop_group(p)
        if sut is not None:
            sut.stop()
        stop_drain.set()
        if sink is not None:
            sink.close()
        if master is not None:
            master.stop()
        devnull.close()

    report(results, a)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(results, f, indent=1, default=str)
    return 0


# ---------------------------------------------------------------------------- report

def verdict(ok):
    return 'PASS' if ok else 'MISS'


def ms3(x):
    return '%.2f / %.2f / %.2f' % (x['p50'], x['p99'], x['max'])


def num(v):
    return '?' if v is None else str(v)


def report(r, a):
    mach, udp = r['machine'], r['udp_bridge']
    lidars, cams = r['lidars'], r['camera_list']
    print('%g s measured after %g s warm-up, all at once; %d cores, load average %.2f before, %.2f after'
          % (a.seconds, a.warmup, r['cores'], r['loadavg_before'][0], r['loadavg_after'][0]))
    print('net.core.rmem_max %d; the nodes %s force a larger receive buffer (CAP_NET_ADMIN)'
          % (r['rmem_max'], 'may' if r['may_force_buffers'] else 'may not'))
    for x in lidars.values():
        print('%s at %.0f rpm, %s: %d packets/revolution, %.0f packets/s; whole run: %d packets sent, %s read by the '
              'node, %s bad, %d revolutions sent, %s clouds published, %s partial dropped; receive buffer %s '
              '(socket: %s), kernel drops %s; sender judged bursty: %s; decoded piece by piece %s, at once %s'
              % (x['label'], a.rpm, x['sent_as'], x['packets_per_revolution'], x['packet_rate'],
                 x['packets_sent_total'], num(x['packets_read_by_node']), num(x['bad_datagrams']),
                 x['revolutions_sent_total'], num(x['clouds_published_by_node']),
                 num(x['partial_revolutions_dropped']), x['receive_buffer_diag'], num(x['socket_buffer']),
                 num(x['socket_drops']), x['sender_bursty'], x['decoded_piece_by_piece'], x['decoded_at_once']))
        print(f"  node publish time, closing packet read -> published (p50 / p99 / max): {x['node_publish_ms']} ms")
    for x in cams:
        print('%s %dx%d, JPEG of %d bytes in %d chunks at %.1f Hz; whole run: %d frames (%d datagrams) sent, %s '
              'datagrams read and %s frames published by the node, %s dropped by it; receive buffer %s (socket: %s), '
              'kernel drops %s' % (x['name'], x['width'], x['height'], x['jpeg_bytes'], x['chunks_per_frame'],
                                   x['frame_rate'], x['frames_sent_total'], x['datagrams_sent_total'],
                                   num(x['datagrams_read_by_node']), num(x['frames_published_by_node']),
                                   num(x['frames_dropped_by_node']), x['receive_buffer_diag'], num(x['socket_buffer']),
                                   num(x['socket_drops'])))
    print('udp_bridge: %s; %d datagrams sent (late p99 %.2f ms), %d received and %d published by the node, kernel '
          'drops %d, receive buffers (socket) %s'
          % (', '.join('%s %g Hz' % (n, s['hz']) for n, s in udp['streams'].items()),
             sum(s['sent'] for s in udp['streams'].values()), udp['sender']['late_ms']['p99'],
             sum(s['received_by_node'] or 0 for s in udp['streams'].values()),
             sum(s['published_by_node'] or 0 for s in udp['streams'].values()),
             sum(s['socket_drops'] or 0 for s in udp['streams'].values()),
             '/'.join(sorted({num(s['socket_buffer']) for s in udp['streams'].values()}))))
    print()

    # -- per stream
    print('| stream | rate | sent | lost at the node | lost at the subscriber | latency in the node p50 / p99 / max '
          '[ms] | at the subscriber p50 / p99 / max [ms] |')
    print('|---|---|---|---|---|---|---|')
    for x in lidars.values():
        print('| %s %s | %.0f Hz | %d revolutions in the window (%d packets in the run) | %s packets, %s revolutions '
              '| %d | %s | %s |' % (x['label'], x['sent_as'], a.rpm / 60.0, x['revolutions_sent_in_window'],
                                    x['packets_sent_total'], num(x['packets_lost_at_node']),
                                    num(x['revolutions_lost_in_node']), x['revolutions_lost'],
                                    ms3(x['node_latency_ms']), ms3(x['sub_latency_ms'])))
    for x in cams:
        print('| %s %dx%d | %g Hz | %d frames in the window (%d datagrams in the run) | %s datagrams, %s frames | %d '
              '| %s | %s |' % (x['name'], x['width'], x['height'], a.camera_hz, x['frames_sent_in_window'],
                               x['datagrams_sent_total'], num(x['datagrams_lost_at_node']),
                               num(x['frames_lost_in_node']), x['frames_lost'], ms3(x['node_publish_ms']),
                               ms3(x['sub_latency_ms'])))
    for name, s in udp['streams'].items():
        for topic, t in s['topics'].items():
            lat = ms3(t['latency_ms']) if t['latency_ms'] else '-'
            print('| udp_bridge %s | %g Hz | %d datagrams | %s | %d | %s | %s |' % (
                topic, s['hz'], s['sent'], num(s['lost_at_node']), t['lost'],
                '(not timed)' if t['latency_ms'] else '-', lat))
    print()

    # -- CPU
    print('CPU over the window, %% of one core: %s; the bridges together %.1f'
          % (', '.join('%s %.1f' % (k, v) for k, v in sorted(r['bridges_cpu'].items())), r['bridges_cpu_percent']))
    print('the bridges\' threads runnable but waiting for a core (run queue, /proc schedstat), %% of the window: %s'
          % ', '.join('%s %.1f' % (k, v) for k, v in sorted(r['bridges_waiting_percent'].items())))
    print('machine: %.0f %% of one core busy (of %d %%), this benchmark\'s processes %.0f %%, others %.0f %%'
          % (mach['busy_percent_of_one_core'], 100 * r['cores'], mach['this_benchmark_percent_of_one_core'],
             mach['other_processes_percent_of_one_core']))
    print('  by process (%% of one core): %s' % ', '.join('%s %.1f' % p for p in mach['by_process']))
    print()

    # -- targets
    rows = []
    lost_node = ([x['packets_lost_at_node'] for x in lidars.values()] + [x['revolutions_lost_in_node'] for x in
                                                                            lidars.values()]
                 + [x['datagrams_lost_at_node'] for x in cams] + [x['frames_lost_in_node'] for x in cams]
                 + [s['lost_at_node'] for s in udp['streams'].values()])
    lost_sub = [x['revolutions_lost'] for x in lidars.values()] + [x['frames_lost'] for x in cams] + \
        [udp['messages_lost']]
    rows.append(('every stream', 'lost at the nodes', str(sum(v or 0 for v in lost_node)) +
                 (' (a counter missing)' if None in lost_node else ''), '0',
                 verdict(None not in lost_node and sum(lost_node) == 0)))
    rows.append(('', 'lost at the subscribers', str(sum(lost_sub)), '0', verdict(sum(lost_sub) == 0)))
    rows.append(('all bridges', 'CPU together, % of one core', '%.1f' % r['bridges_cpu_percent'],
                 '<= %.0f' % TARGET_BRIDGES_CPU, verdict(r['bridges_cpu_percent'] <= TARGET_BRIDGES_CPU)))
    for x in lidars.values():
        nl = x['node_latency_ms']
        rows.append(('lidar_bridge ' + x['label'], 'latency in the node p99 [ms]', '%.2f' % nl['p99'],
                     '<= %.0f' % TARGET_LIDAR_P99_MS, verdict(nl['p99'] <= TARGET_LIDAR_P99_MS)))
        rows.append(('', 'latency at the subscriber p99 [ms]', '%.2f' % x['sub_latency_ms']['p99'],
                     '<= %.0f' % TARGET_LIDAR_P99_MS, verdict(x['sub_latency_ms']['p99'] <= TARGET_LIDAR_P99_MS)))
        if x['model'] == 'HDL32E':
            rows.append(('', 'CPU, % of one core', '%.1f' % x['cpu_percent'], '<= %.0f' % TARGET_LIDAR_CPU,
                         verdict(x['cpu_percent'] <= TARGET_LIDAR_CPU)))
    for x in cams:
        rows.append(('camera_bridge ' + x['name'], 'CPU, % of one core', '%.1f' % x['cpu_percent'],
                     '<= %.0f' % TARGET_CAMERA_CPU, verdict(x['cpu_percent'] <= TARGET_CAMERA_CPU)))
    if a.rate == TARGET_UDP_CPU_RATE and all(s['hz'] == a.rate for s in udp['streams'].values()):
        rows.append(('udp_bridge %d Hz' % a.rate, 'CPU, % of one core', '%.1f' % udp['cpu_percent'],
                     '<= %.0f (alone)' % TARGET_UDP_CPU, verdict(udp['cpu_percent'] <= TARGET_UDP_CPU)))
    print('| node | figure | value | target | |')
    print('|---|---|---|---|---|')
    for row in rows:
        print(f"| {' | '.join(row)} |")


if __name__ == '__main__':
    sys.exit(main())
