"""morai_field_report as a whole (src/morai_bridge/dump/field_report.py, the command line, and the modules
it runs: field_listen, field_analysis, field_profiles, field_text): against the emulator running each
shipped version profile it names that profile; against the shared 2024 capture (real traffic) it
names 24.R2; the forms it reports (IMU repeats, GPS time fraction, camera chunks, LiDAR packets) are
what was sent; and every fixture under test/data/field/ re-analyses to its stored report.  One module
alone: test_field_analysis.py, test_field_listen.py."""
import json
import threading
import time
from pathlib import Path

import pytest
import yaml

import helpers
from morai_bridge.dump import field_analysis as fa
from morai_bridge.dump import field_listen as fl
from morai_bridge.dump import field_profiles as fp
from morai_bridge.dump import field_report as fr
from morai_bridge.dump import field_text as ft
from morai_bridge.emu.sim import LISTEN_PORTS, SEND_PORTS, SimConfig, SimEmulator
from morai_bridge.configuration import sim_versions
from morai_bridge.wire import capture, udp
from morai_bridge.wire.udp import streams

ROOT = Path(helpers.ROOT)
SHARED = ROOT.parent / "shared" / "captures" / "MORAI.pcap"
FIXTURES = sorted(p for p in (ROOT / "test" / "data" / "field").iterdir() if p.is_dir())
SHIPPED = sim_versions.available(sim_versions.search_dir_default())


def free_offset(lowest=12000, ephemeral=32768):
    """An offset that moves every profile port (and the sensors' and one spare) to a free port below
    the ephemeral range (no bind to port 0, such as the emulator's listening ports here, takes one meanwhile),
    so that runs on one machine do not clash.  The highest moved port stays below ``ephemeral`` (Linux's
    net.ipv4.ip_local_port_range starts there): an offset of 20000-31000 once put the IMU's 9110 on 39119,
    which an ephemeral bind had taken."""
    import random
    import socket
    base = [*fl.profile_ports(SHIPPED)] + [1232, 2368, 281, 3000]
    rnd = random.Random()
    for _ in range(200):
        off = rnd.randrange(lowest, ephemeral - max(base))
        socks = []
        try:
            for p in base:
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                socks.append(s)
                s.bind(("127.0.0.1", p + off))
            return off
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free block of ports")


OFFSET = free_offset()  # the emulator's profile ports + this


def emulator(version, **over):
    """The emulator sending every stream to its profile's ports + OFFSET on 127.0.0.1."""
    v = sim_versions.load_version(version)
    kw = {field: -1 for field, _, _ in LISTEN_PORTS.values()}
    for s, (field, _, _) in SEND_PORTS.items():
        p = 0 if s == "sync_state" else (v.port(s) if s in sim_versions.VERSIONED_PORTS else streams.BY_NAME[s].port)
        kw[field] = p + OFFSET if p else 0
    kw.update(sim_version=version, ego_x=12.0, ego_y=-3.0)
    kw.update(over)
    return SimEmulator(SimConfig(**kw))


def record(sim, seconds=1.5, extra_ports=()):
    """What the report's listener gets while ``sim`` runs."""
    ports = sorted(set(fl.profile_ports(SHIPPED, OFFSET)) | set(extra_ports))
    got = {}
    listener = threading.Thread(target=lambda: got.update(r=fl.listen("127.0.0.1", ports, seconds, 100000)))
    listener.start()
    time.sleep(0.2)                     # bound before the first datagram
    sim.start()
    listener.join()
    sim.close()
    records, bound, refused = got["r"]
    assert not refused, refused
    return records


@pytest.mark.parametrize("version", SHIPPED)
def test_the_emulator_in_each_profile_is_identified(version):
    report = fa.analyse(record(emulator(version)), port_offset=OFFSET)
    assert fp.best_profile(report) == version, ft.report_text(report)
    match = [m for m in report["profiles"] if m["profile"] == version][0]
    assert len(match["agrees"]) >= 6 and not match["contradicts"]


@pytest.mark.skipif(not SHARED.exists(), reason=f"shared capture {SHARED} not present")
def test_the_2024_capture_is_24R2():
    """Real traffic: MORAI SIM of September 2024, GPS on 9091, all-zero empty collision slots,
    GPS times in tenths, packet time the host's wall clock in whole milliseconds."""
    report = fa.analyse(capture.read_capture(str(SHARED)))
    assert fp.best_profile(report) == "24.R2", ft.report_text(report)
    assert report["observed"] == {"ports.ego_status": 909, "ports.competition_status": 0, "ports.gps": 9091,
                                  "nmea_time": "tenths", "empty_collision_slot": "zero",
                                  "packet_clock": "host_wall_clock"}
    pt = report["packet_time"]["EgoVehicleStatus"]
    assert pt["whole_ms"] == pt["packets"] == 115 and -3.2 < pt["offset_s"]["median"] < -3.1
    assert report["ports"]["1900"]["kinds"] == {"other": 24}          # the LAN's SSDP, not MORAI


def test_imu_bursts_gps_form_camera_chunks_and_lidar_packets_are_reported():
    sim = emulator("25.S4", imu_burst_every_s=0.25, camera_port=OFFSET + 1232, camera_width=320,
                   camera_height=240, lidar_port=OFFSET + 2368)
    report = fa.analyse(record(sim, extra_ports=(OFFSET + 1232, OFFSET + 2368)), {OFFSET + 1232: "camera",
                                                                              OFFSET + 2368: "lidar"}, OFFSET)
    assert report["sensor_ports"] == {str(OFFSET + 1232): "camera", str(OFFSET + 2368): "lidar"}
    assert report["imu"]["same_stamp_repeats"] >= 4                   # 2 repeats per burst, ~6 bursts
    assert report["ports"][str(OFFSET + 9110)]["gaps_under_2ms"] >= 4
    assert set(report["gps"]["time_fraction_digits"]) - {"1", "2"} <= {"3"}   # unpadded milliseconds
    cam = report["camera"]
    assert cam["frames"] >= 10 and set(cam["stamps_per_frame"]) == {"1"}       # one stamp per frame
    lidar = report["lidar"]                 # VLP-16: 754 packets per second (fewer on a loaded machine)
    assert lidar["packets"] >= 100 and lidar["bursts"] >= 1
    assert report["ports"][str(OFFSET + 2368)]["sizes"] == {"1206": lidar["packets"]}


def test_the_command_line_writes_a_report_a_fixture_can_be_made_of(tmp_path, capsys):
    sim = emulator("26.R1")
    done = {}
    t = threading.Thread(target=lambda: done.update(code=fr.main(
        ["--seconds", "1.2", "--listen-ip", "127.0.0.1", "--port-offset", str(OFFSET), "--out", str(tmp_path)])))
    t.start()
    time.sleep(0.3)
    sim.start()
    t.join()
    sim.close()
    assert done["code"] == 0
    out = capsys.readouterr().out
    assert "matches: 26.R1" in out
    stored = json.loads((tmp_path / "report.json").read_text())
    again = fa.analyse(capture.read_capture(str(tmp_path / "capture.pcap")), stored["sensor_ports"],
                       stored["port_offset"])
    assert json.loads(json.dumps(again)) == stored
    assert (tmp_path / "report.txt").read_text().rstrip("\n") == ft.report_text(stored)


def test_nothing_received_exits_1_and_a_bad_version_2(capsys):
    assert fr.main(["--seconds", "0.2", "--listen-ip", "127.0.0.1", "--port-offset", str(OFFSET + 3000)]) == 1
    assert fr.main(["--sim-version", "no_such", "--seconds", "0.1"]) == 2
    assert "no_such" in capsys.readouterr().err


@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.name for p in FIXTURES])
def test_each_field_fixture_replays_to_its_report(fixture):
    """test/data/field/<name>/: capture.pcap re-analysed gives report.json exactly; the report names the
    profile fixture.yaml says; every MORAI datagram of the capture decodes with the bridge's codec."""
    meta = yaml.safe_load((fixture / "fixture.yaml").read_text())
    stored = json.loads((fixture / "report.json").read_text())
    records = list(capture.read_capture(str(fixture / "capture.pcap")))
    again = json.loads(json.dumps(fa.analyse(records, stored["sensor_ports"], stored["port_offset"])))
    assert again == stored
    assert fp.best_profile(again) == meta["profile"], ft.report_text(again)
    errors = 0
    for _, _, dst, data in records:
        kinds = stored["ports"][str(dst[1])]["kinds"]
        if set(kinds) <= {"other", "camera", "lidar"}:
            continue
        try:
            udp.decode_tolerant(data)
        except udp.DecodeError:
            errors += 1
    assert errors == 0


def test_ports_from_settings_are_not_compared_with_the_profiles():
    """A user's own GPS port (AISW's 9281) says nothing about the release: the forms still do."""
    sim = emulator("25.S4", gps_port=OFFSET + 281)
    report = fa.analyse(record(sim, extra_ports=(OFFSET + 281,)), port_offset=OFFSET, compare_ports=False)
    assert not any(f.startswith("ports.") for f in report["observed"])
    assert report["observed"]["nmea_time"] == "milliseconds"
    assert "(ports from the settings: not compared)" in ft.report_text(report)
