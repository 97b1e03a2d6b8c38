"""What a normal user sees when a port below 1024 is refused: every tool that binds a port says
what to do (move the port, with the matching argument; or lower the sysctl, with the file that
keeps it; not setcap).  Run by the nonroot layer (test/nonroot/nonroot_check.py) as an
unprivileged user, which tools/run_tests.py makes of root by dropping privileges."""
import collections
import io
import os
import socket

import pytest

from morai_bridge.dump import udp_dump_cli as dump_cli
from morai_bridge.link import transport
from morai_bridge.selftest import check_signs_cli as signs_cli

PORT = 909      # MORAI's ego status port
pytestmark = pytest.mark.skipif(
    os.geteuid() == 0 or transport.unprivileged_port_start() <= PORT,
    reason='needs a user who may not bind port %d (uid %d, net.ipv4.ip_unprivileged_port_start = %d); the '
           'nonroot layer runs this file as one' % (PORT, os.geteuid(), transport.unprivileged_port_start()))


def assert_advice(text, option):
    assert 'only root may bind UDP port %d' % PORT in text, text
    assert option in text, text
    assert 'sudo sysctl -w net.ipv4.ip_unprivileged_port_start=%d' % PORT in text, text
    assert transport.SYSCTL_FILE in text, text
    assert 'setcap' in text, text


def test_the_bridge_names_its_roslaunch_argument():
    with pytest.raises(transport.TransportError) as e:
        transport.bind_udp('127.0.0.1', PORT, '~ego_status_port')
    assert str(e.value).startswith('~ego_status_port=909: ')
    assert_advice(str(e.value), 'ego_status_port:=1909')


def test_the_sensor_bridges_name_their_port_argument():
    cfg = collections.namedtuple('Cfg', 'sim_ip bind_ip port socket_buffer')('127.0.0.1', '127.0.0.1', PORT, 1 << 16)
    with pytest.raises(transport.TransportError) as e:
        transport.ReceivePort(cfg, 'camera', lambda *a: None)
    assert_advice(str(e.value), 'port:=1909')


def test_morai_udp_dump_names_its_option():
    out, err = io.StringIO(), io.StringIO()
    old = dump_cli.sys.stdout, dump_cli.sys.stderr
    dump_cli.sys.stdout, dump_cli.sys.stderr = out, err
    try:
        code = dump_cli.main(['--listen', str(PORT), '--count', '1'])
    finally:
        dump_cli.sys.stdout, dump_cli.sys.stderr = old
    assert code == dump_cli.EXIT_USAGE
    assert_advice(err.getvalue(), '--listen 1909')


def test_morai_check_signs_names_its_option(capsys):
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)     # where the tool's stop command goes
    sink.bind(('127.0.0.1', 0))
    code = signs_cli.main(['--status-port', str(PORT), '--yes', '--ctrl-port', str(sink.getsockname()[1])],
                          stdin=io.StringIO(),
                          stdout=io.StringIO())
    assert code == signs_cli.EXIT_REFUSED
    assert_advice(capsys.readouterr().err, '--status-port 1909')
    sink.close()


def test_a_serial_device_the_user_may_not_open_says_which_group_to_join():
    """The ERP-42 driver's open of a device without the user's permission (a pty made unreadable
    here; /dev/ttyUSB0 of group dialout on a real PC): the outage text names the group to join."""
    import pty
    import serial
    from morai_bridge.link.serial_port import permission_advice
    master, slave = pty.openpty()
    path = os.ttyname(slave)
    try:
        os.chmod(path, 0)
        with pytest.raises(serial.SerialException) as e:
            serial.Serial(path, 115200)
        advice = permission_advice(path, e.value)
        assert 'sudo usermod -aG ' in advice and 'log out and in' in advice, advice
        assert permission_advice(path, serial.SerialException('device reports readiness')) == ''
    finally:
        os.close(slave)
        os.close(master)
