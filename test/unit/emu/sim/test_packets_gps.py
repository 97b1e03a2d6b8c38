"""The emulator's GPS sentences have the simulator's exact form (fidelity item 5).

MORAI's own GPS example splits a sentence on ',' and indexes fixed positions, so
a missing trailing field is an IndexError there.  Two checks:

* against the real captures (``<repo>/../shared/captures``; skipped with a
  message when absent): every captured ``$GPRMC``/``$GPGGA`` sentence and the
  emulator's sentence of the same type have the same talker, the same number of
  fields and, field by field, the same format (digits before/after the point
  for the fixed-width fields, the same letters, an empty field where the
  simulator leaves one);
* without the captures: the field counts and per-field formats written here.
"""

import re
import socket
from pathlib import Path

import pytest

import helpers
from morai_bridge.emu.sim import LISTEN_PORTS, SEND_PORTS, SimConfig, SimEmulator
from morai_bridge.wire.udp import nmea
from morai_bridge.wire import udp
from morai_bridge.wire.capture import read_capture

CAPTURES = Path(helpers.ROOT).parent / "shared" / "captures"

# Fields after the address ('$GPRMC'), checksum excluded, as the simulator sends them.
RMC_FIELDS = 13
GGA_FIELDS = 14

# The simulator's format of each field (written down from the captured sentences
# quoted in wire/udp/nmea.py).  Fields whose width depends on the value (altitude,
# HDOP, geoid separation) only fix their decimals.
RMC_FORMAT = [
    r"\d{6}\.\d",        # 1 UTC time hhmmss.s (one decimal)
    r"[AV]",             # 2 status
    r"\d{4}\.\d{4}",     # 3 latitude ddmm.mmmm
    r"[NS]",             # 4
    r"\d{5}\.\d{4}",     # 5 longitude dddmm.mmmm
    r"[EW]",             # 6
    r"\d{3}\.\d",        # 7 speed over ground, knots, 000.0
    r"\d{3}\.\d",        # 8 course over ground, deg, 000.0
    r"\d{6}",            # 9 date ddmmyy
    r"\d{3}\.\d",        # 10 magnetic variation 000.0
    r"[EW]",             # 11
    r"A",                # 12 mode indicator
    r"",                 # 13 empty: the field MORAI leaves before the checksum
]
GGA_FORMAT = [
    r"\d{6}\.\d",        # 1 UTC time
    r"\d{4}\.\d{4}",     # 2 latitude
    r"[NS]",             # 3
    r"\d{5}\.\d{4}",     # 4 longitude
    r"[EW]",             # 5
    r"\d",               # 6 fix quality
    r"\d{2}",            # 7 satellites, two digits
    r"-?\d+\.\d",        # 8 HDOP
    r"-?\d+\.\d",        # 9 altitude
    r"M",                # 10
    r"-?\d+\.\d",        # 11 geoid separation
    r"M",                # 12
    r"",                 # 13 age of differential data: empty
    r"",                 # 14 reference station id: empty
]
#: index (1-based, as in the tables above) of the fields whose width varies with the value
VARIABLE_WIDTH = {"GGA": {8, 9, 11}, "RMC": set()}


def split(sentence: str):
    """('GPRMC', [fields...], '*22') of one sentence without CR LF."""
    body, star, check = sentence.partition("*")
    parts = body.split(",")
    return parts[0][1:], parts[1:], star + check


def shape(value: str, variable: bool) -> str:
    """The format of one field: digits -> '9' (only the decimals when ``variable``)."""
    if variable and re.fullmatch(r"-?\d+\.\d+", value):
        return "~." + "9" * len(value.split(".")[1])
    return re.sub(r"\d", "9", value)


def emulator_sentences():
    """The emulator's sentences: parked at the origin, then moving north at 36 km/h, as 24.R2 (the
    captures' release) writes them; 25.S4's time fraction and RMC speed differ (test_builders.py)."""
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", 0))
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    kw = {field: -1 for field, _, _ in LISTEN_PORTS.values()}
    for name, (field, _, _) in SEND_PORTS.items():
        kw[field] = rx.getsockname()[1] if name == "gps" else 0
    sim = SimEmulator(SimConfig(deterministic=True, sim_version="24.R2", **kw))
    out = []
    try:
        sim.step(1)
        tx.sendto(udp.encode(udp.make(udp.EgoGhostCmd, position_y=100.0, rotation_z=90.0,
                                      speed=36.0)), ("127.0.0.1", sim.ports["ego_ghost"]))
        assert sim.wait_for(lambda s: s.counters["ego_ghost"].received == 1, 2.0)
        sim.step(10)
        rx.settimeout(0.2)
        try:
            while True:
                out.append(rx.recv(65535))
        except socket.timeout:
            pass
    finally:
        sim.close()
        rx.close()
        tx.close()
    assert all(d.endswith(b"\r\n") for d in out)
    return [d[:-2].decode("ascii") for d in out]


@pytest.fixture(scope="module")
def emulated():
    sentences = emulator_sentences()
    by_type = {}
    for s in sentences:
        by_type.setdefault(split(s)[0], []).append(s)
    assert set(by_type) == {"GPRMC", "GPGGA"}, sentences
    return by_type


def test_field_counts_and_formats_written_here(emulated):
    for address, count, formats in (("GPRMC", RMC_FIELDS, RMC_FORMAT),
                                    ("GPGGA", GGA_FIELDS, GGA_FORMAT)):
        for sentence in emulated[address]:
            talker, fields, check = split(sentence)
            assert len(fields) == count, (sentence, len(fields))
            for k, (value, fmt) in enumerate(zip(fields, formats), start=1):
                assert re.fullmatch(fmt, value), (sentence, k, value, fmt)
            assert re.fullmatch(r"\*[0-9A-F]{2}", check), sentence
            assert nmea.parse(sentence).raw == sentence      # checksum right
    # MORAI's GPS example: split on ',' and index fixed positions (RMC: up to the
    # field before the checksum, index 13; GGA: index 14)
    rmc = emulated["GPRMC"][0].split(",")
    gga = emulated["GPGGA"][0].split(",")
    assert rmc[13].startswith("*") and rmc[12] == "A"
    assert gga[14].startswith("*") and gga[13] == ""


def test_builders_render_the_captured_sentences_exactly():
    import datetime
    t = datetime.time(22, 30, 47, 500000)
    lat, lon = 37 + 14.4040 / 60, 126 + 46.4377 / 60
    assert nmea.make_rmc(t, datetime.date(2024, 9, 12), lat, lon, 0.0, 116.5).raw == \
        "$GPRMC,223047.5,A,3714.4040,N,12646.4377,E,000.0,116.5,120924,000.0,E,A,*22"
    assert nmea.make_gga(t, lat, lon, 29.1).raw == \
        "$GPGGA,223047.5,3714.4040,N,12646.4377,E,1,09,1.0,29.1,M,0.0,M,,*5A"


@pytest.mark.skipif(not (CAPTURES / "MORAI.pcap").is_file(),
                    reason=f"real captures not available (expected in {CAPTURES})")
def test_same_structure_as_every_captured_sentence(emulated):
    captured = []
    for name in ("MORAI.pcap", "MORAI_909.pcap"):
        for _, _, _, payload in read_capture(CAPTURES / name):
            if payload[:1] == b"$":
                assert payload.endswith(b"\r\n")
                captured.append(payload[:-2].decode("ascii"))
    assert len(captured) == 22
    for real in captured:
        address, real_fields, real_check = split(real)
        variable = VARIABLE_WIDTH[address[2:]]
        for ours in emulated[address]:
            _, our_fields, our_check = split(ours)
            assert len(our_fields) == len(real_fields), (real, ours)
            for k, (a, b) in enumerate(zip(real_fields, our_fields), start=1):
                assert shape(a, k in variable) == shape(b, k in variable), (k, real, ours)
            assert len(our_check) == len(real_check) == 3
            assert isinstance(udp.decode(ours.encode() + b"\r\n"), udp.NmeaSentence)
