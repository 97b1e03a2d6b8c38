"""Where morai_field_report listens and what it hears: the ports of the version profiles
(:func:`profile_ports`) or of MORAI SIM's saved settings (:func:`settings_ports`), and the datagrams
that arrive there for a while (:func:`listen`).  No ROS.
"""
import selectors
import time

from morai_bridge.configuration import sim_versions
from morai_bridge.wire.udp import streams

from .sources import open_sockets

__all__ = ["listen", "profile_ports", "settings_ports"]


def listen(bind_ip, ports, seconds, max_datagrams, clock=time.time):
    """Datagrams on ``ports`` for ``seconds`` (or ``max_datagrams``): (records, bound ports,
    {port: why it could not be bound})."""
    socks, refused = [], {}
    for port in ports:
        try:
            socks += open_sockets(bind_ip, [port])
        except OSError as e:
            refused[port] = e.strerror or str(e)
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_READ, s.getsockname())
    records = []
    end = time.monotonic() + seconds
    try:
        while len(records) < max_datagrams:
            left = end - time.monotonic()
            if left <= 0:
                break
            for key, _ in sel.select(left):
                while len(records) < max_datagrams:
                    try:
                        data, src = key.fileobj.recvfrom(65536)
                    except (BlockingIOError, InterruptedError):
                        break
                    except ConnectionRefusedError:
                        continue
                    records.append((clock(), src, key.data, data))
    finally:
        sel.close()
        for s in socks:
            s.close()
    return records, sorted(s for s in ports if s not in refused), refused


def profile_ports(version_names, offset=0, search_dir=None):
    """Every sim -> user port of the given profiles (the emulator's sync extension aside)."""
    ports = set()
    for name in version_names:
        v = sim_versions.load_version(name, search_dir)
        for s in streams.FROM_SIM:
            if s.extension:
                continue
            p = v.port(s.name) if s.name in sim_versions.VERSIONED_PORTS else s.port
            if p:
                ports.add(p + offset)
    return sorted(ports)


def settings_ports(sensor_file=None, network_file=None):
    """(ports, {port: sensor kind}, warnings) of MORAI's saved settings: the destination port of
    every stream the network file has the simulator send over UDP, and of every sensor sent over UDP."""
    from morai_bridge.configuration import sim_settings_files
    ports, sensors, warnings = set(), {}, []
    if network_file:
        net = sim_settings_files.load_network(network_file)
        warnings += net.warnings
        rx = {s.name for s in streams.FROM_SIM}
        ports |= {e.port for e in net.entries if e.stream in rx and e.port}
    if sensor_file:
        sen = sim_settings_files.load_sensors(sensor_file)
        warnings += sen.warnings
        for s in sen.sensors:
            if s.udp and s.dest_port:
                ports.add(s.dest_port)
                if s.kind in ("camera", "lidar", "lidar2d"):
                    sensors[s.dest_port] = s.kind
    return sorted(ports), sensors, warnings
