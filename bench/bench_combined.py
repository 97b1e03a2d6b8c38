#!/usr/bin/python3
"""Sensors and ground truth in one run: two LiDARs, a camera and the udp_bridge (120 Hz by default), together.

    bash tools/dev.sh build && source <(bash tools/dev.sh env)
    flock /tmp/morai_heavy.lock /usr/bin/python3 bench/bench_combined.py [--seconds 20] [--warmup 3]
        [--quick] [--camera-hz 30] [--width 1280] [--height 720] [--rate 120] [--state-queue-size 1]
        [--json out.json]

A benchmark, not a timed test.  bench/bench_sensors.py measures each sensor node alone and
bench/bench_e2e.py the udp_bridge alone; here they all run at the same time on the same cores:

* ``lidar_bridge`` in namespace /hdl32e: an HDL-32E at 600 rpm (181 packets per revolution, about
  1,808 packets/s), played packet by packet by its own sender process;
* ``lidar_bridge`` in namespace /vlp16: a VLP-16 at 600 rpm (76 packets, about 754 packets/s), its
  own sender process and port;
* ``camera_bridge``: a ``--width`` x ``--height`` JPEG of a road scene at ``--camera-hz``, each
  frame's chunks in one burst, from a third sender process;
* ``udp_bridge`` in namespace /bench_bridge_<rate>, fed by bench/e2e_sender.py on all nine sim -> user
  streams at ``--rate`` (as bench/bench_e2e.py runs it), its topics counted in a separate
  subscriber process (so that ~1,300 small messages/s do not share this process's interpreter lock
  with the cloud subscribers).

The sender processes of bench/bench_sensors.py are reused unchanged (one per sensor stream): the
device time in each LiDAR packet is the sender's wall clock, so a cloud's stamp names its
revolution, and the camera frames carry the send time as their stamp.  All senders start together;
after ``--warmup`` seconds the measured window of ``--seconds`` begins.

Per sensor node, over the measured window:

* lost: revolutions (frames) whose last packet (chunk) was sent in the window and for which no
  cloud (image) with that stamp reached this process's subscriber; the node's own counters (packets
  read, partial revolutions dropped, frames dropped) are shown next to it, to tell the kernel's
  socket from the node;
* CPU: psutil user + system time of the node's process over the window, % of one core;
* latency, two figures: (1) in the node, from its /diagnostics: the last packet of a revolution read
  -> the cloud's publish() returned (the node's last 512 revolutions: the whole run for a LiDAR at
  10 Hz); (2) here: the moment the sender sent the revolution's last packet -> the cloud arrived and
  was deserialised in this process (CLOCK_MONOTONIC, shared by the processes; includes one packet
  period, the wait for the packet that shows the revolution is over).  For the camera the same pair
  for the frame's last chunk.

udp_bridge: CPU over the same window, messages lost (sent by e2e_sender - received by the
subscriber, whole run), its own received counters, and the latency of the stamped topics.
Machine: CPU time of every process of the machine over the window, split into this benchmark's
processes (nodes, senders, subscribers, roscore) and the rest, and the load average.

Targets (not weakened from bench_sensors.py / bench/run.py): 0 revolutions / frames / messages
lost, HDL-32E lidar_bridge <= 25 % of a core, camera_bridge <= 10 %, LiDAR latency p99 <= 5 ms (the
node's figure is what bench_sensors.py judges; the subscriber-side figure is judged too and
printed), udp_bridge <= 15 % at 120 Hz (bench/run.py's target, defined for the bridge alone).
Private ROS master on a free port, every UDP port free on 127.0.0.1; stops only what it started.
"""
import json
import multiprocessing
import os
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
TARGET_CAMERA_CPU = bs.TARGET_CAMERA_CPU        # % of one core
TARGET_LIDAR_P99_MS = bs.TARGET_LIDAR_P99_MS    # last packet -> cloud, ms
TARGET_UDP_CPU = 15.0                           # udp_bridge at 120 Hz (bench/run.py TARGET_CPU)
NODE_LAT_KEY = 'latency, last packet of a revolution read -> cloud published, p50 / p99 / max [ms]'
NODE_PUB_KEY = 'publish time, closing packet read -> cloud published, p50 / p99 / max [ms]'
CAM_PUB_KEY = 'publish time p50 / p99 / max [ms]'
LIDARS = [('hdl32e', 'HDL32E', 'HDL-32E'), ('vlp16', 'VLP16', 'VLP-16')]   # namespace, ~model, label


def udp_ns(rate):
    """The udp_bridge's namespace for a run at ``rate`` Hz (bench_e2e.Sut names it so)."""
    return '/bench_bridge_%d' % rate


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


# ---------------------------------------------------------------------------- main

def main():
    a = parse_args([
        Param('seconds', 20.0, 'measured time [s]', above=0.0),
        Param('warmup', 3.0, 'warm-up before measuring [s]', minimum=0.0),
        Param('quick', False, '5 s measured after 2 s warm-up (smoke test)', switch=True),
        Param('rpm', 600.0, 'LiDAR rotation [rpm]', above=0.0),
        Param('camera_hz', 30.0, 'camera frame rate [Hz]', above=0.0),
        Param('width', 1280, 'camera width [px]', minimum=1),
        Param('height', 720, 'camera height [px]', minimum=1),
        Param('rate', 120, 'rate of every udp_bridge stream [Hz]', minimum=1),
        Param('state_queue_size', 1, "udp_bridge's ~state_queue_size (1: its default; 100: as docs/day_one.md "
              "records with)", minimum=1),
        Param('json', '', 'also write the results here (JSON)', metavar='FILE'),
    ], description=__doc__.split('\n')[0])
    UDP_NS = udp_ns(a.rate)
    if a.quick:
        a.seconds, a.warmup = 5.0, 2.0

    log_dir = HERE / 'out' / ('combined-logs-' + time.strftime('%Y%m%d-%H%M%S'))
    log_dir.mkdir(parents=True, exist_ok=True)
    os.environ['ROS_LOG_DIR'] = str(log_dir / 'ros')
    ports = {'hdl32e': bs.free_port(), 'vlp16': bs.free_port(), 'camera': bs.free_port()}
    udp_ports = {n: bench_e2e.free_udp_port() for n in e2e_streams.NAMES}
    jpeg = bs.scene_jpeg(a.width, a.height)

    started, senders, children = [], {}, []
    master = sut = None
    sink = None
    stop_drain = threading.Event()
    devnull = open(os.devnull, 'w')
    results = {'seconds': a.seconds, 'warmup': a.warmup, 'rpm': a.rpm, 'udp_rate': a.rate,
               'state_queue_size': a.state_queue_size,
               'cores': psutil.cpu_count(), 'loadavg_before': os.getloadavg()}
    try:
        master = Master(str(log_dir))          # sets ROS_MASTER_URI for this process and its children
        # every forked child before any thread or rospy in this process
        for key, lidar_port, camera_port in (('hdl32e', ports['hdl32e'], 0), ('vlp16', ports['vlp16'], 0),
                                             ('camera', 0, ports['camera'])):
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
        for ns, model, _ in LIDARS:
            cmd = ['roslaunch', 'morai_msgs', 'lidar_bridge.launch', 'ns:=/' + ns, 'port:=%d' % ports[ns],
                   f'model:={model}', 'frame_id:=velodyne_' + ns, 'output:=log']
            started.append(subprocess.Popen(cmd, env=env, stdout=devnull, stderr=subprocess.STDOUT,
                                            start_new_session=True))
        started.append(subprocess.Popen(['roslaunch', 'morai_msgs', 'camera_bridge.launch',
                                         'port:=%d' % ports['camera'], 'output:=log'], env=env, stdout=devnull,
                                        stderr=subprocess.STDOUT, start_new_session=True))
        sut = bench_e2e.Sut('bridge', a.rate, udp_ports, sink.getsockname()[1], str(log_dir),
                            extra=['state_queue_size:=%d' % a.state_queue_size])
        assert sut.ns == UDP_NS, sut.ns
        pids = {'udp_bridge': sut.pid, 'camera_bridge': bs.node_pid('/camera_bridge')}
        for ns, _, _ in LIDARS:
            pids['lidar_bridge ' + ns] = bs.node_pid(f'/{ns}/lidar_bridge')

        import rospy
        from sensor_msgs.msg import CameraInfo, CompressedImage, PointCloud2
        rospy.init_node('bench_combined', disable_signals=True)
        arrivals = {ns: bs.Arrivals(f'/{ns}/velodyne_points', PointCloud2) for ns, _, _ in LIDARS}
        arrivals['camera'] = bs.Arrivals('/image_jpeg/compressed', CompressedImage)
        info = bs.Arrivals('/image_jpeg/camera_info', CameraInfo)
        diag = bench_e2e.DiagWatch()
        ndiag = Diag()
        col_parent.send(('start',))
        end = time.monotonic() + 30.0
        subs = [x.sub for x in arrivals.values()] + [info.sub]
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
                                '--rate', str(a.rate), '--t0', repr(t0_wall),
                                '--seconds', str(a.warmup + a.seconds + 0.5)],
                               stdout=subprocess.PIPE, cwd=str(HERE))
        time.sleep(max(0.0, t0_mono - time.monotonic()))
        total = a.warmup + a.seconds
        senders['hdl32e'][0].send(('lidar', 'HDL32E', a.rpm, total))
        senders['vlp16'][0].send(('lidar', 'VLP16', a.rpm, total))
        senders['camera'][0].send(('camera', jpeg, a.camera_hz, total))

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
        busy0, m0 = machine_busy_seconds(), time.monotonic()
        time.sleep(max(0.0, we - time.monotonic()))
        c1 = proc_seconds(procs)
        n1 = proc_seconds(node_procs)
        busy1, m1 = machine_busy_seconds(), time.monotonic()
        wall = m1 - m0
        results['loadavg_after'] = os.getloadavg()

        sent = {k: senders[k][0].recv() for k in senders}
        udp_sent = json.loads(e2e.communicate(timeout=60)[0])
        time.sleep(1.5)                       # clouds and images in flight
        # the nodes' counters come once a second: wait until they have seen every packet sent
        end = time.monotonic() + 4.0
        while time.monotonic() < end:
            done = all(to_int(ndiag.entry('LiDAR', ports[ns]).get('packets')) ==
                       len(sent[ns][0]) * sent[ns][1] + 1 for ns, _, _ in LIDARS) and \
                to_int(ndiag.entry('Camera', ports['camera']).get('datagrams received')) == \
                len(sent['camera'][0]) * sent['camera'][1]
            if done and diag.streams(UDP_NS).get('ego_status', {}).get('received', -1) >= \
                    udp_sent['sent']['ego_status']:
                break
            time.sleep(0.2)
        col_parent.send(('finish',))
        udp_rx = col_parent.recv()

        # -- CPU
        cpu = {k: 100.0 * (n1[k] - n0[k]) / wall for k in pids if n0[k] is not None and n1[k] is not None}
        ours = {pid: 100.0 * (c1[pid] - c0[pid]) / wall for pid in c0
                    if c0[pid] is not None and c1.get(pid) is not None}
        machine_pct = 100.0 * (busy1 - busy0) / wall
        ours_total = sum(ours.values())
        results['machine'] = {
            'window_s': wall, 'busy_percent_of_one_core': machine_pct,
            'busy_percent_of_all_cores': machine_pct / psutil.cpu_count(),
            'this_benchmark_percent_of_one_core': ours_total,
            'other_processes_percent_of_one_core': machine_pct - ours_total,
            'by_process': sorted(((labels[pid], round(v, 1)) for pid, v in ours.items() if v >= 0.5),
                                 key=lambda x: -x[1])}

        # -- LiDARs
        for ns, model, label in LIDARS:
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
            d = ndiag.entry('LiDAR', ports[ns])
            node_lat = triple(d.get(NODE_LAT_KEY))
            results[ns] = {
                'model': model, 'label': label, 'port': ports[ns], 'cpu_percent': cpu.get('lidar_bridge ' + ns),
                'packets_per_revolution': per_rev, 'packet_rate': pkt_rate,
                'revolutions_sent_in_window': len(in_window), 'clouds_matched': len(lat), 'revolutions_lost': lost,
                'packets_sent_total': len(revs) * per_rev + 1, 'packets_read_by_node': to_int(d.get('packets')),
                'revolutions_sent_total': len(revs), 'clouds_published_by_node': to_int(d.get('clouds published')),
                'partial_revolutions_dropped': to_int(d.get('partial revolutions dropped')),
                'bad_datagrams': to_int(d.get('bad datagrams')),
                'points_per_cloud': [min(widths), max(widths)] if widths else None,
                'sub_latency_ms': {'p50': bs.pct(lat, 50), 'p99': bs.pct(lat, 99),
                                   'max': max(lat) if lat else float('nan'), 'n': len(lat)},
                'node_latency_ms': {'p50': node_lat[0], 'p99': node_lat[1], 'max': node_lat[2]},
                'node_publish_ms': d.get(NODE_PUB_KEY),
                'decoded_piece_by_piece': d.get('revolutions decoded piece by piece'),
                'decoded_at_once': d.get('revolutions decoded at once')}

        # -- camera
        frames, chunks, frame_rate = sent['camera']
        arr = arrivals['camera']
        in_window = [(s, t) for s, t in frames if ws <= t < we]
        with arr.lock:
            lat = [(arr.by_stamp[s] - t) * 1e3 for s, t in in_window if s in arr.by_stamp]
        d = ndiag.entry('Camera', ports['camera'])
        node_pub = triple(d.get(CAM_PUB_KEY))
        results['camera'] = {
            'port': ports['camera'], 'width': a.width, 'height': a.height, 'jpeg_bytes': len(jpeg),
            'chunks_per_frame': chunks, 'frame_rate': frame_rate, 'cpu_percent': cpu.get('camera_bridge'),
            'frames_sent_in_window': len(in_window), 'images_matched': len(lat),
            'frames_lost': len(in_window) - len(lat), 'frames_sent_total': len(frames),
            'frames_published_by_node': to_int(d.get('frames published')),
            'frames_dropped_by_node': to_int(d.get('frames dropped')),
            'datagrams_read_by_node': to_int(d.get('datagrams received')),
            'sub_latency_ms': {'p50': bs.pct(lat, 50), 'p99': bs.pct(lat, 99),
                               'max': max(lat) if lat else float('nan'), 'n': len(lat)},
            'node_publish_ms': {'p50': node_pub[0], 'p99': node_pub[1], 'max': node_pub[2]}}

        # -- udp_bridge
        topics, lost_total, lat_all = {}, 0, []
        for name in e2e_streams.NAMES:
            for topic in e2e_streams.TOPICS[name]:
                n_sent, n_rx = udp_sent['sent'][name], udp_rx['count'].get(topic, 0)
                lost_total += n_sent - n_rx
                lat = sorted(udp_rx['lat'].get(topic, []))
                lat_all += lat
                topics[topic] = {'sent': n_sent, 'received': n_rx, 'lost': n_sent - n_rx,
                                 'latency_ms_p99': 1e3 * bs.pct(lat, 99) if lat else None}
        results['udp_bridge'] = {
            'rate': a.rate, 'cpu_percent': cpu.get('udp_bridge'), 'messages_lost': lost_total,
            'sender': udp_sent, 'topics': topics, 'node_counters': diag.streams(UDP_NS),
            'stamped_latency_ms': {'p50': 1e3 * bs.pct(lat_all, 50), 'p99': 1e3 * bs.pct(lat_all, 99),
                                   'max': 1e3 * max(lat_all) if lat_all else float('nan'), 'n': len(lat_all)}}
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


def report(r, a):
    def v(ok):
        return 'PASS' if ok else 'MISS'

    def ms(x):
        return f'{x:.2f}'
    hdl, vlp, cam, udp, mach = r['hdl32e'], r['vlp16'], r['camera'], r['udp_bridge'], r['machine']
    print('%d s measured after %d s warm-up, all at once; %d cores, load average %.2f before, %.2f after'
          % (a.seconds, a.warmup, r['cores'], r['loadavg_before'][0], r['loadavg_after'][0]))
    for x in (hdl, vlp):
        print('%s at %.0f rpm: %d packets/revolution, %.0f packets/s sent, %d revolutions in the window, '
              '%s points per cloud; whole run: %d packets sent, %s read by the node, %s bad, %s partial '
              'revolutions dropped, %d revolutions sent, %s clouds published'
              % (x['label'], a.rpm, x['packets_per_revolution'], x['packet_rate'], x['revolutions_sent_in_window'],
                 '%d..%d' % tuple(x['points_per_cloud']) if x['points_per_cloud'] else '-',
                 x['packets_sent_total'], x['packets_read_by_node'], x['bad_datagrams'],
                 x['partial_revolutions_dropped'], x['revolutions_sent_total'], x['clouds_published_by_node']))
        print(f"  node publish time, closing packet read -> published (p50 / p99 / max): {x['node_publish_ms']} ms")
    print('camera %dx%d, JPEG of %d bytes in %d chunks at %.1f Hz: %d frames in the window; whole run: %d sent, '
          '%s published by the node, %s dropped by it'
          % (cam['width'], cam['height'], cam['jpeg_bytes'], cam['chunks_per_frame'], cam['frame_rate'],
             cam['frames_sent_in_window'], cam['frames_sent_total'], cam['frames_published_by_node'],
             cam['frames_dropped_by_node']))
    counters = udp['node_counters'].values()
    print('udp_bridge: %d Hz on %d streams, %d datagrams sent (late p99 %.2f ms), %d received and %d published '
          'by the node, %d messages lost at the subscriber (%s); stamped topics latency p50 %.2f / p99 %.2f / '
          'max %.2f ms'
          % (udp['rate'], len(udp['sender']['sent']), sum(udp['sender']['sent'].values()),
             udp['sender']['late_ms']['p99'], sum(c['received'] for c in counters),
             sum(c['published'] for c in counters), udp['messages_lost'],
             ', '.join('%s %d' % (t, x['lost']) for t, x in udp['topics'].items() if x['lost']) or 'none',
             udp['stamped_latency_ms']['p50'], udp['stamped_latency_ms']['p99'], udp['stamped_latency_ms']['max']))
    print('machine over the window: %.0f %% of one core busy (of %d %%), this benchmark\'s processes %.0f %%, '
          'others %.0f %%' % (mach['busy_percent_of_one_core'], 100 * r['cores'],
                             mach['this_benchmark_percent_of_one_core'], mach['other_processes_percent_of_one_core']))
    print('  by process (%% of one core): %s' % ', '.join('%s %.1f' % p for p in mach['by_process']))
    print()
    rows = [
        ('lidar_bridge HDL-32E', 'revolutions lost', '%d of %d' % (hdl['revolutions_lost'],
                                                                  hdl['revolutions_sent_in_window']),
         '0', v(hdl['revolutions_lost'] == 0)),
        ('', 'CPU, % of one core', f"{hdl['cpu_percent']:.1f}", f'<= {TARGET_LIDAR_CPU:.0f}',
         v(hdl['cpu_percent'] <= TARGET_LIDAR_CPU)),
    ]
    for x, name in ((hdl, 'lidar_bridge HDL-32E'), (vlp, 'lidar_bridge VLP-16')):
        if x is vlp:
            rows += [(name, 'revolutions lost', '%d of %d' % (x['revolutions_lost'], x['revolutions_sent_in_window']),
                      '0', v(x['revolutions_lost'] == 0)),
                     ('', 'CPU, % of one core', f"{x['cpu_percent']:.1f}", '-', '')]
        nl, sl = x['node_latency_ms'], x['sub_latency_ms']
        rows += [('', 'latency in the node p50 / p99 / max [ms]', '%s / %s / %s' % (ms(nl['p50']), ms(nl['p99']),
                                                                                    ms(nl['max'])),
                  f'p99 <= {TARGET_LIDAR_P99_MS:.0f}', v(nl['p99'] <= TARGET_LIDAR_P99_MS)),
                 ('', 'latency at the subscriber p50 / p99 / max [ms]', '%s / %s / %s' % (
                     ms(sl['p50']), ms(sl['p99']), ms(sl['max'])), f'p99 <= {TARGET_LIDAR_P99_MS:.0f}',
                  v(sl['p99'] <= TARGET_LIDAR_P99_MS))]
    nl, sl = cam['node_publish_ms'], cam['sub_latency_ms']
    rows += [('camera_bridge %dx%d %g Hz' % (cam['width'], cam['height'], a.camera_hz), 'frames lost',
              '%d of %d' % (cam['frames_lost'], cam['frames_sent_in_window']),
              '0', v(cam['frames_lost'] == 0)),
             ('', 'CPU, % of one core', f"{cam['cpu_percent']:.1f}", f'<= {TARGET_CAMERA_CPU:.0f}',
              v(cam['cpu_percent'] <= TARGET_CAMERA_CPU)),
             ('', 'latency in the node p50 / p99 / max [ms]', '%s / %s / %s' % (ms(nl['p50']), ms(nl['p99']),
                                                                               ms(nl['max'])), '-', ''),
             ('', 'latency at the subscriber p50 / p99 / max [ms]', '%s / %s / %s' % (ms(sl['p50']), ms(sl['p99']),
                                                                                     ms(sl['max'])), '-', ''),
             ('udp_bridge %d Hz, state_queue_size %d' % (udp['rate'], a.state_queue_size), 'messages lost',
              '%d of %d' % (udp['messages_lost'], sum(t['sent'] for t in udp['topics'].values())), '0',
              v(udp['messages_lost'] == 0)),
             ('', 'CPU, % of one core', f"{udp['cpu_percent']:.1f}", f'<= {TARGET_UDP_CPU:.0f} (alone)',
              v(udp['cpu_percent'] <= TARGET_UDP_CPU))]
    print('| node | figure | value | target | |')
    print('|---|---|---|---|---|')
    for row in rows:
        print(f"| {' | '.join(row)} |")


if __name__ == '__main__':
    sys.exit(main())
