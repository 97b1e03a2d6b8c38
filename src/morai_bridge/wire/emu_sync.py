"""Codec of the emulator's synchronous (lock-step) mode: an extension of ours.

The MORAI simulator offers a synchronous mode only through its gRPC/ROS
interfaces; the UDP protocol has none.  The simulator emulator
(:mod:`morai_bridge.emu.sim`) adds one on its own ports so that the bridge can
implement the morai_msgs sync services (MoraiSyncModeCmdSrv,
MoraiSyncModeCtrlCmdSrv, MoraiWaitForTickSrv, ...) against it.  These packets
never travel on a simulator port and the simulator would not understand them.

Framing is the MORAI one (spec section 1), so the same tools can read it::

    '#' NAME '$' | uint32 data_length | 12 zero bytes (aux) | payload | CR LF

Messages (payload layouts are the tables below; docs/emulator.md has the byte
offsets):

* ``#EmuSyncCmd$`` user -> emulator: start or stop the sync mode.
* ``#EmuSyncTick$`` user -> emulator: advance one frame, optionally with an
  embedded control command.
* ``#EmuSyncState$`` emulator -> user: the reply to each of the above.

Public API, following :mod:`morai_bridge.wire.udp`: :func:`decode` (raises
:class:`~morai_bridge.wire.udp.DecodeError`), :func:`encode` (raises
:class:`~morai_bridge.wire.udp.EncodeError`), :func:`make`, ``HEADERS``,
``MESSAGE_CLASSES`` and :func:`layout` for documentation.

No ROS imports.
"""

import math
import struct
from typing import Dict, NamedTuple, Optional, Tuple, Type

from .udp import TAIL, DecodeError, EncodeError

__all__ = [
    "EmuSyncCmd", "EmuSyncTick", "EmuSyncState", "decode", "encode", "make", "layout", "classify",
    "HEADERS", "MESSAGE_CLASSES", "DecodeError", "EncodeError",
    "REPLY_NONE", "REPLY_CMD", "REPLY_TICK",
    "REASON_OK", "REASON_NOT_SYNC", "REASON_WRONG_FRAME", "REASON_BAD_TIME_STEP",
    "REASON_OTHER_USER", "REASON_PAUSED", "REASON_NAMES",
]

AUX_LENGTH = 12

# EmuSyncState.reply_to: which request the state answers.
REPLY_NONE = 0
REPLY_CMD = 1
REPLY_TICK = 2

# EmuSyncState.reason: why a request was refused (REASON_OK when result is True).
REASON_OK = 0
REASON_NOT_SYNC = 1        # tick while sync mode is off
REASON_WRONG_FRAME = 2     # tick frame is neither current + 1 nor 0
REASON_BAD_TIME_STEP = 3   # time_step_ms not a positive multiple of the emulator step
REASON_OTHER_USER = 4      # sync mode is owned by another user_id
REASON_PAUSED = 5          # the simulation is paused (SimControl SIM_PAUSE)
REASON_NAMES = {
    REASON_OK: "ok", REASON_NOT_SYNC: "sync mode is off", REASON_WRONG_FRAME: "wrong frame",
    REASON_BAD_TIME_STEP: "invalid time_step", REASON_OTHER_USER: "owned by another user",
    REASON_PAUSED: "simulation paused",
}


class EmuSyncCmd(NamedTuple):
    """Start (``start=True``) or stop the emulator's lock-step mode."""

    start: bool = False
    """bool; True starts sync mode, False returns to real time."""
    time_step_ms: int = 20
    """ms; frame length, a positive multiple of the emulator step (20 ms by default)."""
    user_id: str = ""
    """ASCII, at most 30 characters; the owner of the sync session."""


class EmuSyncTick(NamedTuple):
    """Advance the simulation by one frame, optionally applying a control command first."""

    frame: int = 0
    """uint64; the frame to advance to (current + 1); 0 = 'the next one', unchecked."""
    has_ctrl: bool = False
    """bool; apply the fields below (as an Ego Ctrl Cmd with ctrl_mode 2) before stepping."""
    gear: int = 0
    """int8; 1 P, 2 R, 3 N, 4 D (0 = keep the current gear)."""
    cmd_type: int = 1
    """int8; 1 throttle, 2 velocity, 3 acceleration (as Ego Ctrl Cmd)."""
    velocity: float = 0.0
    """km/h; target speed, cmd_type 2."""
    acceleration: float = 0.0
    """m/s^2; target acceleration, cmd_type 3."""
    accel: float = 0.0
    """0..1; accelerator pedal, cmd_type 1."""
    brake: float = 0.0
    """0..1; brake pedal, cmd_type 1."""
    steer: float = 0.0
    """-1..1; normalised front-wheel angle, + = right (as Ego Ctrl Cmd)."""


class EmuSyncState(NamedTuple):
    """The emulator's answer to an EmuSyncCmd or EmuSyncTick."""

    reply_to: int = REPLY_NONE
    """uint8; 1 answers an EmuSyncCmd, 2 an EmuSyncTick."""
    sync_on: bool = False
    """bool; sync mode active after the request."""
    result: bool = False
    """bool; the request was carried out."""
    paused: bool = False
    """bool; the simulation is paused."""
    reason: int = REASON_OK
    """uint8; why the request was refused (REASON_*), 0 on success."""
    frame: int = 0
    """uint64; current frame number (after the tick, if one was made)."""
    time_step_ms: int = 0
    """uint32; ms; frame length of the sync session (0 when off)."""
    sec: int = 0
    """int32; s; simulated time of the current frame."""
    nsec: int = 0
    """int32; ns; fraction of the simulated time."""
    user_id: str = ""
    """ASCII; owner of the sync session ('' when off)."""


# (name, struct code, unit / meaning) in wire order.  The units live in the
# class docstrings above; the table only fixes order and width.
_LAYOUTS: Dict[type, Tuple[bytes, Tuple[Tuple[str, str], ...]]] = {
    EmuSyncCmd: (b"#EmuSyncCmd$", (
        ("start", "?"),
        ("time_step_ms", "I"),
        ("user_id", "30s"),
    )),
    EmuSyncTick: (b"#EmuSyncTick$", (
        ("frame", "Q"),
        ("has_ctrl", "?"),
        ("gear", "b"),
        ("cmd_type", "b"),
        ("velocity", "f"),
        ("acceleration", "f"),
        ("accel", "f"),
        ("brake", "f"),
        ("steer", "f"),
    )),
    EmuSyncState: (b"#EmuSyncState$", (
        ("reply_to", "B"),
        ("sync_on", "?"),
        ("result", "?"),
        ("paused", "?"),
        ("reason", "B"),
        ("frame", "Q"),
        ("time_step_ms", "I"),
        ("sec", "i"),
        ("nsec", "i"),
        ("user_id", "30s"),
    )),
}

MESSAGE_CLASSES: Tuple[type, ...] = tuple(_LAYOUTS)


class _Compiled(NamedTuple):
    cls: type
    header: bytes
    struct: struct.Struct
    fields: Tuple[Tuple[str, str], ...]
    head: bytes          # header + data_length + aux
    total: int


_BY_CLASS: Dict[type, _Compiled] = {}
_BY_HEADER: Dict[bytes, _Compiled] = {}
for _cls, (_hdr, _rows) in _LAYOUTS.items():
    if tuple(n for n, _ in _rows) != _cls._fields:
        raise ValueError(f"{_cls.__name__}: layout table does not match the class fields")
    _st = struct.Struct("<" + "".join(code for _, code in _rows))
    _c = _Compiled(_cls, _hdr, _st, _rows, _hdr + struct.pack("<I", _st.size) + bytes(AUX_LENGTH),
                   len(_hdr) + 4 + AUX_LENGTH + _st.size + len(TAIL))
    _BY_CLASS[_cls] = _c
    _BY_HEADER[_hdr] = _c
del _cls, _hdr, _rows, _st, _c


class HeaderInfo(NamedTuple):
    header: bytes
    cls: type
    data_length: int
    length: int


#: Header bytes -> what that header carries.
HEADERS: Dict[bytes, HeaderInfo] = {
    c.header: HeaderInfo(c.header, c.cls, c.struct.size, c.total) for c in _BY_CLASS.values()}


def layout(cls: type):
    """``[(payload offset, name, struct code, size)]`` of a message, for documentation."""
    c = _BY_CLASS[cls]
    out, off = [], 0
    for name, code in c.fields:
        size = struct.calcsize("<" + code)
        out.append((off, name, code, size))
        off += size
    return out


def _text_field(cls_name: str, name: str, value, size: int) -> bytes:
    if not isinstance(value, str):
        raise EncodeError(f"{cls_name}.{name}: expected str, got {type(value).__name__}",
                          field=name)
    try:
        raw = value.encode("ascii")
    except UnicodeEncodeError:
        raise EncodeError(f"{cls_name}.{name}: text must be ASCII: {value!r}", field=name) from None
    if len(raw) > size:
        raise EncodeError(f"{cls_name}.{name}: {len(raw)} characters exceed the limit of "
                          f"{size}: {value!r}", field=name)
    return raw.ljust(size, b"\x00")


def encode(message) -> bytes:
    """The complete datagram for an EmuSync* message."""
    c = _BY_CLASS.get(type(message))
    if c is None:
        raise TypeError(f"encode() needs an EmuSync message, got {type(message).__name__}")
    values = []
    for (name, code), value in zip(c.fields, message):
        if code.endswith("s"):
            value = _text_field(c.cls.__name__, name, value, int(code[:-1]))
        elif code == "?":
            if not isinstance(value, (bool, int)) or value not in (0, 1):
                raise EncodeError(f"{c.cls.__name__}.{name}: expected a bool, got {value!r}",
                                  field=name)
            value = bool(value)
        elif code == "f":
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise EncodeError(f"{c.cls.__name__}.{name}: expected a number, got {value!r}",
                                  field=name)
            if math.isfinite(value) and abs(value) > 3.4028234663852886e38:
                raise EncodeError(f"{c.cls.__name__}.{name}: {value!r} does not fit float32",
                                  field=name)
        else:
            if not isinstance(value, int) or isinstance(value, bool):
                raise EncodeError(f"{c.cls.__name__}.{name}: expected an int, got {value!r}",
                                  field=name)
            try:
                struct.pack("<" + code, value)
            except struct.error:
                raise EncodeError(f"{c.cls.__name__}.{name}: {value!r} does not fit struct "
                                  f"code {code!r}", field=name) from None
        values.append(value)
    return c.head + c.struct.pack(*values) + TAIL


def decode(datagram):
    """Decode one EmuSync datagram; anything malformed raises DecodeError."""
    if not isinstance(datagram, (bytes, bytearray, memoryview)):
        raise TypeError(f"decode() needs bytes, got {type(datagram).__name__}")
    d = bytes(datagram)
    n = len(d)
    if n == 0 or d[0] != 0x23:
        raise DecodeError(f"not an EmuSync datagram (must start with '#'); received {n} bytes",
                          length=n)
    end = d.find(b"$", 1, 32)
    if end < 0:
        raise DecodeError(f"no '$' ending the header within the first 32 bytes; received "
                          f"{n} bytes", length=n)
    header = d[:end + 1]
    c = _BY_HEADER.get(header)
    if c is None:
        raise DecodeError(f"unknown header {header!r} (expected one of "
                          f"{', '.join(h.decode() for h in _BY_HEADER)}); received {n} bytes",
                          header=header, length=n)
    if n < end + 5:
        raise DecodeError(f"{header.decode()}: truncated, received {n} bytes, needs {c.total}",
                          header=header, length=n, expected=(c.total,))
    dl = struct.unpack_from("<I", d, end + 1)[0]
    if dl != c.struct.size:
        raise DecodeError(f"{header.decode()}: unsupported data_length {dl} (expected "
                          f"{c.struct.size}); received {n} bytes", header=header,
                          data_length=dl, length=n, expected=(c.total,))
    if n != c.total:
        raise DecodeError(f"{header.decode()}: needs {c.total} bytes, received {n}",
                          header=header, data_length=dl, length=n, expected=(c.total,))
    if not d.endswith(TAIL):
        raise DecodeError(f"{header.decode()}: last two bytes {d[-2:]!r} are not CR LF",
                          header=header, data_length=dl, length=n, expected=(c.total,))
    values = list(c.struct.unpack_from(d, len(c.head)))
    for i, (name, code) in enumerate(c.fields):
        if code.endswith("s"):
            values[i] = values[i].rstrip(b"\x00 ").decode("ascii", "replace")
    return c.cls._make(values)


def make(cls: Type, **fields):
    """A message with the class defaults for the fields not given."""
    if cls not in _BY_CLASS:
        raise TypeError(f"{cls!r} is not an EmuSync message class")
    return cls(**fields)


def classify(datagram) -> Optional[str]:
    """Class name of an EmuSync datagram from its header, or None."""
    d = bytes(datagram[:32])
    end = d.find(b"$", 1)
    if not d.startswith(b"#") or end < 0:
        return None
    c = _BY_HEADER.get(d[:end + 1])
    return c.cls.__name__ if c is not None else None
