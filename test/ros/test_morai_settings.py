#!/usr/bin/env python3
"""rostest: launch files written by morai_settings from two public MORAI SIM settings files, run by
roslaunch, fed by the simulator emulator, publish what the settings describe.

* heven (eriverOoO/heven-ad-2026, 25.S4): 4 cameras, a VLP-16, GPS and IMU over UDP, and its network
  file (ego status, objects, collision, ego control, ...).
* baqu4 (tangycore/morai_baqu4): camera, GPS and IMU over ROS, a 32-channel LiDAR (lidar3DType 13)
  over UDP, and its network file.

The files' ports would collide with other suites, so each file is copied to a temp dir with every
port the bridge binds or sends to replaced by a free one (nothing else is changed).  The emulator
(``python3 -m morai_bridge.emu.sim``) plays the simulator on those ports: ego status, GPS, IMU, one
camera and the LiDAR, each mounted as the settings say; heven's three other cameras are the
emulator's CameraSensor driven from here.  Expected values come from the files (test/data/
morai_settings/README.md) and the poses from the hand-worked quaternions below.
"""
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import rosgraph
import roslaunch
import rospy
import rostest
import tf2_ros
from morai_msgs.msg import EgoVehicleStatus, GetTrafficLightStatus, GPSMessage
from sensor_msgs.msg import CameraInfo, CompressedImage, Imu, PointCloud2

from harness import Collector, free_ports, wait_for  # noqa: E402

from morai_bridge.configuration import settings_plan, sim_settings_files
from morai_bridge.emu.sensors.camera import CameraSensor
from morai_bridge.emu.sensors.scene import Mount, Scene
from morai_bridge.nodes import morai_settings as writer
from morai_bridge.wire.udp import streams
from morai_bridge.wire import udp

HERE = os.path.dirname(os.path.realpath(__file__))
DATA = os.path.join(HERE, '..', 'data', 'morai_settings')
T = 30.0
R = math.radians


def q_pitch_yaw(pitch_deg, yaw_deg):
    """qz(yaw) qy(pitch) as (x, y, z, w) (roll 0): (-sin(y/2) sin(p/2), cos(y/2) sin(p/2), sin(y/2) cos(p/2),
    cos(y/2) cos(p/2))."""
    p, y = R(pitch_deg) / 2, R(yaw_deg) / 2
    return (-math.sin(y) * math.sin(p), math.cos(y) * math.sin(p), math.sin(y) * math.cos(p),
            math.cos(y) * math.cos(p))


def rewrite_ports(sensor_src, network_src, tmp):
    """Copies of the two files with free ports; returns (sensor path, network path, {what: port})."""
    with open(sensor_src) as f:
        sensors = json.load(f)
    with open(network_src) as f:
        network = json.load(f)
    ports = {}
    for list_name, kind in sim_settings_files.SENSOR_LISTS:
        for entry in sensors.get(list_name, []):
            cfg = [v for v in entry.values() if isinstance(v, dict) and 'commType' in v][0]
            if cfg['commType'] == 1:
                cfg['udpConfig']['destinationPort'] = ports['%s_%d' % (kind, entry['m_SensorUniqueID'])] = \
                    free_ports(1)[0]
    for ego in network['egoNetworkData']:
        for info in ego['listEgoNetworkInfo']:
            known = sim_settings_files.PUBSUB_STREAMS.get(info['PUBSUB_TYPE'])
            competition = info['PUBSUB_TYPE'] == sim_settings_files.PUBSUB_COMPETITION_STATUS
            if info['netType'] != 1 or (known is None and not competition):
                continue
            if info['PUBSUB_TYPE'] == 771:
                info['EgoCtrlConfig']['udpConfig']['hostPort'] = ports['ctrl_cmd'] = free_ports(1)[0]
            elif known is None:
                info['config']['udpConfig']['destinationPort'] = free_ports(1)[0]
            elif known[1] == 'rx':
                info['config']['udpConfig']['destinationPort'] = ports[known[0]] = free_ports(1)[0]
            else:
                info['config']['udpConfig']['hostPort'] = ports[known[0]] = free_ports(1)[0]
    paths = []
    for d, name in ((sensors, os.path.basename(sensor_src)), (network, os.path.basename(network_src))):
        paths.append(os.path.join(tmp, name))
        with open(paths[-1], 'w') as f:
            json.dump(d, f, indent=2)
    return paths[0], paths[1], ports


def emulator_args(ports, camera=None, lidar=None, user_ip='127.0.0.1'):
    """Arguments of python3 -m morai_bridge.emu.sim: every stream port from ``ports`` or 0 (off), the
    camera and LiDAR as :class:`~morai_bridge.configuration.sim_settings_files.Sensor` (mounted as they say), all
    sent to ``user_ip`` from 127.0.0.1."""
    args = ['--user-ip', user_ip, '--listen-ip', '127.0.0.1', '--gps-hz', '10', '--imu-hz', '20',
            '--ego-status-hz', '20', '--object-info-hz', '5']
    for s in streams.STREAMS:
        args += [f"--{s.name.replace('_', '-')}-port", str(ports.get(s.name, 0))]
    for prefix, s in (('camera', camera), ('lidar', lidar)):
        if s is None:
            continue
        args += [f'--{prefix}-port', str(s.dest_port)]
        for axis, v in zip(('x', 'y', 'z', 'roll', 'pitch', 'yaw'), s.pose):
            args += [f'--{prefix}-{axis}', repr(v)]
    if camera is not None:
        args += ['--camera-width', str(camera.extra['width']), '--camera-height', str(camera.extra['height']),
                 '--camera-fov-deg', repr(camera.extra['fov_deg']), '--camera-hz', '5']
    if lidar is not None:
        args += ['--lidar-model', lidar.extra['model']]
    return args


LAUNCH_DIR = os.path.join(HERE, '..', '..', 'launch')


def low_port_free_above(offset, first=909):
    """A port below 1024 whose port + ``offset`` is free on 127.0.0.1 (``first`` if it is)."""
    for port in [first] + list(range(1023, 23, -1)):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.bind(('127.0.0.1', port + offset))
            except OSError:
                continue
        return port
    raise RuntimeError(f'no free port from {24 + offset} to {1023 + offset}')


class Run:
    """roslaunch of a generated file (or of shipped launch files with args), the emulator, and extra
    camera senders."""

    def __init__(self, launch, emu_args):
        uuid = roslaunch.rlutil.get_or_generate_uuid(None, False)
        roslaunch.configure_logging(uuid)
        self.launch = roslaunch.parent.ROSLaunchParent(uuid, launch if isinstance(launch, list) else [launch])
        self.launch.start()
        self.emu = None if emu_args is None else subprocess.Popen(
            [sys.executable, '-m', 'morai_bridge.emu.sim'] + emu_args, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)
        self.stop = threading.Event()
        self.threads = []

    def send_cameras(self, cams):
        """Render and send each camera of ``cams`` (Sensor) twice a second with the emulator's CameraSensor."""
        def body():
            tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            tx.bind(('127.0.0.1', 0))
            sensors = [(CameraSensor(c.extra['width'], c.extra['height'], c.extra['fov_deg'],
                                     mount=Mount(*c.pose)), c.dest_port) for c in cams]
            while not self.stop.is_set():
                for cam, port in sensors:
                    frame = cam.render(Scene(time.time_ns(), (0.0, 0.0, 0.0, 0.0, 0.0, 0.0), ()))
                    chunks, _ = cam.datagrams(frame)
                    for d in chunks:
                        tx.sendto(d, ('127.0.0.1', port))
                self.stop.wait(0.5)
            tx.close()
        t = threading.Thread(target=body, daemon=True)
        t.start()
        self.threads.append(t)

    def running(self):
        return sorted(n.split('-')[0] for n in self.launch.pm.get_active_names())

    def close(self):
        self.stop.set()
        for t in self.threads:
            t.join(5.0)
        if self.emu is not None:
            self.emu.terminate()
            try:
                self.emu.wait(10.0)
            except subprocess.TimeoutExpired:
                self.emu.kill()
        self.launch.shutdown()


class MoraiSettingsTest(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='morai_settings_')
        self.tf = tf2_ros.Buffer()
        self.tf_listener = tf2_ros.TransformListener(self.tf)

    def tearDown(self):
        self.tf_listener.unregister() if hasattr(self.tf_listener, 'unregister') else None
        shutil.rmtree(self.tmp, ignore_errors=True)

    def generate(self, sensors, network, ports=None, may_bind=writer.may_bind):
        """The launch file morai_settings writes, as roslaunch takes it with args: the streams the network file
        leaves out that the plan keeps on MORAI's default ports (traffic lights 7502, ...) are moved to free
        ports (``ports`` gets them) through the generated file's own port args.  ``may_bind``: whether the user
        who generates it may bind a port (default: this process's user)."""
        launch = os.path.join(self.tmp, 'generated.launch')
        self.assertEqual(writer.main([sensors, network, '--output', 'log', '-o', launch], may_bind=may_bind), 0)
        moved = dict(zip(sorted(settings_plan.UNLISTED_KEPT), free_ports(len(settings_plan.UNLISTED_KEPT))))
        if ports is not None:
            ports.update(moved)
        return [(launch, [f'{name}_port:={port}' for name, port in sorted(moved.items())])]

    def assert_tf(self, child, xyz, q):
        self.assertTrue(wait_for(lambda: self.tf.can_transform('base_link', child, rospy.Time(0)), T),
                        f'no TF base_link -> {child}')
        t = self.tf.lookup_transform('base_link', child, rospy.Time(0)).transform
        got = (t.translation.x, t.translation.y, t.translation.z)
        for a, b in zip(got, xyz):
            self.assertAlmostEqual(a, b, places=6, msg=f'{child} translation {got!r}, expected {xyz!r}')
        rot = (t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w)
        for a, b in zip(rot, q):
            self.assertAlmostEqual(a, b, places=6, msg=f'{child} rotation {rot!r}, expected {q!r}')

    def test_heven_four_udp_cameras_lidar_gps_imu(self):
        sensors, network, ports = rewrite_ports(
            os.path.join(DATA, 'heven_SensorInfo_2023_Hyundai_Ioniq5.json'),
            os.path.join(DATA, 'heven_NetworkInfo_2023_Hyundai_Ioniq5.template.json'), self.tmp)
        settings = sim_settings_files.load_sensors(sensors)
        cams = [s for s in settings.sensors if s.kind == 'camera']
        lidar = [s for s in settings.sensors if s.kind == 'lidar'][0]
        ports.update(gps=ports['gps_6'], imu=ports['imu_7'])
        launch = self.generate(sensors, network)
        images = [Collector('/camera_%d/image_jpeg/compressed' % c.uid, CompressedImage) for c in cams]
        infos = [Collector('/camera_%d/image_jpeg/camera_info' % c.uid, CameraInfo) for c in cams]
        cloud = Collector('/lidar3D', PointCloud2)
        ego, gps, imu = (Collector('/Ego_topic', EgoVehicleStatus), Collector('/gps', GPSMessage),
                         Collector('/imu', Imu))
        run = Run(launch, emulator_args(ports, camera=cams[0], lidar=lidar))
        try:
            run.send_cameras(cams[1:])
            for c, img, info in zip(cams, images, infos):
                self.assertTrue(wait_for(lambda: img.first() is not None and info.first() is not None, T),
                                'camera %d (port %d): no image / camera info' % (c.uid, c.dest_port))
                self.assertEqual(img.first().header.frame_id, 'Camera-%d_optical' % c.uid)
                i = info.first()
                # cameraResWidth / Height; fx = (width / 2) / tan(cameraFOV / 2): 640 (1280 px, 90 deg),
                # 149.2 (640 px, 130 deg); principal point at the centre (MORAI's principalPoint, +- 0.5 px)
                w, h, fov = {1: (1280, 720, 90), 2: (640, 480, 130), 3: (640, 480, 130), 4: (1280, 720, 90)}[c.uid]
                self.assertEqual((i.width, i.height), (w, h))
                self.assertAlmostEqual(i.K[0], (w / 2.0) / math.tan(R(fov) / 2), places=6)
                self.assertAlmostEqual(i.K[4], i.K[0], places=9)
                self.assertLessEqual(abs(i.K[2] - w / 2.0), 0.5)
                self.assertLessEqual(abs(i.K[5] - h / 2.0), 0.5)
            self.assertTrue(wait_for(lambda: cloud.first() is not None, T), 'no cloud on /lidar3D')
            self.assertEqual(cloud.first().header.frame_id, 'Lidar3D-5')
            self.assertGreater(cloud.first().width * cloud.first().height, 1000)
            for c, name in ((ego, '/Ego_topic'), (gps, '/gps'), (imu, '/imu')):
                self.assertTrue(wait_for(lambda: c.first() is not None, T), f'udp_bridge: nothing on {name}')
            self.assertEqual(imu.first().header.frame_id, 'IMU-7')
            # mount poses (REP-103): rot (0, 2, 0), (0, 10, 70), (0, 10, 290), (0, 330, 0); pos as saved
            self.assert_tf('Camera-1', (1.9, 0.0, 1.2), q_pitch_yaw(2, 0))
            self.assert_tf('Camera-2', (1.15, 0.65, 1.2), q_pitch_yaw(10, 70))
            self.assert_tf('Camera-3', (1.15, -0.65, 1.2), q_pitch_yaw(10, -70))
            self.assert_tf('Camera-4', (1.9, 0.0, 1.2), (0.0, -math.sin(R(15)), 0.0, math.cos(R(15))))
            self.assert_tf('Lidar3D-5', (1.15, 0.0, 1.4), (0.0, 0.0, 0.0, 1.0))
            self.assertEqual(run.running(), ['camera_bridge_1', 'camera_bridge_2', 'camera_bridge_3',
                                             'camera_bridge_4', 'lidar_bridge', 'udp_bridge'])
            self.assertIsNone(run.emu.poll(), f'the emulator exited: {run.emu.stderr.read(2000)}')
        finally:
            run.close()
            for c in images + infos + [cloud, ego, gps, imu]:
                c.close()

    def test_baqu4_mixed_ros_udp(self):
        sensors, network, ports = rewrite_ports(os.path.join(DATA, 'baqu4_morai_sensor.json'),
                                                os.path.join(DATA, 'baqu4_morai_network.json'), self.tmp)
        settings = sim_settings_files.load_sensors(sensors)
        lidar = [s for s in settings.sensors if s.kind == 'lidar'][0]
        cloud = Collector('/lidar3D', PointCloud2)
        ego = Collector('/Ego_topic', EgoVehicleStatus)
        lights = Collector('/GetTrafficLightStatus', GetTrafficLightStatus)
        kept = {}
        launch = self.generate(sensors, network, kept)
        run = Run(launch, emulator_args(ports, lidar=lidar))
        try:
            self.assertTrue(wait_for(lambda: cloud.first() is not None, T), 'no cloud on /lidar3D')
            c = cloud.first()
            self.assertEqual(c.header.frame_id, 'Lidar3D-2')
            # lidar3DType 13 -> HDL-32E: rings 0..31 (bottom to top); the emulator's world is flat ground, so
            # only the lasers below the horizon (HDL-32E: 23 of them, rings 0..22) return; a VLP-16 has 16
            ring = [f for f in c.fields if f.name == 'ring'][0]
            rings = {int.from_bytes(c.data[k + ring.offset:k + ring.offset + 2], 'little')
                     for k in range(0, len(c.data), c.point_step)}
            self.assertTrue(16 <= max(rings) <= 31, f'rings {sorted(rings)!r}: not a 32-channel cloud')
            self.assertTrue(wait_for(lambda: ego.first() is not None, T), 'udp_bridge: nothing on /Ego_topic')
            self.assert_tf('Lidar3D-2', (1.53, 0.0, 1.45), (0.0, 0.0, 0.0, 1.0))
            # the camera, GPS and IMU are sent over ROS: no node for them, udp_bridge binds no GPS / IMU port
            self.assertEqual(run.running(), ['lidar_bridge', 'udp_bridge'])
            self.assertEqual(rospy.get_param('/udp_bridge/gps_port'), 0)
            self.assertEqual(rospy.get_param('/udp_bridge/imu_port'), 0)
            self.assertEqual(rospy.get_param('/udp_bridge/ego_status_port'), ports['ego_status'])
            # baqu4's network file has no traffic-light row: udp_bridge keeps the stream (on the port the
            # generated file's traffic_light_port arg gives it here) and publishes what arrives there; sim
            # status, not kept, is off (issue 43: both are named on morai_settings' stderr)
            self.assertEqual(rospy.get_param('/udp_bridge/traffic_light_port'), kept['traffic_light'])
            self.assertEqual(rospy.get_param('/udp_bridge/sim_status_port'), 0)
            light = udp.encode(udp.make(udp.GetTrafficLightStatus, traffic_light_index='C119BS010007',
                                        traffic_light_type=2, traffic_light_status=16))
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
                self.assertTrue(wait_for(lambda: tx.sendto(light, ('127.0.0.1', kept['traffic_light'])) and
                                         lights.first() is not None, T), 'no /GetTrafficLightStatus')
            self.assertEqual(lights.first().trafficLightIndex, 'C119BS010007')
            self.assertIsNone(run.emu.poll(), f'the emulator exited: {run.emu.stderr.read(2000)}')
        finally:
            run.close()
            cloud.close()
            ego.close()
            lights.close()

    def test_baqu4_generated_by_a_normal_user_on_its_port_below_1024(self):
        """Issue 48: baqu4's competition status row sends to 909, which only root may bind on a stock Linux.  The
        file morai_settings writes for a normal user moves it by the demo's privileged_port_offset (1000); the
        simulator, its destination port set as morai_settings says (the port + 1000), is received there, on
        /Competition_topic, with the version the row implies.  The camera, GPS and IMU the simulator publishes
        over ROS get no second publisher.  (The ports below 1024 are not bound here: run as a normal user by the
        nonroot layer, test/nonroot/nonroot_check.py.)"""
        sensors, network, ports = rewrite_ports(os.path.join(DATA, 'baqu4_morai_sensor.json'),
                                                os.path.join(DATA, 'baqu4_morai_network.json'), self.tmp)
        low = low_port_free_above(writer.OFFSET)        # baqu4's 909 unless 1909 is taken on this machine
        with open(network) as f:
            d = json.load(f)
        for info in d['egoNetworkData'][0]['listEgoNetworkInfo']:
            if info['PUBSUB_TYPE'] == sim_settings_files.PUBSUB_COMPETITION_STATUS:
                info['config']['udpConfig']['destinationPort'] = low
        with open(network, 'w') as f:
            json.dump(d, f)
        ports['competition_status'] = low + writer.OFFSET            # the simulator's setting, moved as told
        lidar = [s for s in sim_settings_files.load_sensors(sensors).sensors if s.kind == 'lidar'][0]
        competition = Collector('/Competition_topic', EgoVehicleStatus)
        ego = Collector('/Ego_topic', EgoVehicleStatus)
        launch = self.generate(sensors, network, may_bind=lambda port: port >= 1024)
        with open(launch[0][0]) as f:
            self.assertIn('<arg name="privileged_port_offset" default="1000"', f.read())
        run = Run(launch, emulator_args(ports, lidar=lidar))
        try:
            self.assertTrue(wait_for(lambda: competition.first() is not None and ego.first() is not None, T),
                            'nothing on /Competition_topic from the port + 1000 (or on /Ego_topic)')
            # the file gives the settings' port and the offset; the node writes back the port it binds
            self.assertEqual(rospy.get_param('/udp_bridge/competition_status_port'), low + writer.OFFSET)
            self.assertEqual(rospy.get_param('/udp_bridge/privileged_port_offset'), writer.OFFSET)
            self.assertEqual(rospy.get_param('/udp_bridge/sim_version'), '25.S4.MolitComp03')
            published = {t for t, _ in rosgraph.Master('/test_morai_settings').getPublishedTopics('')}
            for topic in ('/gps', '/imu', '/image_jpeg/compressed'):
                self.assertNotIn(topic, published, f'{topic}: the simulator publishes it over ROS; the bridge must not')
            self.assertEqual(run.running(), ['lidar_bridge', 'udp_bridge'])
            self.assertIsNone(run.emu.poll(), f'the emulator exited: {run.emu.stderr.read(2000)}')
        finally:
            run.close()
            competition.close()
            ego.close()

    def test_two_pcs_the_destination_address_is_bound(self):
        """Two PCs: the simulator sends to the ROS PC's address, the files' destinationIP (here 127.0.0.2, a
        second address of this machine).  The launch file morai_settings writes, with no --bind-ip, and
        udp_bridge.launch network_settings:= both bind it and receive what the emulator sends there."""
        sensors, network, ports = rewrite_ports(os.path.join(DATA, 'baqu4_morai_sensor.json'),
                                                os.path.join(DATA, 'baqu4_morai_network.json'), self.tmp)
        for path in (sensors, network):
            with open(path) as f:
                text = f.read()
            with open(path, 'w') as f:
                f.write(text.replace('"destinationIP": "127.0.0.1"', '"destinationIP": "127.0.0.2"'))
        lidar = [s for s in sim_settings_files.load_sensors(sensors).sensors if s.kind == 'lidar'][0]
        self.assertEqual(lidar.dest_ip, '127.0.0.2')
        generated = self.generate(sensors, network)
        with open(generated[0][0]) as f:
            self.assertEqual(f.read().count('<param name="bind_ip" type="str" value="127.0.0.2" />'), 2)
        shipped = [(os.path.join(LAUNCH_DIR, 'udp_bridge.launch'), ['network_settings:=' + network, 'output:=log'])]
        for launch in (generated, shipped):
            ego = Collector('/Ego_topic', EgoVehicleStatus)
            cloud = Collector('/lidar3D', PointCloud2) if launch is generated else None
            run = Run(launch, emulator_args(ports, lidar=lidar, user_ip='127.0.0.2'))
            try:
                self.assertTrue(wait_for(lambda: ego.first() is not None, T),
                                '%s: nothing on /Ego_topic from datagrams sent to 127.0.0.2'
                                % ('generated' if launch is generated else 'udp_bridge.launch'))
                self.assertEqual(rospy.get_param('/udp_bridge/bind_ip'), '127.0.0.2')
                if cloud is not None:
                    self.assertTrue(wait_for(lambda: cloud.first() is not None, T), 'no cloud on /lidar3D')
                self.assertIsNone(run.emu.poll(), f'the emulator exited: {run.emu.stderr.read(2000)}')
            finally:
                run.close()
                ego.close()
                if cloud is not None:
                    cloud.close()

    def test_settings_arg_of_the_shipped_launch_files(self):
        """sensor_bridge.launch settings:= camera_sensor:=2 and udp_bridge.launch settings:= network_settings:=
        read heven's files themselves: camera 2 (port, size, FOV, pose, frame), the LiDAR, the ego status /
        GPS / IMU ports; the 2D LiDAR node finds none in the file and exits cleanly."""
        sensors, network, ports = rewrite_ports(
            os.path.join(DATA, 'heven_SensorInfo_2023_Hyundai_Ioniq5.json'),
            os.path.join(DATA, 'heven_NetworkInfo_2023_Hyundai_Ioniq5.template.json'), self.tmp)
        settings = sim_settings_files.load_sensors(sensors)
        cam2 = [s for s in settings.sensors if s.key == 'cameraList[1]'][0]
        lidar = [s for s in settings.sensors if s.kind == 'lidar'][0]
        ports.update(gps=ports['gps_6'], imu=ports['imu_7'])
        image, info = (Collector('/image_jpeg/compressed', CompressedImage),
                       Collector('/image_jpeg/camera_info', CameraInfo))
        cloud, ego, imu = (Collector('/lidar3D', PointCloud2), Collector('/Ego_topic', EgoVehicleStatus),
                           Collector('/imu', Imu))
        launch = [(os.path.join(LAUNCH_DIR, 'sensor_bridge.launch'),
                   ['settings:=' + sensors, 'camera_sensor:=2', 'output:=log']),
                  (os.path.join(LAUNCH_DIR, 'udp_bridge.launch'),
                   ['settings:=' + sensors, 'network_settings:=' + network, 'output:=log'])]
        run = Run(launch, emulator_args(ports, camera=cam2, lidar=lidar))
        try:
            self.assertTrue(wait_for(lambda: info.first() is not None, T), 'camera 2: no camera info')
            self.assertEqual((info.first().width, info.first().height), (640, 480))
            self.assertAlmostEqual(info.first().K[0], 320.0 / math.tan(R(65)), places=6)
            self.assertTrue(wait_for(lambda: image.first() is not None, T))
            self.assertEqual(image.first().header.frame_id, 'Camera-2_optical')
            self.assertTrue(wait_for(lambda: cloud.first() is not None, T), 'no cloud on /lidar3D')
            self.assertEqual(cloud.first().header.frame_id, 'Lidar3D-5')
            self.assertTrue(wait_for(lambda: ego.first() is not None and imu.first() is not None, T),
                            'udp_bridge: no ego status / IMU on the ports of the files')
            self.assert_tf('Camera-2', (1.15, 0.65, 1.2), q_pitch_yaw(10, 70))
            self.assertTrue(wait_for(lambda: run.running() == ['camera_bridge', 'lidar_bridge', 'udp_bridge'], T),
                            f'running: {run.running()!r} (lidar2d_bridge should have exited: no 2D LiDAR in the file)')
        finally:
            run.close()
            for c in (image, info, cloud, ego, imu):
                c.close()

    def test_bad_file_through_the_launch_files_starts_nothing(self):
        """A settings file with an unknown lidar3DType: every node of sensor_bridge.launch refuses to start
        (each reads the whole file), none is left running half-configured."""
        with open(os.path.join(DATA, 'heven_SensorInfo_2023_Hyundai_Ioniq5.json')) as f:
            d = json.load(f)
        d['Lidar3DList'][0]['lc']['lidar3DType'] = 42
        bad = os.path.join(self.tmp, 'bad.json')
        with open(bad, 'w') as f:
            json.dump(d, f)
        run = Run([(os.path.join(LAUNCH_DIR, 'sensor_bridge.launch'), ['settings:=' + bad, 'output:=log'])], None)
        try:
            self.assertTrue(wait_for(lambda: run.running() == [], T), f'still running: {run.running()!r}')
        finally:
            run.close()


if __name__ == '__main__':
    rospy.init_node('test_morai_settings')
    rostest.rosrun('morai_msgs', 'test_morai_settings', MoraiSettingsTest)
