"""wire/udp/values.py: one field's value on its way to the wire (text encoding by padding policy, strict
checks, the field a failed pack names, the wire's precision).  Through the public API:
test_udp_api.py (text limits, padding, range errors) and test_udp_properties.py
(to_wire_precision predicts the round trip)."""

import math
import struct

import pytest

from morai_bridge.wire.udp.errors import EncodeError
from morai_bridge.wire.udp.schema import PAD_DOLLAR, PAD_NUL, PAD_SPACE, Field
from morai_bridge.wire.udp.values import diagnose, round_field, strict_check, text_encoder


@pytest.mark.parametrize("pad, text, wire", [
    (PAD_NUL, "ab", b"ab\x00\x00\x00\x00"),
    (PAD_SPACE, "ab", b"ab    "),
    (PAD_DOLLAR, "ab", b"ab$\x00\x00\x00"),
    (PAD_NUL, "abcdef", b"abcdef"),
    (PAD_DOLLAR, "abcde", b"abcde$"),
])
def test_text_is_padded_by_its_policy(pad, text, wire):
    assert text_encoder("T", Field("id", "6s", "text", pad))(text) == wire


@pytest.mark.parametrize("pad, value, match", [
    (PAD_NUL, "abcdefg", "7 characters exceed the limit of 6"),
    (PAD_DOLLAR, "abcdef", "6 characters exceed the limit of 5"),
    (PAD_NUL, "Ä", "must be ASCII"),
    (PAD_NUL, b"ab", "expected str, got bytes"),
])
def test_text_that_does_not_fit_names_the_field(pad, value, match):
    with pytest.raises(EncodeError, match=match) as info:
        text_encoder("T", Field("id", "6s", "text", pad))(value)
    assert info.value.field == "id" and str(info.value).startswith("T.id: ")


def test_strict_checks_take_the_field_type_and_range_only():
    flag, count, x, y = (strict_check("T", Field(n, c, "")) for n, c in
                         (("flag", "?"), ("count", "h"), ("x", "f"), ("y", "d")))
    for check, good, bad in ((flag, (True, 0, 1), (2, "1", None)),
                             (count, (0, -32768, 32767), (True, 1.0, 32768)),
                             (x, (0, 1.5, 3.4e38, math.inf, math.nan), (True, "1", 3.5e38, 10 ** 400)),
                             (y, (1e300, -1e300), (False,))):
        for v in good:
            check(v)
        for v in bad:
            with pytest.raises(EncodeError):
                check(v)
    with pytest.raises(ValueError, match="array fields"):
        strict_check("T", Field("a", "4f", ""))


def test_diagnose_names_the_first_field_that_does_not_fit():
    fields = (Field("a", "b", ""), Field("b", "H", ""), Field("c", "2f", ""))
    values = (1, 70000, (1.0, 2.0))
    try:
        struct.pack("<bH2f", 1, 70000, 1.0, 2.0)
    except struct.error as exc:
        err = diagnose("T", fields, values, exc)
    assert err.field == "b" and str(err).startswith("T.b: 70000 does not fit struct code 'H'")
    assert diagnose("T", fields, (1, 2, (1.0, 2.0)), ValueError("x")).field is None


def test_round_field_gives_the_value_as_it_reads_after_the_wire():
    f32 = Field("x", "f", "")
    assert round_field(f32, 0.1) == struct.unpack("<f", struct.pack("<f", 0.1))[0] != 0.1
    assert round_field(f32, 3) == 3.0 and isinstance(round_field(f32, 3), float)
    assert round_field(Field("x", "d", ""), 0.1) == 0.1
    assert round_field(Field("v", "3f", ""), (0.1, 1, 2.5)) == tuple(
        struct.unpack("<3f", struct.pack("<3f", 0.1, 1, 2.5)))
    assert round_field(Field("b", "?", ""), 1) is True and round_field(f32, None) is None
    assert round_field(Field("s", "6s", "", PAD_NUL), "ab \x00") == "ab"
    assert round_field(Field("s", "6s", "", PAD_DOLLAR), "ab ") == "ab "
    with pytest.raises(OverflowError):
        round_field(f32, 1e300)
