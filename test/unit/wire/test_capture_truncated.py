"""Port-filtered captures: the first IP fragment of Object Info (fidelity item 7).

A capture taken with a port filter (``udp port 7505``) holds only the first IP
fragment of every 2160-byte Object Info datagram: the later fragments carry no
UDP header, so the filter drops them.  The capture reader (``partial=True``)
hands those first fragments out as ``TruncatedPayload`` (in capture order) and
the codec decodes the records they hold whole; those equal the full
datagram's.  The capture is written here, with dpkt.
"""

import struct

import dpkt
import pytest
import helpers
from capture_frames import ethernet, udp_fragments, write_udp_pcap

from morai_bridge.wire import udp
from morai_bridge.wire.capture import TruncatedPayload, read_capture

SIM, USER = "192.168.20.58", "192.168.20.61"


def with_data_length(datagram: bytes, data_length: int) -> bytes:
    end = datagram.index(b"$", 1) + 1
    return datagram[:end] + struct.pack("<I", data_length) + datagram[end + 4:]


def _objects(n, sec=1726147847):
    return udp.make(udp.ObjectInfo, sec=sec, nsec=367000000, objects=tuple(
        udp.ObjectRecord(obj_id=10 + i, obj_type=i % 3, pos_x=100.0 + i, pos_y=-5.0 * i,
                         heading=float(i), size_x=4.5, vel_x=float(i), link_id=f"L{i}")
        for i in range(n)))


def test_decode_truncated_keeps_the_records_the_prefix_holds_whole():
    full = udp.encode(_objects(20))
    first = full[:1472]                     # what the first fragment of a 1500-byte MTU holds
    msg, read, total = udp.decode_truncated(first, len(full))
    want = udp.decode(full)
    assert (read, total) == ((1472 - 38) // 106, 20) == (13, 20)
    assert msg.objects == want.objects[:13]
    assert msg._replace(objects=()) == want._replace(objects=())    # stamp, data_length
    # without the full length it is taken from the header's data_length
    assert udp.decode_truncated(first) == (msg, 13, 20)
    data, read2, _ = udp.complete_truncated(first)
    assert len(data) == len(full) and data.endswith(b"\r\n") and read2 == 13
    assert udp.decode(data) == msg
    # a prefix with fewer objects than readable slots: all of them
    few = udp.encode(_objects(4))
    assert udp.decode_truncated(few[:1472])[0] == udp.decode(few)
    # the shorter 2152-byte variant (no stamp)
    old = udp.encode(udp.make(udp.ObjectInfo, 2120, objects=_objects(20).objects))
    msg, read, total = udp.decode_truncated(old[:1472], len(old))
    assert (read, total) == ((1472 - 30) // 106, 20) and \
        msg.objects == udp.decode(old).objects[:read]


@pytest.mark.parametrize("prefix,length", [
    (udp.encode(_objects(3))[:20], None),                 # not even the fixed part
    (udp.encode(_objects(3)), None),                      # not truncated at all
    (udp.encode(_objects(3))[:1472], 2000),               # the full length does not match
    (udp.encode(udp.make(udp.EgoVehicleStatus))[:100], None),   # no record block
    (b"#NoSuchHeader$" + bytes(100), None),
    (with_data_length(udp.encode(_objects(3)), 7)[:1472], None),  # unknown data_length
    (b"\x00" * 1472, None),
    (b"", None),
])
def test_decode_truncated_errors(prefix, length):
    with pytest.raises(udp.DecodeError):
        udp.decode_truncated(prefix, length)


def _frame(ts, ip):
    return ts, ethernet(ip, src=b"\x02" * 6, dst=b"\x04" * 6)


def _ip_fragments(sport, dport, payload, ident):
    return udp_fragments((SIM, sport), (USER, dport), payload, ident)


def write_port_filtered(path, datagrams, first_only=True):
    """A pcap as ``tcpdump 'udp port 7505'`` writes it: later fragments are missing."""
    return write_udp_pcap(path, [(ts, (SIM, sport), (USER, dport), payload) for ts, sport, dport, payload in datagrams],
                          first_fragment_only=first_only, ident=0x2000)


def test_port_filtered_capture_yields_the_first_fragments(tmp_path):
    status = udp.encode(udp.make(udp.EgoVehicleStatus, sec=1, pos_x=5.0))
    objs = [udp.encode(_objects(n, sec=1726147847 + n)) for n in (20, 0, 7)]
    datagrams = [(100.0, 908, 909, status)] + [
        (100.02 + 0.02 * k, 7605, 7505, o) for k, o in enumerate(objs)] + [
        (100.1, 908, 909, status)]
    path = write_port_filtered(tmp_path / "port7505.pcap", datagrams)

    # default reader: unchanged, the incomplete datagrams are dropped and counted
    reader = read_capture(path)
    assert [p for _, _, _, p in reader] == [status, status]
    assert reader.counts["fragments_dropped"] == 3 and reader.counts["partial"] == 0

    reader = read_capture(path, partial=True)
    got = list(reader)
    assert [round(t, 4) for t, _, _, _ in got] == [100.0, 100.02, 100.04, 100.06, 100.1]
    assert [(s[1], d[1]) for _, s, d, _ in got] == [(908, 909)] + [(7605, 7505)] * 3 + [(908, 909)]
    assert not isinstance(got[0][3], TruncatedPayload)
    for (_, _, _, payload), full in zip(got[1:4], objs):
        assert isinstance(payload, TruncatedPayload) and isinstance(payload, bytes)
        assert payload.full_length == len(full) == 2160
        assert payload == full[:1472]
        msg, read, total = udp.decode_truncated(payload, payload.full_length)
        assert msg.objects == udp.decode(full).objects[:read] and (read, total) == (13, 20)
        assert (msg.sec, msg.nsec) == (udp.decode(full).sec, udp.decode(full).nsec)
    assert reader.counts["partial"] == 3 and reader.counts["fragments_dropped"] == 0
    assert reader.counts["datagrams"] == 5


def test_partial_mode_still_reassembles_complete_datagrams(tmp_path):
    objs = [udp.encode(_objects(n)) for n in (20, 3)]
    path = write_port_filtered(tmp_path / "full.pcap",
                               [(10.0 + k, 7605, 7505, o) for k, o in enumerate(objs)],
                               first_only=False)
    reader = read_capture(path, partial=True)
    got = [p for _, _, _, p in reader]
    assert got == objs and not any(isinstance(p, TruncatedPayload) for p in got)
    assert reader.counts["reassembled"] == 2 and reader.counts["partial"] == 0


def test_partial_records_keep_capture_order(tmp_path):
    """A first fragment waits at most partial_timeout; later datagrams are held back."""
    obj = udp.encode(_objects(5))
    status = udp.encode(udp.make(udp.EgoVehicleStatus))
    datagrams = [(1.0, 7605, 7505, obj)] + [(1.001 + 0.1 * k, 908, 909, status)
                                            for k in range(30)]
    path = write_port_filtered(tmp_path / "order.pcap", datagrams)
    got = list(read_capture(path, partial=True, partial_timeout=0.5))
    times = [t for t, _, _, _ in got]
    assert times == sorted(times) and len(got) == 31
    assert isinstance(got[0][3], TruncatedPayload)


def test_partial_mode_with_interleaved_out_of_order_fragments(tmp_path):
    a, b, c = (udp.encode(_objects(n)) for n in (20, 5, 9))
    fa, fb, fc = (_ip_fragments(7605, 7505, d, 0x3000 + k) for k, d in enumerate((a, b, c)))
    frames = [(1.0, fa[0]), (1.1, fb[1]), (1.2, fb[0]), (1.3, fa[0]), (1.4, fa[1]),
              (1.5, fc[0])]                  # b's last fragment first, a duplicate, c lost
    path = tmp_path / "mixed.pcap"
    with open(path, "wb") as f:
        w = dpkt.pcap.Writer(f, linktype=dpkt.pcap.DLT_EN10MB)
        for ts, ip in frames:
            w.writepkt(_frame(ts, ip)[1], ts)
    plain = [(round(t, 3), p) for t, _, _, p in read_capture(path)]
    assert plain == [(1.2, b), (1.4, a)]
    reader = read_capture(path, partial=True)
    got = [(round(t, 3), p) for t, _, _, p in reader]
    assert got == [(1.2, b), (1.4, a), (1.5, c[:1472])]
    assert isinstance(got[2][1], TruncatedPayload) and reader.counts["partial"] == 1
    assert reader.counts["reassembled"] == 2 and reader.counts["fragments_dropped"] == 1  # duplicate


CAPTURES = __import__("pathlib").Path(helpers.ROOT).parent / "shared" / "captures"


@pytest.mark.skipif(not (CAPTURES / "MORAI.pcap").is_file(),
                    reason=f"real captures not available (expected in {CAPTURES})")
def test_real_capture_reads_the_same_in_partial_mode():
    plain = list(read_capture(CAPTURES / "MORAI.pcap"))
    reader = read_capture(CAPTURES / "MORAI.pcap", partial=True)
    assert list(reader) == plain and reader.counts["partial"] == 0
