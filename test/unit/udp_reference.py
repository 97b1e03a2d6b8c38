"""A test oracle: the MORAI UDP datagrams read one field at a time.

:func:`morai_bridge.wire.udp.decode` unpacks a variant's whole fixed part with one
``struct.Struct``, reorders the tuple into the class's fields and stops reading records where the
rest of the block is zero.  :func:`decode` here reads the same layout tables the obvious way,
field by field with ``struct.unpack_from`` at running offsets, and tests every slot, so that the
codec can be checked against an independent reading (``test_udp_reference.py``, over every
variant).  It accepts what the codec accepts and raises :class:`~.udp.DecodeError` otherwise (its
messages are shorter).  NMEA text (``$...``) is not decoded here: ``test_nmea.py`` checks it
against pynmea2.
"""
import struct

from morai_bridge.wire import udp
from morai_bridge.wire.udp.schema import PAD_DOLLAR

TAIL = b"\r\n"


def _text(raw, dollar):
    """The text of a fixed-width field: NUL/space padding removed; SimControl's '$'-terminated
    options lose the '$' (without one, the general rule)."""
    if dollar:
        body = raw.rstrip(b"\x00")
        if body.endswith(b"$"):
            return body[:-1].decode("ascii", "replace")
    return raw.rstrip(b"\x00 ").decode("ascii", "replace")


def read_fields(fields, data, pos):
    """{name: value} of ``fields`` read from ``data`` at ``pos``, and the position after them."""
    values = {}
    for f in fields:
        if f.is_text:
            value = _text(data[pos:pos + f.size], f.pad == PAD_DOLLAR)
        elif f.is_array:
            value = struct.unpack_from("<" + f.code, data, pos)
        else:
            value = struct.unpack_from("<" + f.code, data, pos)[0]
        if f.const is None:
            values[f.name] = value
        pos += f.size
    return values, pos


def read_records(rs, data, pos):
    """The occupied records of a block of ``rs.count`` slots: an all-zero slot (or, for pairs,
    an all-zero pair) is empty and left out wherever it is."""
    size = rs.record_size
    out = []
    for k in range(0, rs.count, rs.group):
        start = pos + k * size
        if not any(data[start:start + size * rs.group]):
            continue
        group = []
        for j in range(rs.group):
            values, _ = read_fields(rs.fields, data, start + j * size)
            group.append(rs.record(**values))
        out.append(tuple(group) if rs.group > 1 else group[0])
    return tuple(out)


def payload_size(info):
    """Bytes of the fixed part and the record block of a variant."""
    size = struct.calcsize("<" + "".join(f.code for f in info.fields))
    if info.records is not None:
        size += info.records.record_size * info.records.count
    return size


def _variant(data):
    """(VariantInfo, payload offset) of a framed or binary datagram, else DecodeError.

    Framed: '#NAME$', uint32 data_length, the aux bytes, the payload, CR LF (some old variants
    also without); the header and data_length choose the variant, the length must be one of its
    totals.  Binary: uint32 msg_type at offset 4 and the exact length."""
    n = len(data)
    if data[:1] == b"#":
        end = data.find(b"$", 1, 32)
        header = data[:end + 1]
        if end > 0 and n >= end + 5:
            dl = struct.unpack_from("<I", data, end + 1)[0]
            for info in udp.VARIANTS:
                if info.header == header and info.data_length == dl and n in info.total_lengths:
                    offset = len(header) + 4 + info.aux_length
                    if n == offset + payload_size(info) + 2 and not data.endswith(TAIL):
                        raise udp.DecodeError(f"{header!r}: the last two bytes are not CR LF")
                    return info, offset
    if n >= 8:
        msg_type = struct.unpack_from("<I", data, 4)[0]
        for info in udp.VARIANTS:
            if info.header is None and info.msg_type == msg_type and n == info.total_lengths[0]:
                return info, 0
    raise udp.DecodeError("not a datagram of any known variant (%d bytes, starts %r)" % (n, data[:12]))


def decode(datagram):
    """The message of one '#NAME$' or binary datagram, read field by field (see the module
    docstring); DecodeError when no variant takes it."""
    data = bytes(datagram)
    info, pos = _variant(data)
    values, pos = read_fields(info.fields, data, pos)
    if info.records is not None:
        values[info.records.attr] = read_records(info.records, data, pos)
    if "data_length" in info.cls._fields and info.header is not None:
        values["data_length"] = info.data_length
    out = dict.fromkeys(info.cls._fields)
    out.update(values)
    return info.cls(**out)
