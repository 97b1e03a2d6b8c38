"""What the simulator emulator sends each step: the streams due, per the simulator version.

:class:`SimSending` is a mixin of :class:`~morai_bridge.emu.sim.SimEmulator`; it runs with the
emulator's lock held and builds each packet with :mod:`.sim_packets` from the world's state.
The version (``SimEmulator.version``, :mod:`morai_bridge.configuration.sim_versions`) decides what
differs between simulator releases: the competition status, the empty collision slots, the
IMU's size and its seconds.  No ROS.
"""
import time

from morai_bridge.wire import udp
from morai_bridge.wire.units import NS

from . import sim_packets as packets

__all__ = ["SimSending"]


class SimSending:
    """The sending part of :class:`~morai_bridge.emu.sim.SimEmulator` (lock held)."""

    def _send(self, stream: str, data: bytes) -> None:
        if self._sender.send(self.dst_ports[stream], data):
            self._sent[stream] += 1

    def _publish(self, streams) -> None:
        """Send the given streams for the current state (lock held)."""
        streams = set(streams) & set(self.dst_ports)
        if not streams:
            return
        # the clock follows the wall clock at millisecond resolution in real time, as the
        # simulator's host clock does (docs/versions.md), and simulated time in lock-step
        sec, nsec = divmod(self._time_ns, NS)
        t, cfg, encode = self._templates, self.config, udp.encode
        if "ego_status" in streams or "competition_status" in streams:
            status = packets.ego_status(t, self._ego, cfg, self._ctrl_mode, sec, nsec, self._status_sign)
            if "ego_status" in streams:
                self._send("ego_status", encode(status))
            if "competition_status" in streams:
                self._send("competition_status", encode(packets.competition_status(status)))
        if "object_info" in streams:
            self._send("object_info", encode(packets.object_info(
                t, [a for _, a in self._sorted_actors()], sec, nsec, cfg.velocity_frame)))
        # Collision Data goes out with every status, also when nothing touches the ego (as
        # the simulator sends it: 40-55 Hz in the 2024 captures and in 25.S4)
        if "collision" in streams or ("ego_status" in streams and "collision" in self.dst_ports):
            self._send("collision", encode(packets.collision(
                t, [self._actors[i] for i in self._contacts], cfg, sec, nsec,
                self._ego if self.version.empty_collision_slot == "minus_one" else None)))
        if "vehicle_collision" in streams and self._npc_pairs:
            self._send("vehicle_collision", encode(packets.vehicle_collision(
                [(self._actors[i], self._actors[j]) for i, j in self._npc_pairs], cfg.velocity_frame)))
        if "traffic_light" in streams:
            for lt in self._lights:
                self._send("traffic_light", encode(packets.traffic_light(
                    lt, lt.status(self._elapsed_ns))))
        if "intersection" in streams:
            for i in self._intersections:
                self._send("intersection", encode(packets.intersection(i)))
        if "sim_status" in streams:
            self._send("sim_status", encode(packets.sim_status(self._status_snapshot())))
        if "gps" in streams:
            e = self._ego
            blackout = any(x0 <= e.x <= x1 and y0 <= e.y <= y1 for x0, y0, x1, y1 in self._gps_blackouts)
            for sentence in packets.gps(e, self._time_ns, cfg, self.version, blackout):
                self._send("gps", encode(sentence))
        if "imu" in streams:
            if self.version.imu_bytes == 107:
                data = encode(packets.imu(self._ego, None, None))
            else:   # 25.S4: seconds of the host's local time, milliseconds of UTC
                data = encode(packets.imu(self._ego, sec + self._utc_offset(), nsec))
            self._send("imu", data)
            # a catch-up burst: the same datagram again, back to back (25.S4's scheduler, the heven
            # report section 6.6)
            every = round(cfg.imu_burst_every_s * NS)
            if every and self._time_ns - self._imu_burst_t >= every:
                self._imu_burst_t = self._time_ns
                for _ in range(cfg.imu_burst_copies - 1):
                    self._send("imu", data)

    def _utc_offset(self):
        """Seconds the host's local time is ahead of UTC, where the version's IMU seconds are
        local (25.S4: DateTime.Now); 0 on a simulated clock."""
        return time.localtime().tm_gmtoff if self._imu_local and not self.sync_mode.on else 0
