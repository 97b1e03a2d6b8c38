"""morai_udp_dump at the edges of real traffic (fidelity items 6 and 7).

Item 6: a datagram whose length identifies its message but whose data_length
disagrees is decoded, marked and counted as a warning (not a decode error).
Item 7: see test_fidelity_dump_truncated below the item-6 tests.
Captures are written here with dpkt.
"""

import json
import socket
import struct

import dpkt

from morai_bridge import dump
from morai_bridge.wire import udp

SIM, USER = "192.168.20.58", "192.168.20.61"
T0 = 1726147850.5


def with_data_length(datagram, data_length):
    end = datagram.index(b"$", 1) + 1
    return datagram[:end] + struct.pack("<I", data_length) + datagram[end + 4:]


def ip_fragments(src, dst, payload, ident):
    data = struct.pack("!HHHH", src[1], dst[1], 8 + len(payload), 0) + payload
    out = []
    for start in range(0, len(data), 1480):
        ip = dpkt.ip.IP(src=socket.inet_aton(src[0]), dst=socket.inet_aton(dst[0]), p=17,
                        id=ident, ttl=64, data=data[start:start + 1480])
        ip.mf = int(start + 1480 < len(data))
        ip.offset = start // 8
        out.append(bytes(ip))
    return out


def write_capture(path, datagrams, first_fragment_only=False):
    """pcap of ``(dt, src, dst, payload)``; ``first_fragment_only`` as a port filter keeps it."""
    with open(path, "wb") as f:
        w = dpkt.pcap.Writer(f, linktype=dpkt.pcap.DLT_EN10MB)
        for i, (dt, src, dst, payload) in enumerate(datagrams):
            frags = ip_fragments(src, dst, payload, 0x300 + i)
            for k, ip in enumerate(frags[:1] if first_fragment_only else frags):
                eth = dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6,
                                             type=dpkt.ethernet.ETH_TYPE_IP, data=ip)
                w.writepkt(bytes(eth), T0 + dt + 0.0001 * k)
    return str(path)


def run(capsys, *argv):
    status = dump.main(list(argv))
    out, err = capsys.readouterr()
    return status, out.splitlines(), err


# ----------------------------------------------------------------------------- item 6

NPC = udp.make(udp.NpcVehicleCollision, pairs=((
    udp.NpcCollisionRecord(1, 4, 1.0, 2.0, 0.0, 0.0, 4.5, 1.8, 1.5, 10.0, 0.0, 0.0, 0.0, 0.0,
                           0.0),
    udp.NpcCollisionRecord(1, 5, 1.5, 2.0, 0.0, 0.0, 4.5, 1.8, 1.5, 0.0, 0.0, 0.0, 0.0, 0.0,
                           0.0)),))
IMU = udp.make(udp.ImuData, sec=1726147847, nsec=5, ori_w=1.0, lin_acc_z=9.80665)
MISMATCHED = [
    (0.00, (SIM, 9107), (USER, 9108), with_data_length(udp.encode(NPC), 0)),
    (0.01, (SIM, 9109), (USER, 9110), with_data_length(udp.encode(IMU), 96)),
    (0.02, (SIM, 9107), (USER, 9108), with_data_length(udp.encode(NPC), 0)),
    (0.03, (SIM, 908), (USER, 909), udp.encode(udp.make(udp.EgoVehicleStatus))[:100]),
]


def test_unexpected_data_length_is_decoded_marked_and_counted(tmp_path, capsys):
    path = write_capture(tmp_path / "mismatch.pcap", MISMATCHED)
    status, lines, err = run(capsys, path, "--utc")
    shown = [ln for ln in lines if " -> " in ln]
    assert len(shown) == 4
    npc = [ln for ln in shown if "npc_vehicle_collision" in ln]
    assert len(npc) == 2 and all("[data_length 0, expected 1120] 1 pair: veh 4 <-> veh 5" in ln
                                 for ln in npc)
    assert "imu" in shown[1] and "[data_length 96, expected 88] stamp=1726147847.000000005" \
        in shown[1]
    assert "DECODE ERROR #1" in shown[3]             # a truncated status is still an error
    assert "decoded despite an unexpected data_length (warnings): 3" in lines
    assert any(ln.split() == ["2", "#VehicleCollision$", "data_length", "0,", "expected", "1120",
                              "(1156", "B,", "npc_vehicle_collision)"] for ln in lines), lines
    assert "decode errors: 1" in lines and status == 1 and err == ""
    # only the mismatches: exit status 0, the messages counted as messages
    path = write_capture(tmp_path / "only.pcap", MISMATCHED[:3])
    status, lines, _ = run(capsys, path, "--json")
    records = [json.loads(ln) for ln in lines]
    assert status == 0
    assert [r["kind"] for r in records] == ["message"] * 3 + ["summary"]
    assert records[0]["data_length_received"] == 0 and \
        "data_length 0 received, expected 1120" in records[0]["warning"]
    assert records[0]["msg"]["data_length"] == 1120 and len(records[0]["msg"]["pairs"]) == 1
    summary = records[-1]
    assert summary["decode_errors"] == 0 and summary["data_length_mismatches"] == 3
    assert summary["types"] == {"npc_vehicle_collision": 2, "imu": 1}
    assert summary["mismatches"] == {
        "#VehicleCollision$ data_length 0, expected 1120 (1156 B, npc_vehicle_collision)": 2,
        "#IMUData$ data_length 96, expected 88 (115 B, imu)": 1}


def test_well_formed_traffic_has_no_mismatch_lines(tmp_path, capsys):
    path = write_capture(tmp_path / "fine.pcap", [(0.0, (SIM, 9107), (USER, 9108),
                                                   udp.encode(NPC))])
    status, lines, _ = run(capsys, path)
    assert status == 0 and not any("data_length" in ln for ln in lines)
