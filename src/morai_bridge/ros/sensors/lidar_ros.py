"""3D LiDAR of the MORAI SIM (Velodyne-format packets over UDP) -> sensor_msgs/PointCloud2.

:class:`LidarBridge` receives one port in a supervised worker and hands every
datagram, with its receive time, to :class:`morai_bridge.wire.velodyne.CloudStream`,
which does all the LiDAR work without ROS: it cuts revolutions (for a paced
sender at the azimuth wrap or ``~cut_angle``, at the revolution's own last
packet when that one predicts the crossing; for a sender of bursts, MORAI 25.S4,
detected from the receive times, ``~burst``, at the last packet of a burst
covering 360 deg), decodes each one in pieces of at least ``~decode_chunk``
packets whenever the receive loop has nothing to read, and packs it into the
layout of ros-drivers/velodyne's XYZIRT cloud (x, y, z, intensity float32, ring
uint16, time float32; point_step 22).  This
module stamps each complete revolution and publishes it as ONE PointCloud2 in
``~frame_id`` (:class:`SerializedCloud`: the header it stamps, then the rest of the
message as :meth:`CloudStream.serialized` gives it, the packed pieces written to the
wire one after the other, never joined).  Point times (``~packet_time``):
``auto`` gives a bursty sender's revolutions snapshot times (every point 0:
MORAI captures the whole revolution at one instant, the cloud's stamp).

Stamps: the cloud's stamp is the time of the revolution's first packet and each
point's ``time`` is seconds after it (velodyne_driver's ``timestamp_first_packet``
convention).  With ``~stamp_source: sim`` that time is the first packet's device
timestamp (bytes 1200-1203: microseconds past the hour) placed in the hour of the
host's ROS clock that puts it nearest (:func:`device_stamp`), used only when it
lies within ``~device_time_max_offset`` of the packet's receive time; otherwise,
and with ``ros``, the receive time of the first packet.  What MORAI writes in
those bytes is not documented (docs/sensors.md, "3D LiDAR", q5): diagnostics
show the offset seen and how often each source was used.
"""
import time

import rospy
from sensor_msgs.msg import PointCloud2
from std_msgs.msg import Header

from morai_bridge.configuration import topic_names
from morai_bridge.configuration.params import Param, ParamError
from morai_bridge.link.measure import RateMeter, Timing, snapshot
from morai_bridge.ros.sensors.sensor_bridge import WARN, SensorBridge, counted
from morai_bridge.ros.sensors.sensor_params import (STAMP_PARAM, mount_params, native_names_param, network_params,
                                            tail_params)
from morai_bridge.wire import velodyne as vel


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
    Param('decode_chunk', 32, 'whenever the receive loop has nothing to read, decode the packets of the open '
          'revolution received so far once there are this many, so that little is left when it completes (0: '
          'decode each revolution at once when it completes)', minimum=0, maximum=100000),
    Param('publish_partial', False, 'also publish revolutions that did not start at the cut (the first one, '
          'forced cuts)'),
    Param('min_coverage', 0.75, 'publish a revolution only when at least this share of its packets arrived (the '
          'rest lost or overtaken on the link: a cloud with holes, counted); below it the revolution is dropped (a '
          'fragment, a burst cut in two). 0: publish whatever arrived, as velodyne_driver does with a real, paced '
          'sensor; 1: whole revolutions only (docs/reliability.md, "A lossy link")', minimum=0.0, maximum=1.0),
    STAMP_PARAM,
    Param('device_time_max_offset', 1.0, 'stamp_source sim: use the packets\' device time only within this of '
          'the receive time [s], else receive time (counted)', minimum=0.0),
    Param('topic', topic_names.BY_CONVENTION, 'published sensor_msgs/PointCloud2; auto (or ""): velodyne_points '
          '(velodyne_pointcloud\'s name), or lidar3D (MORAI\'s native ROS mode) with native_names', unset='auto'),
    native_names_param('lidar3D for velodyne_points'),
] + mount_params('velodyne', 'LiDAR (Velodyne convention: x forward, y left, z up)') + tail_params()


#: a revolution with less than this share of its packets is a fragment (counted apart from the others dropped)
FRAGMENT = 0.1

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


class SerializedCloud(PointCloud2):
    """A sensor_msgs/PointCloud2 to publish: ``header``, then ``body``, the rest of the message
    already serialized (:meth:`morai_bridge.wire.velodyne.CloudStream.serialized`: byte strings
    written one after the other, the point data never joined or copied).  Only the header and the
    body are set: publish it, do not read its other fields."""

    __slots__ = ('body',)

    def __init__(self, header, body):
        self.header = header
        self.body = body

    def serialize(self, buff):
        self.header.serialize(buff)
        for part in self.body:
            buff.write(part)


def decoder_options(cfg):
    """The :class:`~morai_bridge.wire.velodyne.VelodyneDecoder` keyword arguments of the node's parameters."""
    return dict(model=cfg.model, return_mode=cfg.return_mode, interpolation=cfg.interpolation,
                second_firing_offset_deg=cfg.second_firing_offset_deg, dual_dedupe=cfg.dual_dedupe,
                keep_zero=cfg.keep_zero, min_range=cfg.min_range or None, max_range=cfg.max_range or None,
                packet_time=cfg.packet_time, aux_header=cfg.aux_header)


# ----------------------------------------------------------------------------- the node's parts

class LidarBridge(SensorBridge):
    """Receive one Velodyne port, publish one PointCloud2 per revolution (module docstring)."""

    kind = 'lidar'
    port_off = ('~port is 0: the LiDAR stream is off, nothing to do (set ~port to the LiDAR\'s destination port in '
                'the simulator, e.g. 2368)')
    problem_words = 'bad datagrams or forced cuts'

    @property
    def title(self):
        return f'LiDAR {self.cfg.model}'

    def setup(self, cfg, log, on_dead):
        if cfg.max_range and cfg.min_range and cfg.max_range < cfg.min_range:
            raise ParamError(f'~max_range={cfg.max_range!r} is below ~min_range={cfg.min_range!r}')
        self.model = vel.get_model(cfg.model)
        self.stream = vel.CloudStream(decoder_options(cfg), cfg.cut_angle, cfg.max_packets, burst=cfg.burst,
                                      burst_gap=cfg.burst_gap, decode_chunk=cfg.decode_chunk)
        self.on_idle = self.stream.idle
        self.pub = rospy.Publisher(cfg.topic, PointCloud2, queue_size=2)
        self.snapshot_clouds = 0       # clouds with snapshot point times
        self.published = 0
        self.partial_dropped = 0
        self.partial_published = 0
        self.gaps_dropped = 0          # revolutions under ~min_coverage...
        self.fragments = 0             # ...of which under FRAGMENT of theirs: a burst's stragglers
        self.gaps_published = 0        # revolutions with holes, at or above it
        self.missing_published = 0     # the packets missing from those
        self.device_stamps = 0         # clouds stamped with the device time
        self.receive_stamps = 0        # clouds stamped with the receive time
        self.implausible = 0           # stamp_source sim, device time too far from the receive time
        self.device_offset = None      # last (device time - receive time) [s]
        self.fell_back = False         # the last revolution's device time was not used
        self.last_points = 0
        self.last_packets = 0
        self.last_dual = False
        self._asm_error = None
        # self.timing: the datagram that closes a revolution read -> its cloud published
        self.latency = Timing()        # last datagram of the revolution read -> its cloud published
        self._rate = RateMeter()

    # -------------------------------------------------------------- receive thread

    def on_datagram(self, name, data, addr, t):
        stream = self.stream
        rev = stream.add(data, rospy.get_time(), t)
        if stream.last_error is not self._asm_error:
            self._asm_error = self.last_error = stream.last_error
        if rev is not None:
            self._on_revolution(rev, t, stream.last_packet_arrival)

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
        if not (rev.complete or rev.short):
            if not self.cfg.publish_partial:
                self.partial_dropped += 1
                return
            self.partial_published += 1
        if rev.coverage < self.cfg.min_coverage:
            self.gaps_dropped += 1
            self.fragments += rev.coverage < FRAGMENT
            return
        if rev.missing:
            self.gaps_published += 1
            self.missing_published += rev.missing
        stamp = self.stamp_of(rev)
        self.last_points = len(rev.points)
        self.last_packets = rev.packets
        self.last_dual = rev.dual
        if rev.snapshot:
            self.snapshot_clouds += 1
        if self.pub.get_num_connections():
            self.pub.publish(SerializedCloud(Header(stamp=stamp, frame_id=self.cfg.frame_id),
                                             self.stream.serialized(rev)))
            self.published += 1
            done = time.monotonic()
            self.timing.add(done - t)
            if t_last is not None:
                self.latency.add(done - t_last)

    # -------------------------------------------------------------- diagnostics

    def report(self):
        cfg = self.cfg
        c = self.stream.counters()
        bad = snapshot(c['bad'])
        rate = self._rate(c['revolutions'])
        more = []
        product, said = c['product_id'], c['product_model']
        if said is not None and said.name != self.model.name:
            more.append((WARN, f'packets say {said.name} (product id 0x{product:02x}) but ~model is {self.model.name}'))
        if cfg.stamp_source == 'sim' and self.fell_back:
            more.append((WARN, 'device time %.3f s from the receive time (more than ~device_time_max_offset): '
                               'receive time used' % (self.device_offset or 0.0)))
        mode = c['return_mode']
        values = [
            ('model', self.model.name),
            ('rate [Hz]', f'{rate:.2f}'),
            ('revolutions', c['revolutions']),
            ('clouds published', self.published),
            ('partial revolutions dropped', self.partial_dropped),
            ('partial revolutions published', self.partial_published),
            ('revolutions with lost packets published (coverage >= min_coverage)', self.gaps_published),
            ('packets missing from the clouds published', self.missing_published),
            ('revolutions dropped: coverage under min_coverage', self.gaps_dropped - self.fragments),
            ('fragments dropped (under 10 % of a revolution: stragglers of a burst)', self.fragments),
            ('duplicate packets (not used)', c['duplicate_packets']),
            ('late packets, overtaken on the link (not used)', c['late_packets']),
            ('packets', c['packets']),
            ('packets in last revolution', self.last_packets),
            ('points in last revolution', self.last_points),
            ('bad datagrams', sum(bad.values())),
        ] + counted('bad ', bad) + [
            ('datagrams with auxiliary header', c['aux_header']),
            ('forced cuts (max_packets)', c['forced_cuts']),
            ('sender bursty (whole revolutions at once)', str(c['bursty'])),
            ('revolutions cut at their last packet (predicted or burst)', c['predicted_cuts']),
            ('revolutions cut at the next packet', c['late_cuts']),
            ('predictive cuts not confirmed by the next packet', c['mispredicted']),
            ('bursts that did not cover 360 deg', c['burst_restarts']),
            ('clouds with snapshot point times', self.snapshot_clouds),
            ('revolutions decoded piece by piece', c['incremental']),
            ('revolutions decoded at once', c['at_once']),
            ('revolutions decoded at once because pieces could not be used', c['fallbacks']),
            ('product id seen', '' if product is None else '0x%02x%s' % (
                product, ' (%s)' % said.name if said is not None else '')),
            ('return mode byte seen', '' if mode is None else f'0x{mode:02x}'),
            ('dual return', str(self.last_dual)),
            ('stamp source', cfg.stamp_source),
            ('clouds stamped with device time', self.device_stamps),
            ('clouds stamped with receive time', self.receive_stamps),
            ('device time too far from receive time', self.implausible),
            ('device time - receive time [s]', '' if self.device_offset is None else f'{self.device_offset:.6f}'),
            ('latency, last packet of a revolution read -> cloud published, p50 / p99 / max [ms]',
             self.latency.summary_ms()),
            ('publish time, closing packet read -> cloud published, p50 / p99 / max [ms]', self.timing.summary_ms()),
        ]
        return ('%.1f Hz revolutions, %d points' % (rate, self.last_points), sum(bad.values()) + c['forced_cuts'],
                more, values)
