"""Decoded UDP messages pickle (multiprocessing queues, caches, test fixtures).

The message classes are made at import with types.new_class (wire/udp/schema.py); on Python 3.8
typing.NamedTuple ignored the namespace's __module__ there, so every class claimed to live in
'types' and pickle.dumps raised PicklingError.  The py38 test layer runs this file on a real 3.8.
"""

import pickle
import sys

import pytest

import helpers
from morai_bridge.wire.udp import lockstep
from morai_bridge.wire import udp

VECTORS = helpers.load_vectors("udp")["vectors"]


def _classes():
    out = list(udp.MESSAGE_CLASSES) + list(udp.RECORD_CLASSES) + list(lockstep.MESSAGE_CLASSES)
    assert len(out) > 20
    return out


@pytest.mark.parametrize("cls", _classes(), ids=lambda c: c.__name__)
def test_class_lives_where_it_says(cls):
    module = sys.modules[cls.__module__]
    assert cls.__module__ in ("morai_bridge.wire.udp", "morai_bridge.wire.udp.lockstep", "morai_bridge.wire.udp.nmea")
    assert getattr(module, cls.__qualname__) is cls


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_decoded_vector_pickles(vector):
    msg = udp.decode(bytes.fromhex(vector["hex"]))
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(msg, protocol))
        assert type(back) is type(msg) and back == msg
        assert udp.encode(back) == udp.encode(msg)


def test_records_and_emulator_messages_pickle():
    objects = udp.decode(udp.encode(udp.make(udp.ObjectInfo, sec=3, objects=tuple(
        udp.ObjectRecord(obj_id=i + 1, obj_type=1, pos_x=float(i)) for i in range(5)))))
    back = pickle.loads(pickle.dumps(objects))
    assert back == objects and type(back.objects[0]) is udp.ObjectRecord
    for cls in lockstep.MESSAGE_CLASSES:
        msg = lockstep.decode(lockstep.encode(lockstep.make(cls)))
        assert pickle.loads(pickle.dumps(msg)) == msg
