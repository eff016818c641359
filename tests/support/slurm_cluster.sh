#!/usr/bin/env bash
# A real single-node Slurm cluster in one folder, for tests and by hand (Debian's slurmctld,
# slurmd, slurm-client and munge; scripts/setup installs them). Everything it writes -
# slurm.conf, the munge key and socket, state, spool, pid and log files - lies in DIR, and the
# daemons listen on free ports, so several clusters can run side by side.
#
#   slurm_cluster.sh start DIR    write DIR/slurm.conf, start munged, slurmctld and slurmd, wait
#                                 until the node is idle; prints the line the caller evaluates:
#                                   eval "$(tests/support/slurm_cluster.sh start /tmp/lmk-slurm)"
#   slurm_cluster.sh stop DIR     cancel the cluster's jobs, stop its daemons (pid files) and
#                                 any job processes left; keeps DIR (logs, outputs) for the caller
#   slurm_cluster.sh status DIR   "running" (exit 0) or "stopped" (exit 1), and sinfo
#   slurm_cluster.sh env DIR      the export line again
#
# Configuration and the reasons for it: docs/ARCHITECTURE.md, "Slurm in tests". Needs root
# (slurmd starts job steps as the submitting user).
#   LMK_SLURM_START_TIMEOUT  seconds to wait for the node to be idle (default 60)
#   LMK_SLURM_CPUS           CPUs the node offers (default: the machine's, at least 4)
#   LMK_SLURM_OWNER_PID      stop the cluster when this process ends (a test binary that
#                            crashes or is killed by ctest's timeout leaves no daemons behind)
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"

self="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
usage() { echo "usage: $0 start|stop|status|env DIR" >&2; exit 2; }
[ $# -ge 2 ] || usage
action="$1"
[ "$action" != start ] || mkdir -p "$2"
if [ ! -d "$2" ]; then
  [ "$action" = status ] && { echo stopped; exit 1; }
  [ "$action" = stop ] && exit 0
fi
dir="$(cd "$2" && pwd)"
conf="$dir/slurm.conf"

say() { echo "slurm_cluster: $*" >&2; }
pid_of() {  # the pid in DIR/NAME.pid if that process is NAME (not a reused pid)
  local pid name
  pid="$( { tr -dc 0-9 <"$dir/$1.pid"; } 2>/dev/null || true)"
  [ -n "$pid" ] && { read -r name <"/proc/$pid/comm"; } 2>/dev/null && [ "$name" = "$1" ] && echo "$pid"
  return 0
}
alive() {  # running, not a zombie waiting for init to reap it
  local stat
  [ -n "$1" ] && stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [ "${stat%% *}" != Z ]
}
env_line() { echo "export SLURM_CONF=$conf"; }
tails() {
  for log in munged slurmctld slurmd; do
    [ -f "$dir/log/$log.log" ] || continue
    echo "--- $dir/log/$log.log (last 15 lines)" >&2
    tail -n 15 "$dir/log/$log.log" >&2
  done
}

# Ports in 20000-31999 (below Linux's ephemeral range, so no outgoing connection holds them)
# that nothing listens on now; the start is retried on other ports if a daemon loses a race.
listening() {
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "0A" { split($2, a, ":"); print a[2] }'
}
free_port() {
  local used port hex
  used="$(listening)"
  while :; do
    port=$((20000 + (RANDOM * 32768 + RANDOM) % 12000))
    hex="$(printf '%04X' "$port")"
    grep -qx "$hex" <<<"$used" || { echo "$port"; return; }
  done
}

write_conf() {
  local host cpus mem ctld_port slurmd_port first_job
  host="$(hostname -s)"
  # At least 4 CPUs whatever the machine has (slurmd takes slurm.conf's word for it:
  # config_overrides), so a 2-task job and another job run side by side even on 1-2 cores.
  cpus="${LMK_SLURM_CPUS:-$(nproc)}"
  [ -n "${LMK_SLURM_CPUS:-}" ] || [ "$cpus" -ge 4 ] || cpus=4
  # What slurmd will measure, less a margin: a node configured with more memory than it has
  # is drained as invalid.
  mem="$(awk '/^MemTotal:/ { m = int($2 / 1024); m -= (m > 4096 ? 1024 : int(m / 4)); print m }' /proc/meminfo)"
  ctld_port="$(free_port)"
  slurmd_port="$(free_port)"
  while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port="$(free_port)"; done
  first_job="$(awk '/^JobId=/ { split($1, a, "="); if (a[2] + 0 > m) m = a[2] + 0 } END { print m + 1 }' \
    "$dir/jobcomp.log" 2>/dev/null || echo 1)"
  cat >"$conf" <<EOF
# Written by tests/support/slurm_cluster.sh (docs/ARCHITECTURE.md, "Slurm in tests").
ClusterName=lmktest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket,cred_expire=10
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups: process tracking by the /proc parent tree, no task binding or containment.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# FIFO: a submitted job starts at once when the node is free (backfill only adds a cycle).
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=2
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
# No slurmdbd: sacct has no database to read; finished jobs are appended to jobcomp.log,
# and squeue/scontrol still show a job for MinJobAge seconds after it ended.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.log
MinJobAge=300
FirstJobId=$first_job
MailProg=/bin/true
SlurmctldTimeout=30
SlurmdTimeout=60
MessageTimeout=10
InactiveLimit=0
KillWait=2
Waittime=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munge() {
  local key="$dir/munge/munge.key" socket="$dir/munge/munge.socket"
  if [ ! -s "$key" ]; then
    # munged accepts only a key that no one else can read.
    (umask 077 && dd if=/dev/urandom of="$key" bs=1024 count=1 status=none)
  fi
  rm -f "$socket" "$socket.lock"
  munged --socket="$socket" --key-file="$key" --pid-file="$dir/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" \
    </dev/null >>"$dir/log/munged.log" 2>&1 || { say "munged did not start"; tails; return 1; }
  for _ in $(seq 50); do [ -S "$socket" ] && return 0; sleep 0.1; done
  say "munged made no socket"; tails; return 1
}

start_slurm() {
  # Every start is a fresh cluster: saved state would requeue the jobs of a crashed run and
  # show the node idle before this slurmd registers. Job ids go on from jobcomp.log's.
  rm -rf "${dir:?}/state" && mkdir -p "$dir/state"
  env SLURM_CONF="$conf" slurmctld -f "$conf" </dev/null >>"$dir/log/slurmctld.log" 2>&1 ||
    { say "slurmctld did not start"; return 1; }
  env SLURM_CONF="$conf" slurmd -f "$conf" </dev/null >>"$dir/log/slurmd.log" 2>&1 ||
    { say "slurmd did not start"; return 1; }
  local deadline=$((SECONDS + ${LMK_SLURM_START_TIMEOUT:-60})) state="" gone=0
  while [ $SECONDS -lt $deadline ]; do
    state="$(SLURM_CONF="$conf" sinfo -h -o %T 2>/dev/null || true)"
    [ "$state" = "idle" ] && return 0
    # A daemon that exited (a bad config, a port taken) ends the wait; pid files come a
    # moment after the daemons fork, so only after 1 s without them.
    if alive "$(pid_of slurmctld)" && alive "$(pid_of slurmd)"; then gone=0; else gone=$((gone + 1)); fi
    [ $gone -lt 5 ] || { say "slurmctld or slurmd exited"; return 1; }
    sleep 0.2
  done
  say "the node is not idle after ${LMK_SLURM_START_TIMEOUT:-60} s (state '${state:-no answer}')"
  return 1
}

stop_pids() {  # stop_pids NAME...: SIGTERM to all, SIGKILL to those left after 10 s
  local pids=() pid
  for name in "$@"; do
    pid="$(pid_of "$name")"
    alive "$pid" && pids+=("$pid")
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  kill "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 100); do
    for pid in "${pids[@]}"; do alive "$pid" && break; pid=""; done
    [ -z "$pid" ] && return 0
    sleep 0.1
  done
  kill -9 "${pids[@]}" 2>/dev/null || true
}

# Processes this cluster started that outlive its daemons: its slurmstepds (they keep
# DIR/log/slurmd.log open) and everything below them (the jobs' tasks).
leftovers() {
  local roots=() pid name
  for comm in /proc/[0-9]*/comm; do
    if ! { read -r name <"$comm"; } 2>/dev/null || [ "$name" != slurmstepd ]; then continue; fi
    pid="${comm#/proc/}"; pid="${pid%/comm}"
    for fd in /proc/"$pid"/fd/*; do
      [ "$(readlink "$fd" 2>/dev/null)" = "$dir/log/slurmd.log" ] && { roots+=("$pid"); break; }
    done
  done
  [ ${#roots[@]} -gt 0 ] || return 0
  ps -e -o pid=,ppid= | awk -v roots="${roots[*]}" '
    BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
    { parent[$1] = $2 }
    END { for (p in parent) { q = p; while (q > 1) { if (q in keep) { print p; break } if (!(q in parent)) break; q = parent[q] } } }'
}

stop_watcher() {
  local pid
  pid="$( { tr -dc 0-9 <"$dir/watch.pid"; } 2>/dev/null || true)"
  rm -f "$dir/watch.pid"
  [ -n "$pid" ] && [ "$pid" != $$ ] || return 0
  { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qF " watch $dir " && kill "$pid" 2>/dev/null
  return 0
}

stop_cluster() {
  stop_watcher
  if alive "$(pid_of slurmctld)"; then
    SLURM_CONF="$conf" scancel --full --quiet --partition=debug 2>/dev/null || true
    for _ in $(seq 50); do
      [ -z "$(SLURM_CONF="$conf" squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  stop_pids slurmd slurmctld
  local rest=()
  mapfile -t rest < <(leftovers)
  if [ ${#rest[@]} -gt 0 ]; then
    say "killing job processes left: ${rest[*]}"
    kill -9 "${rest[@]}" 2>/dev/null || true
  fi
  stop_pids munged
}

case "$action" in
  start)
    if alive "$(pid_of slurmctld)"; then say "already running"; env_line; exit 0; fi
    [ "$(id -u)" -eq 0 ] || { say "needs root: slurmd starts job steps as the user who submitted them"; exit 3; }
    for daemon in slurmctld slurmd munged sinfo; do
      command -v "$daemon" >/dev/null ||
        { say "$daemon is not installed (scripts/setup installs slurmctld, slurmd, slurm-client, munge)"; exit 3; }
    done
    # A Unix socket path has at most 107 bytes (and slurmd puts sockets in DIR/spool).
    [ ${#dir} -le 80 ] || { say "DIR is too long for munge's socket (${#dir} > 80 characters)"; exit 2; }
    mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
    # munged wants every folder above its socket searchable by all, and the key unreadable.
    chmod a+x "$dir"
    chmod 755 "$dir/munge"
    stop_cluster  # leftovers of an earlier start in this folder
    start_munge || { stop_cluster; exit 1; }
    for _ in 1 2 3; do
      write_conf
      if start_slurm; then
        if [ -n "${LMK_SLURM_OWNER_PID:-}" ]; then
          setsid "$self" watch "$dir" "$LMK_SLURM_OWNER_PID" </dev/null >>"$dir/log/watch.log" 2>&1 &
          echo $! >"$dir/watch.pid"
        fi
        env_line
        exit 0
      fi
      stop_pids slurmd slurmctld
      grep -qs "Address already in use" "$dir/log/slurmctld.log" "$dir/log/slurmd.log" || break
      say "a port was taken; retrying on others"
      : >"$dir/log/slurmctld.log"; : >"$dir/log/slurmd.log"
    done
    tails
    stop_cluster
    exit 1
    ;;
  stop)
    stop_cluster
    ;;
  status)
    if alive "$(pid_of slurmctld)" && alive "$(pid_of slurmd)"; then
      echo running
      SLURM_CONF="$conf" sinfo || true
    else
      echo stopped
      exit 1
    fi
    ;;
  env)
    env_line
    ;;
  watch)  # internal: watch DIR OWNER_PID
    [ $# -eq 3 ] || usage
    while kill -0 "$3" 2>/dev/null; do sleep 1; done
    say "process $3 ended; stopping the cluster"
    exec "$self" stop "$dir"
    ;;
  *) usage ;;
esac
