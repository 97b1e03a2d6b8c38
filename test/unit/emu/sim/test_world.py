"""The simulated world on its own (emu/sim/world.py): no sockets, no emulator; the builders and the
command handlers take it as their argument (emu/sim/builders.py, emu/sim/commands.py)."""

import pytest

from morai_bridge.configuration import sim_versions
from morai_bridge.emu.sim import commands
from morai_bridge.emu.sim.builders import BUILDERS, Step
from morai_bridge.emu.sim.config import SimConfig
from morai_bridge.emu.sim.packets import Templates
from morai_bridge.emu.sim.scenario import load_scenario
from morai_bridge.emu.sim.world import World
from morai_bridge.wire import udp


def make_world(**overrides):
    cfg = SimConfig(deterministic=True, **overrides)
    return World(cfg, sim_versions.load_version(cfg.sim_version))


def test_a_world_steps_its_clock_without_an_emulator():
    w = make_world()
    for _ in range(5):
        w.advance()
    assert w.steps == 5 and w.time_ns == 5 * w.step_ns == 100_000_000 and w.elapsed_ns == w.time_ns


def test_a_handler_changes_the_world_it_is_given():
    w = make_world()
    ok = commands.on_ctrl_cmd(w, udp.make(udp.EgoCtrlCmd, ctrl_mode=2, gear=4, cmd_type=2, velocity=36.0))
    assert ok and w.drive is not None and w.drive.velocity_kmh == 36.0
    for _ in range(200):
        w.advance()
    assert w.ego_snapshot().speed_kmh > 10.0
    w.set_ctrl_mode(1)                   # keyboard: the held command is dropped, new ones ignored
    assert w.drive is None
    assert not commands.on_ctrl_cmd(w, udp.make(udp.EgoCtrlCmd, ctrl_mode=2, gear=4, cmd_type=2, velocity=5.0))


def test_a_scenario_lands_in_the_world():
    w = make_world()
    sc = load_scenario(w.config.scenario_dir, "sample")
    w.apply_scenario(sc, True, True, True, True, True, False)
    assert w.scenario_name == sc.name
    assert sorted(w.actors) == sorted(a.id for a in sc.vehicles + sc.pedestrians + sc.obstacles)
    assert [o.id for o in w.object_snapshots()] == [a.id for _, a in w.sorted_actors()]
    assert commands.load(w, "no_such_scenario", True, True, True, True, True, False) == \
        commands.RESULT_SCENARIO_LOAD_ERROR
    assert w.status_snapshot().result == commands.RESULT_SCENARIO_LOAD_ERROR


def test_the_builders_read_the_world_they_are_given():
    w = make_world()
    w.lamps = (1, 0)
    commands.on_set_light(w, udp.make(udp.SetTrafficLight, traffic_light_index=w.lights[0].id,
                                      traffic_light_status=1))
    step = Step(w, Templates(w.config), set(BUILDERS))
    status, = BUILDERS["ego_status"](step)
    assert isinstance(status, udp.EgoVehicleStatus) and (status.sec, status.nsec) == (0, 0)
    lights = BUILDERS["traffic_light"](step)
    assert len(lights) == len(w.lights) and lights[0].traffic_light_status == 1
    assert BUILDERS["vehicle_collision"](step) == ()


@pytest.mark.parametrize("every_s", [0.0, 1.0])
def test_the_imu_burst_is_due_once_per_period(every_s):
    w = make_world()
    due = []
    for _ in range(120):
        w.advance()
        due.append(w.imu_burst_due(round(every_s * 1e9)))
    assert sum(due) == (0 if every_s == 0 else 2)
