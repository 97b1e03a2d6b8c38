"""Fixtures of the simulator emulator's tests: ``rx`` (a :class:`sim_peers.Receiver`) and
``make_sim`` (emulators sending to it, each with a :class:`sim_peers.Client`, closed afterwards)."""
import pytest

from morai_bridge.emu.sim import SimEmulator
from sim_peers import Client, Receiver, sim_config


@pytest.fixture
def rx():
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def make_sim(rx):
    made = []

    def make(only=("ego_status",), **overrides):
        sim = SimEmulator(sim_config(rx.port, only, **overrides))
        client = Client(sim)
        made.append((sim, client))
        return sim, client

    yield make
    for sim, client in made:
        client.close()
        sim.close()
