"""What the simulator emulator sends: one packet builder per simulator -> user stream.

Each stream of :mod:`morai_bridge.wire.udp.streams` the simulator sends has one builder in
:data:`BUILDERS`, a plain function of a :class:`Step` (the :class:`~.world.World` and what the
streams sent at one step share) that returns the stream's messages for that step (none, one, or
several datagrams: one per light, per intersection, per NMEA sentence, an IMU burst); the builders
read the world through its public attributes and methods and take it to :mod:`.packets`.  The
version (``World.version``, :mod:`morai_bridge.configuration.sim_versions`) decides what differs
between simulator releases: the competition status, the empty collision slots, the IMU's size and
its seconds.  :class:`~.emulator.SimEmulator` encodes and sends what they return, with its lock
held.  No ROS.
"""
import time

from morai_bridge.wire.units import NS

from . import packets

__all__ = ["Step", "BUILDERS"]


class Step:
    """One step's sending: the world (its emulator's lock held), the packet size variants, the streams
    sent at this step, the packets' time, and the Ego Vehicle Status of the step, built once for
    the streams derived from it.  ``local_clock``: the IMU's seconds are the host's local time
    (25.S4 in real time, not in lock-step)."""

    def __init__(self, world, templates, streams, local_clock=False):
        self.world = world
        self.templates = templates
        #: the streams sent at this step
        self.streams = streams
        self.local_clock = local_clock
        # the clock follows the wall clock at millisecond resolution in real time, as the
        # simulator's host clock does (docs/versions.md), and simulated time in lock-step
        self.sec, self.nsec = divmod(world.time_ns, NS)
        self._status = None

    def status(self):
        """The Ego Vehicle Status of this step (its competition status is made from the same one)."""
        if self._status is None:
            w = self.world
            self._status = packets.ego_status(self.templates, w.ego, w.config, w.ctrl_mode, self.sec, self.nsec,
                                              w.status_sign)
        return self._status

    def utc_offset(self):
        """Seconds the host's local time is ahead of UTC where the IMU's seconds are local (25.S4:
        DateTime.Now); 0 on a simulated clock."""
        return time.localtime().tm_gmtoff if self.local_clock else 0


def ego_status(step):
    return (step.status(),)


def competition_status(step):
    return (packets.competition_status(step.status()),)


def object_info(step):
    w = step.world
    return (packets.object_info(step.templates, [a for _, a in w.sorted_actors()], step.sec, step.nsec,
                                w.config.velocity_frame),)


def collision(step):
    w = step.world
    return (packets.collision(step.templates, [w.actors[i] for i in w.contacts], w.config, step.sec, step.nsec,
                              w.ego if w.version.empty_collision_slot == "minus_one" else None),)


def vehicle_collision(step):
    w = step.world
    if not w.npc_pairs:
        return ()
    return (packets.vehicle_collision([(w.actors[i], w.actors[j]) for i, j in w.npc_pairs],
                                      w.config.velocity_frame),)


def traffic_light(step):
    w = step.world
    return tuple(packets.traffic_light(lt, lt.status(w.elapsed_ns)) for lt in w.lights)


def intersection(step):
    return tuple(packets.intersection(i) for i in step.world.intersections)


def sim_status(step):
    return (packets.sim_status(step.world.status_snapshot()),)


def gps(step):
    w = step.world
    return packets.gps(w.ego, w.time_ns, w.config, w.version, w.in_gps_blackout(), w.gps_antenna(), w.origin)


def imu(step):
    w, cfg = step.world, step.world.config
    if w.version.imu_bytes == 107:
        m = packets.imu(w.ego, None, None)
    else:   # 25.S4: seconds of the host's local time, milliseconds of UTC
        m = packets.imu(w.ego, step.sec + step.utc_offset(), step.nsec)
    # a catch-up burst: the same datagram again, back to back (25.S4's scheduler, the heven
    # report section 6.6)
    if w.imu_burst_due(round(cfg.imu_burst_every_s * NS)):
        return (m,) * cfg.imu_burst_copies
    return (m,)


#: stream name (wire.streams.FROM_SIM, the lock-step extension aside) -> its packet builder,
#: ``builder(step) -> messages``, in the order a step sends them.  The tests hold that the keys are
#: the stream names.
BUILDERS = {
    "ego_status": ego_status,
    "competition_status": competition_status,
    "object_info": object_info,
    "collision": collision,
    "vehicle_collision": vehicle_collision,
    "traffic_light": traffic_light,
    "intersection": intersection,
    "sim_status": sim_status,
    "gps": gps,
    "imu": imu,
}
