"""The emulated camera: a flat-shaded perspective view, JPEG over "MOR" datagrams, and "BOX" datagrams.

Rendering (PIL ``ImageDraw``, numpy for the geometry)
-----------------------------------------------------
* Pinhole camera at the mount pose, looking along the sensor's x axis:
  ``fx = fy = (width / 2) / tan(fov / 2)`` (``camera_fov_deg`` is horizontal),
  principal point ``(width / 2, height / 2)``: a point (X, Y, Z) of the optical
  frame (x right, y down, z forward) is at ``u = fx X / Z + width / 2``,
  ``v = fy Y / Z + height / 2`` (PIL's drawing coordinates).  Default 640 x 480,
  90 deg: fx = fy = 320, cx = 320, cy = 240, exactly MORAI's default camera
  (``cameraResWidth/Height`` 640 x 480, ``cameraFOV`` 90, ``focalLengthpixel``
  320, ``principalPoint`` 320 / 240 in the SensorInfo JSON MORAI saves, e.g.
  eriverOoO/heven-ad-2026 @4d26e0e ``ad_data/morai/SaveFile/Sensor/
  25.S4.MolitComp03/SensorInfo_2023_Hyundai_Ioniq5.json``, cameras 2 and 3), the
  bridge's CameraInfo defaults (ros/sensors/camera_ros.intrinsics) and MORAI's UDP
  example's projection (cx = w / 2, cy = h / 2).
* Sky (:data:`SKY`) above the horizon, ground (:data:`GROUND_COLOUR`) below it,
  with a 5 m grid of lines on the ground (within 60 m) so that motion is visible.
* Every object box (the ego's own excluded) is drawn as its visible faces
  (back faces culled), filled with the colour of its kind (:data:`COLOURS`) times
  a per-face shade (:data:`FACE_SHADE`: front/back 1.0, sides 0.8, top 0.65),
  objects painted far to near (painter's algorithm on the centre distance).
  Faces are clipped at 5 cm in front of the camera.  That is the whole model: no
  lighting, texture, shadows, lens distortion, exposure or motion blur, and two
  objects that interpenetrate may be painted in the wrong order.
* JPEG by PIL at ``camera_jpeg_quality``, sent with ``wire.camera.encode_frame``
  (datagrams padded to 65,000 bytes, every chunk stamped with the frame's
  simulated time, header form ``camera_header``).

Boxes ("BOX", ``wire.camera.encode_boxes``)
-------------------------------------------
One object per box whose (near-clipped) projection overlaps the image (a
frustum test: an object hidden behind another is still listed):

* ``v24`` form: the 8 corners in the camera OPTICAL frame (m), in binary-cube
  order (:data:`~.scene.CORNER_SIGNS`: bit 0 = the object's x, rear/front; bit 1
  = y, right/left; bit 2 = z, bottom/top); the 2D box = the min / max of the
  projected (near-clipped) box, clipped to the image (0..width, 0..height).
* ``legacy`` form: corners in the map frame, plus the 8 projected corners
  (corners behind the camera projected as if at 5 cm in front of it).
* group / class / subclass (:data:`BOX_CODES`; MORAI's tables are
  unpublished, these are ours): group 1 vehicle, 2 pedestrian, 3 obstacle;
  class = the Object Info ``obj_type`` (0 pedestrian, 1 vehicle, 2 obstacle);
  subclass 0.  Never all zero (MORAI's example stops at an all-zero entry).

Boxes are sent right after the frame's chunks with the same stamp, only when at
least one object is in view.  No ROS.
"""

import io
import math
import time
from typing import List, NamedTuple, Optional, Tuple

import numpy as np

from morai_bridge.wire import camera as wire_camera

from .scene import CORNER_SIGNS, Mount, Scene, SceneBoxes, box_corners, sensor_pose

__all__ = ["CameraSensor", "CameraFrame", "SKY", "GROUND_COLOUR", "GRID_COLOUR", "COLOURS",
           "FACE_SHADE", "FACES", "BOX_CODES", "face_colour", "NEAR_M", "OPTICAL_IN_SENSOR",
           "CORNER_SIGNS"]

SKY = (135, 190, 235)
GROUND_COLOUR = (88, 92, 88)
GRID_COLOUR = (150, 150, 140)
GRID_M = 5.0
GRID_RADIUS_M = 60.0
NEAR_M = 0.05
#: base colour per obj_type (the markers node's palette)
COLOURS = {1: (255, 128, 0), 0: (255, 0, 255), 2: (0, 217, 217)}
#: faces of a box: (corner indices in drawing order, local outward normal, shade)
FACES = (
    ((1, 3, 7, 5), (1.0, 0.0, 0.0), 1.0),     # front (+x)
    ((0, 4, 6, 2), (-1.0, 0.0, 0.0), 1.0),    # rear (-x)
    ((2, 6, 7, 3), (0.0, 1.0, 0.0), 0.8),     # left (+y)
    ((0, 1, 5, 4), (0.0, -1.0, 0.0), 0.8),    # right (-y)
    ((4, 5, 7, 6), (0.0, 0.0, 1.0), 0.65),    # top (+z)
    ((0, 2, 3, 1), (0.0, 0.0, -1.0), 0.5),    # bottom (-z)
)
FACE_SHADE = {"front": 1.0, "rear": 1.0, "left": 0.8, "right": 0.8, "top": 0.65, "bottom": 0.5}
#: (group, class, subclass) per obj_type; ours (MORAI's codes are unpublished)
BOX_CODES = {1: (1, 1, 0), 0: (2, 0, 0), 2: (3, 2, 0)}
#: columns = the optical axes (x right, y down, z forward) in the sensor frame (x fwd, y left, z up)
OPTICAL_IN_SENSOR = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


def face_colour(obj_type: int, shade: float) -> Tuple[int, int, int]:
    """The fill colour of a face of an object of ``obj_type`` with that shade."""
    base = COLOURS.get(obj_type, (200, 200, 200))
    return tuple(int(round(min(255.0, c * shade))) for c in base)


class CameraFrame(NamedTuple):
    """One rendered frame: stamp, JPEG bytes, the boxes in view, render time."""

    sec: int
    nsec: int
    jpeg: bytes
    boxes: Tuple[wire_camera.BoxObject, ...]
    render_ms: float


def _clip_near(poly: np.ndarray, near: float) -> np.ndarray:
    """Sutherland-Hodgman clip of a 3D polygon (K, 3) (optical frame) to z >= near."""
    out = []
    k = len(poly)
    for i in range(k):
        a, b = poly[i], poly[(i + 1) % k]
        ina, inb = a[2] >= near, b[2] >= near
        if ina:
            out.append(a)
        if ina != inb:
            s = (near - a[2]) / (b[2] - a[2])
            out.append(a + s * (b - a))
    return np.array(out).reshape(-1, 3)


def _clip_halfplane(pts: List[Tuple[float, float]], coef) -> List[Tuple[float, float]]:
    """Clip a 2D polygon to ``a u + b v + c <= 0``."""
    a, b, c = coef
    out = []
    k = len(pts)
    for i in range(k):
        p, q = pts[i], pts[(i + 1) % k]
        fp, fq = a * p[0] + b * p[1] + c, a * q[0] + b * q[1] + c
        if fp <= 0:
            out.append(p)
        if (fp <= 0) != (fq <= 0):
            s = fp / (fp - fq)
            out.append((p[0] + s * (q[0] - p[0]), p[1] + s * (q[1] - p[1])))
    return out


class CameraSensor:
    """One camera on the ego (see the module docstring).  Not thread-safe."""

    def __init__(self, width: int = 640, height: int = 480, fov_deg: float = 90.0,
                 quality: int = 80, header: str = "v24", mount: Mount = Mount()):
        if header not in wire_camera.HEADER_FORMS:
            raise ValueError(f"camera_header must be one of {sorted(wire_camera.HEADER_FORMS)}")
        if not (0.0 < fov_deg < 180.0):
            raise ValueError("camera_fov_deg must be in (0, 180)")
        from PIL import Image, ImageDraw   # only when a camera is configured
        self._image, self._draw = Image, ImageDraw
        self.width, self.height = int(width), int(height)
        self.fx = self.fy = (self.width / 2.0) / math.tan(math.radians(fov_deg) / 2.0)
        self.cx, self.cy = self.width / 2.0, self.height / 2.0
        self.quality = int(quality)
        self.header = header
        self.mount = mount
        self.near = NEAR_M

    # ------------------------------------------------------------------ geometry
    def optical_pose(self, ego) -> Tuple[np.ndarray, np.ndarray]:
        """(map-from-optical rotation, camera origin in the map) for an ego pose."""
        rot, origin = sensor_pose(ego, self.mount)
        return rot @ OPTICAL_IN_SENSOR, origin

    def project(self, pts: np.ndarray) -> np.ndarray:
        """(K, 3) optical-frame points with z > 0 -> (K, 2) pixel coordinates."""
        z = pts[:, 2]
        return np.stack([self.fx * pts[:, 0] / z + self.cx, self.fy * pts[:, 1] / z + self.cy], axis=1)

    # ------------------------------------------------------------------ rendering
    def render(self, scene: Scene, boxes: Optional[SceneBoxes] = None) -> CameraFrame:
        started = time.perf_counter()
        if boxes is None:
            boxes = SceneBoxes.of(scene)
        r_wo, origin = self.optical_pose(scene.ego)
        r_ow = r_wo.T
        img = self._image.new("RGB", (self.width, self.height), SKY)
        draw = self._draw.Draw(img)
        self._draw_ground(draw, r_wo, r_ow, origin)
        in_view = self._draw_boxes(draw, boxes, r_ow, origin)
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=self.quality)
        sec, nsec = divmod(int(scene.time_ns), 1_000_000_000)
        return CameraFrame(sec, nsec, buf.getvalue(), tuple(in_view),
                           1000.0 * (time.perf_counter() - started))

    def _draw_ground(self, draw, r_wo, r_ow, origin) -> None:
        if origin[2] <= 0.0:
            return
        # a pixel sees the ground when its ray points down: row 2 of map-from-optical
        # applied to ((u - cx) / fx, (v - cy) / fy, 1) is < 0 -- a half-plane of the image
        a, b, c = r_wo[2]
        coef = (a / self.fx, b / self.fy, c - a * self.cx / self.fx - b * self.cy / self.fy)
        w, h = self.width, self.height
        poly = _clip_halfplane([(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)], coef)
        if len(poly) >= 3:
            draw.polygon(poly, fill=GROUND_COLOUR)
        # grid lines on z = 0, within GRID_RADIUS_M of the camera
        gx0 = math.floor((origin[0] - GRID_RADIUS_M) / GRID_M) * GRID_M
        gy0 = math.floor((origin[1] - GRID_RADIUS_M) / GRID_M) * GRID_M
        count = int(2 * GRID_RADIUS_M / GRID_M) + 2
        lo_x, hi_x = origin[0] - GRID_RADIUS_M, origin[0] + GRID_RADIUS_M
        lo_y, hi_y = origin[1] - GRID_RADIUS_M, origin[1] + GRID_RADIUS_M
        segments = []
        for k in range(count):
            x = gx0 + k * GRID_M
            segments.append(((x, lo_y, 0.0), (x, hi_y, 0.0)))
            y = gy0 + k * GRID_M
            segments.append(((lo_x, y, 0.0), (hi_x, y, 0.0)))
        seg = np.array(segments, np.float64)                      # (S, 2, 3)
        opt = (seg - origin) @ r_ow.T                             # into the optical frame
        za, zb = opt[:, 0, 2], opt[:, 1, 2]
        keep = (za >= self.near) | (zb >= self.near)
        for (pa, pb), zz in zip(opt[keep], zip(za[keep], zb[keep])):
            if zz[0] < self.near:
                pa = pa + (self.near - zz[0]) / (zz[1] - zz[0]) * (pb - pa)
            elif zz[1] < self.near:
                pb = pb + (self.near - zz[1]) / (zz[0] - zz[1]) * (pa - pb)
            uv = self.project(np.stack([pa, pb]))
            draw.line([tuple(uv[0]), tuple(uv[1])], fill=GRID_COLOUR, width=1)

    def _draw_boxes(self, draw, boxes: SceneBoxes, r_ow, origin) -> List[wire_camera.BoxObject]:
        if not len(boxes):
            return []
        corners_w = box_corners(boxes)                            # (B, 8, 3) map
        corners_o = (corners_w - origin) @ r_ow.T                 # (B, 8, 3) optical
        dist = np.linalg.norm(boxes.centers - origin, axis=1)
        out = []
        w, h = self.width, self.height
        for b in np.argsort(-dist, kind="stable"):                # far to near
            co = corners_o[b]
            if not np.any(co[:, 2] >= self.near):
                continue
            kind = int(boxes.kinds[b])
            rot = boxes.rot[b]
            lo_u = lo_v = math.inf
            hi_u = hi_v = -math.inf
            for idx, normal, shade in FACES:
                poly = _clip_near(co[list(idx)], self.near)
                if len(poly) < 3:
                    continue
                uv = self.project(poly)
                lo_u, lo_v = min(lo_u, uv[:, 0].min()), min(lo_v, uv[:, 1].min())
                hi_u, hi_v = max(hi_u, uv[:, 0].max()), max(hi_v, uv[:, 1].max())
                # back-face culling: the outward normal must point toward the camera
                centre_w = corners_w[b][list(idx)].mean(axis=0)
                if float((rot @ np.asarray(normal)) @ (centre_w - origin)) >= 0.0:
                    continue
                draw.polygon([tuple(p) for p in uv], fill=face_colour(kind, shade))
            x0, y0 = max(0.0, lo_u), max(0.0, lo_v)
            x1, y1 = min(float(w), hi_u), min(float(h), hi_v)
            if not (x1 > x0 and y1 > y0):
                continue
            group, cls, sub = BOX_CODES.get(kind, (4, kind & 0xFF, 0))
            if self.header == "v24":
                corners = tuple(tuple(float(v) for v in p) for p in co)
                image = None
            else:
                corners = tuple(tuple(float(v) for v in p) for p in corners_w[b])
                clamped = co.copy()
                clamped[:, 2] = np.maximum(clamped[:, 2], self.near)
                image = tuple(tuple(float(v) for v in p) for p in self.project(clamped))
            out.append(wire_camera.BoxObject(corners, x0, y0, x1, y1, group, cls, sub, image))
        return out

    # ------------------------------------------------------------------ wire
    def datagrams(self, frame: CameraFrame) -> Tuple[List[bytes], List[bytes]]:
        """(image chunk datagrams, box datagrams) of a frame (no box datagram without boxes)."""
        chunks = wire_camera.encode_frame(frame.jpeg, frame.sec, frame.nsec, header=self.header)
        boxes = []
        if frame.boxes:
            boxes = wire_camera.encode_boxes(frame.boxes, frame.sec, frame.nsec, form=self.header)
        return chunks, boxes

