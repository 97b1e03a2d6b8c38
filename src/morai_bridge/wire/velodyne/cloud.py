"""Points -> the data of a sensor_msgs/PointCloud2, as plain bytes (part of
:mod:`morai_bridge.wire.velodyne`).

:func:`pack_cloud` gives the ``data`` bytes and field list of ROSVEL's XYZIRT
cloud (ros-drivers/velodyne, velodyne_pointcloud pointcloudXYZIRT.cc): x, y, z,
intensity float32 at 0, 4, 8, 12; ring uint16 at 16; time float32 at 18;
point_step 22, little-endian, height 1.  No ROS imports: the ROS layer puts
these bytes into the message as they are.
"""
import threading
from typing import NamedTuple, Tuple

import numpy as np

from .decode import Points


class PointField(NamedTuple):
    """sensor_msgs/PointField as plain data (datatype: 7 = FLOAT32, 4 = UINT16)."""

    name: str
    offset: int
    datatype: int
    count: int


FLOAT32 = 7
UINT16 = 4
#: Fields of ROSVEL's XYZIRT cloud (velodyne_pointcloud pointcloudXYZIRT.cc, fields
#: added back to back by PointCloud2Modifier: no padding).
POINT_FIELDS = (PointField("x", 0, FLOAT32, 1), PointField("y", 4, FLOAT32, 1),
                PointField("z", 8, FLOAT32, 1), PointField("intensity", 12, FLOAT32, 1),
                PointField("ring", 16, UINT16, 1), PointField("time", 18, FLOAT32, 1))
POINT_STEP = 22
_CLOUD_DTYPE = np.dtype({"names": [f.name for f in POINT_FIELDS],
                         "formats": ["<f4", "<f4", "<f4", "<f4", "<u2", "<f4"],
                         "offsets": [f.offset for f in POINT_FIELDS], "itemsize": POINT_STEP})


class CloudData(NamedTuple):
    """Everything of a sensor_msgs/PointCloud2 but its header, as plain data."""

    height: int
    width: int
    fields: Tuple[PointField, ...]
    is_bigendian: bool
    point_step: int
    row_step: int
    data: bytes
    is_dense: bool


_PACK_LOCAL = threading.local()
_PACK_SCRATCH_MAX = 1 << 20      # points; larger clouds use a throw-away buffer


def pack_cloud(points: Points) -> CloudData:
    """Pack points into the ``data`` of an unorganised XYZIRT PointCloud2
    (height 1, little-endian).  ``is_dense`` is False only if x holds NaN
    (``keep_zero=True``)."""
    n = len(points.x)
    scratch = getattr(_PACK_LOCAL, "rec", None)       # reused: fresh memory costs page faults
    if scratch is None or len(scratch) < n:
        scratch = np.empty(n, _CLOUD_DTYPE)
        if n <= _PACK_SCRATCH_MAX:
            _PACK_LOCAL.rec = scratch
    rec = scratch[:n]
    rec["x"] = points.x
    rec["y"] = points.y
    rec["z"] = points.z
    rec["intensity"] = points.intensity
    rec["ring"] = points.ring
    rec["time"] = points.time
    dense = not bool(np.isnan(points.x).any()) if n else True
    return CloudData(1, n, POINT_FIELDS, False, POINT_STEP, POINT_STEP * n, rec.tobytes(), dense)
