#!/usr/bin/env bash
# The ABI of libframewalk.so: its exported symbols and the public types they
# reach (include/framewalk/), as abidw (Debian's abigail-tools) records them.
#   abi.sh check LIB   compare with abi/libframewalk.abi.xz: a removed or
#                      changed function or type fails (exit 1); added ones pass
#   abi.sh update LIB  record LIB's ABI as the new baseline (an intended
#                      change: bump the version node of src/capi/libframewalk.map
#                      for an incompatible one)
# Exit 77 (skipped) when abidw is missing.
set -euo pipefail
mode=$1 lib=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
baseline=$top/abi/libframewalk.abi.xz
command -v abidw >/dev/null && command -v abidiff >/dev/null || { echo "skip: abigail-tools not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Only the exported symbols, and only the types the public headers define.
{
  echo "[abi_whitelist]"
  nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort -u | sed 's/^/  /'
  if [ -f "$baseline" ]; then
    xz -dc "$baseline" | grep -o "<elf-symbol name='[^']*'" | sed "s/<elf-symbol name='//; s/'$//; s/^/  /"
  fi
} | awk '!seen[$0]++' >"$work/symbols"
abidw --kmi-whitelist "$work/symbols" --headers-dir "$top/include/framewalk" --drop-private-types \
      --no-corpus-path --no-comp-dir-path "$lib" >"$work/current.abi"
case $mode in
  update)
    xz -9 -c "$work/current.abi" >"$baseline"
    echo "recorded $(grep -c "<elf-symbol " "$work/current.abi") symbols in ${baseline#$top/}";;
  check)
    xz -dc "$baseline" >"$work/baseline.abi"
    set +e
    abidiff --no-added-syms --no-corpus-path "$work/baseline.abi" "$work/current.abi" >"$work/diff"
    rc=$?
    set -e
    if [ $rc -ne 0 ]; then
      cat "$work/diff"
      echo "FAIL: the ABI of $lib differs from ${baseline#$top/} (abidiff exit $rc); if intended, run tests/abi/abi.sh update"
      exit 1
    fi
    echo "OK: $(grep -c "<elf-symbol " "$work/current.abi") symbols, no change against ${baseline#$top/}";;
  *) echo "usage: abi.sh check|update LIB"; exit 2;;
esac
