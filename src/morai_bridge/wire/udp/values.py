"""The values of one layout field on their way to the wire: what encode accepts and what a value
reads as after the trip.

* :func:`text_encoder`: str -> the field's bytes, ASCII and padded by its policy (NUL, spaces, or
  ``$`` then NUL), or :class:`~.errors.EncodeError`;
* :func:`strict_check`: the type check of a strict protocol's encode (:class:`~.codec.VariantCodec`
  with ``strict``), naming the field;
* :func:`diagnose`: which field made a ``struct.pack`` of many fields fail;
* :func:`round_field`: a value as the wire gives it back (float32 rounded, text normalised, bool),
  for ``to_wire_precision``.

The compiled codec (:mod:`.codec`) makes the encoders and checks once per field when it
compiles a layout and keeps them; per message it calls what it kept (no lookup here).  Decoding
text is the codec's own (``text_of``).
No ROS imports.
"""

import math
import struct
from typing import Callable

from .errors import EncodeError
from .schema import PAD_DOLLAR, PAD_SPACE, Field

__all__ = ["text_encoder", "strict_check", "diagnose", "round_field"]

_F32 = struct.Struct("<f")
_FLT_MAX = 3.4028234663852886e38


def text_encoder(owner: str, f: Field) -> Callable[[str], bytes]:
    """str -> the field's bytes (ASCII, padded by its policy); EncodeError otherwise."""
    size, dollar = f.size, f.pad == PAD_DOLLAR
    limit = size - 1 if dollar else size
    fill = b" " if f.pad == PAD_SPACE else b"\x00"

    def encode_text(value) -> bytes:
        if not isinstance(value, str):
            raise EncodeError(f"{owner}.{f.name}: expected str, got {type(value).__name__}",
                              field=f.name)
        try:
            raw = value.encode("ascii")
        except UnicodeEncodeError:
            raise EncodeError(f"{owner}.{f.name}: text must be ASCII: {value!r}",
                              field=f.name) from None
        if len(raw) > limit:
            raise EncodeError(f"{owner}.{f.name}: {len(raw)} characters exceed the limit "
                              f"of {limit}: {value!r}", field=f.name)
        return (raw + b"$" if dollar else raw).ljust(size, fill)

    return encode_text


def round_field(f: Field, value):
    """``value`` as it reads after the wire: float32 rounded, text normalised, bool."""
    if value is None:
        return None
    if f.is_text:
        return value.rstrip("\x00 ") if f.pad != PAD_DOLLAR and isinstance(value, str) else value
    if f.letter == "f":
        return tuple(map(_round32, value)) if f.is_array else _round32(value)
    return bool(value) if f.letter == "?" else value


def _round32(value):
    if isinstance(value, float):
        return _F32.unpack(_F32.pack(value))[0]
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def diagnose(owner: str, fields, values, exc: Exception) -> EncodeError:
    """Which field made ``struct.pack`` fail, as an EncodeError naming it."""
    for f, value in zip(fields, values):
        try:
            struct.pack("<" + f.code, *(value if f.is_array else (value,)))
        except (struct.error, OverflowError, TypeError) as err:
            return EncodeError(f"{owner}.{f.name}: {value!r} does not fit struct code "
                               f"{f.code!r} ({err})", field=f.name)
    return EncodeError(f"{owner}: cannot pack ({exc})")


def strict_check(owner: str, f: Field) -> Callable[[object], None]:
    """A function raising EncodeError when a value has the wrong type for ``f``: a bool field
    takes only bool/0/1, an integer field no bool or float (and a value its code holds), a float
    field no bool or text (float32 at most FLT_MAX), a text field what :func:`text_encoder` takes."""
    name, letter = f.name, f.letter
    if f.is_text:
        return text_encoder(owner, f)  # raises as encode would; the bytes are dropped
    if f.is_array:
        raise ValueError(f"{owner}.{name}: strict checks of array fields are not implemented")

    def fail(what):
        raise EncodeError(f"{owner}.{name}: {what}", field=name)

    if letter == "?":
        def check(value):
            if not isinstance(value, (bool, int)) or value not in (0, 1):
                fail(f"expected a bool, got {value!r}")
    elif letter in "fd":
        limit = _FLT_MAX if letter == "f" else math.inf

        def check(value):
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                fail(f"expected a number, got {value!r}")
            try:
                too_big = math.isfinite(value) and abs(value) > limit
            except OverflowError:  # an int beyond any float
                too_big = True
            if too_big:
                fail(f"{value!r} does not fit {'float32' if letter == 'f' else 'float64'}")
    else:
        pack = struct.Struct("<" + f.code).pack

        def check(value):
            if not isinstance(value, int) or isinstance(value, bool):
                fail(f"expected an int, got {value!r}")
            try:
                pack(value)
            except struct.error:
                fail(f"{value!r} does not fit struct code {f.code!r}")
    return check
