#!/usr/bin/env bash
# An open-ended fuzzing campaign, for a developer (not CI: its result depends
# on the seed and the time): runs TARGET for SECONDS from a random seed, under
# ASan+UBSan, with the seed corpus fuzz/corpus/TARGET/ and a working corpus
# fuzz/corpus-work/TARGET/ (not committed) that grows from one campaign to
# the next. Every failing input is copied to fuzz/regressions/TARGET/, which
# the test suite replays (tests/fuzz/replay_test.cpp and fuzz/run.sh): fix
# the cause, give the file a name that says what it is, and commit both.
#
#   fuzz/campaign.sh fuzz_sframe_generate 1800
#   FUZZ_SEED=7 fuzz/campaign.sh fuzz_cfi 600
#
# libFuzzer stops at the first failure; the campaign then goes on from a new
# seed until SECONDS are used, so one campaign can report several findings.
# Prints the executions, the corpus growth and the findings at the end.
# Environment: FUZZ_SEED (the first seed; default random), FUZZ_ARGS, and
# those of fuzz/common.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if [[ $# -ne 2 ]]; then
  echo "usage: fuzz/campaign.sh TARGET SECONDS   (targets: ${fuzz_all_targets[*]})" >&2
  exit 2
fi
target=$1 seconds=$2
fuzz_max_len "$target" > /dev/null
[[ $seconds =~ ^[0-9]+$ && $seconds -gt 0 ]] || { echo "fuzz/campaign.sh: SECONDS must be a positive number" >&2; exit 2; }
fuzz_build_targets "$target"

bin=$fuzz_build/fuzz/$target
work=$fuzz_root/fuzz/corpus-work/$target
artifacts=$fuzz_build/artifacts/$target
mkdir -p "$work"
rm -rf "$artifacts"
mkdir -p "$artifacts"
corpus_before=$(find "$work" -type f | wc -l)
seed=${FUZZ_SEED:-$(( (RANDOM << 15 | RANDOM) + 1 ))}
deadline=$(( $(date +%s) + seconds ))
executions=0 findings=0 round=0
while :; do
  left=$(( deadline - $(date +%s) ))
  [[ $left -gt 0 ]] || break
  round=$((round + 1))
  log=$fuzz_build/$target.campaign.$round.log
  echo "== $target: round $round, -seed=$seed, ${left}s left"
  status=0
  # shellcheck disable=SC2046,SC2086
  "$bin" -seed="$seed" -max_total_time="$left" $(fuzz_flags "$target") -artifact_prefix="$artifacts/round$round-" \
    ${FUZZ_ARGS:-} "$work" "$fuzz_root/fuzz/corpus/$target" > "$log" 2>&1 || status=$?
  n=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}' | tail -1)
  if [[ -z $n ]]; then  # a crash ends the run before its final stats
    n=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
  fi
  executions=$((executions + ${n:-0}))
  if ! fuzz_keep_findings "$target" "$artifacts" "$log" "$status"; then
    findings=$(( $(find "$artifacts" -type f | wc -l) ))
  fi
  seed=$((seed + 1))
done
corpus_after=$(find "$work" -type f | wc -l)
echo "fuzz/campaign.sh: $target, ${seconds}s in $round round(s): $executions executions," \
     "working corpus $corpus_before -> $corpus_after inputs, $findings finding(s)"
[[ $findings -eq 0 ]]
