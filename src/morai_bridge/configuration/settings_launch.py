"""The roslaunch file of MORAI SIM's saved settings (morai_settings): the XML of a
:class:`~morai_bridge.configuration.settings_plan.Plan`, every parameter checked against the PARAMS table of
the node it is written for, so that no name a node does not declare can be written; the lines that say what
is off and how to turn it on; and one publisher per topic.  The node tables come in as an argument
(``tables``: node type -> PARAMS): the nodes are a layer above.  What this machine's user may bind, and the
port offset that follows, is the program's (:mod:`morai_bridge.nodes.morai_settings`).  No ROS.
"""
from xml.sax.saxutils import quoteattr

from morai_bridge.configuration import maps, sim_settings_files, topic_names
from morai_bridge.configuration.params import ParamError
from morai_bridge.wire.udp import streams

#: udp_bridge's port parameters of the simulator's streams (not our emulator's lock-step extension):
#: args of the generated launch file
SIM_PORTS = frozenset(st.param for st in streams.STREAMS if not st.extension)
#: the launch file's argument added to every port below 1024
OFFSET_ARG = 'privileged_port_offset'


class LaunchError(ValueError):
    """A value the settings give cannot be a parameter of the node (names the parameter)."""


def _fmt(v):
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, float):
        return repr(round(v, 9) + 0.0)
    return str(v)


#: values the plan may hold that a node version may not declare yet: written only when declared
#: (camera_bridge's principal point, issue 23 item 3); every other name must be declared.
OPTIONAL = {'camera_bridge': ('cx', 'cy')}
_TYPE = {bool: 'bool', int: 'int', float: 'double', str: 'str'}


def _table(tables, node):
    try:
        return tables[node]
    except KeyError:
        raise LaunchError(f'no node type {node!r}') from None


def checked_params(node, values, tables):
    """[(Param, value)] of ``values`` in the order of the node's PARAMS (``tables[node]``), each value coerced
    and range-checked by its Param; a name the node does not declare raises :class:`LaunchError`."""
    table = _table(tables, node)
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


def _declared_default(tables, node, name):
    return {p.name: p for p in _table(tables, node)}[name].default


def version_line(plan, tables, launch='morai.launch'):
    """One line: the ``sim_version`` the generated file gives udp_bridge and why ('' without udp_bridge)."""
    if not any(n.node == 'udp_bridge' for n in plan.nodes):
        return ''
    if plan.sim_version:
        return f'udp_bridge: sim_version {plan.sim_version}: {plan.sim_version_why}'
    return (f"udp_bridge: sim_version not implied: {plan.sim_version_why}; the launch file keeps udp_bridge's "
            f"default, {_declared_default(tables, 'udp_bridge', 'sim_version')}: roslaunch {launch} sim_version:=NAME for "
            f"another release (docs/versions.md)")


# ----------------------------------------------------------------------------- one publisher per topic

def _topic(name):
    return name if name.startswith('/') else '/' + name


def published_topics(plan, tables):
    """{topic: 'node ~param'}: the main topic of each node of the plan (a sensor node's image or cloud,
    udp_bridge's received streams it does not leave off), the nodes being in the root namespace."""
    out = {}
    kinds = {node: kind for kind, node in sim_settings_files.SENSOR_NODES.items()}
    for n in plan.nodes:
        declared = {p.name: p.default for p in _table(tables, n.node)}
        values = dict(declared, **n.params)
        if n.node == 'udp_bridge':
            params = [st.topic_param for st in streams.FROM_SIM if st.topic and values.get(st.param)]
        else:
            params = [p for p in ('image_topic', 'topic') if p in declared]
        for p in params:
            topic = values[p]
            if topic == topic_names.BY_CONVENTION and n.node in kinds:
                topic = topic_names.name(kinds[n.node], p, values.get('native_names', False))
            out.setdefault(_topic(topic), f'{n.name} ~{p}')
    return out


def check_one_publisher(plan, tables):
    """A topic that a sensor the simulator sends over ROS has (its rosConfig.Topic) and that a node of the
    plan publishes too would have two publishers: :class:`LaunchError` naming both."""
    published = published_topics(plan, tables)
    for topic, sensor in plan.ros_topics:
        if _topic(topic) in published:
            raise LaunchError(f'{sensor} is sent over ROS on {_topic(topic)}, which {published[_topic(topic)]} '
                              f'would publish too (two publishers on one topic): give that row another '
                              f'rosConfig.Topic in MORAI SIM, or switch it to UDP')


def launch_xml(plan, sources, tables, ports, output='screen', launch='morai.launch', map_name=maps.DEFAULT):
    """The roslaunch XML of a :class:`~morai_bridge.configuration.settings_plan.Plan`, its parameters checked
    against ``tables`` (node type -> its PARAMS); udp_bridge's ports, sim_version and map are args
    (``roslaunch <launch> <stream>_port:=N``), and with ports below 1024 so is ``privileged_port_offset``
    (``ports``: what the file does with them, a PortOffset of morai_settings: ``low``, ``offset``, ``lines``)."""
    check_one_publisher(plan, tables)
    version = version_line(plan, tables, launch)
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
            values['sim_version'] = plan.sim_version or _declared_default(tables, 'udp_bridge', 'sim_version')
            values['map'] = map_name
            if ports.low:
                values[OFFSET_ARG] = ports.offset
        params = checked_params(n.node, values, tables)
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
