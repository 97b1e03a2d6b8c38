#!/usr/bin/env bash
# Every benchmark in one run (docs/benchmarks.md): codec, end to end through the
# udp_bridge node next to a rospy floor at 30/60/120 Hz, ERP-42 command cadence.
# Builds the workspace and sets up the environment itself; options go to
# bench/run.py (--quick, --seconds S, --rates 30,60,120, --erp42-seconds S, --only ..., --base REV).
# Raw figures: bench/out/latest.json.  Takes about 9 minutes (12 with --base REV); options also --reps N.
set -euo pipefail
# -h / --help: the comment block above, before anything is done
case "${1:-}" in -h|--help) sed -n '2,/^\([^#]\|$\)/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;; esac
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/tools/dev.sh" build >&2
set +u
# shellcheck disable=SC1090
source <(bash "$ROOT/tools/dev.sh" env)
set -u
exec /usr/bin/python3 "$ROOT/bench/run.py" "$@"
