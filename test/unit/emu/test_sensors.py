"""The emulator's sensor streams (camera + boxes, Velodyne 3D LiDAR, 2D LiDAR) over real UDP sockets.

Every test runs a real SimEmulator in deterministic mode, stepped by hand (no
thread) unless it says otherwise, with its sensor ports pointing at sockets
bound on 127.0.0.1, and decodes what arrives with the wire codecs.  Expected
values come from the geometry of the scenario, computed here independently of
morai_bridge.emu.sensors (plain trigonometry, yaw-only poses).
"""

import io
import json
import math
import socket
import struct
import time

import numpy as np
import pytest

from morai_bridge.emu.sim import SimConfig, SimEmulator
from morai_bridge.emu.sim.cli import _parser
from morai_bridge.wire import camera, lidar2d, velodyne

Image = pytest.importorskip("PIL.Image")

STEP_NS = 20_000_000
NO_PORTS = {f: 0 for f in SimConfig._fields if f.endswith("_port")}
# the documented rendering palette (docs/emulator.md)
SKY = (135, 190, 235)
GROUND = (88, 92, 88)
ORANGE, MAGENTA, CYAN = (255, 128, 0), (255, 0, 255), (0, 217, 217)


class Sink:
    """One UDP socket the emulator sends one sensor stream to.

    ``collect()`` moves what has arrived into ``got`` without waiting; tests call it
    after every step (:func:`run`) so that no kernel receive buffer (212 kB by
    default on Linux) overflows; ``drain()`` waits for quiet and returns it all.
    """

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.got = []

    def collect(self):
        self.sock.setblocking(False)
        try:
            while True:
                self.got.append(self.sock.recv(65535))
        except BlockingIOError:
            pass

    def drain(self, timeout=0.05):
        self.sock.settimeout(timeout)
        try:
            while True:
                self.got.append(self.sock.recv(65535))
        except socket.timeout:
            pass
        out, self.got = self.got, []
        return out

    def close(self):
        self.sock.close()


@pytest.fixture
def sinks():
    made = []

    def make():
        s = Sink()
        made.append(s)
        return s
    yield make
    for s in made:
        s.close()


@pytest.fixture
def emulator(tmp_path):
    """emulator(scenario_dict, **config) -> a deterministic SimEmulator without command ports."""
    made = []

    def make(scenario, **cfg):
        (tmp_path / "t.json").write_text(json.dumps(scenario))
        sim = SimEmulator(SimConfig(deterministic=True, scenario_dir=str(tmp_path), scenario="t",
                                    **dict(NO_PORTS, **cfg)))
        made.append(sim)
        return sim
    yield make
    for sim in made:
        sim.close()


def rz(yaw_deg):
    c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def box_world_corners(center_xy, z, yaw_deg, size):
    """8 corners, binary-cube order: bit 0 x (rear/front), bit 1 y (right/left), bit 2 z."""
    length, width, height = size
    out = []
    for i in range(8):
        local = np.array([(length / 2) * (1 if i & 1 else -1), (width / 2) * (1 if i & 2 else -1),
                          height / 2 * (1 if i & 4 else -1)])
        out.append(rz(yaw_deg) @ local + np.array([center_xy[0], center_xy[1], z + height / 2]))
    return np.array(out)


def run(sim, steps, *sinks):
    """Step the emulator by hand, collecting every sink after each step."""
    for _ in range(steps):
        sim.step(1)
        for sink in sinks:
            sink.collect()


def to_local(points, origin, yaw_deg):
    """Map points -> a frame at ``origin`` turned by ``yaw_deg`` about z."""
    return (np.asarray(points) - np.asarray(origin)) @ rz(yaw_deg)


# ----------------------------------------------------------------------------- 3D LiDAR

def decode_all(datagrams, model):
    assert datagrams, "no LiDAR datagram arrived"
    assert all(len(d) == 1206 for d in datagrams)
    return velodyne.decode_packets(datagrams, model, packet_time="nominal")


@pytest.mark.parametrize("model", ["VLP16", "HDL32E", "MORAI_64"])
def test_lidar_points_lie_on_the_box_and_the_ground(emulator, sinks, model):
    ego, ego_yaw = np.array([5.0, -3.0, 0.0]), 90.0
    mount, mount_yaw = np.array([0.5, 0.2, 1.9]), 10.0
    box_xy, box_yaw, size = (3.0, 9.0), 20.0, (2.0, 3.0, 2.5)
    rx = sinks()
    sim = emulator({"ego": {"position": list(ego), "yaw_deg": ego_yaw},
                    "obstacles": [{"id": 7, "position": list(box_xy), "yaw_deg": box_yaw,
                                   "size": list(size)}]},
                   lidar_port=rx.port, lidar_model=model, lidar_x=0.5, lidar_y=0.2, lidar_z=1.9,
                   lidar_yaw=mount_yaw)
    run(sim, 12, rx)                          # > one revolution at 600 rpm
    pts = decode_all(rx.drain(), model)
    p = np.stack([pts.x, pts.y, pts.z], axis=1).astype(np.float64)
    sensor_origin = ego + rz(ego_yaw) @ mount
    world = p @ (rz(ego_yaw) @ rz(mount_yaw)).T + sensor_origin
    local = to_local(world, (box_xy[0], box_xy[1], size[2] / 2), box_yaw)
    half = np.array(size) / 2
    tol = 0.012                               # 2 mm distance steps, 0.01 deg azimuth steps at <= 30 m
    inside = np.all(np.abs(local) <= half + tol, axis=1)
    on_face = inside & np.any(np.abs(np.abs(local) - half) <= tol, axis=1)
    on_ground = np.abs(world[:, 2]) <= tol
    assert on_face.sum() > 200, "too few points on the box: %d" % on_face.sum()
    assert on_ground.sum() > 5000
    stray = ~(on_face | on_ground)
    assert not stray.any(), f"points on neither the box nor the ground: {world[stray][:5]}"
    # the box's faces toward the sensor are hit, not the far ones: in the box frame the
    # sensor is at -x (rear) and -y..., and no point is on the face turned away from it
    s_local = to_local(sensor_origin[None, :], (box_xy[0], box_xy[1], size[2] / 2), box_yaw)[0]
    for axis in (0, 1):
        away = np.sign(-s_local[axis]) * half[axis]
        assert not np.any(on_face & (np.abs(local[:, axis] - away) <= tol / 2)
                          & np.all(np.abs(np.delete(local, axis, 1))
                                   < np.delete(half, axis) - 0.05, axis=1))
    # nothing beyond the range, nothing from inside the sensor
    r = np.linalg.norm(p, axis=1)
    assert r.max() <= 100.0 + 1e-3 and r.min() > 1.0


def test_lidar_straight_ahead_ray_hits_the_face_at_the_expected_distance(emulator, sinks):
    # ego heading 30 deg, box 12.5 m ahead on that heading, facing the ego
    yaw = 30.0
    d = 12.5
    centre = rz(yaw) @ np.array([d, 0.0, 0.0])

    def first_packet(model):
        rx = sinks()
        sim = emulator({"ego": {"position": [0.0, 0.0], "yaw_deg": yaw},
                        "obstacles": [{"id": 1, "position": [centre[0], centre[1]], "yaw_deg": yaw,
                                       "size": [1.0, 4.0, 3.0]}]},
                       lidar_port=rx.port, lidar_model=model, lidar_x=1.0, lidar_z=1.9)
        run(sim, 1, rx)
        return rx.drain()[0]
    first = first_packet("HDL32E")
    # raw bytes: block 0 azimuth 0, slot 15 = the HDL-32E laser at elevation 0.00 deg
    flag, az = struct.unpack_from("<HH", first, 0)
    assert (flag, az) == (0xEEFF, 0)
    dist, refl = struct.unpack_from("<HB", first, 4 + 3 * 15)
    expected = d - 0.5 - 1.0                   # face at d - length/2, sensor 1 m ahead of the ego
    assert abs(dist * 0.002 - expected) <= 0.002
    assert refl == 200                         # obstacle intensity
    # the VLP-16 has no level laser: +1 deg (slot 1) sees the same face at d' / cos(1 deg)
    first = first_packet("VLP16")
    dist1, _ = struct.unpack_from("<HB", first, 4 + 3 * 1)
    assert abs(dist1 * 0.002 - expected / math.cos(math.radians(1.0))) <= 0.002
    # slot 0 (-15 deg) hits the ground first: 1.9 / sin(15 deg)
    dist0, refl0 = struct.unpack_from("<HB", first, 4)
    assert abs(dist0 * 0.002 - 1.9 / math.sin(math.radians(15.0))) <= 0.002
    assert refl0 == 30


def test_lidar_no_return_beyond_max_range_and_into_the_sky(emulator, sinks):
    rx = sinks()
    sim = emulator({"ego": {"position": [0.0, 0.0]},
                    "obstacles": [{"id": 1, "position": [30.0, 0.0], "size": [1.0, 10.0, 5.0]}]},
                   lidar_port=rx.port, lidar_model="VLP16", lidar_max_range=20.0)
    run(sim, 6, rx)
    data = rx.drain()
    pts = decode_all(data, "VLP16")
    r = np.sqrt(pts.x.astype(float) ** 2 + pts.y ** 2 + pts.z ** 2)
    assert r.max() <= 20.0 + 0.002
    assert not np.any(pts.x > 25.0)            # the box at 30 m is out of range
    # upward lasers (odd slots, +1 .. +15 deg) see nothing; of the downward ones, those whose
    # ground hit at 1.9 / sin(-elevation) is within 20 m (-15 .. -7 deg: slots 0, 2, .. 8) always
    # return, the others (-5, -3, -1 deg: 21.8, 36.3, 108.9 m) never
    dist = np.frombuffer(b"".join(data), dtype=velodyne.PACKET_DTYPE)["blocks"]["points"]["dist"]
    dist = dist.reshape(-1, 16)                              # one firing per row
    assert not dist[:, 1::2].any()
    assert dist[:, [0, 2, 4, 6, 8]].all()
    assert not dist[:, [10, 12, 14]].any()
    assert np.allclose(dist[:, 8] * 0.002, 1.9 / math.sin(math.radians(7.0)), atol=0.002)


def test_lidar_does_not_see_a_box_it_is_inside(emulator, sinks):
    # a 3 m tall obstacle around the sensor's position: its inside is not seen, the ground is
    rx = sinks()
    sim = emulator({"ego": {"position": [0.0, 0.0]},
                    "obstacles": [{"id": 1, "position": [0.0, 0.0], "size": [1.0, 1.0, 3.0]}]},
                   lidar_port=rx.port, lidar_model="VLP16")
    run(sim, 6, rx)
    pts = decode_all(rx.drain(), "VLP16")
    assert np.allclose(pts.z, -1.9, atol=0.01)
    # two revolutions of 75 packets (captured at 0 and 100 ms): every downward laser returns but -1 deg
    # (ground at 108.9 m > 100 m)
    assert len(pts) == 7 * 24 * 150


def test_lidar_revolutions_are_sent_as_bursts(emulator, sinks):
    rx = sinks()
    sim = emulator({"ego": {"position": [0.0, 0.0]}}, lidar_port=rx.port, lidar_model="VLP16")
    per_step = []
    for _ in range(50):                        # one simulated second, 20 ms steps
        sim.step(1)
        per_step.append(rx.drain(0.02))
    # MORAI 25.S4: a whole revolution (75 packets of 24 firings, 0.2 deg apart) captured at once and sent
    # in one burst, 10 times a second at 600 rpm: at 20 ms (the first step), then every 100 ms
    counts = [len(d) for d in per_step]
    assert [i for i, c in enumerate(counts) if c] == [0] + [5 * k - 1 for k in range(1, 11)]
    assert set(counts) == {0, 75}
    for k, data in enumerate(d for d in per_step if d):
        stamps = {struct.unpack_from("<I", d, 1200)[0] for d in data}
        assert stamps == {k * 100000}          # every packet: the capture time, us past the hour
        az = [struct.unpack_from("<H", d, 2 + 100 * b)[0] for d in data for b in range(12)]
        assert az == [40 * i for i in range(900)]            # 0 .. 359.6 deg, 0.4 deg per block
        assert {d[1204] for d in data} == {0x37} and {d[1205] for d in data} == {0x22}
    snap = sim.snapshot().sensor_streams
    assert snap.lidar_packets == 11 * 75 and snap.lidar_revolutions == 11 and snap.lidar_skipped == 0
    assert snap.lidar_rpm == 600.0


def test_lidar_paced_sending_option():
    from morai_bridge.emu.sensors import Mount, Scene, VelodyneSensor
    sensor = VelodyneSensor("VLP16", 600.0, 100.0, Mount(z=1.9), burst=False)
    scene = lambda t: Scene(t, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0), ())   # noqa: E731
    sensor.reset_clock(0)
    per_step = [sensor.update(scene(k * 20_000_000)) for k in range(1, 51)]
    # sent as the firings happen: 24 firings of 55.296 us per packet -> 753.6 per second
    assert sum(map(len, per_step)) == 1_000_000_000 // (24 * 55_296)
    assert {len(p) for p in per_step} <= {15, 16}
    data = [d for p in per_step for d in p]
    stamps = [struct.unpack_from("<I", d, 1200)[0] for d in data]
    assert stamps == [k * 24 * 55_296 // 1000 for k in range(len(data))]   # each packet's first firing
    az = np.array([struct.unpack_from("<H", d, 2 + 100 * b)[0] for d in data for b in range(12)])
    steps = np.diff(az) % 36000
    assert np.all((steps >= 39) & (steps <= 41))   # 2 firings of ~0.2 deg per block, no gap
    assert abs(sensor.rpm - 600.0) < 0.3 and sensor.columns == 1808


# ----------------------------------------------------------------------------- camera

def frames_and_boxes(datagrams, header="v24"):
    asm = camera.FrameAssembler(header)
    frames, boxes = [], []
    for d in datagrams:
        assert len(d) == camera.DATAGRAM_SIZE
        kind = camera.classify(d)
        if kind == "image":
            f = asm.push(d)
            if f is not None:
                frames.append(f)
        else:
            assert kind == "box"
            boxes.append(camera.decode_boxes(d, form=header))
    assert asm.malformed == 0 and asm.frames_dropped == 0
    return frames, boxes


def pinhole(width, height, fov_deg):
    f = (width / 2) / math.tan(math.radians(fov_deg) / 2)
    return lambda p: (f * p[0] / p[2] + width / 2, f * p[1] / p[2] + height / 2)


def optical(points_world, cam_origin, cam_yaw_deg):
    """Map -> camera optical frame (x right, y down, z forward) for a level camera."""
    body = to_local(points_world, cam_origin, cam_yaw_deg)     # x fwd, y left, z up
    return np.stack([-body[:, 1], -body[:, 2], body[:, 0]], axis=1)


def patch(img, u, v, r=3):
    a = np.asarray(img, dtype=float)[int(v) - r:int(v) + r + 1, int(u) - r:int(u) + r + 1]
    return a.reshape(-1, 3).mean(axis=0)


def close_to(rgb, expected, tol=22):
    return all(abs(a - b) <= tol for a, b in zip(rgb, expected))


VEHICLE_SCENE = {
    "ego": {"position": [2.0, 1.0], "yaw_deg": 30.0},
    # 15 m ahead of the ego on its heading, turned to face it; a pedestrian to the far right
    "vehicles": [{"id": 3, "position": [2.0 + 15 * math.cos(math.radians(30)),
                                        1.0 + 15 * math.sin(math.radians(30))],
                  "yaw_deg": 210.0, "size": [4.6, 1.9, 1.5]}],
}


def test_camera_frame_size_colours_and_box_projection(emulator, sinks):
    rx = sinks()
    sim = emulator(VEHICLE_SCENE, camera_port=rx.port, camera_hz=10.0)
    run(sim, 5, rx)                           # the first frame is due at 0.1 s
    frames, boxes = frames_and_boxes(rx.drain())
    assert len(frames) == 1 and (frames[0].sec, frames[0].nsec) == (0, 100_000_000)
    img = Image.open(io.BytesIO(frames[0].jpeg))
    assert img.format == "JPEG" and img.size == (640, 480)   # MORAI's default camera
    img = img.convert("RGB")
    proj = pinhole(640, 480, 90.0)
    cam = np.array([2.0, 1.0, 0.0]) + rz(30.0) @ np.array([1.5, 0.0, 1.4])
    veh = VEHICLE_SCENE["vehicles"][0]
    corners = box_world_corners(veh["position"], 0.0, veh["yaw_deg"], veh["size"])
    # the vehicle's front face (+x: corners 1, 3, 5, 7) faces the camera, unshaded colour
    face_centre = optical(corners[[1, 3, 5, 7]].mean(axis=0)[None, :], cam, 30.0)[0]
    u, v = proj(face_centre)
    assert close_to(patch(img, u, v), ORANGE), patch(img, u, v)
    # sky at the top, ground at the bottom, neither where the box is not
    assert close_to(patch(img, 320, 10), SKY)
    bottom = np.median(np.asarray(img)[-3:, :, :].reshape(-1, 3), axis=0)
    assert close_to(bottom, GROUND, 15)
    assert not close_to(patch(img, u, v - 60), ORANGE)
    # the BOX datagram: same stamp, one object, corners in the optical frame, 2D box
    assert len(boxes) == 1
    b = boxes[0]
    assert (b.sec, b.nsec) == (0, 100_000_000) and len(b.objects) == 1
    obj = b.objects[0]
    expected = optical(corners, cam, 30.0)
    assert np.allclose(np.array(obj.corners), expected, atol=1e-3)
    uv = np.array([proj(p) for p in expected])
    rect = (max(0, uv[:, 0].min()), max(0, uv[:, 1].min()), min(640, uv[:, 0].max()),
            min(480, uv[:, 1].max()))
    assert np.allclose((obj.xmin, obj.ymin, obj.xmax, obj.ymax), rect, atol=1e-2)
    assert (obj.group_id, obj.class_id, obj.subclass_id) == (1, 1, 0)
    # the box's rectangle is orange inside, not outside
    assert close_to(patch(img, (rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2), ORANGE)
    assert not close_to(patch(img, rect[2] + 8, (rect[1] + rect[3]) / 2), ORANGE)


def test_camera_painters_order_and_clipped_box(emulator, sinks):
    # a pedestrian 6 m ahead hides part of a wide obstacle 12 m ahead; a car beside the camera
    # is cut by the image's left edge; an obstacle behind the camera is not in view
    rx = sinks()
    sim = emulator({"ego": {"position": [0.0, 0.0]},
                    "pedestrians": [{"id": 5, "from": [7.5, 0.0], "size": [0.6, 0.8, 1.8]}],
                    "obstacles": [{"id": 9, "position": [13.5, 0.0], "size": [1.0, 6.0, 2.0]},
                                  {"id": 10, "position": [-10.0, 0.0]}],
                    "vehicles": [{"id": 2, "position": [5.5, 6.0], "size": [4.6, 1.9, 1.5]}]},
                   camera_port=rx.port, camera_width=320, camera_height=240, camera_fov_deg=80)
    run(sim, 5, rx)
    frames, boxes = frames_and_boxes(rx.drain())
    img = Image.open(io.BytesIO(frames[0].jpeg)).convert("RGB")
    assert img.size == (320, 240)
    proj = pinhole(320, 240, 80.0)
    cam = np.array([1.5, 0.0, 1.4])
    ped_face = optical(np.array([[7.2, 0.0, 0.9]]), cam, 0.0)[0]       # centre of its rear face
    assert close_to(patch(img, *proj(ped_face)), MAGENTA)
    wall = optical(np.array([[13.0, 2.0, 1.0]]), cam, 0.0)[0]          # the obstacle beside it
    assert close_to(patch(img, *proj(wall)), CYAN)
    objs = {o.class_id: o for b in boxes for o in b.objects}
    assert set(objs) == {0, 1, 2} and len(objs[2].corners) == 8        # 3 in view, not id 10
    assert sum(len(b.objects) for b in boxes) == 3
    assert objs[0].group_id == 2 and objs[2].group_id == 3
    car = objs[1]
    assert car.xmin == 0.0 and car.xmax > 0.0                          # clipped at the left edge
    # every object's 2D box is the projection of its corners (those in front of the camera)
    for o in objs.values():
        c = np.array(o.corners)
        if np.all(c[:, 2] > 0.05):
            uv = np.array([proj(p) for p in c])
            assert np.allclose((o.xmin, o.ymin, o.xmax, o.ymax),
                               (max(0, uv[:, 0].min()), max(0, uv[:, 1].min()),
                                min(320, uv[:, 0].max()), min(240, uv[:, 1].max())), atol=1e-2)


def test_camera_no_box_datagram_without_objects_in_view_and_rate(emulator, sinks):
    rx = sinks()
    sim = emulator({"ego": {"position": [0.0, 0.0]},
                    "obstacles": [{"id": 1, "position": [-8.0, 0.0]}]},
                   camera_port=rx.port, camera_hz=25.0)
    run(sim, 50, rx)
    frames, boxes = frames_and_boxes(rx.drain(0.1))
    assert len(frames) == 25 and not boxes
    stamps = [f.sec * 10 ** 9 + f.nsec for f in frames]
    assert stamps == [40_000_000 * (k + 1) for k in range(25)]
    snap = sim.snapshot().sensor_streams
    assert (snap.camera_frames, snap.camera_box_datagrams, snap.camera_skipped) == (25, 0, 0)


def test_camera_legacy_header_and_boxes(emulator, sinks):
    rx = sinks()
    sim = emulator(VEHICLE_SCENE, camera_port=rx.port, camera_header="legacy")
    run(sim, 5, rx)
    frames, boxes = frames_and_boxes(rx.drain(), header="legacy")
    assert len(frames) == 1 and frames[0].sec is None
    Image.open(io.BytesIO(frames[0].jpeg)).load()
    veh = VEHICLE_SCENE["vehicles"][0]
    corners = box_world_corners(veh["position"], 0.0, veh["yaw_deg"], veh["size"])
    obj = boxes[0].objects[0]
    assert np.allclose(np.array(obj.corners), corners, atol=1e-3)     # map frame in this form
    cam = np.array([2.0, 1.0, 0.0]) + rz(30.0) @ np.array([1.5, 0.0, 1.4])
    proj = pinhole(640, 480, 90.0)
    expected = np.array([proj(p) for p in optical(corners, cam, 30.0)])
    assert np.allclose(np.array(obj.image_corners), expected, atol=1e-2)


# ----------------------------------------------------------------------------- 2D LiDAR

def ray_rect(origin, angle, centre, yaw_deg, length, width):
    """Distance along a 2D ray to an oriented rectangle (inf if missed), by its 4 edges."""
    c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    pts = [(centre[0] + c * dx - s * dy, centre[1] + s * dx + c * dy)
           for dx, dy in ((length / 2, width / 2), (-length / 2, width / 2),
                          (-length / 2, -width / 2), (length / 2, -width / 2))]
    dx, dy = math.cos(angle), math.sin(angle)
    best = math.inf
    for k in range(4):
        (ax, ay), (bx, by) = pts[k], pts[(k + 1) % 4]
        ex, ey = bx - ax, by - ay
        den = dx * ey - dy * ex
        if abs(den) < 1e-12:
            continue
        t = ((ax - origin[0]) * ey - (ay - origin[1]) * ex) / den
        u = ((ax - origin[0]) * dy - (ay - origin[1]) * dx) / den
        if t > 0 and 0 <= u <= 1:
            best = min(best, t)
    return best


def test_lidar2d_ranges_match_the_box_geometry(emulator, sinks):
    ego_yaw = 45.0
    mount = np.array([2.0, 0.0, 0.5])
    sensor = rz(ego_yaw) @ mount
    box = (sensor[0] + 4.0, sensor[1] + 1.0)                 # a 2 x 1.2 m box, turned 10 deg
    low = (sensor[0] - 3.0, sensor[1] + 0.0)                 # lower than the scan plane
    rx = sinks()
    sim = emulator({"ego": {"position": [0.0, 0.0], "yaw_deg": ego_yaw},
                    "obstacles": [{"id": 1, "position": list(box), "yaw_deg": 10.0,
                                   "size": [2.0, 1.2, 1.0]},
                                  {"id": 2, "position": list(low), "size": [1.0, 1.0, 0.3]}]},
                   lidar2d_port=rx.port, lidar2d_x=2.0, lidar2d_z=0.5, lidar2d_range_max=10.0)
    run(sim, 5, rx)
    data = rx.drain()
    assert len(data) == 1 and len(data[0]) == lidar2d.DATAGRAM_SIZE
    raw = lidar2d.decode_raw(data[0])
    hits = 0
    for i, (r, inten) in enumerate(zip(raw.ranges, raw.intensities)):
        angle = math.radians(ego_yaw + i)                    # sample i: i deg CCW from ahead
        t = ray_rect(sensor[:2], angle, box, 10.0, 2.0, 1.2)
        if t <= 10.0:
            hits += 1
            assert abs(r - t) <= 0.0011, (i, r, t)
            assert inten == 200
        else:
            assert r == 10.0 and inten == 0, (i, r)
    assert 15 < hits < 60
    # the codec's default LaserScan view agrees: sample i is at angle i deg (angle_min -180)
    scan = lidar2d.decode_scan(data[0])
    assert all(scan.ranges[(180 + i) % 360] == raw.ranges[i] for i in range(360))


def test_lidar2d_rate_and_counters(emulator, sinks):
    rx = sinks()
    sim = emulator({"ego": {"position": [0.0, 0.0]}}, lidar2d_port=rx.port, lidar2d_hz=5.0)
    run(sim, 50, rx)
    data = rx.drain()
    assert len(data) == 5
    assert all(r == 10.0 for d in data for r in lidar2d.decode_raw(d).ranges)
    assert sim.snapshot().sensor_streams.lidar2d_scans == 5


# ----------------------------------------------------------------------------- integration

def test_deterministic_runs_give_identical_sensor_streams(emulator, sinks):
    scenario = dict(VEHICLE_SCENE, pedestrians=[{"id": 4, "from": [8.0, 4.0], "to": [8.0, 9.0],
                                                  "wander_m": 0.5}])
    runs = []
    for _ in range(2):
        cam, lid, scan = sinks(), sinks(), sinks()
        sim = emulator(scenario, camera_port=cam.port, lidar_port=lid.port,
                       lidar2d_port=scan.port, seed=3)
        run(sim, 20, cam, lid, scan)
        runs.append((cam.drain(), lid.drain(), scan.drain()))
    assert [len(x) for x in runs[0]] == [len(x) for x in runs[1]]
    assert all(len(x) > 0 for x in runs[0])
    assert runs[0] == runs[1]


def test_sensors_are_off_by_default(emulator):
    sim = emulator({"ego": {"position": [0.0, 0.0]}})
    assert sim.sensors is None and sim.snapshot().sensor_streams is None
    cfg = SimConfig()
    assert (cfg.camera_port, cfg.lidar_port, cfg.lidar2d_port) == (0, 0, 0)


@pytest.mark.parametrize("field, bad", [
    ("lidar_model", {"lidar_port": 2368, "lidar_model": "HDL99"}),
    ("lidar_max_range", {"lidar_port": 2368, "lidar_max_range": 200.0}),
    ("camera_header", {"camera_header": "v99"}), ("camera_fov_deg", {"camera_fov_deg": 180.0}),
    ("camera_hz", {"camera_hz": 0.0}), ("camera_width", {"camera_width": 1}),
    ("camera_jpeg_quality", {"camera_jpeg_quality": 0}), ("lidar_rpm", {"lidar_rpm": 5000.0}),
    ("lidar2d_range_max", {"lidar2d_range_max": 70.0}), ("camera_port", {"camera_port": 70000}),
    ("lidar_x", {"lidar_x": float("nan")}),
])
def test_invalid_sensor_options_are_refused(field, bad):
    SimConfig(**{k: v for k, v in bad.items() if k != field}).check()   # only `field` is wrong
    with pytest.raises(ValueError) as e:
        SimConfig(**bad).check()
    assert field in str(e.value)


def test_cli_flags():
    args = _parser().parse_args(["--camera-port", "1232", "--lidar-port", "2368",
                                 "--lidar-model", "HDL32E", "--lidar2d-port", "2370",
                                 "--camera-pitch", "5"])
    assert (args.camera_port, args.lidar_port, args.lidar_model, args.lidar2d_port,
            args.camera_pitch) == (1232, 2368, "HDL32E", 2370, 5.0)


def test_real_time_loop_sends_every_sensor_from_its_own_thread(emulator, sinks):
    cam, lidar, scan = sinks(), sinks(), sinks()
    sim = emulator(VEHICLE_SCENE, camera_port=cam.port, lidar_port=lidar.port,
                   lidar_model="HDL32E", lidar2d_port=scan.port)
    sim.start()                                # real-time pacing of the deterministic clock
    assert any(w.name == "sim_emulator_sensors" for w in sim.workers)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        for sink in (cam, lidar, scan):
            sink.collect()
        r = sim.snapshot().sensor_streams
        if r.camera_frames >= 3 and r.lidar2d_scans >= 3:
            break
        time.sleep(0.005)
    sim.close()
    snap = sim.snapshot()
    r = snap.sensor_streams
    frames, boxes = frames_and_boxes(cam.drain())
    assert len(frames) >= 3 and len(boxes) >= 3
    packets = lidar.drain()
    assert len(packets) >= r.lidar_packets > 0
    pts = decode_all(packets, "HDL32E")
    assert len(pts) > 10000
    assert len(scan.drain()) >= 3
    # one revolution of 181 packets every 100 ms of simulated time, up to the last scene the sensor
    # thread took
    due = snap.time_ns // 100_000_000 + 1
    assert (due - 2) * 181 <= r.lidar_packets + r.lidar_skipped <= due * 181
    assert r.send_errors == 0 and r.scenes == snap.steps
