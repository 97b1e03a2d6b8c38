"""2D LiDAR of the MORAI SIM over UDP -> sensor_msgs/LaserScan.

One 1,107-byte datagram per scan, 360 samples, one per degree
(:mod:`morai_bridge.wire.lidar2d`).  The datagram carries no time: the stamp is
the receive time.  Its header and tail literals, the direction and origin of
sample 0 and the no-hit convention are not documented (docs/sensors.md,
"2D LiDAR", q7): they are parameters, and the diagnostics show the header, tail,
data_length and aux values that arrive, so a user can set them from a real
simulator's traffic.
"""
import codecs
import time
from collections import Counter

import rospy
from sensor_msgs.msg import LaserScan
from std_msgs.msg import Header

from morai_bridge.configuration import topic_names
from morai_bridge.configuration.params import Param, ParamError
from morai_bridge.link.measure import RateMeter, snapshot
from morai_bridge.ros.sensors.sensor_bridge import SensorBridge, counted
from morai_bridge.ros.sensors.sensor_params import mount_params, native_names_param, network_params, tail_params
from morai_bridge.wire import lidar2d
from morai_bridge.wire.sensor_errors import SensorDecodeError


PARAMS = network_params(lidar2d.DEFAULT_PORT, '2D LiDAR datagrams (UDP port; MORAI has no default, so 0 = off: '
                        'the node refuses to start, sensor_bridge.launch leaves it out)', 1 << 20) + [
    Param('topic', topic_names.BY_CONVENTION, 'published sensor_msgs/LaserScan; auto (or ""): scan (the ROS laser '
          'drivers\' name), or lidar2D (MORAI\'s native ROS mode) with native_names', unset='auto'),
    native_names_param('lidar2D for scan'),
    Param('angle_origin_deg', 0.0, 'direction of sample 0 [deg, counter-clockwise from x forward] (unknown: '
          '0 = straight ahead)'),
    Param('direction', 1, 'order of the samples: 1 counter-clockwise, -1 clockwise (unknown)', choices=(1, -1)),
    Param('angle_min_deg', -180.0, 'LaserScan.angle_min [deg]; a whole number of degrees from angle_origin_deg'),
    Param('range_min', 0.01, 'LaserScan.range_min [m] (0 mm samples fall below it)', minimum=0.0),
    Param('range_max', 0.0, 'the simulator\'s range limit [m]: samples at it are no hit; 0: not configured '
          '(range_max 65.535 m, nothing converted)', minimum=0.0, maximum=lidar2d.MAX_RANGE_M),
    Param('no_hit', 'inf', 'no-hit samples (range_max set): inf (REP-117) or keep the limit value',
          choices=('inf', 'keep')),
    Param('scan_time', 0.0, 'LaserScan.scan_time [s] (not in the datagram; 0 = unknown)', minimum=0.0),
    Param('duplicate_window', 0.02, 'a datagram byte for byte the one before, arriving within this of it, is '
          'the link\'s duplicate: not published (counted). The datagram has no time, so a scan overtaken on '
          'the link cannot be told and is published (docs/reliability.md, "A lossy link") [s]; 0: off',
          minimum=0.0, maximum=1.0),
    Param('expected_header', '', 'reject datagrams whose 9-byte header differs (any or "" accepts any; Python '
          'escapes such as \\x00 allowed)', unset='any'),
    Param('expected_tail', '', 'reject datagrams whose 2-byte tail differs (any or "" accepts any; e.g. \\r\\n)',
          unset='any'),
] + mount_params('laser', '2D LiDAR (x forward, y left, z up)') + tail_params()


def literal(value, size, name):
    """Bytes of a header/tail parameter ('' -> None), Python escapes decoded."""
    if value == '':
        return None
    try:
        raw = codecs.decode(value, 'unicode_escape').encode('latin-1')
    except (UnicodeError, ValueError) as e:
        raise ParamError(f'~{name}={value!r}: not a byte string ({e})') from None
    if len(raw) != size:
        raise ParamError('~%s=%r is %d bytes, the datagram\'s field is %d' % (name, value, len(raw), size))
    return raw


def scan_msg(scan, header, range_min, scan_time=0.0):
    """sensor_msgs/LaserScan of a :class:`morai_bridge.wire.lidar2d.Scan`."""
    m = LaserScan()
    m.header = header
    m.angle_min = scan.angle_min
    m.angle_max = scan.angle_max
    m.angle_increment = scan.angle_increment
    m.time_increment = 0.0
    m.scan_time = scan_time
    m.range_min = range_min
    m.range_max = scan.range_max
    m.ranges = list(scan.ranges)
    m.intensities = list(scan.intensities)
    return m


class Lidar2dBridge(SensorBridge):
    """Receive one 2D LiDAR port, publish one LaserScan per datagram."""

    kind = 'lidar2d'
    title = 'LiDAR 2D'
    port_off = ('~port is 0: MORAI has no default port for the 2D LiDAR, so the stream is off until you set ~port '
                '(the destination port in the simulator\'s sensor settings)')
    problem_words = 'malformed datagrams'

    def setup(self, cfg, log, on_dead):
        self.expected_header = literal(cfg.expected_header, lidar2d.HEADER_SIZE, 'expected_header')
        self.expected_tail = literal(cfg.expected_tail, 2, 'expected_tail')
        self.options = dict(angle_origin_deg=cfg.angle_origin_deg, direction=cfg.direction,
                            angle_min_deg=cfg.angle_min_deg, range_max=cfg.range_max or None, no_hit=cfg.no_hit,
                            expected_header=self.expected_header, expected_tail=self.expected_tail)
        try:        # the angle parameters are checked once here, not per datagram
            lidar2d.decode_scan(lidar2d.encode_scan([1.0] * lidar2d.SAMPLES),
                                **dict(self.options, expected_header=None, expected_tail=None))
        except ValueError as e:
            raise ParamError(f'~angle_origin_deg / ~angle_min_deg / ~direction: {e}') from None
        self.pub = rospy.Publisher(cfg.topic, LaserScan, queue_size=2)
        self.scans = 0
        self.duplicates = 0            # the link's copies (same bytes within ~duplicate_window)
        self._previous = (None, 0.0)   # the last datagram and its arrival (monotonic)
        self.malformed = Counter()
        self.last_raw = None           # RawScan of the last good datagram (header, tail, ... seen)
        self._rate = RateMeter()

    def on_datagram(self, name, data, addr, t):
        stamp = rospy.get_rostime()
        previous, at = self._previous
        self._previous = (data, t)
        if t - at < self.cfg.duplicate_window and data == previous:
            self.duplicates += 1
            return
        try:
            scan = lidar2d.decode_scan(data, **self.options)
        except SensorDecodeError as e:
            self.malformed[e.reason] += 1
            self.last_error = str(e)
            return
        self.last_raw = scan.raw
        self.pub.publish(scan_msg(scan, Header(stamp=stamp, frame_id=self.cfg.frame_id), self.cfg.range_min,
                                  self.cfg.scan_time))
        self.scans += 1
        self.timing.add(time.monotonic() - t)

    def report(self):
        malformed = snapshot(self.malformed)
        rate = self._rate(self.scans)
        raw = self.last_raw
        values = [
            ('rate [Hz]', f'{rate:.1f}'),
            ('scans published', self.scans),
            ('duplicates (the link\'s copies; not published)', self.duplicates),
            ('datagrams received', self.socket.stats.received),
            ('malformed', sum(malformed.values())),
        ] + counted('malformed ', malformed) + [
            ('header seen', '' if raw is None else repr(raw.header)),
            ('tail seen', '' if raw is None else repr(raw.tail)),
            ('data_length seen', '' if raw is None else raw.data_length),
            ('aux seen', '' if raw is None else ' '.join(f'{v:g}' for v in raw.aux)),
            ('publish time p50 / p99 / max [ms]', self.timing.summary_ms()),
        ]
        return f'{rate:.1f} Hz scans', sum(malformed.values()), [], values
