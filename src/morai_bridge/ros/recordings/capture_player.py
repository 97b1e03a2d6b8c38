"""A pcap/pcapng of MORAI traffic played through the bridge's receive side (the ``capture_replay`` node).

:class:`CapturePlayer` feeds each UDP datagram of the file to a socketless
:class:`~morai_bridge.ros.udp_bridge.sim_receive.SimReceiver` (``feed``: the decoding path
of live traffic), routed by its destination port, paced by the capture's
timestamps at ``rate`` (0: as fast as possible), optionally publishing /clock
from those timestamps.  A datagram of which the capture holds only the first IP
fragment (a port-filtered capture) is completed with the records that fragment
holds whole, the later slots empty, and counted (``truncated``).

Stamps: a packet that carries a time keeps it (``stamp_source:=sim``); every other
header (traffic lights, intersections, GPS, 25.S4's IMU, and all of them with
``stamp_source:=ros``) gets the time the capture recorded the datagram at, its
receive time then, so one replay is one timeline with /clock; ``~arrival_time:=now``
stamps those with the replay's clock instead.

A datagram to a port no stream of this replay listens on is skipped, counted per
port, and named by its content: when it is a MORAI stream, a warning (once per
port) and the summary say which ``sim_version`` receives that stream on that port,
or which ``~<stream>_port`` would take it.
"""
import time

import rospy
from rosgraph_msgs.msg import Clock

from morai_bridge.configuration import sim_versions
from morai_bridge.configuration.params import DISABLED
from morai_bridge.ros.udp_bridge.diagnostics import BridgeDiagnostics
from morai_bridge.ros.supervision import make_updater
from morai_bridge.ros.package_config import apply_map, apply_sim_version
from morai_bridge.ros.params import load
from morai_bridge.ros.udp_bridge.sim_receive import RECEIVE_PARAMS, VERSION_PARAMS, SimReceiver
from morai_bridge.wire import capture, udp
from morai_bridge.wire.udp import streams

__all__ = ['CapturePlayer', 'carried_stream', 'port_hint']

#: how many datagrams of a skipped port are tried before it counts as "not MORAI messages"
_IDENTIFY_TRIES = 20


def carried_stream(payload):
    """The name of the sim -> user stream whose message ``payload`` is, or None."""
    try:
        msg = udp.decode_tolerant(payload)[0]
    except udp.DecodeError:
        return None
    s = streams.stream_of_class(type(msg))
    return s.name if s is not None and s.direction == streams.SIM_TO_USER else None


def port_hint(port, count, stream, version, port_now, receiving):
    """What the summary says about ``count`` datagrams of ``stream`` to ``port`` that this replay
    skipped: ``version`` is this replay's sim_version, ``port_now`` its port of that stream (0:
    disabled), ``receiving`` the profiles that receive ``stream`` on ``port``."""
    datagrams = 'datagram' if count == 1 else 'datagrams'
    here = 'this replay has it on %d' % port_now if port_now != DISABLED else 'this replay has it disabled'
    others = [name for name in receiving if name != version]
    choice = 'sim_version:=%s or %s_port:=%d' % (others[0], stream, port) if others else \
        '%s_port:=%d' % (stream, port)
    where = f"sim_version {', '.join(others)} receives it on that port; " if others else ''
    return ('port %d: %d %s %s, skipped (sim_version %s: %s; %s%s decodes them)'
            % (port, count, stream, datagrams, version, here, where, choice))


class CapturePlayer:
    """Plays the capture ``cfg.file`` through a socketless :class:`SimReceiver` built from
    ``cfg`` (the node's parameters: the receive side's and the simulator version's, plus
    ``rate``, ``start_offset``, ``publish_clock``, ``sim_ip``, ``progress_period``); ``supervisor``: the
    node's NodeSupervisor (its diagnostics timer)."""

    def __init__(self, cfg, supervisor):
        self.cfg = cfg
        # the bridge's receive side without sockets; /clock comes from the capture here, not the packets
        rx_cfg, version = apply_sim_version(load(VERSION_PARAMS + RECEIVE_PARAMS, getter=lambda n, d: cfg[n]))
        rx_cfg, self.map_info = apply_map(rx_cfg)
        self.rx_cfg, self.version = rx_cfg, version
        # the stamp of packets without a time: the record's time in the capture (set per datagram)
        self.arrival = rospy.Time()
        clock = (lambda: self.arrival) if cfg.arrival_time == 'capture' else None
        self.bridge = SimReceiver(rx_cfg, '0.0.0.0', '0.0.0.0', live=False, version=version, clock=clock,
                                  map_info=self.map_info)
        self.updater, self.timer = make_updater(f'capture:{cfg.file}', supervisor)
        BridgeDiagnostics(rx_cfg, self.updater, self.bridge)
        self.clock_pub = rospy.Publisher('/clock', Clock, queue_size=10) if cfg.publish_clock else None
        self.sent = 0
        self.skipped = 0      # datagrams to ports no stream listens on, or from other hosts
        self.other_hosts = 0  # of those: from hosts other than ~sim_ip
        self.skipped_ports = {}   # destination port -> [datagrams skipped, stream they carry or None]
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
            self.arrival = rospy.Time.from_sec(ts)
            if self.clock_pub is not None:
                self.clock_pub.publish(Clock(self.arrival))
            if type(payload) is capture.TruncatedPayload:
                payload = self._complete(payload)
            if self.cfg.sim_ip not in ('', '0.0.0.0') and src[0] != self.cfg.sim_ip:
                self.skipped += 1
                self.other_hosts += 1
            elif self.bridge.feed(dst[1], payload, src):
                self.sent += 1
            else:
                self._skip(dst[1], payload)
            now = time.monotonic()
            if self.cfg.progress_period and now - last_progress >= self.cfg.progress_period:
                last_progress = now
                rospy.loginfo('capture_replay: %.1f s of capture replayed, %d datagrams published, %d skipped',
                              rel, self.sent, self.skipped)
        return True

    def _skip(self, port, payload):
        """Count a datagram no stream listens for; name what its port carries (a warning, once)."""
        self.skipped += 1
        entry = self.skipped_ports.setdefault(port, [0, None])
        entry[0] += 1
        if entry[1] is None and entry[0] <= _IDENTIFY_TRIES:
            entry[1] = carried_stream(bytes(payload))
            if entry[1] is not None:
                rospy.logwarn('capture_replay: %s', self._hint(port, entry))

    def _hint(self, port, entry):
        count, stream = entry
        return port_hint(port, count, stream, self.version.name, self.rx_cfg[streams.BY_NAME[stream].param],
                         sim_versions.versions_receiving(stream, port))

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
            rospy.logwarn_throttle(10.0, f'capture_replay: a datagram cut by the capture cannot be decoded: {e}')
            return bytes(payload)

    def summary(self):
        per = ', '.join('%s %d' % (n, s.published) for n, s in sorted(self.bridge.stats.items()) if s.received)
        errors = sum(s.decode_errors + s.wrong_type for s in self.bridge.stats.values())
        text = ('capture_replay: done: %d datagrams fed (%s), %d decode errors, %d skipped'
                % (self.sent, per or 'none', errors, self.skipped))
        skipped = ['%d from hosts other than sim_ip %s' % (self.other_hosts, self.cfg.sim_ip)] \
            if self.other_hosts else []
        ports = sorted(self.skipped_ports.items())
        skipped += [self._hint(port, entry) for port, entry in ports if entry[1] is not None]
        foreign = [(port, entry[0]) for port, entry in ports if entry[1] is None]
        if foreign:
            skipped.append('%d not MORAI messages, to port %s' % (sum(n for _, n in foreign),
                                                                   ', '.join(str(p) for p, _ in foreign)))
        if skipped:
            text += f" ({'; '.join(skipped)})"
        if self.truncated:
            text += ('; %d truncated by the capture (first IP fragment only, replayed with the records '
                     'it holds)' % self.truncated)
        return text
