#!/usr/bin/python3
"""Sensor bridge benchmark: CPU of lidar_bridge and camera_bridge at full rate, and latencies.

    bash tools/dev.sh build && source <(bash tools/dev.sh env)
    flock /tmp/morai_heavy.lock /usr/bin/python3 bench/bench_sensors.py [--seconds 20] [--lidar-model HDL32E]
        [--rpm 600] [--camera-hz 30] [--width 1280] [--height 720] [--raw] [--json out.json]

A benchmark, not a timed test.  It starts a private ROS master (roscore on a free port) and the
nodes from launch/lidar_bridge.launch and launch/camera_bridge.launch on free UDP ports, then runs two phases
one after the other, each with a warm-up and ``--seconds`` measured:

* LiDAR: a sender process plays a ``--lidar-model`` sensor at ``--rpm`` (HDL-32E at 600 rpm: 181
  packets per revolution, 1,808 packets/s, paced packet by packet; ranges of a plausible scene, a
  tenth without return), the device time in every packet being the sender's wall clock (us past the
  hour), so each cloud's stamp names its revolution.  This process subscribes to /velodyne_points
  (tcp_nodelay) and takes, per revolution, latency = the cloud's arrival - the moment the sender sent
  the revolution's last packet (CLOCK_MONOTONIC, shared by the processes).  It includes one packet
  period (the revolution is known complete only when the next packet arrives), the decode, the
  publish, the TCP transfer and the deserialisation here.  The node's own figure (closing packet
  read -> publish returned) comes from its /diagnostics.
* Camera: the sender sends a ``--width`` x ``--height`` JPEG of a synthetic road scene at
  ``--camera-hz`` (each frame's chunks in one burst, as 65,000-byte padded datagrams), stamped
  with the wall clock; this process subscribes to /image_jpeg/compressed and /image_jpeg/camera_info;
  latency = image arrival - last chunk sent.  With ``--raw`` the camera node runs with
  ``publish_raw:=true`` and this process also subscribes to /image_raw (rgb8 decoded in the node's
  second worker): the CPU figure then includes the JPEG decoding.

CPU: psutil's user + system time of the node's process over the measured window, in % of one core.
Prints the figures with PASS/MISS against the targets (HDL-32E <= 25 % of a core, camera <= 10 %,
LiDAR p99 latency <= 5 ms) and, with --json, writes them.  Stops only what it started.
"""
import io
import json
import math
import multiprocessing
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import xmlrpc.client

import numpy as np
import psutil

TARGET_LIDAR_CPU = 25.0
TARGET_CAMERA_CPU = 10.0
TARGET_LIDAR_P99_MS = 5.0
TARGET_BURST_E2E_P99_MS = 10.0


def free_port(kind=socket.SOCK_DGRAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def pct(values, p):
    if not values:
        return float('nan')
    v = sorted(values)
    return v[max(0, min(len(v) - 1, int(math.ceil(p / 100.0 * len(v))) - 1))]


# ---------------------------------------------------------------------------- sender process

def scene_jpeg(width, height, quality=85):
    """A JPEG of a plausible road scene (sky, road, buildings, mild noise): its size is that of a
    rendered frame, not of random noise."""
    from PIL import Image, ImageDraw
    img = Image.new('RGB', (width, height))
    d = ImageDraw.Draw(img)
    horizon = height * 9 // 20
    for y in range(horizon):
        c = 150 + 80 * y // horizon
        d.line([(0, y), (width, y)], fill=(c - 60, c - 20, 255))
    d.rectangle([0, horizon, width, height], fill=(70, 110, 60))
    d.polygon([(width * 0.45, horizon), (width * 0.55, horizon), (width, height), (0, height)], fill=(60, 60, 65))
    rng = np.random.RandomState(7)
    for _ in range(25):
        x = int(rng.randint(0, width))
        w, h = int(rng.randint(width // 40, width // 8)), int(rng.randint(height // 10, height // 3))
        g = int(rng.randint(80, 200))
        d.rectangle([x, horizon - h, x + w, horizon], fill=(g, g - 10, g - 30))
        for wy in range(horizon - h + 6, horizon - 6, 14):
            for wx in range(x + 4, x + w - 6, 12):
                d.rectangle([wx, wy, wx + 5, wy + 7], fill=(40, 60, 90))
    for k in range(8):
        y0 = horizon + (height - horizon) * k // 8
        d.rectangle([width // 2 - 3 - k, y0, width // 2 + 3 + k, y0 + 8 + 3 * k], fill=(240, 240, 240))
    arr = np.asarray(img).astype(np.int16) + rng.randint(-6, 7, size=(height, width, 3))
    buf = io.BytesIO()
    Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8)).save(buf, 'JPEG', quality=quality)
    return buf.getvalue()


def lidar_revolution(model, rpm, burst=False):
    """Packets of one revolution and the packet period (us).  ``burst``: a whole number of packets whose
    firings cover exactly 360 deg from azimuth 0 (as MORAI 25.S4 and the emulator send them: VLP-16 75
    packets of 0.2 deg firings)."""
    from morai_bridge.wire import velodyne as vel
    columns = None
    if burst:
        from morai_bridge.emu.sensors.lidar import VelodyneSensor
        sensor = VelodyneSensor(model, rpm, burst=True)
        rpm, columns = sensor.firing_rpm, sensor.columns
    az, _ = vel.scan_pattern(model, rpm, columns=columns)
    rng = np.random.RandomState(3)
    ranges = rng.uniform(2.0, 80.0, size=az.shape)
    ranges[rng.rand(*az.shape) < 0.1] = np.nan
    return [bytearray(p) for p in vel.packets_from_ranges(model, ranges, rng.randint(0, 256, size=az.shape),
                                                          rpm=rpm)], vel.get_model(model).packet_period_us()


def sender(conn, lidar_port, camera_port):
    """Child process: plays the simulator on command; answers with per-revolution / per-frame times.

    ``camera_port`` may be a list of ports (bench/bench_combined.py --cameras): one camera stream per
    port, as MORAI sends each UDP camera; every frame then goes to each port in turn, back to back (all
    cameras rendered in one simulator frame), and a frame's time is the list of the moments each
    camera's last chunk was sent."""
    from morai_bridge.wire import camera
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tx.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    tx.bind(('127.0.0.1', 0))
    while True:
        cmd = conn.recv()
        if cmd[0] == 'quit':
            return
        if cmd[0] == 'lidar':
            _, model, rpm, seconds = cmd
            packets, period_us = lidar_revolution(model, rpm)
            out = []
            start = time.monotonic()
            wall0 = time.time()
            i = 0
            while time.monotonic() - start < seconds:
                first_us = None
                for p in packets:
                    target = start + i * period_us * 1e-6
                    delay = target - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                    dev_us = int(round(wall0 * 1e6 + i * period_us)) % 3600000000
                    struct.pack_into('<I', p, 1200, dev_us)
                    tx.sendto(p, ('127.0.0.1', lidar_port))
                    if first_us is None:
                        first_us = int(round(wall0 * 1e6 + i * period_us))
                    i += 1
                out.append((first_us, time.monotonic()))
            # one more packet: closes the last revolution
            struct.pack_into('<I', packets[0], 1200, int(round(wall0 * 1e6 + i * period_us)) % 3600000000)
            tx.sendto(packets[0], ('127.0.0.1', lidar_port))
            conn.send((out, len(packets), i / (time.monotonic() - start)))
        elif cmd[0] == 'lidar_burst':
            # each revolution captured at once and sent back to back (MORAI 25.S4), rpm / 60 times a second;
            # every packet carries the capture time (us past the hour of the wall clock)
            _, model, rpm, seconds = cmd
            packets, _ = lidar_revolution(model, rpm, burst=True)
            period = 60.0 / rpm
            out = []
            start = time.monotonic()
            wall0 = time.time()
            k = 0
            while time.monotonic() - start < seconds:
                delay = start + k * period - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                capture_us = int(round(wall0 * 1e6 + k * period * 1e6))
                dev = struct.pack('<I', capture_us % 3600000000)
                for p in packets:
                    p[1200:1204] = dev
                for p in packets:
                    tx.sendto(p, ('127.0.0.1', lidar_port))
                out.append((capture_us, time.monotonic()))
                k += 1
            conn.send((out, len(packets), k * len(packets) / (time.monotonic() - start)))
        elif cmd[0] == 'camera':
            _, jpeg, hz, seconds = cmd
            out = []
            start = time.monotonic()
            k = 0
            while time.monotonic() - start < seconds:
                delay = start + k / hz - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                now = time.time()
                sec, nsec = int(now), int((now % 1.0) * 1e9)
                chunks = camera.encode_frame(jpeg, sec, nsec)
                if isinstance(camera_port, int):
                    for d in chunks:
                        tx.sendto(d, ('127.0.0.1', camera_port))
                    out.append(((sec, nsec), time.monotonic()))
                else:
                    sent = []
                    for port in camera_port:
                        for d in chunks:
                            tx.sendto(d, ('127.0.0.1', port))
                        sent.append(time.monotonic())
                    out.append(((sec, nsec), sent))
                k += 1
            conn.send((out, len(camera.encode_frame(jpeg)), k / (time.monotonic() - start)))


# ---------------------------------------------------------------------------- this process

def node_pid(name, timeout=30.0):
    import rosgraph
    master = rosgraph.Master('/bench_sensors')
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            code, _, pid = xmlrpc.client.ServerProxy(master.lookupNode(name)).getPid('/bench_sensors')
            if code == 1:
                return int(pid)
        except Exception:  # noqa: BLE001 - not registered yet
            pass
        time.sleep(0.1)
    raise RuntimeError(f'node {name} did not come up within {timeout:.0f} s')


class Arrivals:
    def __init__(self, topic, cls):
        import rospy
        self.lock = threading.Lock()
        self.by_stamp = {}
        self.width = {}
        self.count = 0
        self.sub = rospy.Subscriber(topic, cls, self.cb, queue_size=100, buff_size=1 << 26, tcp_nodelay=True)

    def cb(self, m):
        t = time.monotonic()
        with self.lock:
            self.by_stamp[(m.header.stamp.secs, m.header.stamp.nsecs)] = t
            self.width[(m.header.stamp.secs, m.header.stamp.nsecs)] = getattr(m, 'width', 0)
            self.count += 1


class Diagnostics:
    def __init__(self):
        import rospy
        from diagnostic_msgs.msg import DiagnosticArray
        self.values = {}
        rospy.Subscriber('/diagnostics', DiagnosticArray, self.cb, queue_size=50)

    def cb(self, m):
        for s in m.status:
            self.values[s.name] = {kv.key: kv.value for kv in s.values}

    def find(self, prefix, key):
        for name, v in list(self.values.items()):
            if name.startswith(prefix):
                return v.get(key)
        return None


def cpu_percent(proc, fn):
    """Run fn(); the process's CPU time over it, % of one core, and fn's result."""
    c0, w0 = proc.cpu_times(), time.monotonic()
    result = fn()
    c1, w1 = proc.cpu_times(), time.monotonic()
    return 100.0 * ((c1.user - c0.user) + (c1.system - c0.system)) / (w1 - w0), result


def main():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'src'))
    from morai_bridge.configuration.params import Param, parse_args
    a = parse_args([
        Param('seconds', 20.0, 'measured time per phase [s]', above=0.0),
        Param('warmup', 3.0, 'warm-up before measuring [s]', minimum=0.0),
        Param('lidar_model', 'HDL32E', 'the LiDAR model sent'),
        Param('rpm', 600.0, 'LiDAR rotation [rpm]', above=0.0),
        Param('camera_hz', 30.0, 'camera frame rate [Hz]', above=0.0),
        Param('width', 1280, 'camera width [px]', minimum=1),
        Param('height', 720, 'camera height [px]', minimum=1),
        Param('decode_chunk', 32, "lidar_bridge's ~decode_chunk (0: at once)", minimum=0),
        Param('raw', False, 'camera with publish_raw and an /image_raw subscriber', switch=True),
        Param('burst', False, 'LiDAR: each revolution sent as one burst, rpm / 60 times a second (MORAI 25.S4), '
              'instead of paced packet by packet', switch=True),
        Param('lidar_only', False, 'skip the camera phase', switch=True),
        Param('json', '', 'also write the results here (JSON)', metavar='FILE'),
    ], description=__doc__.split('\n')[0])

    lidar_port, camera_port = free_port(), free_port()
    parent, child = multiprocessing.Pipe()
    proc = multiprocessing.Process(target=sender, args=(child, lidar_port, camera_port), daemon=True)
    proc.start()                 # before rospy: the child has no ROS threads

    master_port = free_port(socket.SOCK_STREAM)
    env = dict(os.environ, ROS_MASTER_URI='http://127.0.0.1:%d' % master_port)
    os.environ['ROS_MASTER_URI'] = env['ROS_MASTER_URI']
    started = []
    devnull = open(os.devnull, 'w')
    try:
        started.append(subprocess.Popen(['roscore', '-p', str(master_port)], env=env, stdout=devnull,
                                        stderr=subprocess.STDOUT, start_new_session=True))
        time.sleep(2.0)
        for launch in (['lidar_bridge.launch', 'port:=%d' % lidar_port, f'model:={a.lidar_model}',
                        'decode_chunk:=%d' % a.decode_chunk],
                       ['camera_bridge.launch', 'port:=%d' % camera_port,
                        f"publish_raw:={'true' if a.raw else 'false'}"]):
            started.append(subprocess.Popen(['roslaunch', 'morai_msgs'] + launch + ['output:=log'], env=env,
                                            stdout=devnull, stderr=subprocess.STDOUT, start_new_session=True))
        lidar_pid, camera_pid = node_pid('/lidar_bridge'), node_pid('/camera_bridge')
        import rospy
        from sensor_msgs.msg import CameraInfo, CompressedImage, Image, PointCloud2
        rospy.init_node('bench_sensors', disable_signals=True)
        clouds = Arrivals('/velodyne_points', PointCloud2)
        images = Arrivals('/image_jpeg/compressed', CompressedImage)
        Arrivals('/image_jpeg/camera_info', CameraInfo)
        raw = Arrivals('/image_raw', Image) if a.raw else None
        diag = Diagnostics()
        time.sleep(2.0)
        results = {'lidar_model': a.lidar_model, 'rpm': a.rpm, 'seconds': a.seconds,
                   'cores': psutil.cpu_count(), 'load_before': os.getloadavg()[0]}

        # -- LiDAR phase
        lidar_cmd = 'lidar_burst' if a.burst else 'lidar'
        parent.send((lidar_cmd, a.lidar_model, a.rpm, a.warmup))
        parent.recv()
        time.sleep(0.5)

        def lidar_run():
            parent.send((lidar_cmd, a.lidar_model, a.rpm, a.seconds))
            return parent.recv()
        cpu, (revs, per_rev, pkt_rate) = cpu_percent(psutil.Process(lidar_pid), lidar_run)
        time.sleep(1.5)
        lat, widths = [], []
        for first_us, t_last in revs:
            key = (first_us // 1000000, (first_us % 1000000) * 1000)
            t = clouds.by_stamp.get(key)
            if t is not None:
                lat.append((t - t_last) * 1e3)
                widths.append(clouds.width[key])
        results['lidar'] = {'cpu_percent': cpu, 'packets_per_revolution': per_rev, 'packet_rate': pkt_rate,
                            'revolutions_sent': len(revs), 'clouds_matched': len(lat),
                            'latency_ms_p50': pct(lat, 50), 'latency_ms_p99': pct(lat, 99),
                            'latency_ms_max': max(lat) if lat else float('nan'),
                            'node_latency_ms': diag.find('lidar_bridge: LiDAR', 'latency, last packet of a '
                                                         'revolution read -> cloud published, p50 / p99 / max [ms]'),
                            'node_publish_ms': diag.find('lidar_bridge: LiDAR', 'publish time, closing packet read '
                                                         '-> cloud published, p50 / p99 / max [ms]'),
                            'points_per_cloud': [min(widths), max(widths)] if widths else None,
                            'bad_datagrams': diag.find('lidar_bridge: LiDAR', 'bad datagrams'),
                            'decoded_piece_by_piece': diag.find('lidar_bridge: LiDAR',
                                                                'revolutions decoded piece by piece'),
                            'decoded_at_once': diag.find('lidar_bridge: LiDAR', 'revolutions decoded at once'),
                            'bursty': diag.find('lidar_bridge: LiDAR', 'sender bursty (whole revolutions at once)'),
                            'predicted_cuts': diag.find('lidar_bridge: LiDAR', 'revolutions cut at their last packet '
                                                        '(predicted or burst)'),
                            'late_cuts': diag.find('lidar_bridge: LiDAR', 'revolutions cut at the next packet'),
                            'snapshot_clouds': diag.find('lidar_bridge: LiDAR', 'clouds with snapshot point times'),
                            'burst_restarts': diag.find('lidar_bridge: LiDAR', 'bursts that did not cover 360 deg')}

        # -- camera phase
        if not a.lidar_only:
            jpeg = scene_jpeg(a.width, a.height)
            parent.send(('camera', jpeg, a.camera_hz, a.warmup))
            parent.recv()
            time.sleep(0.5)

            def camera_run():
                parent.send(('camera', jpeg, a.camera_hz, a.seconds))
                return parent.recv()
            cpu, (frames, chunks, frame_rate) = cpu_percent(psutil.Process(camera_pid), camera_run)
            time.sleep(1.0)
            lat = [(images.by_stamp[s] - t) * 1e3 for s, t in frames if s in images.by_stamp]
            results['camera'] = {'cpu_percent': cpu, 'width': a.width, 'height': a.height, 'jpeg_bytes': len(jpeg),
                                 'chunks_per_frame': chunks, 'frame_rate': frame_rate, 'frames_sent': len(frames),
                                 'images_matched': len(lat), 'latency_ms_p50': pct(lat, 50),
                                 'latency_ms_p99': pct(lat, 99), 'latency_ms_max': max(lat) if lat else float('nan'),
                                 'node_publish_time_ms': diag.find('camera_bridge: Camera',
                                                                   'publish time p50 / p99 / max [ms]'),
                                 'frames_dropped': diag.find('camera_bridge: Camera', 'frames dropped'),
                                 'raw_images': raw.count if raw is not None else None,
                                 'raw_skipped': diag.find('camera_bridge: Camera', 'raw frames skipped (decoder busy)')}
    finally:
        parent.send(('quit',))
        proc.join(5.0)
        for p in reversed(started):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGINT)
                try:
                    p.wait(20.0)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
        devnull.close()

    li, ca = results['lidar'], results.get('camera')

    def verdict(ok):
        return 'PASS' if ok else 'MISS'
    print('machine: %d cores, load average %.2f before the run' % (results['cores'], results['load_before']))
    print('lidar_bridge, %s at %.0f rpm (decode_chunk %d, %s): %d packets/revolution, %.0f packets/s sent, '
          '%d revolutions in %.0f s, %d clouds matched by stamp, points per cloud %s, %s bad datagrams; '
          'revolutions decoded piece by piece %s, at once %s'
          % (a.lidar_model, a.rpm, a.decode_chunk, 'bursts' if a.burst else 'paced', li['packets_per_revolution'],
             li['packet_rate'],
             li['revolutions_sent'], a.seconds, li['clouds_matched'],
             '%d..%d' % tuple(li['points_per_cloud']) if li['points_per_cloud'] else '-', li['bad_datagrams'],
             li['decoded_piece_by_piece'], li['decoded_at_once']))
    print('  CPU %.1f %% of one core (target <= %.0f %%): %s' % (li['cpu_percent'], TARGET_LIDAR_CPU,
                                                                verdict(li['cpu_percent'] <= TARGET_LIDAR_CPU)))
    print('  end to end, last packet sent -> cloud received and deserialised here: p50 %.2f ms, p99 %.2f ms, '
          'max %.2f ms' % (li['latency_ms_p50'], li['latency_ms_p99'], li['latency_ms_max']))
    lat = [float(v) for v in (li['node_latency_ms'] or 'nan / nan / nan').split(' / ')]
    print('  in the node, last packet of the revolution read -> cloud published: p50 %.2f ms, p99 %.2f ms, max %.2f ms '
          '(target p99 <= %.0f ms): %s' % (lat[0], lat[1], lat[2], TARGET_LIDAR_P99_MS,
                                           verdict(lat[1] <= TARGET_LIDAR_P99_MS)))
    print('  in the node, closing packet (first of the next revolution) read -> cloud published (p50 / p99 / max): '
          '%s ms' % li['node_publish_ms'])
    if a.burst:
        print('  sent as bursts: sender judged bursty %s, clouds cut at their last packet %s, at the next packet %s, '
              'with snapshot point times %s, bursts short of 360 deg %s' % (
                  li['bursty'], li['predicted_cuts'], li['late_cuts'], li['snapshot_clouds'], li['burst_restarts']))
        print('  end to end p99 %.2f ms (target <= %.0f ms at a subscriber): %s' % (
            li['latency_ms_p99'], TARGET_BURST_E2E_P99_MS, verdict(li['latency_ms_p99'] <= TARGET_BURST_E2E_P99_MS)))
    if ca is None:
        if a.json:
            with open(a.json, 'w') as f:
                json.dump(results, f, indent=1)
        return 0
    print('camera_bridge, %dx%d JPEG of %d bytes (%d chunks) at %.1f Hz: %d frames sent, %d images matched, '
          '%s frames dropped' % (ca['width'], ca['height'], ca['jpeg_bytes'], ca['chunks_per_frame'],
                                 ca['frame_rate'], ca['frames_sent'], ca['images_matched'], ca['frames_dropped']))
    print('  CPU %.1f %% of one core (target <= %.0f %%%s): %s' % (
        ca['cpu_percent'], TARGET_CAMERA_CPU, ', with publish_raw: JPEG decoding included' if a.raw else '',
        verdict(ca['cpu_percent'] <= TARGET_CAMERA_CPU)))
    if a.raw:
        print('  /image_raw: %d images received, %s frames skipped by the decoder worker'
              % (ca['raw_images'], ca['raw_skipped']))
    print('  last chunk sent -> image received here: p50 %.2f ms, p99 %.2f ms, max %.2f ms'
          % (ca['latency_ms_p50'], ca['latency_ms_p99'], ca['latency_ms_max']))
    print('  in the node, last chunk read -> image and info published (p50 / p99 / max): %s ms'
          % ca['node_publish_time_ms'])
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
