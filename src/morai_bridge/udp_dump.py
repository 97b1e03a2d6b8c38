"""Compatibility name of the dump tool; the code is in :mod:`morai_bridge.dump`.

``from morai_bridge.udp_dump import main, Dumper, EXIT_*`` keeps working.
"""
import sys

from morai_bridge.dump import EXIT_DECODE_ERRORS, EXIT_OK, EXIT_USAGE, Dumper, main

__all__ = ["main", "Dumper", "EXIT_OK", "EXIT_DECODE_ERRORS", "EXIT_USAGE"]

if __name__ == "__main__":
    sys.exit(main())
