"""sim_emulator: the MORAI simulator emulator as a ROS node.

The emulator itself (:mod:`morai_bridge.emu.sim`) needs no ROS; this node only
reads its options from private parameters (one per ``SimConfig`` field, same
name and default; the lock-step extension only with ``~emulator_sync``), runs
it in real time, reports its counters on /diagnostics (with the sensor streams'
when a ``~camera_port``, ``~lidar_port`` or ``~lidar2d_port`` is set), and closes it on shutdown.  With ``~erp42_link`` it also runs an
ERP-42 PCU emulator on a pseudo-terminal whose motion drives the emulated ego,
reproducing the simulator's Serial+UDP mode.
"""
import os

import rospy

from morai_bridge.configuration.params import Param, ParamError
from morai_bridge.emu import sim as simemu
from morai_bridge.emu.sim import config as sim_config
from morai_bridge.emu.sim.snapshot import snapshot_diagnostics
from morai_bridge.ros.supervision import make_updater
from morai_bridge.ros.params import init_node, load
from morai_bridge.ros.supervision import FAULT_INJECTION, NodeSupervisor


def _params():
    # the scenario folder is found at run time (rospkg), not the source tree's
    out = [p if p.name != 'scenario_dir' else
           Param('scenario_dir', '', 'folder of scenario JSON files (auto or "" = config/scenarios of this package)',
                 unset='auto')
           for p in sim_config.PARAMS]
    out.append(Param('erp42_link', '', 'if set (not none or ""), also run an ERP-42 PCU emulator on a pty with this '
                     'symlink; its speed and steering drive the emulated ego (Serial+UDP mode)', unset='none'))
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


class SimEmulatorNode:

    def __init__(self, cfg):
        fields = {k: cfg[k] for k in simemu.SimConfig._fields if k in cfg}
        if not fields['scenario_dir']:
            fields['scenario_dir'] = _package_scenarios()
        self.sim = simemu.SimEmulator(simemu.SimConfig(**fields))
        self.supervisor = NodeSupervisor('sim_emulator', cfg)
        self.pcu = None
        if cfg.erp42_link:
            from morai_bridge.emu.sim.serial_udp import start_pcu
            self.pcu = start_pcu(self.sim, cfg.erp42_link, cfg.erp42_init_s, cfg.max_steer_deg,
                                 self.supervisor.log, self.supervisor.on_dead)
            rospy.loginfo('sim_emulator: ERP-42 PCU emulator on %s -> %s', cfg.erp42_link, self.pcu.device_path)
        self.supervisor.watch(lambda: self.sim.workers + (self.pcu.workers if self.pcu is not None else []))
        self.updater, self.timer = make_updater('morai_sim_emulator', self.supervisor)
        self.updater.add('Simulator emulator', self._diag)
        self.supervisor.add_to(self.updater)

    def start(self):
        self.sim.start(log_error=self.supervisor.log, on_dead=self.supervisor.on_dead)

    def _diag(self, stat):
        level, summary, values = snapshot_diagnostics(self.sim.snapshot(),
                                                      self.pcu.state if self.pcu is not None else None)
        stat.summary(level, summary)
        for key, value in values:
            stat.add(key, value)
        return stat

    def shutdown(self):
        if self.pcu is not None:
            self.pcu.close()
        self.sim.close()


def main(argv=None):
    init_node('sim_emulator', PARAMS)
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
