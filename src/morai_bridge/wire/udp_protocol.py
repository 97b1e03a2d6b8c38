"""A registry of message specs, compiled: dispatch, decode, encode and registries.

:class:`Protocol` takes the :class:`~.udp_schema.MessageSpec` list of one
registry (:data:`~.udp_schema.MORAI`, or the emulator's lock-step extension),
compiles every variant into a :class:`~.udp_codec.VariantCodec` once, and
offers what the public modules re-export: ``decode``, ``encode``, ``classify``,
``make``, ``to_wire_precision``, ``HEADERS``, ``VARIANTS``, ``MESSAGE_CLASSES``,
``RECORD_CLASSES`` and ``variants_of``.  :mod:`.udp` and :mod:`.lockstep` are
thin modules over one Protocol each; two registries never accept each other's
packets.

Framing (spec section 1.4): ``#NAME$`` (the first ``$`` within bytes 1..31),
uint32 data_length, aux bytes (12, or 20 for ``#SimControl$``/``#SimStatus$``),
payload, CR LF; dispatch on (header, data_length), exact total length.  A
registry may also hold binary messages (ground-vehicle commands: msg_type at
bytes 4..7, exact length) and one kind of ``$`` text message (:class:`TextMessage`,
the GPS NMEA sentences of the MORAI registry).

No ROS imports.
"""

import struct
import types
from typing import Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Tuple

from .udp_codec import TAIL, DecodeError, EncodeError, VariantCodec
from .udp_schema import Field, MessageSpec, Records, default_value

__all__ = ["Protocol", "TextMessage", "HeaderInfo", "VariantInfo", "DataLengthMismatch"]

_U32 = struct.Struct("<I").unpack_from


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
    """Why :meth:`Protocol.decode_tolerant` decoded a datagram the strict decoder rejects.

    The datagram's total length (with its CR LF tail) identifies exactly one variant
    of its header, but its data_length field says something else.
    """

    header: bytes       # e.g. b'#VehicleCollision$'
    data_length: int    # the value the datagram carries
    expected: int       # the data_length of the variant its length identifies
    length: int         # datagram size, bytes
    type_name: str      # message-type name of that variant, e.g. 'npc_vehicle_collision'

    def __str__(self):
        return (f"{_describe(self.header)}: data_length {self.data_length} received, "
                f"expected {self.expected} for a {self.length}-byte {self.type_name} "
                f"datagram; decoded by its length")


HeaderInfo.__module__ = VariantInfo.__module__ = DataLengthMismatch.__module__ = \
    "morai_bridge.wire.udp"


class TextMessage(NamedTuple):
    """A message that travels as text starting with ``$`` (one per Protocol)."""

    cls: type                          # its class (has TYPE_NAME)
    label: str                         # 'NMEA', for error texts
    parse: Callable[[bytes], object]   # bytes -> message, raises ``error``
    build: Callable[[object], bytes]   # message -> bytes, raises ``error``
    error: type                        # the exception type of parse/build


def _one_of(items: List[str]) -> str:
    if len(items) <= 2:
        return " or ".join(items)
    return ", ".join(items[:-1]) + ", or " + items[-1]


def _describe(header: bytes) -> str:
    return header.decode("ascii", "backslashreplace")


class Protocol:
    """The compiled codec of one registry of message specs (see module docstring).

    ``name`` appears in error texts ("not a MORAI datagram"); ``text`` adds the
    ``$`` text message; ``strict`` makes encode check value types first (see
    :class:`~.udp_codec.VariantCodec`).
    """

    def __init__(self, name: str, specs: Iterable[MessageSpec], *,
                 text: Optional[TextMessage] = None, strict: bool = False):
        self.name = name
        self.specs = specs = tuple(specs)
        self.text = text
        by_key: Dict[Tuple[bytes, int], VariantCodec] = {}      # (header, data_length)
        by_class: Dict[type, Dict[Optional[int], VariantCodec]] = {}  # class -> dl -> codec
        by_msg_type: Dict[int, VariantCodec] = {}                # binary framing
        headers: Dict[bytes, dict] = {}
        variants: List[VariantInfo] = []
        for spec in specs:
            table = by_class.setdefault(spec.cls, {})
            for v in spec.variants:
                c = VariantCodec(spec, v, strict)
                table[v.data_length] = c
                variants.append(VariantInfo(
                    spec.cls, spec.type_name, spec.header, v.data_length, spec.msg_type,
                    spec.direction, spec.aux_length, c.total_lengths, v.fields, v.records,
                    v.data_length == spec.current, v.note))
                if spec.header is None:
                    by_msg_type[spec.msg_type] = c
                    continue
                key = (spec.header, v.data_length)
                if key in by_key:
                    raise ValueError(f"duplicate variant {key}")
                by_key[key] = c
                h = headers.setdefault(spec.header, {"aux": spec.aux_length, "types": {},
                                                     "lengths": {}})
                if h["aux"] != spec.aux_length:
                    raise ValueError(f"{spec.header!r}: aux length differs between messages")
                h["types"][v.data_length] = spec.type_name
                h["lengths"][v.data_length] = c.total_lengths
            if spec.header is not None and "data_length" not in spec.cls._fields:
                if len(spec.variants) != 1:
                    raise ValueError(f"{spec.name}: several variants need a data_length field")
                table[None] = table[spec.variants[0].data_length]
        self._by_key = by_key
        by_length: Dict[Tuple[bytes, int], List[VariantCodec]] = {}  # tailed datagrams only
        for (hdr, _), c in by_key.items():
            for n, tailed in c.totals.items():
                if tailed:
                    by_length.setdefault((hdr, n), []).append(c)
        self._by_length = by_length
        self._by_class = by_class
        self._by_msg_type = by_msg_type

        #: Header bytes -> HeaderInfo (accepted data_lengths, type names, total lengths).
        self.HEADERS: Mapping[bytes, HeaderInfo] = types.MappingProxyType({
            hdr: HeaderInfo(hdr, h["aux"], types.MappingProxyType(dict(h["types"])),
                            types.MappingProxyType(dict(h["lengths"])))
            for hdr, h in headers.items()})
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
        if by_msg_type:
            accepted.append("a binary header with msg_type "
                            + "/".join(map(str, sorted(by_msg_type))))
        self._a_name = ("an " if name[:1].upper() in "AEIOU" else "a ") + name
        self._not_ours = f"not {self._a_name} datagram: starts with {{!r}} (expected " \
                         f"{_one_of(accepted)}); received {{}} bytes"
        self.decode = self._make_decode()
        self._codec_for = self._make_codec_for()
        self.encode = self._make_encode()

    def __repr__(self):
        return f"<Protocol {self.name}: {len(self.specs)} messages>"

    # ------------------------------------------------------------------ registries

    def message_classes(self) -> Tuple[type, ...]:
        """Every message class, for property tests and fuzzing."""
        return self.MESSAGE_CLASSES

    def variants_of(self, cls: type) -> Tuple[VariantInfo, ...]:
        """The supported variants of a message class (current variant first)."""
        out = tuple(v for v in self.VARIANTS if v.cls is cls)
        return tuple(sorted(out, key=lambda v: not v.current))

    # ------------------------------------------------------------------ decode

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
        h = end + 1
        if n < h + 4:
            raise DecodeError(f"{_describe(header)}: truncated, received {n} bytes; accepted "
                              f"data_length -> datagram size: {self._expected(header)}",
                              header=header, length=n)
        dl = _U32(d, h)[0]
        codec = self._by_key.get((header, dl))
        if codec is None:
            raise DecodeError(f"{_describe(header)}: unsupported data_length {dl}; received "
                              f"{n} bytes; accepted data_length -> datagram size: "
                              f"{self._expected(header)}",
                              header=header, data_length=dl, length=n)
        has_tail = codec.totals.get(n)
        if has_tail is None:
            raise DecodeError(f"{_describe(header)}: data_length {dl} needs "
                              f"{' or '.join(map(str, codec.total_lengths))} bytes, received "
                              f"{n} (accepted data_length -> datagram size: "
                              f"{self._expected(header)})",
                              header=header, data_length=dl, length=n,
                              expected=codec.total_lengths)
        if has_tail and not d.endswith(TAIL):
            raise DecodeError(f"{_describe(header)}: data_length {dl}, {n} bytes: last two "
                              f"bytes {d[-2:]!r} are not CR LF", header=header,
                              data_length=dl, length=n, expected=codec.total_lengths)
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
        text = self.text
        try:
            return text.parse(d)
        except text.error as exc:
            raise DecodeError(f"{text.label}: {exc}; received {n} bytes", length=n) from None

    def _decode_slow(self, datagram: bytes, n: int):
        """Everything but the common case: odd variants, text, binary, errors."""
        first = datagram[0]
        if first == 0x23:  # '#'
            decoder = self._decode_framed
        elif first == 0x24 and self.text is not None:  # '$'
            decoder = self._decode_text
        else:
            return self._decode_binary(datagram, n)
        try:
            return decoder(datagram, n)
        except DecodeError:
            # A binary command whose header_version starts with '#' or '$'.
            codec = self._binary_codec(datagram, n)
            if codec is None:
                raise
            return codec.decode(datagram)

    def _make_decode(self):
        # Hot path of section 1.4: the datagram's length picks the variant(s) of that total
        # length (tailed '#NAME$' variants), whose decode_framed checks header, data_length
        # and CR LF and decodes (or returns None).  Anything else, valid or not, takes the
        # slow path, which also gives every DecodeError.
        by_length: Dict[int, list] = {}
        for c in self._by_key.values():
            if c.decode_framed is not None:
                by_length.setdefault(c.total_lengths[0], []).append(c.decode_framed)
        fast = {}
        for n, decoders in by_length.items():
            if len(decoders) == 1:
                fast[n] = decoders[0]
            else:   # e.g. 181 B: Ego status 152 and Collision 148
                def first(datagram, decoders=tuple(decoders)):
                    for d in decoders:
                        m = d(datagram)
                        if m is not None:
                            return m
                    return None
                fast[n] = first
        slow = self._decode_slow

        def decode(datagram, fast=fast.get):
            """Decode one UDP datagram; raises DecodeError for anything malformed.

            bytes, bytearray and memoryview are accepted; other types raise TypeError.
            """
            if datagram.__class__ is not bytes:
                if not isinstance(datagram, (bytes, bytearray, memoryview)):
                    raise TypeError(f"decode() needs bytes, got {type(datagram).__name__}")
                datagram = bytes(datagram)
            framed = fast(len(datagram))
            if framed is not None:
                m = framed(datagram)
                if m is not None:
                    return m
            elif not datagram:
                raise DecodeError("empty datagram; received 0 bytes", length=0)
            return slow(datagram, len(datagram))

        return decode

    def decode_tolerant(self, datagram):
        """``(message, None)`` as :meth:`decode` would give it, or ``(message, warning)``.

        The tolerant path for receivers (the bridge, the dump tool): a ``#NAME$``
        datagram that ends in CR LF and whose total length matches exactly one variant
        of its header is decoded as that variant even when its data_length field
        disagrees (MORAI's own example writes data_length 0 for the NPC vehicle
        collision); ``warning`` is a :class:`DataLengthMismatch` naming the received
        and the expected data_length.  Everything else raises :class:`DecodeError`
        exactly as :meth:`decode` does.  :meth:`decode` itself stays strict.
        """
        try:
            return self.decode(datagram), None
        except DecodeError as exc:
            if exc.header is None or exc.data_length is None:
                raise
            d = bytes(datagram)
            n = len(d)
            found = self._by_length.get((exc.header, n))
            if not found or len(found) != 1 or not d.endswith(TAIL):
                raise
            codec = found[0]
            if codec.data_length == exc.data_length:
                raise  # right data_length and length: something else is wrong
            return codec.decode(d), DataLengthMismatch(
                exc.header, exc.data_length, codec.data_length, n, codec.spec.type_name)

    # ------------------------------------------------------------------ truncated

    def complete_truncated(self, prefix, length: Optional[int] = None):
        """``(datagram, slots_read, slots_total)``: a decodable datagram made from the
        start of one whose end is missing (e.g. the first IP fragment of a 2160-byte
        Object Info that a port-filtered capture kept).

        The header and data_length (in ``prefix``) must name a variant with an array
        block, ``prefix`` must hold its fixed part and be shorter than the datagram;
        ``length`` (the size the UDP header declares), when given, must be that
        variant's.  The array slots ``prefix`` holds whole are kept, every later slot
        is made empty (zero bytes) and the CR LF tail added, so decoding the result
        gives the records the prefix holds (spec section 4.5: slots are nearest
        first, so the missing ones are the farthest).  Raises :class:`DecodeError`.
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
        full = codec.total_lengths[0]
        rc = codec.records
        where = f"{_describe(header)} data_length {dl} ({full} B)"
        if rc is None:
            raise DecodeError(f"{where}: truncated to {n} bytes and has no array records to "
                              f"keep", header=header, data_length=dl, length=n,
                              expected=codec.total_lengths)
        if length is not None and length not in codec.totals:
            raise DecodeError(f"{where}: the datagram was {length} bytes long, not a size of "
                              f"this variant", header=header, data_length=dl, length=n,
                              expected=codec.total_lengths)
        if n >= full:
            raise DecodeError(f"{where}: {n} bytes is not truncated; use decode()",
                              header=header, data_length=dl, length=n,
                              expected=codec.total_lengths)
        if n < rc.start:
            raise DecodeError(f"{where}: truncated to {n} bytes, before the end of its fixed "
                              f"part (byte {rc.start})", header=header, data_length=dl,
                              length=n, expected=codec.total_lengths)
        span = rc.size * rc.group
        groups = (n - rc.start) // span
        keep = rc.start + groups * span
        tail = TAIL if codec.variant.tail else b""
        data = d[:keep] + bytes(full - len(tail) - keep) + tail
        return data, groups, rc.count // rc.group

    def decode_truncated(self, prefix, length: Optional[int] = None):
        """``(message, slots_read, slots_total)`` of a datagram whose end is missing:
        the array records ``prefix`` holds whole (see :meth:`complete_truncated`)."""
        data, read, total = self.complete_truncated(prefix, length)
        return self.decode(data), read, total

    # ------------------------------------------------------------------ classify

    @staticmethod
    def header_of(datagram) -> Optional[bytes]:
        """The ``#NAME$`` header of a datagram ('$' within bytes 1..31), or None."""
        try:
            d = bytes(datagram[:32])
        except TypeError:
            return None
        if d[:1] != b"#":
            return None
        end = d.find(b"$", 1, 32)
        return d[:end + 1] if end > 0 else None

    def classify(self, datagram) -> Optional[str]:
        """Message-type name of a datagram from its first bytes, or None if unknown.

        Looks only at the header and data_length (or the binary msg_type); it does not
        validate length or tail - use ``decode`` for that.
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
                codec = self._by_key.get((d[:end + 1], _U32(d, end + 1)[0]))
                if codec is not None:
                    return codec.spec.type_name
        elif d[0] == 0x24 and self.text is not None and self._binary_codec(d, len(d)) is None:
            return self.text.cls.TYPE_NAME
        if len(d) >= 8:
            codec = self._by_msg_type.get(_U32(d, 4)[0])
            if codec is not None:
                return codec.spec.type_name
        return None

    # ------------------------------------------------------------------ encode

    def _make_codec_for(self):
        by_class = self._by_class

        def codec_for(message) -> VariantCodec:
            """The codec of ``message``'s class and data_length."""
            table = by_class.get(type(message))
            if table is None:
                raise TypeError(f"encode() needs a message object, got "
                                f"{type(message).__name__}")
            dl = getattr(message, "data_length", None)
            codec = table.get(dl)
            if codec is None:
                raise EncodeError(f"{type(message).__name__}: unsupported data_length {dl!r} "
                                  f"(supported: {', '.join(map(str, table))})",
                                  field="data_length")
            return codec
        return codec_for

    def _make_encode(self):
        codec_for = self._codec_for
        text = self.text
        if text is None:
            def encode(message) -> bytes:
                """The datagram for ``message``; raises EncodeError or TypeError."""
                return codec_for(message).encode(message)
            return encode
        text_cls, build, error = text.cls, text.build, text.error

        def encode(message) -> bytes:  # noqa: F811
            """The datagram for ``message``; raises EncodeError or TypeError."""
            if type(message) is text_cls:
                try:
                    return build(message)
                except error as exc:
                    raise EncodeError(str(exc), field="raw") from None
            return codec_for(message).encode(message)
        return encode

    def to_wire_precision(self, message):
        """``message`` with float32 fields rounded and text normalised as the wire does.

        Use it to compare an object with its decoded round trip:
        ``decode(encode(m)) == to_wire_precision(m)``.  float64 fields (IMU, legacy
        Multi Ego positions) and integers are unchanged; booleans become bool.
        Raises EncodeError when a float does not fit float32.
        """
        if self.text is not None and type(message) is self.text.cls:
            return message
        try:
            return self._codec_for(message).round(message)
        except OverflowError as exc:
            raise EncodeError(f"{type(message).__name__}: {exc}") from None

    def make(self, cls: type, data_length: Optional[int] = None, **fields):
        """A ``cls`` message of the given variant (default: current).

        Fields of that variant default to their declared default (zero / '' / False /
        () unless the layout says otherwise), fields it does not carry to None.
        Unknown field names raise TypeError.
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
        values = {name: None for name in cls._fields}
        for f in codec.stored_fields:
            values[f.name] = default_value(f)
        if codec.records is not None:
            values[codec.variant.records.attr] = ()
        if "data_length" in values:
            values["data_length"] = data_length
        values.update(fields)
        return cls(**values)
