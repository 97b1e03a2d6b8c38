"""The user side of the simulator emulator's tests: a receiver of every stream, a client of its
command ports, and the config that points them at each other (test/unit/emu/, test/unit/project/)."""
import socket

from morai_bridge.emu.sim import LISTEN_PORTS, SEND_PORTS, SimConfig
from morai_bridge.wire.udp import lockstep
from morai_bridge.wire import udp

STEP = 0.02


class Receiver:
    """The user side: one socket that every emulator stream is sent to."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]

    def raw(self, timeout=0.05):
        """Every datagram that arrives until the socket is quiet for ``timeout`` s."""
        out = []
        self.sock.settimeout(timeout)
        try:
            while True:
                out.append(self.sock.recv(65535))
        except socket.timeout:
            pass
        return out

    def messages(self, cls=None, timeout=0.05):
        msgs = [udp.decode(d) if d[:4] != b"#Emu" else lockstep.decode(d)
                for d in self.raw(timeout)]
        return [m for m in msgs if cls is None or isinstance(m, cls)]

    def close(self):
        self.sock.close()


class Client:
    """Sends user -> simulator commands to the emulator's bound ports."""

    def __init__(self, sim):
        self.sim = sim
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def send_raw(self, port_name, data):
        self.sock.sendto(data, ("127.0.0.1", self.sim.ports[port_name]))

    def send(self, port_name, msg, wait=True):
        """Send and (without the emulator thread) wait until the emulator has handled it."""
        before = self.sim.snapshot().counters[port_name].received
        codec = lockstep if port_name == "sync" else udp
        self.send_raw(port_name, codec.encode(msg))
        if wait:
            assert self.sim.wait_for(
                lambda s: s.counters[port_name].received > before, 2.0), "not received"

    def ctrl(self, **fields):
        fields.setdefault("ctrl_mode", 2)
        fields.setdefault("gear", 4)
        self.send("ctrl_cmd", udp.make(udp.EgoCtrlCmd, **fields))

    def close(self):
        self.sock.close()


def sim_config(rx_port, only=None, **overrides):
    """Every listening port ephemeral; every stream (or those in ``only``) to ``rx_port``."""
    kw = {field: -1 for field, _, _ in LISTEN_PORTS.values()}
    for name, (field, _, _) in SEND_PORTS.items():
        kw[field] = rx_port if only is None or name in only else 0
    kw.update(deterministic=True)
    kw.update(overrides)
    return SimConfig(**kw)


def scenario_load(name, **flags):
    """A Scenario Load of scenario ``name``: everything loaded, not paused, unless ``flags`` say otherwise."""
    fields = dict(delete_all=True, load_ego=True, load_npc=True, load_pedestrian=True,
                  load_object=True, set_pause=False)
    fields.update(flags)
    return udp.make(udp.ScenarioLoad, file_name=name, **fields)
