"""``python3 -m morai_bridge.selftest ...`` runs morai_check_signs."""
import sys

from .cli import main

sys.exit(main())
