#!/usr/bin/env bash
# Starts a one-node Slurm cluster on this host (munged, slurmctld, slurmd) from
# test/slurm/slurm.conf, without systemd (the daemons are started directly, so it works in a
# container), and waits until `sinfo` shows the node idle. Idempotent: daemons that already run
# with the same configuration are kept. Run as root (slurmd must be).
#
#   scripts/slurm-cluster.sh            start (or keep) the cluster; prints the SLURM_CONF path last on stdout
#   scripts/slurm-cluster.sh --stop     stop the daemons this script started (by their pid files)
#
# State, logs and the filled-in slurm.conf live in $TSI_SLURM_DIR (default /var/tmp/token-shards-slurm).
# Client commands (sbatch, squeue, sinfo) need SLURM_CONF=<that folder>/slurm.conf.
# Exit codes: 0 the node is idle; 3 Slurm or munge is not installed (Debian: apt-get install
# slurm-wlm munge); 4 not root (slurmd must be); 1 a daemon did not start or the node did not
# become idle (the log is named).
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
STATE="${TSI_SLURM_DIR:-/var/tmp/token-shards-slurm}"
CONF="$STATE/slurm.conf"
say() { echo "slurm-cluster: $*" >&2; }

stop_pidfile() {
  local f="$1" pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$f"
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

if [ "${1:-}" = "--stop" ]; then
  stop_pidfile "$STATE/slurmd.pid"
  stop_pidfile "$STATE/slurmctld.pid"
  stop_pidfile "$STATE/munged.pid"
  exit 0
fi

for b in munged munge slurmctld slurmd sinfo sbatch; do
  if ! command -v "$b" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$b" ]; then
    say "$b is not installed (Debian: apt-get install slurm-wlm munge)"
    exit 3
  fi
done
export PATH="$PATH:/usr/sbin"
if [ "$(id -u)" != 0 ]; then
  say "must run as root (slurmd starts jobs as their users)"
  exit 4
fi

HOST=$(hostname -s)
CPUS=$(nproc)
mkdir -p "$STATE/ctld" "$STATE/d"
NEW=$(sed -e "s|@HOST@|$HOST|g" -e "s|@USER@|root|g" -e "s|@CPUS@|$CPUS|g" -e "s|@STATE@|$STATE|g" "$REPO/test/slurm/slurm.conf")

# munged: the Debian package's key (/etc/munge/munge.key), its socket in /run/munge.
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
  if [ ! -s /etc/munge/munge.key ]; then
    say "no /etc/munge/munge.key: creating one"
    mungekey --create --keyfile=/etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key
  fi
  say "starting munged"
  runuser -u munge -- munged --pid-file=/run/munge/munged.pid
  cp /run/munge/munged.pid "$STATE/munged.pid"
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n | unmunge >/dev/null || { say "munged does not answer (see /var/log/munge/munged.log)"; exit 1; }
fi

# A changed configuration restarts the daemons this script started.
if [ -f "$CONF" ] && [ "$(cat "$CONF")" != "$NEW" ]; then
  say "configuration changed: restarting slurmctld and slurmd"
  stop_pidfile "$STATE/slurmd.pid"
  stop_pidfile "$STATE/slurmctld.pid"
fi
printf '%s\n' "$NEW" > "$CONF"
export SLURM_CONF="$CONF"

if ! alive "$STATE/slurmctld.pid"; then
  say "starting slurmctld (log $STATE/slurmctld.log)"
  slurmctld -f "$CONF"
fi
if ! alive "$STATE/slurmd.pid"; then
  say "starting slurmd (log $STATE/slurmd.log)"
  slurmd -f "$CONF"
fi

# Wait (at most 60 s) until the node is idle; a node left down from an earlier run is resumed.
state=""
for i in $(seq 120); do
  state=$(sinfo -h -n "$HOST" -o '%t' 2>/dev/null | head -1 || true)
  case "$state" in
    idle | mix | alloc) break ;;
    down* | drain* | drng*) [ $((i % 10)) = 1 ] && scontrol update NodeName="$HOST" State=RESUME >/dev/null 2>&1 || true ;;
  esac
  sleep 0.5
done
case "$state" in
  idle | mix | alloc) ;;
  *)
    say "node $HOST is '${state:-not listed}' after 60 s; see $STATE/slurmctld.log and $STATE/slurmd.log"
    exit 1
    ;;
esac
say "node $HOST is $state ($CPUS CPUs)"
echo "$CONF"
