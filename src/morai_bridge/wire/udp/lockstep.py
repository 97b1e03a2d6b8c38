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

The tables are declared with :func:`~.schema.define_message` into a
registry of their own and compiled by the same :class:`~.codec.Protocol`
as the MORAI messages, so :func:`morai_bridge.wire.udp.decode` does not accept
them and :func:`decode` here accepts nothing else.  Encoding is strict about
value types (a bool field takes only bool/0/1, an int field no bool/float).

Public API, following :mod:`morai_bridge.wire.udp`: :func:`decode` (raises
:class:`~morai_bridge.wire.udp.DecodeError`), :func:`encode` (raises
:class:`~morai_bridge.wire.udp.EncodeError`), :func:`make`, :func:`classify`,
``HEADERS``, ``MESSAGE_CLASSES`` and :func:`layout` for documentation.

No ROS imports.
"""

import struct
from typing import Dict, NamedTuple, Optional, Sequence, Tuple, Type

from ..enums import CtrlMode
from .codec import DecodeError, EncodeError, Protocol
from .schema import PAD_NUL, Field, Registry, Variant, define_message, record_format

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

#: The extension's own registry (classes claim to live in this module).
REGISTRY = Registry(__name__, data_length_field=False)


def _message(name: str, type_name: str, header: bytes, direction: str, doc: str,
             fields: Sequence[Field]) -> type:
    """One single-variant message; data_length = payload size."""
    fields = tuple(fields)
    dl = struct.calcsize(record_format(fields))
    return define_message(name, type_name, header, direction, doc,
                          [Variant(dl, fields, note=f"{len(header) + 4 + AUX_LENGTH + dl + 2} B")],
                          current=dl,
                          aux_length=AUX_LENGTH, registry=REGISTRY)


EmuSyncCmd = _message(
    "EmuSyncCmd", "emu_sync_cmd", b"#EmuSyncCmd$", "user->sim",
    "Start (``start=True``) or stop the emulator's lock-step mode.", (
        Field("start", "?", "bool; True starts sync mode, False returns to real time"),
        Field("time_step_ms", "I", "ms; frame length, a positive multiple of the emulator "
                                   "step (20 ms by default)", default=20),
        Field("user_id", "30s", "ASCII, at most 30 characters; the owner of the sync session",
              PAD_NUL),
    ))

EmuSyncTick = _message(
    "EmuSyncTick", "emu_sync_tick", b"#EmuSyncTick$", "user->sim",
    "Advance the simulation by one frame, optionally applying a control command first.", (
        Field("frame", "Q", "uint64; the frame to advance to (current + 1); 0 = 'the next "
                            "one', unchecked"),
        Field("has_ctrl", "?", "bool; apply the fields below (as an Ego Ctrl Cmd with "
                               f"ctrl_mode {int(CtrlMode.AUTO)}) before stepping"),
        Field("gear", "b", "int8; 1 P, 2 R, 3 N, 4 D (0 = keep the current gear)"),
        Field("cmd_type", "b", "int8; 1 throttle, 2 velocity, 3 acceleration (as Ego Ctrl Cmd)",
              default=1),
        Field("velocity", "f", "km/h; target speed, cmd_type 2"),
        Field("acceleration", "f", "m/s^2; target acceleration, cmd_type 3"),
        Field("accel", "f", "0..1; accelerator pedal, cmd_type 1"),
        Field("brake", "f", "0..1; brake pedal, cmd_type 1"),
        Field("steer", "f", "-1..1; normalised front-wheel angle, + = right (as Ego Ctrl Cmd)"),
    ))

EmuSyncState = _message(
    "EmuSyncState", "sync_state", b"#EmuSyncState$", "sim->user",
    "The emulator's answer to an EmuSyncCmd or EmuSyncTick.", (
        Field("reply_to", "B", f"uint8; {REPLY_CMD} answers an EmuSyncCmd, {REPLY_TICK} an "
                               f"EmuSyncTick ({REPLY_NONE} none)"),
        Field("sync_on", "?", "bool; sync mode active after the request"),
        Field("result", "?", "bool; the request was carried out"),
        Field("paused", "?", "bool; the simulation is paused"),
        Field("reason", "B", "uint8; why the request was refused, 0 on success: "
                             + ", ".join(f"{k} {v}" for k, v in REASON_NAMES.items())),
        Field("frame", "Q", "uint64; current frame number (after the tick, if one was made)"),
        Field("time_step_ms", "I", "uint32; ms; frame length of the sync session (0 when off)"),
        Field("sec", "i", "int32; s; simulated time of the current frame"),
        Field("nsec", "i", "int32; ns; fraction of the simulated time"),
        Field("user_id", "30s", "ASCII; owner of the sync session ('' when off)", PAD_NUL),
    ))

#: The compiled extension registry (strict value-type checks on encode).
PROTOCOL = Protocol("EmuSync", REGISTRY, strict=True)

MESSAGE_CLASSES: Tuple[type, ...] = PROTOCOL.MESSAGE_CLASSES


class SyncHeader(NamedTuple):
    """One ``#EmuSync...$`` header: its class, data_length and datagram length (one variant each)."""

    header: bytes
    cls: type
    data_length: int
    length: int


#: Header bytes -> what that header carries.
HEADERS: Dict[bytes, SyncHeader] = {
    v.header: SyncHeader(v.header, v.cls, v.data_length, v.total_lengths[0])
    for v in PROTOCOL.VARIANTS}

_CLASS_OF_HEADER = {h.header: h.cls for h in HEADERS.values()}

#: ``decode(datagram) -> message``: anything malformed, or not EmuSync, raises DecodeError.
decode = PROTOCOL.decode
#: ``encode(message) -> bytes``: the complete datagram; EncodeError names the bad field.
encode = PROTOCOL.encode


def layout(cls: type):
    """``[(payload offset, name, struct code, size)]`` of a message, for documentation."""
    (info,) = PROTOCOL.variants_of(cls)
    out, off = [], 0
    for f in info.fields:
        out.append((off, f.name, f.code, f.size))
        off += f.size
    return out


def make(cls: Type, **fields):
    """A message with the class defaults for the fields not given."""
    return PROTOCOL.make(cls, **fields)


def classify(datagram) -> Optional[str]:
    """Class name of an EmuSync datagram from its header, or None."""
    cls = _CLASS_OF_HEADER.get(PROTOCOL.header_of(datagram))
    return cls.__name__ if cls is not None else None
