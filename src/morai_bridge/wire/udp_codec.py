"""The compiled codec of one message variant and of one record block.

:class:`VariantCodec` turns one :class:`~.udp_schema.Variant` of a
:class:`~.udp_schema.MessageSpec` into a decoder and an encoder;
:class:`RecordCodec` does the same for a block of fixed-size array records
(objects, collisions, egos, NPCs).

The decoders are the hot path of every receiver.  They are generated once per
variant as Python source (:func:`_compile`, as ``collections.namedtuple`` does):
one precompiled ``struct.Struct.unpack_from``, the struct tuple sliced into the
class's field order with the constants inline, text fields looked up in a memo,
and ``tuple.__new__``; array records are read until the rest of the block is
empty.  The source is kept (``decode_source``, ``read_source``).  Framing checks
(header, data_length, total length, tail) and dispatch are the job of
:class:`~.udp_protocol.Protocol` (``decode_framed`` checks header, data_length
and tail for it); the public API is :mod:`.udp`.

The error classes :class:`DecodeError` / :class:`EncodeError` (shared by every registry:
``udp.DecodeError is lockstep.DecodeError``), the text rules and the source-writing helpers
are in :mod:`.udp_codegen`.

No ROS imports.
"""

import math
import struct
from operator import itemgetter
from typing import Callable

from .udp_codegen import (_TEXT1_CACHE, _TEXT_CACHE, DecodeError, EncodeError, _compile, _diagnose,
                          _normal_text, _one_tuple_texts, _round32, _text1, _text_decoder, _text_encoder,
                          _tuple_source)
from .udp_schema import Field, MessageSpec, Records, Variant, record_format

__all__ = ["DecodeError", "EncodeError", "TAIL", "VariantCodec", "RecordCodec"]


TAIL = b"\r\n"
_new = tuple.__new__
_FLT_MAX = 3.4028234663852886e38
# a text field followed by this many numbers splits the fixed part (see VariantCodec)
_SPLIT_RUN = 8


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
        zero_rec = bytes(size)
        if any(f.is_array for f in rs.fields):  # pragma: no cover - no such record layout today
            raise ValueError(f"{owner}: array fields in records are not supported")
        probe = [i for i, f in enumerate(rs.fields) if not f.is_text]
        if not probe:  # pragma: no cover - no such record layout today
            raise ValueError(f"{owner}: a record needs a number field")

        # Lines appending the record of struct tuple ``rt`` to the list whose append is
        # ``append``: its text fields through the memo, the tuple in the class's order.
        ns = {"_new": _new, "_rcls": rcls, "_text_get": _TEXT_CACHE.get,
              "_text1_get": _TEXT1_CACHE.get, "_text1": _text1, "_iter_unpack": st.iter_unpack, "_ZB": bytes(size * count), "_ZR": zero_rec,
              "_ZT": [bytes(size * (count - k)) for k in range(count)]}
        where = {name: i for i, name in enumerate(names)}
        texts, text_var = {}, {}
        for k, (i, f) in enumerate((i, f) for i, f in enumerate(rs.fields) if f.is_text):
            ns[f"_conv{k}"] = conv = _text_decoder(f)
            text_var[i] = f"s{k}"
            texts[f"s{k}"] = (f"rt[{i}]", f"_conv{k}", conv)
        items = [("e", text_var[where[n]]) if where[n] in text_var else ("t", "rt", where[n])
                 for n in rcls._fields]
        items, build = _one_tuple_texts(items, texts)
        build.append(f"append(_new(_rcls, {_tuple_source(items, {'rt': len(names)})}))")

        # read(buf) -> tuple of records.  An empty slot is all-zero bytes; reading stops at
        # the first slot from which the whole rest of the block is zero.  Single records are
        # read from ``buf`` in place: a slot whose probe field (the first number field) has a
        # non-zero byte is occupied and unpacked at once; any other slot is first tested
        # against the zero rest of the block, so the empty slot after the last record is
        # never unpacked (-0.0 and other non-zero bytes count as occupied, as before).
        p = probe[0]
        if group == 1:
            p_off = struct.calcsize(record_format(rs.fields[:p]))
            p_size = struct.calcsize("<" + rs.fields[p].code)
            if p_size <= 2:
                probe_src = " or ".join(f"buf[pos + {p_off + b}]" for b in range(p_size))
            else:
                ns["_ZP"] = bytes(p_size)
                probe_src = f"buf[pos + {p_off}:pos + {p_off + p_size}] != _ZP"
            ns["_unpack_rec"] = st.unpack_from
            ns["_SLOTS"] = tuple((k, start + k * size) for k in range(count))
            lines = [f"if {probe_src.replace('pos + ', f'{start} + ')} or not buf.startswith(_ZB, {start}):"]
            body = ["out = []", "append = out.append", "for k, pos in _SLOTS:",
                    f"    if {probe_src}:",
                    "        rt = _unpack_rec(buf, pos)",
                    "    elif buf.startswith(_ZT[k], pos):",
                    "        break",
                    "    elif buf.startswith(_ZR, pos):",
                    "        continue",
                    "    else:",
                    "        rt = _unpack_rec(buf, pos)"]
            body += ["    " + x for x in build]
            lines += ["    " + x for x in body] + ["    recs = tuple(out)", "else:", "    recs = ()"]
        else:
            lines = [f"block = buf[{start}:{end}]", "if block == _ZB:", "    recs = ()", "else:"]
            span = size * group
            ns["_ZS"] = bytes(span)
            body = ["out = []",
                    f"for k in range(0, {count}, {group}):",
                    "    if block.endswith(_ZT[k]):",
                    "        break",
                    f"    pos = k * {size}",
                    f"    if block[pos:pos + {span}] != _ZS:",
                    "        group = []",
                    "        append = group.append",
                    f"        for rt in _iter_unpack(block[pos:pos + {span}]):"]
            body += ["            " + x for x in build]
            body += ["        out.append(tuple(group))"]
            lines += ["    " + x for x in body] + ["    recs = tuple(out)"]
        #: lines setting ``recs`` from ``buf`` and the names they use: a variant's decoder
        #: inlines them (``read`` is the same as a function)
        self.read_lines, self.read_ns = lines, ns
        self.read, self.read_source = _compile("read", lines + ["return recs"], ns)

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

        # ---- decode plan: the class's fields, in order, from the struct tuple(s)
        # The fixed part is one struct tuple ``t0``; where a text field is followed by a run
        # of at least _SPLIT_RUN numbers, the part after it is a tuple of its own (``t1``, ...)
        # and the text's bytes are sliced from the datagram: two unpacks joined cost less
        # than one tuple sliced around the text.
        fixed_fields = v.fields
        self.fixed = fixed = struct.Struct(record_format(fixed_fields))
        self.fixed_fields = fixed_fields
        ns = {"_new": _new, "_cls": cls, "_text_get": _TEXT_CACHE.get,
              "_text1_get": _TEXT1_CACHE.get, "_text1": _text1}
        pieces = [(off, [])]    # (byte offset, fields) of each struct tuple
        split = {}              # text field name -> byte offset, for texts between pieces
        byte = off
        for i, f in enumerate(fixed_fields):
            run = 0
            for g in fixed_fields[i + 1:]:
                if g.is_text:
                    break
                run += g.n_items
            if f.is_text and f.const is None and run >= _SPLIT_RUN:
                split[f.name] = byte
                pieces.append((byte + f.size, []))
            else:
                pieces[-1][1].append(f)
            byte += f.size
        lines, body = [], []    # unpacks; lines computing the derived values
        texts = {}              # text variable -> (raw source, converter name, converter)
        source = {}             # field name -> ('t', tuple name, index) or ('e', value source)
        sizes = {}
        for p, (start, piece) in enumerate(pieces):
            t = f"t{p}"
            sizes[t] = sum(f.n_items for f in piece)
            if sizes[t]:
                ns[f"_unpack{p}"] = struct.Struct(record_format(piece)).unpack_from
                lines.append(f"{t} = _unpack{p}(buf, {start})")
            t_i = 0
            for f in piece:
                if f.const is not None:
                    pass
                elif f.is_text:
                    var = f"s{p}_{t_i}"
                    ns[f"_conv{p}_{t_i}"] = conv = _text_decoder(f)
                    texts[var] = (f"{t}[{t_i}]", f"_conv{p}_{t_i}", conv)
                    source[f.name] = ("e", var)
                elif f.is_array:
                    source[f.name] = ("e", f"{t}[{t_i}:{t_i + f.count}]")
                else:
                    source[f.name] = ("t", t, t_i)
                t_i += f.n_items
        for k, f in enumerate(f for f in fixed_fields if f.name in split):
            var = f"r{k}"
            ns[f"_sconv{k}"] = conv = _text_decoder(f)
            body.append(f"{var} = buf[{split[f.name]}:{split[f.name] + f.size}]")
            texts[f"s{k}"] = (var, f"_sconv{k}", conv)
            source[f.name] = ("e", f"s{k}")
        self.records = None
        if v.records is not None:
            self.records = RecordCodec(owner, v.records, off + fixed.size)
            if self.records.group == 1:
                ns.update(self.records.read_ns)
                body += self.records.read_lines
            else:
                ns["_read"] = self.records.read
                body.append("recs = _read(buf)")
            source[v.records.attr] = ("e", "recs")
        absent = []
        items = []
        for name in fields:
            if name == "data_length":
                items.append(("e", repr(v.data_length)))
            elif name in source:
                items.append(source[name])
            else:
                items.append(("e", "None"))
                absent.append(index[name])
        items, text_lines = _one_tuple_texts(items, texts)
        lines += body + text_lines
        lines.append(f"return _new(_cls, {_tuple_source(items, sizes)})")
        self.decode, self.decode_source = _compile("decode", lines, ns)
        #: For tailed '#NAME$' variants: ``decode_framed(buf)`` for a datagram already known to
        #: be of this variant's total length: the message when it starts with the header and
        #: data_length and ends with CR LF, else None (the caller then takes the slow path).
        self.decode_framed = None
        if spec.header is not None and v.tail:
            prefix = self.head[:len(spec.header) + 4]
            guard = [f"if buf[:{len(prefix)}] != {prefix!r} or buf[-2:] != {TAIL!r}:", "    return None"]
            self.decode_framed = _compile("decode_framed", guard + lines, ns)[0]

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
