"""morai_udp_dump: print MORAI SIM UDP datagrams, live from ports or from a capture file.

A debugging tool for the network setup between MORAI SIM and the bridge; it
needs neither ROS nor a ROS master (nothing here imports ROS).

Sources:

* ``morai_udp_dump --listen 909,7505 [--bind-ip 0.0.0.0] [--count N] [--duration S]``
  binds one UDP socket per port (numbers or stream names of
  :mod:`morai_bridge.wire.udp.streams`) and prints what arrives until Ctrl-C, N
  datagrams or S seconds.
* ``morai_udp_dump FILE [--port 909,7505] [--all-udp]`` reads a pcap/pcapng
  capture (IPv4 fragments reassembled by :mod:`morai_bridge.wire.capture`).

Every datagram is decoded with :func:`morai_bridge.wire.udp.decode`.  A datagram
that does not even look like MORAI (no ``#NAME$`` framing, no ``$`` NMEA text,
no ground-vehicle msg_type) is counted as "not MORAI" and shown only with
``--all-udp``; anything else that fails to decode is a decode error.

Modules, by job:

* :mod:`.udp_dump_cli` - its command line (Params), checks and ``main(argv=None) -> int``;
* :mod:`.sources` - a capture file, or live UDP sockets;
* :mod:`.dumper` - :class:`Dumper`: decode, print, count, summary;
* :mod:`.formatters` - one-line summary per message type, ``-v`` fields, hex dump;
* :mod:`.jsonout` - ``--json`` records.

The package also holds morai_field_report (what a simulator sends, and which version profile it
matches; docs/field_report.md): :mod:`.field_report` (its command line), :mod:`.field_listen` (ports and
listening), :mod:`.field_analysis` (the analysis), :mod:`.field_profiles` (facts and profile matching)
and :mod:`.field_text` (the report's text).

Exit status: 0 = no decode errors, 1 = at least one decode error, 2 = usage or
I/O error.  Reference: docs/udp_dump.md.
"""

from .udp_dump_cli import main
from .dumper import EXIT_DECODE_ERRORS, EXIT_OK, EXIT_USAGE, Dumper

__all__ = ["main", "Dumper", "EXIT_OK", "EXIT_DECODE_ERRORS", "EXIT_USAGE"]
