"""Where datagrams come from: a pcap/pcapng capture, or UDP ports bound live.

Both feed ``handle(ts, src, dst, payload)`` of a :class:`~.dumper.Dumper` and
stop at ``count`` datagrams or after ``duration`` seconds.  Stream names of
known ports come from :mod:`morai_bridge.wire.udp.streams`.  No ROS.
"""

import errno
import selectors
import socket
import time

from morai_bridge.configuration import sim_versions
from morai_bridge.link.transport import privileged, privileged_port_advice
from morai_bridge.wire.udp import streams
from morai_bridge.wire.capture import read_capture

from .dumper import PROG

__all__ = ["run_capture", "open_sockets", "run_listen", "port_names"]

_RECV_SIZE = 65536

#: Default port -> stream names (e.g. 909 -> 'ego_status'), from wire.streams.
_PORT_NAMES = {}
for _s in streams.STREAMS:
    _PORT_NAMES.setdefault(_s.port, []).append(_s.name)
for _name, _ports in sim_versions.port_table().items():       # the versions' own ports (911, 9297, ...)
    for _v, _p in _ports:
        if _p and _name not in _PORT_NAMES.setdefault(_p, []):
            _PORT_NAMES[_p].append(_name)
_PORT_NAMES.pop(0, None)
del _s, _name, _ports, _v, _p


def port_names(port) -> str:
    """' (ego_status)' when ``port`` is a stream's default port, else ''."""
    names = _PORT_NAMES.get(port)
    return f" ({'/'.join(names)})" if names else ""


def run_capture(path, dumper, *, ports=None, count=None, duration=None):
    """Feed a capture file to ``dumper``: the datagrams sent to ``ports`` (all if None).

    Returns (reader counts, filtered-out count, interrupted).  Raises CaptureError
    or OSError for a file that cannot be read.
    """
    # partial: a port-filtered capture's first fragments still show (TruncatedPayload)
    reader = read_capture(path, partial=True)
    wanted = set(ports) if ports else None
    limit = count
    end = None
    filtered = 0
    handle = dumper.handle
    try:
        for ts, src, dst, payload in reader:
            if duration is not None:
                if end is None:
                    end = ts + duration
                elif ts > end:
                    break
            if wanted is not None and dst[1] not in wanted:
                filtered += 1
                continue
            handle(ts, src, dst, payload)
            if limit is not None and dumper.datagrams >= limit:
                break
    except KeyboardInterrupt:
        return reader.counts, filtered, True
    return reader.counts, filtered, False


def open_sockets(bind_ip, ports):
    """One bound, non-blocking UDP socket per port; raises OSError naming the port."""
    socks = []
    try:
        for port in ports:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            socks.append(s)
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * 1024 * 1024)
            except OSError:
                pass
            try:
                s.bind((bind_ip, port))
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    why = "port already in use (is udp_bridge or another program bound to it?)"
                elif exc.errno == errno.EACCES and privileged(port):
                    why = privileged_port_advice(port, "--listen")
                elif exc.errno == errno.EADDRNOTAVAIL:
                    why = "address not available on this host"
                else:
                    why = exc.strerror or str(exc)
                raise OSError(exc.errno, f"cannot listen on UDP {bind_ip}:{port}: {why}") \
                    from None
            s.setblocking(False)
    except BaseException:
        for s in socks:
            s.close()
        raise
    return socks


def run_listen(bind_ip, ports, dumper, *, write_err, flush, count=None, duration=None):
    """Bind ``ports`` and feed what arrives to ``dumper`` until ``count``/``duration``/Ctrl-C.

    Returns True when interrupted by Ctrl-C.  Raises OSError (naming the port) when
    a port cannot be bound.
    """
    socks = open_sockets(bind_ip, ports)
    shown_ip = "*" if bind_ip == "0.0.0.0" else bind_ip
    write_err(f"{PROG}: listening on "
              + ", ".join(f"{bind_ip}:{p}{port_names(p)}" for p in ports)
              + (" (Ctrl-C to stop)" if not (count or duration) else "") + "\n")
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_READ, (shown_ip, s.getsockname()[1]))
    deadline = time.monotonic() + duration if duration else None
    limit = count
    handle = dumper.handle
    interrupted = False
    try:
        while True:
            timeout = None
            if deadline is not None:
                timeout = deadline - time.monotonic()
                if timeout <= 0:
                    break
            for key, _ in sel.select(timeout):
                sock, dst = key.fileobj, key.data
                while True:
                    try:
                        data, src = sock.recvfrom(_RECV_SIZE)
                    except (BlockingIOError, InterruptedError):
                        break
                    except ConnectionRefusedError:  # ICMP of an earlier send; not ours
                        continue
                    handle(time.time(), src, dst, data)
                    if limit is not None and dumper.datagrams >= limit:
                        return False
            flush()
    except KeyboardInterrupt:
        interrupted = True
    finally:
        sel.close()
        for s in socks:
            s.close()
    return interrupted
