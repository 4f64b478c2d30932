# Sourced by fuzz/run.sh and fuzz/campaign.sh: the targets, their input
# limits, the ASan+UBSan build, and what to do with an input that fails.
#
# Environment: FUZZ_BUILD_DIR (default build-fuzz/), FUZZ_JOBS (build
# parallelism, default the number of CPUs), FUZZ_CC / FUZZ_CXX (default clang / clang++).

fuzz_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fuzz_root=$(dirname "$fuzz_here")
fuzz_build=${FUZZ_BUILD_DIR:-$fuzz_root/build-fuzz}

fuzz_all_targets=(fuzz_elf fuzz_cfi fuzz_expression fuzz_eh_frame_hdr fuzz_sframe fuzz_sframe_roundtrip
                  fuzz_sframe_generate fuzz_core fuzz_unwind fuzz_archive fuzz_exidx fuzz_gmon fuzz_line fuzz_dwarf_info
                  fuzz_cu_index fuzz_backend fuzz_profile_file fuzz_perf_data fuzz_perf_map
                  fuzz_jitdump fuzz_gdb_jit)

# Longest input per target: whole small ELF files; CFI sections of a few dozen
# records; one expression; a header with a modest table; SFrame sections of a
# few dozen functions; .eh_frame for a few dozen functions, each generated and
# checked PC by PC; archives of a few small objects; small ARM files with EHABI tables;
# gmon.out files of a small program (a histogram of a few thousand bins); the
# .debug_line of a few small units; .fwprof recordings of about a thousand samples.
fuzz_max_len() {
  case "$1" in
    fuzz_elf) echo 65536 ;;
    fuzz_cfi) echo 16384 ;;
    fuzz_expression) echo 1024 ;;
    fuzz_eh_frame_hdr) echo 4096 ;;
    fuzz_sframe) echo 4096 ;;
    fuzz_sframe_roundtrip) echo 4096 ;;
    fuzz_sframe_generate) echo 8192 ;;
    fuzz_core) echo 16384 ;;
    fuzz_unwind) echo 4096 ;;
    fuzz_archive) echo 65536 ;;
    fuzz_exidx) echo 16384 ;;
    fuzz_gmon) echo 8192 ;;
    fuzz_line) echo 8192 ;;
    fuzz_dwarf_info) echo 16384 ;;
    fuzz_cu_index) echo 4096 ;;
    fuzz_backend) echo 4096 ;;
    fuzz_profile_file) echo 16384 ;;
    fuzz_perf_data) echo 16384 ;;  # a header, attributes and a few small samples
    fuzz_perf_map) echo 4096 ;;  # a few dozen lines
    fuzz_jitdump) echo 4096 ;;  # a header and a few dozen small records
    fuzz_gdb_jit) echo 1024 ;;  # a descriptor, a few entries and objects
    *) echo "unknown fuzz target: $1" >&2; return 2 ;;
  esac
}

# Configures and builds the given targets under ASan+UBSan with libFuzzer.
fuzz_build_targets() {
  local cc=${FUZZ_CC:-clang} cxx=${FUZZ_CXX:-clang++} tool
  for tool in cmake "$cc" "$cxx"; do
    command -v "$tool" > /dev/null || { echo "fuzz: $tool not found" >&2; return 2; }
  done
  local generator=()
  if command -v ninja > /dev/null; then generator=(-G Ninja); fi
  echo "== configuring $fuzz_build"
  mkdir -p "$fuzz_build"
  CC=$cc CXX=$cxx cmake -S "$fuzz_root" -B "$fuzz_build" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFRAMEWALK_FUZZ=ON -DFRAMEWALK_SANITIZE=ON \
    -DFRAMEWALK_TESTS=OFF -DFRAMEWALK_BENCH=OFF > "$fuzz_build/configure.log" 2>&1 \
    || { cat "$fuzz_build/configure.log" >&2; return 2; }
  echo "== building $*"
  cmake --build "$fuzz_build" -j "${FUZZ_JOBS:-$(nproc)}" --target "$@"
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# The libFuzzer flags every run shares. The timeout is generous so that a slow
# machine does not turn an ordinary input into a finding.
fuzz_flags() {
  echo "-max_len=$(fuzz_max_len "$1") -timeout=60 -rss_limit_mb=2048 -print_final_stats=1"
}

# fuzz_keep_findings TARGET ARTIFACT_DIR LOG: copies crash/timeout/oom/leak
# inputs to fuzz/regressions/TARGET/ (replayed by tests/fuzz/replay_test.cpp)
# and prints what failed; returns 1 when there was any.
fuzz_keep_findings() {
  local target=$1 artifacts=$2 log=$3 status=$4 h
  shopt -s nullglob
  local hits=("$artifacts"/crash-* "$artifacts"/timeout-* "$artifacts"/oom-* "$artifacts"/leak-*)
  shopt -u nullglob
  [[ $status -eq 0 && ${#hits[@]} -eq 0 ]] && return 0
  echo "!! $target failed (exit status $status); log: $log" >&2
  grep -E -m 20 '(ERROR|WARNING|SUMMARY|runtime error|FUZZ_CHECK|disagreement|==[0-9]+==)' "$log" >&2 || true
  mkdir -p "$fuzz_root/fuzz/regressions/$target"
  for h in "${hits[@]}"; do
    cp "$h" "$fuzz_root/fuzz/regressions/$target/"
    echo "!! saved fuzz/regressions/$target/$(basename "$h") ($(stat -c %s "$h") bytes)" >&2
    # Small inputs go into the log too, so that a CI log alone reproduces them.
    if [[ $(stat -c %s "$h") -le 4096 ]]; then echo "!! base64: $(base64 -w0 "$h")" >&2; fi
  done
  return 1
}
