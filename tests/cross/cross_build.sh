# Sourced by tests/cross/inprocess.sh and tests/cross/mcount.sh: the cross
# build both use (one build directory per machine, the same options), after
# checking its tools. Needs $src and $build; sets $triplet, $qemu and $run
# (how a program of the machine runs: under qemu-user, or natively for i386
# on this x86-64 kernel, with $qemu empty) from the machine; exits 77
# (skipped) without a tool.
#   cross_configure MACHINE TOOL...   (the tools beyond the compiler, qemu, cmake and ninja)
cross_configure() {
  local machine=$1
  shift
  case $machine in
    aarch64) triplet=aarch64-linux-gnu qemu=qemu-aarch64 ;;
    arm) triplet=arm-linux-gnueabihf qemu=qemu-arm ;;
    i386) triplet=i686-linux-gnu qemu= ;;
    riscv64) triplet=riscv64-linux-gnu qemu=qemu-riscv64 ;;
    s390x) triplet=s390x-linux-gnu qemu=qemu-s390x ;;
    ppc64le) triplet=powerpc64le-linux-gnu qemu=qemu-ppc64le ;;
    *) echo "usage: $(basename "$0") [aarch64|arm|i386|riscv64|s390x|ppc64le] [BUILD_DIR]" >&2; exit 2 ;;
  esac
  run=${qemu:+$qemu -L /usr/$triplet}
  local tool
  for tool in "$triplet-g++" $qemu cmake ninja "${@/#/$triplet-}"; do
    command -v "$tool" > /dev/null || { echo "skip: no $tool"; exit 77; }
  done
  if [ "$machine" = i386 ] && [ ! -e /lib/ld-linux.so.2 ]; then
    echo "skip: no /lib/ld-linux.so.2 (libc6-i386 and lib32stdc++6 run 32-bit programs here)"; exit 77
  fi
  [ -d /usr/src/googletest ] || { echo "skip: no /usr/src/googletest (googletest)"; exit 77; }
  # -O2 as the native build, without debug information, which nothing run
  # here reads (up to 40% of a file's compile time); -Wno-psabi: armhf g++'s
  # notes on an ABI change of GCC 7.1 fill the log.
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG -Wno-psabi" \
    -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchains/$triplet.cmake" \
    -DFRAMEWALK_COMPRESSION=OFF -DFRAMEWALK_CLI=OFF -DFRAMEWALK_BENCH=ON > /dev/null
}
