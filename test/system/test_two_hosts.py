"""Two hosts: the simulator emulator and the bridge in two network namespaces made
here (`ip netns`, a veth pair), each with its own address.

    sim host     10.77.0.1 (+ 10.77.0.3, an unexpected sender)   <- veth ->   bridge host 10.77.0.2

The bridge binds 10.77.0.2 and accepts only 10.77.0.1; commands go to 10.77.0.1.
The ROS master runs in the bridge's namespace.  Needs root (network namespaces):
skipped with a message otherwise.  Addresses exist only inside these namespaces.
"""
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIM_IP, BRIDGE_IP, OTHER_IP = '10.77.0.1', '10.77.0.2', '10.77.0.3'

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason='two-host test needs root to create network namespaces'),
    pytest.mark.skipif(shutil.which('ip') is None, reason='iproute2 (ip) not installed'),
]


def sh(*cmd):
    subprocess.run(cmd, check=True, capture_output=True)


@pytest.fixture
def hosts():
    tag = str(os.getpid())
    sim, br = 'morai_sim_' + tag, 'morai_br_' + tag
    va, vb = 'mvs' + tag[-6:], 'mvb' + tag[-6:]
    try:
        sh('ip', 'netns', 'add', sim)
        sh('ip', 'netns', 'add', br)
        sh('ip', 'link', 'add', va, 'type', 'veth', 'peer', 'name', vb)
        sh('ip', 'link', 'set', va, 'netns', sim)
        sh('ip', 'link', 'set', vb, 'netns', br)
        for ns, dev, addrs in ((sim, va, (SIM_IP, OTHER_IP)), (br, vb, (BRIDGE_IP,))):
            sh('ip', 'netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up')
            for a in addrs:
                sh('ip', 'netns', 'exec', ns, 'ip', 'addr', 'add', a + '/24', 'dev', dev)
            sh('ip', 'netns', 'exec', ns, 'ip', 'link', 'set', dev, 'up')
    except subprocess.CalledProcessError as e:
        for ns in (sim, br):
            subprocess.run(['ip', 'netns', 'del', ns], capture_output=True)
        pytest.skip(f'cannot create network namespaces here: {e.stderr.decode().strip()}')
    procs = []
    yield sim, br, procs
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGINT)
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
    for ns in (sim, br):
        subprocess.run(['ip', 'netns', 'del', ns], capture_output=True)


def start(procs, ns, cmd, env, **kw):
    p = subprocess.Popen(['ip', 'netns', 'exec', ns] + cmd, env=env, start_new_session=True, **kw)
    procs.append(p)
    return p


def test_bridge_and_simulator_on_two_hosts(hosts, tmp_path):
    sim, br, procs = hosts
    env = dict(os.environ, ROS_MASTER_URI='http://127.0.0.1:11611', ROS_IP='127.0.0.1',
               ROS_HOME=str(tmp_path), PYTHONPATH=os.path.join(ROOT, 'src') + ':' + os.environ.get('PYTHONPATH', ''))
    env.pop('ROS_HOSTNAME', None)
    log = open(str(tmp_path / 'procs.log'), 'w')
    start(procs, br, ['roscore', '-p', '11611'], env, stdout=log, stderr=log)
    time.sleep(3.0)
    start(procs, br, ['roslaunch', 'morai_msgs', 'udp_bridge.launch', 'sim_ip:=' + SIM_IP, 'bind_ip:=' + BRIDGE_IP,
                      'output:=log'], env, stdout=log, stderr=log)
    start(procs, sim, ['/usr/bin/python3', '-m', 'morai_bridge.emu.sim', '--listen-ip', SIM_IP, '--user-ip', BRIDGE_IP,
                       '--allowed-sender-ip', BRIDGE_IP, '--scenario', 'demo', '--status-s', '0'], env,
          stdout=log, stderr=log)
    checker = start(procs, br, ['/usr/bin/python3', os.path.join(ROOT, 'test', 'system', 'two_hosts_checker.py')],
                    env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
    line = checker.stdout.readline()
    assert 'ready' in line, f"checker failed; see {tmp_path / 'procs.log'}"
    # datagrams from a third address of the simulator host: the bridge must drop and count them
    sender = ("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('%s', 0))\n"
              "for _ in range(25): s.sendto(b'#MoraiInfo$' + bytes(218), ('%s', 909))" % (OTHER_IP, BRIDGE_IP))
    subprocess.run(['ip', 'netns', 'exec', sim, '/usr/bin/python3', '-c', sender], check=True, env=env)
    checker.stdin.write('\n')
    checker.stdin.flush()
    out, _ = checker.communicate(timeout=60)
    result = json.loads(out.strip().splitlines()[-1])
    print(result)
    assert result['moved_m'] > 10.0, result          # commands crossed to the simulator host, status came back
    assert 15.0 < result['speed_kmh'] < 25.0, result
    assert result['foreign'] == 25, result
    assert result['last_foreign'].startswith(OTHER_IP + ':'), result
