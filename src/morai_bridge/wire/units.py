"""Unit factors and small geometric conversions, named so a reader cannot mix them up.

Every conversion between MORAI's units (km/h, degrees) and SI / REP-103 units in
this package goes through these names.  No ROS, no numpy.

* ``KMH_TO_MPS``: multiply km/h by it to get m/s (1 / 3.6).
* ``MPS_TO_KMH``: multiply m/s by it to get km/h (3.6).
* ``DEG_TO_RAD`` / ``RAD_TO_DEG``.
* ``NS``: nanoseconds in a second (the emulators' clocks count ns).
* :func:`quaternion_from_rpy`: (x, y, z, w) of intrinsic roll-pitch-yaw in radians.
* :func:`utm_central_meridian` and the ``UTM_*`` constants of the UTM projection.
"""
import math

KMH_TO_MPS = 1.0 / 3.6
MPS_TO_KMH = 3.6
DEG_TO_RAD = math.pi / 180.0
RAD_TO_DEG = 180.0 / math.pi
NS = 1_000_000_000

#: Universal Transverse Mercator: scale on the central meridian, false easting [m],
#: false northing of the northern hemisphere [m].
UTM_SCALE_FACTOR = 0.9996
UTM_FALSE_EASTING = 500000.0
UTM_FALSE_NORTHING_NORTH = 0.0


def quaternion_from_rpy(roll, pitch, yaw):
    """Quaternion ``(x, y, z, w)`` of roll, pitch, yaw in radians (Z-Y-X, as tf's
    ``quaternion_from_euler(roll, pitch, yaw)`` with the default axes)."""
    cr, sr = math.cos(roll * 0.5), math.sin(roll * 0.5)
    cp, sp = math.cos(pitch * 0.5), math.sin(pitch * 0.5)
    cy, sy = math.cos(yaw * 0.5), math.sin(yaw * 0.5)
    return (sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
            cr * cp * cy + sr * sp * sy)


def yaw_quaternion(yaw):
    """Quaternion ``(x, y, z, w)`` of a rotation by ``yaw`` radians about z."""
    return (0.0, 0.0, math.sin(yaw * 0.5), math.cos(yaw * 0.5))


def wrap_pi(angle):
    """``angle`` in radians wrapped to [-pi, pi)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def utm_central_meridian(zone):
    """Central meridian [deg] of UTM zone ``zone`` (1..60): 52 -> 129."""
    if not 1 <= zone <= 60:
        raise ValueError(f'UTM zone {zone!r} is not 1..60')
    return 6.0 * zone - 183.0
