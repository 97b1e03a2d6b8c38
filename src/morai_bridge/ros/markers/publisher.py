"""The markers node's working part: keeps the latest ground truth and publishes it as a
visualization_msgs/MarkerArray (the messages are built by :mod:`.shapes`)."""
import os
import threading
import time

import rospy
import yaml
from diagnostic_msgs.msg import DiagnosticStatus
from morai_msgs.msg import CollisionData, EgoVehicleStatus, GetTrafficLightStatus, ObjectStatusList
from visualization_msgs.msg import MarkerArray

from morai_bridge.ros.markers import shapes as mk
from morai_bridge.ros import package_config
from morai_bridge.ros.supervision import make_updater
from morai_bridge.ros.supervision import RosTimer
from morai_bridge.configuration.params import ParamError


def light_positions_path(value, package_dir=None):
    """'' -> None; a bare name -> <package>/config/traffic_lights/<name>.yaml; else the path itself."""
    if not value:
        return None
    if os.sep in value or value.endswith(('.yaml', '.yml')):
        return os.path.expanduser(value)
    return os.path.join(package_dir or package_config.package_dir(), 'config', 'traffic_lights', value + '.yaml')


def read_light_positions(value, package_dir=None):
    path = light_positions_path(value, package_dir)
    if path is None:
        return None, {}
    try:
        with open(path) as f:
            obj = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise ParamError(f'~traffic_light_positions={value!r}: cannot read {path}: {e}') from None
    try:
        return path, mk.parse_light_positions(obj, path)
    except ValueError as e:
        raise ParamError(f'~traffic_light_positions: {e}') from None


class MarkersNode:

    def __init__(self, cfg, supervisor):
        self.cfg = cfg
        self.style = mk.Style(cfg.frame_id, (cfg.ego_length, cfg.ego_width, cfg.ego_height), cfg.ego_velocity_frame,
                              cfg.velocity_arrow_s, cfg.text_height, cfg.labels, cfg.collision_lifetime_s,
                              cfg.collision_diameter)
        self.lights_path, self.light_pos = read_light_positions(cfg.traffic_light_positions)
        self.lock = threading.Lock()
        self.ego = self.objects = None
        self.ego_t = self.objects_t = None            # monotonic receive times
        self.lights = {}                              # index -> (message, receive time)
        self.unplaced = set()                         # light indices without a position
        self.collisions = []                          # pending CollisionData events
        self.tracker = mk.MarkerTracker(cfg.frame_id)
        self.published = self.collision_events = 0
        self.last_counts = {}
        # Each array is the whole scene, but the DELETEs of vanished objects are sent once:
        # a few arrays of queue so that a slow subscriber does not lose them.
        self.pub = rospy.Publisher(cfg.markers_topic, MarkerArray, queue_size=10)
        rospy.Subscriber(cfg.ego_topic, EgoVehicleStatus, self.on_ego, queue_size=1)
        rospy.Subscriber(cfg.object_topic, ObjectStatusList, self.on_objects, queue_size=1)
        rospy.Subscriber(cfg.traffic_light_topic, GetTrafficLightStatus, self.on_light, queue_size=50)
        rospy.Subscriber(cfg.collision_topic, CollisionData, self.on_collision, queue_size=100)
        self.updater, self._diag_timer = make_updater('morai_markers', supervisor)
        self.updater.add('RViz markers', self._diag)
        self.timer = RosTimer('markers', 1.0 / cfg.rate_hz, self.tick, supervisor)
        supervisor.add_to(self.updater)

    # ------------------------------------------------------------------ inputs
    def on_ego(self, m):
        with self.lock:
            self.ego, self.ego_t = m, time.monotonic()

    def on_objects(self, m):
        with self.lock:
            self.objects, self.objects_t = m, time.monotonic()

    def on_light(self, m):
        with self.lock:
            self.lights[m.trafficLightIndex] = (m, time.monotonic())

    def on_collision(self, m):
        with self.lock:
            self.collisions.append(m)

    # ------------------------------------------------------------------ output
    def _fresh(self, t, now):
        return t is not None and (self.cfg.stale_s <= 0 or now - t <= self.cfg.stale_s)

    def build(self, now=None):
        """The MarkerArray of the current scene (DELETEs included); also used by the tests."""
        now = time.monotonic() if now is None else now
        with self.lock:
            ego = self.ego if self._fresh(self.ego_t, now) else None
            objects = self.objects if self._fresh(self.objects_t, now) else None
            lights = [m for m, t in self.lights.values() if self._fresh(t, now)]
            collisions, self.collisions = self.collisions, []
        markers, counts = [], {'objects': 0, 'lights': 0}
        if ego is not None:
            markers += mk.ego_markers(ego, self.style)
        if objects is not None:
            markers += mk.object_markers(objects, self.style)
            counts['objects'] = len(objects.npc_list) + len(objects.pedestrian_list) + len(objects.obstacle_list)
        for light in sorted(lights, key=lambda m: m.trafficLightIndex):
            pos = self.light_pos.get(light.trafficLightIndex)
            if pos is None:
                if light.trafficLightIndex not in self.unplaced:
                    self.unplaced.add(light.trafficLightIndex)
                    rospy.logwarn('markers: no position for traffic light %r (~traffic_light_positions: %s)',
                                  light.trafficLightIndex, self.lights_path or 'none')
                continue
            markers += mk.light_markers(light, pos, self.style)
            counts['lights'] += 1
        events = []
        for c in collisions:
            events += mk.collision_markers(c, self.style)
        counts['collisions'] = len(events)
        self.last_counts = counts
        return self.tracker.update(markers, events)

    def tick(self, _event=None):
        arr = self.build()
        if arr.markers:
            try:
                self.pub.publish(arr)
            except rospy.ROSException:
                if rospy.is_shutdown():     # the node is stopping: its topic closed under the timer
                    return
                raise
            self.published += 1
            self.collision_events += self.last_counts.get('collisions', 0)

    def _diag(self, stat):
        now = time.monotonic()
        ego_ok, obj_ok = self._fresh(self.ego_t, now), self._fresh(self.objects_t, now)
        if ego_ok and obj_ok:
            stat.summary(DiagnosticStatus.OK, 'showing the ego and %d objects' % self.last_counts.get('objects', 0))
        else:
            missing = [t for t, ok in ((self.cfg.ego_topic, ego_ok), (self.cfg.object_topic, obj_ok)) if not ok]
            stat.summary(DiagnosticStatus.WARN, f"no recent message on {', '.join(missing)}")
        for name, t in (('ego', self.ego_t), ('objects', self.objects_t)):
            stat.add(f'age of last {name} message [s]', '' if t is None else f'{now - t:.2f}')
        stat.add('marker arrays published', self.published)
        stat.add('objects shown', self.last_counts.get('objects', 0))
        stat.add('traffic lights shown', self.last_counts.get('lights', 0))
        stat.add('traffic lights without a position', ' '.join(sorted(self.unplaced)))
        stat.add('traffic light positions', f"{self.lights_path or 'none'} ({len(self.light_pos)})")
        stat.add('collision markers', self.collision_events)
        return stat
