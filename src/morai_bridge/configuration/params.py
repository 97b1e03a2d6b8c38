"""Parameters declared as data, read with type checks; no ROS.

A node (or a program) declares its parameters as a list of :class:`Param`;
:func:`load` reads them all from a getter, coerces the type and checks ranges,
and raises :class:`ParamError` naming the parameter when a value is unusable.
Reading ``~name`` from the ROS parameter server is :func:`morai_bridge.ros.params.load`;
the same table feeds the launch-file and docs checks, and :func:`add_options` makes
it a program's command-line options.  The named sentinels are below.
"""
import argparse
import math

# Sentinels: numbers a parameter takes that mean something else than the number.  The values are what
# users type (launch files, docs, command lines), so they stay as they are; these names are for the
# code that tests them.  The same number means different things in different places:
#
#   value  bridges, sensor bridges, emulator          emulator listening ports   morai_check_signs
#     0    DISABLED (a port) / FROM_PROFILE (a number) DISABLED                   ANY_FREE_PORT
#    -1    FROM_VERSION (a destination port)          EMULATOR_ANY_FREE_PORT     FROM_VERSION (status port),
#                                                                                NO_IMU (IMU port)

#: a UDP port parameter: the stream is not used (no socket, nothing sent)
DISABLED = 0
#: a destination port the simulator version decides (ego status, competition status, GPS): the sim_version's
FROM_VERSION = -1
#: a number a version or vehicle profile also gives (a steering sign, ctrl_cmd_bytes, a maximum steering
#: angle, a wheelbase): not set here, the profile's value holds
FROM_PROFILE = 0
#: a port to bind: any free one, the kernel chooses (morai_check_signs' ports, the tests)
ANY_FREE_PORT = 0
#: the emulator's listening ports (SimConfig): -1 binds any free port, as 0 disables the port there
EMULATOR_ANY_FREE_PORT = -1
#: morai_check_signs' IMU port: no IMU is read
NO_IMU = -1
#: a map origin value (GPS offsets, origin height, UTM zone) the map gives (``map``, configuration/maps.py);
#: 0 itself is published only with map:=none
FROM_MAP = 0


class ParamError(ValueError):
    """A parameter has a value the node cannot use; the text names it, ``why`` is the reason alone."""

    def __init__(self, text, why=None):
        super().__init__(text)
        self.why = why or text


class Param:
    """One parameter: its name, default (whose type is the parameter's), one line of doc, and what
    values it takes: ``choices``, ``minimum`` / ``maximum`` (inclusive), ``above`` (exclusive), and
    ``check``, a callable the coerced value goes through last (it returns the value to use, or raises
    ValueError with the reason).  ``metavar`` names the value in a command line's help (default: the
    type's name).  ``unset``: a word that means the same as ``""`` (a string parameter whose empty value
    means "not set": ``none``, ``auto``, ``any``); :meth:`coerce` reads it as ``""`` and launch files write
    it as the argument's default, because roslaunch lists every argument whose default is empty as
    required.

    As a command-line option (:func:`add_options`, :func:`command_line`) a Param may also be:
    ``kind``: its type when the default does not tell it (``None``: not given; a list: a repeated option);
    ``flags``: its spellings (default ``--name-with-dashes``; a boolean given flags is a switch, it only
    sets True); ``switch``: a boolean without its ``--no-`` form; ``positional``: an argument without a
    flag; ``nargs``: how many values (``'?'``, ``'*'``, ``'+'``, or :data:`REST` for everything after it);
    ``repeat``: the option may be given again, the values make a list; ``required``; ``hidden`` (not in
    the help)."""
    __slots__ = ('name', 'default', 'doc', 'choices', 'minimum', 'maximum', 'above', 'metavar', 'check', 'unset',
                 'kind', 'flags', 'switch', 'positional', 'nargs', 'repeat', 'required', 'hidden')

    def __init__(self, name, default, doc, choices=None, minimum=None, maximum=None, above=None, metavar=None,
                 check=None, unset=None, kind=None, flags=None, switch=False, positional=False, nargs=None,
                 repeat=False, required=False, hidden=False):
        self.name = name
        self.default = default
        self.doc = doc
        self.choices = choices
        self.minimum = minimum
        self.maximum = maximum
        self.above = above
        self.metavar = metavar
        self.check = check
        self.unset = unset
        self.kind = kind if kind is not None else (str if default is None or isinstance(default, list)
                                                   else type(default))
        self.flags = tuple(flags) if flags else None
        self.switch = switch or (self.kind is bool and flags is not None)
        self.positional = positional
        self.nargs = nargs
        self.repeat = repeat
        self.required = required
        self.hidden = hidden
        if unset is not None and (self.kind is not str or unset == ''):
            raise ValueError(f'{name}: unset is a non-empty word of a string parameter')

    def coerce(self, value):
        """``value`` as the parameter's type, checked against its choices and range; a ParamError otherwise."""
        kind = self.kind

        def refuse(why):
            return ParamError(f'~{self.name}={value!r}: {why}', why)
        try:
            if kind is bool:
                if isinstance(value, str):
                    if value.lower() not in ('true', 'false', '1', '0'):
                        raise ValueError(value)
                    value = value.lower() in ('true', '1')
                else:
                    value = bool(value)
            elif kind is int:
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError(value)
                value = int(value)
            elif kind is float:
                value = float(value)
                if not math.isfinite(value):
                    raise ValueError(value)
            elif kind is str:
                value = str(value)
                if self.unset is not None and value == self.unset:
                    value = ''
        except (TypeError, ValueError):
            raise refuse(f'expected a {kind.__name__} ({self.doc})') from None
        if self.choices is not None and value not in self.choices:
            raise refuse(f"must be one of {', '.join(map(repr, self.choices))}")
        if self.minimum is not None and value < self.minimum:
            raise refuse(f'must be at least {self.minimum!r}')
        if self.above is not None and not value > self.above:
            raise refuse(f'must be above {self.above!r}')
        if self.maximum is not None and value > self.maximum:
            raise refuse(f'must be at most {self.maximum!r}')
        if self.check is not None:
            try:
                value = self.check(value)
            except ValueError as e:
                raise refuse(str(e)) from None
        return value

    def takes(self, value):
        """True when ``value`` is one the parameter accepts (a default it does not accept is a sentinel)."""
        try:
            self.coerce(value)
        except ParamError:
            return False
        return True

    @property
    def shown_default(self):
        """The default as launch files and docs write it: the ``unset`` word for ``""`` when the Param has one."""
        if self.default == '' and self.unset is not None:
            return self.unset
        if isinstance(self.default, bool):
            return 'true' if self.default else 'false'
        return str(self.default)


class Config(dict):
    """Parameter values by name, also readable as attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def load(params, getter):
    """Read every declared parameter: ``getter(name, default)`` gives its raw value."""
    return Config((p.name, p.coerce(getter(p.name, p.default))) for p in params)


# ------------------------------------------------------------------ the same tables as command-line options

#: ``nargs`` of a positional Param that takes every argument after it (options included): a command to run
REST = argparse.REMAINDER


class _OnOff(argparse.Action):
    """``--name`` sets True, ``--no-name`` False (argparse.BooleanOptionalAction is Python 3.9+)."""

    def __init__(self, option_strings, dest, default=None, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, not option_string.startswith('--no-'))


def _reader(param):
    """argparse's ``type`` of an option: the text through :meth:`Param.coerce`."""
    def read(text):
        try:
            return param.coerce(text)
        except ParamError as e:
            raise argparse.ArgumentTypeError(f'{e.why}, got {text!r}') from None
    read.__name__ = param.name
    return read


def _help(p, shown):
    if p.hidden:
        return argparse.SUPPRESS
    # '%' is argparse's format character in a help text
    doc = p.doc.replace('%', '%%')
    return doc + (' (default: %(default)s)' if shown and '(default' not in p.doc else '')


def _add(parser, p):
    """One Param as one argument of ``parser`` (a parser, a group or a mutually exclusive group)."""
    flags = p.flags or ('--' + p.name.replace('_', '-'),)
    if p.kind is bool and not p.positional:
        if p.switch:
            parser.add_argument(*flags, dest=p.name, action='store_const', const=not p.default,
                                default=p.default, help=_help(p, False))
        else:
            parser.add_argument(flags[0], '--no-' + flags[0][2:], dest=p.name, action=_OnOff, default=p.default,
                                help=_help(p, False))
        return
    shown = p.default not in ('', None, []) and p.takes(p.default)
    kw = dict(default=p.default, help=_help(p, shown), choices=p.choices,
              metavar=p.metavar or (None if p.choices or p.positional else p.kind.__name__.upper()))
    if p.nargs is not REST:
        kw['type'] = _reader(p)
    if p.nargs is not None:
        kw['nargs'] = p.nargs
    if p.repeat:
        kw['action'] = 'append'
        kw['default'] = list(p.default or ())
    if p.positional:
        parser.add_argument(p.name, **kw)
    else:
        parser.add_argument(*flags, dest=p.name, required=p.required, **kw)


def add_options(parser, params):
    """Add one option per Param to ``parser`` (an argparse parser or group): ``--name-with-dashes`` into
    ``args.name``, the default the Param's, help its doc.  A boolean is a pair ``--name`` / ``--no-name``;
    any other value is read by :meth:`Param.coerce` (type, choices, range), so a bad one is a usage error
    naming the option.  The help shows the default, unless it is empty or a value the option does not
    take (a sentinel: the doc says what it means) or the doc says it.  The other Param attributes
    (``flags``, ``positional``, ``nargs``, ``repeat``, ...) are in :class:`Param`'s docstring."""
    for p in params:
        _add(parser, p)


def command_line(params, prog=None, description=None, epilog=None, exclusive=(), subcommands=None,
                 raw_help=False, defaults_in_help=False, dest='command'):
    """A program's whole command line from Params: the argparse parser (argparse is used here only).

    ``params``: its arguments, in the help's order (positional ones are arguments without a flag);
    ``exclusive``: groups of Param names of which at most one may be given; ``subcommands``:
    ``{name: (params, help)}`` (or ``(params, help, exclusive)``), the chosen name in ``args.<dest>``;
    ``raw_help``: the description and epilog are printed as written (line breaks kept);
    ``defaults_in_help``: every option's help shows its default.  The parser's ``error(text)``
    is a usage error (exit status 2), for checks that involve several options."""
    formatter = (argparse.RawDescriptionHelpFormatter if raw_help else
                 argparse.ArgumentDefaultsHelpFormatter if defaults_in_help else argparse.HelpFormatter)
    parser = argparse.ArgumentParser(prog=prog, description=description, epilog=epilog,
                                     formatter_class=formatter)
    _fill(parser, params, exclusive)
    if subcommands:
        sub = parser.add_subparsers(dest=dest, metavar='{%s}' % ','.join(subcommands))
        sub.required = True
        for name, spec in subcommands.items():
            table, text = spec[0], spec[1]
            _fill(sub.add_parser(name, help=text, description=text, formatter_class=formatter),
                  table, spec[2] if len(spec) > 2 else ())
    return parser


def _fill(parser, params, exclusive):
    by_name = {p.name: p for p in params}
    unknown = [n for group in exclusive for n in group if n not in by_name]
    if unknown:
        raise ValueError(f"exclusive names no Param {', '.join(unknown)}")
    group_of = {}
    for names in exclusive:
        group = parser.add_mutually_exclusive_group()
        group_of.update((n, group) for n in names)
    for p in params:
        _add(group_of.get(p.name, parser), p)


def parse_args(params, argv=None, **kw):
    """``command_line(params, **kw).parse_args(argv)``: the values by Param name (an argparse
    Namespace); a bad value is a usage error naming the option (exit status 2)."""
    return command_line(params, **kw).parse_args(argv)


def port_param(name, default, doc):
    return Param(name, default, doc + ' (UDP port; 0 disables it)', minimum=0, maximum=65535)


#: the arguments that ask a node for its help (``rosrun morai_msgs <node> --help``)
HELP_ARGS = ('-h', '--help')


def node_help(node, params, package='morai_msgs'):
    """The text ``rosrun <package> <node> --help`` prints: how a ROS node takes its parameters and
    every declared one, its default and its doc (a node has no options of its own: rospy reads
    ``_name:=value`` from the command line and ``<param>`` / ``<arg>`` from a launch file)."""
    import textwrap
    lines = [f'usage: rosrun {package} {node} [_NAME:=VALUE ...] [__ns:=NS] [__name:=NAME]', '']
    lines += textwrap.wrap('A ROS node: it needs a running master (roscore, or roslaunch, which starts one). It '
                           'takes no options; its private parameters are set as _NAME:=VALUE on this command '
                           'line, or as <param> (an <arg> in the package\'s launch files) in a launch file.', 100)
    lines += ['', 'parameters (default, then what it does):']
    for p in params:
        if p.hidden:
            continue
        value = p.shown_default
        lines.append(f'  _{p.name}:={value}' if value else f'  _{p.name}:=  (empty)')
        lines += textwrap.wrap(p.doc, 96, initial_indent=' ' * 6, subsequent_indent=' ' * 6)
    return '\n'.join(lines) + '\n'
