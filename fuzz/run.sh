#!/usr/bin/env bash
# Long fuzzing run (not part of the test suite): atheris from PyPI in a venv of
# its own (.ws/fuzzenv, on top of Debian's python3 packages).
#   bash fuzz/run.sh [target] [inputs]     targets: udp lockstep erp42_feedback erp42_command
#                                          camera boxes velodyne lidar2d
set -euo pipefail
# -h / --help: the comment block above, before anything is done
case "${1:-}" in -h|--help) sed -n '2,/^\([^#]\|$\)/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;; esac
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="/usr/bin:/bin:/usr/sbin:/sbin:$PATH"
VENV="$ROOT/.ws/fuzzenv"
if ! dpkg-query -W -f='${Status}' python3-venv 2>/dev/null | grep -q 'install ok installed'; then
  if [ "$(id -u)" -eq 0 ]; then apt-get update -q >/dev/null && apt-get install -y -q python3-venv >/dev/null
  else sudo apt-get update -q >/dev/null && sudo apt-get install -y -q python3-venv >/dev/null; fi
fi
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import atheris' 2>/dev/null; then
  mkdir -p "$ROOT/.ws"
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
  "$VENV/bin/pip" install -q atheris
fi
targets="${1:-udp lockstep erp42_feedback erp42_command camera boxes velodyne lidar2d}"
runs="${2:-1000000}"
for t in $targets; do
  echo "=== fuzzing $t: $runs inputs ==="
  start=$(date +%s)
  log="$ROOT/.ws/fuzz-$t.log"
  set +e
  "$VENV/bin/python" "$ROOT/fuzz/run.py" "$t" "$runs" "${@:3}" > "$log" 2>&1
  rc=$?
  set -e
  grep -E 'stat::|Done|ERROR|crash|Traceback|AssertionError' "$log" || true
  echo "=== $t: exit $rc after $(( $(date +%s) - start )) s ==="
  [ "$rc" -eq 0 ] || exit "$rc"
done
echo "fuzzing: no finding"
