#!/usr/bin/env bash
# The README's two commands on a minimal Debian, as a newcomer runs them (issue 31).
#
#   sudo bash tools/fresh_debian.sh 12|13 [--user|--root] [--demo-only] [--dir DIR] [--keep]
#   sudo bash tools/fresh_debian.sh 12|13 [--dir DIR] --run 'COMMAND'
#
# 1. debootstrap --variant=minbase bookworm (12) or trixie (13) into DIR (default
#    /var/tmp/morai-fresh-<12|13>; the downloaded base is kept as DIR.base.tgz for the next run).
#    Nothing else is installed: no compiler, no make, no python3, no sudo.
# 2. Copies the host's /etc/hosts, /etc/resolv.conf and CA certificates, locally added ones
#    included (a real machine has them; a debootstrap has not) and clones the checkout (with its uncommitted changes) to
#    ~/morai_msgs of the user.
# 3. --user (default): adds sudo and a normal user `newcomer` allowed to use it, as a desktop
#    install has, then runs as that user; --root: runs as root.
#      bash tools/dev.sh demo   until /Ego_topic is published, then its rate over 10 s (must be
#                               40-60 Hz; tools/demo_check.py), then Ctrl-C
#      bash tools/dev.sh test   (skipped with --demo-only)
#    and prints the time of each, with its exit status.
# 4. Unmounts and, unless --keep, deletes DIR.
#
# --run COMMAND: in the DIR an earlier --keep run left, brings the clone to this checkout (its HEAD,
# then its uncommitted changes), mounts what the first run mounted, runs COMMAND in the clone as the
# same user (e.g. 'bash tools/dev.sh test receiver_sender.test'), unmounts; exit status COMMAND's.
#
# Needs root (debootstrap, chroot, mounts) and Debian's package mirror.  The chroot shares the
# host's network: run nothing else that uses the test ports meanwhile.  Logs: DIR.log/.
set -euo pipefail
# -h / --help: the comment block above, before anything is done
case "${1:-}" in -h|--help) sed -n '2,/^\([^#]\|$\)/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;; esac

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="${1:-}"
shift || true
AS=user DEMO_ONLY=0 KEEP=0 DIR="" RUN=""
while [ $# -gt 0 ]; do
  case "$1" in
    --user) AS=user ;;
    --root) AS=root ;;
    --demo-only) DEMO_ONLY=1 ;;
    --keep) KEEP=1 ;;
    --dir) DIR="$2"; shift ;;
    --run) RUN="$2"; KEEP=1; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
case "$VERSION" in
  12) SUITE=bookworm ;;
  13) SUITE=trixie ;;
  *) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "fresh_debian.sh: needs root (debootstrap, chroot)" >&2; exit 1; }
MIRROR="${MORAI_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
DIR="${DIR:-/var/tmp/morai-fresh-$VERSION}"
LOGS="$DIR.log"
mkdir -p "$LOGS"

log() { printf '[fresh_debian %s] %s\n' "$VERSION" "$*" >&2; }

mounts=()
cleanup() {
  local m
  for ((i=${#mounts[@]}-1; i>=0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
  if [ "$KEEP" -eq 0 ] && [ -d "$DIR" ]; then rm -rf --one-file-system "$DIR"; fi
}
trap cleanup EXIT

mount_all() {
  local m
  for m in proc sys dev dev/pts dev/shm; do
    mkdir -p "$DIR/$m"
    case "$m" in
      proc) mount -t proc proc "$DIR/proc" ;;
      sys) mount -t sysfs sys "$DIR/sys" ;;
      dev/pts) mount -t devpts -o newinstance,ptmxmode=0666 devpts "$DIR/dev/pts" ;;
      dev/shm) mount -t tmpfs -o mode=1777 shm "$DIR/dev/shm" ;;
      *) mount --bind "/$m" "$DIR/$m" ;;
    esac
    mounts+=("$DIR/$m")
  done
  # a private devpts needs /dev/ptmx to point into it
  if [ -e "$DIR/dev/pts/ptmx" ]; then mount --bind "$DIR/dev/pts/ptmx" "$DIR/dev/ptmx"; mounts+=("$DIR/dev/ptmx"); fi
}

overlay_changes() {
  # this checkout's uncommitted changes (modified, new, deleted files) over the clone in $1
  (cd "$ROOT" && git ls-files -z --modified --others --exclude-standard | tar --null -T - -cf - --ignore-failed-read) \
    | tar -xf - -C "$1"
  (cd "$ROOT" && git ls-files -z --deleted) | (cd "$1" && xargs -0 -r rm -f --)
}

in_chroot() {
  # a login shell of the user, in the checkout, with what a terminal has
  if [ "$AS" = user ]; then
    chroot "$DIR" /usr/sbin/runuser -l newcomer -c "cd ~/morai_msgs && $*"
  else
    chroot "$DIR" /bin/bash -lc "cd ~/morai_msgs && $*"
  fi
}

if [ -n "$RUN" ]; then
  if [ -d "$DIR/home/newcomer/morai_msgs" ]; then AS=user HOME_DIR=/home/newcomer
  elif [ -d "$DIR/root/morai_msgs" ]; then AS=root HOME_DIR=/root
  else echo "fresh_debian.sh: no clone in $DIR: run with --keep first" >&2; exit 1; fi
  clone="$DIR$HOME_DIR/morai_msgs"
  git -C "$clone" -c safe.directory='*' fetch -q "$ROOT" HEAD
  git -C "$clone" -c safe.directory='*' checkout -q -f FETCH_HEAD
  overlay_changes "$clone"
  [ "$AS" = user ] && chroot "$DIR" chown -R newcomer:newcomer /home/newcomer/morai_msgs
  mount_all
  t=$(date +%s)
  log "as $AS, in $DIR: $RUN"
  status=0
  in_chroot "$RUN" || status=$?
  log "exit $status in $(( $(date +%s) - t )) s"
  exit $status
fi

command -v debootstrap >/dev/null || { apt-get update -q >/dev/null; apt-get install -y -q debootstrap >/dev/null; }

if [ -d "$DIR" ]; then umount -R -l "$DIR"/proc "$DIR"/sys "$DIR"/dev 2>/dev/null || true; rm -rf --one-file-system "$DIR"; fi
t0=$(date +%s)
if [ ! -f "$DIR.base.tgz" ]; then
  log "downloading the minbase of $SUITE into $DIR.base.tgz"
  debootstrap --variant=minbase --make-tarball="$DIR.base.tgz" "$SUITE" "$DIR.tarball-work" "$MIRROR" \
    >"$LOGS/debootstrap-download.log" 2>&1
  rm -rf "$DIR.tarball-work"
fi
log "debootstrap --variant=minbase $SUITE $DIR"
debootstrap --variant=minbase --unpack-tarball="$DIR.base.tgz" "$SUITE" "$DIR" "$MIRROR" >"$LOGS/debootstrap.log" 2>&1
log "base system in $(( $(date +%s) - t0 )) s"

cp /etc/hosts /etc/resolv.conf "$DIR/etc/"
mkdir -p "$DIR/etc/ssl/certs" "$DIR/usr/local/share/ca-certificates"
cp -rL /etc/ssl/certs/. "$DIR/etc/ssl/certs/"
# locally added authorities too: installing ca-certificates rebuilds the bundle from these
cp -rL /usr/local/share/ca-certificates/. "$DIR/usr/local/share/ca-certificates/" 2>/dev/null || true
mount_all

HOME_DIR=/root
if [ "$AS" = user ]; then
  log "adding sudo and the user newcomer (as a desktop install has)"
  chroot "$DIR" env DEBIAN_FRONTEND=noninteractive apt-get update -q >"$LOGS/sudo.log" 2>&1
  chroot "$DIR" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends sudo \
    >>"$LOGS/sudo.log" 2>&1
  chroot "$DIR" useradd -m -s /bin/bash newcomer
  echo 'newcomer ALL=(ALL) NOPASSWD: ALL' > "$DIR/etc/sudoers.d/newcomer"
  chmod 440 "$DIR/etc/sudoers.d/newcomer"
  HOME_DIR=/home/newcomer
fi
# a clone, as a newcomer has, plus this checkout's uncommitted changes
git clone -q --no-hardlinks "$ROOT" "$DIR$HOME_DIR/morai_msgs"
overlay_changes "$DIR$HOME_DIR/morai_msgs"
[ "$AS" = user ] && chroot "$DIR" chown -R newcomer:newcomer /home/newcomer

status=0
t=$(date +%s)
log "as $AS: bash tools/dev.sh demo (set-up, build, then the demo until /Ego_topic's rate is measured)"
if in_chroot "bash tools/dev.sh setup && python3 tools/demo_check.py --startup-timeout 1800 --seconds 10 -- bash tools/dev.sh demo" \
    >"$LOGS/demo.log" 2>&1; then
  log "demo: PASS in $(( $(date +%s) - t )) s: $(grep -h 'demo_check:' "$LOGS/demo.log" | tail -n 1)"
else
  status=1
  log "demo: FAIL in $(( $(date +%s) - t )) s (log: $LOGS/demo.log)"
  tail -n 30 "$LOGS/demo.log" >&2
fi
if [ "$DEMO_ONLY" -eq 0 ]; then
  t=$(date +%s)
  log "as $AS: bash tools/dev.sh test"
  if in_chroot "bash tools/dev.sh test" >"$LOGS/test.log" 2>&1; then
    log "test: PASS in $(( $(date +%s) - t )) s: $(grep -h '^summary:' "$LOGS/test.log" | tail -n 1)"
  else
    status=1
    log "test: FAIL in $(( $(date +%s) - t )) s: $(grep -h '^summary:' "$LOGS/test.log" | tail -n 1) (log: $LOGS/test.log)"
    sed -n '/^what failed/,$p' "$LOGS/test.log" | head -n 80 >&2
  fi
  cp -r "$DIR$HOME_DIR/morai_msgs/.ws/test_results" "$LOGS/" 2>/dev/null || true
fi
log "total $(( $(date +%s) - t0 )) s; logs in $LOGS"
exit $status
