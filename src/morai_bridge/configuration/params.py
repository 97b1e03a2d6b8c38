"""Parameters declared as data, read with type checks; no ROS.

A node (or a program) declares its parameters as a list of :class:`Param`;
:func:`load` reads them all from a getter, coerces the type and checks ranges,
and raises :class:`ParamError` naming the parameter when a value is unusable.
Reading ``~name`` from the ROS parameter server is :func:`morai_bridge.ros.params.load`;
the same table feeds the launch-file and docs checks.
"""
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
    """A parameter has a value the node cannot use; the text names it."""


class Param(object):
    __slots__ = ('name', 'default', 'doc', 'choices', 'minimum', 'maximum')

    def __init__(self, name, default, doc, choices=None, minimum=None, maximum=None):
        self.name = name
        self.default = default
        self.doc = doc
        self.choices = choices
        self.minimum = minimum
        self.maximum = maximum

    def coerce(self, value):
        kind = type(self.default)
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
            raise ParamError('~%s=%r: expected a %s (%s)' % (self.name, value, kind.__name__, self.doc)) from None
        if self.choices is not None and value not in self.choices:
            raise ParamError('~%s=%r: must be one of %s' % (self.name, value, ', '.join(map(repr, self.choices))))
        if self.minimum is not None and value < self.minimum:
            raise ParamError('~%s=%r: must be >= %r' % (self.name, value, self.minimum))
        if self.maximum is not None and value > self.maximum:
            raise ParamError('~%s=%r: must be <= %r' % (self.name, value, self.maximum))
        return value


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


def port_param(name, default, doc):
    return Param(name, default, doc + ' (UDP port; 0 disables it)', minimum=0, maximum=65535)
