"""morai_udp_dump at the edges of real traffic (fidelity items 6 and 7).

Item 6: a datagram whose length identifies its message but whose data_length
disagrees is decoded, marked and counted as a warning (not a decode error).
Item 7: see test_fidelity_dump_truncated below the item-6 tests (capture reading itself: test_capture_truncated.py).
Captures are written here with dpkt.
"""

import json
import struct

from capture_frames import write_udp_pcap

from morai_bridge import dump
from morai_bridge.wire import udp

SIM, USER = "192.168.20.58", "192.168.20.61"
T0 = 1726147850.5


def with_data_length(datagram, data_length):
    end = datagram.index(b"$", 1) + 1
    return datagram[:end] + struct.pack("<I", data_length) + datagram[end + 4:]


def write_capture(path, datagrams, first_fragment_only=False):
    """pcap of ``(dt, src, dst, payload)``; ``first_fragment_only`` as a port filter keeps it."""
    return write_udp_pcap(path, [(T0 + dt, src, dst, payload) for dt, src, dst, payload in datagrams],
                          first_fragment_only)


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
    npc = [ln for ln in shown if " vehicle_collision " in ln]
    assert len(npc) == 2 and all("[data_length 0, expected 1120] 1 pair: veh 4 <-> veh 5" in ln
                                 for ln in npc)
    assert "imu" in shown[1] and "[data_length 96, expected 88] stamp=1726147847.000000005" \
        in shown[1]
    assert "DECODE ERROR #1" in shown[3]             # a truncated status is still an error
    assert "decoded despite an unexpected data_length (warnings): 3" in lines
    assert any(ln.split() == ["2", "#VehicleCollision$", "data_length", "0,", "expected", "1120",
                              "(1156", "B,", "vehicle_collision)"] for ln in lines), lines
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
    assert summary["types"] == {"vehicle_collision": 2, "imu": 1}
    assert summary["mismatches"] == {
        "#VehicleCollision$ data_length 0, expected 1120 (1156 B, vehicle_collision)": 2,
        "#IMUData$ data_length 96, expected 88 (115 B, imu)": 1}


def test_well_formed_traffic_has_no_mismatch_lines(tmp_path, capsys):
    path = write_capture(tmp_path / "fine.pcap", [(0.0, (SIM, 9107), (USER, 9108),
                                                   udp.encode(NPC))])
    status, lines, _ = run(capsys, path)
    assert status == 0 and not any("data_length" in ln for ln in lines)


# ----------------------------------------------------------------------------- item 7

def _objects(n, sec):
    return udp.make(udp.ObjectInfo, sec=sec, nsec=367000000, objects=tuple(
        udp.ObjectRecord(obj_id=10 + i, obj_type=1, pos_x=100.0 + 3 * i, pos_y=200.0,
                         link_id=f"L{i}") for i in range(n)))


def test_port_filtered_capture_shows_the_first_fragments(tmp_path, capsys):
    """tcpdump 'udp port 7505': only the first fragment of each Object Info is kept."""
    objs = [_objects(n, 1726147847 + k) for k, n in enumerate((20, 2, 0))]
    datagrams = [(0.02 * k, (SIM, 7605), (USER, 7505), udp.encode(o))
                 for k, o in enumerate(objs)]
    path = write_capture(tmp_path / "port7505.pcap", datagrams, first_fragment_only=True)
    status, lines, err = run(capsys, path, "--utc")
    shown = [ln for ln in lines if " -> " in ln]
    assert len(shown) == 3, lines                   # before: nothing at all
    assert all("1472 B  object_info" in ln and
               "[TRUNCATED by the capture: 1472 of 2160 B, slots 13/20 read]" in ln
               for ln in shown)
    assert "13 objects (veh 13)" in shown[0] and "2 objects (veh 2)" in shown[1]
    assert "0 objects" in shown[2]
    # one note on stderr, with the capture filter to use; the summary counts and repeats it
    assert err.count("note:") == 1 and "ip[6:2] & 0x1fff != 0" in err
    assert ("truncated by the capture (first IP fragment only, records of the first slots "
            "decoded): 3 (object_info 3)") in lines
    assert any(ln.startswith("  note: ") and "udp and (port 7505 or ip[6:2] & 0x1fff != 0)" in ln
               for ln in lines)
    assert "partial 3" in [ln for ln in lines if ln.startswith("capture reader:")][0]
    assert "decode errors: 0" in lines and status == 0

    # the decoded records are the full datagram's (JSON, every field)
    status, lines, err = run(capsys, path, "--json")
    records = [json.loads(ln) for ln in lines]
    assert [r["kind"] for r in records] == ["message"] * 3 + ["summary"]
    for r, o in zip(records, objs):
        full = udp.decode(udp.encode(o))
        assert r["msg"]["objects"] == [dict(x._asdict()) for x in full.objects[:13]]
        assert (r["msg"]["sec"], r["msg"]["nsec"]) == (full.sec, full.nsec)
        assert r["truncated"] == {"captured": 1472, "length": 2160, "slots_read": 13,
                                  "slots": 20}
    assert records[-1]["truncated"] == 3 and records[-1]["truncated_types"] == {"object_info": 3}
    assert err.count("note:") == 1


def test_complete_capture_has_no_truncation_lines(tmp_path, capsys):
    path = write_capture(tmp_path / "full.pcap", [(0.0, (SIM, 7605), (USER, 7505),
                                                   udp.encode(_objects(20, 1)))])
    status, lines, err = run(capsys, path)
    assert status == 0 and err == "" and not any("TRUNCATED" in ln or "truncated" in ln
                                                 for ln in lines)
    assert "20 objects (veh 20)" in lines[0]
