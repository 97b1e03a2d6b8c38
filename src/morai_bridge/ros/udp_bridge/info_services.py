"""Information services of the UDP bridge that MORAI's ROS manual lists and UDP can answer:

* ``/Morai_TLSrv`` (MoraiTLInfoSrv): the last status of a traffic light seen on the wire
  (Get TrafficLight Status stream), by id.  An id never seen is answered with a zero
  header stamp and status 0, and logged.
* ``/Service_MoraiVehicleSpec`` (MoraiVehicleSpecSrv): size, wheelbase and overhangs from
  the latest ego status (the simulator's own figures) or, before one arrives, from the
  vehicle profile; the maximum steering angle from the profile (or ``~max_steering_deg``).
  UDP carries no per-vehicle spec, so every unique_id gets the ego's.
* ``/Service_MoraiMapSpec`` (MoraiMapSpecSrv): from the map (``~map``: UTM zone, origin) and the
  parameters that override it; UDP carries no map description.
"""
import rospy
from geometry_msgs.msg import Vector3

from morai_msgs.msg import MapSpec, MoraiTLInfo, VehicleSpec
from morai_msgs.srv import (MoraiMapSpecSrv, MoraiMapSpecSrvResponse, MoraiTLInfoSrv, MoraiTLInfoSrvResponse,
                            MoraiVehicleSpecSrv, MoraiVehicleSpecSrvResponse)

from morai_bridge.configuration.params import Param
from morai_bridge.wire.units import (UTM_FALSE_EASTING, UTM_FALSE_NORTHING_NORTH, UTM_SCALE_FACTOR,
                                     utm_central_meridian)

SERVICE_PARAMS = [
    Param('tl_info_service', 'Morai_TLSrv', 'MoraiTLInfoSrv: last traffic-light status seen on the wire, by id'),
    Param('vehicle_spec_service', 'Service_MoraiVehicleSpec', 'MoraiVehicleSpecSrv: ego size, wheelbase, '
          'overhangs (ego status, else the vehicle profile) and maximum steering angle'),
    Param('map_spec_service', 'Service_MoraiMapSpec', 'MoraiMapSpecSrv: map projection and origin, from the '
          'map (~map) and the map_* / gps_*_offset parameters that override it'),
]
MAP_PARAMS = [
    Param('map_utm_zone', 0, 'UTM zone (north) of the map, for Service_MoraiMapSpec; 0: the map\'s (52 for '
          'MORAI\'s Korean maps)', minimum=0, maximum=60),
    Param('map_origin_z', 0.0, 'UTM height of the map origin [m] (MapSpec.utm_offset.z; x and y are '
          'gps_east_offset and gps_north_offset); 0: the map\'s'),
    Param('map_plane_coordinate_system', 0, 'MapSpec.plane_coordinate_system code (MORAI publishes no table '
          'of its codes; 0 = not stated)'),
]


def tl_info(idx, seen, frame_id):
    """MoraiTLInfo for light ``idx`` from ``seen`` = (status, type, receive stamp) of the last
    Get TrafficLight Status packet with that id, or None when the id never came: then the
    header stamp is zero (no data) and status 0."""
    m = MoraiTLInfo()
    m.idx = idx
    if seen is not None:
        m.status = seen[0]
        m.header.stamp = seen[2]
        m.header.frame_id = frame_id
    return m


def vehicle_spec(profile, max_steering_deg, status=None):
    """VehicleSpec: size, wheelbase and overhangs from the latest ego status when there is one
    (the simulator's own figures), else from the profile (unknown = 0); max steering from
    ``max_steering_deg`` (the profile's or the parameter overriding it)."""
    m = VehicleSpec()
    if status is not None:
        m.size.x, m.size.y, m.size.z = status.size_x, status.size_y, status.size_z
        m.wheel_base, m.overhang, m.rear_overhang = status.wheelbase, status.overhang, status.rear_overhang
    else:
        z = lambda v: 0.0 if v is None else v  # noqa: E731
        m.size.x, m.size.y, m.size.z = z(profile.length_m), z(profile.width_m), z(profile.height_m)
        m.wheel_base = profile.wheelbase_m
        m.overhang, m.rear_overhang = z(profile.front_overhang_m), z(profile.rear_overhang_m)
    m.max_steering = max_steering_deg
    return m


def map_spec(plane_coordinate_system, utm_zone, offset_x, offset_y, offset_z):
    """MapSpec of a map in UTM zone ``utm_zone`` (north, WGS84) whose origin is at the
    given UTM coordinates: the projection constants follow from the zone."""
    m = MapSpec()
    m.plane_coordinate_system = plane_coordinate_system
    m.utm_num = utm_zone
    m.utm_offset = Vector3(offset_x, offset_y, offset_z)
    m.ellipse = 'WGS84'
    m.central_latitude = 0.0
    m.central_meridian = utm_central_meridian(utm_zone)
    m.scale_factor = UTM_SCALE_FACTOR
    m.false_easting = UTM_FALSE_EASTING
    m.false_northing = UTM_FALSE_NORTHING_NORTH
    return m


class InfoServices:
    """The three services (see the module docstring) over a SimReceiver ``receiver``."""

    def __init__(self, cfg, receiver, profile, max_steering_deg, node='udp_bridge'):
        self.cfg = cfg
        self.rx = receiver
        self.profile = profile
        self.max_steering_deg = max_steering_deg
        self.node = node
        if 'traffic_light' in receiver.enabled:
            rospy.Service(cfg.tl_info_service, MoraiTLInfoSrv, self.tl_info)
        rospy.Service(cfg.vehicle_spec_service, MoraiVehicleSpecSrv, self.vehicle_spec)
        rospy.Service(cfg.map_spec_service, MoraiMapSpecSrv, self.map_spec)

    def tl_info(self, req):
        idx = req.request.idx
        seen = self.rx.traffic_lights.get(idx.strip())
        if seen is None:
            known = sorted(self.rx.traffic_lights)
            rospy.logwarn('%s: %s: traffic light %r was never seen on the wire (Get TrafficLight Status); '
                          'answered with a zero stamp and status 0. Seen: %s'
                          % (self.node, self.cfg.tl_info_service, idx,
                             ', '.join(known[:20]) + (' ...' if len(known) > 20 else '') if known else 'none'))
        return MoraiTLInfoSrvResponse(tl_info(idx, seen, self.cfg.frame_id))

    def vehicle_spec(self, req):
        status = self.rx.status
        p = self.profile
        if status is None:
            rospy.loginfo(f'{self.node}: vehicle spec from the profile {p.name} (no ego status received yet)')
        elif abs(status.wheelbase - p.wheelbase_m) > 0.01 or (
                p.length_m is not None and abs(status.size_x - p.length_m) > 0.01):
            rospy.logwarn_throttle(10.0, '%s: the simulator reports wheelbase %.3f m, length %.3f m; the vehicle '
                                   'profile %s says %.3f m, %s: is ~vehicle_profile right for this vehicle?'
                                   % (self.node, status.wheelbase, status.size_x, p.name, p.wheelbase_m,
                                      '?' if p.length_m is None else '%.3f m' % p.length_m))
        if req.request.unique_id != 0:
            rospy.loginfo_throttle(10.0, '%s: UDP carries no per-vehicle spec: unique_id %d answered with the ego\'s'
                                   % (self.node, req.request.unique_id))
        return MoraiVehicleSpecSrvResponse(vehicle_spec(p, self.max_steering_deg, status))

    def map_spec(self, req):
        c = self.cfg
        if c.gps_east_offset == 0.0 and c.gps_north_offset == 0.0:
            rospy.logwarn_throttle(10.0, '%s: map:=none: answering a zero UTM offset (the map frame is UTM)'
                                   % self.node)
        if req.request.load_map_data:
            rospy.loginfo_throttle(10.0, '%s: load_map_data has no UDP form: the map spec comes from parameters'
                                   % self.node)
        return MoraiMapSpecSrvResponse(map_spec(c.map_plane_coordinate_system, c.map_utm_zone,
                                                     c.gps_east_offset, c.gps_north_offset, c.map_origin_z))
