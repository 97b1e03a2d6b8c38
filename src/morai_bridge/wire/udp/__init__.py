"""MORAI SIM UDP codec: datagram bytes <-> immutable message objects.

Public API
----------
``decode(datagram) -> message``
    Validates framing (header, data_length, total length, CR LF tail; section 1.4
    of the spec) and returns a message object.  Any malformed input raises
    :class:`DecodeError` (a ValueError) - never another exception type for bytes
    input.  ``bytearray``/``memoryview`` are accepted; other types raise TypeError.
``encode(message) -> bytes``
    The complete datagram for the variant named by ``message.data_length``.
    Raises :class:`EncodeError` (a ValueError) for text that is too long or not
    ASCII, values that do not fit their wire type, unsupported data_length,
    fields the chosen variant does not carry (they must be None), or too many
    records.  NaN and infinities are encoded as given: range checks of commands
    belong to the node, not to this layer.
``to_wire_precision(message)``
    ``message`` as it will read after a trip over the wire (float32 fields
    rounded, fixed-width text normalised).  For any encodable message
    ``decode(encode(m)) == to_wire_precision(m)`` (except NaN, which never
    compares equal, and all-zero array records, which read as empty slots).
``make(cls, data_length=None, **fields)``
    Build a message of a given variant with zero defaults for its fields and
    None for the fields that variant does not carry.
``HEADERS``
    ``{b'#MoraiInfo$': HeaderInfo(...)}``: accepted data_lengths, message-type
    names and total lengths per header, for dispatch and diagnostics.
``decode_tolerant(datagram) -> (message, DataLengthMismatch | None)``
    For receivers: as ``decode``, but a ``#NAME$`` datagram with CR LF whose total
    length matches exactly one variant of its header is decoded as that variant
    even when its data_length disagrees, with a :class:`DataLengthMismatch`
    warning (received and expected data_length).  ``decode`` stays strict.
``decode_truncated(prefix, length=None) -> (message, slots_read, slots_total)``
    The array records held whole by the start of a datagram whose end is missing
    (first IP fragment of an Object Info in a port-filtered capture);
    ``complete_truncated`` gives the equivalent full-size datagram instead.
``classify(datagram) -> str | None``
    Cheap message-type name of a datagram (no validation beyond the header).
``MESSAGE_CLASSES`` / ``message_classes()``, ``RECORD_CLASSES``, ``VARIANTS``,
``variants_of(cls)``
    Registries for tests, fuzzers and documentation.

Message classes are namedtuple classes made from the layout tables in
:mod:`morai_bridge.wire.udp.layouts`; each docstring lists field units.
Fixed-width strings decode with trailing NUL and spaces stripped.  Array records
(objects, collisions, egos, NPCs) are tuples holding only the occupied slots, in
wire order; encode writes them into the leading slots.

How it is built: :mod:`.layouts` declares the tables into the MORAI registry
(:mod:`.schema`), and :class:`~.codec.Protocol` compiles them once at
import; this module only names the result.  It must never import ROS.

The package, the MORAI UDP protocol and what the project declares about its streams:

``layouts``   the byte layout of every message, as tables (and the field docs)
``schema``    how a layout is written down: :class:`Field` rows, made into message classes
``codec``     :class:`Protocol`: a registry compiled into decode and encode, per datagram
``framing``   which variant a datagram is; refused, tolerant and truncated datagrams
``values``    what encode accepts of a field's value; the wire's precision
``errors``    :class:`DecodeError`, :class:`EncodeError`, :class:`DataLengthMismatch`
``nmea``      the GPS stream's NMEA sentences (the registry's text messages)
``streams``   every UDP stream between a user and the simulator, declared once (:class:`Stream`)
``lockstep``  the emulator's synchronous-mode extension (its own registry)
``samples``   sample messages per variant and per stream (benchmarks, tests, fuzz seeds)
"""

from typing import Mapping, Tuple

from . import nmea as _nmea
from .nmea import NmeaSentence
from .codec import TAIL, DataLengthMismatch, DecodeError, EncodeError, HeaderInfo, \
    Protocol, TextMessage, VariantInfo
from .layouts import *  # noqa: F401,F403  (message classes)
from .layouts import __all__ as _LAYOUT_NAMES
from .schema import MORAI as _REGISTRY

__all__ = list(_LAYOUT_NAMES) + [
    "DecodeError", "EncodeError", "decode", "encode", "to_wire_precision", "make",
    "decode_tolerant", "DataLengthMismatch", "decode_truncated", "complete_truncated",
    "classify", "HEADERS", "HeaderInfo", "VARIANTS", "VariantInfo", "variants_of",
    "MESSAGE_CLASSES", "RECORD_CLASSES", "message_classes", "NmeaSentence", "TAIL",
]

#: The MORAI registry, compiled (GPS NMEA sentences are its '$' text messages).
PROTOCOL = Protocol("MORAI", _REGISTRY, text=TextMessage(
    NmeaSentence, "NMEA", _nmea.parse, _nmea.encode, _nmea.NmeaError))

decode = PROTOCOL.decode
encode = PROTOCOL.encode
decode_tolerant = PROTOCOL.decode_tolerant
decode_truncated = PROTOCOL.decode_truncated
complete_truncated = PROTOCOL.complete_truncated
classify = PROTOCOL.classify
make = PROTOCOL.make
to_wire_precision = PROTOCOL.to_wire_precision
message_classes = PROTOCOL.message_classes
variants_of = PROTOCOL.variants_of

#: Header bytes -> HeaderInfo (accepted data_lengths, type names, total lengths).
HEADERS: Mapping[bytes, HeaderInfo] = PROTOCOL.HEADERS
#: Every supported variant of every message.
VARIANTS: Tuple[VariantInfo, ...] = PROTOCOL.VARIANTS
#: Every message class (including NmeaSentence), in declaration order.
MESSAGE_CLASSES: Tuple[type, ...] = PROTOCOL.MESSAGE_CLASSES
#: Record classes used inside array messages.
RECORD_CLASSES: Tuple[type, ...] = PROTOCOL.RECORD_CLASSES
