#!/usr/bin/env bash
# elfutils' backtrace checks through the C API (backtrace_check.c): the child
# stopped in raise from its signal handler, walked live with each freeze
# policy (and left stopped as it was), then from its core (gcore).
# The core is also saved as a snapshot and replayed (compare_replay.py).
# Then two contexts in two threads at once, and one context reused across
# 1,000 targets (contexts_check.c), on that core.
#   backtrace_check.sh CHECKER CHILD WORKDIR FRAMEWALK REPLAY CONTEXTS
set -euo pipefail
checker=$1 child=$2 work=$3 framewalk=$4 replay=$5 contexts=$6
mkdir -p "$work"
"$child" >"$work/pid" &
pid=$!
trap 'kill -CONT $pid 2>/dev/null; kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
state() { awk '{print $3}' "/proc/$pid/stat"; }
for _ in $(seq 200); do [ "$(state)" = T ] && break; sleep 0.02; done
[ "$(state)" = T ] || { echo "FAIL: the child did not stop (state $(state))"; exit 1; }
status=0
for freeze in process thread copy; do
  echo "== live, --freeze=$freeze"
  "$checker" live "$pid" "$freeze" || status=1
  # Left as it was: still stopped, every thread. A thread detached from its
  # ptrace-stop goes back into the group stop inside the kernel (never
  # running its own code): it may read R for that moment, so wait for it.
  for task in /proc/$pid/task/*; do
    for _ in $(seq 100); do
      s=$(awk '{print $3}' "$task/stat")
      [ "$s" = T ] && break
      sleep 0.02
    done
    [ "$s" = T ] || { echo "FAIL: thread ${task##*/} is in state $s 2 s after the walk, not T"; status=1; }
  done
done
echo "== core"
if gcore -o "$work/core" "$pid" >/dev/null 2>&1 && [ -f "$work/core.$pid" ]; then
  "$checker" core "$work/core.$pid" "$child" || status=1
  echo "== the core's snapshot, and a user back-end replaying it"
  python3 "$(dirname "$0")/compare_replay.py" "$framewalk" "$replay" "$work/core.$pid" "$work" --exe "$child" || status=1
  echo "== two contexts in two threads; one context across 1,000 targets"
  "$contexts" threads "$work/core.$pid" "$child" || status=1
  "$contexts" reuse "$work/core.$pid" "$child" 1000 || status=1
else
  echo "FAIL: gcore could not write a core"
  status=1
fi
exit $status
