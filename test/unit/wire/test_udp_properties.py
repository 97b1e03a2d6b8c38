"""Hypothesis round trips for every message class and variant."""

import datetime
import math
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morai_bridge.wire.udp import nmea
from morai_bridge.wire import udp

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

INT_RANGES = {letter: (-(1 << (8 * size - 1)), (1 << (8 * size - 1)) - 1)
              for letter, size in (("b", 1), ("h", 2), ("i", 4), ("q", 8))}
INT_RANGES.update({letter.upper(): (0, (1 << (8 * size)) - 1)
                   for letter, size in (("b", 1), ("h", 2), ("i", 4), ("q", 8))})

FLOAT32_EDGES = [0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"),
                 struct.unpack("<f", b"\xff\xff\x7f\x7f")[0],   # largest float32
                 struct.unpack("<f", b"\x01\x00\x00\x00")[0],   # smallest subnormal
                 struct.unpack("<f", b"\x00\x00\x80\x00")[0]]   # smallest normal


def float32s():
    return st.one_of(st.sampled_from(FLOAT32_EDGES),
                     st.floats(width=32, allow_nan=False))


def float64s():
    return st.floats(allow_nan=False)


def canonical_text(size):
    # Decoding strips trailing NUL and spaces: canonical text never ends with one.
    chars = st.characters(min_codepoint=0, max_codepoint=127)
    return st.text(chars, max_size=size).map(lambda s: s.rstrip("\x00 "))


def dollar_text(size):
    # SimControl/SimStatus options keep everything up to the '$' terminator.
    return st.text(st.characters(min_codepoint=0, max_codepoint=127), max_size=size - 1)


def field_strategy(field):
    letter = field.letter
    if field.is_text:
        return dollar_text(field.size) if field.pad == "dollar" else canonical_text(field.size)
    if letter == "?":
        return st.booleans()
    if letter == "f":
        base = float32s()
    elif letter == "d":
        base = float64s()
    else:
        lo, hi = INT_RANGES[letter]
        base = st.integers(lo, hi)
    if field.is_array:
        return st.tuples(*[base] * field.count)
    return base


def is_zero(value):
    if isinstance(value, float):
        return value == 0 and math.copysign(1, value) > 0
    if isinstance(value, tuple):
        return all(is_zero(v) for v in value)
    return value in (0, "", False)


def record_strategy(records):
    fields = {f.name: field_strategy(f) for f in records.fields}
    one = st.fixed_dictionaries(fields).map(lambda d: records.record(**d))
    if records.group == 1:
        # An all-zero record is the empty-slot marker; it cannot be represented.
        item = one.filter(lambda r: not is_zero(tuple(r)))
    else:
        item = st.tuples(*[one] * records.group).filter(
            lambda pair: not all(is_zero(tuple(r)) for r in pair))
    return st.lists(item, max_size=records.count // records.group).map(tuple)


def message_strategy(info):
    fields = {f.name: field_strategy(f) for f in info.fields if f.const is None}
    if info.records is not None:
        fields[info.records.attr] = record_strategy(info.records)
    return st.fixed_dictionaries(fields).map(
        lambda d: udp.make(info.cls, info.data_length, **d))


VARIANT_IDS = [f"{i.cls.__name__}-{i.data_length}" for i in udp.VARIANTS]


@pytest.mark.parametrize("info", udp.VARIANTS, ids=VARIANT_IDS)
def test_round_trip_every_variant(info):
    @SETTINGS
    @given(message_strategy(info))
    def check(msg):
        data = udp.encode(msg)
        assert len(data) == info.total_lengths[0]
        back = udp.decode(data)
        assert back == msg
        assert type(back) is info.cls
        assert udp.encode(back) == data
        assert udp.classify(data) == info.type_name

    check()


def test_every_message_class_has_a_round_trip_strategy():
    with_variants = {i.cls for i in udp.VARIANTS}
    assert with_variants | {nmea.NmeaSentence} == set(udp.message_classes())


def lax_float32():
    # Arbitrary doubles inside the float32 range (and infinities).
    return st.one_of(st.floats(min_value=-3.4e38, max_value=3.4e38),
                     st.sampled_from([float("inf"), float("-inf")]))


def lax_field_strategy(field):
    if field.letter == "f":
        return st.tuples(*[lax_float32()] * field.count) if field.is_array else lax_float32()
    if field.is_text and field.pad != "dollar":
        # trailing spaces/NULs allowed: the wire drops them
        return st.text(st.characters(min_codepoint=0, max_codepoint=127), max_size=field.size)
    return field_strategy(field)


@pytest.mark.parametrize("info", [i for i in udp.VARIANTS if i.records is None],
                         ids=[f"{i.cls.__name__}-{i.data_length}"
                              for i in udp.VARIANTS if i.records is None])
def test_to_wire_precision_predicts_the_round_trip(info):
    fields = {f.name: lax_field_strategy(f) for f in info.fields if f.const is None}

    @SETTINGS
    @given(st.fixed_dictionaries(fields))
    def check(values):
        msg = udp.make(info.cls, info.data_length, **values)
        assert udp.decode(udp.encode(msg)) == udp.to_wire_precision(msg)

    check()


def test_to_wire_precision_rounds_records_too():
    rec = udp.ObjectRecord(obj_id=1, pos_x=0.1, link_id="L1 ")
    msg = udp.make(udp.ObjectInfo, objects=(rec,))
    rounded = udp.to_wire_precision(msg)
    assert rounded.objects[0].pos_x == struct.unpack("<f", struct.pack("<f", 0.1))[0]
    assert rounded.objects[0].pos_x != 0.1
    assert rounded.objects[0].link_id == "L1"
    assert udp.decode(udp.encode(msg)) == rounded


# --------------------------------------------------------------------- NMEA

@SETTINGS
@given(lat=st.floats(-89.9, 89.9), lon=st.floats(-179.9, 179.9),
       alt=st.floats(-400, 9000), quality=st.integers(0, 8), sats=st.integers(0, 40),
       t=st.times(), date=st.dates(datetime.date(2000, 1, 1), datetime.date(2068, 12, 31)),  # 2-digit years
       speed=st.floats(0, 999), course=st.floats(0, 359.9))
def test_nmea_round_trip(lat, lon, alt, quality, sats, t, date, speed, course):
    gga = nmea.make_gga(t, lat, lon, alt, fix_quality=quality, num_satellites=sats)
    rmc = nmea.make_rmc(t, date, lat, lon, speed_knots=speed, course_deg=course)
    for sentence in (gga, rmc):
        data = udp.encode(sentence)
        assert data.endswith(b"\r\n")
        assert udp.decode(data) == sentence
        assert udp.classify(data) == "gps_nmea"
        # 4 decimals of arc-minutes: better than 1e-6 degree
        assert abs(sentence.latitude - lat) < 1e-6
        assert abs(sentence.longitude - lon) < 1e-6
    assert abs(gga.altitude - alt) <= 0.05 + 1e-9
    assert gga.fix_quality == quality and gga.num_satellites == sats
    assert rmc.date == date
    # MORAI writes hhmmss.s: tenths of a second, truncated
    assert rmc.utc_time.replace(tzinfo=None) == t.replace(microsecond=t.microsecond // 100000 * 100000)
