#!/usr/bin/env bash
# s390x SFrame generation against the CFI it comes from. The fixture
# (tests/sframe/fixtures/s390x_sframe.c: stmg-saved r11/r14/r15, the CFA on
# r11 for alloca, a leaf) is cross-built at -O0 and -O2 as a program and a
# shared library; with every library of the cross sysroot (libc, libm,
# ld64.so.1, libgcc_s, libstdc++...: $S390X_SYSROOT_LIB, default
# /usr/s390x-linux-gnu/lib; libc keeps r11 and r15 in FPRs in its leaves,
# ld64.so.1 has a CFA on r1, FLEX in v3), each gets framewalk's SFrame in
# v3 (FLEX for FPR-held registers) and v2 (the (regnum << 1) | 1 words),
# and `framewalk check` must find 0 disagreements and no SFrame-only
# coverage (check_conformance.sh, which prints the files, FDEs, rows and the
# share represented). The generated sections must dump (`framewalk sframe`)
# as s390x, CFA sp+160 at function entry, and v1 (no s390x ABI) must be refused.
# Exit 77 (skipped) without an s390x cross compiler.
#
#   s390x_conformance.sh FRAMEWALK SOURCE_DIR [WORK_DIR]
set -u
framewalk=${1:?usage: s390x_conformance.sh FRAMEWALK SOURCE_DIR [WORK_DIR]}
src=${2:?usage: s390x_conformance.sh FRAMEWALK SOURCE_DIR [WORK_DIR]}
work=${3:-$(mktemp -d)}
cc=${S390X_CC:-s390x-linux-gnu-gcc}
lib=${S390X_SYSROOT_LIB:-/usr/s390x-linux-gnu/lib}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "skipped: $cc not found"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work/files"

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

fixture=$src/tests/sframe/fixtures/s390x_sframe.c
for opt in O0 O2; do
  "$cc" -$opt -o "$work/files/prog-$opt" "$fixture" || fail "cannot build prog-$opt"
  "$cc" -$opt -fPIC -shared -o "$work/files/libfixture-$opt.so" "$fixture" || fail "cannot build libfixture-$opt.so"
done
targets=("$work/files")
[ -d "$lib" ] && targets+=("$lib")

for version in 3 2; do
  FRAMEWALK_ELF_MACHINE=s390x FRAMEWALK_SFRAME_VERSION=$version FRAMEWALK_DIFF_DIR="$work/diff-v$version" \
    "$src/tests/sframe/check_conformance.sh" "$framewalk" "${targets[@]}" || fail "v$version: check_conformance"
done

# The generated section reads back and dumps as s390x.
for version in 3 2; do
  out=$work/prog-O2.v$version
  if "$framewalk" sframe --generate --sframe-version=$version "$work/files/prog-O2" -o "$out" >/dev/null; then
    dump=$("$framewalk" sframe "$out") || fail "v$version: framewalk sframe cannot dump the generated section"
    echo "$dump" | grep -q "file format elf64-s390" || fail "v$version: the dump is not of an s390x file"
    # The CFA offsets read back from (offset - 160) / 8: every function starts at sp+160.
    echo "$dump" | grep -q "  sp+160 " || fail "v$version: no CFA of sp+160 in the dump"
    echo "$dump" | grep -q "SFRAME_VERSION_$version" || fail "v$version: the dump does not name version $version"
  else
    fail "v$version: cannot generate for prog-O2"
  fi
done
if msg=$("$framewalk" sframe --generate --sframe-version=1 "$work/files/prog-O2" -o "$work/v1" 2>&1); then
  fail "v1 generated for s390x"
else
  echo "$msg" | grep -q "SFrame v1 has no s390x ABI" || fail "v1 refused with: $msg"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures failures (work in $work)"
  exit 1
fi
rm -rf "$work"
echo "s390x SFrame conformance: ok"
exit 0
