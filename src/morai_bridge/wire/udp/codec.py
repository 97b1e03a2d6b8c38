"""The UDP codec: a registry of layouts (:mod:`.schema`) compiled into decode and encode, and
the code that runs for every datagram.

Read top to bottom:

1. the text rules of decoding fixed-width fields (:func:`text_of`);
2. :class:`RecordCodec`: a block of array records (objects, collisions, egos, NPCs);
3. :class:`VariantCodec`: one size variant of one message: one precompiled ``struct.Struct``
   for its fixed part, the struct tuple put in the class's field order, ``tuple.__new__``;
4. :class:`Protocol`: a whole registry: compiles it, ``decode`` (its fast path: the
   datagram's size, header and data_length name the variant), ``encode``, ``make``,
   ``to_wire_precision`` and the registries ``VARIANTS`` / ``MESSAGE_CLASSES`` / ...

The rest of the codec is beside it, so that this module holds all the code that decoding a
datagram of the fast path runs, and encoding a message without text fields (the path of the ego
status and of ``/ctrl_cmd``, whose modules docs/architecture.md counts): :mod:`.errors` (what is
raised and warned), :mod:`.values` (what encode accepts of a field's value, text encoding, the
wire's precision), :mod:`.framing` (the base of :class:`Protocol`: the dispatch tables,
``HEADERS``, the framings other than a tailed ``#NAME$`` datagram of a known size, why a datagram
is refused, ``decode_tolerant``, truncated datagrams, ``classify``).  This module's ``__all__``
still names the classes of those modules that the public API (:mod:`morai_bridge.wire.udp`) and :mod:`.lockstep`
import from here.  No ROS imports.
"""

import struct
from operator import itemgetter
from typing import Callable, Dict, Iterable, NamedTuple, Optional, Tuple

from .errors import DataLengthMismatch, DecodeError, EncodeError
from .framing import TAIL, Framing, HeaderInfo, TextMessage
from .schema import PAD_DOLLAR, PUBLIC_MODULE, Field, MessageSpec, Records, Variant, \
    default_value, record_format
from .values import diagnose, round_field, strict_check, text_encoder

__all__ = ["DecodeError", "EncodeError", "TAIL", "Protocol", "TextMessage", "HeaderInfo",
           "VariantInfo", "DataLengthMismatch", "VariantCodec", "RecordCodec"]

_new = tuple.__new__


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
        self.text_encoders = [(i, text_encoder(self.owner, f))
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
            raise diagnose(self.owner, self.fields, values, exc) from None

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
            return type(rec)._make(map(round_field, type(rec)._layout, rec))
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
        self.text_encoders = [(i, text_encoder(owner, f))
                              for i, f in enumerate(stored) if f.is_text]
        if strict:
            self.checks = [(names.index(f.name), strict_check(owner, f)) for f in stored]
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
            raise diagnose(self.owner, self.stored_fields, stored, exc) from None
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
            values[i] = round_field(f, values[i])
        if self.records is not None:
            values[self.rec_index] = self.records.round(values[self.rec_index])
        return self.cls._make(values)


# ----------------------------------------------------------------------------- protocol

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


VariantInfo.__module__ = PUBLIC_MODULE


class Protocol(Framing):
    """The compiled codec of one registry of message specs (see the module docstring).

    ``name`` appears in error texts ("not a MORAI datagram"); ``text`` adds the ``$`` text
    message; ``strict`` makes encode check value types first (see :class:`VariantCodec`).
    Everything about a datagram the fast path of :meth:`decode` does not take (``decode_tolerant``,
    ``complete_truncated``, ``decode_truncated``, ``classify``, ``header_of``, ``HEADERS``) is
    :class:`~.framing.Framing`'s.
    """

    def __init__(self, name: str, specs: Iterable[MessageSpec], *,
                 text: Optional[TextMessage] = None, strict: bool = False):
        self.name, self.text = name, text
        self.specs = specs = tuple(specs)
        self._by_class: Dict[type, Dict[Optional[int], VariantCodec]] = {}
        codecs, variants = [], []
        for spec in specs:
            table = self._by_class.setdefault(spec.cls, {})
            for v in spec.variants:
                c = table[v.data_length] = VariantCodec(spec, v, strict)
                codecs.append(c)
                variants.append(VariantInfo(
                    spec.cls, spec.type_name, spec.header, v.data_length, spec.msg_type,
                    spec.direction, spec.aux_length, c.total_lengths, v.fields, v.records,
                    v.data_length == spec.current, v.note))
            if spec.header is not None and "data_length" not in spec.cls._fields:
                if len(spec.variants) != 1:
                    raise ValueError(f"{spec.name}: several variants need a data_length field")
                table[None] = table[spec.variants[0].data_length]
        self._index(codecs)     # the dispatch tables (_by_size, ...) and HEADERS

        #: Every supported variant of every message.
        self.VARIANTS: Tuple[VariantInfo, ...] = tuple(variants)
        #: Every message class (the text message class last), in declaration order.
        self.MESSAGE_CLASSES: Tuple[type, ...] = tuple(s.cls for s in specs) + (
            (text.cls,) if text is not None else ())
        #: Record classes used inside array messages.
        self.RECORD_CLASSES: Tuple[type, ...] = tuple(dict.fromkeys(
            v.records.record for s in specs for v in s.variants if v.records is not None))

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
        :meth:`~.framing.Framing._decode_other`'s.
        """
        if datagram.__class__ is not bytes:
            if not isinstance(datagram, (bytes, bytearray, memoryview)):
                raise TypeError(f"decode() needs bytes, got {type(datagram).__name__}")
            datagram = bytes(datagram)
        for codec in self._by_size.get(len(datagram), ()):
            if datagram.startswith(codec.prefix) and datagram.endswith(TAIL):
                return codec.decode(datagram)
        return self._decode_other(datagram, len(datagram))

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
