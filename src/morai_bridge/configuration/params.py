"""Parameters declared as data, read with type checks; no ROS.

A node (or a program) declares its parameters as a list of :class:`Param`;
:func:`load` reads them all from a getter, coerces the type and checks ranges,
and raises :class:`ParamError` naming the parameter when a value is unusable.
Reading ``~name`` from the ROS parameter server is :func:`morai_bridge.ros.params.load`;
the same table feeds the launch-file and docs checks.
"""
import math


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
