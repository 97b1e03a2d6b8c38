"""A user-space UDP relay that impairs the link like a busy switch or Wi-Fi: loss (independent or in
bursts), reordering, duplication, delay and jitter, per stream and seeded (no ROS, no root: this
kernel's netem is not needed).

Each :class:`Route` listens on one port and forwards every datagram it receives to one destination,
through its :class:`Impairment`.  One thread (a supervised :class:`~morai_bridge.link.workers.Worker`)
reads every listening socket and sends what is due; a datagram held back (delay, jitter, reordering)
waits in a heap ordered by its release time.  Jitter keeps a route's order (a datagram never leaves
before the one that came in before it, as in a queue whose wait varies); only ``reorder`` holds one
datagram back so that the later ones overtake it: that is what reordering means here.

Per route it counts what came in, what was dropped, reordered (sent after a datagram that came in
later), duplicated and sent: :meth:`Relay.report`.  ``tap(direction, route name, data)``, when given,
sees every datagram as it came in (``'in'``, before any impairment) and as it is sent (``'out'``):
the tests compare what the sender sent with what the receiver made of it.  Used by ``tools/udp_relay.py`` (between a
simulator and a bridge on two PCs, or the emulator and the bridge on one) and by the tests.
"""
import heapq
import random
import selectors
import socket
import threading
import time
from typing import NamedTuple

from morai_bridge.link.workers import Worker

__all__ = ['Impairment', 'Route', 'RouteCounts', 'Relay', 'NONE']


class Impairment(NamedTuple):
    loss: float = 0.0              # probability a datagram is dropped (outside a burst)
    burst_loss: float = 0.0        # probability a loss starts a burst...
    burst_len: float = 0.0         # ...of this many more datagrams on average (geometric)
    reorder: float = 0.0           # probability a datagram is held back by reorder_ms
    reorder_ms: tuple = (20.0, 40.0)
    duplicate: float = 0.0         # probability a datagram is sent twice (the copy 0-1 ms later)
    delay_ms: float = 0.0          # every datagram's base delay
    jitter_ms: float = 0.0         # plus uniformly 0..jitter_ms (keeping the route's order)


NONE = Impairment()


class Route(NamedTuple):
    name: str
    listen_port: int               # 0: any free port (see Relay.ports)
    dest: tuple                    # (host, port)
    impairment: Impairment = NONE


class RouteCounts:
    __slots__ = ('received', 'dropped', 'reordered', 'duplicated', 'sent', 'send_errors', 'bytes')

    def __init__(self):
        for k in self.__slots__:
            setattr(self, k, 0)

    def as_dict(self):
        return {k: getattr(self, k) for k in self.__slots__}


class Relay:
    """Forward and impair the datagrams of ``routes`` (see the module docstring); ``seed`` makes every
    decision repeatable for the same arrival order."""

    def __init__(self, routes, bind_ip='127.0.0.1', seed=0, log=None, on_dead=None, tap=None):
        self.routes = list(routes)
        self.tap = tap
        self.rng = random.Random(seed)
        self.counts = {r.name: RouteCounts() for r in self.routes}
        self._sel = selectors.DefaultSelector()
        self._out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._heap = []                    # (release time, arrival seq, route name, data)
        self._seq = 0
        self._last_sent_seq = {r.name: -1 for r in self.routes}
        self._in_burst = {r.name: 0 for r in self.routes}
        self._release = {r.name: 0.0 for r in self.routes}    # release time of the last datagram in order
        self._lock = threading.Lock()
        self.ports = {}
        try:
            for r in self.routes:
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 21)
                s.bind((bind_ip, r.listen_port))
                s.setblocking(False)
                self.ports[r.name] = s.getsockname()[1]
                self._sel.register(s, selectors.EVENT_READ, r)
        except OSError as e:
            self.close()
            raise OSError(f'relay: cannot listen on port {r.listen_port} for {r.name}: {e}') from None
        self.worker = Worker('relay', self._poll, log=log, on_dead=on_dead)

    def start(self):
        self.worker.start()
        return self

    def close(self):
        if getattr(self, 'worker', None) is not None:
            self.worker.stop()
        for key in list(self._sel.get_map().values()):
            self._sel.unregister(key.fileobj)
            key.fileobj.close()
        self._sel.close()
        self._out.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------ the decisions (one datagram)

    def _plan(self, r, now):
        """Release times of the copies of one datagram of route ``r`` ([] = dropped)."""
        imp, rng = r.impairment, self.rng
        if self._in_burst[r.name] > 0:
            self._in_burst[r.name] -= 1
            return []
        if imp.loss and rng.random() < imp.loss:
            if imp.burst_loss and imp.burst_len > 0 and rng.random() < imp.burst_loss:
                # geometric burst length with mean burst_len
                p = 1.0 / (1.0 + imp.burst_len)
                n = 0
                while rng.random() > p:
                    n += 1
                self._in_burst[r.name] = n
            return []
        t = now + (imp.delay_ms + (rng.uniform(0.0, imp.jitter_ms) if imp.jitter_ms else 0.0)) / 1000.0
        if imp.reorder and rng.random() < imp.reorder:
            t += rng.uniform(*imp.reorder_ms) / 1000.0
        else:
            t = self._release[r.name] = max(t, self._release[r.name])
        out = [t]
        if imp.duplicate and rng.random() < imp.duplicate:
            out.append(t + rng.uniform(0.0, 0.001))
        return out

    # ------------------------------------------------------------ the thread

    def _poll(self):
        with self._lock:
            timeout = max(0.0, self._heap[0][0] - time.monotonic()) if self._heap else 0.05
        for key, _ in self._sel.select(min(timeout, 0.05)):
            r = key.data
            while True:
                try:
                    data = key.fileobj.recv(65535)
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:
                    break
                now = time.monotonic()
                c = self.counts[r.name]
                c.received += 1
                c.bytes += len(data)
                if self.tap is not None:
                    self.tap('in', r.name, data)
                with self._lock:
                    times = self._plan(r, now)
                    if not times:
                        c.dropped += 1
                    if len(times) > 1:
                        c.duplicated += 1
                    for t in times:
                        heapq.heappush(self._heap, (t, self._seq, r.name, r.dest, data))
                    self._seq += 1
        self._send_due()

    def _send_due(self):
        now = time.monotonic()
        while True:
            with self._lock:
                if not self._heap or self._heap[0][0] > now:
                    return
                _, seq, name, dest, data = heapq.heappop(self._heap)
                c = self.counts[name]
                if seq < self._last_sent_seq[name]:
                    c.reordered += 1
                self._last_sent_seq[name] = max(self._last_sent_seq[name], seq)
            try:
                self._out.sendto(data, dest)
                c.sent += 1
                if self.tap is not None:
                    self.tap('out', name, data)
            except OSError:
                c.send_errors += 1

    def report(self):
        """route name -> its counters (a dict), plus the listening port."""
        return {r.name: dict(self.counts[r.name].as_dict(), port=self.ports.get(r.name)) for r in self.routes}
