"""``--json`` output: one JSON object per line (docs/udp_dump.md, "--json").

Every record has ``kind`` (``message``, ``error``, ``not_morai``, ``summary``);
per-datagram records also ``ts``, ``time``, ``src``, ``dst``, ``size``, ``type``.
:func:`jsonable` turns decoded messages into plain JSON data.  No ROS, no I/O.
"""

import json
import math

__all__ = ["jsonable", "text", "line", "datagram_record", "summary_record"]


def jsonable(value):
    """``value`` as JSON-serialisable data: records -> objects, tuples -> lists,
    bytes -> hex text, dates/times -> ISO text, NaN/inf -> "NaN"/"Infinity"/"-Infinity"."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {k: jsonable(v) for k, v in zip(value._fields, value)}
    if isinstance(value, (tuple, list)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def datagram_record(kind, ts, time_text, src, dst, payload, type_name):
    """The fields every per-datagram record starts with."""
    return {"kind": kind, "ts": ts, "time": time_text, "src": src, "dst": dst,
            "size": len(payload), "type": type_name}


def text(record) -> str:
    """A record as one line of JSON (without the newline)."""
    return json.dumps(record)


def line(record) -> str:
    """A record as one output line (with its newline)."""
    return json.dumps(record) + "\n"


def summary_record(counts, *, source, seconds, reader_counts, filtered, interrupted):
    """The last line: the counts of a :class:`~.dumper.Dumper` (``counts``)."""
    return {
        "kind": "summary", "source": source, "interrupted": interrupted,
        "datagrams": counts.datagrams, "seconds": seconds,
        "messages": sum(counts.types.values()), "types": dict(counts.types),
        "gps_sentences": dict(counts.gps_sentences),
        "decode_errors": counts.error_count, "errors": dict(counts.errors),
        "data_length_mismatches": sum(counts.mismatches.values()),
        "mismatches": dict(counts.mismatches),
        "truncated": sum(counts.truncated.values()),
        "truncated_types": dict(counts.truncated),
        "not_morai": sum(counts.not_morai.values()),
        "not_morai_ports": {str(k): v for k, v in counts.not_morai.items()},
        "filtered_out": filtered,
        "capture": dict(reader_counts) if reader_counts is not None else None,
        "exit_status": counts.exit_status,
    }
