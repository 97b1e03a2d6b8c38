"""A registry of message specs, compiled: dispatch, decode, encode and registries.

:class:`Protocol` takes the :class:`~.udp_schema.MessageSpec` list of one
registry (:data:`~.udp_schema.MORAI`, or the emulator's lock-step extension),
compiles every variant into a :class:`~.udp_codec.VariantCodec` once, and
offers what the public modules re-export: ``decode``, ``encode``, ``classify``,
``make``, ``to_wire_precision``, ``HEADERS``, ``VARIANTS``, ``MESSAGE_CLASSES``,
``RECORD_CLASSES`` and ``variants_of``.  :mod:`.udp` and :mod:`.emu_sync` are
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

__all__ = ["Protocol", "TextMessage", "HeaderInfo", "VariantInfo"]

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


HeaderInfo.__module__ = VariantInfo.__module__ = "morai_bridge.wire.udp"


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
        # Hot path of section 1.4: '#', header + data_length bytes looked up at once,
        # exact length and CR LF checked, then the variant's precompiled decoder.
        fast = {c.head[:len(c.header) + 4]: (c.total_lengths[0], c.decode)
                for c in self._by_key.values() if c.variant.tail}
        slow = self._decode_slow

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
