#!/usr/bin/env bash
# Soak run: emulator + bridge + serial driver at full rate, RSS and counters every minute.
#   bash tools/soak.sh [minutes]      (default 10; not part of the test suite)
set -euo pipefail
# -h / --help: the comment block above, before anything is done
case "${1:-}" in -h|--help) sed -n '2,/^\([^#]\|$\)/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;; esac
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/tools/dev.sh" build
set +u
source <(bash "$ROOT/tools/dev.sh" env)
set -u
exec /usr/bin/python3 "$ROOT/tools/soak.py" "$@"
