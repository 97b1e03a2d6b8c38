"""morai_udp_dump: captures written here with dpkt, real UDP sockets, the real capture."""

import json
import os
import signal
import socket
import subprocess
import threading
import time

import dpkt
import pytest
import helpers
from capture_frames import ethernet, udp_fragments

from morai_bridge import dump
from morai_bridge.dump import formatters, jsonout
from morai_bridge.wire import udp

ROOT = helpers.ROOT
SRC = os.path.join(ROOT, "src")
SCRIPT = os.path.join(ROOT, "scripts", "morai_udp_dump")
REAL = "/work/shared/captures/MORAI.pcap"
REAL_909 = "/work/shared/captures/MORAI_909.pcap"

SIM, USER = "192.168.20.58", "192.168.20.61"
T0 = 1726147850.5  # 2024-09-12 13:30:50.500 UTC

EGO = udp.make(udp.EgoVehicleStatus, sec=1726147847, nsec=367000000, ctrl_mode=2, gear=4,
               signed_vel=36.0, pos_x=100.0, pos_y=200.0, pos_z=1.5, yaw=90.0,
               link_id="A219BS010391")
OBJECTS = udp.make(udp.ObjectInfo, sec=1726147847, nsec=367000000, objects=(
    udp.ObjectRecord(obj_id=5, obj_type=1, pos_x=110.0, pos_y=200.0, link_id="L1"),
    udp.ObjectRecord(obj_id=7, obj_type=0, pos_x=100.0, pos_y=203.0),
    udp.ObjectRecord(obj_id=9, obj_type=2, pos_x=150.0, pos_y=200.0),
))
LIGHT = udp.make(udp.GetTrafficLightStatus, traffic_light_index="C119BS010007",
                 traffic_light_type=2, traffic_light_status=16)
COLLISION = udp.make(udp.CollisionData, sec=1726147847, nsec=5, records=(
    udp.CollisionRecord(obj_type=1, obj_id=5, pos_x=1.0),))
CTRL = udp.EgoCtrlCmd(ctrl_mode=2, gear=4, cmd_type=2, velocity=30.0)
GPS = b"$GPRMC,223047.5,A,3714.4040,N,12646.4377,E,000.0,116.5,120924,000.0,E,A,*22\r\n"
SSDP = b"NOTIFY * HTTP/1.1\r\nHOST: 239.255.255.250:1900\r\nNTS: ssdp:alive\r\n\r\n"
BAD = udp.encode(EGO)[:100]  # a truncated ego status

# (capture time offset, src, dst, payload)
DATAGRAMS = [
    (0.000, (SIM, 908), (USER, 909), udp.encode(EGO)),
    (0.010, (SIM, 7605), (USER, 7505), udp.encode(OBJECTS)),       # 2160 B: two fragments
    (0.020, (SIM, 7603), (USER, 7502), udp.encode(LIGHT)),
    (0.030, (SIM, 9091), (USER, 9092), udp.encode(COLLISION)),
    (0.040, (SIM, 9090), (USER, 9091), GPS),
    (0.050, ("192.168.20.64", 43848), ("239.255.255.250", 1900), SSDP),
    (0.060, (SIM, 908), (USER, 909), BAD),
    (0.070, (USER, 50000), (SIM, 9093), udp.encode(CTRL)),
]


# ----------------------------------------------------------------------------- capture writing

def _ip_packets(src, dst, payload, ident, mtu_payload=1480):
    """IPv4 packets (bytes) carrying one UDP datagram, fragmented like a 1500-byte MTU."""
    return udp_fragments(src, dst, payload, ident, mtu_payload)


def _ether(ip_bytes):
    return ethernet(ip_bytes)


def write_capture(path, datagrams=DATAGRAMS, fmt="pcapng", t0=T0):
    frames = []
    for i, (dt, src, dst, payload) in enumerate(datagrams):
        for k, pkt in enumerate(_ip_packets(src, dst, payload, ident=0x100 + i)):
            frames.append((t0 + dt + k * 0.0001, _ether(pkt)))
    with open(path, "wb") as f:
        if fmt == "pcapng":
            writer = dpkt.pcapng.Writer(f, snaplen=65535, linktype=dpkt.pcap.DLT_EN10MB)
        else:
            writer = dpkt.pcap.Writer(f, snaplen=65535, linktype=dpkt.pcap.DLT_EN10MB)
        for ts, frame in frames:
            writer.writepkt(frame, ts)
    return str(path)


@pytest.fixture
def capture(tmp_path):
    return write_capture(tmp_path / "mixed.pcapng")


def run(capsys, *argv):
    status = dump.main(list(argv))
    out, err = capsys.readouterr()
    return status, out.splitlines(), err


def _line(lines, text):
    found = [ln for ln in lines if text in ln]
    assert found, f"no line with {text!r} in:\n" + "\n".join(lines)
    return found[0]


# ----------------------------------------------------------------------------- capture, text

def test_capture_one_line_per_datagram_and_summary(capsys, capture):
    status, lines, err = run(capsys, capture, "--utc")
    assert status == 1, "a decode error must give exit status 1"
    assert err == ""

    ego = _line(lines, "ego_status")
    assert ego.startswith("2024-09-12 13:30:50.500Z")
    assert f"{SIM}:908 -> {USER}:909" in ego and " 229 B " in ego
    for text in ("stamp=1726147847.367000000", "pos=(100.00, 200.00, 1.50)", "yaw=90.0",
                 "speed=36.0 km/h", "gear=D", "mode=auto", "link=A219BS010391"):
        assert text in ego

    objects = _line(lines, "object_info")
    assert " 2160 B " in objects and "2024-09-12 13:30:50.510Z" in objects
    assert "3 objects (veh 1, ped 1, obj 1)" in objects
    assert "nearest id 7 (ped) 3.0 m" in objects  # distance from the ego status before it

    assert "C119BS010007 type=2 (R-Y-GLeft-G) status=16 (G)" in _line(lines, " traffic_light ")
    assert "1 collision: veh 5" in _line(lines, " collision ")
    gps = _line(lines, "gps_nmea")
    assert "GPRMC lat=37.2400667 lon=126.7739617" in gps
    ctrl = _line(lines, " ctrl_cmd ")
    assert "mode=auto gear=D cmd_type=2 velocity=30.0 km/h" in ctrl
    assert f"{USER}:50000 -> {SIM}:9093" in ctrl

    error = _line(lines, "DECODE ERROR")
    assert "DECODE ERROR #1 (ego_status)" in error and " 100 B " in error
    assert error.startswith("2024-09-12 13:30:50.560Z")  # T0 + 0.06 s: no float truncation
    assert "data_length 200 needs 229 bytes, received 100" in error
    assert not any("NOTIFY" in ln or "not MORAI)" in ln for ln in lines), "SSDP only counted"

    per_datagram = [ln for ln in lines if ln.startswith("2024-")]
    assert len(per_datagram) == 7  # 8 datagrams, the SSDP one not shown

    summary = lines[lines.index(next(ln for ln in lines if ln.startswith("---"))):]
    text = "\n".join(summary)
    assert "datagrams: 8 in 0.070 s" in text
    assert "MORAI messages: 6" in text
    for name in ("ego_status", "object_info", "traffic_light", "collision",
                 "gps_nmea", "ctrl_cmd"):
        assert any(ln.split()[:2] == [name, "1"] for ln in summary), name
    assert "ports 908->909" in _line(summary, "ego_status")
    assert "(GPRMC 1)" in _line(summary, "gps_nmea")
    assert "decode errors: 1" in text
    assert "1  #MoraiInfo$ data_length 200: 100 B, expected 229 B" in text
    assert "not MORAI: 1 (dst port 1900: 1); shown with --all-udp" in text
    assert "fragments 2, reassembled 1" in _line(summary, "capture reader:")
    assert summary[-1] == "exit status 1 (decode errors)"


def test_all_udp_and_hex(capsys, capture):
    status, lines, _ = run(capsys, capture, "--all-udp", "--hex")
    other = _line(lines, "(not MORAI)")
    assert "239.255.255.250:1900" in other and "NOTIFY * HTTP/1.1" in other
    error_at = lines.index(_line(lines, "DECODE ERROR"))
    assert lines[error_at + 1].startswith("    0000  23 4d 6f 72 61 69 49 6e  66 6f 24 c8")
    assert lines[error_at + 1].endswith("|#MoraiInfo$.....|")
    ego_at = lines.index(_line(lines, "ego_status"))
    assert not lines[ego_at + 1].startswith("    0000"), "no hex for good datagrams without -v"
    assert "not MORAI: 1 (dst port 1900: 1)" in _line(lines, "not MORAI:")
    assert status == 1


def test_verbose_prints_every_field_and_records(capsys, capture):
    status, lines, _ = run(capsys, capture, "-v", "--hex", "--port", "7505,909")
    at = lines.index(_line(lines, "object_info"))
    block = lines[at + 1:at + 12]
    assert block[0].split() == ["sec", "1726147847"]
    assert block[2].split() == ["objects", "3", "record(s)"]
    assert block[3].startswith("      [0] obj_id=5 obj_type=1 pos_x=110.0 pos_y=200.0")
    assert "link_id='L1'" in block[3]
    assert block[5].startswith("      [2] obj_id=9 obj_type=2")
    assert block[6].split() == ["data_length", "2128"]
    assert block[7].startswith("    0000  23 4d 6f 72 61 69 4f 62")  # -v --hex: every datagram
    ego_at = lines.index(_line(lines, "ego_status"))
    block = []
    for ln in lines[ego_at + 1:]:
        if not ln.startswith(" "):
            break
        block.append(ln)
    names = [ln.split()[0] for ln in block if not ln.startswith("    0") and ln.strip() != "*"]
    assert any(ln.startswith("    00e0  ") for ln in block)  # its hex dump
    assert names[:3] == ["sec", "nsec", "ctrl_mode"]
    # every field the 200 variant carries; those it does not (None) are left out
    assert set(names) == {f for f, v in zip(EGO._fields, EGO) if v is not None}
    assert "rear_steer" not in names
    assert status == 1  # the truncated ego status arrives on port 909 too


# ----------------------------------------------------------------------------- capture, JSON

def test_json_lines(capsys, capture):
    status, lines, _ = run(capsys, capture, "--json", "--all-udp", "--hex", "--utc")
    records = [json.loads(ln, parse_constant=pytest.fail) for ln in lines]
    kinds = [r["kind"] for r in records]
    assert kinds == ["message"] * 5 + ["not_morai", "error", "message", "summary"]

    ego = records[0]
    assert ego["ts"] == T0 and ego["time"] == "2024-09-12 13:30:50.500Z"
    assert (ego["src"], ego["dst"], ego["size"]) == (f"{SIM}:908", f"{USER}:909", 229)
    assert (ego["type"], ego["class"]) == ("ego_status", "EgoVehicleStatus")
    assert ego["msg"] == jsonout.jsonable(udp.to_wire_precision(EGO))
    assert ego["msg"]["rear_steer"] is None and ego["msg"]["link_id"] == "A219BS010391"
    assert "hex" not in ego

    objects = records[1]["msg"]["objects"]
    assert [o["obj_id"] for o in objects] == [5, 7, 9]
    assert objects[0] == dict(udp.to_wire_precision(OBJECTS).objects[0]._asdict())
    gps = records[4]["msg"]
    assert gps["date"] == "2024-09-12" and gps["utc_time"] == "22:30:47.500000"
    assert gps["latitude"] == pytest.approx(37.2400667)

    assert records[5]["type"] is None and records[5]["preview"].startswith("NOTIFY")
    error = records[6]
    assert error["type"] == "ego_status" and error["error_count"] == 1
    assert "received 100" in error["error"] and bytes.fromhex(error["hex"]) == BAD
    assert records[7]["msg"]["velocity"] == 30.0

    summary = records[-1]
    assert summary["datagrams"] == 8 and summary["messages"] == 6
    assert summary["types"] == {"ego_status": 1, "object_info": 1, "traffic_light": 1,
                                "collision": 1, "gps_nmea": 1, "ctrl_cmd": 1}
    assert summary["decode_errors"] == 1
    assert summary["errors"] == {"#MoraiInfo$ data_length 200: 100 B, expected 229 B": 1}
    assert summary["not_morai"] == 1 and summary["not_morai_ports"] == {"1900": 1}
    assert summary["capture"]["reassembled"] == 1 and summary["exit_status"] == status == 1


def test_json_non_finite_floats_and_quiet(tmp_path, capsys):
    ego = EGO._replace(signed_vel=float("nan"), yaw=float("inf"), pos_x=float("-inf"))
    path = write_capture(tmp_path / "nan.pcapng", [(0.0, (SIM, 908), (USER, 909), udp.encode(ego))])
    status, lines, _ = run(capsys, path, "--json")
    msg = json.loads(lines[0], parse_constant=pytest.fail)["msg"]
    assert (msg["signed_vel"], msg["yaw"], msg["pos_x"]) == ("NaN", "Infinity", "-Infinity")
    assert status == 0
    status, lines, _ = run(capsys, path, "--json", "-q")
    assert len(lines) == 1 and json.loads(lines[0])["types"] == {"ego_status": 1}
    status, lines, _ = run(capsys, path)
    assert "speed=nan km/h" in lines[0]


def test_classic_pcap_port_filter_count_and_duration(tmp_path, capsys):
    path = write_capture(tmp_path / "mixed.pcap", fmt="pcap")
    status, lines, _ = run(capsys, path, "--port", "909")  # the ego and the truncated one
    shown = [ln for ln in lines if " -> " in ln]
    assert len(shown) == 2 and "filtered out by --port: 6" in lines
    assert status == 1
    status, lines, _ = run(capsys, path, "--count", "3")
    assert len([ln for ln in lines if " -> " in ln]) == 3 and "datagrams: 3 in 0.020 s" in lines
    assert status == 0  # stopped before the bad datagram
    status, lines, _ = run(capsys, path, "--duration", "0.035", "-q")
    assert "datagrams: 4 in 0.030 s" in lines and status == 0


def test_unknown_header_and_bad_nmea_are_errors_by_reason(tmp_path, capsys):
    bad_gps = GPS.replace(b"*22", b"*23")
    datagrams = [(0.0, (SIM, 9090), (USER, 9091), bad_gps),
                 (0.1, (SIM, 9090), (USER, 9091), bad_gps),
                 (0.2, (SIM, 1), (USER, 2), b"#NoSuchMsg$" + bytes(30)),
                 (0.3, (SIM, 1), (USER, 2), b"")]
    path = write_capture(tmp_path / "bad.pcapng", datagrams)
    status, lines, _ = run(capsys, path)
    assert status == 1
    assert "decode errors: 3" in lines
    assert "        2  NMEA $GPRMC: checksum does not match" in lines
    assert "        1  #NoSuchMsg$ unknown header" in lines
    assert "not MORAI: 1 (dst port 2: 1); shown with --all-udp" in lines  # the empty datagram


def test_many_datagrams_are_fast(tmp_path, capsys):
    one = DATAGRAMS[:5]
    datagrams = [(k * 0.02 + dt, s, d, p) for k in range(600) for dt, s, d, p in one]
    path = write_capture(tmp_path / "big.pcapng", datagrams)
    start = time.perf_counter()
    status, lines, _ = run(capsys, path)
    took = time.perf_counter() - start
    assert status == 0 and "MORAI messages: 3000" in lines
    assert took < 2.0, f"3000 datagrams took {took:.2f} s"


# ----------------------------------------------------------------------------- usage / IO errors

@pytest.mark.parametrize("argv, text", [
    ([], "give a capture FILE or --listen"),
    (["x.pcap", "--listen", "9000"], "not both"),
    (["--listen", "9000", "--port", "909"], "--port filters a capture FILE"),
    (["x.pcap", "--bind-ip", "0.0.0.0"], "--bind-ip only applies to --listen"),
    (["--listen", "9000", "--bind-ip", "localhost"], "not an IPv4 address"),
    (["--listen", "abc"], "not a port number"),
    (["--listen", "70000"], "out of range"),
    (["x.pcap", "--count", "0"], "must be at least 1"),
    (["--listen", "9000", "-v", "-q"], "not allowed with"),
])
def test_usage_errors_exit_2(capsys, argv, text):
    status, _, err = run(capsys, *argv)
    assert status == 2 and text in err


def test_unreadable_files_exit_2(tmp_path, capsys):
    status, lines, err = run(capsys, str(tmp_path / "missing.pcap"))
    assert status == 2 and "cannot read" in err and "No such file" in err and lines == []
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"this is not a capture")
    status, _, err = run(capsys, str(junk))
    assert status == 2 and "neither pcap nor pcapng" in err


def test_help_exits_0(capsys):
    status, lines, _ = run(capsys, "--help")
    assert status == 0 and any("--listen" in ln for ln in lines)


# ----------------------------------------------------------------------------- live sockets

def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _sender(targets, stop, period=0.02):
    """Send the targets' datagrams round-robin until stopped (the dump may bind late)."""
    def loop():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            deadline = time.monotonic() + 10
            while not stop.is_set() and time.monotonic() < deadline:
                for port, payload in targets:
                    s.sendto(payload, ("127.0.0.1", port))
                time.sleep(period)
    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def test_listen_with_count(capsys):
    p1, p2 = _free_port(), _free_port()
    stop = threading.Event()
    thread = _sender([(p1, udp.encode(EGO)), (p2, udp.encode(LIGHT))], stop)
    try:
        status, lines, err = run(capsys, "--listen", f"{p1},{p2}", "--count", "4",
                                 "--duration", "10")
    finally:
        stop.set()
        thread.join()
    assert status == 0
    assert f"listening on 127.0.0.1:{p1}, 127.0.0.1:{p2}" in err
    shown = [ln for ln in lines if " -> " in ln]
    assert len(shown) == 4
    assert any(f"-> 127.0.0.1:{p1} " in ln and "ego_status" in ln and "gear=D" in ln
               for ln in shown)
    assert any(f"-> 127.0.0.1:{p2} " in ln and " traffic_light " in ln for ln in shown)
    assert "MORAI messages: 4" in lines and "decode errors: 0" in lines
    assert not any(ln.startswith("capture reader") for ln in lines)


def test_listen_counts_errors_and_ignores_other_traffic(capsys):
    port = _free_port()
    stop = threading.Event()
    thread = _sender([(port, BAD), (port, SSDP)], stop)
    try:
        status, lines, _ = run(capsys, "--listen", str(port), "--count", "4", "--json")
    finally:
        stop.set()
        thread.join()
    records = [json.loads(ln) for ln in lines]
    assert status == 1
    assert {r["kind"] for r in records[:-1]} == {"error"}  # SSDP not shown without --all-udp
    summary = records[-1]
    assert summary["decode_errors"] + summary["not_morai"] == 4
    assert summary["decode_errors"] >= 1 and summary["exit_status"] == 1


def test_listen_duration_without_traffic(capsys):
    start = time.monotonic()
    status, lines, _ = run(capsys, "--listen", str(_free_port()), "--duration", "0.3")
    assert status == 0 and "datagrams: 0 in 0.000 s" in lines
    assert 0.25 < time.monotonic() - start < 5


def test_port_in_use_exits_2(capsys):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as busy:
        busy.bind(("127.0.0.1", 0))
        port = busy.getsockname()[1]
        free = _free_port()
        status, lines, err = run(capsys, "--listen", f"{free},{port}", "--count", "1")
    assert status == 2 and lines == []
    assert err.strip() == (f"morai_udp_dump: cannot listen on UDP 127.0.0.1:{port}: port already "
                           f"in use (is udp_bridge or another program bound to it?)")
    # the first socket was released again
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", free))


# ----------------------------------------------------------------------------- the script

def _env():
    return dict(os.environ, PYTHONPATH=SRC, PYTHONUNBUFFERED="1")


def test_script_runs_on_a_capture(capture):
    done = subprocess.run(["/usr/bin/python3", SCRIPT, capture, "--utc"], env=_env(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "ego_status" in done.stdout and "DECODE ERROR #1" in done.stdout
    assert done.stdout.rstrip().endswith("exit status 1 (decode errors)")
    assert os.access(SCRIPT, os.X_OK)
    with open(SCRIPT) as f:
        assert f.readline() == "#!/usr/bin/env python3\n"


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_script_ctrl_c_prints_summary_without_ros():
    port = _free_port()
    code = ("import runpy, sys\n"
            "sys.argv = [%r, '--listen', '%d']\n"
            "try:\n"
            "    runpy.run_path(%r, run_name='__main__')\n"
            "finally:\n"
            "    bad = sorted(m for m in sys.modules if m.split('.')[0] in\n"
            "                 ('rospy', 'roslib', 'rosgraph', 'genpy', 'morai_msgs'))\n"
            "    print('ros modules:', bad)\n" % (SCRIPT, port, SCRIPT))
    # Ctrl-C at a terminal: SIGINT at its default disposition.  A test run started in the
    # background by a shell without job control (a CI script, `cmd &`) inherits SIGINT
    # *ignored*, and Python then installs no KeyboardInterrupt handler: the tool would
    # never see the signal (this test then hung until its timeout).
    proc = subprocess.Popen(["/usr/bin/python3", "-c", code], env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)
    try:
        assert "listening on" in proc.stderr.readline()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(udp.encode(LIGHT), ("127.0.0.1", port))
            time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, out
    assert " traffic_light " in out
    assert "(interrupted)" in out and "MORAI messages: 1" in out
    assert "ros modules: []" in out


# ----------------------------------------------------------------------------- real capture

def _real(path):
    if not os.path.exists(path):
        pytest.skip(f"real MORAI capture {path} not present (shared captures not mounted)")
    return path


def test_real_capture_decodes_without_errors(capsys):
    status, lines, _ = run(capsys, _real(REAL), "--json", "-q")
    summary = json.loads(lines[-1])
    assert status == 0 and summary["decode_errors"] == 0 and summary["errors"] == {}
    types = summary["types"]
    for name in ("ego_status", "object_info", "traffic_light", "collision",
                 "intersection"):
        assert types.pop(name) == 115, name
    gps = types.pop("gps_nmea")
    assert types == {}
    assert gps == 22 and summary["gps_sentences"] == {"GPGGA": 11, "GPRMC": 11}
    assert summary["not_morai"] == 29  # SSDP, DHCP, NetBIOS, ... broadcasts on the LAN
    assert summary["capture"]["reassembled"] == 115


def test_real_capture_text(capsys):
    status, lines, _ = run(capsys, _real(REAL), "--utc")
    assert status == 0
    shown = [ln for ln in lines if " -> " in ln]
    assert len(shown) == 597 and not any("ERROR" in ln for ln in shown)
    assert shown[0].startswith("2024-09-12 13:30:50.521Z")
    ego = _line(shown, "ego_status")
    assert "gear=P mode=keyboard" in ego and ego.endswith("link=A219BS010391")
    assert lines[-1] == "exit status 0"


def test_real_909_capture(capsys):
    status, lines, _ = run(capsys, _real(REAL_909), "-q")
    assert status == 0
    assert _line(lines, "ego_status").split()[:2] == ["ego_status", "206"]


def test_every_message_variant_prints_in_all_modes():
    """A datagram of every supported variant: summary, -v and JSON without fallbacks."""
    out = []
    dumpers = [dump.Dumper(out.append), dump.Dumper(out.append, verbose=True, hexdump=True),
               dump.Dumper(out.append, as_json=True)]
    src, dst = (SIM, 1000), (USER, 2000)
    seen, made = set(), []
    for info in udp.VARIANTS:
        if info.data_length is None:
            msg = udp.make(info.cls)
        else:
            msg = udp.make(info.cls, data_length=info.data_length)
        if info.records is not None:  # one occupied record (pairs for the NPC collision)
            cls = info.records.record
            rec = cls(*["X" if cls.__annotations__[f] is str else 1 for f in cls._fields])
            if info.cls is udp.NpcVehicleCollision:
                rec = (rec, rec)
            msg = msg._replace(**{info.records.attr: (rec,)})
        datagram = udp.encode(msg)
        for d in dumpers:
            d.handle(T0, src, dst, datagram)
        seen.add(info.type_name)
        made.append(msg)
    gga = udp.encode(udp.NmeaSentence(raw="$GPGGA,223047.5,3714.4040,N,12646.4377,E,1,09,1.0,"
                                          "29.1,M,0.0,M,,*5A"))
    for d in dumpers:
        d.handle(T0, src, dst, gga)
    text = "".join(out)
    assert "summary failed" not in text
    assert all(d.error_count == 0 and d.datagrams == len(udp.VARIANTS) + 1 for d in dumpers)
    assert set(dumpers[0].types) == seen | {"gps_nmea"}
    # a type of its own gets a summary of its own; any other (a new stream's) the generic one: never none
    assert set(formatters.SUMMARIES) <= seen | {"gps_nmea"}, "a summary of a type that does not exist"
    assert all(formatters.summarize(m).strip() for m in made)
    assert "GPGGA lat=37.2400667 lon=126.7739617 alt=29.1 m fix=1 sats=9" in text
    for line in out[-1].splitlines():
        json.loads(line, parse_constant=pytest.fail)


# ----------------------------------------------------------------------------- package layout

def test_module_entry_point():
    assert (dump.EXIT_OK, dump.EXIT_DECODE_ERRORS, dump.EXIT_USAGE) == (0, 1, 2)
    done = subprocess.run(["/usr/bin/python3", "-m", "morai_bridge.dump", "--help"], env=_env(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--listen" in done.stdout


def test_stream_names_as_ports(tmp_path, capsys):
    from morai_bridge.dump import sources, udp_dump_cli as cli
    from morai_bridge.wire.udp import streams
    path = write_capture(tmp_path / "mixed.pcap", fmt="pcap")
    status, lines, _ = run(capsys, path, "--port", "ego_status")  # = --port 909
    assert len([ln for ln in lines if " -> " in ln]) == 2 and "filtered out by --port: 6" in lines
    assert status == 1
    status, lines, _ = run(capsys, path, "--port", "traffic_light,9092", "-q")
    assert "filtered out by --port: 6" in lines and status == 0
    status, _, err = run(capsys, "--listen", "no_such_stream")
    assert status == 2 and "not a port number or stream name: 'no_such_stream'" in err
    sim = cli.PORT_GROUPS["sim"]
    # every stream the simulator sends on, with the ports of every version (911: the competition build's
    # ego status, 9297: GPS from 25.S4 on), never 0 (the competition status of other versions: off)
    assert set(sim) == {p for s in streams.FROM_SIM if not s.extension for p in (s.port,) if p} | {911, 9297}
    assert 909 in sim and 7505 in sim and streams.BY_NAME["sync_state"].port not in sim and 0 not in sim
    assert cli.PORT_GROUPS["competition_status"] == (909,) and cli.PORT_GROUPS["gps"] == (9091, 9297)
    assert sources.port_names(909) == " (ego_status/competition_status)" and sources.port_names(1) == ""
    assert sources.port_names(911) == " (ego_status)"
    status, lines, _ = run(capsys, "--help")
    assert "ego_status 909" in " ".join(lines)


def test_enum_labels_come_from_wire_enums():
    from morai_bridge.dump.formatters import label
    from morai_bridge.wire.enums import (CtrlMode, Gear, GvSteerMode, ObjectType, Platform,
                                         SimResult, TrafficLightType)
    assert [label(Gear, v) for v in range(6)] == ["M", "P", "R", "N", "D", "L"]
    assert [label(CtrlMode, v) for v in (1, 2, 7)] == ["keyboard", "auto", "7"]
    assert [label(ObjectType, v) for v in (-1, 0, 1, 2)] == ["ego", "ped", "veh", "obj"]
    assert [label(TrafficLightType, v) for v in (0, 1, 2, 100)] == [
        "R-Y-G", "R-Y-GLeft", "R-Y-GLeft-G", "Y-Y-Y"]
    assert [label(Platform, v) for v in (1, 2)] == ["launcher", "simulator"]
    assert [label(SimResult, v) for v in (0, 1, 9)] == ["none", "success", "9"]
    assert [label(GvSteerMode, v) for v in (1, 2, 3)] == ["skid", "ackermann", "zero-turn"]
    assert formatters._tl_status(16 | 32) == "48 (G+GLeft)" and formatters._tl_status(-1) == "-1 (off)"
    assert formatters._tl_status(64 | 1) == "65 (R+0x40?)"
