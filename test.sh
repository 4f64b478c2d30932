#!/usr/bin/env bash
# The whole test suite: unit tests, conformance against readelf on every
# library of the machine and on fixtures, CLI bad-input tests, and a
# deterministic libFuzzer run of every parser under ASan+UBSan (fixed seed and
# run counts, fuzz/run.sh; FUZZ=0 skips it).
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build
ctest --test-dir build --output-on-failure -j "$(nproc)"
if [ "${FUZZ:-1}" != 0 ]; then
  fuzz/run.sh
fi
