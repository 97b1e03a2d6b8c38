"""pcu_emulator: the ERP-42 PCU emulator (morai_bridge.emu.pcu) as a ROS node.

It creates a pseudo-terminal (or opens ``~port``), publishes nothing but
/diagnostics, and logs the device path; point erp42_serial at ``~link``.
Also runnable without ROS: ``python3 -m morai_bridge.emu.pcu --link /tmp/erp42``.
"""
import rospy
from diagnostic_msgs.msg import DiagnosticStatus

from morai_bridge.configuration.params import ParamError
from morai_bridge.emu import pcu
from morai_bridge.emu.pcu import PcuEmulator
from morai_bridge.emu.pcu.vehicle import VehicleModel
from morai_bridge.ros.supervision import make_updater
from morai_bridge.ros.params import init_node, load
from morai_bridge.ros.supervision import FAULT_INJECTION, NodeSupervisor

PARAMS = pcu.PARAMS + [FAULT_INJECTION]


class PcuNode:

    def __init__(self, cfg):
        self.pcu = PcuEmulator(cfg.port or None, link=cfg.link or None, init_s=cfg.init_s,
                               alive_timeout_s=cfg.alive_timeout_s, alive_check=cfg.alive_check,
                               auto_fail_latch=cfg.auto_fail_latch, feedback_mode=cfg.feedback_mode,
                               period_s=cfg.period_s, rc_auto=cfg.rc_auto, brake_min=cfg.brake_min,
                               brake_max=cfg.brake_max, feedback_steer_sign=cfg.feedback_steer_sign,
                               encoder_enabled=cfg.encoder_enabled, encoder_ppr=cfg.encoder_ppr,
                               wheel_radius_m=cfg.wheel_radius_m, vehicle=VehicleModel(accel_mps2=cfg.accel_mps2))
        self.pcu.noise_bytes = cfg.noise_bytes
        self.pcu.split_writes = cfg.split_writes
        self.supervisor = NodeSupervisor('pcu_emulator', cfg)
        self.pcu.supervise(self.supervisor.log, self.supervisor.on_dead)
        self.supervisor.watch(lambda: self.pcu.workers)
        self.updater, self.timer = make_updater('erp42_pcu_emulator', self.supervisor)
        self.updater.add('ERP-42 PCU emulator', self._diag)
        self.supervisor.add_to(self.updater)

    def _diag(self, stat):
        s = self.pcu.state
        level = DiagnosticStatus.OK if str(s.mode) in ('AUTO', 'MANUAL') else DiagnosticStatus.WARN
        stat.summary(level, f'{s.mode} on {s.device_path}')
        for k in ('mode', 'connected', 'speed', 'steer', 'brake', 'gear', 'enc', 'frames_ok', 'frames_rejected',
                  'bytes_discarded', 'alive_errors', 'clamped', 'feedback_sent', 'auto_fail_events'):
            stat.add(k, str(getattr(s, k)))
        return stat


def main(argv=None):
    init_node('pcu_emulator', PARAMS)
    try:
        node = PcuNode(load(PARAMS))
    except (ParamError, ValueError, OSError) as e:
        rospy.logfatal('pcu_emulator: %s', e)
        raise SystemExit(2)
    node.pcu.start()
    rospy.on_shutdown(node.pcu.close)
    rospy.loginfo('pcu_emulator: ERP-42 PCU on %s (link %s)', node.pcu.device_path, node.pcu.link_path)
    raise SystemExit(node.supervisor.spin())


if __name__ == '__main__':
    main()
