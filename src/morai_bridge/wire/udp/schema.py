"""How a UDP layout is written down: tables of fields, made into message classes.

A message layout is data: per size variant, an ordered table of :class:`Field` rows (name,
struct code, unit / meaning).  :func:`define_message` turns the tables into an immutable
namedtuple class (fields, defaults, a docstring listing every unit) and appends a
:class:`MessageSpec` to a :class:`Registry`; :class:`~.codec.Protocol` compiles a
registry into decoders and encoders.

Two registries exist: :data:`MORAI` (the simulator's messages, :mod:`.layouts`, public
API :mod:`morai_bridge.wire.udp`) and the emulator's lock-step extension (:mod:`.lockstep`).  Nothing here
touches bytes at run time, and nothing imports ROS.
"""

import collections
import struct
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

#: Module the MORAI classes claim to live in (the public API module), so that their repr and
#: pickling refer to ``morai_bridge.wire.udp.<Name>``.
PUBLIC_MODULE = "morai_bridge.wire.udp"

# Text padding policies for fixed-width ``Ns`` fields.
PAD_NUL = "nul"        # pad with NUL bytes (what the simulator sends)
PAD_SPACE = "space"    # pad with spaces (what the official examples send)
PAD_DOLLAR = "dollar"  # text, then '$', then NUL bytes (SimControl / SimStatus)

_TYPES = {"s": str, "?": bool, "f": float, "d": float}  # every other code letter is an int


class Field(NamedTuple):
    """One row of a layout table."""

    name: str
    code: str          # struct code with optional repeat count: 'f', 'h', '38s', '10f'
    unit: str          # unit and meaning, used for the generated docs
    pad: str = ""      # text fields only: PAD_NUL, PAD_SPACE or PAD_DOLLAR
    const: Optional[int] = None  # wire constant that is not stored in the object
    default: object = None       # class / make() default; None = the zero value

    @property
    def letter(self) -> str:
        return self.code[-1]

    @property
    def count(self) -> int:
        return int(self.code[:-1] or 1)

    @property
    def size(self) -> int:
        return struct.calcsize("<" + self.code)

    @property
    def is_text(self) -> bool:
        return self.letter == "s"

    @property
    def is_array(self) -> bool:
        return not self.is_text and self.count > 1

    @property
    def python_type(self) -> type:
        return tuple if self.is_array else _TYPES.get(self.letter, int)


class Records(NamedTuple):
    """A fixed block of ``count`` records of one layout inside a payload."""

    attr: str                     # name of the tuple-of-records field in the message
    record: type                  # record class (define_record)
    fields: Tuple[Field, ...]     # record layout for this variant, wire order
    count: int                    # slots on the wire (unused slots are all zero)
    group: int = 1                # records per list element (2 = collision pairs)
    unit: str = ""

    @property
    def record_size(self) -> int:
        return struct.calcsize(record_format(self.fields))


class Variant(NamedTuple):
    """One size variant of a message (one accepted data_length)."""

    data_length: Optional[int]            # value of the data_length field; None = binary framing
    fields: Tuple[Field, ...]             # fixed part in wire order (before any records)
    records: Optional[Records] = None
    note: str = ""
    tail: bool = True                     # CR LF after the payload
    untailed_ok: bool = False             # also accept the datagram without CR LF
    prefix_outside_length: bool = False   # data_length does not count the fixed part

    @property
    def payload_size(self) -> int:
        size = struct.calcsize(record_format(self.fields))
        if self.records is not None:
            size += self.records.record_size * self.records.count
        return size


class MessageSpec(NamedTuple):
    """Everything known about one message type."""

    cls: type
    name: str
    type_name: str
    header: Optional[bytes]     # b'#MoraiInfo$', or None for the binary ground-vehicle header
    direction: str              # 'sim->user' or 'user->sim'
    aux_length: int             # 12, or 20 for SimControl / SimStatus; 0 for binary framing
    variants: Tuple[Variant, ...]
    current: Optional[int]      # data_length of the variant a sender should use
    msg_type: Optional[int]     # binary framing only
    doc: str


def record_format(fields: Sequence[Field]) -> str:
    return "<" + "".join(f.code for f in fields)


def table(rows: Sequence[tuple], pad: str = "") -> Tuple[Field, ...]:
    """Field rows from plain tuples; ``pad`` applies to every text field."""
    out = []
    for row in rows:
        f = Field(*row)
        if f.is_text and not f.pad:
            if not pad:
                raise ValueError(f"text field {f.name} needs a padding policy")
            f = f._replace(pad=pad)
        out.append(f)
    return tuple(out)


def default_value(f: Field):
    """The field's declared default, else the value an all-zero wire field decodes to."""
    if f.default is not None:
        return f.default
    if f.is_array:
        return (_TYPES.get(f.letter, int)(),) * f.count
    return f.python_type()


class Registry:
    """The ordered :class:`MessageSpec` list that one Protocol compiles.

    ``module``: the public module the classes claim to live in; ``data_length_field``: whether
    '#'-framed classes get a ``data_length`` field that selects the variant (MORAI) or not
    (one variant per message).
    """

    def __init__(self, module: str, data_length_field: bool = True):
        self.module = module
        self.data_length_field = data_length_field
        self.specs: List[MessageSpec] = []

    def __iter__(self):
        return iter(self.specs)

    def __len__(self):
        return len(self.specs)

    def __repr__(self):
        return f"Registry({self.module!r}, {len(self.specs)} messages)"


#: The MORAI simulator's messages (:mod:`.layouts`), the default registry.
MORAI = Registry(PUBLIC_MODULE)

#: Every MORAI message spec, in declaration order (the list of :data:`MORAI`).
SPECS: List[MessageSpec] = MORAI.specs


def _namedtuple(name: str, members: Sequence[Tuple[str, type, object]], doc: str,
                module: str, **extra) -> type:
    """An immutable class of (name, type, default) members that lives in ``module``."""
    cls = collections.namedtuple(name, [m for m, _, _ in members],
                                 defaults=[d for _, _, d in members], module=module)
    cls.__annotations__ = {m: t for m, t, _ in members}
    cls.__doc__ = doc
    for key, value in extra.items():
        setattr(cls, key, value)
    return cls


def _field_line(f: Field, where: str = "") -> str:
    default = "" if f.default is None else f" (default {f.default!r})"
    return f"    {f.name} ({f.code}): {f.unit}{default}{where}"


def define_record(name: str, doc: str, fields: Sequence[Field],
                  registry: Registry = MORAI) -> type:
    """The class of one array record (e.g. one object of Object Info): fields in wire order."""
    text = "\n".join([doc, "", "Fields (struct code: unit / meaning):"]
                     + [_field_line(f) for f in fields])
    return _namedtuple(name, [(f.name, f.python_type, default_value(f)) for f in fields],
                       text, registry.module, _layout=tuple(fields))


def define_message(name: str, type_name: str, header: Optional[bytes], direction: str,
                   doc: str, variants: Sequence[Variant], current: Optional[int],
                   aux_length: int = 12, msg_type: Optional[int] = None,
                   order: Optional[Sequence[str]] = None,
                   registry: Registry = MORAI) -> type:
    """A message class from its variant tables; its spec is appended to ``registry``.

    Class fields: the fields of the *current* variant in wire order, then those only other
    variants carry (in order of appearance), then ``data_length`` (text framing, when the
    registry has that field).  Defaults: the declared default (zero unless declared) for the
    current variant's fields, None for fields it does not carry, ``data_length`` = current.
    ``order`` overrides the field order (binary messages put the payload first).
    """
    variants = tuple(variants)
    by_len = {v.data_length: v for v in variants}
    if current not in by_len:
        raise ValueError(f"{name}: current variant {current} not declared")

    def members(v: Variant):
        out = [(f.name, f) for f in v.fields if f.const is None]
        return out + ([(v.records.attr, v.records)] if v.records is not None else [])

    seen: Dict[str, object] = {}          # member name -> its Field or Records
    carried_by: Dict[str, List[int]] = {}
    for v in (by_len[current],) + tuple(x for x in variants if x.data_length != current):
        for mname, item in members(v):
            carried_by.setdefault(mname, []).append(v.data_length)
            first = seen.setdefault(mname, item)
            if _kind(first) != _kind(item):
                raise ValueError(f"{name}.{mname}: type differs between variants")
    names = list(seen)
    if order is not None:
        if sorted(order) != sorted(names):
            raise ValueError(f"{name}: order {order} does not match fields {names}")
        names = list(order)

    in_current = {m for m, _ in members(by_len[current])}
    fields, lines = [], []
    for mname in names:
        item = seen[mname]
        only = carried_by[mname]
        where = f"  [only data_length {', '.join(map(str, only))}]" \
            if len(only) != len(variants) else ""
        if isinstance(item, Records):
            fields.append((mname, tuple, () if mname in in_current else None))
            kind = "pairs of " if item.group > 1 else ""
            lines.append(f"    {mname}: tuple of {kind}{item.record.__name__} (occupied slots "
                         f"only, wire order; {item.count} slots){where}")
        else:
            fields.append((mname, item.python_type,
                           default_value(item) if mname in in_current else None))
            lines.append(_field_line(item, where))
    has_dl = header is not None and registry.data_length_field
    if has_dl:
        fields.append(("data_length", int, current))
        lines.append("    data_length: selects the variant to encode; one of "
                     + ", ".join(str(v.data_length) for v in variants))

    if header is not None:
        head = [f"Header {header.decode()!r}, {direction}.  Variants (data_length):"] + [
            f"    {v.data_length}{' (current)' if v.data_length == current else ''}: {v.note}"
            for v in variants]
    else:
        head = [f"Binary 33-byte header, msg_type {msg_type}, {direction}."]
    text = "\n".join([doc.strip(), ""] + head + ["", "Fields (struct code: unit / meaning):"]
                     + lines)
    extra = {"TYPE_NAME": type_name, "HEADER": header, "CURRENT_DATA_LENGTH": current,
             "DATA_LENGTHS": tuple(v.data_length for v in variants)}
    if msg_type is not None:
        extra["MSG_TYPE"] = msg_type
    cls = _namedtuple(name, fields, text, registry.module, **extra)
    registry.specs.append(MessageSpec(cls, name, type_name, header, direction,
                                      aux_length if header is not None else 0,
                                      variants, current, msg_type, doc.strip()))
    return cls


def _kind(item) -> object:
    """What must agree between variants: a record block's class and grouping, a field's type."""
    if isinstance(item, Records):
        return (item.record, item.group)
    return item.python_type
