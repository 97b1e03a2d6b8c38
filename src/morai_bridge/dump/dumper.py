"""The dumper: decode each datagram, print it, count it; the end-of-run summary.

:class:`Dumper` gets datagrams from a source (:mod:`.sources`) through
:meth:`Dumper.handle` and writes text (:mod:`.formatters`) or JSON lines
(:mod:`.jsonout`).  What counts as MORAI: :func:`looks_morai`; how decode
errors are grouped: :func:`error_key`.  No ROS.
"""

import datetime
import re
from collections import Counter

from morai_bridge.wire import udp
from morai_bridge.wire.capture import PORT_FILTER_HINT, TruncatedPayload

from . import jsonout
from .formatters import hexdump, summarize, verbose_lines

__all__ = ["Dumper", "looks_morai", "error_key", "mismatch_key", "PROG", "EXIT_OK", "EXIT_DECODE_ERRORS",
           "EXIT_USAGE"]

PROG = "morai_udp_dump"
EXIT_OK, EXIT_DECODE_ERRORS, EXIT_USAGE = 0, 1, 2

# ----------------------------------------------------------------------------- classification

def looks_morai(payload: bytes) -> bool:
    """Whether a datagram that failed to decode was meant to be MORAI.

    ``#NAME$`` framing (a '$' within the first 32 bytes), NMEA text starting
    with '$', or a ground-vehicle command msg_type.  Everything else (SSDP,
    DHCP, ...) is "not MORAI".
    """
    if not payload:
        return False
    if payload[0] == 0x23:
        return payload.find(b"$", 1, 32) > 0
    if payload[0] == 0x24:
        return True
    return udp.classify(payload) is not None


_NMEA_ID = re.compile(rb"\$([A-Z0-9]{1,8})[,*]")


def error_key(err: "udp.DecodeError", payload: bytes) -> str:
    """Header and reason of a decode error, for counting (no per-datagram details)."""
    header = err.header
    if header is not None:
        name = header.decode("ascii", "backslashreplace")
        if header not in udp.HEADERS:
            return f"{name} unknown header"
        dl = err.data_length
        if dl is None:
            return f"{name} truncated before data_length"
        if not err.expected:
            return f"{name} unsupported data_length {dl}"
        want = "/".join(map(str, err.expected))
        if err.length not in err.expected:
            return f"{name} data_length {dl}: {err.length} B, expected {want} B"
        return f"{name} data_length {dl}: no CR LF tail"
    text = str(err).split("; received")[0]
    if payload[:1] == b"$":
        found = _NMEA_ID.match(payload)
        ident = "$" + found.group(1).decode() if found else "$?"
        text = text[len("NMEA: "):] if text.startswith("NMEA: ") else text
        if "checksum does not match" in text:
            text = "checksum does not match"
        return f"NMEA {ident}: {text[:80]}"
    return text[:100]


def mismatch_key(warning: "udp.DataLengthMismatch") -> str:
    """A data_length mismatch (decoded by the datagram's length), for counting."""
    return (f"{warning.header.decode('ascii', 'backslashreplace')} data_length "
            f"{warning.data_length}, expected {warning.expected} ({warning.length} B, "
            f"{warning.type_name})")


# ----------------------------------------------------------------------------- dumper

def _addr(endpoint):
    return f"{endpoint[0]}:{endpoint[1]}"


class Dumper:
    """Decodes datagrams, prints them and keeps the counts for the summary."""

    def __init__(self, write, *, verbose=False, as_json=False, hexdump=False,
                 all_udp=False, utc=False, quiet=False, note=None):
        self.write = write
        self.note = note                # one-time notes (stderr), e.g. the capture filter hint
        self.verbose = verbose
        self.as_json = as_json
        self.hex = hexdump
        self.all_udp = all_udp
        self.utc = utc
        self.quiet = quiet
        self.datagrams = 0
        self.types = Counter()          # type name -> messages
        self.type_ports = {}            # type name -> Counter of (src port, dst port)
        self.gps_sentences = Counter()  # 'GGA' -> n
        self.errors = Counter()         # error key -> n
        self.error_count = 0
        self.mismatches = Counter()     # data_length mismatch key -> n (decoded by length)
        self.truncated = Counter()      # type name -> datagrams cut by the capture (first fragment)
        self.not_morai = Counter()      # dst port -> n
        self.first_ts = None
        self.last_ts = None
        self.ego_pos = None             # (x, y) of the latest ego status, for object distances
        self._tcache = (None, "")

    # -- time
    def time_text(self, ts):
        usec = round(ts * 1e6)  # capture times are whole microseconds: no 0.5599999 -> .559
        sec, ms = usec // 1_000_000, usec // 1000 % 1000
        if self._tcache[0] != sec:
            if self.utc:
                dt = datetime.datetime.fromtimestamp(sec, datetime.timezone.utc)
            else:
                dt = datetime.datetime.fromtimestamp(sec)
            self._tcache = (sec, dt.strftime("%Y-%m-%d %H:%M:%S"))
        return f"{self._tcache[1]}.{ms:03d}" + ("Z" if self.utc else "")

    # -- one datagram
    def handle(self, ts, src, dst, payload):
        self.datagrams += 1
        if self.first_ts is None:
            self.first_ts = ts
        self.last_ts = ts
        if type(payload) is TruncatedPayload:
            self._truncated(ts, src, dst, payload)
            return
        try:
            msg, warning = udp.decode_tolerant(payload)
        except udp.DecodeError as err:
            if looks_morai(payload):
                self._error(ts, src, dst, payload, err)
            else:
                self.not_morai[dst[1]] += 1
                if self.all_udp and not self.quiet:
                    self._other(ts, src, dst, payload)
            return
        self._message(ts, src, dst, payload, msg, warning)

    def _truncated(self, ts, src, dst, payload):
        """A datagram the capture holds only the start of (its first IP fragment)."""
        try:
            msg, read, total = udp.decode_truncated(payload, payload.full_length)
        except udp.DecodeError as err:
            if looks_morai(payload):
                self._error(ts, src, dst, payload, err)
            else:
                self.not_morai[dst[1]] += 1
            return
        if not self.truncated and self.note is not None:
            self.note(f"{PROG}: note: {PORT_FILTER_HINT}; decoding the records the first "
                      f"fragments hold (marked TRUNCATED)\n")
        self.truncated[msg.TYPE_NAME] += 1
        self._message(ts, src, dst, payload, msg, cut=(len(payload), payload.full_length,
                                                       read, total))

    def _message(self, ts, src, dst, payload, msg, warning=None, cut=None):
        name = msg.TYPE_NAME
        marker = ""
        if warning is not None:
            self.mismatches[mismatch_key(warning)] += 1
            marker = f"[data_length {warning.data_length}, expected {warning.expected}] "
        if cut is not None:
            marker = (f"[TRUNCATED by the capture: {cut[0]} of {cut[1]} B, "
                      f"slots {cut[2]}/{cut[3]} read] ")
        self.types[name] += 1
        ports = self.type_ports.get(name)
        if ports is None:
            ports = self.type_ports[name] = Counter()
        ports[(src[1], dst[1])] += 1
        if name == "ego_status":
            self.ego_pos = (msg.pos_x, msg.pos_y)
        elif name == "gps_nmea":
            self.gps_sentences[msg.talker + msg.sentence_type] += 1
        if self.quiet:
            return
        if self.as_json:
            record = self._json_head("message", ts, src, dst, payload, name)
            record["class"] = type(msg).__name__
            if warning is not None:
                record["warning"] = str(warning)
                record["data_length_received"] = warning.data_length
            if cut is not None:
                record["truncated"] = {"captured": cut[0], "length": cut[1],
                                       "slots_read": cut[2], "slots": cut[3]}
            record["msg"] = jsonout.jsonable(msg)
            if self.hex and self.verbose:
                record["hex"] = payload.hex()
            self.write(jsonout.line(record))
            return
        line = f"{self._head(ts, src, dst, payload)}  {name:<21} {marker}{summarize(msg, self)}\n"
        if self.verbose:
            line += "\n".join(verbose_lines(msg)) + "\n"
            if self.hex:
                line += "\n".join(hexdump(payload)) + "\n"
        self.write(line)

    def _head(self, ts, src, dst, payload):
        return (f"{self.time_text(ts)}  {_addr(src):>21} -> {_addr(dst):<21} "
                f"{len(payload):>5} B")

    def _json_head(self, kind, ts, src, dst, payload, type_name):
        return jsonout.datagram_record(kind, ts, self.time_text(ts), _addr(src), _addr(dst),
                                       payload, type_name)

    def _error(self, ts, src, dst, payload, err):
        self.error_count += 1
        self.errors[error_key(err, payload)] += 1
        if self.quiet:
            return
        guess = udp.classify(payload)
        if self.as_json:
            record = self._json_head("error", ts, src, dst, payload, guess)
            record["error"] = str(err)
            record["error_count"] = self.error_count
            if self.hex:
                record["hex"] = payload.hex()
            self.write(jsonout.line(record))
            return
        label = guess or (err.header.decode("ascii", "backslashreplace") if err.header
                          else "?")
        line = (f"{self._head(ts, src, dst, payload)}  DECODE ERROR #{self.error_count} "
                f"({label}): {err}\n")
        if self.hex:
            line += "\n".join(hexdump(payload)) + "\n"
        self.write(line)

    def _other(self, ts, src, dst, payload):
        if self.as_json:
            record = self._json_head("not_morai", ts, src, dst, payload, None)
            record["preview"] = payload[:48].decode("latin-1")
            if self.hex:
                record["hex"] = payload.hex()
            self.write(jsonout.line(record))
            return
        line = f"{self._head(ts, src, dst, payload)}  (not MORAI)           {payload[:40]!r}\n"
        if self.hex:
            line += "\n".join(hexdump(payload)) + "\n"
        self.write(line)

    # -- end
    @property
    def exit_status(self):
        return EXIT_DECODE_ERRORS if self.error_count else EXIT_OK

    def summary(self, *, source, reader_counts=None, filtered=0, interrupted=False):
        """The end-of-run summary: text lines, or one JSON object with --json."""
        span = (self.last_ts - self.first_ts) if self.first_ts is not None else 0.0
        if self.as_json:
            return [jsonout.text(jsonout.summary_record(
                self, source=source, seconds=span, reader_counts=reader_counts,
                filtered=filtered, interrupted=interrupted))]
        lines = [f"--- {PROG} summary: {source}" + (" (interrupted)" if interrupted else "")]
        lines.append(f"datagrams: {self.datagrams} in {span:.3f} s")
        lines.append(f"MORAI messages: {sum(self.types.values())}")
        for name, n in self.types.items():
            pairs = self.type_ports[name].most_common()
            ports = ", ".join(f"{s}->{d}" for (s, d), _ in pairs[:3])
            ports += ", ..." if len(pairs) > 3 else ""
            extra = ""
            if name == "gps_nmea" and self.gps_sentences:
                extra = "  (" + ", ".join(f"{k} {v}" for k, v in
                                          sorted(self.gps_sentences.items())) + ")"
            lines.append(f"  {name:<22} {n:>7}  ports {ports}{extra}")
        if self.mismatches:
            lines.append(f"decoded despite an unexpected data_length (warnings): "
                         f"{sum(self.mismatches.values())}")
            for key, n in self.mismatches.most_common():
                lines.append(f"  {n:>7}  {key}")
        if self.truncated:
            lines.append(f"truncated by the capture (first IP fragment only, records of the "
                         f"first slots decoded): {sum(self.truncated.values())} ("
                         + ", ".join(f"{k} {v}" for k, v in self.truncated.items()) + ")")
            lines.append(f"  note: {PORT_FILTER_HINT}")
        lines.append(f"decode errors: {self.error_count}")
        for key, n in self.errors.most_common():
            lines.append(f"  {n:>7}  {key}")
        other = sum(self.not_morai.values())
        text = f"not MORAI: {other}"
        if other:
            ports = ", ".join(f"{p}: {n}" for p, n in self.not_morai.most_common(6))
            ports += ", ..." if len(self.not_morai) > 6 else ""
            text += f" (dst port {ports})" + ("" if self.all_udp else "; shown with --all-udp")
        lines.append(text)
        if filtered:
            lines.append(f"filtered out by --port: {filtered}")
        if reader_counts is not None:
            order = ("frames", "datagrams", "fragments", "reassembled", "fragments_dropped",
                     "partial", "non_ipv4", "non_udp", "undecodable", "truncated",
                     "truncated_file")
            keys = [k for k in order if reader_counts.get(k)] + \
                sorted(k for k in reader_counts if k not in order and reader_counts[k])
            lines.append("capture reader: " + (", ".join(f"{k} {reader_counts[k]}"
                                                         for k in keys) or "nothing read"))
        lines.append(f"exit status {self.exit_status}"
                     + (" (decode errors)" if self.error_count else ""))
        return lines

