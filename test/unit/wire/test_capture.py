"""Capture reader on pcap/pcapng files written by the tests themselves (frames built with struct
in capture_frames.py, files written with dpkt): runs with dpkt 1.9.8 (Debian 12) and 1.9.2 (py38)."""

import struct
from collections import Counter

import dpkt
import pytest
from capture_frames import ETH_TYPE_ARP, ETH_TYPE_IP, ETH_TYPE_IP6, ethernet, ipv4, sll, sll2
from capture_frames import udp as udp_bytes

from morai_bridge.wire import udp
from morai_bridge.wire.capture import CaptureError, Reassembler, read_capture

SIM, USER = "192.168.20.58", "192.168.20.61"


def ip_packet(data, ident, p=17, offset=0, more=False, src=SIM, dst=USER):
    """An IPv4 packet carrying ``data`` (raw bytes) at fragment ``offset`` (bytes)."""
    return ipv4(data, ident, src, dst, proto=p, offset=offset, more=more)


def fragments(datagram, ident, size=1480, **kw):
    """Split a UDP datagram (header included) into IPv4 fragments, in order."""
    out = []
    for start in range(0, len(datagram), size):
        chunk = datagram[start:start + size]
        out.append(ip_packet(chunk, ident, offset=start,
                             more=start + size < len(datagram), **kw))
    return out


def ether(ip_bytes, ethtype=ETH_TYPE_IP):
    return ethernet(ip_bytes, ethtype)


STATUS = udp.encode(udp.make(udp.EgoVehicleStatus, sec=100, nsec=5, pos_x=1.5,
                             link_id="A219BS010391"))
OBJECTS = udp.encode(udp.make(udp.ObjectInfo, sec=100, nsec=5, objects=tuple(
    udp.ObjectRecord(obj_id=i + 1, obj_type=1, pos_x=float(i)) for i in range(20))))
OBJECTS2 = udp.encode(udp.make(udp.ObjectInfo, sec=101, nsec=0))
assert len(OBJECTS) == len(OBJECTS2) == 2160


def scenario():
    """(timestamp, ip packet) list exercising reassembly and skipping."""
    obj = fragments(udp_bytes(7605, 7505, OBJECTS), ident=0x1001)
    obj2 = fragments(udp_bytes(7605, 7505, OBJECTS2), ident=0x1002)
    lost = fragments(udp_bytes(7605, 7505, OBJECTS2), ident=0x1003)
    assert len(obj) == 2
    packets = [
        (1.0, ip_packet(udp_bytes(908, 909, STATUS), 1)),
        (1.1, obj[1]),                 # last fragment first
        (1.2, obj2[0]),                # interleaved with another datagram
        (1.3, obj2[0]),                # duplicate fragment
        (1.4, obj[0]),                 # completes OBJECTS at t = 1.4
        (1.5, ip_packet(b"\x00" * 20, 2, p=6)),  # TCP
        (1.6, obj2[1]),                # completes OBJECTS2 at t = 1.6
        (1.7, lost[0]),                # never completed
        (1.8, ip_packet(udp_bytes(9090, 9091, b"$GPGGA,1*00\r\n"), 3)),
    ]
    return packets


EXPECTED = [
    (1.0, (SIM, 908), (USER, 909), STATUS),
    (1.4, (SIM, 7605), (USER, 7505), OBJECTS),
    (1.6, (SIM, 7605), (USER, 7505), OBJECTS2),
    (1.8, (SIM, 9090), (USER, 9091), b"$GPGGA,1*00\r\n"),
]


def write_pcap(path, frames, linktype=1, nano=False):  # 1: DLT_EN10MB
    with open(path, "wb") as f:
        writer = dpkt.pcap.Writer(f, linktype=linktype, nano=nano)
        for ts, frame in frames:
            writer.writepkt(frame, ts)


def ethernet_frames():
    frames = [(ts, ether(p)) for ts, p in scenario()]
    frames.insert(2, (1.05, ether(b"\x00\x01" * 14, ETH_TYPE_ARP)))
    frames.insert(3, (1.06, ether(b"\x60" + bytes(47), ETH_TYPE_IP6)))
    frames.insert(4, (1.07, ether(b"\x45\x00\x00")))  # IPv4 ethertype, broken header
    return frames


def check(reader, extra=()):
    got = list(reader)
    assert [(round(t, 6), s, d, p) for t, s, d, p in got] == EXPECTED
    assert all(isinstance(t, float) for t, *_ in got)
    c = reader.counts
    assert c["datagrams"] == 4 and c["reassembled"] == 2
    assert c["fragments"] == 6 and c["non_udp"] == 1
    assert c["fragments_dropped"] == 2  # the duplicate copy and the lost datagram's piece
    for key, value in extra:
        assert c[key] == value, key
    return got


def test_pcap_ethernet_with_out_of_order_fragments(tmp_path):
    path = tmp_path / "eth.pcap"
    write_pcap(path, ethernet_frames())
    reader = read_capture(path)
    assert (reader.format, reader.linktype) == ("pcap", 1)
    got = check(reader, [("non_ipv4", 2), ("undecodable", 1), ("frames", 12)])
    assert udp.decode(got[1][3]).objects[19].obj_id == 20
    # iterating again gives the same result with fresh counts in the same Counter
    assert len(list(reader)) == 4


def test_pcapng(tmp_path):
    path = tmp_path / "eth.pcapng"
    with open(path, "wb") as f:
        writer = dpkt.pcapng.Writer(f, linktype=1)  # DLT_EN10MB
        for ts, frame in ethernet_frames():
            writer.writepkt(frame, ts)
    reader = read_capture(path)
    assert reader.format == "pcapng"
    check(reader, [("non_ipv4", 2), ("undecodable", 1)])


def test_nanosecond_pcap(tmp_path):
    path = tmp_path / "nano.pcap"
    write_pcap(path, ethernet_frames(), nano=True)
    check(read_capture(path))


def test_linux_cooked_capture(tmp_path):
    path = tmp_path / "sll.pcap"
    frames = [(ts, sll(p)) for ts, p in scenario()] + [(2.0, sll(b"\x00" * 28, ETH_TYPE_ARP))]
    write_pcap(path, frames, linktype=113)  # DLT_LINUX_SLL
    check(read_capture(path), [("non_ipv4", 1)])


def test_linux_cooked_capture_v2(tmp_path):
    # SLL2 (tcpdump -i any since libpcap 1.10): dpkt has no class for it before 1.9.6
    path = tmp_path / "sll2.pcap"
    frames = [(ts, sll2(p)) for ts, p in scenario()] + [(2.0, sll2(b"\x60" + bytes(39), ETH_TYPE_IP6)),
                                                        (2.1, sll2(b"\x45"))]
    write_pcap(path, frames, linktype=276)  # LINKTYPE_LINUX_SLL2
    check(read_capture(path), [("non_ipv4", 1), ("undecodable", 1)])


def test_vlan_tagged_ethernet(tmp_path):
    path = tmp_path / "vlan.pcap"
    frames = [(ts, ethernet(p, vlan=20)) for ts, p in scenario()]
    frames.append((2.0, ethernet(b"", 0x8100)[:14] + b"\x00"))  # a VLAN tag cut short
    write_pcap(path, frames)
    check(read_capture(path), [("undecodable", 1)])


def test_ip_header_fields_read_from_the_bytes(tmp_path):
    """IPv4 options (header longer than 20 bytes), link padding after the packet, and a fragment
    offset above 8 KiB (13-bit field in 8-byte units): none of them may shift the payload."""
    path = tmp_path / "fields.pcap"
    big = udp_bytes(7605, 7505, bytes(range(256)) * 40)    # 10248 bytes: 7 fragments
    frags = [ip_packet(big[o:o + 1480], 0x77, offset=o, more=o + 1480 < len(big))
             for o in range(0, len(big), 1480)]
    # the first fragment again, with 4 bytes of IPv4 options (NOP NOP NOP EOL)
    first = frags[0]
    opt = bytes([0x46]) + first[1:2] + struct.pack("!H", len(first) + 4) + first[4:20] \
        + b"\x01\x01\x01\x00" + first[20:]
    frames = [(1.0, ether(f)) for f in reversed(frags[1:])] + [(1.1, ether(opt) + bytes(30))]
    write_pcap(path, frames)
    reader = read_capture(path)
    got = list(reader)
    assert [p for *_, p in got] == [big[8:]]
    assert reader.counts["reassembled"] == 1 and reader.counts["fragments"] == 7


def test_raw_ip_capture(tmp_path):
    path = tmp_path / "raw.pcap"
    frames = scenario() + [(2.0, b"\x60" + bytes(39))]  # an IPv6 packet
    write_pcap(path, frames, linktype=101)
    check(read_capture(path), [("non_ipv4", 1)])


def test_snaplen_truncated_packet_is_counted(tmp_path):
    path = tmp_path / "snap.pcap"
    frame = ether(ip_packet(udp_bytes(908, 909, STATUS), 9))
    write_pcap(path, [(1.0, frame[:100]), (2.0, frame)])
    reader = read_capture(path)
    assert [p for *_, p in reader] == [STATUS]
    assert reader.counts["truncated"] == 1


def test_truncated_file_stops_cleanly(tmp_path):
    path = tmp_path / "cut.pcap"
    write_pcap(path, ethernet_frames())
    data = path.read_bytes()
    path.write_bytes(data[:-30])  # cut inside the last record
    reader = read_capture(path)
    got = list(reader)
    assert [p for *_, p in got] == [e[3] for e in EXPECTED[:3]]
    assert reader.counts["truncated_file"] == 1


@pytest.mark.parametrize("content", [b"", b"hello world, not a capture", b"\xd4\xc3"])
def test_not_a_capture(tmp_path, content):
    path = tmp_path / "x.pcap"
    path.write_bytes(content)
    with pytest.raises(CaptureError, match="neither pcap nor pcapng"):
        read_capture(path)
    assert issubclass(CaptureError, ValueError)


def test_damaged_header_and_unsupported_link_type(tmp_path):
    path = tmp_path / "bad.pcap"
    path.write_bytes(b"\xd4\xc3\xb2\xa1" + bytes(5))
    with pytest.raises(CaptureError, match="header"):
        read_capture(path)
    write_pcap(path, [(1.0, b"\x00" * 30)], linktype=105)  # IEEE 802.11
    with pytest.raises(CaptureError, match="link type 105"):
        read_capture(path)


# ---------------------------------------------------------------- Reassembler unit tests

def test_reassembler_needs_every_byte_and_the_last_fragment():
    counts = Counter()
    r = Reassembler(counts)
    assert r.add("k", 0.0, 0, True, b"a" * 8) is None
    assert r.add("k", 0.0, 16, False, b"c" * 3) is None      # hole at 8..16
    assert r.add("k", 0.0, 8, True, b"b" * 8) == b"a" * 8 + b"b" * 8 + b"ccc"
    assert not r.pending and counts["reassembled"] == 1


def test_reassembler_overlapping_fragments():
    r = Reassembler(Counter())
    assert r.add("k", 0.0, 8, False, b"BBBBBBBBbb") is None
    assert r.add("k", 0.0, 0, True, b"AAAAAAAAAAAAAAAA") == b"AAAAAAAA" + b"BBBBBBBBbb"


def test_reassembler_is_bounded():
    counts = Counter()
    r = Reassembler(counts, max_pending=4)
    for ident in range(10):
        r.add(ident, 0.0, 0, True, b"x" * 8)
    assert len(r.pending) == 4 and counts["fragments_dropped"] == 6
    assert list(r.pending) == [6, 7, 8, 9]  # the oldest were evicted


def test_reassembler_times_out_by_capture_time():
    counts = Counter()
    r = Reassembler(counts, timeout=30.0)
    r.add("old", 0.0, 0, True, b"x" * 8)
    r.add("new", 20.0, 0, True, b"y" * 8)
    assert r.add("old", 31.0, 8, False, b"z") is None  # first piece expired meanwhile
    assert "new" in r.pending and counts["fragments_dropped"] == 1


@pytest.mark.parametrize("pieces", [
    [(0, True, b"x" * 7)],                         # non-final fragment not a multiple of 8
    [(65528, True, b"x" * 16)],                    # beyond 64 KiB
    [(8, False, b"x" * 8), (16, True, b"y" * 8)],  # data beyond the announced end
    [(8, False, b"x" * 8), (8, False, b"x" * 16)],  # two different ends
    [(16, True, b"y" * 8), (8, False, b"x" * 8)],  # an end before data already seen
])
def test_reassembler_drops_inconsistent_datagrams(pieces):
    counts = Counter()
    r = Reassembler(counts)
    for offset, more, data in pieces:
        assert r.add("k", 0.0, offset, more, data) is None
    assert "k" not in r.pending and counts["fragments_dropped"] >= 1
