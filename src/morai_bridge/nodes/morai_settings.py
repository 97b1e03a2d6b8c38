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
Reading the files: :mod:`morai_bridge.configuration.sim_settings_files`;
the parameter names and values are checked against the nodes' PARAMS tables here, so no name a
node does not declare can be written.  docs/settings.md.
"""
import importlib
import os
import sys
from typing import NamedTuple, Tuple
from xml.sax.saxutils import quoteattr

from morai_bridge.configuration import maps, settings_plan, sim_settings_files, topic_names
from morai_bridge.configuration.params import Param, ParamError, command_line
from morai_bridge.link import transport
from morai_bridge.wire.udp import streams

NODES = ('camera_bridge', 'lidar_bridge', 'lidar2d_bridge', 'udp_bridge')
#: udp_bridge's port parameters of the simulator's streams (not our emulator's lock-step extension):
#: args of the generated launch file
SIM_PORTS = frozenset(st.param for st in streams.STREAMS if not st.extension)


def node_params_table(node):
    """The PARAMS table of node module ``morai_bridge.nodes.<node>``, looked up by name as
    tools/gen_launch.py does (node modules do not import each other: test/unit/project/test_layering.py)."""
    if node not in NODES:
        raise LaunchError(f'no node type {node!r}')
    return importlib.import_module('morai_bridge.nodes.' + node).PARAMS
#: values the plan may hold that a node version may not declare yet: written only when declared
#: (camera_bridge's principal point, issue 23 item 3); every other name must be declared.
OPTIONAL = {'camera_bridge': ('cx', 'cy')}
_TYPE = {bool: 'bool', int: 'int', float: 'double', str: 'str'}


class LaunchError(ValueError):
    """A value the settings give cannot be a parameter of the node (names the parameter)."""


def _fmt(v):
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, float):
        return repr(round(v, 9) + 0.0)
    return str(v)


def checked_params(node, values):
    """[(Param, value)] of ``values`` in the order of the node's PARAMS, each value coerced and
    range-checked by its Param; a name the node does not declare raises :class:`LaunchError`."""
    table = node_params_table(node)
    declared = {p.name: p for p in table}
    unknown = sorted(set(values) - set(declared) - set(OPTIONAL.get(node, ())))
    if unknown:
        raise LaunchError(f"{node} declares no parameter {', '.join(('~' + n for n in unknown))}")
    out = []
    for p in table:
        if p.name in values:
            try:
                out.append((p, p.coerce(values[p.name])))
            except ParamError as e:
                raise LaunchError(f'{node}: {e}') from None
    return out


def _comment(lines, indent='  '):
    text = '\n'.join(indent + '     ' + line.replace('--', '- -') for line in lines)
    return f'{indent}<!-- {text.lstrip()} -->'


def off_line(st, launch='morai.launch'):
    """The line of udp_bridge stream ``st`` (a :class:`~morai_bridge.configuration.settings_plan.StreamOff`):
    why it is off and the one way to turn it on.  A row of the files that is not UDP is switched to UDP in the
    simulator first; one the simulator sends over ROS is kept so, or switched first (never both: enabling the
    stream before the switch would make two publishers of its topic)."""
    port = str(st.port) if st.port else 'PORT'
    enable = f'roslaunch {launch} {st.stream}_port:={port}'
    if not st.switch:
        return f'udp_bridge leaves {st.stream} off: {st.why}; {enable} enables it' + \
            (" (MORAI's default port)" if st.port else '')
    switch = f"switch the simulator's row to UDP ({st.switch}), then {enable}"
    if not st.ros_topic:
        return f'udp_bridge leaves {st.stream} off: {st.why}; {switch} enables it'
    if streams.BY_NAME[st.stream].direction == streams.SIM_TO_USER:
        return (f'udp_bridge leaves {st.stream} off: {st.why}; keep ROS and leave the bridge off, or {switch} '
                f'(not before: two publishers on {st.ros_topic})')
    return (f'udp_bridge leaves {st.stream} off: {st.why}; keep ROS and leave the bridge off (the simulator '
            f'subscribes to {st.ros_topic} itself), or {switch}')


def off_lines(plan, launch='morai.launch'):
    """One line per stream the plan leaves off: the sensors and streams not started, and each udp_bridge
    stream at port 0 with the argument of the generated ``launch`` file that enables it (:func:`off_line`)."""
    return [f'not started: {line}' for line in plan.not_started] + [off_line(st, launch) for st in plan.streams_off]


def _declared_default(node, name):
    return {p.name: p for p in node_params_table(node)}[name].default


def version_line(plan, launch='morai.launch'):
    """One line: the ``sim_version`` the generated file gives udp_bridge and why ('' without udp_bridge)."""
    if not any(n.node == 'udp_bridge' for n in plan.nodes):
        return ''
    if plan.sim_version:
        return f'udp_bridge: sim_version {plan.sim_version}: {plan.sim_version_why}'
    return (f"udp_bridge: sim_version not implied: {plan.sim_version_why}; the launch file keeps udp_bridge's "
            f"default, {_declared_default('udp_bridge', 'sim_version')}: roslaunch {launch} sim_version:=NAME for "
            f"another release (docs/versions.md)")


# ----------------------------------------------------------------------------- ports below 1024

#: what the written file adds to every port below 1024 when this user may not bind one: the demo's value
OFFSET = transport.PRIVILEGED_PORT_OFFSET
OFFSET_ARG = 'privileged_port_offset'


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


# ----------------------------------------------------------------------------- one publisher per topic

def _topic(name):
    return name if name.startswith('/') else '/' + name


def published_topics(plan):
    """{topic: 'node ~param'}: the main topic of each node of the plan (a sensor node's image or cloud,
    udp_bridge's received streams it does not leave off), the nodes being in the root namespace."""
    out = {}
    kinds = {node: kind for kind, node in sim_settings_files.SENSOR_NODES.items()}
    for n in plan.nodes:
        declared = {p.name: p.default for p in node_params_table(n.node)}
        values = dict(declared, **n.params)
        if n.node == 'udp_bridge':
            params = [f'{st.name}_topic' for st in streams.FROM_SIM if st.topic and values.get(st.param)]
        else:
            params = [p for p in ('image_topic', 'topic') if p in declared]
        for p in params:
            topic = values[p]
            if topic == topic_names.BY_CONVENTION and n.node in kinds:
                topic = topic_names.name(kinds[n.node], p, values.get('native_names', False))
            out.setdefault(_topic(topic), f'{n.name} ~{p}')
    return out


def check_one_publisher(plan):
    """A topic that a sensor the simulator sends over ROS has (its rosConfig.Topic) and that a node of the
    plan publishes too would have two publishers: :class:`LaunchError` naming both."""
    published = published_topics(plan)
    for topic, sensor in plan.ros_topics:
        if _topic(topic) in published:
            raise LaunchError(f'{sensor} is sent over ROS on {_topic(topic)}, which {published[_topic(topic)]} '
                              f'would publish too (two publishers on one topic): give that row another '
                              f'rosConfig.Topic in MORAI SIM, or switch it to UDP')


def launch_xml(plan, sources, output='screen', launch='morai.launch', ports=None, map_name=maps.DEFAULT):
    """The roslaunch XML of a :class:`~morai_bridge.configuration.settings_plan.Plan`; udp_bridge's
    ports and sim_version are args (``roslaunch <launch> <stream>_port:=N``), and with ports below 1024
    so is ``privileged_port_offset`` (``ports``: the :class:`PortOffset`, default :func:`port_offset`'s for
    this user)."""
    check_one_publisher(plan)
    ports = port_offset(plan, launch=launch) if ports is None else ports
    version = version_line(plan, launch)
    out = ['<?xml version="1.0"?>', '<launch>',
           _comment(['Generated by morai_settings from ' + ', '.join(sources) + '.',
                     'Mount poses: REP-103 (x forward, y left, z up), MORAI\'s angles wrapped to -180..180 deg '
                     '(docs/settings.md).'])]
    if plan.not_started or plan.streams_off:
        out.append(_comment(['Off (not sent over UDP, no codec, or left off):'] +
                            ['  ' + s for s in off_lines(plan, launch)]))
    if plan.warnings:
        out.append(_comment(['Warnings (keys not read):'] + ['  ' + s for s in plan.warnings]))
    if plan.notes or version:
        out.append(_comment(['Notes:'] + ['  ' + s for s in plan.notes + ((version,) if version else ())]))
    low = {(lp.node, lp.param) for lp in ports.low}
    if ports.low:
        out.append(_comment(['Ports below 1024 (docs/settings.md, "Ports below 1024"):'] +
                            ['  ' + s for s in ports.lines]))
        out.append(f'  <arg name="{OFFSET_ARG}" default="{ports.offset}" doc="added to every port below 1024 '
                   f'(909 -&gt; 1909 with 1000): set the simulator\'s ports to match; 0: the settings\' ports (as '
                   f'root, or with net.ipv4.ip_unprivileged_port_start lowered)" />')
    for n in plan.nodes:
        values = dict(n.params)
        if n.node == 'udp_bridge':
            values['sim_version'] = plan.sim_version or _declared_default('udp_bridge', 'sim_version')
            values['map'] = map_name
            if ports.low:
                values[OFFSET_ARG] = ports.offset
        params = checked_params(n.node, values)
        out.append('')
        out.append(_comment([n.source]))
        args = [p.name for p, _ in params
                if n.node == 'udp_bridge' and (p.name in SIM_PORTS or p.name in ('sim_version', 'map'))]
        for p, v in params:
            if p.name == 'sim_version':
                how = 'implied by the settings' if plan.sim_version else 'not implied by the settings: its default'
                out.append(f'  <arg name="sim_version" default={quoteattr(_fmt(v))} doc="udp_bridge ~sim_version, '
                           f'{how} (config/sim_versions, docs/versions.md)" />')
            elif p.name == 'map':
                out.append(f'  <arg name="map" default={quoteattr(_fmt(v))} doc="udp_bridge ~map: the GPSMessage '
                           f'offsets (config/maps, an MGeo folder, a MORAI scenario file, or none; docs/ros_api.md)" />')
            elif p.name in args:
                out.append(f'  <arg name="{p.name}" default={quoteattr(_fmt(v))} doc="udp_bridge ~{p.name} (0: off)" />')
        # clear_params: parameters a previous launch left in the node's namespace (e.g. ~settings) do not apply
        out.append('  <node pkg="morai_msgs" type="%s" name=%s output=%s clear_params="true">'
                   % (n.node, quoteattr(n.name), quoteattr(output)))
        for p, v in params:
            if p.name in args or p.name == OFFSET_ARG:
                value = f'$(arg {p.name})'
            elif (n.name, p.name) in low and n.node != 'udp_bridge':
                value = f'$(eval {v} + {OFFSET_ARG})'       # the demo's rule, for a node without the parameter
            else:
                value = _fmt(v)
            out.append(f'    <param name="{p.name}" type="{_TYPE[type(p.default)]}" value={quoteattr(value)} />')
        out.append('  </node>')
    out.append('</launch>')
    return '\n'.join(out) + '\n'


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
        text = launch_xml(plan, sources, args.output, launch, ports, args.map)
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
    version = version_line(plan, launch)
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
