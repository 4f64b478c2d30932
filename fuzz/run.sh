#!/usr/bin/env bash
# The fuzzing of the test suite, deterministic: the same commit gives the same
# executions and the same result every time. Builds the libFuzzer targets with
# clang under ASan+UBSan (in build-fuzz/, or $FUZZ_BUILD_DIR), then for each
# target
#   1. replays every input of fuzz/regressions/<target>/, whole;
#   2. fuzzes from the seed corpus fuzz/corpus/<target>/ with a fixed seed and
#      a fixed number of runs (new inputs go to build-fuzz/new-inputs/, emptied
#      first), without address randomization (see below).
# A failing input is copied to fuzz/regressions/<target>/ (and printed in
# base64 when small). Exits non-zero if any target failed.
#
#   fuzz/run.sh                      # every target
#   fuzz/run.sh fuzz_cfi fuzz_elf    # some
#   FUZZ_RUNS=200000 fuzz/run.sh fuzz_cfi
#
# Environment: FUZZ_SEED (default 1), FUZZ_RUNS (runs per target; default:
# each target's own count below, about 20 s each on one core), FUZZ_ARGS
# (extra libFuzzer flags), and those of fuzz/common.sh. Open-ended fuzzing
# with a random seed is fuzz/campaign.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

seed=${FUZZ_SEED:-1}
# Runs per target, chosen so that each takes at most about 14 s on this project's
# machines (CI's budget; fuzz/campaign.sh runs open-ended).
default_runs() {
  case "$1" in
    fuzz_elf) echo 42000 ;;
    fuzz_cfi) echo 14000 ;;
    fuzz_expression) echo 210000 ;;
    fuzz_eh_frame_hdr) echo 350000 ;;
    fuzz_sframe) echo 700000 ;;
    fuzz_sframe_roundtrip) echo 700000 ;;
    fuzz_sframe_generate) echo 10000 ;;
    fuzz_core) echo 70000 ;;
    fuzz_unwind) echo 105000 ;;
    fuzz_archive) echo 140000 ;;
    fuzz_exidx) echo 14000 ;;  # the slowest per input (the executor runs per entry): about 40 s
    fuzz_gmon) echo 70000 ;;
    fuzz_line) echo 100000 ;;  # about 2 s: a small target, kept short in CI
    fuzz_dwarf_info) echo 100000 ;;  # about 6 s
    fuzz_cu_index) echo 200000 ;;  # a small parser
    fuzz_backend) echo 21000 ;;
    fuzz_profile_file) echo 10000 ;;  # about 18 s: every input is reported in every format
    fuzz_perf_data) echo 21000 ;;  # about 9 s
    fuzz_perf_map) echo 100000 ;;  # a small parser
    fuzz_jitdump) echo 100000 ;;  # a small parser
    fuzz_gdb_jit) echo 100000 ;;  # a small reader
  esac
}

if [[ $# -gt 0 ]]; then targets=("$@"); else targets=("${fuzz_all_targets[@]}"); fi
for t in "${targets[@]}"; do fuzz_max_len "$t" > /dev/null; done
fuzz_build_targets "${targets[@]}"

# libFuzzer with a fixed seed still wanders where the process's addresses
# change from run to run: comparisons it traces (-use_cmp) feed pointer
# values into its mutations, some code under test orders by address, and it
# rereads the corpus directory by the clock (-reload). So -use_cmp and
# -reload are off, address randomization is off (setarch -R), and the target
# runs from its build directory with relative paths and a fixed environment,
# so that its stack lies at the same address wherever the tree is: one
# commit follows one path, with the same executions, coverage and result.
no_aslr=()
if setarch "$(uname -m)" -R true 2> /dev/null; then no_aslr=(setarch "$(uname -m)" -R); fi
scratch=$fuzz_build/new-inputs
corpus_from_build=$(realpath --relative-to="$fuzz_build" "$fuzz_root/fuzz/corpus")
# One target: its replay and its run; its output in $fuzz_build/$t.out and
# "ok" or "failed" in $fuzz_build/$t.result. Targets run FUZZ_JOBS at a time
# (default: one per core): each is a process of its own with its own seed,
# inputs and directories, so running them side by side changes none of them.
fuzz_one() {
  local t=$1 bin artifacts status=0 regressions runs new_inputs
  bin=$fuzz_build/fuzz/$t
  artifacts=$fuzz_build/artifacts/$t
  rm -rf "$artifacts"
  mkdir -p "$artifacts"
  shopt -s nullglob
  regressions=("$fuzz_root/fuzz/regressions/$t"/*)
  shopt -u nullglob
  if [[ ${#regressions[@]} -gt 0 ]]; then
    echo "== $t: replaying ${#regressions[@]} regression inputs"
    "$bin" -timeout=60 -rss_limit_mb=2048 -artifact_prefix="$artifacts/" "${regressions[@]}" \
      > "$fuzz_build/$t.replay.log" 2>&1 || status=$?
    if ! fuzz_keep_findings "$t" "$artifacts" "$fuzz_build/$t.replay.log" "$status"; then
      echo failed > "$fuzz_build/$t.result"
      return
    fi
  fi

  runs=${FUZZ_RUNS:-$(default_runs "$t")}
  new_inputs=$scratch/$t
  rm -rf "$new_inputs"
  mkdir -p "$new_inputs"
  echo "== $t: -seed=$seed -runs=$runs $(fuzz_flags "$t")"
  # shellcheck disable=SC2046,SC2086
  (cd "$fuzz_build" && "${no_aslr[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin ASAN_OPTIONS="$ASAN_OPTIONS" \
    UBSAN_OPTIONS="$UBSAN_OPTIONS" \
    "./fuzz/$t" -seed="$seed" -runs="$runs" -reload=0 -use_cmp=0 $(fuzz_flags "$t") \
    -artifact_prefix="artifacts/$t/" ${FUZZ_ARGS:-} "new-inputs/$t" "$corpus_from_build/$t") \
    > "$fuzz_build/$t.log" 2>&1 || status=$?
  grep -E '^(stat::number_of_executed_units|stat::new_units_added)' "$fuzz_build/$t.log" || true
  grep -E '^#[0-9]+[[:space:]]+DONE' "$fuzz_build/$t.log" | sed -E 's/ exec\/s: [0-9]+//; s/ rss: [0-9]+Mb//' || true
  if fuzz_keep_findings "$t" "$artifacts" "$fuzz_build/$t.log" "$status"; then
    echo ok > "$fuzz_build/$t.result"
  else
    echo failed > "$fuzz_build/$t.result"
  fi
}

jobs=${FUZZ_JOBS:-$(nproc)}
for t in "${targets[@]}"; do
  rm -f "$fuzz_build/$t.result"
  fuzz_one "$t" > "$fuzz_build/$t.out" 2>&1 &
  while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n || true; done
done
wait
failed=()
for t in "${targets[@]}"; do
  cat "$fuzz_build/$t.out"
  [[ $(cat "$fuzz_build/$t.result" 2> /dev/null) == ok ]] || failed+=("$t")
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz/run.sh: problems found by: ${failed[*]} (inputs in fuzz/regressions/)" >&2
  exit 1
fi
echo "fuzz/run.sh: no problems found in ${targets[*]} (seed $seed)"
