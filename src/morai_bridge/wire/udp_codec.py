"""The UDP codec: a registry of layouts (:mod:`.udp_schema`) compiled into decode and encode.

Read top to bottom:

1. :class:`DecodeError`, :class:`EncodeError` and the text rules of fixed-width fields;
2. :class:`RecordCodec`: a block of array records (objects, collisions, egos, NPCs);
3. :class:`VariantCodec`: one size variant of one message: one precompiled ``struct.Struct``
   for its fixed part, the struct tuple put in the class's field order, ``tuple.__new__``;
4. :class:`Protocol`: a whole registry: dispatch (spec section 1.4), ``decode``,
   ``decode_tolerant``, truncated datagrams, ``classify``, ``encode``, ``make``,
   ``to_wire_precision`` and the registries ``HEADERS`` / ``VARIANTS`` / ...

Framing: ``#NAME$`` (the first ``$`` within bytes 1..31), uint32 data_length, aux bytes (12, or
20 for ``#SimControl$`` / ``#SimStatus$``), payload, CR LF; dispatch on (header, data_length),
exact total length.  A registry may also hold binary messages (ground-vehicle commands:
msg_type at bytes 4..7, exact length) and one kind of ``$`` text message (:class:`TextMessage`,
the GPS NMEA sentences of the MORAI registry).  The public API is :mod:`.udp`; no ROS imports.
"""

import math
import struct
import types
from operator import itemgetter
from typing import Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Tuple

from .udp_schema import PAD_DOLLAR, PAD_SPACE, PUBLIC_MODULE, Field, MessageSpec, Records, \
    Variant, default_value, record_format

__all__ = ["DecodeError", "EncodeError", "TAIL", "Protocol", "TextMessage", "HeaderInfo",
           "VariantInfo", "DataLengthMismatch", "VariantCodec", "RecordCodec"]

TAIL = b"\r\n"
_U32 = struct.Struct("<I").unpack_from
_F32 = struct.Struct("<f")
_FLT_MAX = 3.4028234663852886e38
_new = tuple.__new__


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


DecodeError.__module__ = EncodeError.__module__ = PUBLIC_MODULE


# ----------------------------------------------------------------------------- text fields

_TEXTS: Dict[bytes, str] = {}


def text_of(raw: bytes) -> str:
    """A fixed-width text field: its trailing NUL and space padding removed.  Link and
    traffic-light ids repeat packet after packet, so the texts are memoised (up to 4096)."""
    text = _TEXTS.get(raw)
    if text is None:
        if len(_TEXTS) >= 4096:
            _TEXTS.clear()
        text = _TEXTS[raw] = raw.rstrip(b"\x00 ").decode("ascii", "replace")
    return text


def dollar_text_of(raw: bytes) -> str:
    """SimControl / SimStatus options: the text before '$' (without one: :func:`text_of`)."""
    body = raw.rstrip(b"\x00")
    if body.endswith(b"$"):
        return body[:-1].decode("ascii", "replace")
    return text_of(raw)


def _text_decoder(f: Field) -> Callable[[bytes], str]:
    return dollar_text_of if f.pad == PAD_DOLLAR else text_of


def _text_encoder(owner: str, f: Field) -> Callable[[str], bytes]:
    """str -> the field's bytes (ASCII, padded by its policy); EncodeError otherwise."""
    size, dollar = f.size, f.pad == PAD_DOLLAR
    limit = size - 1 if dollar else size
    fill = b" " if f.pad == PAD_SPACE else b"\x00"

    def encode_text(value) -> bytes:
        if not isinstance(value, str):
            raise EncodeError(f"{owner}.{f.name}: expected str, got {type(value).__name__}",
                              field=f.name)
        try:
            raw = value.encode("ascii")
        except UnicodeEncodeError:
            raise EncodeError(f"{owner}.{f.name}: text must be ASCII: {value!r}",
                              field=f.name) from None
        if len(raw) > limit:
            raise EncodeError(f"{owner}.{f.name}: {len(raw)} characters exceed the limit "
                              f"of {limit}: {value!r}", field=f.name)
        return (raw + b"$" if dollar else raw).ljust(size, fill)

    return encode_text


def _round_field(f: Field, value):
    """``value`` as it reads after the wire: float32 rounded, text normalised, bool."""
    if value is None:
        return None
    if f.is_text:
        return value.rstrip("\x00 ") if f.pad != PAD_DOLLAR and isinstance(value, str) else value
    if f.letter == "f":
        return tuple(map(_round32, value)) if f.is_array else _round32(value)
    return bool(value) if f.letter == "?" else value


def _round32(value):
    if isinstance(value, float):
        return _F32.unpack(_F32.pack(value))[0]
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _diagnose(owner: str, fields, values, exc: Exception) -> EncodeError:
    """Which field made ``struct.pack`` fail, as an EncodeError naming it."""
    for f, value in zip(fields, values):
        try:
            struct.pack("<" + f.code, *(value if f.is_array else (value,)))
        except (struct.error, OverflowError, TypeError) as err:
            return EncodeError(f"{owner}.{f.name}: {value!r} does not fit struct code "
                               f"{f.code!r} ({err})", field=f.name)
    return EncodeError(f"{owner}: cannot pack ({exc})")


# ----------------------------------------------------------------------------- records

class RecordCodec:
    """A block of ``count`` fixed-size records starting at byte ``start`` of the datagram.

    An empty slot is all zero bytes.  Decoding keeps the occupied slots in wire order (an
    empty slot, or an empty pair, is left out wherever it is) and stops where the rest of the
    block is zero; encoding writes the records into the leading slots.
    """

    def __init__(self, owner: str, rs: Records, start: int):
        self.rs, self.cls, self.fields = rs, rs.record, rs.fields
        if tuple(f.name for f in rs.fields) != self.cls._fields:
            raise ValueError(f"{owner}: record layout does not match {self.cls.__name__}")
        self.struct = struct.Struct(record_format(rs.fields))
        self.size, self.count, self.group = self.struct.size, rs.count, rs.group
        self.start, self.end = start, start + self.size * rs.count
        self.owner = f"{owner}.{rs.attr}"
        self.texts = [(i, _text_decoder(f)) for i, f in enumerate(rs.fields) if f.is_text]
        self.text_encoders = [(i, _text_encoder(self.owner, f))
                              for i, f in enumerate(rs.fields) if f.is_text]
        self.unpack = self.struct.unpack_from
        self.zero_group = bytes(self.size * rs.group)
        #: (byte offset of each record or pair, the zero bytes from there to the block's end)
        self.slots = [(start + k * self.size, bytes(self.size * (rs.count - k)))
                      for k in range(0, rs.count, rs.group)]

    def record(self, buf: bytes, pos: int):
        """The record at byte ``pos``."""
        values = self.unpack(buf, pos)
        if self.texts:
            values = list(values)
            for i, text in self.texts:
                values[i] = text(values[i])
        return _new(self.cls, values)

    def read(self, buf: bytes) -> tuple:
        """The occupied records (or pairs) of the block, in wire order."""
        out, zero, record, size, group = [], self.zero_group, self.record, self.size, self.group
        for pos, zero_rest in self.slots:
            if buf.startswith(zero_rest, pos):
                break
            if buf.startswith(zero, pos):
                continue
            if group == 1:
                out.append(record(buf, pos))
            else:
                out.append(tuple(record(buf, pos + j * size) for j in range(group)))
        return tuple(out)

    def pack_record(self, rec) -> bytes:
        if type(rec) is not self.cls:
            raise EncodeError(f"{self.owner}: expected {self.cls.__name__} items, got "
                              f"{type(rec).__name__}", field=self.rs.attr)
        values = list(rec)
        for i, encode_text in self.text_encoders:
            values[i] = encode_text(values[i])
        try:
            return self.struct.pack(*values)
        except (struct.error, OverflowError, TypeError) as exc:
            raise _diagnose(self.owner, self.fields, values, exc) from None

    def write(self, items) -> bytes:
        if not isinstance(items, (tuple, list)):
            raise EncodeError(f"{self.owner}: expected a tuple, got {type(items).__name__}",
                              field=self.rs.attr)
        if len(items) > self.count // self.group:
            raise EncodeError(f"{self.owner}: at most {self.count // self.group} entries, got "
                              f"{len(items)}", field=self.rs.attr)
        if self.group == 1:
            parts = [self.pack_record(r) for r in items]
        else:
            parts = []
            for item in items:
                if not isinstance(item, (tuple, list)) or len(item) != self.group:
                    raise EncodeError(f"{self.owner}: each entry must be a {self.group}-tuple "
                                      f"of {self.cls.__name__}", field=self.rs.attr)
                parts.extend(self.pack_record(r) for r in item)
        return b"".join(parts) + bytes(self.size) * (self.count - len(parts))

    def round(self, items) -> tuple:
        def one(rec):
            return type(rec)._make(map(_round_field, type(rec)._layout, rec))
        if self.group == 1:
            return tuple(map(one, items))
        return tuple(tuple(map(one, item)) for item in items)


# ----------------------------------------------------------------------------- variants

def _getter(indices) -> Callable[[tuple], tuple]:
    """A function returning the items at ``indices`` of a tuple, always as a tuple."""
    if len(indices) >= 2:
        return itemgetter(*indices)
    return lambda m: tuple(m[i] for i in indices)


class VariantCodec:
    """One size variant of one message, compiled.

    Decoding: ``fixed.unpack_from`` gives the fixed part in wire order; text fields become
    str, arrays (ground-vehicle steer angles) tuples, and the records, the fields other
    variants carry (None) and ``data_length`` follow; ``order`` puts that in the class's field
    order when it differs from the wire's.

    ``strict``: encode checks value types first (a bool field takes only bool/0/1, an integer
    field no bool or float, a float field no bool or text, float32 at most FLT_MAX) and names
    the first offending field.  Without it, whatever ``struct`` accepts is sent.
    """

    def __init__(self, spec: MessageSpec, v: Variant, strict: bool = False):
        self.spec, self.variant, self.cls = spec, v, spec.cls
        self.owner = owner = spec.name
        self.data_length = v.data_length
        names = self.cls._fields
        if spec.header is not None:
            self.offset = len(spec.header) + 4 + spec.aux_length
            #: the datagram's first bytes: header, data_length, zero aux bytes
            self.head = spec.header + struct.pack("<I", v.data_length) + bytes(spec.aux_length)
            self.prefix = self.head[:len(spec.header) + 4]
            if not v.prefix_outside_length and v.payload_size != v.data_length:
                raise ValueError(f"{owner}: layout is {v.payload_size} B, "
                                 f"data_length says {v.data_length}")
        else:
            self.offset, self.head, self.prefix = 0, b"", None
        self.tail = TAIL if v.tail else b""
        size = self.offset + v.payload_size
        #: accepted datagram length -> whether it ends in CR LF
        self.totals = {size + len(self.tail): v.tail}
        if v.untailed_ok:
            self.totals[size] = False
        self.total_lengths = tuple(self.totals)

        self.fixed = struct.Struct(record_format(v.fields))
        self.fixed_fields = v.fields
        stored = [f for f in v.fields if f.const is None]
        self.stored_fields = stored
        #: field name -> what make() gives a field not named (values are immutable: shared)
        self.defaults = {f.name: default_value(f) for f in stored}
        self.records = None
        if v.records is not None:
            self.records = RecordCodec(owner, v.records, self.offset + self.fixed.size)
        self.rec_index = names.index(v.records.attr) if v.records is not None else None

        # decode plan
        self.texts = [(i, _text_decoder(f)) for i, f in enumerate(stored) if f.is_text]
        self.spans = None           # set when arrays or constants need regrouping
        if any(f.is_array or f.const is not None for f in v.fields):
            self.spans, pos = [], 0
            for f in v.fields:
                n = f.count if f.is_array else 1
                if f.const is None:
                    self.spans.append((pos, n if f.is_array else 0))
                pos += n
        carried = [f.name for f in stored] + ([v.records.attr] if v.records else [])
        others = [n for n in names if n not in carried and n != "data_length"]
        self.extra = (None,) * len(others) + (
            (v.data_length,) if "data_length" in names else ())
        got = carried + others + (["data_length"] if "data_length" in names else [])
        order = [got.index(n) for n in names]
        self.order = None if order == list(range(len(names))) else itemgetter(*order)
        self.absent = tuple(names.index(n) for n in others)

        # encode plan
        self.getter = _getter([names.index(f.name) for f in stored])
        self.text_encoders = [(i, _text_encoder(owner, f))
                              for i, f in enumerate(stored) if f.is_text]
        if strict:
            self.checks = [(names.index(f.name), _strict_check(owner, f)) for f in stored]
            self.encode = self._encode_strict

    def decode(self, buf: bytes):
        """The message of a datagram whose framing the caller has checked."""
        values = self.fixed.unpack_from(buf, self.offset)
        if self.spans is not None:
            values = [values[i] if n == 0 else values[i:i + n] for i, n in self.spans]
        elif self.texts or self.records is not None:
            values = list(values)
        for i, text in self.texts:
            values[i] = text(values[i])
        if self.records is not None:
            values.append(self.records.read(buf))
        values += self.extra
        return _new(self.cls, values if self.order is None else self.order(values))

    def encode(self, m) -> bytes:
        for i in self.absent:
            if m[i] is not None:
                name = self.cls._fields[i]
                raise EncodeError(f"{self.owner}.{name} is not carried by data_length "
                                  f"{self.data_length}; set it to None", field=name)
        values = list(self.getter(m))
        for i, encode_text in self.text_encoders:
            values[i] = encode_text(values[i])
        stored = values
        if self.spans is not None:
            values = self._spread(values)
        try:
            payload = self.fixed.pack(*values)
        except (struct.error, OverflowError, TypeError) as exc:
            raise _diagnose(self.owner, self.stored_fields, stored, exc) from None
        if self.records is not None:
            payload += self.records.write(m[self.rec_index])
        return self.head + payload + self.tail

    def _spread(self, values) -> list:
        """Stored values -> struct values: wire constants put in, arrays spread out."""
        out, stored = [], iter(zip(self.stored_fields, values))
        for f in self.fixed_fields:
            if f.const is not None:
                out.append(f.const)
                continue
            _, value = next(stored)
            if not f.is_array:
                out.append(value)
            elif isinstance(value, (tuple, list)) and len(value) == f.count:
                out.extend(value)
            else:
                raise EncodeError(f"{self.owner}.{f.name}: expected {f.count} values, "
                                  f"got {value!r}", field=f.name)
        return out

    def _encode_strict(self, m) -> bytes:
        for i, check in self.checks:
            check(m[i])
        return VariantCodec.encode(self, m)

    def round(self, m):
        values = list(m)
        for f in self.stored_fields:
            i = self.cls._fields.index(f.name)
            values[i] = _round_field(f, values[i])
        if self.records is not None:
            values[self.rec_index] = self.records.round(values[self.rec_index])
        return self.cls._make(values)


def _strict_check(owner: str, f: Field) -> Callable[[object], None]:
    """A function raising EncodeError when a value has the wrong type for ``f``."""
    name, letter = f.name, f.letter
    if f.is_text:
        return _text_encoder(owner, f)  # raises as encode would; the bytes are dropped
    if f.is_array:
        raise ValueError(f"{owner}.{name}: strict checks of array fields are not implemented")

    def fail(what):
        raise EncodeError(f"{owner}.{name}: {what}", field=name)

    if letter == "?":
        def check(value):
            if not isinstance(value, (bool, int)) or value not in (0, 1):
                fail(f"expected a bool, got {value!r}")
    elif letter in "fd":
        limit = _FLT_MAX if letter == "f" else math.inf

        def check(value):
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                fail(f"expected a number, got {value!r}")
            try:
                too_big = math.isfinite(value) and abs(value) > limit
            except OverflowError:  # an int beyond any float
                too_big = True
            if too_big:
                fail(f"{value!r} does not fit {'float32' if letter == 'f' else 'float64'}")
    else:
        pack = struct.Struct("<" + f.code).pack

        def check(value):
            if not isinstance(value, int) or isinstance(value, bool):
                fail(f"expected an int, got {value!r}")
            try:
                pack(value)
            except struct.error:
                fail(f"{value!r} does not fit struct code {f.code!r}")
    return check


# ----------------------------------------------------------------------------- protocol

class HeaderInfo(NamedTuple):
    """What a ``#NAME$`` header may carry."""

    header: bytes
    aux_length: int
    types: Mapping[int, str]                  # data_length -> message-type name
    lengths: Mapping[int, Tuple[int, ...]]    # data_length -> accepted datagram lengths

    @property
    def data_lengths(self) -> frozenset:
        return frozenset(self.types)

    @property
    def type_names(self) -> frozenset:
        return frozenset(self.types.values())


class VariantInfo(NamedTuple):
    """Public description of one size variant."""

    cls: type
    type_name: str
    header: Optional[bytes]
    data_length: Optional[int]
    msg_type: Optional[int]
    direction: str
    aux_length: int
    total_lengths: Tuple[int, ...]   # first entry = what encode produces
    fields: Tuple[Field, ...]        # fixed part of the payload (binary: incl. header)
    records: Optional[Records]
    current: bool
    note: str


class DataLengthMismatch(NamedTuple):
    """Why :meth:`Protocol.decode_tolerant` decoded a datagram the strict decoder rejects:
    its total length (with the CR LF tail) identifies exactly one variant of its header, but
    its data_length field says something else."""

    header: bytes       # e.g. b'#VehicleCollision$'
    data_length: int    # the value the datagram carries
    expected: int       # the data_length of the variant its length identifies
    length: int         # datagram size, bytes
    type_name: str      # message-type name of that variant, e.g. 'vehicle_collision'

    def __str__(self):
        return (f"{_describe(self.header)}: data_length {self.data_length} received, "
                f"expected {self.expected} for a {self.length}-byte {self.type_name} "
                f"datagram; decoded by its length")


HeaderInfo.__module__ = VariantInfo.__module__ = DataLengthMismatch.__module__ = PUBLIC_MODULE


class TextMessage(NamedTuple):
    """A message that travels as text starting with ``$`` (one per Protocol)."""

    cls: type                          # its class (has TYPE_NAME)
    label: str                         # 'NMEA', for error texts
    parse: Callable[[bytes], object]   # bytes -> message, raises ``error``
    build: Callable[[object], bytes]   # message -> bytes, raises ``error``
    error: type                        # the exception type of parse/build


def _describe(header: bytes) -> str:
    return header.decode("ascii", "backslashreplace")


class Protocol:
    """The compiled codec of one registry of message specs (see the module docstring).

    ``name`` appears in error texts ("not a MORAI datagram"); ``text`` adds the ``$`` text
    message; ``strict`` makes encode check value types first (see :class:`VariantCodec`).
    """

    def __init__(self, name: str, specs: Iterable[MessageSpec], *,
                 text: Optional[TextMessage] = None, strict: bool = False):
        self.name, self.text = name, text
        self.specs = specs = tuple(specs)
        self._by_key: Dict[Tuple[bytes, int], VariantCodec] = {}        # (header, data_length)
        self._by_class: Dict[type, Dict[Optional[int], VariantCodec]] = {}
        self._by_msg_type: Dict[int, VariantCodec] = {}                  # binary framing
        self._by_size: Dict[int, List[VariantCodec]] = {}                # tailed '#NAME$' sizes
        headers: Dict[bytes, HeaderInfo] = {}
        variants: List[VariantInfo] = []
        for spec in specs:
            table = self._by_class.setdefault(spec.cls, {})
            for v in spec.variants:
                c = table[v.data_length] = VariantCodec(spec, v, strict)
                variants.append(VariantInfo(
                    spec.cls, spec.type_name, spec.header, v.data_length, spec.msg_type,
                    spec.direction, spec.aux_length, c.total_lengths, v.fields, v.records,
                    v.data_length == spec.current, v.note))
                if spec.header is None:
                    self._by_msg_type[spec.msg_type] = c
                    continue
                if (spec.header, v.data_length) in self._by_key:
                    raise ValueError(f"duplicate variant {(spec.header, v.data_length)}")
                self._by_key[spec.header, v.data_length] = c
                for n, tailed in c.totals.items():
                    if tailed:
                        self._by_size.setdefault(n, []).append(c)
                h = headers.setdefault(spec.header, HeaderInfo(spec.header, spec.aux_length,
                                                               {}, {}))
                if h.aux_length != spec.aux_length:
                    raise ValueError(f"{spec.header!r}: aux length differs between messages")
                h.types[v.data_length] = spec.type_name
                h.lengths[v.data_length] = c.total_lengths
            if spec.header is not None and "data_length" not in spec.cls._fields:
                if len(spec.variants) != 1:
                    raise ValueError(f"{spec.name}: several variants need a data_length field")
                table[None] = table[spec.variants[0].data_length]

        #: Header bytes -> HeaderInfo (accepted data_lengths, type names, total lengths).
        self.HEADERS: Mapping[bytes, HeaderInfo] = types.MappingProxyType({
            k: h._replace(types=types.MappingProxyType(h.types),
                          lengths=types.MappingProxyType(h.lengths))
            for k, h in headers.items()})
        #: Every supported variant of every message.
        self.VARIANTS: Tuple[VariantInfo, ...] = tuple(variants)
        #: Every message class (the text message class last), in declaration order.
        self.MESSAGE_CLASSES: Tuple[type, ...] = tuple(s.cls for s in specs) + (
            (text.cls,) if text is not None else ())
        #: Record classes used inside array messages.
        self.RECORD_CLASSES: Tuple[type, ...] = tuple(dict.fromkeys(
            v.records.record for s in specs for v in s.variants if v.records is not None))

        accepted = ["'#NAME$' framing"]
        if text is not None:
            accepted.append(f"'$' {text.label} text")
        if self._by_msg_type:
            accepted.append("a binary header with msg_type "
                            + "/".join(map(str, sorted(self._by_msg_type))))
        accepted = " or ".join(accepted) if len(accepted) <= 2 else \
            ", ".join(accepted[:-1]) + ", or " + accepted[-1]
        self._a_name = ("an " if name[:1].upper() in "AEIOU" else "a ") + name
        self._not_ours = f"not {self._a_name} datagram: starts with {{!r}} (expected " \
                         f"{accepted}); received {{}} bytes"

    def __repr__(self):
        return f"<Protocol {self.name}: {len(self.specs)} messages>"

    def message_classes(self) -> Tuple[type, ...]:
        """Every message class, for property tests and fuzzing."""
        return self.MESSAGE_CLASSES

    def variants_of(self, cls: type) -> Tuple[VariantInfo, ...]:
        """The supported variants of a message class (current variant first)."""
        return tuple(sorted((v for v in self.VARIANTS if v.cls is cls), key=lambda v: not v.current))

    # ------------------------------------------------------------------ decode

    def decode(self, datagram):
        """The message of one UDP datagram; DecodeError for anything malformed.

        bytes, bytearray and memoryview are accepted; other types raise TypeError.  The common
        case first: the datagram's size names the tailed '#NAME$' variants it can be, and one
        whose header and data_length it starts with and which ends in CR LF decodes it.
        Everything else (untailed and binary variants, NMEA text, every error) is
        :meth:`_decode_other`.
        """
        if datagram.__class__ is not bytes:
            if not isinstance(datagram, (bytes, bytearray, memoryview)):
                raise TypeError(f"decode() needs bytes, got {type(datagram).__name__}")
            datagram = bytes(datagram)
        for codec in self._by_size.get(len(datagram), ()):
            if datagram.startswith(codec.prefix) and datagram.endswith(TAIL):
                return codec.decode(datagram)
        return self._decode_other(datagram, len(datagram))

    def _decode_other(self, d: bytes, n: int):
        if not d:
            raise DecodeError("empty datagram; received 0 bytes", length=0)
        if d[0] == 0x23:    # '#'
            decoder = self._decode_framed
        elif d[0] == 0x24 and self.text is not None:    # '$'
            decoder = self._decode_text
        else:
            return self._decode_binary(d, n)
        try:
            return decoder(d, n)
        except DecodeError:
            codec = self._binary_codec(d, n)  # a binary command whose header_version is '#'/'$'
            if codec is None:
                raise
            return codec.decode(d)

    def _expected(self, header: bytes) -> str:
        info = self.HEADERS[header]
        return ", ".join(f"{dl} -> {' or '.join(map(str, info.lengths[dl]))} B"
                         for dl in sorted(info.types))

    def _decode_framed(self, d: bytes, n: int):
        end = d.find(b"$", 1, 32)
        if end < 0:
            raise DecodeError(f"no '$' ending the header within the first 32 bytes "
                              f"(starts {d[:16]!r}); received {n} bytes", length=n)
        header = d[:end + 1]
        if header not in self.HEADERS:
            raise DecodeError(f"unknown header {_describe(header)!r}; received {n} bytes",
                              header=header, length=n)
        what = f"{_describe(header)}: "
        accepted = f"accepted data_length -> datagram size: {self._expected(header)}"
        if n < end + 5:
            raise DecodeError(f"{what}truncated, received {n} bytes; {accepted}",
                              header=header, length=n)
        dl = _U32(d, end + 1)[0]
        codec = self._by_key.get((header, dl))
        if codec is None:
            raise DecodeError(f"{what}unsupported data_length {dl}; received {n} bytes; "
                              f"{accepted}", header=header, data_length=dl, length=n)
        facts = dict(header=header, data_length=dl, length=n, expected=codec.total_lengths)
        tailed = codec.totals.get(n)
        if tailed is None:
            raise DecodeError(f"{what}data_length {dl} needs "
                              f"{' or '.join(map(str, codec.total_lengths))} bytes, received "
                              f"{n} ({accepted})", **facts)
        if tailed and not d.endswith(TAIL):
            raise DecodeError(f"{what}data_length {dl}, {n} bytes: last two bytes {d[-2:]!r} "
                              f"are not CR LF", **facts)
        return codec.decode(d)

    def _binary_codec(self, d: bytes, n: int) -> Optional[VariantCodec]:
        """The binary codec if ``d`` has its msg_type and exact length."""
        codec = self._by_msg_type.get(_U32(d, 4)[0]) if n >= 8 else None
        return codec if codec is not None and n == codec.total_lengths[0] else None

    def _decode_binary(self, d: bytes, n: int):
        codec = self._by_msg_type.get(_U32(d, 4)[0]) if n >= 8 else None
        if codec is None:
            raise DecodeError(self._not_ours.format(d[:8], n), length=n)
        if n != codec.total_lengths[0]:
            raise DecodeError(f"binary msg_type {codec.spec.msg_type} ({codec.owner}) needs "
                              f"{codec.total_lengths[0]} bytes, received {n}", length=n,
                              expected=codec.total_lengths)
        return codec.decode(d)

    def _decode_text(self, d: bytes, n: int):
        try:
            return self.text.parse(d)
        except self.text.error as exc:
            raise DecodeError(f"{self.text.label}: {exc}; received {n} bytes", length=n) from None

    def decode_tolerant(self, datagram):
        """``(message, None)`` as :meth:`decode` gives it, or ``(message, warning)``.

        For receivers (the bridge, the dump tool): a ``#NAME$`` datagram that ends in CR LF
        and whose total length matches exactly one variant of its header is decoded as that
        variant even when its data_length disagrees (MORAI's own example writes data_length 0
        for the NPC vehicle collision); ``warning`` is a :class:`DataLengthMismatch`.
        Everything else raises :class:`DecodeError` as :meth:`decode` does, which stays strict.
        """
        try:
            return self.decode(datagram), None
        except DecodeError as exc:
            if exc.header is None or exc.data_length is None:
                raise
            d = bytes(datagram)
            found = [c for c in self._by_size.get(len(d), ()) if c.spec.header == exc.header]
            if len(found) != 1 or not d.endswith(TAIL) or found[0].data_length == exc.data_length:
                raise
            codec = found[0]
            return codec.decode(d), DataLengthMismatch(
                exc.header, exc.data_length, codec.data_length, len(d), codec.spec.type_name)

    def complete_truncated(self, prefix, length: Optional[int] = None):
        """``(datagram, slots_read, slots_total)``: a decodable datagram made from the start
        of one whose end is missing (e.g. the first IP fragment of a 2160-byte Object Info
        that a port-filtered capture kept).

        The header and data_length (in ``prefix``) must name a variant with an array block,
        ``prefix`` must hold its fixed part and be shorter than the datagram; ``length`` (the
        size the UDP header declares), when given, must be that variant's.  The slots
        ``prefix`` holds whole are kept, every later slot is made empty and the CR LF tail
        added (spec section 4.5: slots are nearest first, so the missing ones are the
        farthest).  Raises :class:`DecodeError`.
        """
        d = bytes(prefix)
        n = len(d)
        end = d.find(b"$", 1, 32) if d[:1] == b"#" else -1
        header = d[:end + 1] if end > 0 else None
        if header is None or header not in self.HEADERS or n < end + 5:
            raise DecodeError(f"truncated datagram: no known '#NAME$' header and data_length "
                              f"in its first {n} bytes", header=header, length=n)
        dl = _U32(d, end + 1)[0]
        codec = self._by_key.get((header, dl))
        if codec is None:
            raise DecodeError(f"{_describe(header)}: truncated datagram with unsupported "
                              f"data_length {dl}", header=header, data_length=dl, length=n)
        full, rc = codec.total_lengths[0], codec.records
        where = f"{_describe(header)} data_length {dl} ({full} B)"
        facts = dict(header=header, data_length=dl, length=n, expected=codec.total_lengths)
        if rc is None:
            raise DecodeError(f"{where}: truncated to {n} bytes and has no array records to "
                              f"keep", **facts)
        if length is not None and length not in codec.totals:
            raise DecodeError(f"{where}: the datagram was {length} bytes long, not a size of "
                              f"this variant", **facts)
        if n >= full:
            raise DecodeError(f"{where}: {n} bytes is not truncated; use decode()", **facts)
        if n < rc.start:
            raise DecodeError(f"{where}: truncated to {n} bytes, before the end of its fixed "
                              f"part (byte {rc.start})", **facts)
        groups = (n - rc.start) // (rc.size * rc.group)
        keep = rc.start + groups * rc.size * rc.group
        data = d[:keep] + bytes(full - len(codec.tail) - keep) + codec.tail
        return data, groups, rc.count // rc.group

    def decode_truncated(self, prefix, length: Optional[int] = None):
        """``(message, slots_read, slots_total)`` of a datagram whose end is missing: the
        array records ``prefix`` holds whole (see :meth:`complete_truncated`)."""
        data, read, total = self.complete_truncated(prefix, length)
        return self.decode(data), read, total

    @staticmethod
    def header_of(datagram) -> Optional[bytes]:
        """The ``#NAME$`` header of a datagram ('$' within bytes 1..31), or None."""
        try:
            d = bytes(datagram[:32])
        except TypeError:
            return None
        end = d.find(b"$", 1, 32) if d[:1] == b"#" else -1
        return d[:end + 1] if end > 0 else None

    def classify(self, datagram) -> Optional[str]:
        """Message-type name of a datagram from its header and data_length (or binary
        msg_type), or None; length and tail are not checked (``decode`` does that)."""
        try:
            d = bytes(datagram)
        except TypeError:
            return None
        if not d:
            return None
        if d[0] == 0x23:
            end = d.find(b"$", 1, 32)
            if end > 0 and len(d) >= end + 5:
                codec = self._by_key.get((d[:end + 1], _U32(d, end + 1)[0]))
                if codec is not None:
                    return codec.spec.type_name
        elif d[0] == 0x24 and self.text is not None and self._binary_codec(d, len(d)) is None:
            return self.text.cls.TYPE_NAME
        codec = self._by_msg_type.get(_U32(d, 4)[0]) if len(d) >= 8 else None
        return codec.spec.type_name if codec is not None else None

    # ------------------------------------------------------------------ encode

    def _codec_for(self, message) -> VariantCodec:
        table = self._by_class.get(type(message))
        if table is None:
            raise TypeError(f"encode() needs a message object, got {type(message).__name__}")
        dl = getattr(message, "data_length", None)
        codec = table.get(dl)
        if codec is None:
            raise EncodeError(f"{type(message).__name__}: unsupported data_length {dl!r} "
                              f"(supported: {', '.join(map(str, table))})", field="data_length")
        return codec

    def encode(self, message) -> bytes:
        """The datagram of ``message`` (its data_length's variant); EncodeError or TypeError."""
        if self.text is not None and type(message) is self.text.cls:
            try:
                return self.text.build(message)
            except self.text.error as exc:
                raise EncodeError(str(exc), field="raw") from None
        return self._codec_for(message).encode(message)

    def to_wire_precision(self, message):
        """``message`` with float32 fields rounded and text normalised as the wire does, so
        that ``decode(encode(m)) == to_wire_precision(m)``.  float64 fields and integers are
        unchanged, booleans become bool; EncodeError when a float does not fit float32."""
        if self.text is not None and type(message) is self.text.cls:
            return message
        try:
            return self._codec_for(message).round(message)
        except OverflowError as exc:
            raise EncodeError(f"{type(message).__name__}: {exc}") from None

    def make(self, cls: type, data_length: Optional[int] = None, **fields):
        """A ``cls`` message of the given variant (default: current).

        That variant's fields default to their declared default (zero / '' / False / () unless
        the layout says otherwise), the fields it does not carry to None.  Unknown field names
        raise TypeError.
        """
        table = self._by_class.get(cls)
        if table is None:
            raise TypeError(f"{cls!r} is not {self._a_name} message class")
        if data_length is None:
            data_length = cls.CURRENT_DATA_LENGTH
        codec = table.get(data_length)
        if codec is None:
            raise EncodeError(f"{cls.__name__}: unsupported data_length {data_length!r}",
                              field="data_length")
        unknown = set(fields) - set(cls._fields)
        if unknown:
            raise TypeError(f"{cls.__name__} has no field(s) {', '.join(sorted(unknown))}")
        values = dict.fromkeys(cls._fields)
        values.update(codec.defaults)
        if codec.records is not None:
            values[codec.variant.records.attr] = ()
        if "data_length" in values:
            values["data_length"] = data_length
        values.update(fields)
        return cls(**values)
