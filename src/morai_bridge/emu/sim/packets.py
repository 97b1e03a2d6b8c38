"""Packets the simulator emulator sends: pure functions from the world's state to codec objects.

Each function takes the emulator's state objects (the :class:`EgoModel`, the
:class:`Actor` s, the light and intersection controllers, the config) and
returns a :mod:`morai_bridge.wire.udp` message (or a tuple of them) for
:func:`udp.encode`.  Nothing here sends, locks or keeps state; units are
converted with :mod:`morai_bridge.wire.units` (the model is SI, the wire km/h
and degrees).  No ROS.
"""

import datetime
import math

from morai_bridge.wire.udp import nmea
from morai_bridge.wire import udp
from morai_bridge.wire.enums import ObjectType, Platform
from morai_bridge.wire.units import MPS_TO_KMH, quaternion_from_rpy

from .geo import KNOTS_PER_MPS, utm_to_latlon
from .ego import wrap_deg

__all__ = ["Templates", "ego_status", "object_info", "collision", "vehicle_collision",
           "traffic_light", "intersection", "sim_status", "gps", "imu",
           "MAX_OBJECTS", "MAX_COLLISIONS", "MAX_NPC_PAIRS", "STAGE_PLAY", "GRAVITY"]

MAX_OBJECTS = 20        # Object Info records
MAX_COLLISIONS = 5      # Collision Data records
MAX_NPC_PAIRS = 10      # NPC Vehicle Collision pairs
STAGE_PLAY = 0x02       # SimStatus stage (spec 3.20): the emulator is always in play
GRAVITY = 9.80665       # m/s^2, in the IMU's linear acceleration (as an IMU measures it)
_VEHICLE = int(ObjectType.VEHICLE)
_SIMULATOR = int(Platform.SIMULATOR)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class Templates:
    """The configured size variants of the status, objects and collision packets."""

    def __init__(self, cfg):
        self.ego_status = udp.make(udp.EgoVehicleStatus, cfg.ego_status_data_length)
        self.object_info = udp.make(udp.ObjectInfo, cfg.object_info_data_length)
        self.collision = udp.make(udp.CollisionData, cfg.collision_data_length)
        #: fields the ego status variant carries (the others stay None)
        self.status_fields = frozenset(f for f in udp.EgoVehicleStatus._fields
                                       if getattr(self.ego_status, f) is not None)
        self.object_stamp = getattr(self.object_info, "sec", None) is not None
        self.collision_stamp = getattr(self.collision, "sec", None) is not None


def ego_status(t: Templates, ego, cfg, ctrl_mode: int, sec: int, nsec: int, steer_sign: int = 1):
    """Ego Vehicle Status of ``ego`` (an EgoModel), velocity and acceleration vectors in
    ``cfg.velocity_frame``; signed_vel = the velocity's component along the vehicle's x axis (so in
    the body frame, MORAI's, signed_vel = vel_x also while turning: docs/units.md); steer = steer_sign
    x the model's wheel angle (+ right)."""
    frame = cfg.velocity_frame
    forward, _ = ego.velocity("body")
    vx, vy = ego.velocity(frame)
    ax, ay = ego.acceleration(frame)
    p = ego.p
    values = dict(
        sec=sec, nsec=nsec, ctrl_mode=ctrl_mode, gear=ego.gear, signed_vel=forward * MPS_TO_KMH,
        map_data_id=cfg.map_data_id, accel=ego.accel_pedal, brake=ego.brake_pedal,
        size_x=p.length, size_y=p.width, size_z=p.height, overhang=p.front_overhang,
        wheelbase=p.wheelbase, rear_overhang=p.rear_overhang, pos_x=ego.x, pos_y=ego.y,
        pos_z=ego.z, roll=ego.roll, pitch=ego.pitch, yaw=ego.yaw_deg, vel_x=vx * MPS_TO_KMH,
        vel_y=vy * MPS_TO_KMH, vel_z=0.0, ang_vel_x=0.0, ang_vel_y=0.0,
        ang_vel_z=math.degrees(ego.yaw_rate), acc_x=ax, acc_y=ay, acc_z=0.0,
        steer=steer_sign * ego.steer_deg, rear_steer=0.0, link_id="")
    return t.ego_status._replace(**{k: v for k, v in values.items() if k in t.status_fields})


def competition_status(status):
    """The competition build's status (25.S4.MolitComp03, 181 B): the ego status with position,
    lateral and vertical velocity and acceleration zeroed, vel_x the forward speed (a live 2026
    capture shows these 0, vel_x equal to signed_vel, and the rest filled)."""
    zero = {k: 0.0 for k in ("pos_x", "pos_y", "pos_z", "vel_y", "vel_z", "acc_x", "acc_y", "acc_z")}
    values = {f: getattr(status, f) for f in status._fields if f != "data_length"}
    values.update(zero)
    values["vel_x"] = status.signed_vel
    m = udp.make(udp.EgoVehicleStatus, 152)
    return m._replace(**{k: v for k, v in values.items() if getattr(m, k, None) is not None})


def _motion(a, frame):
    """(vel_x, vel_y km/h, acc_x, acc_y m/s^2) of actor ``a`` in ``frame``: ``body`` = the actor's own
    axes (x along its heading, y to its left), as the manual gives ObjectStatus.velocity; ``map``."""
    if frame == "map":
        return a.vx * MPS_TO_KMH, a.vy * MPS_TO_KMH, a.ax, a.ay
    c, s = math.cos(a.yaw), math.sin(a.yaw)
    return ((a.vx * c + a.vy * s) * MPS_TO_KMH, (a.vy * c - a.vx * s) * MPS_TO_KMH,
            a.ax * c + a.ay * s, a.ay * c - a.ax * s)


def object_info(t: Templates, actors, sec: int, nsec: int, frame: str = "body"):
    """Object Info of ``actors`` (nearest first; the first MAX_OBJECTS are sent), velocities and
    accelerations in ``frame`` (the config's ``velocity_frame``)."""
    recs = tuple(udp.ObjectRecord(
        a.id, a.obj_type, a.x, a.y, a.z, wrap_deg(math.degrees(a.yaw)), a.length, a.width,
        a.height, a.overhang, a.wheelbase, a.rear_overhang, vx, vy, 0.0, ax, ay, 0.0,
        a.link_id if a.obj_type == _VEHICLE else "")
        for a, (vx, vy, ax, ay) in ((a, _motion(a, frame)) for a in actors[:MAX_OBJECTS]))
    if t.object_stamp:
        return t.object_info._replace(sec=sec, nsec=nsec, objects=recs)
    return t.object_info._replace(objects=recs)


def collision(t: Templates, touching, cfg, sec: int, nsec: int, ego=None):
    """Collision Data of the actors ``touching`` the ego (nearest first).  Unused slots are
    all zero, or, given the ``ego`` (25.S4), obj_type -1, the first of them with the ego's
    position when nothing touches it."""
    recs = tuple(udp.CollisionRecord(a.obj_type, a.id, a.x, a.y, a.z, cfg.map_offset_x,
                                     cfg.map_offset_y, cfg.map_offset_z)
                 for a in touching[:MAX_COLLISIONS])
    if ego is not None:
        empty = udp.CollisionRecord(-1, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        first = () if recs else (empty._replace(pos_x=ego.x, pos_y=ego.y, pos_z=ego.z),)
        recs = (recs + first + (empty,) * MAX_COLLISIONS)[:MAX_COLLISIONS]
    if t.collision_stamp:
        return t.collision._replace(sec=sec, nsec=nsec, records=recs)
    return t.collision._replace(records=recs)


def _npc_record(a, frame):
    vx, vy, ax, ay = _motion(a, frame)
    return udp.NpcCollisionRecord(a.obj_type, a.id, a.x, a.y, a.z,
                                  wrap_deg(math.degrees(a.yaw)), a.length, a.width, a.height,
                                  vx, vy, 0.0, ax, ay, 0.0)


def vehicle_collision(pairs, frame: str = "body"):
    """NPC Vehicle Collision of ``pairs`` of overlapping actors, motion in ``frame`` (as Object Info)."""
    return udp.make(udp.NpcVehicleCollision,
                    pairs=tuple((_npc_record(a, frame), _npc_record(b, frame)) for a, b in pairs[:MAX_NPC_PAIRS]))


def traffic_light(light, status: int):
    """Get TrafficLight Status of one light controller."""
    return udp.make(udp.GetTrafficLightStatus, traffic_light_index=light.id,
                    traffic_light_type=light.type, traffic_light_status=status)


def intersection(i):
    """Get Intersection Status of one intersection controller."""
    return udp.make(udp.GetIntersectionStatus, intersection_index=i.index,
                    intersection_status=i.status, intersection_status_time=i.time_s)


def sim_status(st):
    """SimStatus of a SimStatusSnapshot (platform simulator, stage play)."""
    return udp.make(udp.SimStatus, platform=_SIMULATOR, stage=STAGE_PLAY, status=st.status,
                    command_platform=st.command_platform, command=st.command,
                    command_option=st.option, result=st.result)


#: 25.S4's RMC speed factor: m/s x this, where knots need x 1.94384 (the heven report, docs/versions.md)
RMC_SPEED_DEFECT = 0.00053995


def gps(ego, time_ns: int, cfg, version, blackout: bool = False, antenna=None, origin=None):
    """($GPGGA, $GPRMC) of the GPS antenna (``antenna``: its map (x, y, z); default the ego's reference
    point) at simulated time ``time_ns`` (UTC), as ``version`` writes them (its ``nmea_time``,
    ``rmc_speed``, ``rmc_course``), the map frame's origin at UTM ``origin`` = (east, north, zone)
    (default: the gps_utm_* options).  In a GPS blackout zone (``blackout``) the position is
    0000.0000,N,00000.0000,E with GGA quality 1 and RMC status A, as 25.S4 sends it (altitude 0:
    not documented)."""
    x, y, z = antenna if antenna is not None else (ego.x, ego.y, ego.z)
    east, north, zone = origin if origin is not None else (cfg.gps_utm_offset_x, cfg.gps_utm_offset_y,
                                                           cfg.gps_utm_zone)
    lat, lon = utm_to_latlon(x + east, y + north, zone)
    alt = z + cfg.gps_alt_offset
    if blackout:
        lat = lon = alt = 0.0
    when = _EPOCH + datetime.timedelta(microseconds=time_ns // 1000)
    vx, vy = ego.velocity("map")
    if version.rmc_course == "heading" or not (vx or vy):
        course = (90.0 - ego.yaw_deg) % 360.0
    else:
        course = (90.0 - math.degrees(math.atan2(vy, vx))) % 360.0
    speed = abs(ego.v) * (RMC_SPEED_DEFECT if version.rmc_speed == "mps_x_0.00053995" else KNOTS_PER_MPS)
    utc = when.time().replace(tzinfo=None)
    return (nmea.make_gga(utc, lat, lon, alt, time_form=version.nmea_time),
            nmea.make_rmc(utc, when.date(), lat, lon, speed, round(course, 1) % 360.0,
                          time_form=version.nmea_time))


def imu(ego, sec, nsec):
    """#IMUData$: orientation (ENU), yaw rate, body-frame acceleration including gravity; the
    107-byte form without time when ``sec`` is None (the manuals' 24.R2 / 26.R1 layout)."""
    x, y, z, w = quaternion_from_rpy(math.radians(ego.roll), math.radians(ego.pitch), ego.yaw)
    along, alat = ego.acceleration("body")
    stamp = {} if sec is None else dict(sec=sec, nsec=nsec)
    return udp.make(udp.ImuData, 80 if sec is None else 88, **stamp, ori_w=w, ori_x=x, ori_y=y, ori_z=z,
                    ang_vel_x=0.0, ang_vel_y=0.0, ang_vel_z=ego.yaw_rate,
                    lin_acc_x=along, lin_acc_y=alat, lin_acc_z=GRAVITY)
