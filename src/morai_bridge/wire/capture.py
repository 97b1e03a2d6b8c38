"""Read UDP datagrams out of pcap / pcapng captures (offline replay and tests).

``read_capture(path)`` returns a :class:`CaptureReader`; iterating it yields
``(timestamp, (src_ip, src_port), (dst_ip, dst_port), payload)`` for every IPv4
UDP datagram, with IPv4 fragments reassembled (MORAI's 2160-byte Object Info
travels as two fragments).  Frames that are not IPv4 UDP, or cannot be decoded,
are skipped and counted in ``reader.counts``:

==================  =============================================================
``frames``          link-layer frames read
``datagrams``       UDP datagrams yielded
``non_ipv4``        frames that are not IPv4 (ARP, IPv6, LLC, ...)
``non_udp``         IPv4 packets of another protocol (TCP, ICMP, ...)
``undecodable``     frames whose link, IPv4 or UDP header cannot be parsed
``truncated``       packets cut short by the capture's snap length
``fragments``       IPv4 fragments of UDP datagrams received
``reassembled``     datagrams completed from fragments
``fragments_dropped``  fragments discarded: duplicates, timed out, evicted,
                    inconsistent, or still incomplete at the end of the file
``partial``         incomplete datagrams yielded as :class:`TruncatedPayload`
                    (``partial=True`` only)
``truncated_file``  1 if the file ends in the middle of a record
==================  =============================================================

Port-filtered captures: a capture filter such as ``udp port 7505`` keeps only
the *first* IP fragment of a fragmented datagram (the later fragments carry no
UDP header, so the filter cannot match them), and every 2160-byte Object Info
then stays incomplete.  With ``read_capture(path, partial=True)`` such a
datagram is yielded anyway, once its missing fragments are overdue
(``partial_timeout``, 1 s of capture time, or the end of the file): its payload
is a :class:`TruncatedPayload` - the bytes the capture holds, with
``full_length`` from the UDP header - at the time of its first fragment, and
records are still yielded in capture order (later ones are held back meanwhile).
``udp.decode_truncated`` decodes what it holds.  To capture whole datagrams use
``udp and (port 7505 or ip[6:2] & 0x1fff != 0)`` (also every non-first
fragment) or filter on the simulator's address (``udp and host SIM_IP``).

Link types: Ethernet (with 802.1Q / 802.1ad VLAN tags), Linux cooked capture
v1/v2 (SLL/SLL2), raw IP, BSD loopback (NULL/LOOP).  For pcapng, dpkt uses the
link type of the first interface for every packet.

dpkt reads the pcap/pcapng containers (any release from 1.9.2, Ubuntu 20.04's,
on); the link-layer, IPv4 and UDP headers are parsed here from their bytes.
dpkt is imported on first use: without it, opening a capture raises
:class:`CaptureDependencyError` (a :class:`CaptureError`) saying how to install
it.  No ROS imports.
"""

import heapq
import os
import socket
import struct
from collections import Counter, OrderedDict
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

__all__ = ["CaptureError", "CaptureDependencyError", "CaptureReader", "read_capture", "write_pcap", "Reassembler",
           "TruncatedPayload", "PORT_FILTER_HINT"]

#: What to tell a user whose capture lost the later fragments (docs/udp_dump.md).
PORT_FILTER_HINT = (
    "the capture holds only the first IP fragment of some datagrams: a capture filter on UDP "
    "ports (e.g. 'udp port 7505') drops the later fragments, which carry no UDP header. Capture "
    "with \"udp and (port 7505 or ip[6:2] & 0x1fff != 0)\" (also every non-first fragment) or "
    "\"udp and host SIM_IP\" instead")

Endpoint = Tuple[str, int]
Record = Tuple[float, Endpoint, Endpoint, bytes]

_PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"
_PCAP_MAGICS = {
    b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4",  # microsecond, little / big endian
    b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d",  # nanosecond
    b"\x34\xcd\xb2\xa1", b"\xa1\xb2\xcd\x34",  # Kuznetzov's modified pcap
}
_IP_PROTO_UDP = 17
_MAX_DATAGRAM = 65535


class CaptureError(ValueError):
    """The file is not a readable pcap/pcapng capture (or uses an unsupported link type)."""


class CaptureDependencyError(CaptureError):
    """dpkt, which reads the pcap/pcapng containers, is not installed."""


class TruncatedPayload(bytes):
    """The start of a UDP payload whose later IP fragments are not in the capture.

    A ``bytes`` (the payload bytes the capture holds, from the first); ``full_length``
    is the payload length the UDP header declares.
    """

    def __new__(cls, data: bytes, full_length: int):
        self = super().__new__(cls, data)
        self.full_length = full_length
        return self

    def __repr__(self):
        return f"TruncatedPayload({bytes(self)!r}, full_length={self.full_length})"


# ----------------------------------------------------------------------------- link layer
#
# Link-layer and IPv4 headers are read here with struct, not with dpkt's packet classes: their
# behaviour differs between dpkt releases (before 1.9.7 ``IP.offset`` is already in bytes, from
# 1.9.7 on it is the raw field in 8-byte units; ``dpkt.sll2`` exists only from 1.9.6 on), and
# Ubuntu 20.04 ships dpkt 1.9.2.  dpkt only reads the pcap/pcapng containers.

class _NotIPv4(Exception):
    """The frame carries something else than IPv4 (counted as ``non_ipv4``)."""


class _Undecodable(Exception):
    """A link or IPv4 header that cannot be parsed (counted as ``undecodable``)."""


_ETH_TYPE_IP = 0x0800
_VLAN_TPIDS = (0x8100, 0x88A8, 0x9100)  # 802.1Q, 802.1ad (QinQ), the older QinQ TPID


def _after_ethertype(buf: bytes, offset: int, ethtype: int) -> bytes:
    if ethtype != _ETH_TYPE_IP:
        raise _NotIPv4()
    return buf[offset:]


def _ethernet(buf: bytes) -> bytes:
    if len(buf) < 14:
        raise _Undecodable("short Ethernet header")
    ethtype, = struct.unpack_from("!H", buf, 12)
    offset = 14
    while ethtype in _VLAN_TPIDS:  # VLAN tags: TPID (already read) + TCI, then the next type
        if len(buf) < offset + 4:
            raise _Undecodable("short VLAN tag")
        ethtype, = struct.unpack_from("!H", buf, offset + 2)
        offset += 4
    return _after_ethertype(buf, offset, ethtype)  # 802.3 length field / LLC: not IPv4


def _sll(buf: bytes) -> bytes:
    # packet type, ARPHRD type, address length, 8 address bytes, protocol (ethertype)
    if len(buf) < 16:
        raise _Undecodable("short Linux cooked (SLL) header")
    return _after_ethertype(buf, 16, struct.unpack_from("!H", buf, 14)[0])


def _sll2(buf: bytes) -> bytes:
    # protocol (ethertype), reserved, interface index, ARPHRD type, packet type,
    # address length, 8 address bytes
    if len(buf) < 20:
        raise _Undecodable("short Linux cooked v2 (SLL2) header")
    return _after_ethertype(buf, 20, struct.unpack_from("!H", buf, 0)[0])


def _raw_ip(buf: bytes) -> bytes:
    if not buf or buf[0] >> 4 != 4:
        raise _NotIPv4()
    return buf


def _loopback(buf: bytes) -> bytes:
    return _raw_ip(buf[4:])  # 4-byte address family in the capturing host's byte order


_LINK_DECODERS: Dict[int, Callable[[bytes], bytes]] = {
    1: _ethernet,      # DLT_EN10MB
    113: _sll,         # DLT_LINUX_SLL
    276: _sll2,        # DLT_LINUX_SLL2
    101: _raw_ip,      # LINKTYPE_RAW
    12: _raw_ip,       # DLT_RAW on most BSDs
    14: _raw_ip,       # DLT_RAW on OpenBSD
    228: _raw_ip,      # LINKTYPE_IPV4
    0: _loopback,      # DLT_NULL
    108: _loopback,    # DLT_LOOP
}

_IPV4_FIXED = struct.Struct("!BBHHHBBH4s4s")  # the 20 bytes before any options
_IP_MF = 0x2000
_IP_OFFMASK = 0x1FFF


class _IPv4(NamedTuple):
    """The IPv4 header fields the reader needs, from the header bytes themselves."""

    ident: int
    more_fragments: bool
    offset: int          # fragment offset in bytes (the header's 13-bit field times 8)
    proto: int
    src: bytes
    dst: bytes
    payload: bytes       # after the header, cut at the total length (link padding removed)
    payload_length: int  # what the total length field announces


def _ipv4(buf: bytes) -> _IPv4:
    if len(buf) < _IPV4_FIXED.size:
        raise _Undecodable("short IPv4 header")
    vhl, _tos, total, ident, frag, _ttl, proto, _sum, src, dst = _IPV4_FIXED.unpack_from(buf)
    hlen = (vhl & 0x0F) * 4
    if vhl >> 4 != 4 or hlen < 20 or total < hlen or len(buf) < hlen:
        raise _Undecodable("bad IPv4 header")
    return _IPv4(ident, bool(frag & _IP_MF), (frag & _IP_OFFMASK) * 8, proto, src, dst,
                 bytes(buf[hlen:total]), total - hlen)


# ----------------------------------------------------------------------------- reassembly

class _Pending:
    __slots__ = ("first_ts", "head_ts", "pieces", "total")

    def __init__(self, ts: float):
        self.first_ts = ts
        self.head_ts: Optional[float] = None   # arrival of the fragment at offset 0
        self.pieces: Dict[int, bytes] = {}
        self.total: Optional[int] = None


class Reassembler:
    """IPv4 fragment reassembly keyed by (src, dst, protocol, identification).

    A datagram is complete once its last fragment (MF = 0) has fixed the total
    length and the fragments cover every byte.  At most ``max_pending`` datagrams
    are kept (the oldest is evicted), and fragments older than ``timeout``
    seconds of capture time are discarded.  Dropped fragments are counted in
    ``counts['fragments_dropped']``.

    ``partial_timeout`` (seconds, None = off): an incomplete datagram whose first
    fragment (offset 0) is present is given up after that long, or when evicted
    or flushed, and its contiguous start is appended to ``partials`` as
    ``(arrival time of its first fragment, key, bytes)`` instead of being dropped
    (see :class:`CaptureReader`, ``partial=True``).
    """

    def __init__(self, counts: Counter, max_pending: int = 256, timeout: float = 30.0,
                 partial_timeout: Optional[float] = None):
        if max_pending < 1:
            raise ValueError("max_pending must be at least 1")
        self.counts = counts
        self.max_pending = max_pending
        self.timeout = timeout
        self.partial_timeout = partial_timeout
        self.pending: "OrderedDict[tuple, _Pending]" = OrderedDict()
        self.partials: List[Tuple[float, tuple, bytes]] = []

    def _drop(self, key, give_up: bool = True) -> None:
        """Forget a pending datagram; ``give_up``: it is merely incomplete (timed out,
        evicted, end of input), so its start may become a partial record."""
        entry = self.pending.pop(key)
        used = 0
        if give_up and self.partial_timeout is not None and entry.head_ts is not None:
            prefix = bytearray()
            for o in sorted(entry.pieces):
                if o > len(prefix):
                    break  # a hole: keep what comes before it
                piece = entry.pieces[o]
                prefix[o:o + len(piece)] = piece
                used += 1
            self.partials.append((entry.head_ts, key, bytes(prefix)))
        self.counts["fragments_dropped"] += len(entry.pieces) - used

    def expire(self, ts: float) -> None:
        """Give up the datagrams that are overdue at capture time ``ts``."""
        while self.pending:  # expire by capture time, oldest first
            oldest_key, oldest = next(iter(self.pending.items()))
            if ts - oldest.first_ts <= self.timeout:
                break
            self._drop(oldest_key)
        if self.partial_timeout is not None:
            late = [k for k, e in self.pending.items()
                    if e.head_ts is not None and ts - e.head_ts > self.partial_timeout]
            for k in late:
                self._drop(k)

    def oldest_head(self) -> Optional[float]:
        """Arrival time of the oldest pending first fragment (None when there is none)."""
        heads = [e.head_ts for e in self.pending.values() if e.head_ts is not None]
        return min(heads) if heads else None

    def add(self, key: tuple, ts: float, offset: int, more: bool,
            data: bytes) -> Optional[bytes]:
        """Add one fragment (``offset`` in bytes); return the payload once complete."""
        self.expire(ts)
        entry = self.pending.get(key)
        if entry is None:
            if len(self.pending) >= self.max_pending:
                self._drop(next(iter(self.pending)))
            entry = self.pending[key] = _Pending(ts)
        end = offset + len(data)
        if end > _MAX_DATAGRAM or (more and len(data) % 8) or \
                (entry.total is not None and end > entry.total) or \
                (not more and entry.total is not None and end != entry.total):
            entry.pieces[offset] = data  # count it with the rest
            self._drop(key, give_up=False)
            return None
        if not more:
            if any(o + len(p) > end for o, p in entry.pieces.items()):
                entry.pieces[offset] = data
                self._drop(key, give_up=False)
                return None
            entry.total = end
        if offset in entry.pieces:  # a duplicate: keep the first copy
            self.counts["fragments_dropped"] += 1
        else:
            entry.pieces[offset] = data
            if offset == 0:
                entry.head_ts = ts
        if entry.total is None:
            return None
        covered = 0
        for o in sorted(entry.pieces):
            if o > covered:
                return None  # a hole remains
            covered = max(covered, o + len(entry.pieces[o]))
        if covered < entry.total:
            return None
        buf = bytearray(entry.total)
        for o in sorted(entry.pieces):
            buf[o:o + len(entry.pieces[o])] = entry.pieces[o]
        del self.pending[key]
        self.counts["reassembled"] += 1
        return bytes(buf)

    def flush(self) -> None:
        """Discard every incomplete datagram (end of input)."""
        for key in list(self.pending):
            self._drop(key)


# ----------------------------------------------------------------------------- reader

class _ShortReadWatch:
    """File wrapper noting a read cut short by the end of the file.

    dpkt's readers hand out a shortened last record when a file is cut in the
    middle of it; an empty read, by contrast, is a clean end of file.
    """

    def __init__(self, f):
        self._f = f
        self.short = False

    def read(self, n=-1):
        data = self._f.read(n)
        if n is not None and 0 < len(data) < n:
            self.short = True
        return data

    def __getattr__(self, name):
        return getattr(self._f, name)


def _sniff(path: str) -> str:
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic == _PCAPNG_MAGIC:
        return "pcapng"
    if magic in _PCAP_MAGICS:
        return "pcap"
    raise CaptureError(f"{path}: neither pcap nor pcapng (first bytes {magic!r})")


class CaptureReader:
    """Iterable over the UDP datagrams of a capture file; see the module docstring."""

    def __init__(self, path, *, max_pending: int = 256, fragment_timeout: float = 30.0,
                 partial: bool = False, partial_timeout: float = 1.0):
        self.path = os.fspath(path)
        self.max_pending = max_pending
        self.fragment_timeout = fragment_timeout
        self.partial = partial
        self.partial_timeout = partial_timeout
        if partial and not 0 < partial_timeout <= fragment_timeout:
            raise ValueError("partial_timeout must be > 0 and at most fragment_timeout")
        self.counts: Counter = Counter()
        self.format = _sniff(self.path)
        with open(self.path, "rb") as f:
            self.linktype = self._reader(f).datalink()
        if self.linktype not in _LINK_DECODERS:
            raise CaptureError(f"{self.path}: unsupported link type {self.linktype} "
                               f"(supported: {sorted(_LINK_DECODERS)})")

    def _reader(self, f):
        dpkt = _dpkt()
        try:
            if self.format == "pcapng":
                return dpkt.pcapng.Reader(f)
            return dpkt.pcap.Reader(f)
        except Exception as exc:  # dpkt reports bad headers with several exception types
            raise CaptureError(f"{self.path}: unreadable {self.format} header: {exc}") from None

    def __iter__(self) -> Iterator[Record]:
        counts = self.counts
        link = _LINK_DECODERS[self.linktype]
        partial = self.partial
        reasm = Reassembler(counts, self.max_pending, self.fragment_timeout,
                            self.partial_timeout if partial else None)
        held: List[tuple] = []   # partial mode: (ts, seq, record) waiting for older partials
        seq = 0
        dpkt_error = _dpkt().Error
        with open(self.path, "rb") as raw:
            f = _ShortReadWatch(raw)
            packets = iter(self._reader(f))
            while True:
                try:
                    ts, frame = next(packets)
                except StopIteration:
                    break
                except (dpkt_error, struct.error, ValueError):
                    f.short = True
                if f.short:  # the file ends inside this record: drop it and stop
                    counts["truncated_file"] = 1
                    break
                counts["frames"] += 1
                ts = float(ts)
                record = self._datagram(ts, frame, link, reasm)
                if not partial:
                    if record is not None:
                        counts["datagrams"] += 1
                        yield record
                    continue
                reasm.expire(ts)
                if record is not None:
                    heapq.heappush(held, (record[0], seq, record))
                    seq += 1
                seq = self._take_partials(reasm, held, seq)
                horizon = reasm.oldest_head()
                while held and (horizon is None or held[0][0] < horizon):
                    counts["datagrams"] += 1
                    yield heapq.heappop(held)[2]
        reasm.flush()
        if partial:
            self._take_partials(reasm, held, seq)
            while held:
                counts["datagrams"] += 1
                yield heapq.heappop(held)[2]

    def _take_partials(self, reasm: Reassembler, held: list, seq: int) -> int:
        """Move the reassembler's given-up datagrams into ``held`` as records."""
        for ts, key, data in reasm.partials:
            src, dst = key[0], key[1]
            if len(data) < 8:
                self.counts["undecodable"] += 1
                continue
            sport, dport, ulen = struct.unpack_from("!HHH", data)
            if ulen < 8 or ulen <= len(data):
                self.counts["undecodable"] += 1
                continue
            self.counts["partial"] += 1
            record = (ts, (socket.inet_ntoa(src), sport), (socket.inet_ntoa(dst), dport),
                      TruncatedPayload(data[8:], ulen - 8))
            heapq.heappush(held, (ts, seq, record))
            seq += 1
        reasm.partials.clear()
        return seq

    def _datagram(self, ts: float, frame: bytes, link, reasm: Reassembler) -> Optional[Record]:
        counts = self.counts
        try:
            ip = _ipv4(link(frame))
        except _NotIPv4:
            counts["non_ipv4"] += 1
            return None
        except _Undecodable:
            counts["undecodable"] += 1
            return None
        if ip.proto != _IP_PROTO_UDP:
            counts["non_udp"] += 1
            return None
        payload = ip.payload
        if len(payload) < ip.payload_length:
            counts["truncated"] += 1
            return None
        if ip.more_fragments or ip.offset:
            counts["fragments"] += 1
            payload = reasm.add((ip.src, ip.dst, ip.proto, ip.ident), ts, ip.offset,
                                ip.more_fragments, payload)
            if payload is None:
                return None
        if len(payload) < 8:
            counts["undecodable"] += 1
            return None
        sport, dport, ulen = struct.unpack_from("!HHH", payload)
        if ulen < 8 or ulen > len(payload):
            counts["undecodable"] += 1
            return None
        return (ts, (socket.inet_ntoa(ip.src), sport), (socket.inet_ntoa(ip.dst), dport),
                payload[8:ulen])


def _dpkt():
    """The dpkt module (reads the pcap/pcapng containers), imported on first use so that
    everything else of the package, e.g. ``morai_udp_dump --listen``, works without it."""
    try:
        import dpkt
    except ImportError as exc:
        raise CaptureDependencyError(
            f"reading pcap/pcapng files needs the Python package dpkt ({exc}). Install it with "
            f"'sudo apt-get install python3-dpkt' (Debian, Ubuntu 20.04 and later; "
            f"'bash tools/dev.sh setup' does this) or 'python3 -m pip install --user dpkt'. "
            f"rosdep cannot install it: there is no rosdep key for dpkt") from None
    return dpkt


def read_capture(path, **options) -> CaptureReader:
    """Open a pcap/pcapng file; iterate the result for its UDP datagrams.

    Raises :class:`CaptureError` at once if the file is neither pcap nor pcapng.
    ``options``: ``max_pending`` (default 256 incomplete datagrams),
    ``fragment_timeout`` (default 30 s of capture time), ``partial`` (default
    False: also yield incomplete datagrams whose first fragment is present, as
    :class:`TruncatedPayload`) and ``partial_timeout`` (default 1 s).
    """
    return CaptureReader(path, **options)


def write_pcap(path: str, records) -> int:
    """Write ``records`` ``(timestamp, (src_ip, src_port), (dst_ip, dst_port), payload)`` as a
    classic pcap (microseconds, link type RAW: one IPv4 + UDP packet per datagram, unfragmented,
    checksums 0 = not computed), whole or not at all; returns the number written.  What
    :func:`read_capture` reads back record for record (the field report's capture)."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, _MAX_DATAGRAM, 101)]
    n = 0
    for ts, src, dst, payload in records:
        payload = bytes(payload)
        if len(payload) > _MAX_DATAGRAM - 28:
            raise CaptureError(f"a datagram of {len(payload)} bytes does not fit one IPv4 packet")
        udp_hdr = struct.pack("!HHHH", src[1], dst[1], 8 + len(payload), 0)
        ip_hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28 + len(payload), n & 0xFFFF, 0, 64, _IP_PROTO_UDP, 0,
                             socket.inet_aton(src[0]), socket.inet_aton(dst[0]))
        packet = ip_hdr + udp_hdr + payload
        sec = int(ts)
        usec = min(999999, int(round((ts - sec) * 1e6)))
        out.append(struct.pack("<IIII", sec, usec, len(packet), len(packet)) + packet)
        n += 1
    tmp = "%s.tmp%d" % (path, os.getpid())
    try:
        with open(tmp, "wb") as f:
            f.write(b"".join(out))
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return n
