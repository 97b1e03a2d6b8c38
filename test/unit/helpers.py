"""Small helpers shared by the unit tests (conftest.py puts test/unit on sys.path; test/ros/harness.py
puts it there for the rostests)."""
import json
import os
import random
import socket
import threading
import time

#: the repository (the package's source tree), wherever the test file that asks sits below test/unit
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_vectors(name):
    """The shared test vectors ``test/data/<name>_vectors.json`` (name 'udp' or 'erp42'), parsed
    afresh (callers may change what they get)."""
    with open(os.path.join(ROOT, 'test', 'data', name + '_vectors.json'), encoding='utf-8') as f:
        return json.load(f)


def wait_for(pred, timeout=3.0, step=0.005):
    """True as soon as pred() is; after ``timeout`` seconds, pred()'s last answer."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


class Log:
    """A log callable that keeps the lines it was given."""

    def __init__(self):
        self.lines = []
        self.lock = threading.Lock()

    def __call__(self, text):
        with self.lock:
            self.lines.append(text)


def _ephemeral_low():
    """The lowest port the kernel hands out for a bind to port 0 (ip_local_port_range)."""
    try:
        with open('/proc/sys/net/ipv4/ip_local_port_range') as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


_GIVEN = set()        # every port free_ports returned in this process
_GIVEN_LOCK = threading.Lock()


def free_ports(n):
    """n distinct free UDP ports on 127.0.0.1, for a node to bind.

    They are picked below the kernel's ephemeral range, so that no bind to port 0 (the
    test's own senders, the nodes' command sockets, another suite running at the same
    time) can be handed one of them between this pick and the node's bind; each is
    checked free by binding it (all n held together, then released).  Falls back to
    ports the kernel picks when the ephemeral range leaves no room below it.

    A port is never handed out twice in one process: a test that picks ports for two nodes
    (or one at a time) before either binds would otherwise get the same port twice now and
    then (20 picks in 22 000 ports: about 1 run in 100), and one node would stop with "port
    already in use"."""
    low = _ephemeral_low()
    tries = 20 * n + 200 if low - 10000 >= 4 * n + 1000 else 0
    socks = []
    try:
        for _ in range(tries):
            if len(socks) == n:
                break
            port = random.randrange(10000, low)
            if port in _GIVEN:        # (a port of this call is held bound: its bind fails below)
                continue
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                s.bind(('127.0.0.1', port))
            except OSError:
                s.close()
                continue
            socks.append(s)
        while len(socks) < n:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(('127.0.0.1', 0))
            socks.append(s)
        ports = [s.getsockname()[1] for s in socks]
        with _GIVEN_LOCK:
            _GIVEN.update(ports)
        return ports
    finally:
        for s in socks:
            s.close()


def free_port():
    """One port as :func:`free_ports` picks them."""
    return free_ports(1)[0]
