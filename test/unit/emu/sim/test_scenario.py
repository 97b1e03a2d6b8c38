"""Scenario files of the emulator (emu/sim/scenario.py)."""

import pytest


def test_scenario_rejects_an_empty_blackout_box(tmp_path):
    from morai_bridge.emu.sim.scenario import ScenarioError, parse_scenario
    with pytest.raises(ScenarioError, match=r"gps_blackouts\[0\]: min must be below max"):
        parse_scenario({"gps_blackouts": [{"min": [1.0, 0.0], "max": [0.0, 1.0]}]}, "bad")
