"""Parts shared by the sensor bridge nodes (camera_bridge, lidar_bridge, lidar2d_bridge).

* Parameter groups every sensor node declares: the network (``~sim_ip``,
  ``~bind_ip``, ``~port``, ``~socket_buffer``), the mount pose and TF
  (``~frame_id``, ``~parent_frame``, ``~mount_x`` ... ``~mount_yaw``,
  ``~publish_tf``) and the tail (``~stale_timeout``, ``~fault_injection``).
* :func:`mount_transform` / :func:`optical_transform`: the static transforms of a
  sensor's mount pose (REP-103 body frame) and of a camera's optical frame
  (REP-103: z forward, x right, y down); :func:`publish_static_tf` sends them once,
  latched, on ``/tf_static``.
* :class:`SensorSocket`: one bound UDP port received in a supervised worker
  (:class:`morai_bridge.link.transport.UdpReceiver`), datagrams from hosts other than
  ``~sim_ip`` dropped and counted; asks the kernel for a receive buffer of
  ``~socket_buffer`` bytes and reports what it got.
* :class:`Timing` (processing-time percentiles), :class:`LatestSlot` (hand the
  newest item to a slower worker, counting what it skipped), :class:`Recent`
  (did a set of error counters grow lately?) and :func:`snapshot` (copy a
  counter dict another thread may be growing).

Everything that needs no ROS master is a plain function, unit-tested in
test/unit/test_sensor_ros.py.
"""
import math
import socket
import threading
import time

import rospy
import tf2_ros
from geometry_msgs.msg import Quaternion, Transform, TransformStamped, Vector3
from std_msgs.msg import Header

from morai_bridge.link import transport
from morai_bridge.ros.bridge_diagnostics import make_updater
from morai_bridge.ros.params import Param, ParamError, load
from morai_bridge.ros.supervision import FAULT_INJECTION, NodeSupervisor
from morai_bridge.wire import morai_settings
from morai_bridge.wire.units import quaternion_from_rpy

#: rotation of a camera's optical frame (z forward, x right, y down) in its body frame (x forward,
#: y left, z up): roll -90 deg, then yaw -90 deg, as (x, y, z, w).  REP-103 "Suffix frames".
OPTICAL_ROTATION = (-0.5, 0.5, -0.5, 0.5)


def network_params(port, port_doc, buffer_bytes):
    """``~sim_ip``, ``~bind_ip``, ``~port`` and ``~socket_buffer`` of one sensor stream."""
    return [
        Param('sim_ip', '127.0.0.1', 'simulator host; datagrams from other hosts are dropped and counted '
              '(0.0.0.0 accepts any sender)'),
        Param('bind_ip', '127.0.0.1', 'local address the receive port is bound to (0.0.0.0: all)'),
        Param('port', port, port_doc, minimum=0, maximum=65535),
        Param('socket_buffer', buffer_bytes, 'receive buffer asked of the kernel [bytes]; Linux caps it at '
              'net.core.rmem_max unless the node may use SO_RCVBUFFORCE (diagnostics show what was granted)',
              minimum=65536),
    ]


def mount_params(frame_id, what):
    """The sensor's frame and its mount pose on the vehicle (static TF parent -> frame)."""
    return [
        Param('frame_id', frame_id, 'frame of the %s (TF child of parent_frame)' % what),
        Param('parent_frame', 'base_link', 'vehicle frame the sensor is mounted on (TF parent)'),
        Param('publish_tf', True, 'broadcast the mount pose as a static transform parent_frame -> frame_id '
              '(false when a URDF / robot_state_publisher already does)'),
        Param('mount_x', 0.0, 'mount position, forward of parent_frame [m]'),
        Param('mount_y', 0.0, 'mount position, left of parent_frame [m]'),
        Param('mount_z', 0.0, 'mount position, above parent_frame [m]'),
        Param('mount_roll', 0.0, 'mount roll about x [deg]', minimum=-360.0, maximum=360.0),
        Param('mount_pitch', 0.0, 'mount pitch about y [deg] (+ = nose down, REP-103)', minimum=-360.0,
              maximum=360.0),
        Param('mount_yaw', 0.0, 'mount yaw about z [deg] (+ = turned left)', minimum=-360.0, maximum=360.0),
    ]


def tail_params(stale_default=1.0):
    return [
        Param('stale_timeout', stale_default, 'no datagram for this long: diagnostics WARN [s]', minimum=0.05),
        FAULT_INJECTION,
    ]


#: ``~settings``: the node reads its port, mount pose, frames, topics (and LiDAR model, camera size
#: and FOV) from MORAI SIM's saved sensor settings (docs/settings.md)
SETTINGS_PARAMS = [
    Param('settings', '', 'MORAI SIM sensor settings file (SensorInfo_<vehicle>.json); when set, the sensor\'s '
          'port, addresses, mount pose, frame, topics, LiDAR model and camera size / FOV come from it and '
          'override those parameters ("": off; docs/settings.md)'),
    Param('settings_sensor', -1, 'with settings: m_SensorUniqueID of the sensor to bridge; -1: the first one '
          'of this kind the settings send over UDP (none: the node exits 0)', minimum=-1),
]


def apply_settings(cfg, params, kind):
    """Overwrite ``cfg`` with what ``cfg.settings`` (a SensorInfo file) gives the ``kind`` sensor
    (camera, lidar, lidar2d).  False when the file sends no such sensor over UDP.  Raises
    :class:`~morai_bridge.wire.morai_settings.SettingsError` / :class:`ParamError` naming the key."""
    sensors = morai_settings.load_sensors(cfg.settings)
    values = morai_settings.node_params(kind, sensors, cfg.settings_sensor, cfg.parent_frame)
    if values is None:
        return False
    declared = {p.name: p for p in params}
    for name, value in values.items():
        if name in declared:        # cx / cy: only where the camera node declares them
            cfg[name] = declared[name].coerce(value)
    return True


STAMP_PARAM = Param('stamp_source', 'sim', 'header stamps: sim (the time the simulator put in the packets) or '
                    'ros (receive time)', choices=('sim', 'ros'))


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


def cfg_mount_transform(cfg, stamp=None):
    return mount_transform(cfg.parent_frame, cfg.frame_id, cfg.mount_x, cfg.mount_y, cfg.mount_z,
                           cfg.mount_roll, cfg.mount_pitch, cfg.mount_yaw, stamp)


def publish_static_tf(transforms):
    """Send ``transforms`` once on /tf_static (latched); keep the returned broadcaster alive."""
    b = tf2_ros.StaticTransformBroadcaster()
    b.sendTransform(list(transforms))
    return b


# ----------------------------------------------------------------------------- stamps

def sim_stamp(sec, nsec):
    """rospy.Time of a packet's int32 sec / nsec pair, or None when it cannot be a time
    (negative seconds, nanoseconds outside 0..999,999,999)."""
    if sec is None or nsec is None or sec < 0 or not 0 <= nsec < 1000000000:
        return None
    return rospy.Time(sec, nsec)


# ----------------------------------------------------------------------------- socket

class SensorSocket(object):
    """One UDP receive port in a supervised worker.

    ``handler(name, data, addr, t)`` runs on the worker's thread for each datagram
    from ``sim_ip`` (``t``: ``time.monotonic()`` when it was read).  ``stats``
    (:class:`morai_bridge.link.transport.StreamStats`) counts received datagrams,
    foreign senders and handler exceptions; ``rcvbuf`` is the receive buffer the
    kernel granted (bytes of payload, i.e. half of what ``SO_RCVBUF`` reports on
    Linux), ``rcvbuf_asked`` what ``~socket_buffer`` asked for.
    """

    def __init__(self, cfg, name, handler, log=None, on_dead=None, on_idle=None):
        sim_ip = transport.resolve_host(cfg.sim_ip, '~sim_ip')
        bind_ip = transport.resolve_host(cfg.bind_ip, '~bind_ip')
        self.name = name
        self.port = cfg.port
        self.rcvbuf_asked = int(cfg.socket_buffer)
        sock = transport.bind_udp(bind_ip, cfg.port, '~port', rcvbuf=self.rcvbuf_asked)
        self.rcvbuf = grow_receive_buffer(sock, self.rcvbuf_asked)
        self.stats = transport.StreamStats(name)
        self.receiver = transport.UdpReceiver({name: sock}, sim_ip, handler, {name: self.stats}, log=log,
                                              on_dead=on_dead, name=name + '_receiver', on_idle=on_idle)

    @property
    def workers(self):
        return self.receiver.workers

    def start(self):
        self.receiver.start()

    def stop(self):
        self.receiver.stop()


def granted_buffer(sock):
    # Linux doubles the value set (bookkeeping overhead) and reports the doubled value
    return sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) // 2


def grow_receive_buffer(sock, size):
    """Make the receive buffer at least ``size`` bytes if the kernel lets us: SO_RCVBUF is capped
    by net.core.rmem_max, SO_RCVBUFFORCE (CAP_NET_ADMIN) is not.  Returns the size granted."""
    if granted_buffer(sock) < size:
        force = getattr(socket, 'SO_RCVBUFFORCE', 33)
        try:
            sock.setsockopt(socket.SOL_SOCKET, force, size)
        except OSError:
            pass
    return granted_buffer(sock)


# ----------------------------------------------------------------------------- measurements

class Timing(object):
    """The last ``size`` durations (s) of some processing step, for percentiles.

    ``add`` is called by one thread; ``summary`` (another thread) works on a copy.
    """

    def __init__(self, size=512):
        self.size = int(size)
        self.values = [0.0] * self.size
        self.count = 0
        self.max = 0.0

    def add(self, seconds):
        self.values[self.count % self.size] = seconds
        self.count += 1
        if seconds > self.max:
            self.max = seconds

    def percentile(self, q):
        n = min(self.count, self.size)
        if n == 0:
            return None
        data = sorted(self.values[:n])
        return data[max(0, min(n - 1, int(math.ceil(q / 100.0 * n)) - 1))]   # nearest rank

    def summary_ms(self):
        """'p50 / p99 / max' in ms over the window (max since start), or '' before any."""
        if self.count == 0:
            return ''
        return '%.2f / %.2f / %.2f' % (self.percentile(50) * 1e3, self.percentile(99) * 1e3, self.max * 1e3)


class LatestSlot(object):
    """A one-item mailbox between a fast producer and a slower consumer: ``put`` replaces
    an item not yet taken (counted in ``skipped``), ``take`` waits for one."""

    def __init__(self):
        self._cond = threading.Condition()
        self._item = None
        self.skipped = 0
        self.taken = 0

    def put(self, item):
        with self._cond:
            if self._item is not None:
                self.skipped += 1
            self._item = item
            self._cond.notify()

    def take(self, timeout):
        with self._cond:
            if self._item is None:
                self._cond.wait(timeout)
            item, self._item = self._item, None
            if item is not None:
                self.taken += 1
            return item


class Recent(object):
    """Whether any of some counters grew within the last ``window_s`` seconds (checked when
    ``check(total)`` is called, e.g. at each diagnostics update)."""

    def __init__(self, window_s=10.0, clock=time.monotonic):
        self.window_s = float(window_s)
        self.clock = clock
        self._last_total = 0
        self._last_change = None

    def check(self, total):
        now = self.clock()
        if total != self._last_total:
            self._last_total = total
            self._last_change = now
        return self._last_change is not None and now - self._last_change <= self.window_s


class RateMeter(object):
    """Rate of a monotonically growing counter between successive calls."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self._prev = None

    def __call__(self, count):
        now = self.clock()
        prev, self._prev = self._prev, (count, now)
        if prev is None or now <= prev[1]:
            return 0.0
        return (count - prev[0]) / (now - prev[1])


def snapshot(mapping):
    """A copy of a dict (or Counter) that another thread may be adding keys to."""
    for _ in range(5):
        try:
            return dict(mapping)
        except RuntimeError:      # changed size during the copy: try again
            continue
    return {}


def add_counts(stat, prefix, counts):
    """One diagnostics value per key of ``counts`` (sorted), named ``prefix + key``."""
    for key in sorted(counts):
        stat.add(prefix + key, counts[key])


def stream_level(st, stale_timeout, port, now=None):
    """(level, text) of a receive stream from its StreamStats: WARN before the first datagram and
    when stale, OK otherwise (the caller adds its own problems)."""
    age = st.age(now)
    if age is None:
        return 1, 'no datagram yet on port %d' % port
    if age > stale_timeout:
        return 1, 'stale: last datagram %.1f s ago' % age
    return 0, ''



# ----------------------------------------------------------------------------- node main

def run_node(node_name, params, bridge_class, entry_name):
    """main() of a sensor node: read ``params``, build ``bridge_class(cfg, log, on_dead)``,
    diagnostics (the bridge's entry, named ``entry_name(cfg)``, and 'Workers'), static TF,
    start, spin.  Exits 2 on a configuration error, 1 when a worker died, 0 on shutdown."""
    rospy.init_node(node_name)
    try:
        cfg = load(params)
        if cfg.get('settings') and not apply_settings(cfg, params, node_name[:-len('_bridge')]):
            rospy.loginfo('%s: %s sends no %s over UDP: nothing to bridge', node_name, cfg.settings,
                          node_name[:-len('_bridge')])
            return
        supervisor = NodeSupervisor(node_name, cfg)
        bridge = bridge_class(cfg, log=supervisor.log, on_dead=supervisor.on_dead)
    except (ParamError, transport.TransportError, morai_settings.SettingsError) as e:
        rospy.logfatal('%s: %s', node_name, e)
        raise SystemExit(2)
    supervisor.watch(lambda: bridge.workers)
    updater, _timer = make_updater('morai_sensor@%s:%d' % (cfg.sim_ip, cfg.port))
    updater.add(entry_name(cfg), bridge.diagnostics)
    supervisor.add_to(updater)
    _tf = publish_static_tf(bridge.transforms()) if cfg.publish_tf else None
    rospy.on_shutdown(bridge.stop)
    bridge.start()
    rospy.loginfo('%s: receiving from %s on %s:%d (receive buffer %d bytes%s)', node_name, cfg.sim_ip, cfg.bind_ip,
                  cfg.port, bridge.socket.rcvbuf,
                  '' if bridge.socket.rcvbuf >= cfg.socket_buffer else
                  ', asked %d: raise net.core.rmem_max to avoid losing datagrams in bursts' % cfg.socket_buffer)
    raise SystemExit(supervisor.spin())
