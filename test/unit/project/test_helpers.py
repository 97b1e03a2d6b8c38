"""helpers.free_ports: the ports tests give the nodes they start."""
import socket

from helpers import _ephemeral_low, free_port, free_ports


def test_a_port_is_never_handed_out_twice_in_one_process():
    # 1500 single picks in ~22 000 ports repeat one almost surely (birthday bound) unless excluded
    ports = [free_port() for _ in range(1000)] + free_ports(500)
    assert len(set(ports)) == len(ports)


def test_ports_are_below_the_ephemeral_range_and_bindable():
    low = _ephemeral_low()
    ports = free_ports(8)
    assert len(set(ports)) == 8
    for p in ports:
        if low - 10000 >= 1032:
            assert 10000 <= p < low
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(('127.0.0.1', p))
        s.close()
