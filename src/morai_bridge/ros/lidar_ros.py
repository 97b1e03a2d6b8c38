"""3D LiDAR of the MORAI SIM (Velodyne-format packets over UDP) -> sensor_msgs/PointCloud2.

:class:`LidarBridge` receives one port in a supervised worker and feeds every
datagram, with its receive time, to
:class:`morai_bridge.wire.velodyne.RevolutionAssembler`, which cuts revolutions
and decodes each one in a single vectorised batch: for a paced sender at the
azimuth wrap or ``~cut_angle`` (at the revolution's own last packet when that
one predicts the crossing), for a sender of bursts (MORAI 25.S4, detected from
the receive times, ``~burst``) at the last packet of a burst covering 360 deg.
Point times (``~packet_time``): ``auto`` gives a bursty sender's revolutions
snapshot times (every point 0: MORAI captures the whole revolution at one
instant, the cloud's stamp).  Each complete revolution becomes ONE PointCloud2 with exactly
the codec's :func:`~morai_bridge.wire.velodyne.pack_cloud` layout (x, y, z,
intensity float32, ring uint16, time float32; point_step 22), the layout of
ros-drivers/velodyne's XYZIRT cloud, in ``~frame_id``.

Latency: decoding a whole revolution when the packet that closes it arrives
takes milliseconds (HDL-32E: 181 packets, 62,000 points), during which the
receive loop waits.  :class:`IncrementalDecoder` therefore decodes the pending
revolution ``~decode_chunk`` packets at a time as they arrive and packs each
piece, so that at the cut only the last piece is left (not while the sender is
bursty: its packets come back to back, and one piece at the end is less work); the result is
byte-identical to decoding the revolution in one batch (the assembler stays the
authority on where revolutions end; any doubt falls back to the one-batch decode).

Stamps: the cloud's stamp is the time of the revolution's first packet and each
point's ``time`` is seconds after it (velodyne_driver's ``timestamp_first_packet``
convention).  With ``~stamp_source: sim`` that time is the first packet's device
timestamp (bytes 1200-1203: microseconds past the hour) placed in the hour of the
host's ROS clock that puts it nearest (:func:`device_stamp`), used only when it
lies within ``~device_time_max_offset`` of the packet's receive time; otherwise,
and with ``ros``, the receive time of the first packet.  What MORAI writes in
those bytes is not documented (shared spec/sensors.md section 8 q5): diagnostics
show the offset seen and how often each source was used.
"""
import io
import struct
import time

import numpy as np
import rospy
from sensor_msgs.msg import PointCloud2, PointField
from std_msgs.msg import Header

from morai_bridge.ros.params import Param, ParamError
from morai_bridge.ros.sensor_common import (STAMP_PARAM, RateMeter, Recent, SensorSocket, Timing, add_counts,
                                            cfg_mount_transform, mount_params, network_params, snapshot,
                                            stream_level, tail_params)
from morai_bridge.wire import velodyne as vel

OK, WARN, ERROR = 0, 1, 2

PARAMS = network_params(vel.DEFAULT_PORT, 'Velodyne data packets (UDP port; 0: the node refuses to start, '
                        'sensor_bridge.launch leaves it out)', 4 << 20) + [
    Param('model', 'VLP16', 'sensor model of the simulator\'s LiDAR (elevation table, distance unit, timing)',
          choices=tuple(vel.MODELS)),
    Param('cut_angle', -1.0, 'azimuth where a revolution of a paced sender ends [deg]; negative: where the azimuth '
          'wraps (a burst is not split)',
          maximum=360.0),
    Param('return_mode', 'auto', 'single, dual, or auto (byte 1204 of the first packet: 0x39 = dual)',
          choices=('auto', 'single', 'dual')),
    Param('interpolation', 'velodyne', 'azimuth of a VLP-16 block\'s second firing: velodyne (interpolated '
          'per laser, as velodyne_pointcloud) or fixed (+second_firing_offset_deg, as MORAI\'s examples)',
          choices=('velodyne', 'fixed')),
    Param('second_firing_offset_deg', 0.2, 'interpolation fixed: azimuth step of the second firing [deg]'),
    Param('dual_dedupe', True, 'dual return: drop a strongest return identical to the last return'),
    Param('keep_zero', False, 'keep no-return points (distance 0) as NaN x, y, z'),
    Param('min_range', 0.0, 'drop points nearer than this [m] (0: off)', minimum=0.0),
    Param('max_range', 0.0, 'drop points farther than this [m] (0: off)', minimum=0.0),
    Param('packet_time', 'auto', 'point times: snapshot (every point 0: a whole revolution captured at once, as '
          'MORAI does), device (packet timestamps), nominal (packet index x the model\'s packet period), host '
          '(receive times), auto (snapshot when the sender is bursty, else device when they advance plausibly, '
          'else nominal)', choices=vel.PACKET_TIMES),
    Param('burst', 'auto', 'revolutions sent as bursts (MORAI): auto (detected from arrival times), on, off; '
          'a burst that covers 360 deg is one revolution, published at its last packet',
          choices=('auto', 'on', 'off')),
    Param('burst_gap', 0.02, 'a pause of more than this between packets separates bursts [s]', minimum=0.0001,
          maximum=1.0),
    Param('aux_header', True, 'accept longer datagrams whose Velodyne payload starts at FF EE within the '
          'first 64 bytes (an unverified third-party claim)'),
    Param('max_packets', 4000, 'emit a revolution after this many packets without a cut', minimum=1,
          maximum=1000000),
    Param('decode_chunk', 16, 'decode the pending revolution this many packets at a time as they arrive, so '
          'that little is left when it completes (0: all at once, when it completes)', minimum=0, maximum=100000),
    Param('publish_partial', False, 'also publish revolutions that did not start at the cut (the first one, '
          'forced cuts)'),
    STAMP_PARAM,
    Param('device_time_max_offset', 1.0, 'stamp_source sim: use the packets\' device time only within this of '
          'the receive time [s], else receive time (counted)', minimum=0.0),
    Param('topic', 'velodyne_points', 'published sensor_msgs/PointCloud2 (velodyne_pointcloud\'s name)'),
] + mount_params('velodyne', 'LiDAR (Velodyne convention: x forward, y left, z up)') + tail_params()


# ----------------------------------------------------------------------------- pure functions

def device_stamp(device_us, host_s):
    """(secs, nsecs) of a Velodyne timestamp (microseconds past the hour) in the hour of the host
    time ``host_s`` (s) that puts it nearest, i.e. within half an hour of it (as velodyne_driver
    does with gps_time)."""
    device_us = int(device_us)
    hour = int(host_s // 3600) * 3600
    secs = hour + device_us // 1000000
    if secs - host_s > 1800:
        secs -= 3600
    elif host_s - secs > 1800:
        secs += 3600
    return secs, (device_us % 1000000) * 1000


def cloud_msg(cloud, header):
    """sensor_msgs/PointCloud2 of a :class:`morai_bridge.wire.velodyne.CloudData` (data untouched)."""
    m = PointCloud2()
    m.header = header
    m.height = cloud.height
    m.width = cloud.width
    m.fields = [PointField(f.name, f.offset, f.datatype, f.count) for f in cloud.fields]
    m.is_bigendian = cloud.is_bigendian
    m.point_step = cloud.point_step
    m.row_step = cloud.row_step
    m.data = cloud.data
    m.is_dense = cloud.is_dense
    return m


class PiecewiseCloud(PointCloud2):
    """A sensor_msgs/PointCloud2 whose point data is a list of byte strings (``pieces``), written
    one after the other when rospy serialises the message for publishing: the bytes on the wire
    are those of the PointCloud2 whose ``data`` is the pieces joined, without the join and the copy
    genpy makes of ``data``.  ``data`` itself stays empty: publish it, do not read it."""

    __slots__ = ('pieces',)

    def __init__(self, *args, **kwds):
        super(PiecewiseCloud, self).__init__(*args, **kwds)
        self.pieces = ()

    def serialize(self, buff):
        head = io.BytesIO()
        self.data = b''
        PointCloud2.serialize(self, head)
        raw = head.getvalue()              # ... uint32 0 (empty data), uint8 is_dense
        buff.write(raw[:-5])
        buff.write(_UINT32.pack(sum(len(p) for p in self.pieces)))
        for p in self.pieces:
            buff.write(p)
        buff.write(raw[-1:])


_UINT32 = struct.Struct('<I')


def piecewise_cloud_msg(pieces, width, is_dense, header):
    """A :class:`PiecewiseCloud` of packed XYZIRT pieces (``pack_cloud(...).data`` of consecutive points)."""
    m = PiecewiseCloud()
    m.header = header
    m.height = 1
    m.width = width
    m.fields = [PointField(f.name, f.offset, f.datatype, f.count) for f in vel.POINT_FIELDS]
    m.is_bigendian = False
    m.point_step = vel.POINT_STEP
    m.row_step = vel.POINT_STEP * width
    m.is_dense = is_dense
    m.pieces = pieces
    return m


def decoder_from(cfg, packet_time=None):
    return vel.VelodyneDecoder(cfg.model, return_mode=cfg.return_mode, interpolation=cfg.interpolation,
                               second_firing_offset_deg=cfg.second_firing_offset_deg, dual_dedupe=cfg.dual_dedupe,
                               keep_zero=cfg.keep_zero, min_range=cfg.min_range or None,
                               max_range=cfg.max_range or None, packet_time=packet_time or cfg.packet_time,
                               aux_header=cfg.aux_header)


#: 'auto' point times use the device timestamps when every step between packets is 1 us .. this
#: (wire.velodyne's rule, restated; test_sensor_ros.py checks both agree at the boundaries)
AUTO_STEP_MAX_US = 100000
_FIELDS = ('x', 'y', 'z', 'intensity', 'ring', 'time')
_STAMP = struct.Struct('<I')


def _concat(parts):
    if len(parts) == 1:
        return parts[0]
    return vel.Points(*[np.concatenate([getattr(p, f) for p in parts]) for f in _FIELDS])


class JoinedPoints(vel.Points):
    """:class:`~morai_bridge.wire.velodyne.Points` of pieces, joined when a field is first read
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
    return vel.Points(*[getattr(points, f)[start:] for f in _FIELDS])


class IncrementalDecoder(object):
    """A decoder for :class:`~morai_bridge.wire.velodyne.RevolutionAssembler` that decodes the
    pending revolution ``chunk`` packets at a time while they arrive.

    The assembler calls :meth:`check` on every datagram and, when a revolution ends,
    :meth:`decode` on its packets (all those checked since the previous decode but the newest,
    which opens the next revolution; all of them on a flush).  :meth:`check` decodes, every
    ``chunk`` packets, the packets before the newest one; :meth:`decode` then only decodes the rest
    and joins the pieces.  Each piece is decoded together with the revolution's first packet (whose
    points are then cut off), with point times forced to the mode a one-batch decode would choose
    (device timestamps or nominal times, see wire.velodyne), so the points, and the packed cloud
    (:attr:`pieces`, ``pack_cloud`` of each piece; :attr:`cloud` joins them), are bit for bit those of decoding the
    revolution at once.  When that cannot be guaranteed (``packet_time='host'``, device timestamps
    that stop being plausible part-way, packets other than those seen), :meth:`decode` decodes the
    batch at once (``fallbacks``).
    """

    def __init__(self, make_decoder, packet_time, chunk=16):
        """``make_decoder(packet_time)`` -> a VelodyneDecoder with the node's options and that
        packet_time (None: the configured one)."""
        self.inner = make_decoder(None)
        self.model = self.inner.model
        self.packet_time = packet_time
        self.chunk = int(chunk)
        self._decoders = {'device': make_decoder('device'), 'nominal': make_decoder('host'),
                          'snapshot': make_decoder('snapshot')}
        #: callable -> True when the revolution being received will be decoded with snapshot point times
        #: (the node sets it to its assembler's ``snapshot_now``); None: never
        self.snapshot_hint = None
        #: callable -> True while the sender sends whole revolutions in bursts: packets then arrive back to back
        #: and nothing is gained by decoding pieces between them, so the revolution is decoded in one piece at
        #: its end (fewer numpy calls); None: never
        self.burst_hint = None
        self.incremental = 0        # revolutions decoded piece by piece
        self.fallbacks = 0          # revolutions decoded at once although chunk > 0
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
        return vel.CloudData(1, n, vel.POINT_FIELDS, False, vel.POINT_STEP, vel.POINT_STEP * n,
                             b''.join(self.pieces), self.dense)

    # ------------------------------------------------------------------ the decoder interface

    def is_dual(self, rec):
        return self.inner.is_dual(rec)

    def check(self, datagram):
        packet = self.inner.check(datagram)
        seen = self._seen
        seen.append(packet)
        if len(seen) > 1:
            self._step(len(seen) - 1)
        if self._ok and len(seen) - 1 - self._done >= self.chunk and not (
                self.burst_hint is not None and self.burst_hint()):
            self._piece(self._done + self.chunk)
        return packet

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
            self.incremental += 1
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
        step = (_STAMP.unpack_from(seen[i], 1200)[0] - _STAMP.unpack_from(seen[i - 1], 1200)[0]) % vel.HOUR_US
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
        first = np.frombuffer(seen[0], dtype=vel.PACKET_DTYPE)
        period = self.model.packet_period_us(self.inner.is_dual(first)) * 1e-6
        start = self._done
        if start == 0:
            batch = rec if rec is not None and len(rec) == end else seen[:end]
            stamps = [i * period for i in range(end)] if mode == 'nominal' else None
            points = dec.decode(batch, stamps)
        else:
            if self._n0 is None:
                self._n0 = len(dec.decode(seen[:1], [0.0] if mode == 'nominal' else None))
            if mode == 'device' and sum(self._steps[:start]) != (
                    _STAMP.unpack_from(seen[start], 1200)[0] - _STAMP.unpack_from(seen[0], 1200)[0]) % vel.HOUR_US:
                self._ok = False      # device times wrapped oddly: the one-batch sum differs
                return
            batch = [seen[0]] + seen[start:end]
            stamps = [0.0] + [i * period for i in range(start, end)] if mode == 'nominal' else None
            points = _tail(dec.decode(batch, stamps), self._n0)
        cloud = vel.pack_cloud(points)
        self._parts.append((points, cloud.data, cloud.is_dense))
        self._done = end


# ----------------------------------------------------------------------------- the node's parts

class LidarBridge(object):
    """Receive one Velodyne port, publish one PointCloud2 per revolution (module docstring)."""

    def __init__(self, cfg, log=None, on_dead=None):
        self.cfg = cfg
        if cfg.port == 0:
            raise ParamError('~port is 0: the LiDAR stream is off, nothing to do (set ~port to the LiDAR\'s '
                             'destination port in the simulator, e.g. 2368)')
        if cfg.max_range and cfg.min_range and cfg.max_range < cfg.min_range:
            raise ParamError('~max_range=%r is below ~min_range=%r' % (cfg.max_range, cfg.min_range))
        self.model = vel.get_model(cfg.model)
        self.decoder = IncrementalDecoder(lambda packet_time: decoder_from(cfg, packet_time), cfg.packet_time,
                                          cfg.decode_chunk)
        self.assembler = vel.RevolutionAssembler(self.decoder, cfg.cut_angle, cfg.max_packets, burst=cfg.burst,
                                                 burst_gap=cfg.burst_gap)
        self.decoder.snapshot_hint = self.assembler.snapshot_now
        self.decoder.burst_hint = lambda: self.assembler.bursty
        self.snapshot_clouds = 0       # clouds with snapshot point times
        self.pub = rospy.Publisher(cfg.topic, PointCloud2, queue_size=2)
        self.published = 0
        self.partial_dropped = 0
        self.partial_published = 0
        self.device_stamps = 0         # clouds stamped with the device time
        self.receive_stamps = 0        # clouds stamped with the receive time
        self.implausible = 0           # stamp_source sim, device time too far from the receive time
        self.device_offset = None      # last (device time - receive time) [s]
        self.fell_back = False         # the last revolution's device time was not used
        self.last_points = 0
        self.last_packets = 0
        self.last_dual = False
        self.last_error = ''
        self._asm_error = None
        self.timing = Timing()         # datagram that closes a revolution read -> its cloud published
        self.latency = Timing()        # last datagram of the revolution read -> its cloud published
        self._last_packet_t = None
        self._rate = RateMeter()
        self._recent = Recent()
        self.socket = SensorSocket(cfg, 'lidar', self.on_datagram, log=log, on_dead=on_dead)

    @property
    def workers(self):
        return list(self.socket.workers)

    def transforms(self):
        return [cfg_mount_transform(self.cfg)]

    def start(self):
        self.socket.start()

    def stop(self):
        self.socket.stop()

    # -------------------------------------------------------------- receive thread

    def on_datagram(self, name, data, addr, t):
        a = self.assembler
        before = a.packets
        rev = a.add(data, rospy.get_time(), t)
        if a.last_error is not self._asm_error:
            self._asm_error = self.last_error = a.last_error
        if rev is not None:
            self._on_revolution(rev, t, t if rev.predicted else self._last_packet_t)
        if a.packets != before:
            self._last_packet_t = t

    def stamp_of(self, rev):
        """Header stamp of a revolution (module docstring)."""
        if self.cfg.stamp_source == 'sim':
            secs, nsecs = device_stamp(rev.device_time_us, rev.stamp)
            self.device_offset = secs + nsecs * 1e-9 - rev.stamp
            self.fell_back = abs(self.device_offset) > self.cfg.device_time_max_offset
            if not self.fell_back:
                self.device_stamps += 1
                return rospy.Time(secs, nsecs)
            self.implausible += 1
        self.receive_stamps += 1
        return rospy.Time.from_sec(rev.stamp)

    def _on_revolution(self, rev, t, t_last):
        if not rev.complete:
            if not self.cfg.publish_partial:
                self.partial_dropped += 1
                return
            self.partial_published += 1
        stamp = self.stamp_of(rev)
        self.last_points = len(rev.points)
        self.last_packets = rev.packets
        self.last_dual = rev.dual
        if rev.snapshot:
            self.snapshot_clouds += 1
        if self.pub.get_num_connections():
            header = Header(stamp=stamp, frame_id=self.cfg.frame_id)
            d = self.decoder
            if d.points is rev.points and d.pieces is not None:
                msg = piecewise_cloud_msg(d.pieces, len(rev.points), d.dense, header)
            else:
                msg = cloud_msg(vel.pack_cloud(rev.points), header)
            self.pub.publish(msg)
            self.published += 1
            done = time.monotonic()
            self.timing.add(done - t)
            if t_last is not None:
                self.latency.add(done - t_last)

    # -------------------------------------------------------------- diagnostics

    def diagnostics(self, stat):
        cfg = self.cfg
        st = self.socket.stats
        a = self.assembler
        bad = snapshot(a.bad)
        rate = self._rate(a.revolutions)
        level, text = stream_level(st, cfg.stale_timeout, cfg.port)
        if not text:
            text = '%.1f Hz revolutions, %d points' % (rate, self.last_points)
        problems = sum(bad.values()) + st.foreign + a.forced_cuts + st.handler_errors
        if self._recent.check(problems):
            level = max(level, WARN)
            text += '; bad datagrams or forced cuts in the last 10 s (see values)'
        product = a.last_product_id
        said = vel.model_from_product_id(product) if product is not None else None
        if said is not None and said.name != self.model.name:
            level = max(level, WARN)
            text += '; packets say %s (product id 0x%02x) but ~model is %s' % (said.name, product, self.model.name)
        if cfg.stamp_source == 'sim' and self.fell_back:
            level = max(level, WARN)
            text += '; device time %.3f s from the receive time (more than ~device_time_max_offset): receive ' \
                    'time used' % (self.device_offset or 0.0)
        if st.handler_errors:
            level = ERROR
            text += '; %d datagrams hit a bridge error (see the log)' % st.handler_errors
        stat.summary(level, text)
        stat.add('port', cfg.port)
        stat.add('model', self.model.name)
        stat.add('rate [Hz]', '%.2f' % rate)
        stat.add('revolutions', a.revolutions)
        stat.add('clouds published', self.published)
        stat.add('partial revolutions dropped', self.partial_dropped)
        stat.add('partial revolutions published', self.partial_published)
        stat.add('packets', a.packets)
        stat.add('packets in last revolution', self.last_packets)
        stat.add('points in last revolution', self.last_points)
        stat.add('bad datagrams', sum(bad.values()))
        add_counts(stat, 'bad ', bad)
        stat.add('datagrams with auxiliary header', a.aux_header)
        stat.add('forced cuts (max_packets)', a.forced_cuts)
        stat.add('sender bursty (whole revolutions at once)', str(a.bursty))
        stat.add('revolutions cut at their last packet (predicted or burst)', a.predicted_cuts)
        stat.add('revolutions cut at the next packet', a.late_cuts)
        stat.add('predictive cuts not confirmed by the next packet', a.mispredicted)
        stat.add('bursts that did not cover 360 deg', a.burst_restarts)
        stat.add('clouds with snapshot point times', self.snapshot_clouds)
        stat.add('revolutions decoded piece by piece', self.decoder.incremental)
        stat.add('revolutions decoded at once', self.decoder.fallbacks)
        stat.add('product id seen', '' if product is None else '0x%02x%s' % (
            product, ' (%s)' % said.name if said is not None else ''))
        mode = a.last_return_mode
        stat.add('return mode byte seen', '' if mode is None else '0x%02x' % mode)
        stat.add('dual return', str(self.last_dual))
        stat.add('from unexpected hosts', st.foreign)
        stat.add('last unexpected sender', st.last_foreign)
        stat.add('bridge errors', st.handler_errors)
        stat.add('stamp source', cfg.stamp_source)
        stat.add('clouds stamped with device time', self.device_stamps)
        stat.add('clouds stamped with receive time', self.receive_stamps)
        stat.add('device time too far from receive time', self.implausible)
        stat.add('device time - receive time [s]', '' if self.device_offset is None else '%.6f' % self.device_offset)
        stat.add('latency, last packet of a revolution read -> cloud published, p50 / p99 / max [ms]',
                 self.latency.summary_ms())
        stat.add('publish time, closing packet read -> cloud published, p50 / p99 / max [ms]',
                 self.timing.summary_ms())
        stat.add('receive buffer [bytes]', '%d (asked %d)' % (self.socket.rcvbuf, self.socket.rcvbuf_asked))
        age = st.age()
        stat.add('age of last datagram [s]', '' if age is None else '%.3f' % age)
        stat.add('last error', self.last_error or st.last_error)
        return stat
