"""UdpReceiver under a failing handler and injected faults, on real loopback UDP sockets."""
import socket
import threading
import time

import pytest

from morai_bridge.link.workers import RUNNING, STOPPED
from morai_bridge.link.transport import (TransportError, UdpReceiver, UdpSender, bind_udp, grow_receive_buffer,
                                         kernel_drops)

from helpers import Log, wait_for



class Handler:
    """Keeps what it got; raises for payloads starting with b'bad'."""

    def __init__(self):
        self.got = []
        self.lock = threading.Lock()

    def __call__(self, name, data, addr, t):
        if data.startswith(b'bad'):
            raise ValueError(f'cannot handle {data!r}')
        with self.lock:
            self.got.append((name, data))


@pytest.fixture
def receiver():
    made = []

    def factory(handler, allowed_ip='127.0.0.1', **kw):
        socks = {'a': bind_udp('127.0.0.1', 0, '~a_port'), 'b': bind_udp('127.0.0.1', 0, '~b_port')}
        ports = {n: s.getsockname()[1] for n, s in socks.items()}
        rx = UdpReceiver(socks, allowed_ip, handler, **kw)
        made.append(rx)
        return rx, ports

    yield factory
    for rx in made:
        rx.stop()


@pytest.fixture
def sender():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(('127.0.0.1', 0))
    yield s
    s.close()


def test_raising_handler_is_counted_per_stream_and_reception_goes_on(receiver, sender):
    h, log = Handler(), Log()
    rx, ports = receiver(h, log=log)
    rx.start()
    for i in range(60):
        sender.sendto(b'bad %d' % i if i % 3 == 0 else b'good %d' % i, ('127.0.0.1', ports['a']))
        sender.sendto(b'good b %d' % i, ('127.0.0.1', ports['b']))
        time.sleep(0.001)
    assert wait_for(lambda: len(h.got) == 100), len(h.got)
    a, b = rx.stats['a'], rx.stats['b']
    assert (a.received, a.handler_errors) == (60, 20)
    assert (b.received, b.handler_errors) == (60, 0)
    assert 'ValueError' in a.last_error and 'cannot handle' in a.last_error
    # the worker never noticed: handler errors are not worker failures
    w = rx.worker
    assert rx.workers == (w,)
    assert (w.state, w.errors, w.restarts) == (RUNNING, 0, 0)
    assert len(log.lines) == 1, 'handler errors are logged at most once per 5 s per stream'
    assert 'stream a' in log.lines[0] and 'Traceback' in log.lines[0] and 'cannot handle' in log.lines[0]


def test_injected_fault_restarts_the_receiver_which_keeps_receiving(receiver, sender):
    h, log = Handler(), Log()
    rx, ports = receiver(h, log=log)
    rx.start()
    sender.sendto(b'one', ('127.0.0.1', ports['a']))
    assert wait_for(lambda: len(h.got) == 1)
    rx.worker.inject(OSError('injected receiver fault'))
    assert wait_for(lambda: rx.worker.restarts == 1)
    for i in range(10):
        sender.sendto(b'after %d' % i, ('127.0.0.1', ports['b']))
    assert wait_for(lambda: len(h.got) == 11)
    assert rx.worker.state == RUNNING
    assert 'injected receiver fault' in log.lines[0] and 'Traceback' in log.lines[0]


def test_foreign_senders_still_dropped(receiver):
    h = Handler()
    rx, ports = receiver(h, allowed_ip='127.0.0.1')
    rx.start()
    other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        other.bind(('127.0.0.2', 0))
    except OSError:
        other.close()
        pytest.skip('127.0.0.2 is not usable here')
    try:
        for i in range(5):
            other.sendto(b'good foreign', ('127.0.0.1', ports['a']))
        assert wait_for(lambda: rx.stats['a'].foreign == 5)
    finally:
        other.close()
    assert h.got == [] and rx.stats['a'].received == 0


def test_poll_without_thread_also_survives_a_raising_handler(receiver, sender):
    h = Handler()
    rx, ports = receiver(h, log=Log())
    sender.sendto(b'bad', ('127.0.0.1', ports['a']))
    sender.sendto(b'good', ('127.0.0.1', ports['a']))
    end = time.monotonic() + 2.0
    while len(h.got) < 1 and time.monotonic() < end:
        rx.poll(0.05)
    assert h.got == [('a', b'good')] and rx.stats['a'].handler_errors == 1


def test_stop_ends_the_worker_and_closes_the_sockets(receiver):
    rx, _ = receiver(Handler())
    rx.start()
    rx.stop()
    assert rx.worker.state == STOPPED and not rx.worker.is_alive()
    assert all(s.fileno() == -1 for s in rx.sockets.values())


def test_idle_work_runs_once_the_sockets_are_drained(receiver, sender):
    """on_idle: after a round that received datagrams, never between two queued datagrams; its
    exceptions are counted like a handler's and reception goes on."""
    h, log = Handler(), Log()
    idle = []
    fail = [False]

    def on_idle():
        idle.append(len(h.got))
        if fail[0]:
            raise RuntimeError('idle work failed')
    rx, ports = receiver(h, log=log, on_idle=on_idle)
    for i in range(5):                             # queued before the first poll: one round reads them all
        sender.sendto(b'good %d' % i, ('127.0.0.1', ports['a']))
    end = time.monotonic() + 2.0
    while len(h.got) < 5 and time.monotonic() < end:
        rx.poll(0.05)
    assert len(h.got) == 5 and idle[0] == 5 and len(idle) <= 5 and all(n >= 1 for n in idle)
    rounds = len(idle)
    rx.poll(0.01)                                  # nothing arrived: no idle work
    assert len(idle) == rounds
    fail[0] = True
    sender.sendto(b'good again', ('127.0.0.1', ports['b']))
    end = time.monotonic() + 2.0
    while len(h.got) < 6 and time.monotonic() < end:
        rx.poll(0.05)
    assert len(idle) == rounds + 1 and rx.stats['b'].handler_errors == 1
    assert 'idle work raised RuntimeError' in rx.stats['b'].last_error
    assert 'idle work of stream b' in log.lines[-1] and 'Traceback' in log.lines[-1]


def test_receive_buffer_is_at_least_what_linux_allows(tmp_path):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        got = grow_receive_buffer(s, 1 << 20)
        assert got >= min(1 << 20, int(open('/proc/sys/net/core/rmem_max').read()) // 2) > 0
    finally:
        s.close()


@pytest.mark.parametrize('kw,named', [({}, '~bind_ip'), ({'ip_param': '--listen-ip'}, '--listen-ip')])
def test_an_address_not_on_this_machine_names_its_parameter(kw, named):
    """192.0.2.1 (TEST-NET-1, RFC 5737) is on no interface here: the error names the address
    parameter the user set, not a generic 'bind address'."""
    with pytest.raises(TransportError) as e:
        bind_udp('192.0.2.1', 0, '~ego_status_port', **kw)
    assert str(e.value) == f'~ego_status_port: address 192.0.2.1 is not on this machine (check {named})'


def test_bytes_and_the_largest_backlog_are_counted(receiver, sender):
    """StreamStats.bytes: the payload received; peak_backlog: the most read in one round before the
    socket was empty (what waited in the kernel's buffer), what BufferUse compares with the buffer."""
    h = Handler()
    rx, ports = receiver(h)
    for n in (100, 200, 300):                     # queued before the first poll: one backlog of 600 bytes
        sender.sendto(b'x' * n, ('127.0.0.1', ports['a']))
    time.sleep(0.05)
    rx.poll(0.5)
    assert (rx.stats['a'].bytes, rx.stats['a'].peak_backlog) == (600, 600)
    sender.sendto(b'y' * 50, ('127.0.0.1', ports['a']))
    end = time.monotonic() + 2.0
    while len(h.got) < 4 and time.monotonic() < end:
        rx.poll(0.05)
    assert (rx.stats['a'].bytes, rx.stats['a'].peak_backlog, rx.stats['b'].bytes) == (650, 600, 0)


def test_kernel_drops_counts_what_a_full_buffer_lost(sender):
    """kernel_drops reads the drops column of /proc/net/udp for this very socket: 0 while nothing was
    lost, then the datagrams sent into a full buffer that nobody read."""
    s = bind_udp('127.0.0.1', 0, '~port', rcvbuf=4096)
    try:
        assert kernel_drops(s) == 0
        port = s.getsockname()[1]
        for _ in range(200):
            sender.sendto(b'z' * 1000, ('127.0.0.1', port))
        dropped = kernel_drops(s)
        queued = 0
        while True:
            try:
                s.recv(65535)
                queued += 1
            except BlockingIOError:
                break
        assert dropped > 0 and queued + dropped == 200, (queued, dropped)
    finally:
        s.close()
    assert kernel_drops(s) is None                  # closed: nothing to read


def test_a_sender_closed_while_others_send_fails_quietly():
    """UdpSender.send after close (a subscriber thread while the node shuts down): False, not an error."""
    tx = UdpSender('127.0.0.1', '127.0.0.1')
    assert tx.send(9, b'x')
    tx.close()
    assert tx.send(9, b'x') is False
    assert (tx.sent, tx.errors, tx.last_error) == (1, 0, '')
