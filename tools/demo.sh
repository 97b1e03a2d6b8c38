#!/usr/bin/env bash
# The main job, run by `bash tools/dev.sh demo` once the workspace is built and
# sourced.  While the bridge and emulator nodes are being built this prints the
# installed morai_msgs interface with the md5 of every type.
set -euo pipefail
echo "morai_msgs interface (type  md5):"
for t in $(rosmsg list | grep '^morai_msgs/'); do printf '  %-40s %s\n' "$t" "$(rosmsg md5 "$t")"; done
for t in $(rossrv list | grep '^morai_msgs/'); do printf '  %-40s %s\n' "$t" "$(rossrv md5 "$t")"; done
