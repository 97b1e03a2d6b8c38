"""Ports below 1024 (issue 31): the shift the demo's two ends share, and the advice a normal user
gets when such a port is refused (the refusal itself is tested as a normal user in test/nonroot)."""
import glob
import os
import xml.etree.ElementTree as ET

import pytest

import helpers
from morai_bridge.emu.sim import SimEmulator
from morai_bridge.emu.sim.config import LISTEN_PORTS, SEND_PORTS, SimConfig
from morai_bridge.link import transport
from morai_bridge.nodes import udp_bridge
from morai_bridge.ros.package_config import apply_sim_version
from morai_bridge.ros.params import load

ROOT = helpers.ROOT
VERSIONS = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(ROOT, 'config', 'sim_versions', '*.yaml')))


@pytest.mark.parametrize('port,offset,moved', [
    (909, 1000, 1909), (911, 1000, 1911), (1023, 1000, 2023), (1, 1000, 1001),
    (1024, 1000, 1024), (9093, 1000, 9093), (0, 1000, 0), (-1, 1000, -1), (909, 0, 909)])
def test_only_ports_a_normal_user_may_not_bind_move(port, offset, moved):
    assert transport.shift_privileged(port, offset) == moved


def test_the_advice_names_the_argument_the_sysctl_its_file_and_the_trap():
    text = transport.privileged_port_advice(909, '~ego_status_port')
    assert 'only root may bind UDP port 909' in text
    assert 'destination port to 1909 and pass ego_status_port:=1909' in text
    assert 'sudo sysctl -w net.ipv4.ip_unprivileged_port_start=909' in text
    assert 'echo net.ipv4.ip_unprivileged_port_start=909 | sudo tee /etc/sysctl.d/' in text
    assert 'Do not setcap' in text
    # a command-line option is written as one; a port below MORAI's lowest asks for a lower start
    assert 'pass --status-port 1911' in transport.privileged_port_advice(911, '--status-port')
    assert 'ip_unprivileged_port_start=909' in transport.privileged_port_advice(911, '--status-port')
    assert 'ip_unprivileged_port_start=80 ' in transport.privileged_port_advice(80, '~port')


def bridge_ports(version, offset):
    values = {'sim_version': version, 'privileged_port_offset': offset}
    cfg, _ = apply_sim_version(load(udp_bridge.PARAMS, getter=lambda n, d: values.get(n, d)))
    return {k: v for k, v in cfg.items() if k.endswith('_port')}


@pytest.mark.parametrize('version', VERSIONS)
def test_emulator_and_bridge_agree_on_every_port_with_the_same_offset(version):
    """The demo gives both ends one privileged_port_offset: every stream's port must come out the
    same at both ends, and none below 1024."""
    bridge = bridge_ports(version, 1000)
    # the emulator's listening ports must not collide with other tests: check its resolution of
    # them on the config, and build a real emulator with them ephemeral for the destinations
    sim = SimEmulator(SimConfig(sim_version=version, privileged_port_offset=1000,
                                **{f: -1 for f, _, _ in LISTEN_PORTS.values()}))
    try:
        emu = {f: getattr(sim.config, f) for f, _, _ in SEND_PORTS.values()}
    finally:
        sim.close()
    for name, (field, _, _) in SEND_PORTS.items():
        assert emu[field] == bridge[name + '_port'], (version, name)
    low = {k: v for k, v in bridge.items() if 0 < v < 1024}
    assert not low, low
    # without the offset the version's own ports come back (909 or 911 for the status)
    assert bridge_ports(version, 0)['ego_status_port'] in (909, 911)


def test_the_demo_gives_both_ends_the_same_offset_and_a_user_port():
    root = ET.parse(os.path.join(ROOT, 'launch', 'demo.launch')).getroot()
    default = [a.get('default') for a in root.findall('arg') if a.get('name') == 'privileged_port_offset']
    assert default == ['1000']
    passed = {}
    for inc in root.findall('include'):
        for a in inc.findall('arg'):
            if a.get('name') == 'privileged_port_offset':
                passed[os.path.basename(inc.get('file'))] = a.get('value')
    assert passed == {'sim_emulator.launch': '$(arg privileged_port_offset)',
                      'udp_bridge.launch': '$(arg privileged_port_offset)'}


def test_a_refused_serial_device_names_its_group(tmp_path):
    """The text the ERP-42 driver adds to a refused open (the refusal itself, as a normal user:
    test/nonroot)."""
    import errno
    import grp
    from morai_bridge.link.serial_port import permission_advice
    dev = str(tmp_path / 'ttyUSB0')
    open(dev, 'w').close()
    refused = OSError(errno.EACCES, 'Permission denied')
    if os.geteuid() == 0:                   # a USB adapter's node: group dialout
        os.chown(dev, -1, grp.getgrnam('dialout').gr_gid)
    group = grp.getgrgid(os.stat(dev).st_gid).gr_name
    assert f'sudo usermod -aG {group} $USER' in permission_advice(dev, refused)
    if os.geteuid() == 0:
        os.chown(dev, -1, 0)
        assert 'only root may open it' in permission_advice(dev, refused)
    assert permission_advice(dev, OSError(errno.EBUSY, 'Device or resource busy')) == ''
