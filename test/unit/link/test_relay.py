"""The impairing UDP relay (link/relay.py) on real loopback sockets: what arrives is what its counters say."""
import socket
import struct
import threading
import time

import pytest

from morai_bridge.link.relay import NONE, Impairment, Relay, Route


def run(impairment, n=400, gap_s=0.001, seed=3, tap=None):
    """Send n numbered datagrams through one route; (numbers received in order of arrival, counters)."""
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(('127.0.0.1', 0))
    sink.settimeout(2.0)        # the reader stops 2 s after the last datagram: room for a busy machine
    src = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    got = []

    def read():             # as it arrives: a socket buffer holds only a few hundred small datagrams
        try:
            while True:
                got.append(struct.unpack('<I', sink.recv(64))[0])
        except socket.timeout:
            pass
    with Relay([Route('s', 0, sink.getsockname(), impairment)], seed=seed, tap=tap) as relay:
        reader = threading.Thread(target=read)
        reader.start()
        port = relay.ports['s']
        for i in range(n):
            src.sendto(struct.pack('<I', i), ('127.0.0.1', port))
            time.sleep(gap_s)
        reader.join()
        counts = relay.report()['s']
    sink.close()
    src.close()
    return got, counts


def test_without_impairment_everything_arrives_once_in_order():
    got, c = run(NONE, n=200)
    assert got == list(range(200))
    assert (c['received'], c['sent'], c['dropped'], c['reordered'], c['duplicated']) == (200, 200, 0, 0, 0)


def test_loss_drops_what_the_counters_say():
    got, c = run(Impairment(loss=0.2))
    assert c['received'] == 400 and len(got) == c['sent'] == 400 - c['dropped']
    assert 40 < c['dropped'] < 130
    assert got == sorted(got)


def test_burst_loss_drops_runs():
    got, c = run(Impairment(loss=0.05, burst_loss=1.0, burst_len=5.0))
    missing = sorted(set(range(400)) - set(got))
    runs = sum(1 for i, m in enumerate(missing) if i == 0 or missing[i - 1] != m - 1)
    assert c['dropped'] == len(missing) and runs < len(missing) / 2, (runs, len(missing))


def test_reordering_is_counted_as_it_arrives():
    got, c = run(Impairment(reorder=0.1, reorder_ms=(5.0, 10.0)), gap_s=0.001)
    overtaken = sum(1 for i, x in enumerate(got) if i and x < max(got[:i]))
    assert sorted(got) == list(range(400))
    assert c['reordered'] == overtaken > 10


def test_jitter_keeps_the_order():
    got, c = run(Impairment(jitter_ms=10.0), n=300, gap_s=0.0005)
    assert got == list(range(300)) and c['reordered'] == 0


def test_the_tap_sees_what_came_in_and_what_went_out():
    seen = {'in': [], 'out': []}
    got, c = run(Impairment(loss=0.2, duplicate=0.1), n=200,
                 tap=lambda direction, name, data: seen[direction].append(struct.unpack('<I', data)[0]))
    assert seen['in'] == list(range(200))
    assert seen['out'] == got and len(got) == c['sent']


def test_duplicates_arrive_twice():
    got, c = run(Impairment(duplicate=0.1))
    assert len(got) == 400 + c['duplicated'] and c['duplicated'] > 10
    assert len(set(got)) == 400


def test_the_same_seed_makes_the_same_decisions():
    a = run(Impairment(loss=0.1), n=200, seed=7)[1]['dropped']
    b = run(Impairment(loss=0.1), n=200, seed=7)[1]['dropped']
    assert a == b


def test_a_port_in_use_is_a_clear_error():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(('127.0.0.1', 0))
    with pytest.raises(OSError, match='relay: cannot listen on port %d for s' % s.getsockname()[1]):
        Relay([Route('s', s.getsockname()[1], ('127.0.0.1', 9))])
    s.close()
