"""MORAI simulator emulator: the simulator's side of the UDP protocol, in Python.

It listens where the simulator listens (Ego Ctrl Cmd, Set TrafficLight, Scenario
Load, SimControl, ...) and sends what the simulator sends (Ego Vehicle Status,
Object Info, traffic lights, collisions, SimStatus, GPS NMEA, IMU) so that the
bridge, the demo and the tests run without the Windows simulator.  Every packet
is built and parsed with :mod:`morai_bridge.wire.udp`; the opt-in lock-step
extension (``emulator_sync``) uses :mod:`morai_bridge.wire.udp.lockstep`.

Library use::

    from morai_bridge.emu.sim import SimConfig, SimEmulator
    with SimEmulator(SimConfig(scenario="sample")) as sim:
        sim.start()                 # real-time loop in a thread
        ...
        sim.snapshot().ego.x

    # tests: no thread, manual stepping, ephemeral listening ports
    sim = SimEmulator(SimConfig(deterministic=True, ctrl_cmd_port=-1, ...))
    sim.ports["ctrl_cmd"]           # the port actually bound
    sim.poll(0.5); sim.step(100)

Program use (``src`` on ``PYTHONPATH``; the CLI is :mod:`.cli`)::

    python3 -m morai_bridge.emu.sim --scenario sample

This module is the :class:`SimEmulator`: sockets, the real-time loop, the lock,
receiving (decode, count, hand to a handler) and sending (the streams due at a
step); it composes a :class:`~.world.World`, which it steps.  Around it, by job:

========================  ======================================================
:mod:`.world`             the simulated world: ego, actors, lights, contacts, lamps, clock
:mod:`.config`            PARAMS (every option once), SimConfig, LISTEN_PORTS / SEND_PORTS
:mod:`.snapshot`          the immutable snapshot types
:mod:`.commands`          receiving: one handler per user -> simulator command, of the world
:mod:`.sync`              the lock-step extension (only with ``emulator_sync``)
:mod:`.builders`          sending: one packet builder per simulator -> user stream, of the world
:mod:`.packets`           world state -> udp message objects
:mod:`.ego`               the ego's kinematic bicycle model
:mod:`.scenario`          scenario files; :mod:`.actors` the moving actors
:mod:`.signals`           traffic lights and intersection controllers
:mod:`.geo`               footprint overlap, UTM -> WGS-84
:mod:`..sensors`          camera, 3D / 2D LiDAR streams (only when a sensor port is set)
:mod:`.cli`               ``python3 -m morai_bridge.emu.sim``
========================  ======================================================

Ports: a listening port of 0 disables that command, -1 binds an ephemeral port
(read it back from :attr:`SimEmulator.ports`); a destination port of 0 (or a
rate of 0) disables that stream.  Steering sign: Ego Ctrl Cmd ``steer`` > 0
turns RIGHT, so the heading (yaw, counter-clockwise) decreases.

See docs/emulator.md for every option, the scenario format, the vehicle model
and the synchronous-mode packets.  No ROS imports.
"""

import functools
import logging
import threading
import time
from typing import Dict, Optional

from morai_bridge.link.workers import Worker
from morai_bridge.link.transport import UdpReceiver, UdpSender, bind_udp, resolve_host, shift_privileged
from morai_bridge.configuration import maps, sim_versions
from morai_bridge.configuration.params import ANY_FREE_PORT, DISABLED, EMULATOR_ANY_FREE_PORT, FROM_VERSION
from morai_bridge.wire.udp import lockstep
from morai_bridge.wire import udp
from morai_bridge.wire.enums import CtrlMode
from morai_bridge.wire.units import NS

from . import commands
from .builders import BUILDERS, Step
from .config import EXTENSION_STREAMS, LISTEN_PORTS, SEND_PORTS, SimConfig
from .ego import CMD_EXTERNAL, Drive
from .mgeo import load_mgeo
from .packets import Templates
from .scenario import load_scenario
from .snapshot import PortCounters, PortTally, SimSnapshot
from .sync import LockStep, LockStepHooks
from .world import World

__all__ = ["SimEmulator", "MAX_CATCHUP"]

log = logging.getLogger("morai_bridge.emu.sim")

#: a loop that falls behind makes up at most this many step periods at once (each one
#: stepped and sent, late); beyond that it gives up real time and its clock lags
MAX_CATCHUP = 5

_AUTO, _KEYBOARD = int(CtrlMode.AUTO), int(CtrlMode.KEYBOARD)


class SimEmulator:
    """The simulator side of the MORAI UDP protocol (see the module docstring).

    Thread safety: every public method may be called from any thread.  With
    :meth:`start`, one loop thread receives datagrams and runs the steps; without
    it, :meth:`step` and :meth:`poll` do that work in the caller's thread.  The
    command handlers (:mod:`.commands`, and the lock-step extension's,
    :class:`~.sync.LockStep`) run under the same lock, which guards :attr:`world`.
    """

    def __init__(self, config: Optional[SimConfig] = None, **overrides):
        cfg = (config or SimConfig())._replace(**overrides)
        cfg.check()
        #: the simulator release emulated (configuration.sim_versions); its ports fill the -1 port fields
        self.version = sim_versions.load_version(cfg.sim_version)
        cfg = cfg._replace(**{f: self.version.port(n) for n, (f, _, _) in SEND_PORTS.items()
                              if n in sim_versions.VERSIONED_PORTS and getattr(cfg, f) == FROM_VERSION})
        cfg = cfg._replace(**{f: shift_privileged(getattr(cfg, f), cfg.privileged_port_offset)
                              for f, _, _ in list(SEND_PORTS.values()) + list(LISTEN_PORTS.values())})
        self.config = cfg
        #: the map (configuration.maps.MapInfo) and, for an MGeo folder, its road network; MapError /
        #: MGeoError (ValueErrors naming the file and key) before any socket is opened
        self.map_info = maps.load_map(cfg.map)
        road = load_mgeo(self.map_info.mgeo_dir) if self.map_info.mgeo_dir else None
        self._lock = threading.RLock()
        listen_ip = resolve_host(cfg.listen_ip, "listen_ip")
        user_ip = resolve_host(cfg.user_ip, "user_ip")
        allowed = cfg.allowed_sender_ip
        allowed = resolve_host(allowed, "allowed_sender_ip") if allowed else ""

        # sockets: the lock-step extension's only with emulator_sync
        socks = {}
        try:
            for name, (field, _, _) in LISTEN_PORTS.items():
                port = getattr(cfg, field)
                if port != DISABLED and cfg.stream_enabled(name):
                    socks[name] = bind_udp(listen_ip, ANY_FREE_PORT if port == EMULATOR_ANY_FREE_PORT else port,
                                           field, ip_param="listen_ip")
            self._sender = UdpSender(listen_ip, user_ip)
        except Exception:
            for s in socks.values():
                s.close()
            raise
        #: the simulated world (ego, actors, lights, contacts, lamps, clock); hold the lock to use it
        self.world = World(cfg, self.version, self.map_info, road)
        step_s = self.world.step_s
        #: listening port actually bound, per command name (enabled ones only)
        self.ports: Dict[str, int] = {n: s.getsockname()[1] for n, s in socks.items()}
        #: destination port per stream (enabled ones only)
        self.dst_ports: Dict[str, int] = {
            n: getattr(cfg, f) for n, (f, _, r) in SEND_PORTS.items()
            if getattr(cfg, f) != DISABLED and (r is None or getattr(cfg, r) > 0)
            and cfg.stream_enabled(n)}
        #: stream -> send every this many steps (rate streams only)
        self._periods = {n: max(1, int(round(1.0 / (getattr(cfg, r) * step_s))))
                         for n, (f, _, r) in SEND_PORTS.items()
                         if r is not None and n in self.dst_ports}
        self._rx = UdpReceiver(socks, allowed, self._on_datagram)
        self._counters = {n: PortTally() for n in socks}
        self._sent = {n: 0 for n in SEND_PORTS}
        self._handlers = {cls: functools.partial(handler, self.world)
                          for cls, handler in commands.COMMAND_HANDLERS.items()}
        #: the event streams (no rate): looked at every step
        self._events = frozenset(n for n, (_, _, r) in SEND_PORTS.items() if r is None) - EXTENSION_STREAMS
        # step periods ticked (streams are due by tick)
        self._ticks = 0
        # real-time loop: next deadline (monotonic ns) and how it kept up
        self._deadline = 0
        self._overruns = 0
        self._late_steps = 0
        self._lost_periods = 0
        # lock-step extension (its mode and frame count; the world through these hooks only)
        world = self.world
        self.sync_mode = LockStep(world.step_ns, LockStepHooks(
            lambda: world.time_ns, lambda: world.paused, functools.partial(commands.sync_drive, world),
            self._sync_advance, self._sync_reply))
        self._handlers.update(dict.fromkeys((lockstep.EmuSyncCmd, lockstep.EmuSyncTick), self.sync_mode.request))
        self._templates = Templates(cfg)
        self._thread: Optional[Worker] = None     # the supervised loop
        self._stop = threading.Event()
        self._closed = False
        #: the sensor streams (camera, 3D / 2D LiDAR), None unless a sensor port is set
        self.sensors = None
        self._scene_type = None
        try:
            if cfg.sensors_enabled():
                from ..sensors.rig import SensorRig   # numpy (and PIL) only with sensors
                from ..sensors.scene import Scene
                self._scene_type = Scene
                self.sensors = SensorRig(cfg, listen_ip, user_ip)
                self.sensors.reset_clock(world.time_ns)
            if cfg.scenario:
                sc = load_scenario(cfg.scenario_dir, cfg.scenario, road)
                with self._lock:
                    world.apply_scenario(sc, True, True, True, True, True, False)
            with self._lock:
                world.refresh_contacts()
        except Exception:
            self.close()
            raise

    # ------------------------------------------------------------ lifecycle
    def start(self, log_error=None, on_dead=None) -> "SimEmulator":
        """Run the real-time loop (receive + fixed-step ticks) in a supervised worker thread
        (:class:`morai_bridge.link.workers.Worker`): an exception in an iteration is counted,
        logged through ``log_error(text)`` and the loop resumes; ``on_dead(worker)`` when it
        cannot."""
        if self._closed:
            raise RuntimeError("emulator is closed")
        if self._thread is None:
            with self._lock:   # stamps follow the wall clock from here on
                self.world.follow_wall_clock()
            if self.sensors is not None:
                with self._lock:
                    self.sensors.reset_clock(self.world.time_ns)
                self.sensors.start(log=log_error or (lambda text: log.error("%s", text)),
                                   on_dead=on_dead)
            self._deadline = time.monotonic_ns() + self.world.step_ns
            self._thread = Worker("sim_emulator_loop", self._step_once,
                                  log=log_error or (lambda text: log.error("%s", text)),
                                  on_dead=on_dead, backoff_s=self.world.step_s).start()
        return self

    @property
    def workers(self):
        """The supervised worker threads (for diagnostics)."""
        out = [self._thread] if self._thread is not None else []
        if self.sensors is not None and self.sensors.worker is not None:
            out.append(self.sensors.worker)
        return out

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def close(self) -> None:
        """Stop the loop and close every socket (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._thread is not None:
            self._thread.stop(2.0)
        if self.sensors is not None:
            self.sensors.close()
        self._rx.stop()
        self._sender.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------ the real-time loop
    def _step_once(self) -> None:
        """One iteration of the loop: receive until the next deadline, then tick.

        Deadlines are absolute (no drift).  Every step period that is due is
        ticked and its streams sent, even when the loop is late (then they go
        out late, back to back): no step is ever made without being sent.  A
        loop more than MAX_CATCHUP periods late makes up MAX_CATCHUP of them and
        gives the rest up (``overruns``, ``lost_periods``): the simulated clock
        then lags the wall clock, as a simulator's does when it cannot keep up.
        """
        self._rx.poll(max(0, self._deadline - time.monotonic_ns()) / NS)
        now = time.monotonic_ns()
        if now < self._deadline:
            return
        period = self.world.step_ns
        late = (now - self._deadline) // period           # whole periods missed
        if late > MAX_CATCHUP:
            self._overruns += 1
            self._lost_periods += late - MAX_CATCHUP
        self._deadline += (1 + late) * period               # absolute deadlines: no drift
        ticks = 1 + min(late, MAX_CATCHUP)
        with self._lock:
            advance = not self.sync_mode.on
            for _ in range(ticks):
                self._tick(advance)
            self._late_steps += ticks - 1

    # ------------------------------------------------------------ manual drive
    def poll(self, timeout: float = 0.0) -> None:
        """Handle the datagrams that arrive within ``timeout`` s (no-op while running)."""
        if self._thread is None and not self._closed:
            end = time.monotonic() + timeout
            while True:
                self._rx.poll(max(0.0, end - time.monotonic()))
                if time.monotonic() >= end:
                    break

    def step(self, n: int = 1) -> None:
        """Advance ``n`` steps by hand: handle pending datagrams, step, send due streams.

        Works in every mode (also in sync mode, where it does not count frames); a
        paused simulation does not advance but still sends its streams.
        """
        for _ in range(n):
            if self._thread is None and not self._closed:
                self._rx.poll(0)
            with self._lock:
                self._tick(advance=True)

    def wait_for(self, predicate, timeout: float = 2.0) -> bool:
        """Poll (or wait for the loop) until ``predicate(snapshot())`` is true."""
        end = time.monotonic() + timeout
        while True:
            if predicate(self.snapshot()):
                return True
            if time.monotonic() >= end:
                return False
            if self._thread is None:
                self.poll(0.01)
            else:
                time.sleep(0.005)

    # ------------------------------------------------------------ knobs
    def set_ctrl_mode(self, mode: int) -> None:
        """1 = keyboard (network control ignored), 2 = auto (external control)."""
        if mode not in (_KEYBOARD, _AUTO):
            raise ValueError(f"ctrl_mode must be 1 (keyboard) or 2 (auto), got {mode!r}")
        with self._lock:
            self.world.set_ctrl_mode(mode)

    def drive_external(self, speed_kmh: float, gear: int, steer: float,
                       brake: float = 0.0) -> None:
        """Let another model drive the ego (Serial+UDP mode: the ERP-42 PCU emulator).

        ``speed_kmh`` (>= 0) is imposed at once in the direction of ``gear`` (1 P,
        2 R, 3 N, 4 D); ``steer`` is normalised -1..1, + = right; ``brake`` 0..1 is
        reported.  It takes precedence over network control, in either ctrl_mode,
        until :meth:`clear_external`; network commands are still counted.
        """
        drive = Drive(CMD_EXTERNAL, gear, float(speed_kmh), 0.0, 0.0, float(brake), float(steer))
        if gear not in (1, 2, 3, 4) or not drive.finite():
            raise ValueError(f"drive_external: gear 1..4 and finite values needed, got "
                             f"speed {speed_kmh!r}, gear {gear!r}, steer {steer!r}, "
                             f"brake {brake!r}")
        with self._lock:
            self.world.external = drive

    def clear_external(self) -> None:
        """End :meth:`drive_external`: network control (if in auto mode) applies again."""
        with self._lock:
            self.world.external = None

    def set_paused(self, paused: bool) -> None:
        with self._lock:
            self.world.paused = bool(paused)

    def load_scenario(self, name: str, delete_all: bool = True, load_ego: bool = True,
                      load_npc: bool = True, load_pedestrian: bool = True,
                      load_object: bool = True, set_pause: bool = False) -> int:
        """Load ``<scenario_dir>/<name>.json``; returns the SimStatus result (1 or 0x37)."""
        with self._lock:
            return commands.load(self.world, name, delete_all, load_ego, load_npc, load_pedestrian,
                                 load_object, set_pause)

    # ------------------------------------------------------------ snapshot
    def snapshot(self) -> SimSnapshot:
        with self._lock:
            w = self.world
            foreign = {n: st.foreign for n, st in self._rx.stats.items()}
            counters = {n: PortCounters(self.ports[n], c.received, c.accepted, c.ignored,
                                        c.malformed, c.wrong_type, foreign.get(n, 0), c.errors,
                                        c.last_error)
                        for n, c in self._counters.items()}
            sec, nsec = divmod(w.time_ns, NS)
            return SimSnapshot(
                w.time_ns, sec, nsec, w.steps, w.paused, w.ego_snapshot(), w.object_snapshots(),
                w.light_snapshots(), w.intersection_snapshots(), w.contacts, w.npc_pairs, w.lamps,
                dict(w.sensor_poses), w.scenario_name, w.status_snapshot(),
                self.sync_mode.snapshot(),
                counters, dict(self._sent), self._overruns, self._late_steps,
                self._lost_periods,
                self.sensors.snapshot() if self.sensors is not None else None)

    # ------------------------------------------------------------ stepping
    def _tick(self, advance: bool) -> None:
        """One step period (lock held): a physics step, then the streams due at it."""
        if advance and not self.world.paused:
            self._advance()
        if self.sync_mode.on:
            # lock-step: the data goes out after each frame; only the status keeps its rate
            self._publish({"sim_status"} & self._due())
        else:
            self._publish(self._due() | self._events)
        self._ticks += 1

    def _advance(self) -> None:
        """One physics step of the world (lock held), then the sensors see it."""
        w = self.world
        w.advance()
        if self.sensors is not None:
            self.sensors.feed(self._scene_type(w.time_ns, w.ego_pose(), w.actor_boxes()))

    def _sync_advance(self, steps: int) -> None:
        """The lock-step hook: ``steps`` physics steps, then every stream of the frame."""
        for _ in range(steps):
            self._advance()
        self._publish(set(self._periods) | self._events)

    def _sync_reply(self, data: bytes) -> None:
        if "sync_state" in self.dst_ports:
            self._send("sync_state", data)

    def _due(self) -> set:
        return {n for n, period in self._periods.items() if self._ticks % period == 0}

    # ------------------------------------------------------------ sending
    def _send(self, stream: str, data: bytes) -> None:
        if self._sender.send(self.dst_ports[stream], data):
            self._sent[stream] += 1

    def _publish(self, streams) -> None:
        """Send the given streams for the world as it is (lock held)."""
        streams = set(streams) & set(self.dst_ports)
        # Collision Data goes out with every status, also when nothing touches the ego (as
        # the simulator sends it: 40-55 Hz in the 2024 captures and in 25.S4)
        if "ego_status" in streams and "collision" in self.dst_ports:
            streams.add("collision")
        if not streams:
            return
        step = Step(self.world, self._templates, streams, self.world.imu_local and not self.sync_mode.on)
        encode = udp.encode
        for name, build in BUILDERS.items():
            if name in streams:
                for m in build(step):
                    self._send(name, encode(m))

    # ------------------------------------------------------------ receiving
    def _on_datagram(self, name, data, addr, t) -> None:
        """Decode one datagram from port ``name``, count it, hand it to its handler."""
        c = self._counters[name]
        c.received += 1
        codec, other = (lockstep, udp) if name == "sync" else (udp, lockstep)
        try:
            msg = codec.decode(data)
        except udp.DecodeError as e:
            try:
                msg = other.decode(data)      # well-formed, but for another port?
            except udp.DecodeError:
                self._count_bad(name, c, "malformed", str(e),
                                (e.header, e.data_length, e.length))
                return
        except Exception as e:  # a codec bug must not stop the emulator
            c.malformed += 1
            c.last_error = f"decoder failed: {type(e).__name__}: {e}"
            log.exception("%s: decoder raised on %r", name, bytes(data[:64]))
            return
        if type(msg) not in LISTEN_PORTS[name][2]:
            self._count_bad(name, c, "wrong_type",
                            f"{type(msg).__name__} is not accepted on this port", type(msg))
            return
        try:
            with self._lock:
                ok = self._handlers[type(msg)](msg)
        except Exception as e:  # a bug: keep running, but say so loudly
            c.errors += 1
            c.last_error = f"{type(e).__name__}: {e}"
            log.exception("%s: handler failed on %r", name, msg)
            return
        if ok:
            c.accepted += 1
        else:
            c.ignored += 1

    def _count_bad(self, name, c, kind, text, key) -> None:
        setattr(c, kind, getattr(c, kind) + 1)
        c.last_error = text
        if (kind, key) not in c.logged and len(c.logged) < 32:
            c.logged.add((kind, key))
            log.warning("%s port %d: %s datagram dropped: %s", name, self.ports[name], kind, text)
        else:
            log.debug("%s: %s datagram dropped: %s", name, kind, text)
