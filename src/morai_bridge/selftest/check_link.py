"""The self-test's UDP link to the simulator: the status (and IMU) sockets, the Ego Ctrl Cmd it sends,
and the stop that ends every run (:meth:`CheckLink.stop`).  No ROS: :mod:`morai_bridge.wire.udp` and
:mod:`morai_bridge.link.transport` only.  The run that drives through it is :mod:`.check_signs`.
"""
import selectors
import time

from morai_bridge.configuration.params import FROM_PROFILE, FROM_VERSION, NO_IMU
from morai_bridge.link.transport import UdpSender, bind_udp, resolve_host
from morai_bridge.wire import udp
from morai_bridge.wire.enums import CtrlMode, Gear, LonglCmdType

__all__ = ["CheckLink", "command_length", "drive_command", "stop_command", "STOP_REPEATS", "STOPPED_KMH", "STOP_TIME"]

#: how many stop commands go out at once (UDP may lose one), then one per status until stopped
STOP_REPEATS = 5
#: below this |speed| (km/h) the ego counts as stopped
STOPPED_KMH = 0.5
#: the stop waits at most this long (s, wall clock) for a status that shows the ego stopped
STOP_TIME = 3.0
_AUTO = int(CtrlMode.AUTO)


def drive_command(speed_kmh, steer, data_length=23):
    """Velocity control, gear D, wire ``steer`` (normalised; the rear steer, if any, 0)."""
    return udp.make(udp.EgoCtrlCmd, data_length=data_length, ctrl_mode=_AUTO, gear=int(Gear.D),
                    cmd_type=int(LonglCmdType.VELOCITY), velocity=float(speed_kmh), steer=float(steer),
                    rear_steer=0.0 if data_length == 27 else None)


def stop_command(gear=int(Gear.D), data_length=23):
    """The stop: pedal mode, brake 1, accelerator 0, velocity 0, steer 0 (as the bridge's safe
    state), in the gear the vehicle reported (D when unknown)."""
    return udp.make(udp.EgoCtrlCmd, data_length=data_length, ctrl_mode=_AUTO, gear=int(gear),
                    cmd_type=int(LonglCmdType.THROTTLE), velocity=0.0, accel=0.0, brake=1.0, steer=0.0,
                    rear_steer=0.0 if data_length == 27 else None)


def command_length(options, version):
    """(Ego Ctrl Cmd size in bytes, its data_length) of the options (``ctrl_bytes`` 0: the version's)."""
    size = version.ctrl_cmd_bytes if options.ctrl_bytes == FROM_PROFILE else options.ctrl_bytes
    if size not in (55, 59):
        raise ValueError(f"ctrl_bytes must be 55 or 59, got {size!r}")
    return size, 23 if size == 55 else 27


class CheckLink:
    """The sockets of one run, bound by the constructor (read :attr:`ports`); :meth:`close` them.
    ``options``: :class:`.check_options.Options`; ``version``: the SimVersion (default ports, command
    size); ``say(text)``: where warnings go; ``clock``: the receive times (monotonic)."""

    def __init__(self, options, version, say, clock=time.monotonic):
        o = options
        self.say = say
        self.monotonic = clock
        self.ctrl_bytes, self.data_length = command_length(o, version)
        status_port = version.port("ego_status") if o.status_port == FROM_VERSION else o.status_port
        self._sel = selectors.DefaultSelector()
        self._socks = {}
        self.sender = None
        try:
            sim_ip = resolve_host(o.sim_ip, "--sim-ip")
            listen_ip = resolve_host(o.listen_ip, "--listen-ip")
            self._socks["status"] = bind_udp(listen_ip, status_port, "--status-port", ip_param="--listen-ip")
            if o.imu_port != NO_IMU:
                self._socks["imu"] = bind_udp(listen_ip, o.imu_port, "--imu-port", ip_param="--listen-ip")
            self.sender = UdpSender(listen_ip, sim_ip)
        except Exception:
            self.close()
            raise
        for name, s in self._socks.items():
            self._sel.register(s, selectors.EVENT_READ, name)
        #: bound port per stream ('status', 'imu')
        self.ports = {n: s.getsockname()[1] for n, s in self._socks.items()}
        #: where the commands go (the simulator's Ego Ctrl Cmd address)
        self.sim_addr = (sim_ip, o.ctrl_port)
        self.last = None            # last EgoVehicleStatus
        self.last_from = None
        self.imu_rates = []         # (monotonic, ang_vel_z) since the last take
        self.counts = {"status": 0, "imu": 0, "other": 0, "bad": 0}
        self.last_bad = ""
        self.stop_sent = 0

    def close(self):
        try:
            self._sel.close()
        except Exception:   # noqa: BLE001 - closing is best effort
            pass
        for s in self._socks.values():
            s.close()
        if self.sender is not None:
            self.sender.close()

    def send(self, msg):
        """Send one Ego Ctrl Cmd; False (and a warning said) when the socket refuses it."""
        data = udp.encode(msg)
        try:
            self.sender.sock.sendto(data, self.sim_addr)
        except OSError as e:
            self.say("warning: cannot send Ego Ctrl Cmd to %s:%d: %s" % (self.sim_addr + (e.strerror or e,)))
            return False
        return True

    def drive(self, speed_kmh, steer):
        """Send the drive command (velocity control, gear D) at the run's command size."""
        return self.send(drive_command(speed_kmh, steer, self.data_length))

    def receive(self, timeout):
        """Read what arrives within ``timeout`` s; returns the new statuses [(msg, t_rx, addr)]."""
        got = []
        for key, _ in self._sel.select(max(0.0, timeout)):
            sock, name = key.fileobj, key.data
            while True:
                try:
                    data, addr = sock.recvfrom(65535)
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:     # e.g. ICMP port unreachable of an earlier send
                    break
                now = self.monotonic()
                try:
                    msg, _ = udp.decode_tolerant(data)
                except udp.DecodeError as e:
                    self.counts["bad"] += 1
                    self.last_bad = "%s:%d sent %d B to the %s port: %s" % (addr[0], addr[1], len(data), name, e)
                    continue
                if name == "status" and isinstance(msg, udp.EgoVehicleStatus):
                    self.counts["status"] += 1
                    self.last, self.last_from = msg, addr
                    got.append((msg, now, addr))
                elif name == "imu" and isinstance(msg, udp.ImuData):
                    self.counts["imu"] += 1
                    self.imu_rates.append((now, msg.ang_vel_z))
                else:
                    self.counts["other"] += 1
                    self.last_bad = "%s:%d sent a %s to the %s port" % (addr[0], addr[1], type(msg).__name__, name)
        return got

    def wait_status(self, timeout):
        """The first status that arrives within ``timeout`` s (wall), or None."""
        end = self.monotonic() + timeout
        while True:
            got = self.receive(end - self.monotonic())
            if got:
                return got[-1]
            if self.monotonic() >= end:
                return None

    def drain(self):
        """Forget what arrived so far (statuses and IMU rates)."""
        while self.receive(0):
            pass
        self.imu_rates = []

    def stop(self, stop_time=STOP_TIME):
        """Send the stop command STOP_REPEATS times, then once per status until the ego is stopped
        (at most ``stop_time`` s).  Returns True (stopped), False (still moving) or None (no status).
        Never raises; a Ctrl-C here cuts the wait short, not the first stop commands."""
        gear = self.last.gear if self.last is not None and 1 <= self.last.gear <= 5 else int(Gear.D)
        cmd = stop_command(gear, self.data_length)
        sent = 0
        while sent < STOP_REPEATS:
            try:        # a second Ctrl-C must not cut these short
                while sent < STOP_REPEATS:
                    sent += 1
                    if self.send(cmd):
                        self.stop_sent += 1
            except KeyboardInterrupt:
                pass
        seen_stopped = None
        try:
            t0 = self.monotonic()
            end = t0 + stop_time
            while self.monotonic() < end:
                got = self.receive(min(0.05, max(0.0, end - self.monotonic())))
                for msg, _, _ in got:
                    seen_stopped = abs(msg.signed_vel) < STOPPED_KMH
                if got:
                    if self.send(cmd):
                        self.stop_sent += 1
                    if seen_stopped:
                        break
                elif self.last is None and self.monotonic() - t0 > 0.2:
                    break       # no status at all: nothing to wait for
        except KeyboardInterrupt:
            pass
        except Exception as e:    # noqa: BLE001 - the stop commands went out already
            self.say(f"warning: while waiting for the ego to stop: {type(e).__name__}: {e}")
        return seen_stopped
