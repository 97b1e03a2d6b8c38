"""sim_emulator: the MORAI simulator emulator as a ROS node.

The emulator itself (:mod:`morai_bridge.emu.sim`) needs no ROS; this node only
reads its options from private parameters (one per ``SimConfig`` field, same
name and default; the lock-step extension only with ``~emulator_sync``), runs
it in real time, reports its counters on /diagnostics (with the sensor streams'
when a ``~camera_port``, ``~lidar_port`` or ``~lidar2d_port`` is set), and closes it on shutdown.  With ``~erp42_link`` it also runs an
ERP-42 PCU emulator on a pseudo-terminal whose motion drives the emulated ego,
reproducing the simulator's Serial+UDP mode.
"""
import math
import os

import rospy
from diagnostic_msgs.msg import DiagnosticStatus

from morai_bridge.emu import sim as simemu
from morai_bridge.ros.bridge_diagnostics import make_updater
from morai_bridge.ros.params import Param, ParamError, load
from morai_bridge.ros.supervision import FAULT_INJECTION, NodeSupervisor
from morai_bridge.wire.enums import Gear
from morai_bridge.wire.erp42 import GEAR_BACKWARD, GEAR_FORWARD, GEAR_NEUTRAL
from morai_bridge.wire.units import MPS_TO_KMH

# ERP-42 gear (PCU emulator) -> MORAI gear of the emulated ego
_ERP_TO_MORAI_GEAR = {GEAR_FORWARD: int(Gear.D), GEAR_NEUTRAL: int(Gear.N), GEAR_BACKWARD: int(Gear.R)}

_PARAM_TYPES = (bool, int, float, str)


def _params():
    out = []
    for name in simemu.SimConfig._fields:
        default = simemu.SimConfig._field_defaults[name]
        if name == 'scenario_dir':
            default = ''
        if not isinstance(default, _PARAM_TYPES):
            continue
        doc = simemu.FIELD_DOCS.get(name, name.replace('_', ' '))
        if name == 'scenario_dir':
            doc = 'folder of scenario JSON files ("" = config/scenarios of this package)'
        out.append(Param(name, default, doc))
    out.append(Param('erp42_link', '', 'if set, also run an ERP-42 PCU emulator on a pty with this symlink; '
                     'its speed and steering drive the emulated ego (Serial+UDP mode)'))
    out.append(Param('erp42_init_s', 0.0, 'INIT phase of that PCU emulator [s]', minimum=0.0))
    out.append(FAULT_INJECTION)
    return out


PARAMS = _params()


def _package_scenarios():
    try:
        import rospkg
        return os.path.join(rospkg.RosPack().get_path('morai_msgs'), 'config', 'scenarios')
    except Exception:  # not in a ROS environment: the source tree's folder
        return simemu.DEFAULT_SCENARIO_DIR


class SimEmulatorNode(object):

    def __init__(self, cfg):
        fields = dict((k, cfg[k]) for k in simemu.SimConfig._fields if k in cfg)
        if not fields['scenario_dir']:
            fields['scenario_dir'] = _package_scenarios()
        self.sim = simemu.SimEmulator(simemu.SimConfig(**fields))
        self.supervisor = NodeSupervisor('sim_emulator', cfg)
        self.pcu = None
        if cfg.erp42_link:
            self._start_pcu(cfg)
        self.supervisor.watch(lambda: self.sim.workers + (self.pcu.workers if self.pcu is not None else []))
        self.updater, self.timer = make_updater('morai_sim_emulator')
        self.updater.add('Simulator emulator', self._diag)
        self.supervisor.add_to(self.updater)

    def _start_pcu(self, cfg):
        from morai_bridge.emu.pcu import PcuEmulator
        sim = self.sim

        def on_state(st):
            gear = _ERP_TO_MORAI_GEAR.get(st.gear, int(Gear.N))
            steer = -math.degrees(st.steer_rad) / cfg.max_steer_deg     # wire + = right
            sim.drive_external(speed_kmh=abs(st.speed_mps) * MPS_TO_KMH, gear=gear,
                               steer=max(-1.0, min(1.0, steer)), brake=st.brake)

        self.pcu = PcuEmulator(link=cfg.erp42_link, init_s=cfg.erp42_init_s, encoder_enabled=False,
                               on_state=on_state).supervise(self.supervisor.log, self.supervisor.on_dead).start()
        rospy.loginfo('sim_emulator: ERP-42 PCU emulator on %s -> %s', cfg.erp42_link, self.pcu.device_path)

    def start(self):
        self.sim.start(log_error=self.supervisor.log, on_dead=self.supervisor.on_dead)

    def _diag(self, stat):
        s = self.sim.snapshot()
        bad = sum(c.malformed + c.wrong_type + c.foreign for c in s.counters.values())
        stat.summary(DiagnosticStatus.OK if not bad else DiagnosticStatus.WARN,
                     '%s, sim time %d.%03d s%s' % ('paused' if s.paused else 'running', s.sec, s.nsec // 1000000,
                                                    ', %d bad datagrams' % bad if bad else ''))
        stat.add('ego x, y [m]', '%.2f, %.2f' % (s.ego.x, s.ego.y))
        stat.add('ego speed [km/h]', '%.1f' % s.ego.speed_kmh)
        stat.add('ego gear / ctrl_mode', '%d / %d' % (s.ego.gear, s.ego.ctrl_mode))
        stat.add('objects', len(s.objects))
        stat.add('collisions', ' '.join(map(str, s.collisions)))
        for name, c in sorted(s.counters.items()):
            stat.add('%s (port %d)' % (name, c.port), 'received %d, accepted %d, ignored %d, malformed %d, '
                     'wrong type %d, foreign %d' % (c.received, c.accepted, c.ignored, c.malformed,
                                                    c.wrong_type, c.foreign))
        stat.add('sent', ', '.join('%s %d' % kv for kv in sorted(s.sent.items())))
        stat.add('loop overruns', s.overruns)
        stat.add('steps sent late (caught up)', s.late_steps)
        stat.add('step periods given up (clock lag)', s.lost_periods)
        r = s.sensor_streams
        if r is not None:
            stat.add('sensor ports', ', '.join('%s %d' % kv for kv in sorted(r.ports.items())))
            if 'camera' in r.ports:
                stat.add('camera frames / datagrams / box datagrams',
                         '%d / %d / %d' % (r.camera_frames, r.camera_datagrams, r.camera_box_datagrams))
                stat.add('camera ms per frame (mean / max), skipped frames',
                         '%.1f / %.1f, %d' % (r.camera_ms, r.camera_ms_max, r.camera_skipped))
            if 'lidar' in r.ports:
                stat.add('lidar packets / revolutions / skipped packets',
                         '%d / %d / %d' % (r.lidar_packets, r.lidar_revolutions, r.lidar_skipped))
                stat.add('lidar ms per revolution, rpm', '%.1f, %.2f' % (r.lidar_ms_per_rev, r.lidar_rpm))
            if 'lidar2d' in r.ports:
                stat.add('lidar2d scans / skipped', '%d / %d' % (r.lidar2d_scans, r.lidar2d_skipped))
            stat.add('sensor scenes replaced (renderer behind)', '%d of %d' % (r.scenes_replaced, r.scenes))
            if r.send_errors:
                stat.add('sensor send errors', '%d (%s)' % (r.send_errors, r.last_error))
        if self.pcu is not None:
            p = self.pcu.state
            stat.add('PCU mode', str(p.mode))
            stat.add('PCU frames ok / rejected', '%d / %d' % (p.frames_ok, p.frames_rejected))
        return stat

    def shutdown(self):
        if self.pcu is not None:
            self.pcu.close()
        self.sim.close()


def main(argv=None):
    rospy.init_node('sim_emulator')
    try:
        cfg = load(PARAMS)
        node = SimEmulatorNode(cfg)
    except (ParamError, ValueError, OSError) as e:
        rospy.logfatal('sim_emulator: %s', e)
        raise SystemExit(2)
    rospy.on_shutdown(node.shutdown)
    node.start()
    v = node.sim.version
    rospy.loginfo('sim_emulator: running %s (%s: steer + %s, status + %s, IMU %d B), scenario %r; ego status to %s:%d',
                  v.name, v.path, v.ctrl_steer_positive, v.status_steer_positive, v.imu_bytes, cfg.scenario,
                  cfg.user_ip, node.sim.config.ego_status_port)
    raise SystemExit(node.supervisor.spin())


if __name__ == '__main__':
    main()
