"""Receive side of the UDP bridge: simulator datagrams -> morai_msgs publications.

:class:`SimReceiver` owns the receive sockets (one per enabled stream of
:data:`morai_bridge.wire.udp.streams.FROM_SIM`, which declares each stream's port, topic, message
type, queue, stamp rule and counters) and runs one path for every datagram (:meth:`_dispatch`):
decode, the newest-sample rule, stamp (the stream's rule), convert, publish, count.  Each stream is
handled by one callable ``(w, stamp)`` -> the message to publish (None: nothing): the receiver's
method in its table :attr:`SimReceiver.METHODS`, for a stream that needs more than a converter (it
keeps what the services need: the latest ego status and SimStatus, the traffic lights; counts), or
else its converter in :data:`.sim_to_ros.CONVERTERS` with the frame bound.  Every received stream is
in exactly one of the two tables.  Everything is counted per stream
(:class:`morai_bridge.link.transport.StreamStats`); in replay mode (``live=False``) datagrams come
from :meth:`feed` instead of sockets.
"""
import functools
import time
import traceback

import roslib.message
import rospy
import tf2_ros
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import NavSatFix

from morai_bridge.configuration import maps, sim_versions
from morai_bridge.configuration.params import FROM_PROFILE, FROM_VERSION, Param, port_param
from morai_bridge.link import transport
from morai_bridge.link.workers import LatestValue, ThrottledLog
from morai_bridge.ros.udp_bridge import sim_to_ros
from morai_bridge.wire.udp import lockstep, nmea, streams
from morai_bridge.wire import udp
from morai_bridge.wire.sample_order import DUPLICATE, NS, NEW, NOT_PUBLISHED, SampleOrder

# The receive side's parameters (the udp_bridge node and capture_replay declare them)
# the version-dependent default ports, for the docs: stream -> [(version, port)]
VERSION_PORTS = sim_versions.port_table()
PORT_PARAMS = [port_param(s.param, s.port, 'receive ' + s.name + s.note) if s.name not in sim_versions.VERSIONED_PORTS
               else Param(s.param, FROM_VERSION, 'receive %s (UDP port; -1: the sim_version\'s, %s; 0 '
                          'disables it)' % (s.name, ', '.join('%s %d' % (v, p) for v, p in VERSION_PORTS[s.name])),
                          minimum=-1, maximum=65535)
               for s in streams.FROM_SIM]
TOPIC_PARAMS = [Param(s.topic_param, s.topic, 'published ' + s.ros_type) for s in streams.FROM_SIM if s.topic] + [
    Param('navsat_topic', 'gps/fix', 'published sensor_msgs/NavSatFix (from the GPS stream)'),
    Param('odom_topic', 'odom', 'published nav_msgs/Odometry when publish_odom'),
]
FRAME_PARAMS = [
    Param('frame_id', 'map', 'header frame of ego status, objects, collisions, odometry parent'),
    Param('child_frame_id', 'base_link', 'odometry child frame and TF child'),
    Param('gps_frame_id', 'gps', 'header frame of GPS messages'),
    Param('imu_frame_id', 'imu', 'header frame of Imu messages'),
]
OUTPUT_PARAMS = [
    Param('stamp_source', 'sim', 'header stamps: sim (packet time) or ros (receive time)',
          choices=('sim', 'ros')),
    Param('own_ego_radius', 2.0, 'an Object Info slot of type -1 (MORAI\'s "Ego vehicle") with a size farther than '
          'this from our ego status is another ego, published with the vehicles (type -1 kept); nearer, or '
          'before the first ego status, it is our own and left out [m]', minimum=0.0),
    Param('imu_duplicates', False, 'publish an IMU packet with the same stamp as the last published (the '
          'simulator\'s catch-up bursts, a link\'s duplicates) too; false: counted on /diagnostics, not published'),
    Param('reorder_window', 1.0, 'a packet whose time is earlier than the last published one\'s is dropped as '
          'reordered (the same time: a duplicate), unless it is earlier by this much or more: then the '
          'simulator\'s clock started again and it is published (docs/reliability.md, "A lossy link") [s]',
          minimum=0.001),
    Param('publish_odom', False, 'publish nav_msgs/Odometry (SI, ENU)'),
    Param('publish_tf', False, 'broadcast TF frame_id -> child_frame_id'),
    Param('map', maps.DEFAULT, 'the map: a MORAI map name (%s; case-insensitive), an MGeo folder, a MORAI '
          'scenario file (its mapInfo), or none (origin 0: the map frame is UTM); gives GPSMessage.eastOffset/'
          'northOffset and Service_MoraiMapSpec (docs/ros_api.md "Maps")'
          % ', '.join(maps.available(maps.search_dir_default()))),
    Param('gps_east_offset', 0.0, 'GPSMessage.eastOffset: map origin east [m]; 0: the map\'s'),
    Param('gps_north_offset', 0.0, 'GPSMessage.northOffset: map origin north [m]; 0: the map\'s'),
    Param('state_queue_size', 1, 'publisher queue depth of the state topics, NavSatFix and odometry included '
          '(1: subscribers get the latest; raise it when every message must be recorded, e.g. rosbag on a '
          'loaded machine); event topics keep 100',
          minimum=1, maximum=10000),
    Param('stale_timeout', 1.0, 'a stream silent for this long is stale (diagnostics WARN) [s]', minimum=0.05),
]
RECEIVE_PARAMS = PORT_PARAMS + TOPIC_PARAMS + FRAME_PARAMS + OUTPUT_PARAMS
# the simulator release (udp_bridge and capture_replay)
VERSION_PARAMS = [
    Param('sim_version', sim_versions.DEFAULT, 'simulator release: a name in config/sim_versions (%s) or the path of '
          'a profile file (morai_check_signs writes one); gives the wire signs, packet sizes, stamps and default '
          'ports of the parameters left at 0 / -1 (docs/versions.md)' % ', '.join(sim_versions.available(
              sim_versions.search_dir_default()))),
    Param('status_steering_sign', 0, 'EgoVehicleStatus.wheel_angle = sign x the status packet\'s steer (wheel_angle '
          'is + right, as MORAI\'s native ROS mode publishes it); 0: the sim_version\'s', choices=(-1, 0, 1)),
]
# at most this many traffic-light ids are remembered for the Morai_TLSrv service
MAX_TRAFFIC_LIGHTS = 4096

# slots of the packets with records (what is not published of them is counted as empty)
OBJECT_SLOTS = udp.variants_of(udp.ObjectInfo)[0].records.count
COLLISION_SLOTS = udp.variants_of(udp.CollisionData)[0].records.count


def enabled_streams(cfg):
    """Receive streams with a non-zero port; the sync extension only with ~emulator_sync."""
    return [s.name for s in streams.FROM_SIM
            if cfg[s.param] and (not s.extension or cfg.get('emulator_sync', False))]


class SimReceiver:
    """Decode and publish every enabled receive stream (see the module docstring)."""

    def __init__(self, cfg, sim_ip, bind_ip, live=True, log=None, on_dead=None, version=None, clock=None,
                 map_info=None):
        """``cfg``: the parameters with the sim_version's values filled in
        (:func:`morai_bridge.ros.package_config.apply_sim_version`); ``version``: that SimVersion;
        ``clock``: the function that stamps a packet without a time of its own (default: the
        receive time, ``rospy.Time.now``; a replay passes the capture's record time)."""
        self.cfg = cfg
        self.version = version or sim_versions.load_version(sim_versions.DEFAULT)
        #: the map the GPS offsets came from (package_config.apply_map); None: offsets from parameters only
        self.map_info = map_info
        self.live = live
        self.enabled = enabled_streams(cfg)
        sockets = {}
        try:
            for name in self.enabled if live else ():
                sockets[name] = transport.bind_udp(bind_ip, cfg[streams.BY_NAME[name].param],
                                                   '~' + streams.BY_NAME[name].param)
        except transport.TransportError:
            for s in sockets.values():
                s.close()
            raise
        self.stats = {name: transport.StreamStats(name, [c.name for c in streams.BY_NAME[name].counters])
                      for name in self.enabled}
        # per datagram: cfg values read once here (Config attributes go through __getattr__)
        self._sim_stamps = cfg.stamp_source == 'sim'
        self._frame_id = cfg.frame_id
        self._gps_frame_id, self._imu_frame_id = cfg.gps_frame_id, cfg.imu_frame_id
        self._gps_offsets = (cfg.gps_east_offset, cfg.gps_north_offset)
        # the receive clock: rospy.Time.now (wall clock, or /clock with /use_sim_time).  A copy of its
        # wall-clock rule built with object.__new__ saved under 1 % of a core at MORAI's rates
        # (bench/bench_stamps.py), so there is none
        self._now = clock or rospy.Time.now
        # live: state topics keep the latest ~state_queue_size; replay as fast as possible must not drop.
        # The derived topics (NavSatFix, odometry) queue like the state topics they come from.
        state_depth = cfg.state_queue_size if live else 1000
        self.navsat_pub = rospy.Publisher(cfg.navsat_topic, NavSatFix, queue_size=state_depth) \
            if 'gps' in self.enabled else None
        self.odom_pub = rospy.Publisher(cfg.odom_topic, Odometry, queue_size=state_depth) \
            if cfg.publish_odom else None
        self.tf = tf2_ros.TransformBroadcaster() if cfg.publish_tf else None
        self.clock_pub = rospy.Publisher('/clock', Clock, queue_size=1) \
            if cfg.get('publish_clock', False) else None
        self.last_clock = None
        self.gps_alt = None
        window_ns = int(cfg.reorder_window * NS)
        self.gps_samples = nmea.GpsSamples(window_ns // 1000000, self.version.nmea_time,
                                           self.stats['gps'].counts if 'gps' in self.stats else None)
        #: the newest-sample rule (wire.sample_order) of each stream stamped from its packets
        self.orders = {name: SampleOrder(window_ns) for name in self.enabled
                       if streams.BY_NAME[name].stamp == streams.PACKET}
        self.bad_stamps = 0
        # the parameter, or (left at 0) the version's
        self.status_sign = (cfg.status_steering_sign if cfg.status_steering_sign != FROM_PROFILE
                            else sim_versions.bridge_signs(self.version).status_steering_sign)
        # 25.S4's IMU seconds are the simulator host's local time: stamped on arrival instead (the row's host_clock)
        self._imu_on_arrival = not streams.BY_NAME['imu'].stamped_by_packet(self.version)
        self._own_ego_radius = cfg.own_ego_radius
        # traffic-light id -> (status, type, receive stamp) of the last packet with that id
        self.traffic_lights = {}
        # latest ego status: its wire form, and (wire form, what was published) for the sync tick service
        self.status = None
        self.published_status = LatestValue()
        # latest SimStatus, and (SimStatus, monotonic time it came) for the simulator services
        self.sim_status = None
        self.sim_status_at = LatestValue()
        self.last_sim_command = rospy.Time()
        self.port_to_stream = {cfg[streams.BY_NAME[name].param]: name for name in self.enabled}
        self.pubs = {}
        self.listeners = {}           # stream name -> callable(wire message), e.g. the sync services
        for name in self.enabled:
            s = streams.BY_NAME[name]
            if s.topic:
                depth = (s.queue or state_depth) if live else 1000
                self.pubs[name] = rospy.Publisher(cfg[s.topic_param], roslib.message.get_message_class(s.ros_type),
                                                  queue_size=depth)
        self.methods = {name: method.__get__(self) for name, method in self.METHODS.items()}
        # stream name -> what _dispatch needs, read from the stream's declaration
        self.handlers = {name: self._handler(streams.BY_NAME[name]) for name in self.enabled}
        self._feed_log = ThrottledLog(log or (lambda text: rospy.logerr('%s', text)), 5.0)
        self.receiver = transport.UdpReceiver(sockets, sim_ip, self._dispatch, self.stats, log=log,
                                              on_dead=on_dead) if live else None

    @property
    def workers(self):
        return self.receiver.workers if self.receiver is not None else []

    def start(self):
        if self.receiver is not None:
            self.receiver.start()

    def stop(self):
        if self.receiver is not None:
            self.receiver.stop()

    def feed(self, dst_port, data, src=('0.0.0.0', 0)):
        """Decode and publish one datagram as if it had arrived on dst_port.
        Returns False when no enabled stream listens on that port."""
        name = self.port_to_stream.get(dst_port)
        if name is None:
            return False
        st = self.stats[name]
        st.received += 1
        st.last_rx = time.monotonic()
        try:
            self._dispatch(name, data, src, st.last_rx)
        except Exception as e:  # a bug on one datagram: count it, say where, go on with the next
            st.handler_errors += 1
            st.last_error = f'{type(e).__name__}: {e}'
            self._feed_log(f'udp_bridge: datagram on the {name} port raised {st.last_error}\n{traceback.format_exc()}')
        return True

    def _handler(self, s):
        """(stats, wire class, decode, tolerant decode, stamped, order, published verdicts, convert,
        publish) of stream ``s``: what :meth:`_dispatch` does with its datagrams."""
        on_packet = self.methods.get(s.name)
        if on_packet is None:                 # the plain case: the stream's converter and its frame
            on_packet = functools.partial(sim_to_ros.CONVERTERS[s.name], frame_id=self._frame_id)
        stamped = s.stamped_by_packet(self.version)
        order = self.orders.get(s.name)
        # the verdicts of the newest-sample rule not published (duplicates are where the row's parameter says so:
        # ~imu_duplicates)
        publish_duplicates = bool(s.duplicates_param and self.cfg[s.duplicates_param])
        refused = tuple(v for v in NOT_PUBLISHED if v != DUPLICATE) if publish_duplicates else NOT_PUBLISHED
        if s.extension:
            return self.stats[s.name], s.classes[0], lockstep.decode, None, stamped, order, refused, on_packet, None
        return (self.stats[s.name], s.classes[0], udp.decode, udp.decode_tolerant, stamped, order, refused,
                on_packet, self.pubs[s.name].publish if s.name in self.pubs else None)

    def _dispatch(self, name, data, addr, t):
        st, wcls, decode, tolerant, stamped, order, refused, on_packet, publish = self.handlers[name]
        try:
            w = decode(data)
        except udp.DecodeError as e:
            w = self._decode_tolerant(st, name, tolerant, data, addr, e)
            if w is None:
                return
        if w.__class__ is not wcls:
            st.wrong_type += 1
            st.last_error = f'got {type(w).__name__} on the {name} port'
            rospy.logwarn_throttle(5.0, f'udp_bridge: {st.last_error} (check the simulator port settings)')
            return
        if order is not None and w.sec is not None:       # the newest-sample rule (a variant without a time: none)
            verdict = order.check(w.sec * NS + w.nsec)
            if verdict is not NEW:
                st.counts[verdict] += 1
                if verdict in refused:
                    return
        msg = on_packet(w, self._stamp(w.sec, w.nsec) if stamped else self._now())
        if msg is not None:                   # None: nothing to publish (a duplicate, no position)
            if publish is not None:
                publish(msg)
            st.published += 1

    def _decode_tolerant(self, st, name, tolerant, data, addr, error):
        """After the strict decoder's DecodeError: the message when the datagram's total
        length identifies exactly one variant although its data_length disagrees
        (counted in st.data_length_mismatch, WARN on /diagnostics), else None (counted
        as a decode error)."""
        try:
            if tolerant is None:
                raise error
            msg, warning = tolerant(data)
        except udp.DecodeError as e:
            st.decode_errors += 1
            st.last_error = str(e)
            rospy.logwarn_throttle(5.0, 'udp_bridge: malformed datagram on %s port from %s:%d: %s'
                                   % (name, addr[0], addr[1], e))
            return None
        if warning is not None:
            st.data_length_mismatch += 1
            st.last_mismatch = str(warning)
            rospy.logwarn_throttle(10.0, 'udp_bridge: %s port: %s (counted; check the simulator '
                                   'version, docs/versions.md)' % (name, warning))
        return msg

    def _stamp(self, sec, nsec):
        if self._sim_stamps and sec is not None:
            if sec >= 0 and 0 <= nsec < 1000000000:     # a canonical pair
                return rospy.Time(sec, nsec)
            self.bad_stamps += 1
        return self._now()

    # ------------------------------------------------------------ streams that need more than their converter

    def _on_sync_state(self, w, stamp):
        cb = self.listeners.get('sync_state')
        if cb is not None:
            cb(w)
        return w                          # no topic: counted as handled

    def _on_ego_status(self, w, stamp):
        if w.pos_x == 0.0 and w.pos_y == 0.0 and w.signed_vel != 0.0:
            # a moving ego at exactly (0, 0): the competition build's status has its position zeroed
            self.stats['ego_status'].counts['zero_position'] += 1
        msg = sim_to_ros.ego_status(w, stamp, self._frame_id, self.status_sign)
        self.status = w
        self.published_status.put((w, msg))
        if self.clock_pub is not None and w.sec is not None and stamp != self.last_clock:
            self.last_clock = stamp
            self.clock_pub.publish(Clock(stamp))
        if self.odom_pub is not None or self.tf is not None:
            odom, tf = sim_to_ros.odometry(w, stamp, self.cfg.frame_id, self.cfg.child_frame_id)
            if self.odom_pub is not None:
                self.odom_pub.publish(odom)
            if self.tf is not None:
                self.tf.sendTransform(tf)
        return msg

    def _on_competition_status(self, w, stamp):
        return sim_to_ros.ego_status(w, stamp, self._frame_id, self.status_sign)

    def _on_object_info(self, w, stamp):
        own = self.status
        m = sim_to_ros.object_info(w, stamp, self._frame_id,
                                   None if own is None else (own.pos_x, own.pos_y), self._own_ego_radius)
        # slots not published: empty ones (all zero, or type -1 without a size), our own ego, unknown types
        self.stats['object_info'].counts['empty_slots'] += OBJECT_SLOTS - m.num_of_npcs - m.num_of_pedestrian - m.num_of_obstacle
        return m

    def _on_collision(self, w, stamp):
        m = sim_to_ros.collision(w, stamp, self._frame_id)
        # slots not published: all-zero ones (dropped by the codec) and obj_type -1 ones
        self.stats['collision'].counts['empty_slots'] += COLLISION_SLOTS - len(m.collision_object)
        return m

    def _on_traffic_light(self, w, stamp):
        lights = self.traffic_lights
        index = w.traffic_light_index
        if index in lights or len(lights) < MAX_TRAFFIC_LIGHTS:
            lights[index] = (w.traffic_light_status, w.traffic_light_type, stamp)
        return sim_to_ros.traffic_light(w, stamp, self._frame_id)

    def _on_sim_status(self, w, stamp, monotonic=time.monotonic):
        self.sim_status = w
        self.sim_status_at.put((w, monotonic()))
        return sim_to_ros.sim_status(w, stamp, self.last_sim_command)

    def _on_gps(self, w, stamp):
        # one message per GPS sample (nmea.GpsSamples: the sentences of one fix time merged), as
        # native ROS mode publishes; a sample given out late comes before the one w completes
        if w.altitude is not None and (w.latitude or w.longitude):
            self.gps_alt = w.altitude
        msg = None
        for sample, sample_stamp in self.gps_samples.add(w, stamp):
            if msg is not None:
                self.pubs['gps'].publish(msg)
                self.stats['gps'].published += 1
            msg = self._gps_sample(sample, sample_stamp)
        return msg

    def _gps_sample(self, sample, stamp):
        """GPSMessage of one merged sample (None without a position); its NavSatFix is published here."""
        east, north = self._gps_offsets
        g, n = sim_to_ros.gps(sample, stamp, self._gps_frame_id, east, north, self.gps_alt)
        if g is not None:
            st = self.stats['gps']
            st.counts['no_fix_now'] = int(g.status == 0)
            st.counts['no_fix'] += st.counts['no_fix_now']
            self.navsat_pub.publish(n)
        return g

    def _on_imu(self, w, stamp):
        # a catch-up burst repeats the packet's stamp (its state too, or new sensor noise on some hosts:
        # the stamp decides, as the heven report advises): the newest-sample rule in _dispatch drops it
        if self._imu_on_arrival and w.sec is not None and not 0 <= w.nsec < 1000000000:
            self.bad_stamps += 1          # stamped on arrival (the version's rule), counted all the same
        return sim_to_ros.imu(w, stamp, self._imu_frame_id)

    # ------------------------------------------------------------ for services

    def wait_sim_status(self, pred, timeout, since):
        """True when a SimStatus received after monotonic time ``since`` satisfies pred within
        timeout; None when the simulator is not reporting status at all (nothing to wait for)."""
        st = self.stats.get('sim_status')
        if st is None or st.age() is None or st.age() > 2.0 + timeout:
            return None
        return self.sim_status_at.wait_for(lambda at: at[1] >= since and pred(at[0]), timeout) is not None

    def wait_status_at(self, sec, nsec, timeout):
        """The ego status message stamped (sec, nsec) if it arrives within timeout, else None."""
        got = self.published_status.wait_for(lambda p: p[0].sec == sec and p[0].nsec == nsec, timeout)
        return None if got is None else got[1]

    #: stream name -> the method that handles its packets ``(w, stamp)``, for the streams that need more
    #: than their converter (written out: a reader who greps a stream's name finds it here)
    METHODS = {
        'sync_state': _on_sync_state,
        'ego_status': _on_ego_status,
        'competition_status': _on_competition_status,
        'object_info': _on_object_info,
        'collision': _on_collision,
        'traffic_light': _on_traffic_light,
        'sim_status': _on_sim_status,
        'gps': _on_gps,
        'imu': _on_imu,
    }
