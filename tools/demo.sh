#!/usr/bin/env bash
# The main job, run by `bash tools/dev.sh demo` once the workspace is built and
# sourced: the simulator emulator, the UDP bridge and an example driver
# (launch/demo.launch).  Extra arguments go to roslaunch (e.g. speed_kmh:=30).
set -euo pipefail
# -h / --help: the comment block above, before anything is done
case "${1:-}" in -h|--help) sed -n '2,/^\([^#]\|$\)/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;; esac
cat <<'TXT'
Starting the demo (launch/demo.launch): MORAI simulator emulator + udp_bridge + example driver.
In another terminal:
    source <(bash tools/dev.sh env)
    rostopic hz /Ego_topic            # ~50 Hz
    rostopic echo /Ego_topic          # the ego drives a 20 m circle at 20 km/h
    rostopic echo /Object_topic       # NPCs, pedestrians, obstacles, nearest first
    rostopic echo /diagnostics        # per-stream rates and errors
Ctrl-C stops everything.
TXT
exec roslaunch morai_msgs demo.launch "$@"
