"""The compiled codec of one message variant and of one record block.

:class:`VariantCodec` turns one :class:`~.udp_schema.Variant` of a
:class:`~.udp_schema.MessageSpec` into a decoder (one precompiled
``struct.Struct``, one ``unpack_from``, one ``itemgetter`` and ``tuple.__new__``
per datagram) and an encoder; :class:`RecordCodec` does the same for a block of
fixed-size array records (objects, collisions, egos, NPCs).  Framing checks
(header, data_length, total length, tail) and dispatch are the job of
:class:`~.udp_protocol.Protocol`; the public API is :mod:`.udp`.

Also here: :class:`DecodeError` / :class:`EncodeError`, shared by every
registry (``udp.DecodeError is emu_sync.DecodeError``).

No ROS imports.
"""

import math
import struct
from operator import itemgetter
from typing import Callable, Dict, Optional, Tuple

from .udp_schema import PAD_DOLLAR, PAD_SPACE, Field, MessageSpec, Records, Variant, record_format

__all__ = ["DecodeError", "EncodeError", "TAIL", "VariantCodec", "RecordCodec"]

#: The public module of the error classes (their repr and tracebacks).
_PUBLIC_MODULE = "morai_bridge.wire.udp"

TAIL = b"\r\n"
_new = tuple.__new__
_F32 = struct.Struct("<f")
_FLT_MAX = 3.4028234663852886e38


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


DecodeError.__module__ = _PUBLIC_MODULE


class EncodeError(ValueError):
    """A message cannot be encoded; ``field`` names the offending field if known."""

    def __init__(self, message: str, *, field: Optional[str] = None):
        super().__init__(message)
        self.field = field


EncodeError.__module__ = _PUBLIC_MODULE


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

class RecordCodec:
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

class VariantCodec:
    """One compiled variant: decoder, encoder and framing facts.

    ``strict``: encode also checks value types before packing (a bool field takes
    only bool/0/1, an integer field no bool or float, a float field no bool or
    text, float32 at most FLT_MAX) and names the first offending field.  Without
    it, whatever ``struct`` accepts is sent (MORAI registry, as before).
    """

    def __init__(self, spec: MessageSpec, v: Variant, strict: bool = False):
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
            self.records = RecordCodec(owner, v.records, off + fixed.size)
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
        if strict:
            self.checks = tuple((index[f.name], _strict_check(owner, f))
                                for f in fixed_fields if f.const is None)
            self.encode = self._encode_strict

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

    def _encode_strict(self, m) -> bytes:
        for i, check in self.checks:
            check(m[i])
        return VariantCodec.encode(self, m)

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


def _strict_check(owner: str, f: Field) -> Callable[[object], None]:
    """A function raising EncodeError when ``value`` has the wrong type for ``f``."""
    name = f.name
    if f.is_text:
        return _text_encoder(owner, f)  # raises as encode would; the bytes are dropped
    if f.is_array:
        raise ValueError(f"{owner}.{name}: strict checks of array fields are not implemented")
    letter = f.letter
    if letter == "?":
        def check(value):
            if not isinstance(value, (bool, int)) or value not in (0, 1):
                raise EncodeError(f"{owner}.{name}: expected a bool, got {value!r}", field=name)
    elif letter in "fd":
        limit = _FLT_MAX if letter == "f" else math.inf

        def check(value):
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise EncodeError(f"{owner}.{name}: expected a number, got {value!r}",
                                  field=name)
            try:
                too_big = math.isfinite(value) and abs(value) > limit
            except OverflowError:  # an int beyond any float
                too_big = True
            if too_big:
                raise EncodeError(f"{owner}.{name}: {value!r} does not fit "
                                  f"{'float32' if letter == 'f' else 'float64'}", field=name)
    else:
        pack = struct.Struct("<" + f.code).pack

        def check(value):
            if not isinstance(value, int) or isinstance(value, bool):
                raise EncodeError(f"{owner}.{name}: expected an int, got {value!r}", field=name)
            try:
                pack(value)
            except struct.error:
                raise EncodeError(f"{owner}.{name}: {value!r} does not fit struct code "
                                  f"{f.code!r}", field=name) from None
    return check
