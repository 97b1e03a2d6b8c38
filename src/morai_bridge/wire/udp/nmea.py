"""GPS NMEA sentences as MORAI sends them: one ASCII sentence per UDP datagram.

Parsing is pynmea2's, for every sentence; this module checks its results and wraps
the fields a bridge needs into an immutable :class:`NmeaSentence`.  (A second,
hand-written GGA/RMC parser beside it was removed in issue 42: at MORAI's 20 Hz GPS it saved
0.09 % of a core hot, 0.46 % cache-cold; bench/bench_nmea.py, docs/benchmarks.md.)
Encoding a sentence gives back its raw text followed by CR LF.

Captured example (MORAI SIM, port 9090 -> 9091; the simulator sent the RMC first)::

    $GPGGA,223047.5,3714.4040,N,12646.4377,E,1,09,1.0,29.1,M,0.0,M,,*5A
    $GPRMC,223047.5,A,3714.4040,N,12646.4377,E,000.0,116.5,120924,000.0,E,A,*22

Both sentences are one GPS sample (the same time field); :class:`GpsSamples` merges the
sentences of each sample into one, so that a bridge publishes one message per sample.

No ROS imports.
"""

import datetime
from typing import NamedTuple, Optional, Sequence, Union

import pynmea2

from ..sample_order import DUPLICATE, NEW, RESTART, REORDERED, SampleOrder

__all__ = ["NmeaError", "NmeaSentence", "GpsSamples", "merge", "parse", "encode", "build", "make_gga",
           "make_rmc", "time_ms"]

DAY_MS = 86400000


class NmeaError(ValueError):
    """A datagram is not one valid, checksummed NMEA 0183 sentence."""


class NmeaSentence(NamedTuple):
    """One NMEA sentence.

    Fields (None when the sentence type does not carry the value or it is empty):
        raw: sentence text, ``$`` through the checksum, without CR LF.
        talker: talker id, e.g. ``'GP'`` ('' for proprietary sentences).
        sentence_type: e.g. ``'GGA'``, ``'RMC'``.
        utc_time: datetime.time, UTC time of the fix (GGA, RMC, ...), naive (no tzinfo) on
            every pynmea2 version (:func:`utc_naive`).
        date: datetime.date, UTC date (RMC).
        latitude: decimal degrees, north positive.
        longitude: decimal degrees, east positive.
        altitude: m, antenna altitude above mean sea level (GGA).
        geoid_separation: m, geoid above the WGS-84 ellipsoid (GGA); ellipsoid
            height = altitude + geoid_separation.
        fix_quality: int, GGA quality: 0 invalid, 1 GPS, 2 DGPS, 4 RTK fixed, 5 RTK float.
        num_satellites: int, satellites in use (GGA).
        hdop: horizontal dilution of precision (GGA).
        status: str, RMC status: 'A' valid, 'V' void.
        speed_knots: knots, speed over ground (RMC).
        course_deg: deg, true course over ground (RMC).
    """

    raw: str
    talker: str = ""
    sentence_type: str = ""
    utc_time: Optional[datetime.time] = None
    date: Optional[datetime.date] = None
    latitude: Optional[float] = None
    longitude: Optional[float] = None
    altitude: Optional[float] = None
    geoid_separation: Optional[float] = None
    fix_quality: Optional[int] = None
    num_satellites: Optional[int] = None
    hdop: Optional[float] = None
    status: Optional[str] = None
    speed_knots: Optional[float] = None
    course_deg: Optional[float] = None

    TYPE_NAME = "gps_nmea"


def _get(msg, attr: str):
    """A field of a parsed pynmea2 sentence; None when absent or empty."""
    try:
        value = getattr(msg, attr)
    except AttributeError:
        return None
    if value == "":
        return None
    return value


def _number(msg, attr: str, kind):
    value = _get(msg, attr)
    if value is None:
        return None
    if isinstance(value, str):  # pynmea2 leaves unconvertible or untyped fields as text
        try:
            value = kind(value)
        except ValueError:
            raise NmeaError(f"field {attr} = {value!r} is not a number") from None
    if kind is int and not isinstance(value, int):
        raise NmeaError(f"field {attr} = {value!r} is not an integer")
    return kind(value)


def _typed(msg, attr: str, kind):
    value = _get(msg, attr)
    if value is not None and not isinstance(value, kind):
        raise NmeaError(f"field {attr} = {value!r} is malformed")
    return value


def _coordinate(msg, value_attr: str, dir_attr: str, prop: str, dirs: str):
    if _get(msg, value_attr) is None:
        return None
    if _get(msg, dir_attr) not in tuple(dirs):
        raise NmeaError(f"field {dir_attr} = {_get(msg, dir_attr)!r}, expected one of {dirs}")
    try:
        return float(getattr(msg, prop))
    except (AttributeError, ValueError):
        raise NmeaError(f"field {value_attr} = {_get(msg, value_attr)!r} is malformed") from None


def utc_naive(t: Optional[datetime.time]) -> Optional[datetime.time]:
    """An NMEA time field as :class:`NmeaSentence` holds it: naive, meaning UTC.

    pynmea2 1.15 (Ubuntu 20.04, Debian 12) returns naive times and 1.19 (Debian 13) UTC-aware
    ones for the same field.  The field is UTC by definition, so the tzinfo adds nothing, and
    keeping it would make the same sentence compare, print (morai_udp_dump's ``utc=``) and
    serialise differently by version; every parsed sentence's time goes through here."""
    if t is None or t.tzinfo is None:
        return t
    if t.utcoffset():
        raise NmeaError(f"time {t!r} is not UTC")
    return t.replace(tzinfo=None)


def _from_pynmea(text: str, msg) -> NmeaSentence:
    return NmeaSentence(
        raw=text,
        talker=getattr(msg, "talker", "") or "",
        sentence_type=getattr(msg, "sentence_type", "") or "",
        utc_time=utc_naive(_typed(msg, "timestamp", datetime.time)),
        date=_typed(msg, "datestamp", datetime.date),
        latitude=_coordinate(msg, "lat", "lat_dir", "latitude", "NS"),
        longitude=_coordinate(msg, "lon", "lon_dir", "longitude", "EW"),
        altitude=_number(msg, "altitude", float),
        geoid_separation=_number(msg, "geo_sep", float),
        fix_quality=_number(msg, "gps_qual", int),
        num_satellites=_number(msg, "num_sats", int),
        hdop=_number(msg, "horizontal_dil", float),
        status=_typed(msg, "status", str),
        speed_knots=_number(msg, "spd_over_grnd", float),
        course_deg=_number(msg, "true_course", float),
    )


def parse(data: Union[bytes, str]) -> NmeaSentence:
    """Parse one sentence (bytes or str, optional trailing CR LF).

    The checksum is required and verified.  Raises :class:`NmeaError` for
    anything that is not exactly one valid sentence; no other exception escapes.
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        try:
            text = bytes(data).decode("ascii")
        except UnicodeDecodeError:
            raise NmeaError("NMEA sentence contains non-ASCII bytes") from None
    elif isinstance(data, str):
        text = data
    else:
        raise TypeError(f"expected bytes or str, got {type(data).__name__}")
    if text.endswith("\r\n"):
        text = text[:-2]
    if not text.startswith("$"):
        raise NmeaError("NMEA sentence must start with '$'")
    if "\r" in text or "\n" in text:
        raise NmeaError("one NMEA sentence per datagram expected (found a line break inside)")
    if "*" not in text:
        raise NmeaError("NMEA checksum missing")
    try:
        msg = pynmea2.parse(text, check=True)
        return _from_pynmea(text, msg)
    except NmeaError:
        raise
    except Exception as exc:  # pynmea2 signals problems with many exception types
        raise NmeaError(f"invalid NMEA sentence: {exc}") from None


def merge(a: NmeaSentence, b: NmeaSentence) -> NmeaSentence:
    """Two sentences of one GPS sample as one: the GGA's fields (it has every field a position
    message needs), each field it lacks taken from the other (RMC's status, date, speed, course);
    ``raw`` is the GGA's.  Without a GGA, ``a``'s fields first."""
    if b.sentence_type == "GGA" and a.sentence_type != "GGA":
        a, b = b, a
    missing = {f: v for f, v in zip(NmeaSentence._fields, b) if v is not None and getattr(a, f) is None}
    return a._replace(**missing) if missing else a


class GpsSamples:
    """One merged :class:`NmeaSentence` per GPS sample from the sentences that carry it.

    MORAI sends each sample of its GPS sensor as one datagram per sentence, every one with the
    sample's time field: RMC then GGA in the 2024 captures (24.R2), GGA then RMC from this
    package's emulator, and a simulator set up otherwise may send only one of the two.  MORAI's
    native ROS mode publishes one GPSMessage per sample, so :meth:`add` gives each sample out once:

    * a sentence belongs to the open sample when its time field is the sample's (compared as
      text: 25.S4 writes milliseconds unpadded) and its type is not in the sample yet; otherwise it
      opens a new sample, and the open one is complete (a repeated sentence is a new sample);
    * a sample is given out as soon as it holds a GGA, or at its first sentence once samples come
      without one (the first complete sample had none, or two in a row had none: a simulator that
      sends only RMC); otherwise when the next sample opens (``late``: the GGA it waited for did
      not come; the sample is not lost, it comes one sample period late).  Until a first sample
      is complete, an RMC waits for its GGA;
    * a sentence without a time is a sample of its own, given out at once.

    On a lossy, reordering link (the newest-sample rule, :mod:`morai_bridge.wire.sample_order`, on the
    fix time: :func:`time_ms` in the simulator's ``time_form``, compared the short way round the day):
    a sentence whose time is earlier than the last sample's is dropped (``reordered``), and so is one
    whose text is that of a sentence already taken for the same time (``duplicates``: the link sent it
    twice).  A sentence of the same time with other text is the old rule's (merged, or a new sample
    when its type is taken); an earlier time by more than ``window_ms`` is the clock starting again
    (``clock_restarts``, taken).  Counted in ``counts``.

    Its stamp is the one passed with the sample's first sentence.  Plain Python, one thread.
    """

    __slots__ = ("_time", "_types", "_sample", "_stamp", "_given", "_misses", "gga", "late", "merged", "order",
                 "time_form", "counts", "_raws")

    def __init__(self, window_ms=1000, time_form="tenths", counts=None):
        self.order = SampleOrder(window_ms, DAY_MS)
        self.time_form = time_form
        #: sentences not taken (reordered, duplicates) and clock restarts; a dict the caller may share
        self.counts = counts if counts is not None else {}
        for key in (REORDERED, DUPLICATE, RESTART):
            self.counts.setdefault(key, 0)
        self._raws = set()      # the text of the sentences taken for the last time field
        self._time = None       # time field (text) of the open sample; None: no sample open
        self._types = ()        # sentence types in the open sample
        self._sample = None     # its sentences merged
        self._stamp = None      # the stamp that came with its first sentence
        self._given = True      # the open sample was given out
        self._misses = 0        # complete samples in a row without a GGA
        self.gga = None         # the last complete sample had a GGA (None: no sample complete yet)
        self.late = 0           # samples given out when the next one opened (their GGA never came)
        self.merged = 0         # sentences merged into a sample opened by another

    def add(self, sentence: NmeaSentence, stamp=None):
        """[(merged sentence, stamp)] to publish now, oldest first: none, one, or two (a late
        sample, then the one this sentence completes)."""
        out = []
        t = sentence.raw.split(",", 2)[1] if sentence.utc_time is not None else None
        if t is not None:
            verdict = self.order.check(time_ms(t, self.time_form))
            if verdict == REORDERED or (verdict == DUPLICATE and sentence.raw in self._raws):
                self.counts[verdict] += 1
                return out
            if verdict != DUPLICATE:
                self._raws.clear()
                if verdict == RESTART:
                    self.counts[RESTART] += 1
            self._raws.add(sentence.raw)
        if self._time is not None and (t != self._time or sentence.sentence_type in self._types):
            self._close(out)
        if t is None:
            out.append((sentence, stamp))
            return out
        if self._time is None:
            self._time, self._types, self._sample, self._stamp = t, (sentence.sentence_type,), sentence, stamp
            self._given = False
        else:
            self._types += (sentence.sentence_type,)
            self._sample = merge(self._sample, sentence)
            self.merged += 1
        if not self._given and ("GGA" in self._types or self.gga is False):
            self._given = True
            out.append((self._sample, self._stamp))
        return out

    def _close(self, out):
        if not self._given:
            self.late += 1
            out.append((self._sample, self._stamp))
        if "GGA" in self._types:
            self.gga, self._misses = True, 0
        else:
            self._misses += 1
            if self.gga is None or self._misses >= 2:     # one lost GGA does not make an RMC-only sender
                self.gga = False
        self._time = None


def time_ms(field: str, form: str = "tenths") -> int:
    """Milliseconds of the day of an NMEA time field ``hhmmss[.f]``, its fraction read as ``form``
    writes it: ``tenths`` (a decimal fraction, the captures' ``223047.5``) or ``milliseconds`` (25.S4:
    the milliseconds unpadded, ``.4`` = 4 ms).  Raises :class:`NmeaError` for a field that is not one."""
    whole, _, frac = field.partition(".")
    if len(whole) != 6 or not whole.isdigit() or (frac and not frac.isdigit()):
        raise NmeaError(f"NMEA time field {field!r} is not hhmmss[.f]")
    ms = ((int(whole[:2]) * 60 + int(whole[2:4])) * 60 + int(whole[4:])) * 1000
    if not frac:
        return ms
    if form == "milliseconds":
        return ms + int(frac)
    return ms + int(round(int(frac) * 1000 / 10 ** len(frac)))


def encode(sentence: NmeaSentence) -> bytes:
    """The datagram for ``sentence``: its raw text plus CR LF."""
    try:
        return sentence.raw.encode("ascii") + b"\r\n"
    except UnicodeEncodeError:
        raise NmeaError("NMEA sentence text must be ASCII") from None


def build(talker: str, sentence_type: str, fields: Sequence[str]) -> NmeaSentence:
    """Render a sentence from its comma fields with pynmea2 (checksum added)."""
    try:
        cls = pynmea2.TalkerSentence.sentence_types[sentence_type]
        text = cls(talker, sentence_type, tuple(fields)).render(checksum=True, dollar=True)
    except Exception as exc:
        raise NmeaError(f"cannot build {talker}{sentence_type}: {exc}") from None
    return parse(text)


def _dm(value: float, width: int, hemispheres: str):
    """Decimal degrees -> ('ddmm.mmmm', 'N'/'S') as NMEA writes coordinates."""
    hemi = hemispheres[0] if value >= 0 else hemispheres[1]
    value = abs(value)
    degrees = int(value)
    minutes = round((value - degrees) * 60.0, 4)
    if minutes >= 60.0:
        degrees, minutes = degrees + 1, 0.0
    return f"{degrees:0{width}d}{minutes:07.4f}", hemi


def _hms(t: datetime.time, form: str = "tenths") -> str:
    """hhmmss.s: the 2024 captures' time, tenths of a second (truncated, never 60.0 s); or, with
    ``form`` "milliseconds", 25.S4's hhmmss.<ms> written without padding (4 ms -> ".4", 400 ms ->
    ".400": a parser that reads it as a decimal fraction is wrong by up to 0.9 s)."""
    if form == "milliseconds":
        return f"{t.hour:02d}{t.minute:02d}{t.second:02d}.{t.microsecond // 1000:d}"
    return f"{t.hour:02d}{t.minute:02d}{t.second:02d}.{t.microsecond // 100000:d}"


def make_gga(utc_time: datetime.time, latitude: float, longitude: float, altitude: float,
             fix_quality: int = 1, num_satellites: int = 9, hdop: float = 1.0,
             geoid_separation: float = 0.0, talker: str = "GP", time_form: str = "tenths") -> NmeaSentence:
    """A GGA sentence exactly as MORAI emits it (see the captured example above).

    14 fields: time hhmmss.s (``time_form``: :func:`_hms`), ddmm.mmmm / dddmm.mmmm (4 decimals of arc-minutes,
    ~0.2 m), quality, two-digit satellites, HDOP / altitude / geoid separation
    with one decimal, and the two trailing empty fields (differential age and
    station id).
    """
    lat, ns = _dm(latitude, 2, "NS")
    lon, ew = _dm(longitude, 3, "EW")
    return build(talker, "GGA", (_hms(utc_time, time_form), lat, ns, lon, ew, str(int(fix_quality)),
                                 f"{int(num_satellites):02d}", f"{hdop:.1f}",
                                 f"{altitude:.1f}", "M", f"{geoid_separation:.1f}", "M",
                                 "", ""))


def make_rmc(utc_time: datetime.time, date: datetime.date, latitude: float, longitude: float,
             speed_knots: float = 0.0, course_deg: float = 0.0, status: str = "A",
             talker: str = "GP", time_form: str = "tenths") -> NmeaSentence:
    """An RMC sentence exactly as MORAI emits it (see the captured example above).

    13 fields: time hhmmss.s, status, position as in GGA, speed and course as
    000.0, date ddmmyy, magnetic variation ``000.0,E``, mode ``A`` and an empty
    last field before the checksum (``...,E,A,*22``).  Clients that split on ','
    and index fixed positions (MORAI's GPS example) need that empty field.
    """
    lat, ns = _dm(latitude, 2, "NS")
    lon, ew = _dm(longitude, 3, "EW")
    return build(talker, "RMC", (_hms(utc_time, time_form), status, lat, ns, lon, ew,
                                 f"{speed_knots:05.1f}", f"{course_deg:05.1f}",
                                 date.strftime("%d%m%y"), "000.0", "E", "A", ""))
