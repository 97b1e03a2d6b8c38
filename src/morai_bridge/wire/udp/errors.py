"""What the UDP codec raises and warns: :class:`DecodeError`, :class:`EncodeError` and
:class:`DataLengthMismatch` (the warning of a tolerant decode).

Their public home is :mod:`morai_bridge.wire.udp` (their ``__module__`` says so, for reprs and pickling); the codec
modules (:mod:`.codec`, :mod:`.framing`, :mod:`.values`) raise them.  No ROS imports.
"""

from typing import NamedTuple, Optional, Tuple

from .schema import PUBLIC_MODULE

__all__ = ["DecodeError", "EncodeError", "DataLengthMismatch", "describe"]


class DecodeError(ValueError):
    """A datagram cannot be decoded.  Attributes give what is known about it."""

    def __init__(self, message: str, *, header: Optional[bytes] = None,
                 data_length: Optional[int] = None, length: Optional[int] = None,
                 expected: Tuple[int, ...] = ()):
        super().__init__(message)
        self.header = header
        self.data_length = data_length
        self.length = length
        self.expected = tuple(expected)


class EncodeError(ValueError):
    """A message cannot be encoded; ``field`` names the offending field if known."""

    def __init__(self, message: str, *, field: Optional[str] = None):
        super().__init__(message)
        self.field = field


def describe(header: bytes) -> str:
    """A ``#NAME$`` header as text for error messages (bytes that are not ASCII escaped)."""
    return header.decode("ascii", "backslashreplace")


class DataLengthMismatch(NamedTuple):
    """Why :meth:`~.framing.Framing.decode_tolerant` decoded a datagram the strict decoder
    rejects: its total length (with the CR LF tail) identifies exactly one variant of its header,
    but its data_length field says something else."""

    header: bytes       # e.g. b'#VehicleCollision$'
    data_length: int    # the value the datagram carries
    expected: int       # the data_length of the variant its length identifies
    length: int         # datagram size, bytes
    type_name: str      # message-type name of that variant, e.g. 'vehicle_collision'

    def __str__(self):
        return (f"{describe(self.header)}: data_length {self.data_length} received, "
                f"expected {self.expected} for a {self.length}-byte {self.type_name} "
                f"datagram; decoded by its length")


DecodeError.__module__ = EncodeError.__module__ = DataLengthMismatch.__module__ = PUBLIC_MODULE
