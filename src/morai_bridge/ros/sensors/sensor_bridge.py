"""What every sensor bridge (camera, 3D LiDAR, 2D LiDAR) shares: :class:`SensorBridge`, the node
main :func:`run_node`, the static transforms of a sensor's mount, and packet stamps.

A sensor bridge receives one UDP port of the simulator and publishes ROS messages.  The base
class owns everything that is the same for all of them:

* the socket: :class:`morai_bridge.link.transport.ReceivePort` (``~sim_ip``, ``~bind_ip``,
  ``~port``, ``~socket_buffer``), read in a supervised worker that calls :meth:`on_datagram`
  for each datagram and :meth:`on_idle` whenever the socket is drained;
* :attr:`workers` (the receive worker and the subclass's :attr:`extra_workers`), :meth:`start`
  and :meth:`stop`;
* :meth:`transforms`: the mount pose as a static transform (``~parent_frame`` -> ``~frame_id``);
* :meth:`packet_stamp`: a header stamp from the sec / nsec a packet carries (``~stamp_source``);
* :meth:`diagnostics`: the entry's frame (stale / no data, bad input in the last 10 s,
  bridge errors, the socket's values); the subclass adds what is its own through
  :meth:`report`.

A subclass sets :attr:`kind`, :attr:`title`, :attr:`port_off`, :attr:`problem_words` and
implements :meth:`setup` (its codec, publishers and counters), :meth:`on_datagram` and
:meth:`report`.  Pure functions (no master needed) are unit-tested in
test/unit/ros/sensors/test_sensor_bridge.py (test_camera_ros.py, test_lidar_ros.py, test_lidar2d_ros.py: each stream).
"""
import math

import rospy
import tf2_ros
from geometry_msgs.msg import Quaternion, Transform, TransformStamped, Vector3
from std_msgs.msg import Header

from morai_bridge.configuration import topic_names
from morai_bridge.configuration.params import DISABLED, ParamError
from morai_bridge.configuration.sim_settings_files import SettingsError
from morai_bridge.link import memory, transport
from morai_bridge.link.measure import BufferUse, Recent, Timing
from morai_bridge.link.workers import ERROR, OK, WARN
from morai_bridge.ros.supervision import make_updater
from morai_bridge.ros.params import init_node, load
from morai_bridge.ros.sensors.sensor_params import apply_settings
from morai_bridge.ros.supervision import NodeSupervisor
from morai_bridge.wire.units import quaternion_from_rpy

#: rotation of a camera's optical frame (z forward, x right, y down) in its body frame (x forward,
#: y left, z up): roll -90 deg, then yaw -90 deg, as (x, y, z, w).  REP-103 "Suffix frames".
OPTICAL_ROTATION = (-0.5, 0.5, -0.5, 0.5)


class SensorBridge:
    """One sensor's UDP port -> ROS topics (module docstring).  ``log(text)`` and ``on_dead(worker)``
    come from the node's :class:`~morai_bridge.ros.supervision.NodeSupervisor`."""

    #: the sensor kind: worker and stream name, and the kind read from a SensorInfo file
    kind = ''
    #: diagnostics entry name, before ' (port N)'
    title = ''
    #: the ParamError text when ~port is 0 (the stream is off)
    port_off = '~port is 0: the stream is off'
    #: what the subclass's problem counters count, for the diagnostics summary
    problem_words = 'malformed datagrams'

    def __init__(self, cfg, log=None, on_dead=None):
        self.cfg = topic_names.resolve(self.kind, cfg)     # topics left to the convention: ~native_names
        if cfg.port == DISABLED:
            raise ParamError(self.port_off)
        self.last_error = ''
        self.timing = Timing()           # datagram read -> its messages published
        self.extra_workers = []          # the subclass's own workers, started and supervised with the socket's
        self._recent = Recent()
        self.setup(cfg, log, on_dead)
        self.socket = transport.ReceivePort(cfg, self.kind, self.on_datagram, log=log, on_dead=on_dead,
                                            on_idle=self.on_idle)
        self.buffer_use = BufferUse(self.socket.rcvbuf)
        self._drops_told = 0

    # -------------------------------------------------------------- the subclass's part

    def setup(self, cfg, log, on_dead):
        """Build the codec, publishers, counters and :attr:`extra_workers` (before the socket is bound)."""

    def on_datagram(self, name, data, addr, t):
        """One datagram from the simulator, read at ``time.monotonic()`` ``t`` (receive thread)."""
        raise NotImplementedError

    #: called (receive thread) whenever the socket is drained, or None
    on_idle = None

    def report(self):
        """What the subclass reports on /diagnostics, computed once per update: (summary text while data
        flows, total of its problem counters, [(level, text), ...] more problems, [(key, value), ...]
        its values, shown after 'port')."""
        raise NotImplementedError

    # -------------------------------------------------------------- shared

    def entry_name(self):
        return '%s (port %d)' % (self.title, self.cfg.port)

    @property
    def workers(self):
        return list(self.socket.workers) + list(self.extra_workers)

    def start(self):
        self.socket.start()
        for w in self.extra_workers:
            w.start()

    def stop(self):
        self.socket.stop()
        for w in self.extra_workers:
            w.stop()

    def transforms(self):
        """Static transforms to publish on /tf_static: the mount pose."""
        cfg = self.cfg
        return [mount_transform(cfg.parent_frame, cfg.frame_id, cfg.mount_x, cfg.mount_y, cfg.mount_z,
                                cfg.mount_roll, cfg.mount_pitch, cfg.mount_yaw)]

    def packet_stamp(self, sec, nsec, fallback=None):
        """Header stamp of a packet's sec / nsec with ``~stamp_source: sim`` (a pair that cannot be a time
        is counted in ``bad_stamps``); otherwise, or then, ``fallback`` or the ROS time now."""
        if self.cfg.stamp_source == 'sim' and sec is not None:
            s = sim_stamp(sec, nsec)
            if s is not None:
                return s
            self.bad_stamps += 1
        return fallback if fallback is not None else rospy.get_rostime()

    bad_stamps = 0                       # packets whose sec / nsec is not a time (stamp_source sim)
    memory_kept = False                  # run_node applied ~keep_freed_memory

    def diagnostics(self, stat):
        cfg = self.cfg
        st = self.socket.stats
        level, text = stream_level(st, cfg.stale_timeout, cfg.port)
        flowing, problems, more, values = self.report()
        if not text:
            text = flowing
        if self._recent.check(problems + st.foreign + st.handler_errors):
            level = max(level, WARN)
            text += f'; {self.problem_words} in the last 10 s (see values)'
        for lvl, what in more:
            level = max(level, lvl)
            text += '; ' + what
        if st.handler_errors:
            level = ERROR
            text += '; %d datagrams hit a bridge error (see the log)' % st.handler_errors
        drops = self.socket.kernel_drops()
        if drops:
            level = max(level, WARN)
            text += '; the kernel dropped %d datagrams: receive buffer full (see the log)' % drops
        self._tell_buffer(st, drops)
        stat.summary(level, text)
        stat.add('port', cfg.port)
        for key, value in values:
            stat.add(key, value)
        stat.add('from unexpected hosts', st.foreign)
        stat.add('last unexpected sender', st.last_foreign)
        stat.add('bridge errors', st.handler_errors)
        sock = self.socket
        stat.add('receive buffer [bytes]', '%d (asked %d)' % (sock.rcvbuf, sock.rcvbuf_asked))
        stat.add('largest backlog read at once [bytes]', st.peak_backlog)
        stat.add('dropped by the kernel (buffer full)', 'unknown' if drops is None else drops)
        stat.add('freed memory kept for reuse', str(self.memory_kept))
        age = st.age()
        stat.add('age of last datagram [s]', '' if age is None else f'{age:.3f}')
        stat.add('last error', self.last_error or st.last_error)
        return stat


    def _tell_buffer(self, st, drops):
        """Log once whether the receive buffer is enough for this stream's measured rate
        (:class:`~morai_bridge.link.measure.BufferUse`), and whenever the kernel dropped datagrams
        since the last time, what an administrator runs."""
        sock, name = self.socket, rospy.get_name()
        verdict = self.buffer_use.update(st.bytes, st.peak_backlog)
        if verdict is not None:
            enough, holds, rate, peak = verdict
            what = ('%s: receive buffer %d bytes%s holds %.0f ms of this stream (%.2f MB/s) and %.1f times its '
                    'largest backlog (%d bytes)' % (name, sock.rcvbuf, '' if sock.rcvbuf >= sock.rcvbuf_asked else
                                                    ' (asked %d)' % sock.rcvbuf_asked,
                                                    min(holds, 1e6) * 1000.0, rate / 1e6,
                                                    sock.rcvbuf / peak if peak else math.inf, peak))
            if enough:
                rospy.loginfo('%s: enough', what)
            else:
                rospy.logwarn('%s: too little to ride out a pause of the node; %s', what,
                              rmem_advice(sock.rcvbuf_asked))
        if drops and drops > self._drops_told:
            rospy.logwarn('%s: the kernel dropped %d datagrams of this stream so far (receive buffer %d bytes full); '
                          '%s', name, drops, sock.rcvbuf, rmem_advice(sock.rcvbuf_asked))
            self._drops_told = drops


def rmem_advice(asked):
    """What an administrator runs so that a normal user's node gets the receive buffer it asks for."""
    return ('an administrator raises the kernel\'s cap once: sudo sysctl -w net.core.rmem_max=%d (to keep it: '
            'echo net.core.rmem_max=%d | sudo tee /etc/sysctl.d/60-morai.conf); docs/ros_api.md' % (asked, asked))


def stream_level(st, stale_timeout, port, now=None):
    """(level, text) of a receive stream from its StreamStats: WARN before the first datagram and
    when stale, OK otherwise (the caller adds its own problems)."""
    age = st.age(now)
    if age is None:
        return WARN, 'no datagram yet on port %d' % port
    if age > stale_timeout:
        return WARN, f'stale: last datagram {age:.1f} s ago'
    return OK, ''


def counted(prefix, counts):
    """One diagnostics value per key of ``counts`` (sorted), named ``prefix + key``."""
    return [(prefix + key, counts[key]) for key in sorted(counts)]


# ----------------------------------------------------------------------------- stamps

def sim_stamp(sec, nsec):
    """rospy.Time of a packet's sec / nsec pair, or None when it cannot be a time
    (negative seconds, nanoseconds outside 0..999,999,999)."""
    if sec is None or nsec is None or sec < 0 or not 0 <= nsec < 1000000000:
        return None
    return rospy.Time(sec, nsec)


# ----------------------------------------------------------------------------- TF

def mount_transform(parent, child, x, y, z, roll_deg, pitch_deg, yaw_deg, stamp=None):
    """geometry_msgs/TransformStamped parent -> child for a mount pose (m, deg; fixed axes
    roll about x, pitch about y, yaw about z, applied in that order: R = Rz Ry Rx)."""
    q = quaternion_from_rpy(math.radians(roll_deg), math.radians(pitch_deg), math.radians(yaw_deg))
    return _transform(parent, child, (x, y, z), q, stamp)


def optical_transform(body, optical, stamp=None):
    """geometry_msgs/TransformStamped body -> optical frame of a camera (same origin)."""
    return _transform(body, optical, (0.0, 0.0, 0.0), OPTICAL_ROTATION, stamp)


def _transform(parent, child, xyz, q, stamp):
    t = TransformStamped()
    t.header = Header(stamp=stamp if stamp is not None else rospy.Time(), frame_id=parent)
    t.child_frame_id = child
    t.transform = Transform(Vector3(*xyz), Quaternion(*q))
    return t


def publish_static_tf(transforms):
    """Send ``transforms`` once on /tf_static (latched); keep the returned broadcaster alive."""
    b = tf2_ros.StaticTransformBroadcaster()
    b.sendTransform(list(transforms))
    return b


# ----------------------------------------------------------------------------- node main

def run_node(node_name, params, bridge_class):
    """main() of a sensor node: read ``params`` (and ``~settings``), build ``bridge_class(cfg, log,
    on_dead)``, diagnostics (the bridge's entry and 'Workers'), static TF, start, spin.  Exits 2 on a
    configuration error, 1 when a worker died, 0 on shutdown (or when the settings send no such
    sensor over UDP)."""
    init_node(node_name, params)
    kind = bridge_class.kind
    try:
        cfg = load(params)
        if cfg.get('settings') and not apply_settings(cfg, params, kind,
                                                      lambda line: rospy.logwarn('%s: %s', node_name, line)):
            rospy.loginfo('%s: %s sends no %s over UDP: nothing to bridge', node_name, cfg.settings, kind)
            return
        supervisor = NodeSupervisor(node_name, cfg)
        kept = cfg.keep_freed_memory and memory.keep_freed_memory()
        if cfg.keep_freed_memory and not kept:
            rospy.logwarn('%s: ~keep_freed_memory: this C library has no mallopt; freed buffers go back to the '
                          'kernel (more page faults at each revolution / frame)', node_name)
        left = [t.param for t in topic_names.SENSOR_TOPICS if t.kind == kind and not cfg[t.param]]
        bridge = bridge_class(cfg, log=supervisor.log, on_dead=supervisor.on_dead)
        bridge.memory_kept = kept
        for name in left:           # the convention's name, for rosparam get
            rospy.set_param('~' + name, cfg[name])
    except (ParamError, transport.TransportError, SettingsError) as e:
        rospy.logfatal('%s: %s', node_name, e)
        raise SystemExit(2)
    supervisor.watch(lambda: bridge.workers)
    updater, _timer = make_updater('morai_sensor@%s:%d' % (cfg.sim_ip, cfg.port), supervisor)
    updater.add(bridge.entry_name(), bridge.diagnostics)
    supervisor.add_to(updater)
    bridge.tf_broadcaster = publish_static_tf(bridge.transforms()) if cfg.publish_tf else None    # kept alive
    rospy.on_shutdown(bridge.stop)
    bridge.start()
    sock = bridge.socket
    rospy.loginfo('%s: receiving from %s on %s:%d (receive buffer %d bytes%s)', node_name, cfg.sim_ip, cfg.bind_ip,
                  cfg.port, sock.rcvbuf,
                  '' if sock.rcvbuf >= cfg.socket_buffer else
                  ' of %d asked, net.core.rmem_max caps it: whether that is enough is logged once data flows'
                  % cfg.socket_buffer)
    raise SystemExit(supervisor.spin())

