"""wire.velodyne.cloud: pack_cloud gives velodyne_pointcloud's PointCloud2 layout."""

import struct

from morai_bridge.wire import velodyne as vel
from morai_bridge.wire.velodyne import VelodyneDecoder
from velodyne_reference import as_rows, random_packets

# ----------------------------------------------------------------------------- PointCloud2

def test_pack_cloud_layout_of_velodyne_pointcloud():
    packets = random_packets("VLP16", 3, seed=8)
    pts = VelodyneDecoder("VLP16").decode(packets)
    cloud = vel.pack_cloud(pts)
    assert [tuple(f) for f in cloud.fields] == [("x", 0, 7, 1), ("y", 4, 7, 1), ("z", 8, 7, 1),
                                                ("intensity", 12, 7, 1), ("ring", 16, 4, 1),
                                                ("time", 18, 7, 1)]
    assert cloud.point_step == 22 and cloud.height == 1 and cloud.width == len(pts)
    assert cloud.row_step == 22 * len(pts) and len(cloud.data) == cloud.row_step
    assert cloud.is_bigendian is False and cloud.is_dense is True
    assert isinstance(cloud.data, bytes)
    rows = list(struct.iter_unpack("<ffffHf", cloud.data))
    assert rows == as_rows(pts)
    nan = vel.pack_cloud(VelodyneDecoder("VLP16", keep_zero=True).decode(packets))
    assert nan.is_dense is False and nan.width == 3 * 384
    empty = vel.pack_cloud(vel.Points.empty())
    assert empty.width == 0 and empty.data == b"" and empty.is_dense
    assert vel.pack_cloud(pts).data == cloud.data     # scratch buffer reused after a bigger one
