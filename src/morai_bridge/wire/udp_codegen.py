"""Shared pieces of the generated UDP codec (:mod:`.udp_codec`): the error classes, the text
rules of fixed-width fields (with their memo), and the helpers that write a decoder's Python
source and compile it.  No ROS imports.
"""

import struct
from typing import Callable, Dict, Optional, Tuple

from .udp_schema import PAD_DOLLAR, PAD_SPACE, Field

#: The public module of the error classes (their repr and tracebacks).
_PUBLIC_MODULE = "morai_bridge.wire.udp"

_new = tuple.__new__
_F32 = struct.Struct("<f")
_FLT_MAX = 3.4028234663852886e38


class DecodeError(ValueError):
    """A datagram cannot be decoded.  Attributes give what is known about it."""

    def __init__(self, message: str, *, header: Optional[bytes] = None,
                 data_length: Optional[int] = None, length: Optional[int] = None,
                 expected: Tuple[int, ...] = ()):
        super().__init__(message)
        self.header = header
        self.data_length = data_length
        self.length = length
        self.expected = tuple(expected)


DecodeError.__module__ = _PUBLIC_MODULE


class EncodeError(ValueError):
    """A message cannot be encoded; ``field`` names the offending field if known."""

    def __init__(self, message: str, *, field: Optional[str] = None):
        super().__init__(message)
        self.field = field


EncodeError.__module__ = _PUBLIC_MODULE


# ----------------------------------------------------------------------------- text

_TEXT_CACHE: Dict[bytes, str] = {}
_TEXT_CACHE_MAX = 4096


def _text(raw: bytes) -> str:
    # Ids (link ids, traffic-light ids) repeat from packet to packet: memoise.
    text = _TEXT_CACHE.get(raw)
    if text is None:
        text = raw.rstrip(b"\x00 ").decode("ascii", "replace")
        if len(_TEXT_CACHE) >= _TEXT_CACHE_MAX:
            _TEXT_CACHE.clear()
        _TEXT_CACHE[raw] = text
    return text


_TEXT1_CACHE: Dict[bytes, Tuple[str]] = {}


def _text1(raw: bytes) -> Tuple[str]:
    """``(_text(raw),)``, memoised too: generated decoders join it to a tuple as it is."""
    one = _TEXT1_CACHE[raw] = (_text(raw),)
    if len(_TEXT1_CACHE) > _TEXT_CACHE_MAX:
        _TEXT1_CACHE.clear()
    return one


def _dollar_text(raw: bytes) -> str:
    body = raw.rstrip(b"\x00")
    if body.endswith(b"$"):
        body = body[:-1]
    else:  # not terminated as documented: fall back to the general rule
        body = body.rstrip(b"\x00 ")
    return body.decode("ascii", "replace")


def _text_decoder(f: Field) -> Callable[[bytes], str]:
    return _dollar_text if f.pad == PAD_DOLLAR else _text


# ----------------------------------------------------------------------------- code generation

def _compile(name: str, lines, namespace: dict):
    """The function ``name`` defined by source ``lines``; every name of ``namespace`` is bound
    as a default argument (a fast local).  Returns (function, source)."""
    params = ", ".join(["buf"] + [f"{k}={k}" for k in namespace])
    source = "\n".join([f"def {name}({params}):"] + ["    " + line for line in lines]) + "\n"
    scope = dict(namespace)
    exec(compile(source, f"<udp_codec {name}>", "exec"), scope)  # noqa: S102 - our own source
    return scope[name], source


def _tuple_source(items, sizes) -> str:
    """Source of a tuple of ``items`` in order, each ``('t', name, i)`` (item i of the tuple
    named ``name``, of ``sizes[name]`` items), ``('e', source)`` (a value) or ``('p', source)``
    (a 1-tuple holding the value).

    Runs of consecutive items of one tuple become one slice (the tuple itself when the run
    is all of it), the rest literal tuples.  The parts are joined with + in the order that
    copies the fewest items (each + allocates and fills a new tuple; joining the small
    parts first is cheaper than growing one tuple from the left)."""
    parts, lit, i = [], [], 0       # (source, length)
    while i < len(items):
        item = items[i]
        j = i
        if item[0] == "t":
            while j + 1 < len(items) and items[j + 1] == ("t", item[1], items[j][2] + 1):
                j += 1
        if j > i or item[0] == "p":
            if lit:
                parts.append(("(" + ", ".join(lit) + ",)", len(lit)))
                lit = []
        if item[0] == "p":
            parts.append((item[1], 1))
        elif j > i:
            t, a, b, n = item[1], item[2], items[j][2] + 1, sizes[item[1]]
            parts.append((t if (a, b) == (0, n) else f"{t}[{a or ''}:{'' if b == n else b}]", b - a))
        else:
            lit.append(f"{item[1]}[{item[2]}]" if item[0] == "t" else item[1])
        i = j + 1
    if lit:
        parts.append(("(" + ", ".join(lit) + ",)", len(lit)))
    if not parts:
        return "()"
    # best[i, j] = (items copied, source) of joining parts i..j (interval dynamic programme)
    n = len(parts)
    length = [0]
    for _, k in parts:
        length.append(length[-1] + k)
    best = {(i, i): (0, parts[i][0]) for i in range(n)}
    for width in range(1, n):
        for i in range(n - width):
            j = i + width
            best[i, j] = min((best[i, k][0] + best[k + 1, j][0] + length[j + 1] - length[i],
                              f"{_paren(best[i, k][1], k > i)} + {_paren(best[k + 1, j][1], j > k + 1)}")
                             for k in range(i, j))
    return best[0, n - 1][1]


def _paren(source: str, joined: bool) -> str:
    return f"({source})" if joined else source


def _text_lines(var: str, raw: str, conv_name: str, conv, one: bool = False) -> list:
    """Lines setting ``var`` to the text of the bytes expression ``raw`` (``one``: to the
    1-tuple of it; only for memoised texts): memoised texts (:func:`_text`) are looked up
    inline in the memo first."""
    if conv is _text:
        get, make = ("_text1_get", "_text1") if one else ("_text_get", conv_name)
        return [f"{var} = {get}({raw})", f"if {var} is None:", f"    {var} = {make}({raw})"]
    return [f"{var} = {conv_name}({raw})"]


def _alone(items, i) -> bool:
    """True when item i has no neighbour that would share a literal tuple with it (each is
    absent, a 1-tuple part, or in a run of two or more items of one tuple)."""
    for side in (-1, 1):
        j = i + side
        if 0 <= j < len(items) and items[j][0] != "p":
            nxt = items[j + side] if 0 <= j + side < len(items) else None
            if items[j][0] != "t" or nxt != ("t", items[j][1], items[j][2] + side):
                return False
    return True


def _one_tuple_texts(items, texts: dict):
    """``items`` with each ``('e', var)`` of ``texts`` (var -> its text_lines arguments)
    made a ``('p', var)`` 1-tuple where it stands alone (see :func:`_alone`); returns the
    items and the lines computing the text variables."""
    items = list(items)
    lines = []
    for i, item in enumerate(items):
        if item[0] == "e" and item[1] in texts:
            raw, conv_name, conv = texts[item[1]]
            one = conv is _text and _alone(items, i)
            if one:
                items[i] = ("p", item[1])
            lines += _text_lines(item[1], raw, conv_name, conv, one)
    return items, lines


def _text_encoder(owner: str, f: Field) -> Callable[[str], bytes]:
    size = f.size
    dollar = f.pad == PAD_DOLLAR
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
        if dollar:
            raw += b"$"
        return raw.ljust(size, fill)

    return encode_text


def _normal_text(f: Field, value):
    if f.pad == PAD_DOLLAR or not isinstance(value, str):
        return value
    return value.rstrip("\x00 ")


def _round32(value):
    if isinstance(value, float):
        return _F32.unpack(_F32.pack(value))[0]
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _diagnose(owner: str, fields, values, exc: Exception) -> EncodeError:
    """Find which field made ``struct.pack`` fail and say so."""
    for f, value in zip(fields, values):
        try:
            if f.is_array:
                struct.pack("<" + f.code, *value)
            else:
                struct.pack("<" + f.code, value)
        except (struct.error, OverflowError, TypeError) as err:
            return EncodeError(f"{owner}.{f.name}: {value!r} does not fit struct code "
                               f"{f.code!r} ({err})", field=f.name)
    return EncodeError(f"{owner}: cannot pack ({exc})")
