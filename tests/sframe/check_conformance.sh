#!/usr/bin/env bash
# Conformance of the SFrame generator: for every x86-64 ELF executable and
# shared object with CFI in the given places (default: the machine's
# libraries and programs, and libLLVM-16), `framewalk sframe --generate`
# writes a copy with .sframe, and `framewalk check` compares that SFrame with
# the file's CFI at every PC. Wherever SFrame claims coverage it must agree:
# 0 disagreements, and no SFrame coverage where CFI has none. Prints how many
# files, FDEs and rows were compared and the share represented; exits 1 on any
# failure, listing the files (checker output kept in $FRAMEWALK_DIFF_DIR).
#
#   check_conformance.sh FRAMEWALK [DIR_OR_FILE...]
#   FRAMEWALK_SFRAME_VERSION=2 check_conformance.sh ...   (default 3)
#   FRAMEWALK_ELF_MACHINE=s390x check_conformance.sh ...  (default x86-64)
set -u
framewalk=${1:?usage: check_conformance.sh FRAMEWALK [DIR_OR_FILE...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(/usr/lib/x86_64-linux-gnu /lib64 /usr/bin /usr/lib/x86_64-linux-gnu/libLLVM-16.so.1)
version=${FRAMEWALK_SFRAME_VERSION:-3}
diffdir=${FRAMEWALK_DIFF_DIR:-$(mktemp -d)}
workdir=$(mktemp -d)
trap 'rm -rf "$workdir"' EXIT
mkdir -p "$diffdir"
# ELF header bytes 0..19 in hex: class/data, then e_type (EXEC or DYN) and e_machine.
case ${FRAMEWALK_ELF_MACHINE:-x86-64} in
  s390x) header='^7f454c460202.{20}(0002|0003)0016' ;;
  *) header='^7f454c46.{24}(0200|0300)3e00' ;;
esac
export framewalk diffdir workdir version header

# One line per file: STATUS cfi_fdes sframe_fdes rows represented_fdes represented_bytes cfi_bytes FILE
check_one() {
  f=$1
  # Executables and shared objects of the machine only.
  head -c 20 "$f" 2>/dev/null | od -An -tx1 | tr -d ' \n' | grep -qE "$header" || exit 0
  name=$(echo "$f" | tr '/' '_')
  out="$workdir/$name"
  if ! gen=$("$framewalk" sframe --generate --sframe-version="$version" "$f" -o "$out" 2>&1); then
    rm -f "$out"
    case "$gen" in *"no .eh_frame or .debug_frame"*) exit 0 ;; esac
    echo "$gen" >"$diffdir/$name.generate"
    echo "genfail 0 0 0 0 0 0 $f"
    exit 0
  fi
  summary=$("$framewalk" check --summary "$f" --sframe "$out" 2>&1)
  rc=$?
  num() { echo "$summary" | grep -oE "[0-9]+ $1" | head -1 | grep -oE '^[0-9]+'; }
  cfi_fdes=$(num 'CFI FDEs'); sf_fdes=$(num 'SFrame FDEs'); rows=$(num 'rows compared')
  sf_only=$(echo "$summary" | grep -oE 'sframe-only [0-9]+' | grep -oE '[0-9]+$')
  repr=$(echo "$gen" | grep -oE 'represented [0-9]+ of [0-9]+ [^ ]+ FDEs \([^)]*\), [0-9]+ of [0-9]+' | head -1)
  repr_fdes=$(echo "$repr" | awk '{print $2}')
  repr_bytes=$(echo "$repr" | awk '{print $(NF-2)}')
  cfi_bytes=$(echo "$repr" | awk '{print $NF}')
  status=same
  if [ "$rc" -ne 0 ] || [ "${sf_only:-1}" != 0 ] || [ -z "$rows" ]; then
    status=diff
    { echo "$gen"; "$framewalk" check --limit 20 "$f" --sframe "$out" 2>&1; } >"$diffdir/$name.check"
  fi
  rm -f "$out"
  echo "$status ${cfi_fdes:-0} ${sf_fdes:-0} ${rows:-0} ${repr_fdes:-0} ${repr_bytes:-0} ${cfi_bytes:-0} $f"
}
export -f check_one

results=$(for t in "${targets[@]}"; do
  if [ -d "$t" ]; then find "$t" -maxdepth 1 -type f; else echo "$t"; fi
done | sort -u | xargs -P "$(nproc)" -I{} bash -c 'check_one "$@"' _ {})

files=$(echo "$results" | grep -c '^\(same\|diff\|genfail\) ' || true)
bad=$(echo "$results" | grep -c '^\(diff\|genfail\) ' || true)
read -r cfi_fdes sf_fdes rows repr_fdes repr_bytes cfi_bytes < <(echo "$results" |
  awk '{a+=$2; b+=$3; c+=$4; d+=$5; e+=$6; f+=$7} END {printf "%d %d %d %d %d %d\n", a, b, c, d, e, f}')
share() { awk -v p="$1" -v w="$2" 'BEGIN {printf "%.1f%%", w ? 100 * p / w : 100}'; }
echo "sframe conformance (v$version): $files files, $cfi_fdes CFI FDEs, $sf_fdes SFrame FDEs, $rows rows compared;" \
     "represented $repr_fdes FDEs ($(share "$repr_fdes" "$cfi_fdes")), $repr_bytes of $cfi_bytes code bytes" \
     "($(share "$repr_bytes" "$cfi_bytes")); $bad files failed"
if [ "$bad" -gt 0 ]; then
  echo "$results" | grep '^\(diff\|genfail\) ' | head -20
  echo "details in $diffdir"
  exit 1
fi
exit 0
