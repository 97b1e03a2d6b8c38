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
``truncated_file``  1 if the file ends in the middle of a record
==================  =============================================================

Link types: Ethernet (incl. VLAN tags, as dpkt handles them), Linux cooked
capture v1/v2 (SLL/SLL2), raw IP, BSD loopback (NULL/LOOP).  For pcapng, dpkt
uses the link type of the first interface for every packet.

Uses dpkt; no ROS imports.
"""

import os
import socket
import struct
from collections import Counter, OrderedDict
from typing import Callable, Dict, Iterator, Optional, Tuple

import dpkt

__all__ = ["CaptureError", "CaptureReader", "read_capture", "Reassembler"]

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


# ----------------------------------------------------------------------------- link layer

class _NotIPv4(Exception):
    pass


def _from_ethertype_frame(frame) -> "dpkt.ip.IP":
    data = frame.data
    if isinstance(data, dpkt.ip.IP):
        return data
    ethtype = getattr(frame, "type", None) if isinstance(frame, dpkt.ethernet.Ethernet) \
        else getattr(frame, "ethtype", None)
    if ethtype == dpkt.ethernet.ETH_TYPE_IP:
        raise dpkt.UnpackError("IPv4 ethertype but no parsable IPv4 header")
    raise _NotIPv4()


def _ethernet(buf: bytes):
    return _from_ethertype_frame(dpkt.ethernet.Ethernet(buf))


def _sll(buf: bytes):
    return _from_ethertype_frame(dpkt.sll.SLL(buf))


def _sll2(buf: bytes):
    return _from_ethertype_frame(dpkt.sll2.SLL2(buf))


def _raw_ip(buf: bytes):
    if not buf or buf[0] >> 4 != 4:
        raise _NotIPv4()
    return dpkt.ip.IP(buf)


def _loopback(buf: bytes):
    return _raw_ip(buf[4:])  # 4-byte address family in the capturing host's byte order


_LINK_DECODERS: Dict[int, Callable[[bytes], "dpkt.ip.IP"]] = {
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


# ----------------------------------------------------------------------------- reassembly

class _Pending:
    __slots__ = ("first_ts", "pieces", "total")

    def __init__(self, ts: float):
        self.first_ts = ts
        self.pieces: Dict[int, bytes] = {}
        self.total: Optional[int] = None


class Reassembler:
    """IPv4 fragment reassembly keyed by (src, dst, protocol, identification).

    A datagram is complete once its last fragment (MF = 0) has fixed the total
    length and the fragments cover every byte.  At most ``max_pending`` datagrams
    are kept (the oldest is evicted), and fragments older than ``timeout``
    seconds of capture time are discarded.  Dropped fragments are counted in
    ``counts['fragments_dropped']``.
    """

    def __init__(self, counts: Counter, max_pending: int = 256, timeout: float = 30.0):
        if max_pending < 1:
            raise ValueError("max_pending must be at least 1")
        self.counts = counts
        self.max_pending = max_pending
        self.timeout = timeout
        self.pending: "OrderedDict[tuple, _Pending]" = OrderedDict()

    def _drop(self, key) -> None:
        entry = self.pending.pop(key)
        self.counts["fragments_dropped"] += len(entry.pieces)

    def add(self, key: tuple, ts: float, offset: int, more: bool,
            data: bytes) -> Optional[bytes]:
        """Add one fragment (``offset`` in bytes); return the payload once complete."""
        while self.pending:  # expire by capture time, oldest first
            oldest_key, oldest = next(iter(self.pending.items()))
            if ts - oldest.first_ts <= self.timeout:
                break
            self._drop(oldest_key)
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
            self._drop(key)
            return None
        if not more:
            if any(o + len(p) > end for o, p in entry.pieces.items()):
                entry.pieces[offset] = data
                self._drop(key)
                return None
            entry.total = end
        if offset in entry.pieces:  # a duplicate: keep the first copy
            self.counts["fragments_dropped"] += 1
        else:
            entry.pieces[offset] = data
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

    def __init__(self, path, *, max_pending: int = 256, fragment_timeout: float = 30.0):
        self.path = os.fspath(path)
        self.max_pending = max_pending
        self.fragment_timeout = fragment_timeout
        self.counts: Counter = Counter()
        self.format = _sniff(self.path)
        with open(self.path, "rb") as f:
            self.linktype = self._reader(f).datalink()
        if self.linktype not in _LINK_DECODERS:
            raise CaptureError(f"{self.path}: unsupported link type {self.linktype} "
                               f"(supported: {sorted(_LINK_DECODERS)})")

    def _reader(self, f):
        try:
            if self.format == "pcapng":
                return dpkt.pcapng.Reader(f)
            return dpkt.pcap.Reader(f)
        except Exception as exc:  # dpkt reports bad headers with several exception types
            raise CaptureError(f"{self.path}: unreadable {self.format} header: {exc}") from None

    def __iter__(self) -> Iterator[Record]:
        counts = self.counts
        link = _LINK_DECODERS[self.linktype]
        reasm = Reassembler(counts, self.max_pending, self.fragment_timeout)
        with open(self.path, "rb") as raw:
            f = _ShortReadWatch(raw)
            packets = iter(self._reader(f))
            while True:
                try:
                    ts, frame = next(packets)
                except StopIteration:
                    break
                except (dpkt.Error, struct.error, ValueError):
                    f.short = True
                if f.short:  # the file ends inside this record: drop it and stop
                    counts["truncated_file"] = 1
                    break
                counts["frames"] += 1
                record = self._datagram(float(ts), frame, link, reasm)
                if record is not None:
                    counts["datagrams"] += 1
                    yield record
        reasm.flush()

    def _datagram(self, ts: float, frame: bytes, link, reasm: Reassembler) -> Optional[Record]:
        counts = self.counts
        try:
            ip = link(frame)
            if ip.v != 4 or ip.hl < 5 or ip.len < ip.hl * 4:
                raise dpkt.UnpackError("bad IPv4 header")
        except _NotIPv4:
            counts["non_ipv4"] += 1
            return None
        except (dpkt.Error, struct.error, ValueError, IndexError):
            counts["undecodable"] += 1
            return None
        if ip.p != _IP_PROTO_UDP:
            counts["non_udp"] += 1
            return None
        payload = ip.data if isinstance(ip.data, bytes) else bytes(ip.data)
        if len(payload) < ip.len - ip.hl * 4:
            counts["truncated"] += 1
            return None
        if ip.mf or ip.offset:
            counts["fragments"] += 1
            payload = reasm.add((ip.src, ip.dst, ip.p, ip.id), ts, ip.offset * 8,
                                bool(ip.mf), payload)
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


def read_capture(path, **options) -> CaptureReader:
    """Open a pcap/pcapng file; iterate the result for its UDP datagrams.

    Raises :class:`CaptureError` at once if the file is neither pcap nor pcapng.
    ``options``: ``max_pending`` (default 256 incomplete datagrams) and
    ``fragment_timeout`` (default 30 s of capture time).
    """
    return CaptureReader(path, **options)
