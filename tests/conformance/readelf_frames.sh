#!/usr/bin/env bash
# Conformance: `framewalk cfi --format=readelf FILE` must equal
# `readelf --debug-dump=frames-interp FILE` byte for byte, for every ELF file
# with CFI in the given directories (default: the machine's libraries and
# programs). Prints how many files, FDEs and rows were compared; exits 1 on
# any difference, listing the files (diffs are kept in $FRAMEWALK_DIFF_DIR).
set -u
framewalk=${1:?usage: readelf_frames.sh FRAMEWALK [DIR_OR_FILE...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(/usr/lib/x86_64-linux-gnu /lib64 /usr/bin /usr/lib/x86_64-linux-gnu/libLLVM-16.so.1)
diffdir=${FRAMEWALK_DIFF_DIR:-$(mktemp -d)}
mkdir -p "$diffdir"
export framewalk diffdir

compare_one() {
  f=$1
  # Only ELF executables and shared objects (relocatable objects are shown
  # unrelocated by design, while readelf applies their relocations).
  head -c 18 "$f" 2>/dev/null | od -An -tx1 | tr -d ' \n' | grep -qE '^7f454c46.{24}(0200|0300)' || exit 0
  exp=$(mktemp); got=$(mktemp)
  readelf --debug-dump=frames-interp "$f" >"$exp" 2>/dev/null
  if ! grep -q ' FDE \| CIE ' "$exp"; then rm -f "$exp" "$got"; exit 0; fi
  "$framewalk" cfi --format=readelf "$f" >"$got" 2>/dev/null
  fdes=$(grep -c ' FDE ' "$exp")
  rows=$(grep -cE '^[0-9a-f]{8,16} [^ ]' "$exp")
  if cmp -s "$exp" "$got"; then
    echo "same $fdes $rows $f"
  else
    name=$(echo "$f" | tr '/' '_')
    diff "$exp" "$got" | head -50 >"$diffdir/$name.diff"
    echo "diff $fdes $rows $f"
  fi
  rm -f "$exp" "$got"
}
export -f compare_one

results=$(for t in "${targets[@]}"; do
  if [ -d "$t" ]; then find "$t" -maxdepth 1 -type f; else echo "$t"; fi
done | sort -u | xargs -P "$(nproc)" -I{} bash -c 'compare_one "$@"' _ {})

files=$(echo "$results" | grep -c '^\(same\|diff\) ' || true)
differ=$(echo "$results" | grep -c '^diff ' || true)
fdes=$(echo "$results" | awk '{s+=$2} END {print s+0}')
rows=$(echo "$results" | awk '{s+=$3} END {print s+0}')
echo "readelf conformance: compared $files files, $fdes FDEs, $rows rows; $differ files differ"
if [ "$differ" -gt 0 ]; then
  echo "$results" | grep '^diff ' | head -20
  echo "diffs in $diffdir"
  exit 1
fi
exit 0
