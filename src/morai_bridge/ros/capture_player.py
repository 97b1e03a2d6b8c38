"""A pcap/pcapng of MORAI traffic played through the bridge's receive side (the ``capture_replay`` node).

:class:`CapturePlayer` feeds each UDP datagram of the file to a socketless
:class:`~morai_bridge.ros.sim_receive.SimReceiver` (``feed``: the decoding path
of live traffic), routed by its destination port, paced by the capture's
timestamps at ``rate`` (0: as fast as possible), optionally publishing /clock
from those timestamps.  A datagram of which the capture holds only the first IP
fragment (a port-filtered capture) is completed with the records that fragment
holds whole, the later slots empty, and counted (``truncated``).
"""
import time

import rospy
from rosgraph_msgs.msg import Clock

from morai_bridge.ros.bridge_diagnostics import BridgeDiagnostics, make_updater
from morai_bridge.ros.package_config import apply_sim_version
from morai_bridge.ros.params import load
from morai_bridge.ros.sim_receive import RECEIVE_PARAMS, VERSION_PARAMS, SimReceiver
from morai_bridge.wire import capture, udp

__all__ = ['CapturePlayer']


class CapturePlayer(object):
    """Plays the capture ``cfg.file`` through a socketless :class:`SimReceiver` built from
    ``cfg`` (the node's parameters: the receive side's and the simulator version's, plus
    ``rate``, ``start_offset``, ``publish_clock``, ``sim_ip``, ``progress_period``); ``supervisor``: the
    node's NodeSupervisor (its diagnostics timer)."""

    def __init__(self, cfg, supervisor):
        self.cfg = cfg
        # the bridge's receive side without sockets; /clock comes from the capture here, not the packets
        rx_cfg, version = apply_sim_version(load(VERSION_PARAMS + RECEIVE_PARAMS, getter=lambda n, d: cfg[n]))
        self.bridge = SimReceiver(rx_cfg, '0.0.0.0', '0.0.0.0', live=False, version=version)
        self.updater, self.timer = make_updater('capture:%s' % cfg.file, supervisor)
        BridgeDiagnostics(rx_cfg, self.updater, self.bridge)
        self.clock_pub = rospy.Publisher('/clock', Clock, queue_size=10) if cfg.publish_clock else None
        self.sent = 0
        self.skipped = 0      # datagrams to ports no stream listens on, or from other hosts
        self.truncated = 0    # datagrams of which the capture holds only the first IP fragment

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
