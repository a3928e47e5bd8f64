#!/usr/bin/env bash
# A real systemd (system manager, PID 1 of a systemd-nspawn container) for integration tests.
# Needs root and: apt-get install -y --no-install-recommends systemd-container
#   start STATE_DIR [ROOTFS]  ROOTFS unset: host /usr on a tmpfs root (--volatile=yes, boots basic.target)
#                             ROOTFS set : e.g. a debootstrap'd dir, booted read-only + tmpfs overlay
#   stop  STATE_DIR
# Clients: DBUS_SYSTEM_BUS_ADDRESS=unix:path=STATE_DIR/bus/system_bus_socket (go-systemd NewSystemConnectionContext).
# STATE_DIR/units is bind-mounted at the same path inside, for unit files to link (LinkUnitFiles).
# Debug: nsenter -t "$(cat STATE_DIR/init.pid)" -a systemctl status
set -euo pipefail
cmd=${1:?start|stop}; S=$(realpath -m "${2:?state dir}")
cgclean() { # kill leftovers in our cgroup subtree (all hierarchies) and remove it
  local CG=$1 h p d
  for h in /sys/fs/cgroup/*/; do h=${h%/}; [ -d "$h$CG" ] || continue
    for p in $(find "$h$CG" -name cgroup.procs -exec cat {} + 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done; done
  sleep 0.2
  for h in /sys/fs/cgroup/*/; do h=${h%/}; [ -d "$h$CG" ] && find "$h$CG" -depth -type d -exec rmdir {} + 2>/dev/null || true
    d=$(dirname "$h$CG"); while [ "$d" != "$h" ] && [ "$d" != /sys/fs/cgroup ] && rmdir "$d" 2>/dev/null; do d=$(dirname "$d"); done; done
}
case $cmd in
start)
  ROOTFS=${3:-}
  mkdir -p "$S/bus" "$S/units"; rm -f "$S/bus/system_bus_socket"
  NAME=sdtest-$(basename "$S" | tr -c 'a-zA-Z0-9\n' '-' | cut -c1-40)
  # IMPORTANT: start inside a dedicated cgroup. A systemd that finds itself at a hierarchy root moves
  # every process of the machine into /init.scope. Base it on our memory cgroup to keep memory accounting.
  BASE=$(awk -F: '$2=="memory"{print $3}' /proc/self/cgroup); [ -n "$BASE" ] || BASE=$(awk -F: '$1=="0"{print $3}' /proc/self/cgroup)
  CG="${BASE%/}/$NAME"; echo "$CG" > "$S/cgroup"
  if [ -n "$ROOTFS" ]; then ARGS=(-D "$ROOTFS" --volatile=overlay); UNIT=multi-user.target
  else ARGS=(-D / --volatile=yes); UNIT=basic.target; fi
  (
    for h in /sys/fs/cgroup/*/; do h=${h%/}; case $h in */cpuset) continue;; esac
      mountpoint -q "$h" || continue; mkdir -p "$h$CG"; echo $BASHPID > "$h$CG/cgroup.procs"; done
    exec setsid systemd-nspawn --quiet --register=no --keep-unit -M "$NAME" "${ARGS[@]}" --boot \
      --private-network --bind="$S/bus:/run/dbus" --bind="$S/units" \
      systemd.firstboot=off systemd.mask=systemd-firstboot.service systemd.unit=$UNIT \
      > "$S/console.log" 2>&1 < /dev/null
  ) &
  echo $! > "$S/nspawn.pid"
  for i in $(seq 1 300); do
    INIT=$(ps -o pid= --ppid "$(cat "$S/nspawn.pid")" 2>/dev/null | head -1 | tr -d ' ' || true)
    if [ -n "$INIT" ] && [ -S "$S/bus/system_bus_socket" ]; then
      st=$(nsenter -t "$INIT" -a systemctl is-system-running 2>/dev/null || true)
      case $st in running|degraded) echo "$INIT" > "$S/init.pid"; echo "systemd up ($st), pid $INIT"; exit 0;; esac
    fi
    kill -0 "$(cat "$S/nspawn.pid")" 2>/dev/null || { cat "$S/console.log"; exit 1; }
    sleep 0.1
  done
  echo "timeout waiting for systemd" >&2; exit 1 ;;
stop)
  P=$(cat "$S/nspawn.pid" 2>/dev/null || true)
  if [ -n "$P" ]; then kill -TERM "$P" 2>/dev/null || true   # nspawn asks the container to power off
    for i in $(seq 1 100); do kill -0 "$P" 2>/dev/null || break; sleep 0.1; done; kill -9 "$P" 2>/dev/null || true; fi
  [ -f "$S/cgroup" ] && cgclean "$(cat "$S/cgroup")"
  rm -f "$S/nspawn.pid" "$S/init.pid" ;;
esac
