#!/usr/bin/env bash
# Conformance: `framewalk cfi --format=readelf FILE` must equal
# `readelf --debug-dump=frames-interp FILE` byte for byte, for every ELF file
# with CFI and every ar archive among the given targets (default: the machine's
# libraries and programs, and every archive under /usr/lib and /lib). A target
# is a file, a directory (its files, not its subdirectories), or --archives:
# every *.a under /usr/lib and /lib. On archives the exit status must be
# readelf's too. Prints how many files, members, FDEs and rows were compared;
# exits 1 on any difference, listing the files (diffs are kept in
# $FRAMEWALK_DIFF_DIR).
set -u
framewalk=${1:?usage: readelf_frames.sh FRAMEWALK [DIR_OR_FILE|--archives...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(/usr/lib/x86_64-linux-gnu /lib64 /usr/bin /usr/lib/x86_64-linux-gnu/libLLVM-16.so.1
                                      --archives)
diffdir=${FRAMEWALK_DIFF_DIR:-$(mktemp -d)}
mkdir -p "$diffdir"
export framewalk diffdir
. "$(dirname "${BASH_SOURCE[0]}")/compare_lib.sh"

# One line per file: same|diff elf|archive FDES ROWS MEMBERS FILE.
compare_one() {
  f=$1
  magic=$(head -c 18 "$f" 2>/dev/null | od -An -tx1 | tr -d ' \n')
  case $magic in
    213c617263683e0a*|213c7468696e3e0a*) kind=archive ;;  # "!<arch>\n", "!<thin>\n"
    7f454c46????????????????????????0[123]00*) kind=elf ;;  # ET_REL, ET_EXEC, ET_DYN
    *) exit 0 ;;
  esac
  exp=$(mktemp); got=$(mktemp)
  readelf --debug-dump=frames-interp "$f" >"$exp" 2>/dev/null
  exp_status=$?
  if [ $kind = elf ] && ! grep -q ' FDE \| CIE ' "$exp"; then rm -f "$exp" "$got"; exit 0; fi
  "$framewalk" cfi --format=readelf "$f" >"$got" 2>/dev/null
  got_status=$?
  fdes=$(grep -c ' FDE ' "$exp")
  rows=$(grep -cE '^[0-9a-f]{8,16} [^ ]' "$exp")
  members=0
  [ $kind = archive ] && members=$(grep -c '^File: ' "$exp")
  verdict=same
  cmp -s "$exp" "$got" || verdict=diff
  [ $kind = archive ] && [ $exp_status != $got_status ] && verdict=diff
  [ $verdict = diff ] && keep_diff "$f" "$exp" "$got" "$exp_status" "$got_status"
  echo "$verdict $kind $fdes $rows $members $f"
  rm -f "$exp" "$got"
}
export -f compare_one

results=$(for t in "${targets[@]}"; do
  if [ "$t" = --archives ]; then
    # /lib may be a link to /usr/lib: list each archive once, by its real path.
    find -L /usr/lib /lib -name '*.a' -type f 2>/dev/null | xargs -r readlink -f
  elif [ -d "$t" ]; then find "$t" -maxdepth 1 -type f; else echo "$t"; fi
done | sort -u | xargs -r -P "$(nproc)" -I{} bash -c 'compare_one "$@"' _ {})

count() { echo "$results" | awk -v k="$1" -v c="$2" '$2 == k {s += (c ? $c : 1)} END {print s + 0}'; }
files=$(count elf 0)
archives=$(count archive 0)
members=$(count archive 5)
differ=$(echo "$results" | grep -c '^diff ' || true)
fdes=$(echo "$results" | awk '{s+=$3} END {print s+0}')
rows=$(echo "$results" | awk '{s+=$4} END {print s+0}')
echo "readelf conformance: compared $files ELF files and $archives archives ($members members), $fdes FDEs, $rows rows; $differ differ"
finish_comparison "$results"
