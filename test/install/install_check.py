#!/usr/bin/env python3
"""Install-space check (`bash tools/dev.sh install-check`, layer `install` of tools/run_tests.py).

1. A fresh catkin workspace (default ~/.cache/morai_msgs/install-<checkout id>, emptied first;
   MORAI_INSTALL_WS overrides) gets a copy of the package: the checkout's files that git tracks
   or would track (untracked, not ignored), as a fresh clone would have them.
2. `catkin_make install` in a clean environment (only /opt/ros/noetic/setup.bash on Noetic),
   CATKIN_ENABLE_TESTING=OFF, morai_msgs_INSTALL_TESTS=ON (installs test/ros for step 7).
3. The workspace's src/, build/ and devel/ are deleted: only install/ is left.
4. Every node script, launch file, config file, the RViz file, msg/srv and the Python library
   are in the install space.
5. With install/setup.bash sourced ONLY (a clean environment), `rospack find morai_msgs`,
   the Python modules and the message classes resolve inside the install space.
6. `roslaunch morai_msgs demo.launch` (private master port) runs until /morai/markers shows one
   box per object of /Object_topic plus the ego (test/install/check_markers.py).
7. `rostest morai_msgs demo.test` from the install space.

Prints `install-check: PASS <step>` / `install-check: FAIL <step>: <why>` and ends with
`install-check: N passed, N failed in S s`; exit status 1 when a step failed.
"""
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = '/usr/bin/python3'
NOETIC = '/opt/ros/noetic/setup.bash'


def default_ws():
    ws = os.environ.get('MORAI_WS')
    if ws:
        return os.path.join(os.path.dirname(ws), 'install-' + os.path.basename(ws).replace('ws-', '', 1))
    base = os.path.join(os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache'),
                        'morai_msgs')
    return os.path.join(base, 'install-check')


IWS = os.environ.get('MORAI_INSTALL_WS') or default_ws()
INSTALL = os.path.join(IWS, 'install')
SHARE = os.path.join(INSTALL, 'share', 'morai_msgs')
LOGS = os.path.join(ROOT, '.ws', 'test_results', 'install')
results = []


def report(step, ok, why=''):
    results.append(ok)
    print(f"install-check: {'PASS' if ok else 'FAIL'} {step}{'' if ok else ': ' + why}", flush=True)
    return ok


def clean_env(**extra):
    """What a new login shell has, nothing of the developer's ROS environment."""
    env = {'HOME': os.path.expanduser('~'), 'PATH': '/usr/bin:/bin:/usr/sbin:/sbin', 'LANG': 'C.UTF-8',
           'TERM': 'dumb', 'USER': os.environ.get('USER', 'root'), 'PYTHONDONTWRITEBYTECODE': '1',
           'ROS_HOME': os.path.join(IWS, 'ros_home')}
    env.update(extra)
    return env


def shell(script, log_name, timeout, setup=True, env=None, background=False):
    """bash -c script, with install/setup.bash (setup=True) or only Noetic's setup (setup=False) sourced."""
    pre = ['set -e', 'set +u']
    if setup:
        pre.append(f'source {INSTALL}/setup.bash')
    elif os.path.exists(NOETIC):
        pre.append(f'source {NOETIC}')
    os.makedirs(LOGS, exist_ok=True)
    log = open(os.path.join(LOGS, log_name), 'w')
    p = subprocess.Popen(['bash', '-c', '; '.join(pre) + '\n' + script], cwd=IWS, env=env or clean_env(),
                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    if background:
        return p, log
    try:
        code = p.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        code = 'timeout after %d s' % timeout
    log.close()
    return code, open(log.name).read()


def tail(text, n=15):
    return ' | '.join(text.strip().splitlines()[-n:])


def copy_package(dest):
    files = subprocess.run(['git', '-C', ROOT, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'],
                           check=True, capture_output=True).stdout.decode().split('\0')
    n = 0
    for rel in files:
        src = os.path.join(ROOT, rel)
        if not rel or not os.path.isfile(src):       # deleted but still in the index
            continue
        os.makedirs(os.path.join(dest, os.path.dirname(rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dest, rel))
        n += 1
    return n


def msg_sets_module():
    sys.path.insert(0, os.path.join(ROOT, 'tools'))
    import msg_sets
    return msg_sets


def set_problems(share, name):
    """How the msg/ and srv/ definitions under share differ from message set `name`'s."""
    want = {f'{p[-3:]}/{os.path.basename(p)}': p for p in msg_sets_module().resolve(name).values()}
    have = {os.path.relpath(p, share) for kind in ('msg', 'srv') for p in glob.glob(os.path.join(share, kind, '*'))}
    out = [f'missing {sorted(set(want) - have)}'] if set(want) - have else []
    out += [f'extra {sorted(have - set(want))}'] if have - set(want) else []
    out += [f'{rel} differs' for rel in sorted(set(want) & have)
            if open(want[rel], 'rb').read() != open(os.path.join(share, rel), 'rb').read()]
    return out


def expected_files():
    """Paths relative to install/ that must exist, from the source tree."""
    out = ['setup.bash', 'share/morai_msgs/package.xml', 'share/morai_msgs/rviz/morai.rviz']
    out += ['lib/morai_msgs/' + os.path.basename(p) for p in glob.glob(os.path.join(ROOT, 'scripts', '*'))]
    for d in ('launch', 'config'):
        for p in glob.glob(os.path.join(ROOT, d, '**', '*'), recursive=True):
            if os.path.isfile(p):
                out.append('share/morai_msgs/' + os.path.relpath(p, ROOT))
    # the default message set's definitions (CMakeLists.txt installs the set it built), and the
    # rosbag migration rules between the sets
    msg_sets = msg_sets_module()
    for name, p in msg_sets.resolve(msg_sets.DEFAULT).items():
        out.append(f'share/morai_msgs/{p[-3:]}/{os.path.basename(p)}')
    out.append('share/morai_msgs/msg_sets/migration_rules.bmr')
    for p in glob.glob(os.path.join(ROOT, 'src', 'morai_bridge', '**', '*.py'), recursive=True):
        out.append('lib/python3/dist-packages/' + os.path.relpath(p, os.path.join(ROOT, 'src')))
    out += ['lib/python3/dist-packages/morai_msgs/msg/_EgoVehicleStatus.py',
            'lib/python3/dist-packages/morai_msgs/srv/_MoraiScenarioLoadSrv.py']
    return sorted(set(out))


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def stop(p, log, timeout=20):
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGINT)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    log.close()


def main():
    t0 = time.monotonic()
    print(f'install-check: workspace {IWS}', flush=True)
    if os.path.isdir(IWS):
        shutil.rmtree(IWS)
    os.makedirs(os.path.join(IWS, 'src'))
    n = copy_package(os.path.join(IWS, 'src', 'morai_msgs'))

    # 2. build and install
    t = time.monotonic()
    code, out = shell('catkin_make install -DPYTHON_EXECUTABLE=%s -DCATKIN_ENABLE_TESTING=OFF '
                      '-Dmorai_msgs_INSTALL_TESTS=ON' % PY, 'build.log', 1800, setup=False)
    if not report('catkin_make install (%d files copied, %.0f s)' % (n, time.monotonic() - t), code == 0,
                  f'exit {code}: {tail(out)}'):
        return finish(t0)

    # 2b. the build directory follows the set chosen with -D, and the default again with -D...=
    #     (CMakeLists.txt caches only what the user chose); configuring is enough: it copies the set
    built = os.path.join(IWS, 'devel', 'share', 'morai_msgs')
    for chosen, expect in ((msg_sets_module().SETS[-1],) * 2, ('', msg_sets_module().DEFAULT)):
        code, out = shell(f'catkin_make -DMORAI_MSGS_SET={chosen} cmake_check_build_system', f'reconfigure-{expect}.log',
                          600, setup=False)
        wrong = set_problems(built, expect)
        report(f'catkin_make -DMORAI_MSGS_SET={chosen}: the build directory takes set {expect}', code == 0 and not wrong,
               f'exit {code}: {tail(out)}' if code != 0 else '; '.join(wrong))

    # 3. only the install space stays
    for d in ('src', 'build', 'devel'):
        shutil.rmtree(os.path.join(IWS, d))

    # 4. contents
    missing = [p for p in expected_files() if not os.path.exists(os.path.join(INSTALL, p))]
    report('install space holds every script, launch/config/rviz/msg/srv file and module (%d files)'
           % len(expected_files()), not missing, f'missing {missing}')
    not_exec = [p for p in glob.glob(os.path.join(INSTALL, 'lib', 'morai_msgs', '*')) if not os.access(p, os.X_OK)]
    report('node scripts are executable', not not_exec, f'not executable: {not_exec}')

    # 5. resolution with install/setup.bash only
    code, out = shell(
        'echo "ROS_PACKAGE_PATH=$ROS_PACKAGE_PATH"; echo "PYTHONPATH=$PYTHONPATH"; '
        'echo "CMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"; echo "find=$(rospack find morai_msgs)"; '
        '%s -c "import morai_bridge.nodes.markers as m, morai_msgs.msg as g; print(\'module=\' + m.__file__); '
        'print(\'msgs=\' + g.__file__); print(\'md5=\' + g.EgoVehicleStatus._md5sum)"' % PY,
        'environment.log', 60)
    values = dict(line.split('=', 1) for line in out.splitlines() if '=' in line)
    problems = []
    if code != 0:
        problems.append(f'exit {code}: {tail(out)}')
    if values.get('find') != SHARE:
        problems.append(f"rospack find morai_msgs = {values.get('find')!r}")
    for k in ('module', 'msgs'):
        if not values.get(k, '').startswith(INSTALL + '/'):
            problems.append(f'{k} from {values.get(k)!r}')
    for k in ('ROS_PACKAGE_PATH', 'PYTHONPATH', 'CMAKE_PREFIX_PATH'):
        if 'devel' in values.get(k, '') or ROOT in values.get(k, ''):
            problems.append(f'{k}={values.get(k)}')
    report('install/setup.bash alone resolves the package, its modules and messages', not problems,
           '; '.join(problems))

    # 6. the demo from the install space: markers for every object and the ego
    port = free_port()
    uri = 'http://127.0.0.1:%d' % port
    t = time.monotonic()
    launch, log = shell('exec roslaunch -p %d morai_msgs demo.launch output:=log' % port, 'demo_launch.log', None,
                        env=clean_env(ROS_MASTER_URI=uri), background=True)
    try:
        code, out = shell(f"{PY} {os.path.join(ROOT, 'test', 'install', 'check_markers.py')} 60",
                          'check_markers.log', 120, env=clean_env(ROS_MASTER_URI=uri))
    finally:
        stop(launch, log)
    report(f'roslaunch morai_msgs demo.launch: {tail(out, 1)} ({time.monotonic() - t:.0f} s)', code == 0,
           f"{tail(out, 3)} (roslaunch log: {os.path.join(LOGS, 'demo_launch.log')})")

    # 7. an existing rostest, from the install space
    t = time.monotonic()
    code, out = shell(f"rostest --results-base-dir {os.path.join(IWS, 'results')} morai_msgs demo.test",
                      'rostest_demo.log', 600)
    ok = code == 0 and 'RESULT: SUCCESS' in out
    report(f'rostest morai_msgs demo.test ({time.monotonic() - t:.0f} s)', ok, f'exit {code}: {tail(out)}')
    return finish(t0)


def finish(t0):
    passed, failed = results.count(True), results.count(False)
    print('install-check: %d passed, %d failed in %.0f s' % (passed, failed, time.monotonic() - t0), flush=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
