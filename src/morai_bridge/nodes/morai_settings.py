"""morai_settings: MORAI SIM's saved sensor (and network) settings as a roslaunch file.

    rosrun morai_msgs morai_settings SensorInfo_<vehicle>.json [NetworkInfo.json] -o morai.launch
    roslaunch morai.launch

One bridge node per sensor the settings send over UDP (camera_bridge, lidar_bridge,
lidar2d_bridge), udp_bridge for GPS / IMU and, with the network file, its stream ports and the
``sim_version`` the files imply.  What is sent over ROS or switched off is one line each on stderr
and in a comment (a row the simulator sends over ROS: keep ROS, or switch the row to UDP and then
enable the stream, never both); udp_bridge's ports and sim_version are args of the launch file, so
``roslaunch morai.launch sim_status_port:=10326`` enables a stream left off.  A port below 1024 that
this user may not bind gets the demo's ``privileged_port_offset`` (1000) in the written file, which
then starts as this user; stderr says which simulator setting must follow (:func:`port_offset`).
``--native-names``: the sensor topics the file does not name get MORAI's native ROS mode's names.
A bad file: a message naming the key on stderr, exit 2, nothing printed or written.  Keys the files
have that are not read (unknown or misplaced) are warnings on stderr and in the file's first comment.
Reading the files: :mod:`morai_bridge.configuration.sim_settings_files`; what to start:
:mod:`~morai_bridge.configuration.settings_plan`; writing the launch file, every parameter checked against
the PARAMS table of its node (given from here: :func:`node_tables`):
:mod:`~morai_bridge.configuration.settings_launch`.  Here: the command line, and what this machine's user
may bind (:func:`port_offset`).  docs/settings.md.
"""
import importlib
import os
import sys
from typing import NamedTuple, Tuple

from morai_bridge.configuration import maps, settings_plan, sim_settings_files
from morai_bridge.configuration.params import Param, command_line
from morai_bridge.configuration.settings_launch import (OFFSET_ARG, LaunchError, launch_xml, off_lines,
                                                         version_line)
from morai_bridge.link import transport
from morai_bridge.wire.udp import streams

NODES = ('camera_bridge', 'lidar_bridge', 'lidar2d_bridge', 'udp_bridge')


def node_params_table(node):
    """The PARAMS table of node module ``morai_bridge.nodes.<node>``, looked up by name as
    tools/gen_launch.py does (node modules do not import each other: test/unit/project/test_layering.py)."""
    if node not in NODES:
        raise LaunchError(f'no node type {node!r}')
    return importlib.import_module('morai_bridge.nodes.' + node).PARAMS


def node_tables():
    """node type -> its PARAMS, for every node a launch file of the settings may start."""
    return {n: node_params_table(n) for n in NODES}


# ----------------------------------------------------------------------------- ports below 1024

#: what the written file adds to every port below 1024 when this user may not bind one: the demo's value
OFFSET = transport.PRIVILEGED_PORT_OFFSET


def may_bind(port):
    """True when this process's user may bind UDP ``port`` on this machine: root, or a port from
    net.ipv4.ip_unprivileged_port_start up."""
    return os.geteuid() == 0 or port >= transport.unprivileged_port_start()


class PortOffset(NamedTuple):
    """What the written file does with the ports below 1024 (:func:`port_offset`)."""
    low: Tuple[settings_plan.LowPort, ...]   # the ports below 1024 (none: no privileged_port_offset arg)
    offset: int                               # the file's privileged_port_offset default (0: the settings' ports)
    lines: Tuple[str, ...]                    # what the user must know: stderr and the file's comment


def _receive_ports(plan, offset):
    """{port after ``offset``: 'node's param'} of every port the plan's nodes bind."""
    out = {}
    for n in plan.nodes:
        for param, port in n.params.items():
            if not (param == 'port' or param.endswith('_port')) or not port:
                continue
            st = streams.BY_NAME.get(param[:-len('_port')]) if n.node == 'udp_bridge' else None
            if st is None or st.direction == streams.SIM_TO_USER:
                out.setdefault(transport.shift_privileged(port, offset), []).append(f"{n.name}'s {param}")
    return out


def _what(lp):
    """The port in words: udp_bridge's competition_status port 909 (file: key), lidar_bridge's port 368 (...)."""
    port = 'port' if lp.param == 'port' else lp.param[:-len('_port')] + ' port'
    return f"{lp.node}'s {port} {lp.port}" + (f' ({lp.origin})' if lp.origin else '')


def port_offset(plan, given=None, may_bind=may_bind, launch='morai.launch'):
    """The :class:`PortOffset` of ``plan``: the file gives every port below 1024 the demo's rule, +
    ``privileged_port_offset`` (an arg of the file; udp_bridge applies it itself, a sensor node's port is
    computed in the file).  Its default: ``given`` (--privileged-port-offset), else :data:`OFFSET` when
    ``may_bind`` (this user, this machine) refuses a port a node binds, else 0.  The simulator sends to the
    port set in MORAI SIM, so each moved port comes with the setting to change there.  A port the offset would
    move onto one another node binds cannot move: an error when ``given``, else the file keeps the ports and
    the line names the port and the three ways out (root, the sysctl, another port in the simulator)."""
    low = tuple(settings_plan.low_ports(plan))
    if not low:
        return PortOffset((), 0, ())
    start = transport.unprivileged_port_start()
    refused = [lp for lp in low if lp.receive and not may_bind(lp.port)]
    offset = given if given is not None else (OFFSET if refused else 0)
    blocked = {}        # LowPort -> why it cannot move
    if offset:
        after = _receive_ports(plan, offset)
        for lp in low:
            who = [w for w in after.get(lp.port + offset, ()) if w != f"{lp.node}'s {lp.param}"] if lp.receive else ()
            if who:
                blocked[lp] = f"{lp.port + offset}, which {' and '.join(who)} receives already"
        if blocked and given is not None:
            lp, onto = next(iter(blocked.items()))
            raise LaunchError(f'--privileged-port-offset {offset} would move {_what(lp)} onto {onto}')
        if blocked:
            blocked = {lp: f'privileged_port_offset {offset} would move it onto {onto}' for lp, onto in blocked.items()}
            offset = 0
    lines = []
    for lp in low:
        new = lp.port + (offset or OFFSET)
        root_only = f', which only root may bind on this machine (net.ipv4.ip_unprivileged_port_start = {start})'
        if offset and lp.receive:
            lines.append(f'{_what(lp)} is below 1024{root_only if not may_bind(lp.port) else ""}: the launch file '
                         f'adds privileged_port_offset {offset}, so {lp.node} receives it on {new}. MORAI SIM sends '
                         f'to the port it is set to, so set that destination port to {new} there as well (until '
                         f'then nothing arrives). Or keep {lp.port}: run the launch file as root, or let every user '
                         f'bind it (sudo sysctl -w net.ipv4.ip_unprivileged_port_start={lp.port}), and pass roslaunch '
                         f'{launch} {OFFSET_ARG}:=0')
        elif offset:
            lines.append(f'{_what(lp)} is below 1024 and moves with privileged_port_offset {offset} to {new}: MORAI '
                         f'SIM listens on the port it is set to, so set that host port to {new} there as well (or '
                         f'pass roslaunch {launch} {OFFSET_ARG}:=0)')
        elif lp.receive and not may_bind(lp.port):
            why, move = (blocked[lp], 'set that destination port in MORAI SIM to a free one from 1024 up and run '
                                      'morai_settings again') if lp in blocked else \
                ('--privileged-port-offset 0', f'pass roslaunch {launch} {OFFSET_ARG}:={OFFSET} and set that '
                                               f'destination port to {new} in MORAI SIM')
            lines.append(f'{_what(lp)} is below 1024{root_only}, and the launch file keeps it ({why}). Run it as '
                         f'root; or let every user bind it: sudo sysctl -w net.ipv4.ip_unprivileged_port_start='
                         f'{lp.port} (kept across reboots by: echo net.ipv4.ip_unprivileged_port_start={lp.port} | '
                         f'sudo tee {transport.SYSCTL_FILE}); or {move}')
        elif lp.receive:
            lines.append(f'{_what(lp)} is below 1024: the launch file binds it as it is (this user may, here). A '
                         f'user who may not (a stock Linux: only root binds below 1024) passes roslaunch {launch} '
                         f'{OFFSET_ARG}:={OFFSET} and sets that destination port to {new} in MORAI SIM, or runs it '
                         f'as root, or lowers net.ipv4.ip_unprivileged_port_start to {lp.port}')
    return PortOffset(low, offset, tuple(lines))


#: the command line (configuration.params); None: not given
OPTIONS = [
    Param('sensors', '', 'SensorInfo_<vehicle>.json (MORAI SIM SaveFile/Sensor/<version>/)', positional=True),
    Param('network', None, 'network settings JSON (SaveFile/Network/<version>/), for udp_bridge', positional=True,
          nargs='?'),
    Param('parent_frame', 'base_link', 'TF parent of the mount poses: the vehicle frame at MORAI\'s sensor origin, '
          'the middle of the rear axle (default base_link)', metavar='PARENT_FRAME'),
    Param('sim_ip', None, 'override the simulator address (default: each udpConfig.hostIP)', metavar='SIM_IP'),
    Param('bind_ip', None, 'override the local address (default: each udpConfig.destinationIP)', metavar='BIND_IP'),
    Param('native_names', False, 'publish the sensors the files do not give a topic under the names of MORAI\'s '
          'native ROS mode (/lidar3D, /lidar2D) instead of the ROS driver names (docs/ros_api.md)', switch=True),
    Param('output', 'screen', 'node output', choices=('screen', 'log')),
    Param('privileged_port_offset', None, 'the written file\'s privileged_port_offset, added to every port below '
          '1024 (the simulator\'s ports must match); default: %d when this user may not bind such a port here, '
          'else 0 (docs/settings.md, "Ports below 1024")' % OFFSET, kind=int, minimum=0, maximum=64511, metavar='N'),
    Param('map', maps.DEFAULT, 'udp_bridge\'s map, written as the launch file\'s map argument: a MORAI map name '
          '(config/maps), an MGeo folder, a MORAI scenario file, or none; gives GPSMessage.eastOffset/northOffset '
          '(docs/ros_api.md "Maps")', metavar='MAP'),
    Param('out', None, 'write the launch file here instead of stdout', flags=('-o', '--out'), metavar='OUT'),
]


def _parser():
    return command_line(OPTIONS, prog='morai_settings', description='Print a roslaunch file that bridges what '
                        'MORAI SIM\'s saved sensor settings (and network settings) send over UDP.  docs/settings.md.')


def not_local(plan):
    """One line per node whose ~bind_ip is not an address of this machine (the node would stop at
    start with that error): the launch file may be meant for another PC, so a warning, not an error."""
    return ['%s: bind_ip %s is not an address of this machine: the simulator sends there, so this launch file '
            'runs only on the machine that has it (or pass --bind-ip)' % (n.name, n.params['bind_ip'])
            for n in plan.nodes if 'bind_ip' in n.params and not transport.is_local_address(n.params['bind_ip'])]


def write_atomically(path, text):
    """``path`` holds ``text`` entirely or is left as it was (never half written, never emptied)."""
    tmp = '%s.tmp%d' % (path, os.getpid())
    try:
        with open(tmp, 'w') as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def main(argv=None, may_bind=may_bind):
    """The command; ``may_bind(port)``: whether the user who will run the file may bind ``port`` (this one)."""
    args = _parser().parse_args(argv)
    try:
        sensors = sim_settings_files.load_sensors(args.sensors)
        network = sim_settings_files.load_network(args.network) if args.network else None
        plan = settings_plan.plan(sensors, network, args.parent_frame, args.sim_ip, args.bind_ip,
                                  native_names=args.native_names)
        map_info = maps.load_map(args.map)
        sources = [args.sensors] + ([args.network] if args.network else [])
        launch = args.out or 'morai.launch'
        ports = port_offset(plan, args.privileged_port_offset, may_bind, launch)
        tables = node_tables()
        text = launch_xml(plan, sources, tables, ports, args.output, launch, args.map)
        if args.out:
            write_atomically(args.out, text)
    except (sim_settings_files.SettingsError, LaunchError, maps.MapError) as e:
        sys.stderr.write(f'morai_settings: {e}\n')
        return 2
    except OSError as e:
        sys.stderr.write(f'morai_settings: cannot write {args.out}: {e.strerror or e}\n')
        return 2
    for line in plan.warnings + tuple(not_local(plan)):
        sys.stderr.write(f'morai_settings: warning: {line}\n')
    version = version_line(plan, tables, launch)
    for line in off_lines(plan, launch) + ([version] if version else []) + list(ports.lines):
        sys.stderr.write(f'morai_settings: {line}\n')
    if any(n.node == 'udp_bridge' for n in plan.nodes):
        sys.stderr.write(f'morai_settings: map {map_info.describe()}: udp_bridge fills the GPSMessage offsets from it '
                         f'(roslaunch {launch} map:=... for another; --map to write another)\n')
    if not args.out:
        sys.stdout.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
