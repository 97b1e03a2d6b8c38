"""Inputs and the checks shared by the conversion tests (test_sim_to_ros).

:func:`inputs` gives receive-side codec messages: one per packet variant and one per stream
(morai_bridge.wire.udp.samples), the decodable test vectors, and 300 copies with odd floats
and random object lists; :func:`wire_inputs` randomises further (NaN, -0.0, inf, subnormals,
values beyond float32, integer extremes, 0 / 1 / 20 objects of every type, collision pairs
with and without a second vehicle, GGA / RMC with and without altitude, fix and position).
:func:`check_converters` checks, for each, the message of the converter of ros/udp_bridge/sim_to_ros
(``sim_to_ros.CONVERTERS``).  :data:`CASES` holds the converters' argument variants by hand; a
stream added later that goes straight to its converter ``(w, stamp, frame_id)`` (no receiver
method) is checked without an edit here.
"""
import io
import math
import random
import struct

import genpy
import rospy

from morai_bridge.ros.udp_bridge import sim_receive, sim_to_ros
from morai_bridge.wire.udp import streams, samples as udp_samples
from morai_bridge.wire import udp

import helpers

INT_EXTREMES = [0, -1, 1, 127, -128, 255, 32767, -32768, 65535, 2 ** 31 - 1, -2 ** 31, 2 ** 32 - 1]
FLOAT_ODD = [0.0, -0.0, 1.5, -2.25, float('nan'), -float('nan'), float('inf'), -float('inf'), 1e-310, 3.4e38,
             -3.5e38, 1e308, 5e-324]
NO_INT = ('sec', 'nsec', 'data_length')      # not in any published message
RECEIVED = (udp.EgoVehicleStatus, udp.ObjectInfo, udp.CollisionData, udp.GetTrafficLightStatus,
            udp.GetIntersectionStatus, udp.NpcVehicleCollision, udp.SimStatus, udp.NmeaSentence, udp.ImuData)

CASES = [  # (converter name, codec class, variants of the arguments after the packet and the stamp)
    ('ego_status', udp.EgoVehicleStatus, [('map',), ('map', -1), ('', 1), ('\u00fcber/base', -1)]),
    ('object_info', udp.ObjectInfo, [('map',), ('',), ('\u00fcber',)]),
    ('collision', udp.CollisionData, [('map',), ('',)]),
    ('traffic_light', udp.GetTrafficLightStatus, [('map',), ('',)]),
    ('intersection', udp.GetIntersectionStatus, [('map',), ('',)]),
    ('vehicle_collision', udp.NpcVehicleCollision, [('map',), ('',)]),
    ('sim_status', udp.SimStatus, [(rospy.Time(7, 8),), (rospy.Time(),), (genpy.Time(2 ** 32 - 1, 999999999),)]),
    ('gps', udp.NmeaSentence, [('gps', 1.0, 2.0, 33.0), ('gps',), ('', -0.0, float('nan'), None),
                               ('gps', 0.0, 0.0, float('inf'))]),
    ('imu', udp.ImuData, [('imu',), ('',)]),
]
CASES += [(s.name, s.classes[0], [('map',), ('',)]) for s in streams.FROM_SIM
          if not s.extension and s.name not in sim_receive.SimReceiver.METHODS and s.name not in {c[0] for c in CASES}]
#: converter name -> the converter: the plain streams' (sim_to_ros.CONVERTERS, the receiver calls them as they
#: are) and the ones the receiver's methods call (sim_to_ros.ego_status, ...)
FUNCTIONS = dict(sim_to_ros.CONVERTERS, ego_status=sim_to_ros.ego_status, object_info=sim_to_ros.object_info,
                 collision=sim_to_ros.collision, traffic_light=sim_to_ros.traffic_light,
                 sim_status=sim_to_ros.sim_status, gps=sim_to_ros.gps, imu=sim_to_ros.imu)


def _pick(rng, messages):
    """One of ``messages``: first a message class, each as likely (a stream with one sample is drawn as often as
    one with many variants and vectors, so every converter gets its share), then one of that class."""
    by_class = {}
    for m in messages:
        by_class.setdefault(type(m), []).append(m)
    return rng.choice(by_class[rng.choice(sorted(by_class, key=lambda c: c.__name__))])


def inputs():
    out = [m for _, m in udp_samples.per_variant()] + list(udp_samples.per_stream().values())
    for v in helpers.load_vectors('udp')['vectors']:
        try:
            out.append(udp.decode(bytes.fromhex(v['hex'])))
        except ValueError:
            pass
    rng = random.Random(7)

    def f():
        return rng.choice([0.0, -0.0, 1.5, -2.25, float('nan'), float('inf'), rng.uniform(-1e6, 1e6)])
    base = list(out)
    for _ in range(300):
        m = _pick(rng, base)
        if hasattr(m, '_replace') and not isinstance(m, udp.NmeaSentence):
            m = m._replace(**{k: f() for k in m._fields if isinstance(getattr(m, k), float)})
        if isinstance(m, udp.ObjectInfo):
            m = m._replace(objects=tuple(udp.ObjectRecord(
                obj_id=rng.randint(-5, 5), obj_type=rng.choice([-1, 0, 1, 2, 3]), pos_x=f(), heading=f(),
                vel_y=f(), size_z=f(), acc_x=f(), link_id='L') for _ in range(rng.randint(0, 20))))
        out.append(m)
    return out


def wire_inputs(seed=11, count=600):
    """Randomised receive-side codec messages (see the module docstring); some integers lie
    beyond their message field: then genpy refuses to serialize the message."""
    rng = random.Random(seed)
    base = [m for m in inputs() if isinstance(m, RECEIVED)]
    nmea = [m for m in base if isinstance(m, udp.NmeaSentence)]

    def f():
        return rng.choice(FLOAT_ODD + [rng.uniform(-1e6, 1e6), rng.uniform(-1e300, 1e300)])

    def i():
        return rng.choice(INT_EXTREMES + [rng.randint(-1000, 1000)])

    def fields(rec, floats_only=False):
        out = {}
        for k in rec._fields:
            v = getattr(rec, k)
            if isinstance(v, float) or (isinstance(v, int) and not isinstance(v, bool) and k not in NO_INT):
                if isinstance(v, float) or (rng.random() < 0.5 and k.startswith(('pos', 'vel', 'acc', 'size',
                                                                                  'heading', 'intersection_s'))):
                    out[k] = f() if rng.random() < 0.7 else v
                elif not floats_only and rng.random() < 0.3:
                    out[k] = i()
        return rec._replace(**out)

    def obj(cls, t=None):
        r = cls(*([0] * len(cls._fields)))
        kw = {k: f() for k in cls._fields if k not in ('obj_id', 'obj_type', 'link_id')}
        kw['obj_id'] = rng.choice([rng.randint(-5, 5), rng.choice(INT_EXTREMES)])
        kw['obj_type'] = rng.choice([-1, 0, 1, 2, 3, 7]) if t is None else t
        if 'link_id' in cls._fields:
            kw['link_id'] = rng.choice(['', 'L', 'A119BS010000'])
        return r._replace(**kw)
    out = []
    for _ in range(count):
        m = fields(rng.choice(nmea) if rng.random() < 0.1 else _pick(rng, base), floats_only=rng.random() < 0.5)
        if isinstance(m, udp.ObjectInfo):
            t = rng.choice([None, -1, 0, 1, 2, 3])
            m = m._replace(objects=tuple(obj(udp.ObjectRecord, t) for _ in range(rng.choice([0, 1, 2, 5, 20]))))
        elif isinstance(m, udp.CollisionData):
            m = m._replace(records=tuple(udp.CollisionRecord(rng.choice([-1, 0, 1, 2, 5]), rng.choice(INT_EXTREMES),
                                                             f(), f(), f(), f(), f(), f())
                                         for _ in range(rng.choice([0, 1, 2, 20]))))
        elif isinstance(m, udp.NpcVehicleCollision):
            m = m._replace(pairs=tuple((obj(udp.NpcCollisionRecord), obj(udp.NpcCollisionRecord)
                                        if rng.random() < 0.6 else None) for _ in range(rng.choice([0, 1, 2, 5]))))
        elif isinstance(m, udp.GetTrafficLightStatus):
            m = m._replace(traffic_light_index=rng.choice(['', 'C119BS010007', 'x' * 12, '\u00e9t\u00e9']))
        elif isinstance(m, udp.NmeaSentence):
            m = m._replace(sentence_type=rng.choice(['GGA', 'RMC']), latitude=rng.choice([None, f(), 37.5]),
                           longitude=rng.choice([None, f(), 127.0]), altitude=rng.choice([None, f(), 29.1]),
                           fix_quality=rng.choice([None, 0, 1, 2, 6]), status=rng.choice([None, 'A', 'V']))
        out.append(m)
    return out


def same(a, b, path):
    """a and b equal slot by slot, with the same value types (NaN equal to NaN)."""
    if type(a) is not type(b):
        raise AssertionError(f'{path}: {type(a).__name__} vs {type(b).__name__}')
    if isinstance(a, (genpy.Message, genpy.TVal)):
        for s in a.__slots__:
            same(getattr(a, s), getattr(b, s), path + '.' + s)
    elif isinstance(a, list):
        assert len(a) == len(b), f'{path}: {len(a)} vs {len(b)} items'
        for k, (x, y) in enumerate(zip(a, b)):
            same(x, y, '%s[%d]' % (path, k))
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), path
    else:
        assert a == b, f'{path}: {a!r} vs {b!r}'


def serialized(m):
    b = io.BytesIO()
    m.serialize(b)
    return b.getvalue()


def complete(m, path):
    """Every field of genpy message ``m``, at every depth, is set and holds a value of its declared
    type (the converters build messages field by field on object.__new__: a field left out would
    only show when rospy serializes it)."""
    for slot, kind in zip(m.__slots__, m._slot_types):
        where = path + '.' + slot
        try:
            v = getattr(m, slot)
        except AttributeError:
            raise AssertionError(f'{where}: not set') from None
        if kind.endswith(']'):
            assert isinstance(v, (list, tuple)), f'{where}: {v!r} is not an array'
            for k, x in enumerate(v):
                if isinstance(x, genpy.Message):
                    complete(x, '%s[%d]' % (where, k))
        elif isinstance(v, genpy.Message):
            assert v._type == kind or kind.endswith('/' + v._type.split('/')[-1]), f'{where}: {v._type} is not {kind}'
            complete(v, where)
        elif kind in ('time', 'duration'):
            assert isinstance(v, genpy.TVal), f'{where}: {v!r}'
        elif kind == 'string':
            assert isinstance(v, str), f'{where}: {v!r} is not a string'
        elif kind.startswith(('float', 'int', 'uint', 'bool', 'byte', 'char')):
            assert isinstance(v, (int, float)) and not isinstance(v, bool), f'{where}: {v!r} is not a {kind}'
        else:
            raise AssertionError(f'{where}: a {kind} field holds {v!r}')


def check_converters(messages, seqs=(0, 1, 4711, 2 ** 32 - 1)):
    """For every receive-side codec message and every argument variant: each message the converter
    gives is complete (:func:`complete`), has the stamp and frame id it was given, and serializes to
    bytes that deserialize and serialize back to the same bytes; or genpy refuses it (a value
    beyond its field).  Returns {converter name: conversions checked}."""
    n = {}
    k = 0
    for w in messages:
        for name, wcls, variants in CASES:
            if type(w) is not wcls:
                continue
            for extra in variants:
                k += 1
                stamp = (rospy.Time(1, 2), genpy.Time(3, 4), rospy.Time(2 ** 32 - 1, 999999999))[k % 3]
                got = FUNCTIONS[name](w, stamp, *extra)
                for m in (got if name == 'gps' else [got]):
                    if m is None:
                        continue
                    complete(m, name)
                    assert m.header.stamp is stamp, name
                    if name != 'sim_status':
                        assert m.header.frame_id == extra[0], name
                    m.header.seq = seqs[k % len(seqs)]
                    try:
                        data = serialized(m)
                    except (genpy.SerializationError, struct.error, OverflowError, ValueError, TypeError):
                        continue        # a value beyond its field: rospy refuses to publish it
                    assert serialized(type(m)().deserialize(data)) == data, f'{name} of {w!r}'
                if name == 'gps' and got[0] is not None:
                    assert got[0].header is got[1].header, 'gps: one header for both messages'
                n[name] = n.get(name, 0) + 1
    return n
