#!/usr/bin/env bash
# AArch64 SFrame against binutils. The fixtures (tests/sframe/fixtures/
# aarch64_sframe*.c, -O0, -O2, -mbranch-protection=standard, pac-ret+b-key,
# pac-ret+leaf; aarch64_sframe_cfi.S, hand-written CFI) are built with
# `-Wa,--gsframe` as objects, a program and a shared library (and as
# big-endian objects and shared libraries), then:
#   1. `framewalk sframe F` must print what `objdump --sframe F` prints;
#   2. `framewalk check` must find gas's SFrame in agreement with the CFI
#      (where gas 2.40 is wrong, aarch64_sframe_cfi.S, the differences must
#      be exactly the known ones);
#   3. the same sources built without --gsframe get SFrame from `framewalk
#      sframe --generate` (v1, which objdump 2.40 reads, and v3), which
#      `framewalk check` must find in agreement with the CFI, objdump must
#      dump as framewalk does, and whose functions are compared FRE by FRE
#      with gas's: the counts are printed, the differences listed;
#   4. every shared library of the cross sysroot ($AARCH64_SYSROOT_LIB,
#      default /usr/aarch64-linux-gnu/lib, when it exists) gets framewalk's
#      SFrame (v3 and v1), which `framewalk check` must find in agreement
#      with its CFI (v1 also dumped against objdump);
#   5. with qemu-aarch64: aarch64_sframe_abort.c (PAC key A, key B, -O0; PIE
#      and not) with framewalk's SFrame, run until it aborts; its core is
#      unwound from CFI and with --source=sframe (libc and ld.so with
#      framewalk's SFrame too): the same PCs, outermost both times, every
#      frame but the first from SFrame.
# Exit 77 (skipped) without an AArch64 cross compiler.
#
#   aarch64_conformance.sh FRAMEWALK SOURCE_DIR [WORK_DIR]
set -u
framewalk=${1:?usage: aarch64_conformance.sh FRAMEWALK SOURCE_DIR [WORK_DIR]}
src=${2:?usage: aarch64_conformance.sh FRAMEWALK SOURCE_DIR [WORK_DIR]}
work=${3:-$(mktemp -d)}
# Absolute: stage 5 runs it from the cores' directories.
framewalk=$(cd "$(dirname "$framewalk")" && pwd)/$(basename "$framewalk")
fixtures=$src/tests/sframe/fixtures
cc=${AARCH64_CC:-aarch64-linux-gnu-gcc}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "skipped: $cc not found"
  exit 77
fi
objdump=aarch64-linux-gnu-objdump
if ! command -v "$objdump" >/dev/null 2>&1; then
  objdump=objdump
  if ! objdump -i 2>/dev/null | grep -q aarch64; then
    echo "skipped: no objdump that reads AArch64 files"
    exit 77
  fi
fi
if ! echo 'void f(void){}' | "$cc" -x c -c -Wa,--gsframe -o /dev/null - 2>/dev/null; then
  echo "skipped: $cc cannot emit SFrame (-Wa,--gsframe)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
dumped=0
checked=0
generated=0

# 1. The dump against objdump's.
compare_dump() {
  local f=$1
  "$objdump" --sframe "$f" >"$f.objdump" 2>&1
  "$framewalk" sframe "$f" >"$f.framewalk" 2>&1
  if cmp -s "$f.objdump" "$f.framewalk"; then
    dumped=$((dumped + 1))
  else
    fail "framewalk sframe $f differs from $objdump --sframe:"
    diff "$f.objdump" "$f.framewalk" | head -20
  fi
}

# 2. `framewalk check`; $2: the functions allowed to disagree (a regex; empty: none).
check_file() {
  local f=$1 allowed=${2:-} sframe=${3:-}
  local out
  if [ -n "$sframe" ]; then out=$("$framewalk" check --limit 0 "$f" --sframe "$sframe" 2>&1)
  else out=$("$framewalk" check --limit 0 "$f" 2>&1); fi
  echo "$out" >"$f.check"
  checked=$((checked + 1))
  if ! echo "$out" | grep -q 'sframe-only 0 ranges'; then fail "check $f: SFrame covers what CFI does not"; echo "$out" | tail -5; fi
  if echo "$out" | grep -q ' 0 rows compared'; then fail "check $f: nothing compared"; fi
  local differ
  differ=$(echo "$out" | grep '^differ ' || true)
  if [ -z "$allowed" ]; then
    [ -z "$differ" ] || { fail "check $f: disagreements"; echo "$out" | head -20; }
  else
    local unexpected expected
    unexpected=$(echo "$differ" | grep -vE "$allowed" | grep . || true)
    [ -z "$unexpected" ] || { fail "check $f: unexpected disagreements"; echo "$unexpected"; }
    # Every allowed function must still disagree: gas's known mistakes are the test's oracle too.
    for fn in ${allowed//|/ }; do
      echo "$differ" | grep -qE " $fn[+:]" || fail "check $f: $fn was expected to disagree"
    done
  fi
}

nm=${cc%gcc}nm
command -v "$nm" >/dev/null 2>&1 || nm=nm
# Per-function FRE blocks of FILE's objdump-format DUMP, by function name (a
# file built without --gsframe may lay its code out elsewhere):
# "NAME, size = N bytes[, pauth = B key]<TAB>|+OFFSET CFA FP RA|...".
function_blocks() {
  local file=$1 dump=$2
  "$nm" --defined-only "$file" | awk '$2 ~ /^[tTwW]$/ { print $1, $3 }' |
  awk 'function num(s,   i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0
                                 for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
                                 return v }
       function flush() { if (key != "") print key "\t" rows; key = "" }
       FNR == NR && FILENAME == "-" { name[num($1)] = $2; next }
       /func idx/ { flush(); rest = $0; sub(/.*: pc = /, "", rest); pc = num(substr(rest, 1, index(rest, ",") - 1))
                    key = ((pc in name) ? name[pc] : "?" rest) substr(rest, index(rest, ",")); rows = ""; next }
       key != "" && /^    [0-9a-f]+  / { off = sprintf("+%x", num($1) - pc); $1 = off; rows = rows "|" $0 }
       END { flush() }' - "$dump" | sort
}

same_functions=0
differing_functions=0
missing_functions=0
gas_functions=0
# 3. gas's functions against framewalk's, FRE by FRE (both v1, dumped as 2.40 prints them).
compare_functions() {
  local gas_file=$1 fw_file=$2 label=$3
  local gas_dump=$gas_file.objdump fw_dump=$fw_file.objdump
  function_blocks "$gas_file" "$gas_dump" >"$gas_dump.blocks"
  function_blocks "$fw_file" "$fw_dump" >"$fw_dump.blocks"
  while IFS=$'\t' read -r key rows; do
    gas_functions=$((gas_functions + 1))
    local mine
    mine=$(awk -F'\t' -v k="$key" '$1 == k { print $2 }' "$fw_dump.blocks")
    if [ -z "$mine" ]; then
      missing_functions=$((missing_functions + 1))
      echo "  $label: $key: gas has it, framewalk left it out"
    elif [ "$mine" = "$rows" ]; then
      same_functions=$((same_functions + 1))
    else
      differing_functions=$((differing_functions + 1))
      echo "  $label: $key: FREs differ"
      echo "    gas:       $rows"
      echo "    framewalk: $mine"
    fi
  done <"$gas_dump.blocks"
}

generate() {
  local in=$1 out=$2 version=$3
  if "$framewalk" sframe --generate --sframe-version="$version" "$in" -o "$out" >"$out.generate" 2>&1; then
    generated=$((generated + 1))
    return 0
  fi
  fail "framewalk sframe --generate $in"
  cat "$out.generate"
  return 1
}

variants=(
  "O0|-O0"
  "O2|-O2"
  "pac|-O2 -mbranch-protection=standard"
  "pacb|-O2 -mbranch-protection=pac-ret+b-key"
  "pacleaf|-O2 -mbranch-protection=pac-ret+leaf"
)
c_fixture=$fixtures/aarch64_sframe.c
c_main=$fixtures/aarch64_sframe_main.c
for v in "${variants[@]}"; do
  name=${v%%|*}
  flags=${v#*|}
  d=$work/$name
  mkdir -p "$d"
  # shellcheck disable=SC2086
  {
    "$cc" $flags -Wa,--gsframe -c "$c_fixture" -o "$d/fixture.o" &&
    "$cc" $flags -mbig-endian -Wa,--gsframe -c "$c_fixture" -o "$d/fixture_be.o" &&
    "$cc" $flags -Wa,--gsframe "$c_fixture" "$c_main" -o "$d/prog" &&
    "$cc" $flags -Wa,--gsframe -fPIC -shared "$c_fixture" -o "$d/lib.so" &&
    "$cc" $flags "$c_fixture" "$c_main" -o "$d/prog.nosframe" &&
    "$cc" $flags -fPIC -shared "$c_fixture" -o "$d/lib.nosframe.so" &&
    "$cc" $flags -mbig-endian -Wa,--gsframe -fPIC -shared -nostdlib "$c_fixture" -o "$d/lib_be.so" &&
    "$cc" $flags -mbig-endian -fPIC -shared -nostdlib "$c_fixture" -o "$d/lib_be.nosframe.so"
  } || { fail "$name: cannot build the fixtures"; continue; }
  for f in "$d/fixture.o" "$d/fixture_be.o" "$d/prog" "$d/lib.so" "$d/lib_be.so"; do compare_dump "$f"; done
  check_file "$d/prog"
  check_file "$d/lib.so"
  check_file "$d/lib_be.so"
  for pair in "prog.nosframe|prog" "lib.nosframe.so|lib.so" "lib_be.nosframe.so|lib_be.so"; do
    plain=${pair%%|*}
    gas=${pair#*|}
    for version in 1 3; do
      out=$d/$plain.v$version
      generate "$d/$plain" "$out" "$version" || continue
      check_file "$d/$plain" "" "$out"
      check_file "$out"
      # objdump 2.40 reads v1 only.
      [ "$version" = 1 ] && compare_dump "$out"
    done
    compare_functions "$d/$gas" "$d/$plain.v1" "$name/$gas"
  done
done

# The hand-written CFI: gas 2.40 ignores `.cfi_undefined x30` (cfi_outermost),
# writes CFA = sp for a CFA on x16 (cfi_cfa_x16) and the x29 offset in the RA
# slot for x29 saved without x30 (cfi_fp_only); all three disagree with the CFI.
d=$work/cfi
mkdir -p "$d"
if "$cc" -Wa,--gsframe -c "$fixtures/aarch64_sframe_cfi.S" -o "$d/cfi.o" &&
   "$cc" -mbig-endian -Wa,--gsframe -c "$fixtures/aarch64_sframe_cfi.S" -o "$d/cfi_be.o" &&
   "$cc" -Wa,--gsframe -shared -nostdlib "$fixtures/aarch64_sframe_cfi.S" -o "$d/cfi.so" &&
   "$cc" -shared -nostdlib "$fixtures/aarch64_sframe_cfi.S" -o "$d/cfi.nosframe.so" &&
   "$cc" -mbig-endian -Wa,--gsframe -shared -nostdlib "$fixtures/aarch64_sframe_cfi.S" -o "$d/cfi_be.so" &&
   "$cc" -mbig-endian -shared -nostdlib "$fixtures/aarch64_sframe_cfi.S" -o "$d/cfi_be.nosframe.so"; then
  for f in "$d/cfi.o" "$d/cfi_be.o" "$d/cfi.so" "$d/cfi_be.so"; do compare_dump "$f"; done
  for lib in cfi cfi_be; do
    check_file "$d/$lib.so" "cfi_outermost|cfi_cfa_x16|cfi_fp_only"
    for version in 1 3; do
      out=$d/$lib.nosframe.so.v$version
      generate "$d/$lib.nosframe.so" "$out" "$version" || continue
      check_file "$out"
      [ "$version" = 1 ] && compare_dump "$out"
    done
    # v1 cannot say "RA undefined" nor FLEX: framewalk leaves those four out and says why.
    for why in "RA-undefined FRE needs SFrame v2 or later" "register rule needs FLEX (v3)" \
               "CFA based on a register other than sp/x29 needs FLEX (v3)" \
               "FP saved without the RA needs FLEX (v3): no RA padding word on AArch64"; do
      grep -qF "$why" "$d/$lib.nosframe.so.v1.generate" || fail "$lib.nosframe.so v1: no \"$why\" in the report"
    done
    grep -q 'represented 9 of 9 ' "$d/$lib.nosframe.so.v3.generate" || fail "$lib.nosframe.so v3: not every FDE represented"
    compare_functions "$d/$lib.so" "$d/$lib.nosframe.so.v1" "cfi/$lib.so"
  done
else
  fail "cannot build aarch64_sframe_cfi.S"
fi

# 4. The sysroot's libraries.
sysroot_lib=${AARCH64_SYSROOT_LIB:-/usr/aarch64-linux-gnu/lib}
sys_files=0
sys_cfi_fdes=0
sys_represented=0
if [ -d "$sysroot_lib" ]; then
  d=$work/sysroot
  mkdir -p "$d"
  for f in "$sysroot_lib"/*.so*; do
    [ -f "$f" ] && [ ! -L "$f" ] || continue
    # AArch64 (e_machine 183) shared objects only.
    head -c 20 "$f" | od -An -tx1 | tr -d ' \n' | grep -qE '^7f454c46.{24}0300b700' || continue
    name=$(basename "$f")
    for version in 3 1; do
      out=$d/$name.v$version
      if ! "$framewalk" sframe --generate --sframe-version="$version" "$f" -o "$out" >"$out.generate" 2>&1; then
        grep -q 'no .eh_frame or .debug_frame' "$out.generate" && continue 2
        fail "framewalk sframe --generate $f"
        cat "$out.generate"
        continue
      fi
      generated=$((generated + 1))
      check_file "$f" "" "$out"
      if [ "$version" = 3 ]; then
        sys_files=$((sys_files + 1))
        read -r repr all < <(grep -oE 'represented [0-9]+ of [0-9]+' "$out.generate" | awk '{print $2, $4}')
        sys_represented=$((sys_represented + ${repr:-0}))
        sys_cfi_fdes=$((sys_cfi_fdes + ${all:-0}))
      else
        compare_dump "$out"
      fi
      rm -f "$out"
    done
  done
fi

# 5. Cores unwound with SFrame only.
qemu=${AARCH64_QEMU:-qemu-aarch64}
stacks=0
stack_frames=0
if command -v "$qemu" >/dev/null 2>&1 && [ -f "$sysroot_lib/libc.so.6" ]; then
  d=$work/stack
  mkdir -p "$d/sysroot/lib"
  for lib in libc.so.6 ld-linux-aarch64.so.1; do
    "$framewalk" sframe --generate "$sysroot_lib/$lib" -o "$d/sysroot/lib/$lib" >/dev/null || fail "generate $lib"
  done
  pcs() { grep -oE '"pc":"0x[0-9a-f]+"' "$1" | tr '\n' ' '; }
  for v in "pac|-O2 -mbranch-protection=standard -fPIE -pie" "pacb|-O2 -mbranch-protection=pac-ret+b-key -no-pie" \
           "O0|-O0 -no-pie"; do
    name=${v%%|*}
    flags=${v#*|}
    run=$d/$name
    mkdir -p "$run"
    # shellcheck disable=SC2086
    "$cc" $flags "$fixtures/aarch64_sframe_abort.c" -o "$run/plain" || { fail "stack $name: cannot build"; continue; }
    "$framewalk" sframe --generate "$run/plain" -o "$run/prog" >/dev/null || { fail "stack $name: generate"; continue; }
    # The guest's core only: the host qemu's own is kept empty.
    (cd "$run" && ulimit -c unlimited && echo 0 >/proc/self/coredump_filter &&
     exec "$qemu" -L "${sysroot_lib%/lib}" ./prog) >/dev/null 2>&1
    rm -f "$run/core"
    core=$(ls "$run"/qemu_prog_*.core 2>/dev/null | head -1)
    [ -n "$core" ] || { fail "stack $name: qemu wrote no core"; continue; }
    (cd "$run" && "$framewalk" stack --core "$core" --sysroot "${sysroot_lib%/lib}" --format=json >cfi.json 2>/dev/null)
    (cd "$run" && "$framewalk" stack --core "$core" --sysroot "$d/sysroot" --source=sframe --format=json \
       >sframe.json 2>/dev/null)
    stacks=$((stacks + 1))
    n=$(grep -c '"source":"sframe"' "$run/sframe.json")
    all=$(grep -c '"pc":' "$run/sframe.json")
    stack_frames=$((stack_frames + n))
    [ "$(pcs "$run/cfi.json")" = "$(pcs "$run/sframe.json")" ] || fail "stack $name: SFrame frames differ from CFI's"
    grep -q '"stop":"outermost"' "$run/sframe.json" || fail "stack $name: the SFrame walk did not end outermost"
    [ "$n" -ge 40 ] && [ "$n" -eq $((all - 1)) ] || fail "stack $name: $n of $all frames from SFrame"
    rm -f "$core"
  done
  rm -rf "$d/sysroot"
fi

echo "aarch64 sframe conformance: $dumped dumps identical to $objdump --sframe;" \
     "$checked framewalk check runs; $generated sections generated;" \
     "gas's $gas_functions functions against framewalk's generated SFrame: $same_functions identical FREs," \
     "$differing_functions differ, $missing_functions left out by framewalk;" \
     "sysroot: $sys_files libraries, $sys_represented of $sys_cfi_fdes CFI FDEs in framewalk's v3;" \
     "cores: $stacks unwound with SFrame only as with CFI ($stack_frames frames from SFrame); $failures failures"
[ "$failures" -eq 0 ]
