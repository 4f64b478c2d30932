// The cost of the first backtrace in a process with about 50 shared
// libraries: each measurement runs in a fresh child (fork) that loads the
// libraries, then times its first framewalk_backtrace (cold rule cache) and,
// in another child, glibc's first backtrace (which loads libgcc_s). Medians
// of N children.
#include <dirent.h>
#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "framewalk/backtrace.h"

namespace {

std::vector<std::string> pick_libraries(size_t want) {
  // Small, self-contained libraries of the machine that load without side effects.
  static const char* const kNames[] = {
      "libz.so.1", "libzstd.so.1", "liblzma.so.5", "libbz2.so.1.0", "libexpat.so.1", "libffi.so.8",
      "libgmp.so.10", "libmpfr.so.6", "libpcre2-8.so.0", "libuuid.so.1", "libblkid.so.1", "libmount.so.1",
      "libcap.so.2", "libattr.so.1", "libacl.so.1", "libselinux.so.1", "libcrypt.so.1", "libgpg-error.so.0",
      "libgcrypt.so.20", "libtasn1.so.6", "libidn2.so.0", "libunistring.so.2", "libp11-kit.so.0",
      "libgnutls.so.30", "libnettle.so.8", "libhogweed.so.6", "libssl.so.3", "libcrypto.so.3", "libkeyutils.so.1",
      "libcom_err.so.2", "libkrb5support.so.0", "libk5crypto.so.3", "libkrb5.so.3", "libgssapi_krb5.so.2",
      "libtinfo.so.6", "libncursesw.so.6", "libreadline.so.8", "libsqlite3.so.0", "libxml2.so.2", "libicuuc.so.72",
      "libicudata.so.72", "libedit.so.2", "libbsd.so.0", "libmd.so.0", "libelf.so.1", "libdw.so.1",
      "libunwind.so.8", "libstdc++.so.6", "libgcc_s.so.1", "libm.so.6", "libsystemd.so.0", "liblz4.so.1",
      "libgomp.so.1", "libatomic.so.1", "libquadmath.so.0", "libcurl.so.4", "libssh2.so.1", "libnghttp2.so.14",
      "libpsl.so.5", "librtmp.so.1", "libsasl2.so.2", "libldap-2.5.so.0", "liblber-2.5.so.0", "libbrotlidec.so.1",
      "libbrotlicommon.so.1"};
  std::vector<std::string> out;
  for (const char* n : kNames) {
    if (out.size() >= want) break;
    if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
      dlclose(h);
      out.emplace_back(n);
      continue;
    }
    if (void* h = dlopen(n, RTLD_LAZY | RTLD_LOCAL)) {
      dlclose(h);
      out.emplace_back(n);
    }
  }
  return out;
}

__attribute__((noinline)) int deep(int n, int (*fn)(void**, int), void** b) {
  if (n <= 0) return fn(b, 64);
  const int r = deep(n - 1, fn, b);
  asm volatile("" ::: "memory");
  return r;
}

int glibc_backtrace(void** b, int n) {
  static auto fn = reinterpret_cast<int (*)(void**, int)>(dlsym(dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), "backtrace"));
  return fn(b, n);
}

struct FirstCall {
  double ns = -1;
  double page_faults = -1;  // minor faults taken during the call
};

// In a child: load the libraries, time the first call at depth 10.
FirstCall first_call(const std::vector<std::string>& libs, int (*fn)(void**, int)) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    for (const auto& l : libs) dlopen(l.c_str(), RTLD_NOW | RTLD_GLOBAL);
    void* b[64];
    rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    const auto t0 = std::chrono::steady_clock::now();
    const int n = deep(10, fn, b);
    const auto t1 = std::chrono::steady_clock::now();
    getrusage(RUSAGE_SELF, &after);
    const double out[2] = {n > 10 ? std::chrono::duration<double, std::nano>(t1 - t0).count() : -1,
                           static_cast<double>(after.ru_minflt - before.ru_minflt)};
    (void)!write(fds[1], out, sizeof out);
    _exit(0);
  }
  close(fds[1]);
  double in[2] = {-1, -1};
  (void)!read(fds[0], in, sizeof in);
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  return {in[0], in[1]};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? -1 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 11;
  const auto libs = pick_libraries(50);
  std::vector<double> fw, gl, fw_faults, gl_faults;
  for (int i = 0; i < runs; ++i) {
    const FirstCall f = first_call(libs, framewalk_backtrace);
    const FirstCall g = first_call(libs, glibc_backtrace);
    fw.push_back(f.ns);
    fw_faults.push_back(f.page_faults);
    gl.push_back(g.ns);
    gl_faults.push_back(g.page_faults);
  }
  std::printf("process with %zu extra shared libraries loaded (plus the program's own), first call at depth 10,\n",
              libs.size());
  std::printf("median of %d fresh processes:\n", runs);
  std::printf("  framewalk_backtrace first call: %8.1f us, %3.0f page faults\n", median(fw) / 1000, median(fw_faults));
  std::printf("  glibc backtrace first call:     %8.1f us, %3.0f page faults\n", median(gl) / 1000, median(gl_faults));
  return 0;
}
