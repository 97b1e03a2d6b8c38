"""An EgoVehicleStatus class written independently of our generated code.

It stands in for a node built against someone else's morai_msgs: it declares
the type name and md5 of the built message set from the tables made from
upstream (test/data/msg_sets) and serialises the ROS wire format by hand with
struct, field by field as upstream's field list of that set has them.  If our .msg files differed from the public ones in md5 or layout, the
peers would refuse to connect or decode garbage.
"""
import json
import os
import struct

import genpy

from morai_bridge.ros import msg_set

_HERE = os.path.dirname(os.path.abspath(__file__))
_DATA = os.path.join(_HERE, '..', 'data', 'msg_sets')
# the built workspace's message set: its md5 from the table, its field list from upstream's
_TABLE = json.load(open(os.path.join(_DATA, msg_set.NAME + '.json')))['types']
_FIELDS = json.load(open(os.path.join(_DATA, msg_set.NAME + '.fields.json')))['types']['EgoVehicleStatus']['text']
#: float32 fields after heading: accel, brake, the front wheel angle, then what the set adds
N_FLOATS = sum(1 for line in _FIELDS.splitlines() if line.startswith('float32 '))
#: values: accel xyz, position xyz, velocity xyz, heading (float64), then the float32 fields
N_VALUES = 10 + N_FLOATS

_HEAD = struct.Struct('<3I')                       # header.seq, stamp.secs, stamp.nsecs
_BODY = struct.Struct('<i10d%df' % N_FLOATS)       # unique_id, the values


class ForeignEgoVehicleStatus(genpy.Message):
    _type = 'morai_msgs/EgoVehicleStatus'
    _md5sum = _TABLE[_type]['md5']
    _has_header = False   # we write header.seq ourselves
    _full_text = 'hand-written peer; see test/ros/foreign_ego.py'
    __slots__ = ['seq', 'secs', 'nsecs', 'frame_id', 'unique_id', 'values']
    _slot_types = ['uint32', 'uint32', 'uint32', 'string', 'int32', 'float64[]']

    def __init__(self, secs=0, nsecs=0, frame_id='', unique_id=0, values=None):
        self.seq = 0
        self.secs, self.nsecs, self.frame_id = secs, nsecs, frame_id
        self.unique_id = unique_id
        self.values = list(values) if values is not None else [0.0] * N_VALUES

    def serialize(self, buff):
        fid = self.frame_id.encode('utf-8')
        buff.write(_HEAD.pack(self.seq, self.secs, self.nsecs))
        buff.write(struct.pack('<I', len(fid)) + fid)
        buff.write(_BODY.pack(self.unique_id, *self.values))

    def deserialize(self, data):
        self.seq, self.secs, self.nsecs = _HEAD.unpack_from(data, 0)
        (n,) = struct.unpack_from('<I', data, 12)
        self.frame_id = data[16:16 + n].decode('utf-8')
        body = _BODY.unpack_from(data, 16 + n)
        if 16 + n + _BODY.size != len(data):
            raise genpy.DeserializationError(f'unexpected length {len(data)}')
        self.unique_id, self.values = body[0], list(body[1:])
        return self
