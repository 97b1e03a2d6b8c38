"""Velodyne datagrams -> packed clouds, one per revolution, decoded while they arrive (part of
:mod:`morai_bridge.wire.velodyne`).

:class:`CloudStream` is the receive side of a 3D LiDAR in one object: every
datagram goes to a :class:`~morai_bridge.wire.velodyne.revolution.RevolutionAssembler`
(which decides where revolutions end) whose decoder is an
:class:`IncrementalDecoder`: whenever the receive loop has nothing to read, it
decodes the packets of the open revolution received so far (at least ``chunk``
of them) and packs them (:func:`~morai_bridge.wire.velodyne.cloud.pack_cloud`),
so that when a revolution ends only its last piece is left to decode.  Decoding
a whole HDL-32E revolution (181 packets, 62,000 points) at its end takes
milliseconds during which the receive loop waits; piece by piece, the cut
costs a fraction of a millisecond (docs/sensors_ros.md has the figures).  A
burst read without a pause (MORAI sends each revolution as one) is decoded at
once when it ends: that is its cheapest decode.

The result is byte-identical to decoding the revolution in one batch and
packing it (test/unit/wire/velodyne/test_stream.py); the assembler stays the authority on
where revolutions end, and any doubt falls back to the one-batch decode.  No ROS
imports: ros/sensors/lidar_ros.py only stamps and publishes what :meth:`CloudStream.add`
returns (:meth:`CloudStream.serialized`: the cloud as ROS serializes it, after the header), and
reports :meth:`CloudStream.counters`.
"""
import struct
from typing import List, NamedTuple, Optional

import numpy as np

from .cloud import POINT_FIELDS, POINT_STEP, CloudData, pack_cloud, serialized_cloud
from .decode import Points, VelodyneDecoder
from .models import HOUR_US, PACKET_DTYPE, AUTO_STEP_MAX_US, model_from_product_id
from .revolution import Revolution, RevolutionAssembler

_FIELDS = ('x', 'y', 'z', 'intensity', 'ring', 'time')
_STAMP = struct.Struct('<I')


def _concat(parts):
    if len(parts) == 1:
        return parts[0]
    return Points(*[np.concatenate([getattr(p, f) for p in parts]) for f in _FIELDS])


class JoinedPoints(Points):
    """:class:`~morai_bridge.wire.velodyne.decode.Points` of pieces, joined when a field is first read
    (the node itself only needs the packed cloud and the count)."""

    __slots__ = ('_parts', '_count', '_joined')

    def __init__(self, parts):
        self._parts = parts
        self._count = sum(len(p) for p in parts)
        self._joined = None

    def __len__(self):
        return self._count

    def _field(self, name):
        if self._joined is None:
            self._joined = _concat(self._parts)
        return getattr(self._joined, name)

    x = property(lambda self: self._field('x'))
    y = property(lambda self: self._field('y'))
    z = property(lambda self: self._field('z'))
    intensity = property(lambda self: self._field('intensity'))
    ring = property(lambda self: self._field('ring'))
    time = property(lambda self: self._field('time'))


def _tail(points, start):
    return Points(*[getattr(points, f)[start:] for f in _FIELDS])


class IncrementalDecoder:
    """A decoder for :class:`~morai_bridge.wire.velodyne.revolution.RevolutionAssembler` that decodes the
    pending revolution ``chunk`` packets at a time while they arrive.

    The assembler calls :meth:`check` on every datagram and, when a revolution ends,
    :meth:`decode` on its packets (all those checked since the previous decode but the newest,
    which opens the next revolution; all of them after a burst or predictive cut, or on a flush).
    In between, whenever the receive loop has nothing to read, :meth:`advance` decodes the packets
    checked so far as one piece once there are ``chunk`` of them; :meth:`decode` then only decodes
    the rest and joins the pieces.  Each piece is decoded together with the revolution's first
    packet (whose points are then cut off), with point times forced to the mode a one-batch decode
    would choose (device timestamps, nominal or snapshot times, see
    :mod:`~morai_bridge.wire.velodyne.decode`), so the points, and the packed cloud (:attr:`pieces`,
    ``pack_cloud`` of each piece; :attr:`cloud` joins them), are bit for bit those of decoding the
    revolution at once.  When that cannot be guaranteed (``packet_time='host'``, device timestamps
    that stop being plausible part-way, a change of point-time mode, packets other than those
    seen), :meth:`decode` decodes the batch at once (``fallbacks``).

    Why idle time: a paced sender leaves the loop idle between packets, so the revolution is decoded
    as it arrives and its end costs one piece.  A burst arrives faster than it is read; decoding
    pieces between its packets would only delay reading the rest, and the sum of the pieces costs more
    than one batch, so a burst read without a pause is decoded at once when it ends, and one that
    leaves pauses uses them.
    """

    def __init__(self, options, chunk=16):
        """``options``: the keyword arguments of :class:`VelodyneDecoder` (model, packet_time, ...)."""
        options = dict(options)
        self.packet_time = options.setdefault('packet_time', 'auto')
        self.inner = VelodyneDecoder(**options)
        self.model = self.inner.model
        self.chunk = int(chunk)
        self._decoders = {mode: VelodyneDecoder(**dict(options, packet_time=packet_time))
                          for mode, packet_time in (('device', 'device'), ('nominal', 'host'),
                                                    ('snapshot', 'snapshot'))}
        #: callable -> True when the revolution being received will be decoded with snapshot point times
        #: (:class:`CloudStream` sets it to its assembler's ``snapshot_now``); None: never
        self.snapshot_hint = None
        self.incremental = 0        # revolutions of which pieces were decoded before their end
        self.at_end = 0             # revolutions decoded in one piece at their end (no idle time before it)
        self.fallbacks = 0          # revolutions decoded at once because pieces could not be used (chunk > 0)
        self.pieces = None          # packed pieces of the last decode (None after a one-batch decode)
        self.dense = True           # no NaN point in them
        self.points = None          # the Points object they belong to
        self._reset([])

    def _reset(self, seen):
        self._seen = seen           # packets checked since the last decode
        self._done = 0              # of which the first _done are decoded into _parts
        self._parts = []            # (Points, packed bytes, dense) per piece
        self._n0 = None             # points of the first packet (cut off the pieces after the first)
        self._mode = None           # point-time mode the pieces were decoded with
        self._steps = []            # device-time steps (us) between consecutive seen packets
        self._ok = self.chunk > 0 and self.packet_time != 'host'
        for i in range(1, len(seen)):
            self._step(i)

    @property
    def cloud(self):
        """CloudData of the last decode when it was done piece by piece, else None."""
        if self.pieces is None:
            return None
        n = len(self.points)
        return CloudData(1, n, POINT_FIELDS, False, POINT_STEP, POINT_STEP * n, b''.join(self.pieces), self.dense)

    # ------------------------------------------------------------------ the decoder interface

    def is_dual(self, rec):
        return self.inner.is_dual(rec)

    def check(self, datagram):
        packet = self.inner.check(datagram)
        seen = self._seen
        seen.append(packet)
        if len(seen) > 1:
            self._step(len(seen) - 1)
        return packet

    def discard_last(self):
        """Forget the packet :meth:`check` took last: the assembler did not add it (a duplicate, a
        late packet).  Called right after that check, before any :meth:`advance`."""
        seen = self._seen
        if seen:
            seen.pop()
            if self._steps and len(self._steps) >= len(seen):
                self._steps.pop()
            if self._done > len(seen):
                self._ok = False

    def advance(self):
        """Decode, as one piece, the packets of the pending revolution not decoded yet, if there are at least
        ``chunk`` of them.  Call it when the receive loop has nothing to read (:meth:`CloudStream.idle`): every
        packet checked since the last :meth:`decode` belongs to the revolution still open."""
        if self._ok and len(self._seen) - self._done >= self.chunk:
            self._piece(len(self._seen))

    def decode(self, packets, stamps=None, packet_time=None):
        rec = packets if isinstance(packets, np.ndarray) else None
        n = len(packets)
        seen = self._seen
        want = 'snapshot' if (packet_time or self.packet_time) == 'snapshot' else None
        mode = want or self._mode_for(n, False)
        exact = (self._ok and rec is not None and n >= 1 and n in (len(seen) - 1, len(seen))
                 and rec[0].tobytes() == seen[0] and rec[n - 1].tobytes() == seen[n - 1]
                 and packet_time in (None, 'snapshot', self.packet_time) and self._compatible(mode))
        if exact:
            if self._done < n:
                self._piece(n, mode, rec)
            exact = self._ok and self._compatible(mode)
        if exact:
            points = JoinedPoints([p for p, _, _ in self._parts])
            self.pieces = [d for _, d, _ in self._parts]
            self.dense = all(dense for _, _, dense in self._parts)
            if len(self._parts) > 1:
                self.incremental += 1
            else:
                self.at_end += 1
        else:
            points = self.inner.decode(packets, stamps, packet_time)
            self.pieces = None
            if self.chunk > 0:
                self.fallbacks += 1
        self.points = points
        self._reset(seen[n:] if n <= len(seen) else [])
        return points

    # ------------------------------------------------------------------ pieces

    def _step(self, i):
        seen = self._seen
        step = (_STAMP.unpack_from(seen[i], 1200)[0] - _STAMP.unpack_from(seen[i - 1], 1200)[0]) % HOUR_US
        self._steps.append(step)

    def _mode_for(self, n, hint=True):
        """Point-time mode of a one-batch decode of the first n seen packets (with ``hint``: snapshot
        when :attr:`snapshot_hint` says the revolution will be decoded so)."""
        if self.packet_time == 'snapshot' or (hint and self.snapshot_hint is not None and self.snapshot_hint()):
            return 'snapshot'
        if self.packet_time == 'device':
            return 'device'
        if self.packet_time == 'nominal' or n < 2:
            return 'nominal'
        return 'device' if all(0 < s <= AUTO_STEP_MAX_US for s in self._steps[:n - 1]) else 'nominal'

    def _compatible(self, mode):
        """Whether the pieces decoded so far are those of a one-batch decode in ``mode``: the same mode,
        or only the first packet, whose times are the same in device and nominal mode."""
        if self._mode is None or self._mode == mode:
            return True
        return self._done <= 1 and {mode, self._mode} <= {'device', 'nominal'}

    def _piece(self, end, mode=None, rec=None):
        """Decode seen[_done:end] with the mode the first ``end`` packets call for (or ``mode``); ``rec``:
        those ``end`` packets already stacked (PACKET_DTYPE records), when at hand."""
        mode = mode or self._mode_for(end)
        if not self._compatible(mode):
            self._ok = False          # device times stopped being plausible, or burst detection changed
            return
        self._mode = mode
        seen = self._seen
        dec = self._decoders[mode]
        first = np.frombuffer(seen[0], dtype=PACKET_DTYPE)
        period = self.inner.packet_periods_s[bool(self.inner.is_dual(first))]
        start = self._done
        if start == 0:
            batch = rec if rec is not None and len(rec) == end else seen[:end]
            stamps = [i * period for i in range(end)] if mode == 'nominal' else None
            points = dec.decode(batch, stamps)
        else:
            if self._n0 is None:
                self._n0 = len(dec.decode(seen[:1], [0.0] if mode == 'nominal' else None))
            if mode == 'device' and sum(self._steps[:start]) != (
                    _STAMP.unpack_from(seen[start], 1200)[0] - _STAMP.unpack_from(seen[0], 1200)[0]) % HOUR_US:
                self._ok = False      # device times wrapped oddly: the one-batch sum differs
                return
            batch = [seen[0]] + seen[start:end]
            stamps = [0.0] + [i * period for i in range(start, end)] if mode == 'nominal' else None
            points = _tail(dec.decode(batch, stamps), self._n0)
        cloud = pack_cloud(points)
        self._parts.append((points, cloud.data, cloud.is_dense))
        self._done = end


class Packed(NamedTuple):
    """A revolution and its cloud data: ``pieces`` joined are ``pack_cloud(revolution.points).data``."""

    revolution: Revolution
    pieces: List[bytes]
    width: int
    is_dense: bool


class CloudStream:
    """Velodyne datagrams in, one packed cloud per revolution out (module docstring).

    ``decoder_options``: keyword arguments of :class:`VelodyneDecoder` (model, return_mode,
    packet_time, ...); ``cut_angle``, ``max_packets``, ``burst``, ``burst_gap``: those of
    :class:`RevolutionAssembler`; ``decode_chunk``: packets per piece (0: decode each revolution at
    once when it ends).  What they counted: :meth:`counters`; :attr:`last_error` describes the last
    bad datagram.  Not thread-safe: one receive thread calls :meth:`add` for each datagram and
    :meth:`idle` whenever it has nothing to read (without :meth:`idle` calls every revolution is
    decoded at once).
    """

    def __init__(self, decoder_options, cut_angle=None, max_packets=4000, burst='auto', burst_gap=0.02,
                 decode_chunk=16):
        self.decoder = IncrementalDecoder(decoder_options, decode_chunk)
        self.assembler = RevolutionAssembler(self.decoder, cut_angle, max_packets, burst=burst,
                                             burst_gap=burst_gap)
        self.decoder.snapshot_hint = self.assembler.snapshot_now
        self.model = self.decoder.model
        #: arrival time (the ``arrival`` given to :meth:`add`) of the last packet of the revolution
        #: :meth:`add` last returned: that packet, or the one before it for a cut at the next packet
        self.last_packet_arrival: Optional[float] = None
        self._previous_arrival: Optional[float] = None

    @property
    def last_error(self) -> Optional[str]:
        return self.assembler.last_error

    def idle(self):
        """The receive loop has nothing to read: decode a piece of the open revolution
        (:meth:`IncrementalDecoder.advance`)."""
        self.decoder.advance()

    def add(self, datagram, stamp: Optional[float] = None, arrival: Optional[float] = None) -> Optional[Revolution]:
        """:meth:`RevolutionAssembler.add`: a bad datagram is counted (``assembler.bad``) and skipped;
        returns the revolution this datagram completed, if any (its cloud: :meth:`packed`)."""
        a = self.assembler
        before = a.packets
        rev = a.add(datagram, stamp, arrival)
        if rev is not None:
            self.last_packet_arrival = arrival if rev.predicted else self._previous_arrival
        if a.packets != before:
            self._previous_arrival = arrival
        return rev

    def flush(self) -> Optional[Revolution]:
        return self.assembler.flush()

    def packed(self, rev: Revolution) -> Packed:
        """The cloud data of ``rev`` (the revolution :meth:`add` just returned): the pieces decoded
        while it arrived, or, when it was decoded at once, its points packed now."""
        d = self.decoder
        if d.points is rev.points and d.pieces is not None:
            return Packed(rev, d.pieces, len(rev.points), d.dense)
        cloud = pack_cloud(rev.points)
        return Packed(rev, [cloud.data], cloud.width, cloud.is_dense)

    def serialized(self, rev: Revolution) -> List[bytes]:
        """``rev``'s sensor_msgs/PointCloud2 as ROS serializes it after the header
        (:func:`~morai_bridge.wire.velodyne.cloud.serialized_cloud` of :meth:`packed`)."""
        p = self.packed(rev)
        return serialized_cloud(p.pieces, p.width, p.is_dense)

    def counters(self):
        """What the assembler and the decoder counted: a dict (packets, revolutions, cuts, bad
        datagrams by reason (``bad``: the live mapping, which the receive thread adds to), decoding,
        the product id and return mode seen and the model that id names)."""
        a, d = self.assembler, self.decoder
        product = a.last_product_id
        return dict(packets=a.packets, revolutions=a.revolutions, bad=a.bad, aux_header=a.aux_header,
                    forced_cuts=a.forced_cuts, bursty=a.bursty, predicted_cuts=a.predicted_cuts,
                    late_cuts=a.late_cuts, mispredicted=a.mispredicted, burst_restarts=a.burst_restarts,
                    duplicate_packets=a.duplicate_packets, late_packets=a.late_packets,
                    incremental=d.incremental, at_once=d.at_end + d.fallbacks, fallbacks=d.fallbacks,
                    product_id=product, product_model=None if product is None else model_from_product_id(product),
                    return_mode=a.last_return_mode)
