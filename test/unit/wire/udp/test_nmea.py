"""GPS NMEA sentences (morai_bridge.wire.udp.nmea, and through udp.decode)."""

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pynmea2.nmea_utils import datestamp, dm_to_sd, timestamp

from morai_bridge.wire.udp import nmea
from morai_bridge.wire import udp

# Verbatim from the captured MORAI traffic (9090 -> 9091).
GGA = b"$GPGGA,223047.5,3714.4040,N,12646.4377,E,1,09,1.0,29.1,M,0.0,M,,*5A\r\n"
RMC = b"$GPRMC,223047.5,A,3714.4040,N,12646.4377,E,000.0,116.5,120924,000.0,E,A,*22\r\n"


def checksum(body: str) -> str:
    value = 0
    for ch in body:
        value ^= ord(ch)
    return f"{value:02X}"


def sentence(body: str) -> bytes:
    return f"${body}*{checksum(body)}\r\n".encode()


def test_gga_fields():
    fix = udp.decode(GGA)
    assert isinstance(fix, nmea.NmeaSentence)
    assert (fix.talker, fix.sentence_type) == ("GP", "GGA")
    assert fix.raw == GGA[:-2].decode()
    assert fix.utc_time == datetime.time(22, 30, 47, 500000) and fix.utc_time.tzinfo is None
    assert fix.latitude == pytest.approx(37 + 14.4040 / 60, abs=1e-12)
    assert fix.longitude == pytest.approx(126 + 46.4377 / 60, abs=1e-12)
    assert fix.altitude == 29.1 and fix.geoid_separation == 0.0
    assert fix.fix_quality == 1 and fix.num_satellites == 9 and fix.hdop == 1.0
    assert fix.status is None and fix.date is None and fix.speed_knots is None


def test_rmc_fields():
    fix = udp.decode(RMC)
    assert fix.sentence_type == "RMC" and fix.status == "A"
    assert fix.date == datetime.date(2024, 9, 12)
    assert fix.speed_knots == 0.0 and fix.course_deg == 116.5
    assert fix.altitude is None and fix.fix_quality is None
    assert fix.latitude == pytest.approx(37.240066666, abs=1e-8)


def test_southern_western_hemispheres_are_negative():
    fix = nmea.parse(sentence("GPGGA,120000.0,3351.0000,S,15112.0000,W,1,08,0.9,10.0,M,0.0,M,,"))
    assert fix.latitude == pytest.approx(-(33 + 51 / 60))
    assert fix.longitude == pytest.approx(-(151 + 12 / 60))


def test_empty_position_is_none():
    fix = nmea.parse(sentence("GPGGA,120000.0,,,,,0,00,,,M,,M,,"))
    assert fix.latitude is None and fix.longitude is None and fix.altitude is None
    assert fix.fix_quality == 0


def test_encode_is_raw_plus_crlf():
    assert udp.encode(udp.decode(GGA)) == GGA
    assert udp.encode(udp.decode(RMC)) == RMC
    assert nmea.encode(nmea.parse(GGA.decode())) == GGA
    # without a line ending on the wire, encode still adds CR LF
    assert udp.encode(udp.decode(GGA[:-2])) == GGA


@pytest.mark.parametrize("data, message", [
    (GGA.replace(b"*5A", b"*5B"), "checksum"),
    (GGA.replace(b"*5A", b""), "checksum"),
    (b"$GPGGA,\xe9*00\r\n", "ASCII"),
    (GGA + RMC, "one NMEA sentence"),
    (sentence("GPXYZ,1,2,3"), "invalid"),
    (sentence("GPGGA,120000.0,37x4.40,N,12646.4377,E,1,09,1.0,29.1,M,0.0,M,,"), "lat"),
    (sentence("GPGGA,120000.0,3714.4040,Q,12646.4377,E,1,09,1.0,29.1,M,0.0,M,,"), "lat_dir"),
    (sentence("GPGGA,120000.0,3714.4040,N,12646.4377,E,1,09,1.0,high,M,0.0,M,,"), "altitude"),
    (sentence("GPGGA,noon,3714.4040,N,12646.4377,E,1,09,1.0,29.1,M,0.0,M,,"), "timestamp"),
    (sentence("GPGGA,120000.0,3714.4040,N,12646.4377,E,x,09,1.0,29.1,M,0.0,M,,"), "gps_qual"),
    (b"GPGGA,1*00", "start with"),
])
def test_malformed(data, message):
    with pytest.raises(nmea.NmeaError, match=message):
        nmea.parse(data)
    with pytest.raises(udp.DecodeError, match="NMEA") if data[:1] == b"$" else \
            pytest.raises(udp.DecodeError):
        udp.decode(data)


def test_parse_accepts_text_and_rejects_other_types():
    assert nmea.parse(GGA.decode()) == nmea.parse(GGA)
    with pytest.raises(TypeError):
        nmea.parse(42)


def test_builders_match_the_captured_style():
    t = datetime.time(22, 30, 47, 500000)
    gga = nmea.make_gga(t, 37 + 14.4040 / 60, 126 + 46.4377 / 60, 29.1)
    assert gga.raw.startswith("$GPGGA,223047.5,3714.4040,N,12646.4377,E,1,09,1.0,29.1,M,0.0,M,")
    captured = udp.decode(GGA)
    for field in ("latitude", "longitude", "altitude", "fix_quality", "num_satellites"):
        assert getattr(gga, field) == pytest.approx(getattr(captured, field))
    rmc = nmea.make_rmc(t, datetime.date(2024, 9, 12), 37.24, 126.77, course_deg=116.5)
    assert rmc.status == "A" and rmc.course_deg == 116.5
    assert rmc.date == datetime.date(2024, 9, 12)


def test_build_errors_are_nmea_errors():
    with pytest.raises(nmea.NmeaError):
        nmea.build("GP", "NOPE", ())


# ---- GGA and RMC field by field against pynmea2's own converters
# (until issue 42 these compared a hand-written GGA/RMC parser with the pynmea2 path; pynmea2 now
# parses every sentence, and each case is checked against the value pynmea2's field rules give)

def _coordinate(dm, direction, dirs):
    """pynmea2's latitude / longitude of a field pair; None when the value is empty."""
    if not dm:
        return None
    if direction not in tuple(dirs):      # '' is no direction
        raise ValueError(direction)
    value = dm_to_sd(dm)
    return value if direction == dirs[0] else -value


def _number(text, kind):
    return kind(text) if text else None


def expected(text):
    """The sentence ``parse`` must give for a GGA or RMC with a good checksum (fields without ',' or
    '*'): each field through pynmea2's converters (``timestamp``, ``datestamp``, ``dm_to_sd``)
    or float / int, the time naive (UTC); the class NmeaError where one rejects its field."""
    head, *f = text[1:text.index("*")].split(",")
    kind = head[2:].upper()
    try:
        t = timestamp(f[0]).replace(tzinfo=None) if f[0] else None
        if kind == "GGA":
            lat, ns, lon, ew = f[1:5]
            values = dict(fix_quality=_number(f[5], int), num_satellites=_number(f[6], int),
                          hdop=_number(f[7], float), altitude=_number(f[8], float),
                          geoid_separation=_number(f[10], float))
        else:
            lat, ns, lon, ew = f[2:6]
            values = dict(status=f[1] or None, speed_knots=_number(f[6], float),
                          course_deg=_number(f[7], float), date=datestamp(f[8]) if f[8] else None)
        values.update(latitude=_coordinate(lat, ns, "NS"), longitude=_coordinate(lon, ew, "EW"))
    except Exception:       # noqa: BLE001 - a converter rejects its field: parse must refuse it
        return nmea.NmeaError
    return nmea.NmeaSentence(raw=text, talker=head[:2].upper(), sentence_type=kind, utc_time=t, **values)


def _parsed(text):
    """parse's sentence, or the class NmeaError."""
    try:
        return nmea.parse(text)
    except nmea.NmeaError as e:
        return type(e)


def _assert_expected(text):
    """``parse(text)`` is :func:`expected`'s sentence, repr for repr and type for type (repr: nan
    and -0.0 compare as themselves), or raises NmeaError where that does; True when accepted."""
    got, want = _parsed(text), expected(text)
    if want is nmea.NmeaError:
        assert got is nmea.NmeaError, f"parse accepted what pynmea2's field rules reject: {text!r}"
        return False
    assert got is not nmea.NmeaError, f"parse refused {text!r}"
    assert repr(got) == repr(want), text
    assert [type(v) for v in got] == [type(v) for v in want], text
    return True


def test_morai_sentences_are_accepted():
    for raw in (GGA, RMC):
        assert _assert_expected(raw[:-2].decode())


GGA_FIELDS = ["223047.5", "3714.4040", "N", "12646.4377", "E", "1", "09", "1.0", "29.1", "M", "0.0", "M",
              "", ""]
RMC_FIELDS = ["223047.5", "A", "3714.4040", "N", "12646.4377", "E", "000.0", "116.5", "120924", "000.0",
              "E", "A", ""]
ODD_VALUES = ["", "0", "x", "1.5", "-3", "99", "12a", "3714.4040", "N", "S", "E", "W", "n", "2359596",
              "320224", "000000", "12.", ".5", "1e3", " 7", "nan", "inf", "12345.6789", "0000.0000"]


def test_each_field_by_odd_values():
    """Every field of GGA and RMC replaced by each odd value (empty, wrong case, garbage, edge
    numbers): parse gives the sentence pynmea2's field rules give, or NmeaError where they reject."""
    accepted = 0
    for head, fields in (("GPGGA", GGA_FIELDS), ("GNRMC", RMC_FIELDS), ("gpgga", GGA_FIELDS)):
        for i in range(len(fields)):
            for v in ODD_VALUES:
                f = list(fields)
                f[i] = v
                body = ",".join([head] + f)
                accepted += _assert_expected(f"${body}*{checksum(body)}")
    assert accepted > 100      # the accepting side is actually exercised


def test_unusual_framing():
    """Framings at the edge of pynmea2's sentence pattern, each with the outcome pynmea2 gives."""
    body = ",".join(["GPGGA"] + GGA_FIELDS)
    good = checksum(body)
    odd_head = body.replace("GPGGA", "GP_GA")
    odd_sep = body.replace(",", ";", 1)
    accepted = (f"${body}*{good.lower()}",         # pynmea2 accepts lower-case hex too
                f"${body}*{good} ")                # and trailing white space
    for text in accepted:
        assert _assert_expected(text)
    assert nmea.parse(f"$GPGSV,3,1,11*{checksum('GPGSV,3,1,11')}").sentence_type == "GSV"
    for text in (f"${body}*{int(good, 16) ^ 1:02X}",   # checksum mismatch
                 f"${body}*{good}0",
                 f"${odd_head}*{checksum(odd_head)}",
                 f"${odd_sep}*{checksum(odd_sep)}",
                 f"$GPGGA,1*{checksum('GPGGA,1')}",
                 f"$GPGGA*{checksum('GPGGA')}"):
        with pytest.raises(nmea.NmeaError):
            nmea.parse(text)


def test_emulator_sentences():
    t = datetime.time(23, 59, 59, 900000)
    for lat, lon in ((37.5, 127.1), (-33.9, 151.2), (0.0, -0.5), (89.99999, -179.99999)):
        for s in (nmea.make_gga(t, lat, lon, 12.3), nmea.make_rmc(t, datetime.date(2026, 11, 22), lat, lon, 3.2, 45.0)):
            assert _assert_expected(s.raw)


# ---- property tests: generated fields against pynmea2's field rules

# digits, the separators and signs a number may carry, a few letters and a space
FIELD_CHARS = "0123456789.-+eE_ xNSEWAV"
FIELD = st.text(alphabet=FIELD_CHARS, max_size=12)


@given(st.one_of(FIELD, st.from_regex(r"\A[0-9]{0,6}\.?[0-9]{0,6}\Z")))
@settings(max_examples=2000, deadline=None)
def test_latitude_is_pynmea2_dm_to_sd(dm):
    """A GGA's latitude is pynmea2's dm_to_sd of its field (None when empty), or NmeaError where
    dm_to_sd fails."""
    body = ",".join(["GPGGA", "120000.0", dm, "N"] + GGA_FIELDS[3:])
    text = f"${body}*{checksum(body)}"
    try:
        want = dm_to_sd(dm) if dm else None
    except Exception:       # noqa: BLE001 - pynmea2 rejects it: so must parse
        with pytest.raises(nmea.NmeaError):
            nmea.parse(text)
        return
    assert repr(nmea.parse(text).latitude) == repr(want)


COORD = st.one_of(FIELD, st.from_regex(r"\A[0-9]{3,5}\.[0-9]{1,5}\Z"))
TIME = st.one_of(FIELD, st.from_regex(r"\A[0-9]{6}(\.[0-9]{0,3})?\Z"))
NUMBER = st.one_of(FIELD, st.from_regex(r"\A-?[0-9]{1,4}(\.[0-9]{0,2})?\Z"))


@given(TIME, COORD, st.sampled_from("NSX"), COORD, st.sampled_from("EWX"), NUMBER, NUMBER, NUMBER, NUMBER, NUMBER,
       st.sampled_from(["GPGGA", "GNGGA", "GPRMC", "GNRMC"]), st.sampled_from("AV"),
       st.one_of(FIELD, st.from_regex(r"\A[0-3][0-9][01][0-9][0-9]{2}\Z")))
@settings(max_examples=1000, deadline=None)
def test_generated_sentences(t, lat, ns, lon, ew, a, b, c, d, e, head, status, date):
    """Generated GGA / RMC sentences (well-formed numbers mixed with garbage): parse gives exactly
    the sentence pynmea2's field rules give, or NmeaError where they reject a field."""
    if head.endswith("GGA"):
        fields = [t, lat, ns, lon, ew, a.lstrip("-"), b.lstrip("-"), c, d, "M", e, "M", "", ""]
    else:
        fields = [t, status, lat, ns, lon, ew, a, b, date, "000.0", "E", "A", ""]
    body = ",".join([head] + fields)
    _assert_expected(f"${body}*{checksum(body)}")


@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x7f), max_size=90),
       st.sampled_from(["GPGGA", "GPRMC", "gprmc", "GPGSV", "G1GGA", ""]), st.booleans())
@settings(max_examples=1000, deadline=None)
def test_parse_only_raises_nmea_error(tail, head, good_checksum):
    """Arbitrary ASCII after a GGA/RMC-like head, with a right or a wrong checksum: a sentence
    or NmeaError, nothing else (and udp.decode: a sentence or DecodeError)."""
    body = head + tail
    cs = checksum(body) if good_checksum else "ZZ"
    for text in (f"${body}*{cs}", f"${body}*{cs}\r\n"):
        try:
            nmea.parse(text)
        except nmea.NmeaError:
            pass
        try:
            udp.decode(text.encode("ascii"))
        except udp.DecodeError:
            pass


# pynmea2 1.15 (Ubuntu 20.04, Debian 12) gives naive times, 1.19 (Debian 13) UTC-aware ones
PYNMEA2_TIMES = {
    "1.15": datetime.time(22, 30, 47, 500000),
    "1.19": datetime.time(22, 30, 47, 500000, tzinfo=datetime.timezone.utc),
}


@pytest.mark.parametrize("version", sorted(PYNMEA2_TIMES))
def test_utc_naive_gives_one_form_whatever_pynmea2_gives(version):
    t = nmea.utc_naive(PYNMEA2_TIMES[version])
    assert t == datetime.time(22, 30, 47, 500000) and t.tzinfo is None


def test_utc_naive_refuses_a_time_that_is_not_utc():
    with pytest.raises(nmea.NmeaError, match="not UTC"):
        nmea.utc_naive(datetime.time(1, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=9))))
    assert nmea.utc_naive(None) is None


@pytest.mark.parametrize("raw", [GGA, RMC])
def test_naive_utc_times_with_the_installed_pynmea2(raw):
    """Whatever pynmea2 this machine has (1.15 here and under py38, 1.19 on Debian 13), the
    parsed sentence is the expected one, its time naive."""
    text = raw[:-2].decode()
    got = nmea.parse(text)
    assert got == expected(text)
    assert got.utc_time == datetime.time(22, 30, 47, 500000) and got.utc_time.tzinfo is None
