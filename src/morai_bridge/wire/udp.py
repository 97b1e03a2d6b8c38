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
``classify(datagram) -> str | None``
    Cheap message-type name of a datagram (no validation beyond the header).
``MESSAGE_CLASSES`` / ``message_classes()``, ``RECORD_CLASSES``, ``VARIANTS``,
``variants_of(cls)``
    Registries for tests, fuzzers and documentation.

Message classes are ``typing.NamedTuple`` subclasses generated from the layout
tables in :mod:`morai_bridge.wire.udp_layouts`; each docstring lists field
units.  Fixed-width strings decode with trailing NUL and spaces stripped.
Array records (objects, collisions, egos, NPCs) are tuples holding only the
occupied slots, in wire order; encode writes them into the leading slots.

This module must never import ROS.
"""

import struct
import types
from operator import itemgetter
from typing import Callable, Dict, List, Mapping, NamedTuple, Optional, Tuple

from . import nmea as _nmea
from .nmea import NmeaSentence
from .udp_layouts import *  # noqa: F401,F403  (message classes)
from .udp_layouts import __all__ as _LAYOUT_NAMES
from .udp_schema import (PAD_DOLLAR, PAD_SPACE, SPECS, Field, MessageSpec, Records,
                         Variant, record_format, zero_value)

__all__ = list(_LAYOUT_NAMES) + [
    "DecodeError", "EncodeError", "decode", "encode", "to_wire_precision", "make",
    "classify", "HEADERS", "HeaderInfo", "VARIANTS", "VariantInfo", "variants_of",
    "MESSAGE_CLASSES", "RECORD_CLASSES", "message_classes", "NmeaSentence", "TAIL",
]

TAIL = b"\r\n"
_new = tuple.__new__
_U32 = struct.Struct("<I").unpack_from
_F32 = struct.Struct("<f")


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


# ----------------------------------------------------------------------------- text

_TEXT_CACHE: Dict[bytes, str] = {}
_TEXT_CACHE_MAX = 4096


def _text(raw: bytes) -> str:
    # Ids (link ids, traffic-light ids) repeat from packet to packet: memoise.
    text = _TEXT_CACHE.get(raw)
    if text is None:
        text = raw.rstrip(b"\x00 ").decode("ascii", "replace")
        if len(_TEXT_CACHE) >= _TEXT_CACHE_MAX:
            _TEXT_CACHE.clear()
        _TEXT_CACHE[raw] = text
    return text


def _dollar_text(raw: bytes) -> str:
    body = raw.rstrip(b"\x00")
    if body.endswith(b"$"):
        body = body[:-1]
    else:  # not terminated as documented: fall back to the general rule
        body = body.rstrip(b"\x00 ")
    return body.decode("ascii", "replace")


def _text_decoder(f: Field) -> Callable[[bytes], str]:
    return _dollar_text if f.pad == PAD_DOLLAR else _text


def _text_encoder(owner: str, f: Field) -> Callable[[str], bytes]:
    size = f.size
    dollar = f.pad == PAD_DOLLAR
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
        if dollar:
            raw += b"$"
        return raw.ljust(size, fill)

    return encode_text


def _normal_text(f: Field, value):
    if f.pad == PAD_DOLLAR or not isinstance(value, str):
        return value
    return value.rstrip("\x00 ")


def _round32(value):
    if isinstance(value, float):
        return _F32.unpack(_F32.pack(value))[0]
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _diagnose(owner: str, fields, values, exc: Exception) -> EncodeError:
    """Find which field made ``struct.pack`` fail and say so."""
    for f, value in zip(fields, values):
        try:
            if f.is_array:
                struct.pack("<" + f.code, *value)
            else:
                struct.pack("<" + f.code, value)
        except (struct.error, OverflowError, TypeError) as err:
            return EncodeError(f"{owner}.{f.name}: {value!r} does not fit struct code "
                               f"{f.code!r} ({err})", field=f.name)
    return EncodeError(f"{owner}: cannot pack ({exc})")


# ----------------------------------------------------------------------------- records

class _RecordCodec:
    """Decode/encode a block of ``count`` fixed-size records."""

    def __init__(self, owner: str, rs: Records, start: int):
        self.rs = rs
        self.cls = rcls = rs.record
        names = [f.name for f in rs.fields]
        if sorted(names) != sorted(rcls._fields):
            raise ValueError(f"{owner}: record layout does not match {rcls.__name__}")
        self.struct = st = struct.Struct(record_format(rs.fields))
        self.size = size = st.size
        self.count = count = rs.count
        self.group = group = rs.group
        self.start = start
        self.end = end = start + size * count
        self.owner = f"{owner}.{rs.attr}"
        self.fields = rs.fields
        zero_block = bytes(size * count)
        zero_rec = bytes(size)
        zero_t = st.unpack(zero_rec)
        iter_unpack = st.iter_unpack

        # raw struct tuple -> record object
        texts = [(i, _text_decoder(f)) for i, f in enumerate(rs.fields) if f.is_text]
        n = len(rs.fields)
        if names == list(rcls._fields) and not texts:
            def build(t, cls=rcls):
                return _new(cls, t)
        elif len(texts) == 1 and texts[0][0] == n - 1 and names == list(rcls._fields):
            conv = texts[0][1]

            def build(t, cls=rcls, conv=conv):
                return _new(cls, t[:-1] + (conv(t[-1]),))
        elif len(texts) == 1:
            k, conv = texts[0]
            getter = itemgetter(*[n if (i == k) else i
                                  for i in (names.index(x) for x in rcls._fields)])

            def build(t, cls=rcls, k=k, conv=conv, getter=getter):
                return _new(cls, getter(t + (conv(t[k]),)))
        else:  # pragma: no cover - no such record layout today
            raise ValueError(f"{owner}: unsupported record layout")
        self.build = build

        if group == 1:
            zero_tail = {k * size: bytes(size * (count - k)) for k in range(count)}

            def read(buf):
                block = buf[start:end]
                if block == zero_block:
                    return ()
                out = []
                pos = 0
                for t in iter_unpack(block):
                    # An empty slot is all-zero bytes.  The tuple test is the quick
                    # check; equal tuples are confirmed on the bytes (-0.0 == 0.0).
                    if t != zero_t or block[pos:pos + size] != zero_rec:
                        out.append(build(t))
                    elif block[pos:] == zero_tail[pos]:
                        break  # every remaining slot is empty
                    pos += size
                return tuple(out)
        else:
            span = size * group

            def read(buf):
                block = buf[start:end]
                if block == zero_block:
                    return ()
                recs = list(iter_unpack(block))
                zero_span = bytes(span)
                out = []
                for g in range(0, count, group):
                    if block[g * size:g * size + span] != zero_span:
                        out.append(tuple(build(t) for t in recs[g:g + group]))
                return tuple(out)
        self.read = read

        # record object -> bytes
        self.wire_getter = itemgetter(*[rcls._fields.index(x) for x in names])
        self.text_encoders = [(i, _text_encoder(self.owner, f))
                              for i, f in enumerate(rs.fields) if f.is_text]
        self.zero_rec = zero_rec

    def pack_record(self, rec) -> bytes:
        if type(rec) is not self.cls:
            raise EncodeError(f"{self.owner}: expected {self.cls.__name__} items, got "
                              f"{type(rec).__name__}", field=self.rs.attr)
        values = list(self.wire_getter(rec))
        for i, conv in self.text_encoders:
            values[i] = conv(values[i])
        try:
            return self.struct.pack(*values)
        except (struct.error, OverflowError, TypeError) as exc:
            raise _diagnose(self.owner, self.fields, values, exc) from None

    def write(self, items) -> bytes:
        if not isinstance(items, (tuple, list)):
            raise EncodeError(f"{self.owner}: expected a tuple, got {type(items).__name__}",
                              field=self.rs.attr)
        slots = self.count // self.group
        if len(items) > slots:
            raise EncodeError(f"{self.owner}: at most {slots} entries, got {len(items)}",
                              field=self.rs.attr)
        parts = []
        if self.group == 1:
            parts = [self.pack_record(r) for r in items]
        else:
            for item in items:
                if not isinstance(item, (tuple, list)) or len(item) != self.group:
                    raise EncodeError(f"{self.owner}: each entry must be a {self.group}-tuple "
                                      f"of {self.cls.__name__}", field=self.rs.attr)
                parts.extend(self.pack_record(r) for r in item)
        parts.append(self.zero_rec * (self.count - len(parts)))
        return b"".join(parts)

    def round(self, items):
        if self.group == 1:
            return tuple(_round_record(r) for r in items)
        return tuple(tuple(_round_record(r) for r in item) for item in items)


def _round_record(rec):
    layout = type(rec)._layout
    return type(rec)._make(_round_field(f, v) for f, v in zip(layout, rec))


def _round_field(f: Field, value):
    if value is None:
        return None
    if f.is_text:
        return _normal_text(f, value)
    if f.letter == "f":
        return tuple(_round32(v) for v in value) if f.is_array else _round32(value)
    if f.letter == "?":
        return bool(value)
    return value


# ----------------------------------------------------------------------------- variants

class _Codec:
    """One compiled variant: decoder, encoder and framing facts."""

    def __init__(self, spec: MessageSpec, v: Variant):
        self.spec = spec
        self.variant = v
        self.cls = cls = spec.cls
        self.owner = owner = spec.name
        self.header = spec.header
        self.data_length = v.data_length
        fields = cls._fields
        index = {name: i for i, name in enumerate(fields)}

        if spec.header is not None:
            h = len(spec.header)
            self.payload_offset = off = h + 4 + spec.aux_length
            self.head = (spec.header + struct.pack("<I", v.data_length)
                         + bytes(spec.aux_length))
            if not v.prefix_outside_length and v.payload_size != v.data_length:
                raise ValueError(f"{owner}: layout is {v.payload_size} B, "
                                 f"data_length says {v.data_length}")
        else:
            self.payload_offset = off = 0
            self.head = b""
        base = off + v.payload_size
        totals = {base + 2: True} if v.tail else {base: False}
        if v.untailed_ok:
            totals[base] = False
        self.totals = totals
        self.total_lengths = tuple(totals)

        # ---- decode plan: ext = struct tuple + derived values + (None, data_length)
        fixed_fields = v.fields
        self.fixed = fixed = struct.Struct(record_format(fixed_fields))
        self.fixed_fields = fixed_fields
        pos = {}         # field name -> index into the ext tuple
        derived = []     # functions t -> value, appended after t
        texts = []       # (index in t, text decoder) of each text field
        t_i = 0
        n_t = sum(f.n_items for f in fixed_fields)
        for f in fixed_fields:
            if f.const is not None:
                pass
            elif f.is_text:
                conv = _text_decoder(f)
                texts.append((t_i, conv))
                derived.append((lambda t, k=t_i, c=conv: c(t[k])))
                pos[f.name] = n_t + len(derived) - 1
            elif f.is_array:
                derived.append((lambda t, a=t_i, b=t_i + f.count: t[a:b]))
                pos[f.name] = n_t + len(derived) - 1
            else:
                pos[f.name] = t_i
            t_i += f.n_items
        n_d = len(derived)
        self.records = None
        if v.records is not None:
            self.records = _RecordCodec(owner, v.records, off + fixed.size)
            pos[v.records.attr] = n_t + n_d
            n_d += 1
        none_i, dl_i = n_t + n_d, n_t + n_d + 1
        consts = (None, v.data_length)
        order = []
        absent = []
        for name in fields:
            if name == "data_length":
                order.append(dl_i)
            elif name in pos:
                order.append(pos[name])
            else:
                order.append(none_i)
                absent.append(index[name])
        assert len(order) >= 2
        getter = itemgetter(*order)
        unpack = fixed.unpack_from

        if not derived and self.records is None:
            def decode(buf, off=off, unpack=unpack, getter=getter, consts=consts, cls=cls):
                return _new(cls, getter(unpack(buf, off) + consts))
        elif len(derived) == 1 and len(texts) == 1 and self.records is None:
            ((k, conv),) = texts

            def decode(buf, off=off, unpack=unpack, getter=getter, cls=cls, k=k, conv=conv,
                       dl=v.data_length):
                t = unpack(buf, off)
                return _new(cls, getter(t + (conv(t[k]), None, dl)))
        elif not derived:  # fixed prefix (maybe empty) + record block
            read_records = self.records.read

            def decode(buf, off=off, unpack=unpack, getter=getter, consts=consts, cls=cls,
                       read_records=read_records):
                return _new(cls, getter(unpack(buf, off) + (read_records(buf),) + consts))
        else:
            read_records = self.records.read if self.records is not None else None
            derived_t = tuple(derived)

            def decode(buf, off=off, unpack=unpack, getter=getter, consts=consts, cls=cls):
                t = unpack(buf, off)
                d = tuple([fn(t) for fn in derived_t])
                if read_records is not None:
                    d += (read_records(buf),)
                return _new(cls, getter(t + d + consts))
        self.decode = decode

        # ---- encode plan
        self.absent = tuple(absent)
        self.stored_fields = [f for f in fixed_fields if f.const is None]
        if all(not f.is_array and f.const is None for f in fixed_fields):
            idx = [index[f.name] for f in fixed_fields]
            if len(idx) >= 2:
                self.enc_getter = itemgetter(*idx)
            elif len(idx) == 1:
                self.enc_getter = lambda m, i=idx[0]: (m[i],)
            else:
                self.enc_getter = lambda m: ()
            self.enc_texts = [(i, _text_encoder(owner, f))
                              for i, f in enumerate(fixed_fields) if f.is_text]
        else:
            self.enc_getter = None
            # (field, class index or None for a wire constant, array length or 0,
            #  text encoder or None), precomputed so encode() does no parsing
            self.enc_plan = [(f, None if f.const is not None else index[f.name],
                              f.count if f.is_array else 0,
                              _text_encoder(owner, f) if f.is_text else None)
                             for f in fixed_fields]
        self.rec_index = index[v.records.attr] if v.records is not None else None

    # -- encode --------------------------------------------------------------
    def encode(self, m) -> bytes:
        for i in self.absent:
            if m[i] is not None:
                name = self.cls._fields[i]
                raise EncodeError(f"{self.owner}.{name} is not carried by data_length "
                                  f"{self.data_length}; set it to None", field=name)
        if self.enc_getter is not None:
            values = self.enc_getter(m)
            if self.enc_texts:
                values = list(values)
                for i, conv in self.enc_texts:
                    values[i] = conv(values[i])
            flat = values
        else:
            flat = []
            for f, i, count, conv in self.enc_plan:
                if i is None:
                    flat.append(f.const)
                elif count:
                    value = m[i]
                    if not isinstance(value, (tuple, list)) or len(value) != count:
                        raise EncodeError(f"{self.owner}.{f.name}: expected {count} values, "
                                          f"got {value!r}", field=f.name)
                    flat.extend(value)
                elif conv is not None:
                    flat.append(conv(m[i]))
                else:
                    flat.append(m[i])
        try:
            payload = self.fixed.pack(*flat)
        except (struct.error, OverflowError, TypeError) as exc:
            raise self._diagnose_fixed(m, exc) from None
        if self.records is not None:
            payload += self.records.write(m[self.rec_index])
        return self.head + payload + (TAIL if self.variant.tail else b"")

    def _diagnose_fixed(self, m, exc) -> EncodeError:
        fields = [f for f in self.fixed_fields if f.const is None]
        values = [m[self.cls._fields.index(f.name)] for f in fields]
        values = [v.encode("ascii") if isinstance(v, str) else v for v in values]
        return _diagnose(self.owner, fields, values, exc)

    def round(self, m):
        values = list(m)
        fields = self.cls._fields
        for f in self.stored_fields:
            i = fields.index(f.name)
            values[i] = _round_field(f, values[i])
        if self.records is not None:
            values[self.rec_index] = self.records.round(values[self.rec_index])
        return self.cls._make(values)

    def info(self) -> VariantInfo:
        s = self.spec
        return VariantInfo(s.cls, s.type_name, s.header, self.data_length, s.msg_type,
                           s.direction, s.aux_length, self.total_lengths,
                           self.variant.fields, self.variant.records,
                           self.data_length == s.current, self.variant.note)


# ----------------------------------------------------------------------------- registry

_BY_KEY: Dict[Tuple[bytes, int], _Codec] = {}          # (header, data_length) -> codec
_BY_CLASS: Dict[type, Dict[Optional[int], _Codec]] = {}  # class -> data_length -> codec
_BY_MSG_TYPE: Dict[int, _Codec] = {}                    # binary framing
_headers: Dict[bytes, dict] = {}
_variants: List[VariantInfo] = []

for _spec in SPECS:
    for _v in _spec.variants:
        _c = _Codec(_spec, _v)
        _BY_CLASS.setdefault(_spec.cls, {})[_v.data_length] = _c
        _variants.append(_c.info())
        if _spec.header is None:
            _BY_MSG_TYPE[_spec.msg_type] = _c
            continue
        _key = (_spec.header, _v.data_length)
        if _key in _BY_KEY:
            raise ValueError(f"duplicate variant {_key}")
        _BY_KEY[_key] = _c
        _h = _headers.setdefault(_spec.header, {"aux": _spec.aux_length, "types": {},
                                                 "lengths": {}})
        if _h["aux"] != _spec.aux_length:
            raise ValueError(f"{_spec.header!r}: aux length differs between messages")
        _h["types"][_v.data_length] = _spec.type_name
        _h["lengths"][_v.data_length] = _c.total_lengths

#: Header bytes -> HeaderInfo (accepted data_lengths, type names, total lengths).
HEADERS: Mapping[bytes, HeaderInfo] = types.MappingProxyType({
    hdr: HeaderInfo(hdr, h["aux"], types.MappingProxyType(dict(h["types"])),
                    types.MappingProxyType(dict(h["lengths"])))
    for hdr, h in _headers.items()})

#: Every supported variant of every message.
VARIANTS: Tuple[VariantInfo, ...] = tuple(_variants)

#: Every message class (including NmeaSentence), in declaration order.
MESSAGE_CLASSES: Tuple[type, ...] = tuple(s.cls for s in SPECS) + (NmeaSentence,)

#: Record classes used inside array messages.
RECORD_CLASSES: Tuple[type, ...] = tuple(dict.fromkeys(
    v.records.record for s in SPECS for v in s.variants if v.records is not None))

_TYPE_NAMES = {s.cls: s.type_name for s in SPECS}
_TYPE_NAMES[NmeaSentence] = NmeaSentence.TYPE_NAME

del _spec, _v, _c, _key, _h


def message_classes() -> Tuple[type, ...]:
    """Every message class, for property tests and fuzzing."""
    return MESSAGE_CLASSES


def variants_of(cls: type) -> Tuple[VariantInfo, ...]:
    """The supported variants of a message class (current variant first)."""
    out = tuple(v for v in VARIANTS if v.cls is cls)
    return tuple(sorted(out, key=lambda v: not v.current))


# ----------------------------------------------------------------------------- decode

def _describe(header: bytes) -> str:
    return header.decode("ascii", "backslashreplace")


def _expected(header: bytes) -> str:
    info = HEADERS[header]
    return ", ".join(f"{dl} -> {' or '.join(map(str, info.lengths[dl]))} B"
                     for dl in sorted(info.types))


def _decode_framed(d: bytes, n: int):
    end = d.find(b"$", 1, 32)
    if end < 0:
        raise DecodeError(f"no '$' ending the header within the first 32 bytes "
                          f"(starts {d[:16]!r}); received {n} bytes", length=n)
    header = d[:end + 1]
    info = HEADERS.get(header)
    if info is None:
        raise DecodeError(f"unknown header {_describe(header)!r}; received {n} bytes",
                          header=header, length=n)
    h = end + 1
    if n < h + 4:
        raise DecodeError(f"{_describe(header)}: truncated, received {n} bytes; accepted "
                          f"data_length -> datagram size: {_expected(header)}",
                          header=header, length=n)
    dl = _U32(d, h)[0]
    codec = _BY_KEY.get((header, dl))
    if codec is None:
        raise DecodeError(f"{_describe(header)}: unsupported data_length {dl}; received {n} "
                          f"bytes; accepted data_length -> datagram size: {_expected(header)}",
                          header=header, data_length=dl, length=n)
    has_tail = codec.totals.get(n)
    if has_tail is None:
        raise DecodeError(f"{_describe(header)}: data_length {dl} needs "
                          f"{' or '.join(map(str, codec.total_lengths))} bytes, received {n} "
                          f"(accepted data_length -> datagram size: {_expected(header)})",
                          header=header, data_length=dl, length=n,
                          expected=codec.total_lengths)
    if has_tail and not d.endswith(TAIL):
        raise DecodeError(f"{_describe(header)}: data_length {dl}, {n} bytes: last two bytes "
                          f"{d[-2:]!r} are not CR LF", header=header, data_length=dl,
                          length=n, expected=codec.total_lengths)
    return codec.decode(d)


def _binary_codec(d: bytes, n: int) -> Optional[_Codec]:
    """The ground-vehicle codec if ``d`` has its msg_type and exact length."""
    codec = _BY_MSG_TYPE.get(_U32(d, 4)[0]) if n >= 8 else None
    return codec if codec is not None and n == codec.total_lengths[0] else None


def _decode_binary(d: bytes, n: int):
    codec = _BY_MSG_TYPE.get(_U32(d, 4)[0]) if n >= 8 else None
    if codec is None:
        raise DecodeError(f"not a MORAI datagram: starts with {d[:8]!r} (expected '#NAME$' "
                          f"framing, '$' NMEA text, or a binary header with msg_type "
                          f"{'/'.join(map(str, sorted(_BY_MSG_TYPE)))}); received {n} bytes",
                          length=n)
    if n != codec.total_lengths[0]:
        raise DecodeError(f"binary msg_type {codec.spec.msg_type} ({codec.owner}) needs "
                          f"{codec.total_lengths[0]} bytes, received {n}", length=n,
                          expected=codec.total_lengths)
    return codec.decode(d)


def _decode_nmea(d: bytes, n: int):
    try:
        return _nmea.parse(d)
    except _nmea.NmeaError as exc:
        raise DecodeError(f"NMEA: {exc}; received {n} bytes", length=n) from None


def _decode_slow(datagram, n: int):
    """Everything but the common case: odd variants, NMEA, binary, errors."""
    first = datagram[0]
    if first == 0x23:  # '#'
        decoder = _decode_framed
    elif first == 0x24:  # '$'
        decoder = _decode_nmea
    else:
        return _decode_binary(datagram, n)
    try:
        return decoder(datagram, n)
    except DecodeError:
        # A ground-vehicle command whose header_version starts with '#' or '$'.
        codec = _binary_codec(datagram, n)
        if codec is None:
            raise
        return codec.decode(datagram)


def _make_decode():
    # Hot path of section 1.4: '#', header + data_length bytes looked up at once,
    # exact length and CR LF checked, then the variant's precompiled decoder.
    fast = {c.head[:len(c.header) + 4]: (c.total_lengths[0], c.decode)
            for c in _BY_KEY.values() if c.variant.tail}
    slow = _decode_slow

    def decode(datagram):
        """Decode one UDP datagram; raises DecodeError for anything malformed.

        bytes, bytearray and memoryview are accepted; other types raise TypeError.
        """
        if datagram.__class__ is not bytes:
            if not isinstance(datagram, (bytes, bytearray, memoryview)):
                raise TypeError(f"decode() needs bytes, got {type(datagram).__name__}")
            datagram = bytes(datagram)
        if datagram[:1] == b"#":
            entry = fast.get(datagram[:datagram.find(b"$", 1, 32) + 5])
            if entry is not None and len(datagram) == entry[0] and \
                    datagram[-2:] == b"\r\n":
                return entry[1](datagram)
        elif not datagram:
            raise DecodeError("empty datagram; received 0 bytes", length=0)
        return slow(datagram, len(datagram))

    return decode


decode = _make_decode()


def classify(datagram) -> Optional[str]:
    """Message-type name of a datagram from its first bytes, or None if unknown.

    Looks only at the header and data_length (or the binary msg_type); it does not
    validate length or tail - use :func:`decode` for that.
    """
    try:
        d = bytes(datagram)
    except TypeError:
        return None
    if not d:
        return None
    if d[0] == 0x23:
        end = d.find(b"$", 1, 32)
        if end > 0 and len(d) >= end + 5:
            codec = _BY_KEY.get((d[:end + 1], _U32(d, end + 1)[0]))
            if codec is not None:
                return codec.spec.type_name
    elif d[0] == 0x24 and _binary_codec(d, len(d)) is None:
        return NmeaSentence.TYPE_NAME
    if len(d) >= 8:
        codec = _BY_MSG_TYPE.get(_U32(d, 4)[0])
        if codec is not None:
            return codec.spec.type_name
    return None


# ----------------------------------------------------------------------------- encode

def _codec_for(message) -> _Codec:
    table = _BY_CLASS.get(type(message))
    if table is None:
        raise TypeError(f"encode() needs a message object, got {type(message).__name__}")
    dl = getattr(message, "data_length", None)
    codec = table.get(dl)
    if codec is None:
        raise EncodeError(f"{type(message).__name__}: unsupported data_length {dl!r} "
                          f"(supported: {', '.join(map(str, table))})", field="data_length")
    return codec


def encode(message) -> bytes:
    """The datagram for ``message`` (see module docstring for the rules)."""
    if type(message) is NmeaSentence:
        try:
            return _nmea.encode(message)
        except _nmea.NmeaError as exc:
            raise EncodeError(str(exc), field="raw") from None
    return _codec_for(message).encode(message)


def to_wire_precision(message):
    """``message`` with float32 fields rounded and text normalised as the wire does.

    Use it to compare an object with its decoded round trip:
    ``decode(encode(m)) == to_wire_precision(m)``.  float64 fields (IMU, legacy
    Multi Ego positions) and integers are unchanged; booleans become bool.
    Raises EncodeError when a float does not fit float32.
    """
    if type(message) is NmeaSentence:
        return message
    try:
        return _codec_for(message).round(message)
    except OverflowError as exc:
        raise EncodeError(f"{type(message).__name__}: {exc}") from None


def make(cls: type, data_length: Optional[int] = None, **fields):
    """A ``cls`` message of the given variant (default: current).

    Fields of that variant default to zero / '' / False / (), fields it does not
    carry to None.  Unknown field names raise TypeError.
    """
    table = _BY_CLASS.get(cls)
    if table is None:
        raise TypeError(f"{cls!r} is not a message class")
    if data_length is None:
        data_length = cls.CURRENT_DATA_LENGTH
    codec = table.get(data_length)
    if codec is None:
        raise EncodeError(f"{cls.__name__}: unsupported data_length {data_length!r}",
                          field="data_length")
    unknown = set(fields) - set(cls._fields)
    if unknown:
        raise TypeError(f"{cls.__name__} has no field(s) {', '.join(sorted(unknown))}")
    values = {name: None for name in cls._fields}
    for f in codec.stored_fields:
        values[f.name] = zero_value(f)
    if codec.records is not None:
        values[codec.variant.records.attr] = ()
    if "data_length" in values:
        values["data_length"] = data_length
    values.update(fields)
    return cls(**values)
