#!/usr/bin/env bash
# Soak run: emulator + bridge + serial driver at full rate, RSS and counters every minute.
#   bash tools/soak.sh [minutes]      (default 10; not part of the test suite)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/tools/dev.sh" build
set +u
source <(bash "$ROOT/tools/dev.sh" env)
set -u
exec /usr/bin/python3 "$ROOT/tools/soak.py" "$@"
