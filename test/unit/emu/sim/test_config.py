"""The emulator's options (emu/sim/config.py): checks that name the field, the docs, and the
port and rate options made from the stream rows."""

import os

import pytest

import helpers

from morai_bridge.emu.sim import FIELD_DOCS, SimConfig

ROOT = helpers.ROOT


@pytest.mark.parametrize("field,value", [("step_s", 0.0155), ("ctrl_cmd_port", 70000),
                                         ("object_info_port", -1), ("ego_status_port", -2), ("ego_status_hz", -1.0),
                                         ("ego_status_data_length", 199), ("initial_gear", 7),
                                         ("wheelbase", 5.0), ("velocity_frame", "ego")])
def test_bad_config_is_refused_with_the_field_name(field, value):
    with pytest.raises(ValueError, match=field if field != "wheelbase" else "wheelbase"):
        SimConfig(**{field: value}).check()


def test_docs_list_every_option():
    text = open(os.path.join(ROOT, "docs", "emulator.md")).read()
    missing = [f for f in SimConfig._fields if f"`{f}`" not in text]
    assert not missing, "docs/emulator.md lacks: " + ", ".join(missing)
    assert set(FIELD_DOCS) == set(SimConfig._fields)


def test_port_and_rate_options_are_made_from_the_stream_rows():
    """A listening port per user -> simulator stream, a destination port per simulator -> user stream,
    and a rate per stream with an emu_hz, with the rows' defaults (the version's: -1)."""
    from morai_bridge.configuration import sim_versions
    from morai_bridge.configuration.params import FROM_VERSION
    from morai_bridge.emu.sim.config import LISTEN_PORTS, SEND_PORTS
    from morai_bridge.wire.udp import streams
    defaults = SimConfig()
    assert list(LISTEN_PORTS) == [s.name for s in streams.TO_SIM]
    assert list(SEND_PORTS) == [s.name for s in streams.FROM_SIM]
    for s in streams.STREAMS:
        versioned = s.name in sim_versions.VERSIONED_PORTS
        assert getattr(defaults, s.param) == (FROM_VERSION if versioned else s.port), s.name
        if s.emu_hz:
            assert getattr(defaults, s.name + "_hz") == s.emu_hz and FIELD_DOCS[s.name + "_hz"] == s.emu_hz_doc
        else:
            assert s.name + "_hz" not in FIELD_DOCS
    assert (defaults.ego_status_hz, defaults.traffic_light_hz, defaults.imu_hz) == (50.0, 10.0, 50.0)
