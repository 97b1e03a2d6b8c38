"""MORAI SIM 3D LiDAR over UDP: Velodyne-format 1206-byte data packets, with numpy.

MORAI's 3D LiDAR sends the data packets of a real Velodyne sensor, one per UDP
datagram.  The package, in the order a packet travels (no ROS imports):

``models``     the sensor models as data (elevation tables, timing), packet constants
``decode``     :class:`VelodyneDecoder`: packets -> :class:`Points`; the facts, with
               their confidence tags, are in its docstring
``revolution`` :class:`RevolutionAssembler`: where a revolution ends (paced senders,
               MORAI's bursts)
``cloud``      :func:`pack_cloud`: points -> the bytes of an XYZIRT PointCloud2;
               :func:`serialized_cloud`: the message as ROS serializes it, after its header
``stream``     :class:`CloudStream`: datagrams in, one packed cloud per revolution out,
               decoded piece by piece while the packets arrive (what lidar_bridge runs)
``encode``     :func:`encode_packets`, :func:`packets_from_ranges`: the other way, for
               the emulator and the tests

The names below are the package's public API: ``from morai_bridge.wire import
velodyne as vel`` and ``vel.RevolutionAssembler`` etc.
"""
from ..sensor_errors import EncodeError, SensorDecodeError
from .cloud import FLOAT32, POINT_FIELDS, POINT_STEP, UINT16, CloudData, PointField, pack_cloud, serialized_cloud
from .decode import PACKET_TIMES, Points, VelodyneDecoder, decode_packets
from .encode import encode_packets, firing_step_deg, packets_from_ranges, scan_pattern
from .models import (AUX_HEADER_SEARCH, BLOCKS, DEFAULT_PORT, HOUR_US, LOWER_BANK, MODELS, PACKET_DTYPE, PACKET_SIZE,
                     RETURN_DUAL, RETURN_LAST, RETURN_STRONGEST, SLOTS, UPPER_BANK, VelodyneModel, get_model,
                     model_from_product_id)
from .revolution import Revolution, RevolutionAssembler
from .stream import CloudStream, IncrementalDecoder, Packed

__all__ = [
    "DEFAULT_PORT", "PACKET_SIZE", "BLOCKS", "SLOTS", "UPPER_BANK", "LOWER_BANK",
    "RETURN_STRONGEST", "RETURN_LAST", "RETURN_DUAL", "HOUR_US", "AUX_HEADER_SEARCH",
    "VelodyneModel", "MODELS", "get_model", "model_from_product_id", "PACKET_DTYPE",
    "Points", "VelodyneDecoder", "decode_packets", "PACKET_TIMES",
    "Revolution", "RevolutionAssembler",
    "PointField", "FLOAT32", "UINT16", "POINT_FIELDS", "POINT_STEP", "CloudData", "pack_cloud", "serialized_cloud",
    "CloudStream", "IncrementalDecoder", "Packed",
    "encode_packets", "packets_from_ranges", "scan_pattern", "firing_step_deg",
    "SensorDecodeError", "EncodeError",
]
