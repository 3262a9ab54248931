#!/usr/bin/env bash
# Runs COMMAND under a time limit, as timeout(1) does (status 124 when the limit
# ends it, 137 when it had to be killed). If the limit ends it, what each of its
# processes was doing at three quarters of the limit follows its output, after
# a line "run-limited: still running after ...": its command line and state;
# each thread's name, wait channel, system call and (as root) kernel stack;
# and, where gdb is installed, every thread's own stack. What a hang leaves to
# look at: which rank of a job never returned, and the call it waits in
# (gpu-check.sh's runs; on the GPU a wait in the driver shows as an ioctl and
# its kernel stack).
#   scripts/run-limited.sh LIMIT_SECONDS COMMAND...
#   scripts/run-limited.sh --show LOG [LINES]
# --show prints what a failed run's log says, each line indented: the last LINES
# (default 15) of the command's own output, then, if the limit ended it, where
# its processes' threads waited (the stacks stay in the log).
set -u
if [ "${1:-}" = --show ]; then
  log=$2 lines=${3:-15}
  sed '/^run-limited: still running after/,$d' "$log" | tail -n "$lines" | sed 's/^/    | /'
  sed -n '/^run-limited: still running after/,$p' "$log" | grep -E '^(run-limited|process [0-9]+:|  thread)' |
    head -n 60 | sed 's/^/    where| /'
  exit 0
fi
if [ $# -lt 2 ]; then
  echo "usage: run-limited.sh LIMIT_SECONDS COMMAND..." >&2
  exit 2
fi
limit=$1
shift
if ! [[ $limit =~ ^[1-9][0-9]*$ ]]; then
  echo "run-limited.sh: the limit must be a whole number of seconds, got '$limit'" >&2
  exit 2
fi
where=$(mktemp)
trap 'rm -f "$where"' EXIT

timeout --kill-after=10 "$limit" "$@" &
runner=$!
trap 'kill "$runner" 2>/dev/null; exit 130' INT TERM

# The processes below $1, parents first (from every process's PPid).
descendants() {
  grep -H '^PPid:' /proc/[0-9]*/status 2>/dev/null |
    awk -v root="$1" -F'[/:\t ]+' '{ parent[$3] = $NF }
      END { found[root] = 1
            do { more = 0; for (p in parent) if (!(p in found) && (parent[p] in found)) { found[p] = 1; order[++n] = p; more = 1 } } while (more)
            for (i = 1; i <= n; i++) print order[i] }'
}

snapshot() {
  echo "run-limited: still running after $(( limit * 3 / 4 )) of $limit s; where its processes are:"
  local pids pid task
  pids=$(descendants "$runner")
  for pid in $pids; do
    [ -r "/proc/$pid/status" ] || continue
    echo "process $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" | cut -c1-200)"
    echo "  $(grep '^State:' "/proc/$pid/status")"
    for task in /proc/"$pid"/task/*; do
      echo "  thread ${task##*/} ($(cat "$task/comm" 2>/dev/null)): wait channel $(cat "$task/wchan" 2>/dev/null)," \
           "system call $(cut -d' ' -f1 "$task/syscall" 2>/dev/null)"
      [ -r "$task/stack" ] && sed 's/^/      /' "$task/stack" 2>/dev/null
    done
  done
  # Then the user stacks, slower (gdb attaches to each process in turn).
  command -v gdb >/dev/null 2>&1 || return 0
  for pid in $pids; do
    [ -r "/proc/$pid/status" ] || continue
    echo "process $pid, its threads' stacks:"
    timeout 5 gdb -p "$pid" -batch -ex "thread apply all bt 20" 2>/dev/null | grep -E '^(Thread|#)' | sed 's/^/    /'
  done
}

# A watcher, ended as soon as the command ends.
(
  sleep $(( limit * 3 / 4 ))
  kill -0 "$runner" 2>/dev/null && snapshot > "$where"
) &
watcher=$!
wait "$runner"
status=$?
kill $(descendants "$watcher") "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
case $status in
  124 | 137) cat "$where" ;;
esac
exit "$status"
