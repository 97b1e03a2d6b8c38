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


class ParamError(ValueError):
    """A parameter has a value the node cannot use; the text names it, ``why`` is the reason alone."""

    def __init__(self, text, why=None):
        super().__init__(text)
        self.why = why or text


class Param:
    """One parameter: its name, default (whose type is the parameter's), one line of doc, and what
    values it takes: ``choices``, ``minimum`` / ``maximum`` (inclusive), ``above`` (exclusive).
    ``metavar`` names the value in a command line's help (default: the type's name)."""
    __slots__ = ('name', 'default', 'doc', 'choices', 'minimum', 'maximum', 'above', 'metavar')

    def __init__(self, name, default, doc, choices=None, minimum=None, maximum=None, above=None, metavar=None):
        self.name = name
        self.default = default
        self.doc = doc
        self.choices = choices
        self.minimum = minimum
        self.maximum = maximum
        self.above = above
        self.metavar = metavar

    def coerce(self, value):
        """``value`` as the parameter's type, checked against its choices and range; a ParamError otherwise."""
        kind = type(self.default)

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
        return value

    def takes(self, value):
        """True when ``value`` is one the parameter accepts (a default it does not accept is a sentinel)."""
        try:
            self.coerce(value)
        except ParamError:
            return False
        return True


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


def add_options(parser, params):
    """Add one option per Param to ``parser`` (an argparse parser or group): ``--name-with-dashes`` into
    ``args.name``, the default the Param's, help its doc.  A boolean is a pair ``--name`` / ``--no-name``;
    any other value is read by :meth:`Param.coerce` (type, choices, range), so a bad one is a usage error
    naming the option.  The help shows the default, unless it is empty or a value the option does not
    take (a sentinel: the doc says what it means)."""
    for p in params:
        flag = '--' + p.name.replace('_', '-')
        if type(p.default) is bool:
            parser.add_argument(flag, '--no-' + flag[2:], dest=p.name, action=_OnOff, default=p.default, help=p.doc)
            continue
        shown = p.default != '' and p.takes(p.default)
        parser.add_argument(flag, dest=p.name, type=_reader(p), default=p.default, choices=p.choices,
                            metavar=p.metavar or (None if p.choices else type(p.default).__name__.upper()),
                            help=p.doc + (' (default: %(default)s)' if shown else ''))


def port_param(name, default, doc):
    return Param(name, default, doc + ' (UDP port; 0 disables it)', minimum=0, maximum=65535)
