"""Framing: which compiled variant a datagram is, and what is done with a datagram that the fast
path of :meth:`.codec.Protocol.decode` does not take.

``#NAME$`` framing (spec section 1.4): the header (the first ``$`` within bytes 1..31), uint32
data_length, aux bytes (12, or 20 for ``#SimControl$`` / ``#SimStatus$``), payload, CR LF; a
variant is found by (header, data_length) and the exact total length.  A registry may also hold
binary messages (ground-vehicle commands: msg_type at bytes 4..7, exact length) and one kind of
``$`` text message (:class:`TextMessage`, the GPS NMEA sentences of the MORAI registry).

:class:`Framing` is the base of :class:`~.codec.Protocol`: it indexes the compiled variants
(:meth:`Framing._index`: by header and data_length, by datagram size, by msg_type; ``HEADERS``)
and holds everything about a datagram but decoding a known variant's bytes:

* the other framings (untailed variants, binary messages, ``$`` text) and the exact reason a
  datagram is refused (a :class:`~.errors.DecodeError` with what is known of it);
* :meth:`Framing.decode_tolerant`: a datagram whose length names one variant while its
  data_length says another;
* :meth:`Framing.complete_truncated` / :meth:`Framing.decode_truncated`: a datagram whose end is
  missing;
* :meth:`Framing.classify` / :meth:`Framing.header_of`: a datagram's type without decoding it.

The common case (a tailed ``#NAME$`` datagram of a known size) never runs code of this module:
``Protocol.decode`` reads the size table built here and decodes at once.  No ROS imports.
"""

import struct
import types
from typing import Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Tuple

from .errors import DataLengthMismatch, DecodeError, describe
from .schema import PUBLIC_MODULE

__all__ = ["TAIL", "HeaderInfo", "TextMessage", "Framing"]

TAIL = b"\r\n"
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


HeaderInfo.__module__ = PUBLIC_MODULE


class TextMessage(NamedTuple):
    """A message that travels as text starting with ``$`` (one per Protocol)."""

    cls: type                          # its class (has TYPE_NAME)
    label: str                         # 'NMEA', for error texts
    parse: Callable[[bytes], object]   # bytes -> message, raises ``error``
    build: Callable[[object], bytes]   # message -> bytes, raises ``error``
    error: type                        # the exception type of parse/build


class Framing:
    """The dispatch tables of a compiled registry and what reads datagrams by them (see the module
    docstring).

    A subclass compiles one ``VariantCodec`` per variant (``spec``, ``data_length``, ``prefix``,
    ``totals``, ``total_lengths``, ``records``, ``tail``, ``decode``), hands them to
    :meth:`_index` once, and provides ``decode(datagram)``; ``name`` and ``text`` are set before.
    """

    name: str
    text: Optional[TextMessage]

    def _index(self, codecs: Iterable) -> None:
        """Index ``codecs`` (every compiled variant, in declaration order): the tables below,
        ``HEADERS`` and the texts of the errors.  ValueError for a registry two variants of which
        have one (header, data_length), or one header with two aux lengths."""
        self._by_key: Dict[Tuple[bytes, int], object] = {}        # (header, data_length)
        self._by_msg_type: Dict[int, object] = {}                  # binary framing
        self._by_size: Dict[int, List[object]] = {}                # tailed '#NAME$' sizes
        headers: Dict[bytes, HeaderInfo] = {}
        for c in codecs:
            spec, dl = c.spec, c.data_length
            if spec.header is None:
                self._by_msg_type[spec.msg_type] = c
                continue
            if (spec.header, dl) in self._by_key:
                raise ValueError(f"duplicate variant {(spec.header, dl)}")
            self._by_key[spec.header, dl] = c
            for n, tailed in c.totals.items():
                if tailed:
                    self._by_size.setdefault(n, []).append(c)
            h = headers.setdefault(spec.header, HeaderInfo(spec.header, spec.aux_length, {}, {}))
            if h.aux_length != spec.aux_length:
                raise ValueError(f"{spec.header!r}: aux length differs between messages")
            h.types[dl] = spec.type_name
            h.lengths[dl] = c.total_lengths

        #: Header bytes -> HeaderInfo (accepted data_lengths, type names, total lengths).
        self.HEADERS: Mapping[bytes, HeaderInfo] = types.MappingProxyType({
            k: h._replace(types=types.MappingProxyType(h.types),
                          lengths=types.MappingProxyType(h.lengths))
            for k, h in headers.items()})

        accepted = ["'#NAME$' framing"]
        if self.text is not None:
            accepted.append(f"'$' {self.text.label} text")
        if self._by_msg_type:
            accepted.append("a binary header with msg_type "
                            + "/".join(map(str, sorted(self._by_msg_type))))
        accepted = " or ".join(accepted) if len(accepted) <= 2 else \
            ", ".join(accepted[:-1]) + ", or " + accepted[-1]
        self._a_name = ("an " if self.name[:1].upper() in "AEIOU" else "a ") + self.name
        self._not_ours = f"not {self._a_name} datagram: starts with {{!r}} (expected " \
                         f"{accepted}); received {{}} bytes"

    # ------------------------------------------------------------------ off the fast path

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
            raise DecodeError(f"unknown header {describe(header)!r}; received {n} bytes",
                              header=header, length=n)
        what = f"{describe(header)}: "
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

    def _binary_codec(self, d: bytes, n: int) -> Optional[object]:
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
            raise DecodeError(f"{describe(header)}: truncated datagram with unsupported "
                              f"data_length {dl}", header=header, data_length=dl, length=n)
        full, rc = codec.total_lengths[0], codec.records
        where = f"{describe(header)} data_length {dl} ({full} B)"
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
