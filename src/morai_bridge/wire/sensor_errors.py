"""Error type shared by the sensor codecs (camera, velodyne, lidar2d).

:class:`SensorDecodeError` is a :class:`morai_bridge.wire.udp.DecodeError` (so a
``ValueError``) that also carries ``reason``: a short, stable key ('length',
'header', 'tail', 'flag', ...) that counters and diagnostics can group by.
Encoders raise :class:`morai_bridge.wire.udp.EncodeError`, re-exported here.

No ROS imports.
"""

from typing import Optional, Tuple

from .udp import DecodeError, EncodeError

__all__ = ["SensorDecodeError", "EncodeError", "DecodeError", "check_bytes"]


class SensorDecodeError(DecodeError):
    """A sensor datagram cannot be decoded.

    Attributes: ``reason`` (counter key), ``length`` (datagram length),
    ``header`` (its first bytes, when relevant), ``expected`` (accepted lengths).
    """

    def __init__(self, message: str, reason: str, *, header: Optional[bytes] = None,
                 length: Optional[int] = None, expected: Tuple[int, ...] = ()):
        super().__init__(message, header=header, length=length, expected=expected)
        self.reason = reason


def check_bytes(datagram) -> bytes:
    """``datagram`` as ``bytes`` (bytes, bytearray and memoryview accepted).

    Anything else is a programming error and raises TypeError, as in
    :mod:`morai_bridge.wire.udp`.
    """
    if isinstance(datagram, bytes):
        return datagram
    if isinstance(datagram, (bytearray, memoryview)):
        return bytes(datagram)
    raise TypeError(f"expected bytes, bytearray or memoryview, got {type(datagram).__name__}")
