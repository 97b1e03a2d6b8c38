"""``python3 -m morai_bridge.selftest ...`` runs morai_check_signs."""
import sys

from .check_signs_cli import main

sys.exit(main())
