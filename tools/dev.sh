#!/usr/bin/env bash
# One entry point for setting up, building, demoing and testing the package.
#
#   bash tools/dev.sh demo     set up (if needed), build, run the live demo
#   bash tools/dev.sh test     set up (if needed), build, run every test layer
#   bash tools/dev.sh setup    install missing system packages only
#   bash tools/dev.sh build    setup + catkin build of the workspace (see WS below)
#   bash tools/dev.sh env      print the lines to source in a shell to use the build
#   bash tools/dev.sh regen    build, then write every generated file anew (launch files, doc tables,
#                              docs/codec.md: tools/gen_launch.py all); a test fails while one is stale
#   bash tools/dev.sh snapshot view.png [demo args]   build, run the demo on a virtual screen with RViz,
#                              write its picture (tools/rviz_snapshot.py --demo; no display needed)
#   bash tools/dev.sh install-check   catkin_make install in a fresh workspace, then the demo
#                              and a rostest with only install/setup.bash (also a test layer)
#
# Works on Debian 12 (ROS 1 from Debian's own packages) and on Ubuntu 20.04 with
# ROS Noetic in /opt/ros/noetic.  All ROS work runs on /usr/bin/python3, whatever
# python3 comes first on the caller's PATH.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The catkin workspace lives outside the package directory: rosrun searches the
# package directory for executables, and a workspace inside it would make every
# node name ambiguous.  One workspace per checkout (keyed by its path); override
# with MORAI_WS.  Logs and test results stay in the checkout's git-ignored .ws/.
# MORAI_MSGS_SET=2022|2024|2026 builds that morai_msgs message set (CMakeLists.txt; docs/versions.md),
# in a workspace of its own; unset: the package's default set.
MSG_SET="${MORAI_MSGS_SET:-}"
MSG_SETS="$(sed -n 's/^set(MORAI_MSGS_SETS \(.*\))$/\1/p' "$ROOT/CMakeLists.txt")"     # the sets CMakeLists.txt knows
[ -z "$MSG_SET" ] || case " $MSG_SETS " in *" $MSG_SET "*) ;; *) echo "[dev.sh] error: MORAI_MSGS_SET=$MSG_SET: not a message set ($MSG_SETS)" >&2; exit 2 ;; esac
WS="${MORAI_WS:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/morai_msgs/ws-$(printf '%s' "$ROOT" | md5sum | cut -c1-10)${MSG_SET:+-set$MSG_SET}}"
export MORAI_WS="$WS"
PY=/usr/bin/python3
# A pyenv/conda python3 first on PATH cannot import Debian's ROS modules.
export PATH="/usr/bin:/bin:/usr/sbin:/sbin:$PATH"
export PYTHONDONTWRITEBYTECODE=1
unset PYTHONPATH PYTHONHOME || true

log() { printf '[dev.sh] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else die "need root to run: $* (install sudo or run as root)"; fi
}

noetic() { [ -f /opt/ros/noetic/setup.bash ]; }

# Noetic names for what tools/deb-packages.txt lists for Debian: packages.ros.org's ros-noetic-*
# and the Ubuntu 20.04 (focal) archive; where each name was checked: docs/noetic.md.  Everything
# comes from apt, as on Debian: focal's python3-dpkt is 1.9.2, which the capture reader supports
# (wire/capture.py reads the headers itself), so no pip fallback is needed.  Ubuntu 20.04's
# /usr/bin/python3 is 3.8: the py38 test layer makes its virtual environment with it (python3-venv).
# ros-noetic-rviz and xvfb are for the screenshot rostest; package.xml does not declare rviz, so a
# vehicle PC installing with rosdep gets no GUI packages (docs/noetic.md).
NOETIC_PKGS="ros-noetic-ros-base ros-noetic-rostest ros-noetic-rosbag ros-noetic-geometry-msgs
ros-noetic-sensor-msgs ros-noetic-nav-msgs ros-noetic-diagnostic-msgs ros-noetic-diagnostic-updater
ros-noetic-tf2-ros ros-noetic-tf2-msgs ros-noetic-rosgraph-msgs ros-noetic-visualization-msgs
ros-noetic-diagnostic-aggregator ros-noetic-rviz catkin-lint
python3-serial python3-dpkt python3-nmea2 python3-yaml python3-psutil python3-pytest python3-hypothesis
python3-pil python3-numpy python3-venv xvfb build-essential cmake git ca-certificates iproute2"

cmd_setup() {
  local wanted missing=()
  if noetic; then
    wanted="$NOETIC_PKGS"
  else
    wanted="$(sed -e 's/#.*//' "$ROOT/tools/deb-packages.txt" | xargs)"
  fi
  for p in $wanted; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' && continue
    missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    log "installing ${#missing[@]} missing packages: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
  [ -x "$PY" ] || die "$PY not found"
}

source_ros() {
  # ROS setup scripts read unset variables; relax nounset while sourcing.
  set +u
  if noetic; then source /opt/ros/noetic/setup.bash; fi
  if [ -f "$WS/devel/setup.bash" ]; then source "$WS/devel/setup.bash"; fi
  set -u
}

cmd_build() {
  cmd_setup
  mkdir -p "$WS/src" "$ROOT/.ws"
  ln -sfn "$ROOT" "$WS/src/morai_msgs"
  source_ros
  log "building the catkin workspace in $WS${MSG_SET:+ (message set $MSG_SET)} (log: .ws/build.log)"
  if ! (cd "$WS" && catkin_make -DPYTHON_EXECUTABLE="$PY" -DCATKIN_ENABLE_TESTING=ON -DMORAI_MSGS_SET="$MSG_SET" \
        >"$ROOT/.ws/build.log" 2>&1); then
    tail -n 40 "$ROOT/.ws/build.log" >&2
    die "catkin_make failed (full log: .ws/build.log)"
  fi
  source_ros
}

cmd_env() {
  echo "export PATH=/usr/bin:\$PATH"
  if noetic; then echo "source /opt/ros/noetic/setup.bash"; fi
  echo "export MORAI_WS=$WS"
  echo "source $WS/devel/setup.bash"
}

# `bash tools/dev.sh demo --help`: the demo's arguments, read from launch/demo.launch (every user-facing
# <arg> is one line there: name, default, doc), with no setup, build or ROS: a fresh machine can ask.
demo_help() {
  printf 'usage: bash tools/dev.sh demo [NAME:=VALUE ...]\n'
  printf '       (in a sourced shell: roslaunch morai_msgs demo.launch [NAME:=VALUE ...])\n\n'
  printf 'Sets up and builds what is missing, then starts launch/demo.launch: the MORAI simulator emulator,\n'
  printf 'the UDP bridge and an example driver. Its arguments (default, then what it does):\n\n'
  sed -n 's|^ *<arg name="\([^"]*\)" default="\([^"]*\)" doc="\([^"]*\)".*|\1\t\2\t\3|p' \
      "$ROOT/launch/demo.launch" | while IFS=$'\t' read -r name default doc; do
    printf '  %s:=%s\n' "$name" "$default"
    printf '%s\n' "$doc" | fold -s -w 92 | sed 's/ *$//; s/^/      /'
  done
  printf '\nThe message set is chosen at build time: MORAI_MSGS_SET=2022|2024|2026 bash tools/dev.sh demo\n'
}

cmd_demo() {
  for a in "$@"; do case "$a" in -h|--help) demo_help; exit 0 ;; esac; done
  cmd_build
  exec bash "$ROOT/tools/demo.sh" "$@"
}

cmd_test() {
  cmd_build
  exec "$PY" "$ROOT/tools/run_tests.py" "$@"
}

cmd_snapshot() {
  cmd_build
  [ $# -gt 0 ] || die "usage: bash tools/dev.sh snapshot OUT.png [NAME:=VALUE ...] (demo.launch arguments)"
  exec "$PY" "$ROOT/tools/rviz_snapshot.py" --demo "$@"
}

cmd_regen() {
  cmd_build
  set +u
  if noetic; then source /opt/ros/noetic/setup.bash; fi
  source "$WS/devel/setup.bash"
  set -u
  exec "$PY" "$ROOT/tools/gen_launch.py" all
}

cmd_install_check() {
  # its own fresh workspace and a clean environment: no build of $WS needed
  cmd_setup
  exec "$PY" "$ROOT/test/install/install_check.py"
}

case "${1:-}" in
  -h|--help) sed -n '2,/^\([^#]\|$\)/s/^# \{0,1\}//p' "$0"; exit 0 ;;
  setup) cmd_setup ;;
  build) cmd_build ;;
  env)   cmd_env ;;
  demo)  shift; cmd_demo "$@" ;;
  test)  shift; cmd_test "$@" ;;
  snapshot) shift; cmd_snapshot "$@" ;;
  install-check) cmd_install_check ;;
  regen) cmd_regen ;;
  *) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
