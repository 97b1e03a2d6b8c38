"""Test harness shared by the udp_bridge rostests: a fake simulator made of plain
sockets on 127.0.0.1, and a subscriber that waits for matching messages."""
import os
import socket
import sys
import threading
import time
from xmlrpc.client import ServerProxy

import rosgraph
import rospy

from morai_bridge.wire.udp import streams
from morai_bridge.wire import udp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), '..', 'unit'))
from helpers import free_port, free_ports, wait_for  # noqa: E402,F401  (no ROS: shared with the unit tests)

# every stream, the emulator's sync extension included (the bridge is started with emulator_sync:=true)
RX = [s.name for s in streams.FROM_SIM]
TX = [s.name for s in streams.TO_SIM]
LAUNCH = os.path.join(os.path.dirname(os.path.realpath(__file__)), '..', '..', 'launch', 'udp_bridge.launch')
TIMEOUT = 10.0


class FakeSim:
    """The simulator side: one sender socket, one bound socket per command port."""

    def __init__(self):
        self.tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.tx.bind(('127.0.0.1', 0))
        self.rx_ports = {n: free_port() for n in RX}      # the bridge binds these
        self.cmd = {}
        for n in TX:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(('127.0.0.1', 0))
            s.settimeout(TIMEOUT)
            self.cmd[n] = s

    def args(self):
        a = ['%s_port:=%d' % (n, p) for n, p in self.rx_ports.items()]
        a += ['%s_port:=%d' % (n, s.getsockname()[1]) for n, s in self.cmd.items()]
        a.append('emulator_sync:=true')
        return a

    def send(self, stream, message_or_bytes):
        data = message_or_bytes if isinstance(message_or_bytes, bytes) else udp.encode(message_or_bytes)
        self.tx.sendto(data, ('127.0.0.1', self.rx_ports[stream]))

    def drain(self, stream):
        s = self.cmd[stream]
        s.setblocking(False)
        try:
            while True:
                s.recv(65535)
        except BlockingIOError:
            pass
        finally:
            s.settimeout(TIMEOUT)

    def recv(self, stream, timeout=TIMEOUT):
        s = self.cmd[stream]
        s.settimeout(timeout)
        data, addr = s.recvfrom(65535)
        return udp.decode(data)


class Waiter:
    """Subscribe and wait for a message satisfying a predicate."""

    def __init__(self, topic, cls):
        self.cond = threading.Condition()
        self.msgs = []
        self.sub = rospy.Subscriber(topic, cls, self._cb, queue_size=100)
        end = time.monotonic() + TIMEOUT
        while self.sub.get_num_connections() < 1 and time.monotonic() < end:
            time.sleep(0.02)
        publisher_side(topic, end - time.monotonic())

    def _cb(self, m):
        with self.cond:
            self.msgs.append(m)
            self.cond.notify_all()

    def until(self, send, pred=lambda m: True, timeout=TIMEOUT, every=0.3):
        """Call send() every `every` seconds until a message satisfying pred arrives.

        A subscriber can count a connection a moment before the publisher side
        has registered it; resending makes one-shot checks independent of that."""
        end = time.monotonic() + timeout
        while True:
            send()
            m = self.wait(pred, timeout=min(every, max(0.0, end - time.monotonic())))
            if m is not None or time.monotonic() >= end:
                return m

    def wait(self, pred=lambda m: True, timeout=TIMEOUT, start=0):
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for m in self.msgs[start:]:
                    if pred(m):
                        return m
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)


def publisher_side(topic, timeout=TIMEOUT):
    """Wait until every publisher of ``topic`` lists its connection to this node (its getBusInfo), so
    that the next message it publishes reaches us: the subscriber counts a connection a moment before
    the publisher adds it.  A bridge publishes a sample once (the newest-sample rule: a resent
    datagram is a duplicate), so a one-shot check must not send before.  False on timeout."""
    me = rospy.get_name()
    topic = rospy.resolve_name(topic)
    master = rosgraph.Master(me)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            nodes = [n for t, ns in master.getSystemState()[0] if t == topic for n in ns]
            infos = [ServerProxy(master.lookupNode(n)).getBusInfo(me)[2] for n in nodes]
        except Exception:        # a node going away between the two calls: ask again
            infos = []
        if nodes and infos and all(any(c[1] == me and c[2] == 'o' and c[4] == topic for c in info)
                                   for info in infos):
            return True
        time.sleep(0.05)
    return False


def wait_for_subscribers(topic_pub, n=1, timeout=TIMEOUT):
    end = time.monotonic() + timeout
    while topic_pub.get_num_connections() < n and time.monotonic() < end:
        time.sleep(0.05)


class Latest:
    """The newest message of ``topic`` and how many came; :meth:`wait` for one that satisfies a predicate."""

    def __init__(self, topic, cls, timeout=10.0, queue_size=100):
        self.msg = None
        self.count = 0
        self.timeout = timeout
        self.cond = threading.Condition()
        self.sub = rospy.Subscriber(topic, cls, self._cb, queue_size=queue_size)

    def _cb(self, m):
        with self.cond:
            self.msg = m
            self.count += 1
            self.cond.notify_all()

    def wait(self, pred=lambda m: True, timeout=None, during=None):
        """The latest message once it satisfies ``pred`` (None after ``timeout``, default the one given at
        construction); ``during()``, if given, is called every 50 ms meanwhile."""
        end = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            if during is not None:
                during()
            with self.cond:
                if self.msg is not None and pred(self.msg):
                    return self.msg
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(min(left, 0.05) if during is not None else left)


class Collector:
    """Every message of ``topic``, in order (large buffers: clouds and images)."""

    def __init__(self, topic, cls, queue_size=100):
        self.lock = threading.Lock()
        self.msgs = []
        self.sub = rospy.Subscriber(topic, cls, self._cb, queue_size=queue_size, buff_size=1 << 24)

    def _cb(self, m):
        with self.lock:
            self.msgs.append(m)

    def first(self):
        with self.lock:
            return self.msgs[0] if self.msgs else None

    def count(self):
        with self.lock:
            return len(self.msgs)

    def since(self, n):
        with self.lock:
            return list(self.msgs[n:])

    def connected(self):
        return self.sub.get_num_connections() > 0

    def close(self):
        self.sub.unregister()
