"""Points -> the data of a sensor_msgs/PointCloud2, as plain bytes (part of
:mod:`morai_bridge.wire.velodyne`).

:func:`pack_cloud` gives the ``data`` bytes and field list of ROSVEL's XYZIRT
cloud (ros-drivers/velodyne, velodyne_pointcloud pointcloudXYZIRT.cc): x, y, z,
intensity float32 at 0, 4, 8, 12; ring uint16 at 16; time float32 at 18;
point_step 22, little-endian, height 1.  :func:`serialized_cloud` gives the rest of
that PointCloud2 as ROS serializes it (everything after the header), so the ROS layer
writes the header it stamps and then these bytes.  No ROS imports.
"""
import struct
import threading
from typing import List, NamedTuple, Tuple

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


# ----------------------------------------------------------------------------- ROS serialization
# A serialized ROS message is its fields in .msg order, little-endian: uint32 length before a
# string or an array.  sensor_msgs/PointCloud2 after its header: height, width (uint32), fields
# (PointField: string name, uint32 offset, uint8 datatype, uint32 count), is_bigendian (uint8),
# point_step, row_step (uint32), data (uint8[]), is_dense (uint8).
_U32 = struct.Struct("<I")
_FIELD = struct.Struct("<IBI")
_FIELDS_SERIALIZED = _U32.pack(len(POINT_FIELDS)) + b"".join(
    _U32.pack(len(f.name)) + f.name.encode("ascii") + _FIELD.pack(f.offset, f.datatype, f.count)
    for f in POINT_FIELDS)
_SIZES = struct.Struct("<II")
_STEPS = struct.Struct("<BIII")


def serialized_cloud(pieces: List[bytes], width: int, is_dense: bool) -> List[bytes]:
    """The serialized sensor_msgs/PointCloud2 after its header, of an XYZIRT cloud of ``width``
    points whose data is ``pieces`` joined: byte strings to write one after the other (the
    pieces themselves are not copied)."""
    size = sum(len(p) for p in pieces)
    head = (_SIZES.pack(1, width) + _FIELDS_SERIALIZED
            + _STEPS.pack(0, POINT_STEP, POINT_STEP * width, size))
    return [head] + list(pieces) + [b"\x01" if is_dense else b"\x00"]
