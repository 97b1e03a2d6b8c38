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

Program use (``src`` on ``PYTHONPATH``; the CLI is :mod:`.sim_cli`)::

    python3 -m morai_bridge.emu.sim --scenario sample

This module is the :class:`SimEmulator` itself: sockets, the real-time loop,
the world's state and stepping, receiving and sending.  Around it, by job:

========================  ======================================================
:mod:`.sim_config`        PARAMS (every option once), SimConfig, LISTEN_PORTS / SEND_PORTS
:mod:`.sim_snapshot`      the immutable snapshot types
:mod:`.sim_commands`      receiving: one handler per user -> simulator command
:mod:`.sim_sync`          the lock-step extension (only with ``emulator_sync``)
:mod:`.sim_send`          sending: one packet builder per simulator -> user stream
:mod:`.sim_packets`       world state -> udp message objects
:mod:`.sim_vehicle`       the ego's kinematic bicycle model
:mod:`.scenario`          scenario files and the moving actors
:mod:`.sim_signals`       traffic lights and intersection controllers
:mod:`.geo`               footprint overlap, UTM -> WGS-84
:mod:`.sensors`           camera, 3D / 2D LiDAR streams (only when a sensor port is set)
:mod:`.sim_cli`           ``python3 -m morai_bridge.emu.sim``
========================  ======================================================

Ports: a listening port of 0 disables that command, -1 binds an ephemeral port
(read it back from :attr:`SimEmulator.ports`); a destination port of 0 (or a
rate of 0) disables that stream.  Steering sign: Ego Ctrl Cmd ``steer`` > 0
turns RIGHT, so the heading (yaw, counter-clockwise) decreases.

See docs/emulator.md for every option, the scenario format, the vehicle model
and the synchronous-mode packets.  No ROS imports.
"""

import logging
import math
import threading
import time
from typing import Dict, Optional, Tuple

from morai_bridge.link.workers import Worker
from morai_bridge.link.transport import UdpReceiver, UdpSender, bind_udp, resolve_host, shift_privileged
from morai_bridge.configuration import sim_versions
from morai_bridge.configuration.params import ANY_FREE_PORT, DISABLED, EMULATOR_ANY_FREE_PORT, FROM_VERSION
from morai_bridge.wire.udp import lockstep
from morai_bridge.wire import udp
from morai_bridge.wire.enums import CtrlMode, ObjectType, Platform, SimResult, SimState
from morai_bridge.wire.units import MPS_TO_KMH, NS

from . import sim_packets as packets
from .geo import boxes_overlap
from .scenario import Actor, Scenario, ScenarioError, load_scenario
from .sim_commands import (CMD_SCEN_SETTING, COMMAND_HANDLERS, RESULT_SCENARIO_LOAD_ERROR,
                           SCEN_DELETE_ALL, SCEN_EGO, SCEN_NPC, SCEN_OBSTACLE, SCEN_PAUSE,
                           SCEN_PEDESTRIAN, SimCommands)
from .sim_config import (DEFAULT_SCENARIO_DIR, EXTENSION_STREAMS, FIELD_DOCS, LISTEN_PORTS,
                         SEND_PORTS, SimConfig)
from .sim_signals import DEFAULT_INTERSECTIONS, DEFAULT_LIGHTS, Intersection, TrafficLight
from .sim_snapshot import (EgoSnapshot, IntersectionSnapshot, LightSnapshot, ObjectSnapshot,
                           PortCounters, PortTally, SimSnapshot, SimStatusSnapshot,
                           SyncSnapshot)
from .sim_send import SimSending
from .sim_sync import LockStep, LockStepHooks
from .sim_vehicle import CMD_EXTERNAL, Drive, EgoModel, wrap_deg

__all__ = ["SimConfig", "SimEmulator", "SimSnapshot", "EgoSnapshot", "ObjectSnapshot",
           "LightSnapshot", "IntersectionSnapshot", "PortCounters", "SyncSnapshot",
           "SimStatusSnapshot", "LISTEN_PORTS", "SEND_PORTS", "EXTENSION_STREAMS", "FIELD_DOCS",
           "main", "DEFAULT_SCENARIO_DIR", "MAX_CATCHUP"]

log = logging.getLogger("morai_bridge.emu.sim")

#: a loop that falls behind makes up at most this many step periods at once (each one
#: stepped and sent, late); beyond that it gives up real time and its clock lags
MAX_CATCHUP = 5

_AUTO, _KEYBOARD = int(CtrlMode.AUTO), int(CtrlMode.KEYBOARD)
_VEHICLE = int(ObjectType.VEHICLE)
_PLAYING, _PAUSED = int(SimState.PLAYING), int(SimState.PAUSE)
_SUCCESS = int(SimResult.SUCCESS)


def main(argv=None) -> int:
    """``python3 -m morai_bridge.emu.sim``: see :mod:`.sim_cli`."""
    from .sim_cli import main as cli_main
    return cli_main(argv)


class SimEmulator(SimCommands, SimSending):
    """The simulator side of the MORAI UDP protocol (see the module docstring).

    Thread safety: every public method may be called from any thread.  With
    :meth:`start`, one loop thread receives datagrams and runs the steps; without
    it, :meth:`step` and :meth:`poll` do that work in the caller's thread.  The
    command handlers (:class:`SimCommands`, and the lock-step extension's,
    :class:`~.sim_sync.LockStep`) run under the same lock.
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
        v = self.version
        # the model's convention is the 24.R2 wire's: steer + right (sim_vehicle)
        self._ctrl_sign = 1 if v.ctrl_steer_positive == "right" else -1
        self._ghost_sign = 1 if v.ghost_steer_positive == "right" else -1
        self._status_sign = 1 if v.status_steer_positive == "right" else -1
        # 25.S4's IMU seconds are the host's local time (not on a simulated clock)
        self._imu_local = v.imu_seconds == "local" and not cfg.deterministic
        self._lock = threading.RLock()
        self._step_ns = int(round(cfg.step_s * 1000)) * 1_000_000
        self._step_s = self._step_ns / NS
        listen_ip = resolve_host(cfg.listen_ip, "listen_ip")
        self._user_ip = resolve_host(cfg.user_ip, "user_ip")
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
            self._sender = UdpSender(listen_ip, self._user_ip)
        except Exception:
            for s in socks.values():
                s.close()
            raise
        #: listening port actually bound, per command name (enabled ones only)
        self.ports: Dict[str, int] = {n: s.getsockname()[1] for n, s in socks.items()}
        #: destination port per stream (enabled ones only)
        self.dst_ports: Dict[str, int] = {
            n: getattr(cfg, f) for n, (f, _, r) in SEND_PORTS.items()
            if getattr(cfg, f) != DISABLED and (r is None or getattr(cfg, r) > 0)
            and cfg.stream_enabled(n)}
        #: stream -> send every this many steps (rate streams only)
        self._periods = {n: max(1, int(round(1.0 / (getattr(cfg, r) * self._step_s))))
                         for n, (f, _, r) in SEND_PORTS.items()
                         if r is not None and n in self.dst_ports}
        self._rx = UdpReceiver(socks, allowed, self._on_datagram)
        self._counters = {n: PortTally() for n in socks}
        self._sent = {n: 0 for n in SEND_PORTS}
        self._handlers = {cls: handler.__get__(self) for cls, handler in COMMAND_HANDLERS.items()}
        #: the event streams (no rate): looked at every step
        self._events = frozenset(n for n, (_, _, r) in SEND_PORTS.items() if r is None) - EXTENSION_STREAMS

        # world state
        self._ego = EgoModel(cfg.vehicle_params(), cfg.initial_gear)
        self._ego.set_pose(cfg.ego_x, cfg.ego_y, 0.0, cfg.ego_yaw_deg)
        self._ctrl_mode = _KEYBOARD if cfg.keyboard_mode else _AUTO
        self._drive: Optional[Drive] = None
        self._external: Optional[Drive] = None
        self._actors: Dict[int, Actor] = {}
        self._lights = [TrafficLight(s) for s in DEFAULT_LIGHTS]
        self._intersections = [Intersection(s) for s in DEFAULT_INTERSECTIONS]
        self._contacts: Tuple[int, ...] = ()
        self._npc_pairs: Tuple[Tuple[int, int], ...] = ()
        self._lamps = (0, 0)
        self._sensors: Dict[int, Tuple[float, ...]] = {}
        self._scenario_name = ""
        self._gps_blackouts = ()      # map boxes where the GPS sends 0/0 (the scenario's gps_blackouts)
        self._imu_burst_t = 0         # simulated time [ns] of the last IMU catch-up burst
        self._paused = False
        self._status = SimStatusSnapshot(_PLAYING, 0, 0, "", int(SimResult.NONE))
        # time: simulated clock (ns), steps made, step periods ticked (streams are due by tick)
        self._time_ns = 0 if cfg.deterministic else time.time_ns() // 1_000_000 * 1_000_000
        self._elapsed_ns = 0
        self._steps = 0
        self._ticks = 0
        # real-time loop: next deadline (monotonic ns) and how it kept up
        self._deadline = 0
        self._overruns = 0
        self._late_steps = 0
        self._lost_periods = 0
        # lock-step extension (its mode and frame count; the world through these hooks only)
        self.sync_mode = LockStep(self._step_ns, LockStepHooks(
            lambda: self._time_ns, lambda: self._paused, self._sync_drive, self._sync_advance, self._sync_reply))
        self._handlers.update(dict.fromkeys((lockstep.EmuSyncCmd, lockstep.EmuSyncTick), self.sync_mode.request))
        self._templates = packets.Templates(cfg)
        self._thread: Optional[Worker] = None     # the supervised loop
        self._stop = threading.Event()
        self._closed = False
        #: the sensor streams (camera, 3D / 2D LiDAR), None unless a sensor port is set
        self.sensors = None
        try:
            if cfg.sensors_enabled():
                from .sensors.rig import SensorRig   # numpy (and PIL) only with sensors
                from .sensors.scene import Scene
                self._scene_type = Scene
                self.sensors = SensorRig(cfg, listen_ip, self._user_ip)
                self.sensors.reset_clock(self._time_ns)
            if cfg.scenario:
                sc = load_scenario(cfg.scenario_dir, cfg.scenario)
                with self._lock:
                    self._apply_scenario(sc, True, True, True, True, True, False)
            with self._lock:
                self._contacts, self._npc_pairs = self._detect()
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
            if not self.config.deterministic:
                with self._lock:   # stamps follow the wall clock from here on
                    self._time_ns = max(self._time_ns,
                                        time.time_ns() // 1_000_000 * 1_000_000)
            if self.sensors is not None:
                with self._lock:
                    self.sensors.reset_clock(self._time_ns)
                self.sensors.start(log=log_error or (lambda text: log.error("%s", text)),
                                   on_dead=on_dead)
            self._deadline = time.monotonic_ns() + self._step_ns
            self._thread = Worker("sim_emulator_loop", self._step_once,
                                  log=log_error or (lambda text: log.error("%s", text)),
                                  on_dead=on_dead, backoff_s=self._step_s).start()
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
        period = self._step_ns
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
            self._set_ctrl_mode(mode)

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
            self._external = drive

    def clear_external(self) -> None:
        """End :meth:`drive_external`: network control (if in auto mode) applies again."""
        with self._lock:
            self._external = None

    def set_paused(self, paused: bool) -> None:
        with self._lock:
            self._paused = bool(paused)

    def load_scenario(self, name: str, delete_all: bool = True, load_ego: bool = True,
                      load_npc: bool = True, load_pedestrian: bool = True,
                      load_object: bool = True, set_pause: bool = False) -> int:
        """Load ``<scenario_dir>/<name>.json``; returns the SimStatus result (1 or 0x37)."""
        with self._lock:
            return self._load(name, delete_all, load_ego, load_npc, load_pedestrian,
                              load_object, set_pause)

    # ------------------------------------------------------------ snapshot
    def snapshot(self) -> SimSnapshot:
        with self._lock:
            e = self._ego
            vx, vy = e.velocity("map")
            ego = EgoSnapshot(e.x, e.y, e.z, e.roll, e.pitch, e.yaw_deg, e.v * MPS_TO_KMH,
                              vx * MPS_TO_KMH, vy * MPS_TO_KMH, e.a_long,
                              math.degrees(e.yaw_rate), e.steer_deg, e.accel_pedal,
                              e.brake_pedal, e.gear, self._ctrl_mode)
            objects = tuple(ObjectSnapshot(a.id, a.obj_type, a.x, a.y, a.z,
                                           wrap_deg(math.degrees(a.yaw)), a.length, a.width,
                                           a.height, a.vx * MPS_TO_KMH, a.vy * MPS_TO_KMH, d,
                                           a.name, a.ghost)
                            for d, a in self._sorted_actors())
            lights = tuple(LightSnapshot(lt.id, lt.type, lt.status(self._elapsed_ns),
                                         lt.forced is not None) for lt in self._lights)
            inters = tuple(IntersectionSnapshot(i.index, i.status, i.time_s)
                           for i in self._intersections)
            foreign = {n: st.foreign for n, st in self._rx.stats.items()}
            counters = {n: PortCounters(self.ports[n], c.received, c.accepted, c.ignored,
                                        c.malformed, c.wrong_type, foreign.get(n, 0), c.errors,
                                        c.last_error)
                        for n, c in self._counters.items()}
            sec, nsec = divmod(self._time_ns, NS)
            return SimSnapshot(
                self._time_ns, sec, nsec, self._steps, self._paused, ego, objects, lights,
                inters, self._contacts, self._npc_pairs, self._lamps, dict(self._sensors),
                self._scenario_name, self._status_snapshot(),
                self.sync_mode.snapshot(),
                counters, dict(self._sent), self._overruns, self._late_steps,
                self._lost_periods,
                self.sensors.snapshot() if self.sensors is not None else None)

    # ------------------------------------------------------------ simulation
    def _tick(self, advance: bool) -> None:
        """One step period (lock held): a physics step, then the streams due at it."""
        if advance and not self._paused:
            self._advance()
        if self.sync_mode.on:
            # lock-step: the data goes out after each frame; only the status keeps its rate
            self._publish({"sim_status"} & self._due())
        else:
            self._publish(self._due() | self._events)
        self._ticks += 1

    def _sync_drive(self, m) -> bool:
        """The lock-step hook: an EmuSyncTick's control command (gear 0: the gear in force); its steer
        is an Ego Ctrl Cmd's, + left or + right as the sim_version says."""
        return self._accept_drive(Drive(m.cmd_type, m.gear or self._ego.gear, m.velocity, m.acceleration,
                                        m.accel, m.brake, self._ctrl_sign * m.steer))

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

    def _advance(self) -> None:
        """One physics step of step_s (lock held)."""
        dt = self._step_s
        drive = self._external or (self._drive if self._ctrl_mode == _AUTO else None)
        e = self._ego
        blocked = set()
        heading = (math.cos(e.yaw), math.sin(e.yaw))
        for oid in self._contacts:
            a = self._actors.get(oid)
            if a is not None:
                ahead = (a.x - e.x) * heading[0] + (a.y - e.y) * heading[1]
                blocked.add(1 if ahead >= 0 else -1)
        e.step(dt, drive, frozenset(blocked))
        for a in self._actors.values():
            a.update(dt)
        for i in self._intersections:
            i.advance(self._step_ns)
        self._time_ns += self._step_ns
        self._elapsed_ns += self._step_ns
        self._steps += 1
        contacts, self._npc_pairs = self._detect()
        if set(contacts) - set(self._contacts):
            e.stop()   # first touch of an object: the ego stops dead
        self._contacts = contacts
        if self.sensors is not None:
            self.sensors.feed(self._scene())

    def _scene(self):
        """The world for the sensors (lock held): plain tuples, see :class:`.sensors.Scene`."""
        e = self._ego
        objects = tuple((a.id, a.obj_type, a.x, a.y, a.z, a.yaw, a.length, a.width, a.height)
                        for a in self._actors.values())
        return self._scene_type(self._time_ns, (e.x, e.y, e.z, e.roll, e.pitch, e.yaw_deg),
                                objects)

    def _sorted_actors(self):
        e = self._ego
        return sorted(((math.hypot(a.x - e.x, a.y - e.y), a) for a in self._actors.values()),
                      key=lambda t: (t[0], t[1].id))

    def _detect(self):
        ego_box = self._ego.box()
        contacts = tuple(a.id for _, a in self._sorted_actors() if boxes_overlap(ego_box, a.box()))
        vehicles = sorted((a for a in self._actors.values() if a.obj_type == _VEHICLE),
                          key=lambda a: a.id)
        pairs = []
        for k, a in enumerate(vehicles):
            for b in vehicles[k + 1:]:
                if boxes_overlap(a.box(), b.box()):
                    pairs.append((a.id, b.id))
        return contacts, tuple(pairs)

    def _set_ctrl_mode(self, mode: int) -> None:
        if mode != self._ctrl_mode:
            log.info("ctrl_mode %d -> %d", self._ctrl_mode, mode)
            self._ctrl_mode = mode
            self._drive = None   # the held network command does not survive a mode change

    # ------------------------------------------------------------ scenarios
    def _load(self, name, delete_all, load_ego, load_npc, load_ped, load_obj, set_pause) -> int:
        flags = ((SCEN_DELETE_ALL if delete_all else 0) | (SCEN_EGO if load_ego else 0)
                 | (SCEN_NPC if load_npc else 0) | (SCEN_PEDESTRIAN if load_ped else 0)
                 | (SCEN_OBSTACLE if load_obj else 0) | (SCEN_PAUSE if set_pause else 0))
        try:
            sc = load_scenario(self.config.scenario_dir, name)
        except ScenarioError as e:
            log.error("scenario load failed: %s", e)
            result = RESULT_SCENARIO_LOAD_ERROR
        else:
            self._apply_scenario(sc, delete_all, load_ego, load_npc, load_ped, load_obj,
                                 set_pause)
            log.info("scenario %r loaded (flags 0x%02x): %d objects", sc.name, flags,
                     len(self._actors))
            result = _SUCCESS
        self._record_command(int(Platform.SIMULATOR), CMD_SCEN_SETTING, f"{name}/{flags}",
                             result)
        return result

    def _apply_scenario(self, sc: Scenario, delete_all, load_ego, load_npc, load_ped,
                        load_obj, set_pause) -> None:
        if delete_all:
            self._actors.clear()
            load_ego = load_npc = load_ped = load_obj = True
        if load_ego and sc.ego is not None:
            g = sc.ego
            self._ego.set_pose(g.x, g.y, g.z, g.yaw_deg, g.speed_kmh, steer_deg=0.0)
            if g.gear is not None:
                self._ego.gear = g.gear
        groups = ((load_npc, sc.vehicles), (load_ped, sc.pedestrians), (load_obj, sc.obstacles))
        for selected, specs in groups:
            if selected:
                for spec in specs:
                    self._actors[spec.id] = Actor(spec, self.config.seed)
        if sc.traffic_lights is not None:
            self._lights = [TrafficLight(s) for s in sc.traffic_lights]
        if sc.intersections is not None:
            self._intersections = [Intersection(s) for s in sc.intersections]
        if sc.gps_blackouts is not None:
            self._gps_blackouts = sc.gps_blackouts
        self._scenario_name = sc.name
        self._paused = bool(set_pause)
        self._contacts, self._npc_pairs = self._detect()

    # ------------------------------------------------------------ SimStatus
    def _record_command(self, platform, command, option, result) -> None:
        self._status = SimStatusSnapshot(self._status.status, platform, command,
                                         option[:99], result)

    def _status_snapshot(self) -> SimStatusSnapshot:
        return self._status._replace(status=_PAUSED if self._paused else _PLAYING)


if __name__ == "__main__":
    import sys
    sys.exit(main())
