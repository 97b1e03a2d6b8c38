"""``python3 -m morai_bridge.dump ...`` runs morai_udp_dump."""
import sys

from .udp_dump_cli import main

sys.exit(main())
