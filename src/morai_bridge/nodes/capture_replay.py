"""capture_replay: a pcap/pcapng of MORAI traffic becomes the bridge's ROS topics.

Each UDP datagram of the file goes through the same decoding path as live
traffic (``UdpBridge.feed``), routed by its destination port with the bridge's
``~<stream>_port`` parameters (their defaults are the ports MORAI's example and
the shared captures use).  Timing follows the capture at ``~rate`` (1 =
recorded speed, 0 = as fast as possible); with ``~publish_clock`` the node
publishes /clock from the capture's own timestamps, so ``use_sim_time``
consumers see recorded time and the pacing never depends on ROS time.

A capture taken with a port filter (``udp port 7505``) holds only the first IP
fragment of each 2160-byte Object Info.  Such a datagram is replayed with the
records its first fragment holds whole (13 of the 20 slots, which are nearest
first) and the later slots empty: the ObjectStatusList is published, missing
only the farthest objects.  They are counted (``truncated`` in the summary)
and a warning, logged once, names the capture filter that keeps every fragment.
"""
import time

import rospy
from rosgraph_msgs.msg import Clock

from morai_bridge.link import transport
from morai_bridge.ros.bridge_diagnostics import BridgeDiagnostics, make_updater
from morai_bridge.ros.params import Param, ParamError, load
from morai_bridge.ros.package_config import apply_sim_version
from morai_bridge.ros.sim_receive import RECEIVE_PARAMS, VERSION_PARAMS, SimReceiver
from morai_bridge.wire.sim_versions import VersionError
from morai_bridge.wire import capture, udp

PARAMS = [
    Param('file', '', 'pcap or pcapng file of MORAI UDP traffic (required)'),
    Param('rate', 1.0, 'replay speed: 1 = as recorded, 2 = twice as fast, 0 = as fast as possible', minimum=0.0),
    Param('loop', False, 'start again at the end of the file'),
    Param('start_offset', 0.0, 'skip this many seconds at the start of the capture [s]', minimum=0.0),
    Param('publish_clock', False, 'publish /clock from the capture timestamps'),
    Param('sim_ip', '0.0.0.0', 'only replay datagrams from this source address (0.0.0.0: all)'),
    Param('start_delay', 0.0, 'wait this long before replaying, e.g. for subscribers to connect [s]', minimum=0.0),
    Param('progress_period', 5.0, 'seconds between progress lines (0: none)', minimum=0.0),
] + VERSION_PARAMS + RECEIVE_PARAMS


class Replay(object):

    def __init__(self, cfg):
        self.cfg = cfg
        # the bridge's receive side without sockets; /clock comes from the capture here, not the packets
        rx_cfg, version = apply_sim_version(load(VERSION_PARAMS + RECEIVE_PARAMS, getter=lambda n, d: cfg[n]))
        self.bridge = SimReceiver(rx_cfg, '0.0.0.0', '0.0.0.0', live=False, version=version)
        self.updater, self.timer = make_updater('capture:%s' % cfg.file)
        BridgeDiagnostics(rx_cfg, self.updater, self.bridge)
        self.clock_pub = rospy.Publisher('/clock', Clock, queue_size=10) if cfg.publish_clock else None
        self.sent = 0
        self.skipped = 0      # datagrams to ports no stream listens on, or from other hosts
        self.truncated = 0    # datagrams of which the capture holds only the first IP fragment
        self.duration = None

    def _packets(self):
        reader = capture.read_capture(self.cfg.file, partial=True)
        first = None
        for ts, src, dst, payload in reader:
            if first is None:
                first = ts
            rel = ts - first
            if rel < self.cfg.start_offset:
                continue
            yield ts, rel, src, dst, payload
        self.reader_counts = reader.counts

    def run_once(self):
        t_wall0 = None
        t_cap0 = None
        last_progress = time.monotonic()
        for ts, rel, src, dst, payload in self._packets():
            if rospy.is_shutdown():
                return False
            if t_wall0 is None:
                t_wall0, t_cap0 = time.monotonic(), ts
            if self.cfg.rate > 0:
                delay = (ts - t_cap0) / self.cfg.rate - (time.monotonic() - t_wall0)
                if delay > 0:
                    time.sleep(delay)
            if self.clock_pub is not None:
                self.clock_pub.publish(Clock(rospy.Time.from_sec(ts)))
            if type(payload) is capture.TruncatedPayload:
                payload = self._complete(payload)
            if self.cfg.sim_ip not in ('', '0.0.0.0') and src[0] != self.cfg.sim_ip:
                self.skipped += 1
            elif self.bridge.feed(dst[1], payload, src):
                self.sent += 1
            else:
                self.skipped += 1
            now = time.monotonic()
            if self.cfg.progress_period and now - last_progress >= self.cfg.progress_period:
                last_progress = now
                rospy.loginfo('capture_replay: %.1f s of capture replayed, %d datagrams published, %d skipped',
                              rel, self.sent, self.skipped)
        return True

    def _complete(self, payload):
        """A port-filtered capture's first fragment -> a datagram with the records it holds
        (later slots empty), or the fragment itself when that is impossible (then the
        bridge counts it as a decode error)."""
        self.truncated += 1
        if self.truncated == 1:
            rospy.logwarn('capture_replay: %s; replaying the records the first fragments hold '
                          '(the farthest objects are missing)', capture.PORT_FILTER_HINT)
        try:
            return udp.complete_truncated(payload, payload.full_length)[0]
        except udp.DecodeError as e:
            rospy.logwarn_throttle(10.0, 'capture_replay: a datagram cut by the capture cannot be '
                                   'decoded: %s' % e)
            return bytes(payload)

    def summary(self):
        per = ', '.join('%s %d' % (n, s.published) for n, s in sorted(self.bridge.stats.items()) if s.received)
        errors = sum(s.decode_errors + s.wrong_type for s in self.bridge.stats.values())
        text = ('capture_replay: done: %d datagrams fed (%s), %d decode errors, %d skipped (other ports/hosts)'
                % (self.sent, per or 'none', errors, self.skipped))
        if self.truncated:
            text += ('; %d truncated by the capture (first IP fragment only, replayed with the records '
                     'it holds)' % self.truncated)
        return text


def main(argv=None):
    rospy.init_node('capture_replay')
    try:
        cfg = load(PARAMS)
        if not cfg.file:
            raise ParamError('~file is required: the pcap/pcapng file to replay')
        replay = Replay(cfg)
        # open once now so a bad path fails fast with a clear message
        next(iter(capture.read_capture(cfg.file)), None)
    except (ParamError, VersionError, transport.TransportError, capture.CaptureError, OSError) as e:
        rospy.logfatal('capture_replay: %s', e)
        raise SystemExit(2)
    if cfg.start_delay:
        time.sleep(cfg.start_delay)
    while True:
        if not replay.run_once():
            break
        rospy.loginfo(replay.summary())
        if not cfg.loop:
            break
    rospy.loginfo('capture_replay: finished; staying up so latched state can be inspected (Ctrl-C to quit)')
    rospy.spin()


if __name__ == '__main__':
    main()
