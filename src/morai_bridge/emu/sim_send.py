"""What the simulator emulator sends each step: the streams due, per the simulator version.

:class:`SimSending` is a mixin of :class:`~morai_bridge.emu.sim.SimEmulator`; it runs with the
emulator's lock held.  Each simulator -> user stream of :mod:`morai_bridge.wire.udp.streams` has one
packet builder in :data:`BUILDERS`, a function of a :class:`Step` (the emulator and what the
streams sent at one step share) that returns the stream's messages for that step (none, one, or
several datagrams: one per light, per intersection, per NMEA sentence, an IMU burst); the builders
take the world's state to :mod:`.sim_packets`.  The version (``SimEmulator.version``,
:mod:`morai_bridge.configuration.sim_versions`) decides what differs between simulator releases:
the competition status, the empty collision slots, the IMU's size and its seconds.  No ROS.
"""
import time

from morai_bridge.wire import udp
from morai_bridge.wire.units import NS

from . import sim_packets as packets

__all__ = ["SimSending", "Step", "BUILDERS"]


class Step:
    """One step's sending: the emulator (lock held), the packets' time, and the Ego Vehicle Status
    of the step, built once for the streams derived from it."""

    def __init__(self, sim, streams):
        self.sim = sim
        #: the streams sent at this step
        self.streams = streams
        # the clock follows the wall clock at millisecond resolution in real time, as the
        # simulator's host clock does (docs/versions.md), and simulated time in lock-step
        self.sec, self.nsec = divmod(sim._time_ns, NS)
        self._status = None

    def status(self):
        """The Ego Vehicle Status of this step (its competition status is made from the same one)."""
        if self._status is None:
            sim = self.sim
            self._status = packets.ego_status(sim._templates, sim._ego, sim.config, sim._ctrl_mode, self.sec,
                                              self.nsec, sim._status_sign)
        return self._status


def ego_status(step):
    return (step.status(),)


def competition_status(step):
    return (packets.competition_status(step.status()),)


def object_info(step):
    sim = step.sim
    return (packets.object_info(sim._templates, [a for _, a in sim._sorted_actors()], step.sec, step.nsec,
                                sim.config.velocity_frame),)


def collision(step):
    sim = step.sim
    return (packets.collision(sim._templates, [sim._actors[i] for i in sim._contacts], sim.config, step.sec,
                              step.nsec, sim._ego if sim.version.empty_collision_slot == "minus_one" else None),)


def vehicle_collision(step):
    sim = step.sim
    if not sim._npc_pairs:
        return ()
    return (packets.vehicle_collision([(sim._actors[i], sim._actors[j]) for i, j in sim._npc_pairs],
                                      sim.config.velocity_frame),)


def traffic_light(step):
    sim = step.sim
    return tuple(packets.traffic_light(lt, lt.status(sim._elapsed_ns)) for lt in sim._lights)


def intersection(step):
    return tuple(packets.intersection(i) for i in step.sim._intersections)


def sim_status(step):
    return (packets.sim_status(step.sim._status_snapshot()),)


def gps(step):
    sim = step.sim
    e = sim._ego
    blackout = any(x0 <= e.x <= x1 and y0 <= e.y <= y1 for x0, y0, x1, y1 in sim._gps_blackouts)
    return packets.gps(e, sim._time_ns, sim.config, sim.version, blackout)


def imu(step):
    sim, cfg = step.sim, step.sim.config
    if sim.version.imu_bytes == 107:
        m = packets.imu(sim._ego, None, None)
    else:   # 25.S4: seconds of the host's local time, milliseconds of UTC
        m = packets.imu(sim._ego, step.sec + sim._utc_offset(), step.nsec)
    # a catch-up burst: the same datagram again, back to back (25.S4's scheduler, the heven
    # report section 6.6)
    every = round(cfg.imu_burst_every_s * NS)
    if every and sim._time_ns - sim._imu_burst_t >= every:
        sim._imu_burst_t = sim._time_ns
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


class SimSending:
    """The sending part of :class:`~morai_bridge.emu.sim.SimEmulator` (lock held)."""

    def _send(self, stream: str, data: bytes) -> None:
        if self._sender.send(self.dst_ports[stream], data):
            self._sent[stream] += 1

    def _publish(self, streams) -> None:
        """Send the given streams for the current state (lock held)."""
        streams = set(streams) & set(self.dst_ports)
        # Collision Data goes out with every status, also when nothing touches the ego (as
        # the simulator sends it: 40-55 Hz in the 2024 captures and in 25.S4)
        if "ego_status" in streams and "collision" in self.dst_ports:
            streams.add("collision")
        if not streams:
            return
        step, encode = Step(self, streams), udp.encode
        for name, build in BUILDERS.items():
            if name in streams:
                for m in build(step):
                    self._send(name, encode(m))

    def _utc_offset(self):
        """Seconds the host's local time is ahead of UTC, where the version's IMU seconds are
        local (25.S4: DateTime.Now); 0 on a simulated clock."""
        return time.localtime().tm_gmtoff if self._imu_local and not self.sync_mode.on else 0
