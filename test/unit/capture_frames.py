"""Link-layer frames and IPv4/UDP packets for the capture tests, built with struct.

Not with dpkt's packet classes: their fields mean different things in different dpkt releases
(``IP.offset`` is in bytes before 1.9.7 and in 8-byte units from 1.9.7 on; ``sll2`` exists from
1.9.6 on), and the tests run with Debian 12's dpkt 1.9.8 and Ubuntu 20.04's 1.9.2 (py38 layer).
dpkt still writes the pcap/pcapng files around these frames.
"""
import socket
import struct

ETH_TYPE_IP = 0x0800
ETH_TYPE_ARP = 0x0806
ETH_TYPE_IP6 = 0x86DD
ETH_TYPE_VLAN = 0x8100
MAC_A, MAC_B = b"\x02\x00\x00\x00\x00\x01", b"\x02\x00\x00\x00\x00\x02"


def _checksum(header):
    total = sum(struct.unpack("!%dH" % (len(header) // 2), header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ipv4(data, ident, src, dst, proto=17, offset=0, more=False, ttl=64):
    """An IPv4 packet (20-byte header, checksum set) carrying ``data`` at fragment ``offset``
    (in bytes, a multiple of 8); ``src``/``dst`` dotted quads."""
    assert offset % 8 == 0
    flags = (0x2000 if more else 0) | (offset // 8)
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(data), ident, flags, ttl, proto, 0,
                         socket.inet_aton(src), socket.inet_aton(dst))
    return header[:10] + struct.pack("!H", _checksum(header)) + header[12:] + data


def udp(sport, dport, payload):
    """A UDP header (checksum 0: none) and its payload."""
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def udp_fragments(src, dst, payload, ident, size=1480):
    """IPv4 packets carrying one UDP datagram from ``src`` to ``dst`` ((ip, port) pairs),
    fragmented as a 1500-byte MTU does (``size`` bytes of IP payload per fragment)."""
    datagram = udp(src[1], dst[1], payload)
    return [ipv4(datagram[start:start + size], ident, src[0], dst[0], offset=start,
                 more=start + size < len(datagram))
            for start in range(0, len(datagram), size)]


def ethernet(data, ethtype=ETH_TYPE_IP, src=MAC_A, dst=MAC_B, vlan=None):
    """An Ethernet II frame; ``vlan``: an 802.1Q VLAN id to tag it with."""
    tag = struct.pack("!HH", ETH_TYPE_VLAN, vlan) if vlan is not None else b""
    return dst + src + tag + struct.pack("!H", ethtype) + data


def sll(data, ethtype=ETH_TYPE_IP):
    """A Linux cooked capture (v1) frame, as received (packet type 0) on an Ethernet device."""
    return struct.pack("!HHH8sH", 0, 1, 6, MAC_A, ethtype) + data


def sll2(data, ethtype=ETH_TYPE_IP, ifindex=2):
    """A Linux cooked capture v2 frame."""
    return struct.pack("!HHIHBB8s", ethtype, 0, ifindex, 1, 0, 6, MAC_A) + data


def write_udp_pcap(path, datagrams, first_fragment_only=False, ident=0x300):
    """An Ethernet pcap of ``(ts, src, dst, payload)`` UDP datagrams (``src``, ``dst``: ``(ip, port)``),
    each split into IP fragments as the sender's stack does, 0.1 ms apart; ``first_fragment_only``: as a
    capture with a port filter keeps them (later fragments carry no UDP header).  IP ids from ``ident``."""
    import dpkt       # writes only the file around the frames (module docstring)
    with open(path, "wb") as f:
        w = dpkt.pcap.Writer(f, linktype=dpkt.pcap.DLT_EN10MB)
        for i, (ts, src, dst, payload) in enumerate(datagrams):
            frags = udp_fragments(src, dst, payload, ident + i)
            for k, ip in enumerate(frags[:1] if first_fragment_only else frags):
                w.writepkt(ethernet(ip, src=b"\x02" * 6, dst=b"\x04" * 6), ts + 0.0001 * k)
    return str(path)
