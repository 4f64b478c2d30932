#!/usr/bin/env bash
# Installs what building and testing framewalk needs on Debian 12 (apt).
# Skips apt entirely when everything is already there.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev
  googletest           # its sources: GoogleTest built for AArch64 (tests/cross/inprocess.sh)
  zlib1g-dev libzstd-dev liblzma-dev xz-utils
  binutils elfutils gdb time python3 libunwind-dev
  python3-pytest       # tests/python: the Python bindings' tests (gcore, from gdb, makes their core)
  debuginfod           # a local server for the debuginfod test (brings libdebuginfod1)
  clang libclang-rt-14-dev llvm
  # Other machines: cross compilers (gcc-multilib conflicts with them: 32-bit
  # x86 comes from gcc-i686-linux-gnu), qemu-user to run what they build,
  # gdb-multiarch to read its cores.
  gcc-i686-linux-gnu g++-i686-linux-gnu gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
  gcc-arm-linux-gnueabihf g++-arm-linux-gnueabihf qemu-user gdb-multiarch
  gcc-x86-64-linux-gnux32  # x32: its libraries' CFI, and cores of its code (tests/cross/x32)
  g++-sparc64-linux-gnu libc6-dev-sparc64-cross  # sparc64: its libc's CFI against readelf; snapshots (tests/cross)
  libc6-dev-i386-cross libc6-dev-arm64-cross libc6-dev-armhf-cross
  gcc-powerpc64le-linux-gnu g++-powerpc64le-linux-gnu libc6-dev-ppc64el-cross
  binutils-powerpc64le-linux-gnu  # ppc64le's in-process and mcount tests (powerpc64le-linux-gnu-gprof, -nm)
  gcc-powerpc-linux-gnu g++-powerpc-linux-gnu libc6-dev-powerpc-cross
  gcc-s390x-linux-gnu g++-s390x-linux-gnu libc6-dev-s390x-cross  # tests/cross: s390x cores, in-process, mcount
  binutils-s390x-linux-gnu  # its gprof and nm: tests/cross/mcount.sh s390x
  gcc-riscv64-linux-gnu g++-riscv64-linux-gnu libc6-dev-riscv64-cross  # tests/cross: riscv64 snapshots,
  binutils-riscv64-linux-gnu  # and its in-process and mcount tests (riscv64-linux-gnu-gprof, -nm)
  libc6-i386 lib32stdc++6  # the loader and libraries 32-bit x86 programs run with here
  llvm-16              # llvm-symbolizer-16: the oracle of conformance.inline
  dwz                  # conformance.inline: dwz pairs (a supplementary file, DW_FORM_GNU_ref_alt)
  libllvm16            # the largest library of the machine: conformance and benchmarks
  libstdc++6-12-dbg    # libstdc++ built with -g: conformance.inline on a large C++ library
  uftrace              # bench/mcount_vs_peers.sh: the mcount runtime beside uftrace's
  linux-perf           # conformance.perf_srcline: perf report spawning framewalk addr2line
  libprotobuf-dev protobuf-compiler  # the pprof writer (framewalk report --format=pprof)
  python3-jsonschema   # conformance.sample_reports: speedscope output against its schema
  golang-go            # conformance.sample_reports, report_gprof: pprof output read by `go tool pprof`
  chromium             # conformance.sample_html: the HTML flame graph in headless Chromium
  abigail-tools        # abidw/abidiff: the ABI of libframewalk.so (tests/abi/abi.sh)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
