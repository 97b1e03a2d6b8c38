"""Declarative building blocks for '#NAME$'-framed UDP layouts.

A message layout is *data*: an ordered table of :class:`Field` rows (name, struct
code, unit/meaning) per size variant.  :func:`define_message` turns those tables
into an immutable :class:`typing.NamedTuple` class (fields, defaults, typed
annotations and a generated docstring listing units) and appends a
:class:`MessageSpec` to a :class:`Registry`.  :class:`~.udp_protocol.Protocol`
compiles a registry into ``struct.Struct`` objects once at import.

Two registries exist: :data:`MORAI` (the simulator's messages,
:mod:`.udp_layouts`, public API :mod:`.udp`; the default) and the emulator's
lock-step extension (:mod:`.lockstep`).

Nothing here touches bytes at run time, and nothing imports ROS.
"""

import struct
import types
import typing
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

#: Module the MORAI classes claim to live in (the public API module), so that
#: their ``repr`` and pickling refer to ``morai_bridge.wire.udp.<Name>``.
PUBLIC_MODULE = "morai_bridge.wire.udp"

# Text padding policies for fixed-width ``Ns`` fields.
PAD_NUL = "nul"        # pad with NUL bytes (what the simulator sends)
PAD_SPACE = "space"    # pad with spaces (what the official examples send)
PAD_DOLLAR = "dollar"  # text, then '$', then NUL bytes (SimControl / SimStatus)

_INT_CODES = frozenset("bBhHiIlLqQ")
_FLOAT_CODES = frozenset("fd")


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
    def n_items(self) -> int:
        """Number of values this field contributes to a ``struct`` tuple."""
        return 1 if self.is_text else self.count


class Records(NamedTuple):
    """A fixed block of ``count`` records of one layout inside a payload."""

    attr: str                     # name of the tuple-of-records field in the message
    record: type                  # generated record class
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
    """Build Field rows from plain tuples; ``pad`` applies to every text field."""
    out = []
    for row in rows:
        f = Field(*row)
        if f.is_text and not f.pad:
            if not pad:
                raise ValueError(f"text field {f.name} needs a padding policy")
            f = f._replace(pad=pad)
        out.append(f)
    return tuple(out)


def _python_type(f: Field):
    letter = f.letter
    if letter == "s":
        base = str
    elif letter == "?":
        base = bool
    elif letter in _INT_CODES:
        base = int
    elif letter in _FLOAT_CODES:
        base = float
    else:  # pragma: no cover - table error
        raise ValueError(f"unsupported struct code {f.code!r} for {f.name}")
    if f.is_array:
        return Tuple[(base,) * f.count]
    return base


def zero_value(f: Field):
    """The value an all-zero wire field decodes to."""
    t = _python_type(f)
    if f.is_array:
        return (0.0 if f.letter in _FLOAT_CODES else 0,) * f.count
    return {str: "", bool: False, int: 0, float: 0.0}[t]


def default_value(f: Field):
    """The field's declared default, else its zero value."""
    return zero_value(f) if f.default is None else f.default


class Registry:
    """An ordered list of :class:`MessageSpec` that one Protocol compiles.

    ``module`` is the public module the generated classes claim to live in;
    ``data_length_field``: whether '#'-framed classes get a ``data_length`` field
    that selects the variant (MORAI) or not (one variant per message).
    """

    def __init__(self, module: str, data_length_field: bool = True):
        self.module = module
        self.data_length_field = data_length_field
        self.specs: List["MessageSpec"] = []

    def __iter__(self):
        return iter(self.specs)

    def __len__(self):
        return len(self.specs)

    def __repr__(self):
        return f"Registry({self.module!r}, {len(self.specs)} messages)"


def _new_namedtuple(name: str, fields: List[Tuple[str, object, object]], doc: str,
                    extra: Dict[str, object], module: str) -> type:
    """Create a typing.NamedTuple class from (name, annotation, default) triples."""

    def body(ns):
        ns["__annotations__"] = {n: ann for n, ann, _ in fields}
        ns.update({n: default for n, _, default in fields})
        ns["__doc__"] = doc
        ns["__module__"] = module
        ns.update(extra)

    cls = types.new_class(name, (typing.NamedTuple,), {}, body)
    # Python 3.8's NamedTupleMeta skips ns["__module__"] (the class then claims to live in
    # 'types', and pickling an instance fails); 3.9+ honour it.  Set it on the class itself.
    cls.__module__ = module
    return cls


def _unit_lines(fields: Sequence[Field], where: Dict[str, List[str]]) -> List[str]:
    lines = []
    for f in fields:
        w = where.get(f.name)
        suffix = f"  [only data_length {', '.join(w)}]" if w else ""
        lines.append(f"    {f.name} ({f.code}): {f.unit}{_default_text(f)}{suffix}")
    return lines


def _default_text(f: Field) -> str:
    return "" if f.default is None else f" (default {f.default!r})"


#: The MORAI simulator's messages (:mod:`.udp_layouts`), the default registry.
MORAI = Registry(PUBLIC_MODULE)

#: Every MORAI message spec, in declaration order (the list of :data:`MORAI`).
SPECS: List[MessageSpec] = MORAI.specs


def define_record(name: str, doc: str, fields: Sequence[Field],
                  registry: Registry = MORAI) -> type:
    """Create the class of one array record (e.g. one object of Object Info)."""
    members = [(f.name, _python_type(f), default_value(f)) for f in fields]
    text = "\n".join([doc, "", "Fields (struct code: unit / meaning):"]
                     + _unit_lines(fields, {}))
    cls = _new_namedtuple(name, members, text, {}, registry.module)
    cls._layout = tuple(fields)  # the declaring layout, for docs and strategies
    return cls


def define_message(name: str, type_name: str, header: Optional[bytes], direction: str,
                   doc: str, variants: Sequence[Variant], current: Optional[int],
                   aux_length: int = 12, msg_type: Optional[int] = None,
                   order: Optional[Sequence[str]] = None,
                   registry: Registry = MORAI) -> type:
    """Create a message class from its variant tables and append its spec to ``registry``.

    Class fields: the fields of the *current* variant in wire order, then fields
    that only other variants carry (in order of appearance), then ``data_length``
    (text framing, when the registry has that field).  Defaults: the field's
    ``default`` (zero unless declared) for fields of the current variant, None
    for fields the current variant does not carry, ``data_length`` = current.
    ``order`` overrides the field order (binary messages put payload first).
    """
    variants = tuple(variants)
    by_len = {v.data_length: v for v in variants}
    if current not in by_len:
        raise ValueError(f"{name}: current variant {current} not declared")

    # Ordered union of stored members: plain fields and record-list attributes.
    def members(v: Variant) -> List[Tuple[str, object]]:
        out = [(f.name, f) for f in v.fields if f.const is None]
        if v.records is not None:
            out.append((v.records.attr, v.records))
        return out

    seen: Dict[str, object] = {}
    present_in: Dict[str, List[int]] = {}
    for v in (by_len[current],) + tuple(x for x in variants if x.data_length != current):
        for mname, item in members(v):
            present_in.setdefault(mname, []).append(v.data_length)
            if mname not in seen:
                seen[mname] = item
            else:
                _check_compatible(name, mname, seen[mname], item)
    names = list(seen)
    if order is not None:
        if sorted(order) != sorted(names):
            raise ValueError(f"{name}: order {order} does not match fields {names}")
        names = list(order)

    current_members = {m for m, _ in members(by_len[current])}
    fields: List[Tuple[str, object, object]] = []
    for mname in names:
        item = seen[mname]
        if isinstance(item, Records):
            rec_t = item.record
            ann = Tuple[Tuple[rec_t, ...], ...] if item.group > 1 else Tuple[rec_t, ...]
            default: object = ()
        else:
            ann = _python_type(item)
            default = default_value(item)
        if mname not in current_members:
            ann, default = Optional[ann], None
        fields.append((mname, ann, default))
    has_dl = header is not None and registry.data_length_field
    if has_dl:
        fields.append(("data_length", int, current))

    # Generated docstring: header, variants, fields with units.
    all_lengths = [str(v.data_length) for v in variants]
    where = {m: [str(x) for x in present_in[m]] for m in names
             if len(present_in[m]) != len(variants)}
    lines = [doc.strip(), ""]
    if header is not None:
        lines.append(f"Header {header.decode()!r}, {direction}.  Variants (data_length):")
        for v in variants:
            mark = " (current)" if v.data_length == current else ""
            lines.append(f"    {v.data_length}{mark}: {v.note}")
    else:
        lines.append(f"Binary 33-byte header, msg_type {msg_type}, {direction}.")
    lines.append("")
    lines.append("Fields (struct code: unit / meaning):")
    flat: Dict[str, Field] = {}
    for v in variants:
        for f in v.fields:
            if f.const is None:
                flat.setdefault(f.name, f)
    for mname in names:
        item = seen[mname]
        suffix = f"  [only data_length {', '.join(where[mname])}]" if mname in where else ""
        if isinstance(item, Records):
            kind = "pairs of " if item.group > 1 else ""
            lines.append(f"    {mname}: tuple of {kind}{item.record.__name__} "
                         f"(occupied slots only, wire order; {item.count} slots){suffix}")
        else:
            lines.append(f"    {mname} ({flat[mname].code}): {flat[mname].unit}"
                         f"{_default_text(flat[mname])}{suffix}")
    if has_dl:
        lines.append("    data_length: selects the variant to encode; one of "
                     + ", ".join(all_lengths))

    extra = {"TYPE_NAME": type_name, "HEADER": header,
             "DATA_LENGTHS": tuple(v.data_length for v in variants),
             "CURRENT_DATA_LENGTH": current}
    if msg_type is not None:
        extra["MSG_TYPE"] = msg_type
    cls = _new_namedtuple(name, fields, "\n".join(lines), extra, registry.module)
    registry.specs.append(MessageSpec(cls, name, type_name, header, direction,
                             aux_length if header is not None else 0,
                             variants, current, msg_type, doc.strip()))
    return cls


def _check_compatible(msg: str, name: str, a, b) -> None:
    if isinstance(a, Records) or isinstance(b, Records):
        if not (isinstance(a, Records) and isinstance(b, Records)
                and a.record is b.record and a.group == b.group):
            raise ValueError(f"{msg}.{name}: record blocks differ between variants")
        return
    if _python_type(a) != _python_type(b) or a.is_text != b.is_text:
        raise ValueError(f"{msg}.{name}: type differs between variants")
