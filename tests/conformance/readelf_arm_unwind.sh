#!/usr/bin/env bash
# Conformance: `framewalk exidx --format=readelf FILE` must equal `readelf -u
# FILE` byte for byte (stdout and exit status) for every ARM executable and
# shared library with an SHT_ARM_EXIDX section among the given targets
# (default: everything under /usr/arm-linux-gnueabihf). A target is a file or
# a directory (searched recursively). Relocatable objects are left out:
# framewalk exidx does not apply their R_ARM_PREL31 relocations yet. Prints
# how many files and index entries were compared; exits 1 on any difference
# (diffs are kept in $FRAMEWALK_DIFF_DIR).
set -u
framewalk=${1:?usage: readelf_arm_unwind.sh FRAMEWALK [DIR_OR_FILE...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(/usr/arm-linux-gnueabihf)
diffdir=${FRAMEWALK_DIFF_DIR:-$(mktemp -d)}
mkdir -p "$diffdir"
export framewalk diffdir
. "$(dirname "${BASH_SOURCE[0]}")/compare_lib.sh"

# One line per file: same|diff ENTRIES FILE.
compare_one() {
  f=$1
  magic=$(head -c 20 "$f" 2>/dev/null | od -An -tx1 | tr -d ' \n')
  case $magic in
    7f454c4601??????????????????????0[23]002800) ;;  # ELF32, ET_EXEC or ET_DYN, little-endian EM_ARM
    *) exit 0 ;;
  esac
  readelf -SW "$f" 2>/dev/null | grep -q ' ARM_EXIDX ' || exit 0
  exp=$(mktemp); got=$(mktemp)
  readelf -u "$f" >"$exp" 2>/dev/null
  exp_status=$?
  "$framewalk" exidx --format=readelf "$f" >"$got" 2>/dev/null
  got_status=$?
  entries=$(grep -cE '^0x[0-9a-f]+( <.*>)?: ' "$exp")
  verdict=same
  cmp -s "$exp" "$got" || verdict=diff
  [ "$exp_status" != "$got_status" ] && verdict=diff
  [ $verdict = diff ] && keep_diff "$f" "$exp" "$got" "$exp_status" "$got_status"
  echo "$verdict $entries $f"
  rm -f "$exp" "$got"
}
export -f compare_one

results=$(for t in "${targets[@]}"; do
  if [ -d "$t" ]; then find "$t" -type f; else echo "$t"; fi
done | sort -u | xargs -r -P "$(nproc)" -I{} bash -c 'compare_one "$@"' _ {})

files=$(echo "$results" | grep -c '^\(same\|diff\) ' || true)
entries=$(echo "$results" | awk 'NF {s+=$2} END {print s+0}')
differ=$(echo "$results" | grep -c '^diff ' || true)
echo "readelf -u conformance: compared $files ARM files, $entries index entries; $differ differ"
finish_comparison "$results"
