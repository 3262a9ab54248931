#!/usr/bin/env bash
# scripts/run-limited.sh (gpu-check.sh's time limit): a command that hangs ends
# with timeout's status, and its output is followed by where its processes
# waited; one that ends in time keeps its status and its output alone; a bad
# limit is refused.
source "$(dirname "$0")/checks.sh"
run_limited=$(dirname "$0")/../../scripts/run-limited.sh

bash "$run_limited" 4 sh -c 'echo started; sleep 60' > "$work/hang"
check "a hang ends with status 124" test $? -eq 124
check "its output comes first" test "$(head -n 1 "$work/hang")" = started
check "then the hung process" grep -q '^process [0-9]*: sleep 60' "$work/hang"
check "and the call it waits in" grep -q 'thread [0-9]* (sleep): wait channel [a-z_]*nanosleep' "$work/hang"

bash "$run_limited" --show "$work/hang" > "$work/shown"
check "--show gives the command's output" grep -qx '    | started' "$work/shown"
check "and where it waited" grep -q '^    where| process [0-9]*: sleep 60' "$work/shown"

bash "$run_limited" 8 sh -c 'echo done; exit 3' > "$work/in_time"
check "a command that ends in time keeps its status" test $? -eq 3
check "and its output alone" test "$(cat "$work/in_time")" = done

bash "$run_limited" 1.5 true 2> "$work/bad.err"
check "a limit that is not whole seconds is refused" test $? -eq 2
check "with a message" grep -q "the limit must be a whole number of seconds, got '1.5'" "$work/bad.err"

checks_done
