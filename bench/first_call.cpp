// The cost of the first backtrace in a process with about 50 shared
// libraries: each measurement runs in a fresh process (this program again,
// exec'd) that loads the libraries, then times its first
// framewalk_backtrace (cold rule cache), glibc's first backtrace, or
// framewalk's first call after framewalk_backtrace_prepare(). Medians of N
// processes each.
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
  double prepare_ns = -1;   // framewalk_backtrace_prepare() before it, if asked
};

enum class Mode { kFramewalk, kGlibc, kFramewalkPrepared };

// In a fresh process (this program run with --child MODE): load the
// libraries (and prepare, if asked), time the first call at depth 10, print
// the figures.
int child_main(Mode mode, const std::vector<std::string>& libs) {
  for (const auto& l : libs) dlopen(l.c_str(), RTLD_NOW | RTLD_GLOBAL);
  double prepare_ns = -1;
  if (mode == Mode::kFramewalkPrepared) {
    const auto p0 = std::chrono::steady_clock::now();
    framewalk_backtrace_prepare();
    prepare_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - p0).count();
  }
  void* b[64];
  rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  const auto t0 = std::chrono::steady_clock::now();
  const int n = deep(10, mode == Mode::kGlibc ? glibc_backtrace : framewalk_backtrace, b);
  const auto t1 = std::chrono::steady_clock::now();
  getrusage(RUSAGE_SELF, &after);
  std::printf("%f %ld %f\n", n > 10 ? std::chrono::duration<double, std::nano>(t1 - t0).count() : -1.0,
              after.ru_minflt - before.ru_minflt, prepare_ns);
  return 0;
}

// Runs a fresh process (exec, not a fork of this one: nothing of ours is
// warm in it) for one measurement.
FirstCall first_call(const char* self, Mode mode) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const std::string mode_arg = std::to_string(static_cast<int>(mode));
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execl(self, self, "--child", mode_arg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  char text[256] = {};
  size_t got = 0;
  ssize_t r;
  while (got < sizeof text - 1 && (r = read(fds[0], text + got, sizeof text - 1 - got)) > 0) got += static_cast<size_t>(r);
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  FirstCall f;
  long faults = -1;
  if (std::sscanf(text, "%lf %ld %lf", &f.ns, &faults, &f.prepare_ns) != 3) return {};
  f.page_faults = static_cast<double>(faults);
  return f;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? -1 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const auto libs = pick_libraries(50);
  if (argc > 2 && std::strcmp(argv[1], "--child") == 0) return child_main(static_cast<Mode>(std::atoi(argv[2])), libs);
  const int runs = argc > 1 ? std::atoi(argv[1]) : 11;
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) return 1;
  std::vector<double> fw, gl, fw_faults, gl_faults, prepared, prepared_faults, prepare_cost;
  for (int i = 0; i < runs; ++i) {
    const FirstCall f = first_call(self, Mode::kFramewalk);
    const FirstCall g = first_call(self, Mode::kGlibc);
    const FirstCall p = first_call(self, Mode::kFramewalkPrepared);
    fw.push_back(f.ns);
    fw_faults.push_back(f.page_faults);
    gl.push_back(g.ns);
    gl_faults.push_back(g.page_faults);
    prepared.push_back(p.ns);
    prepared_faults.push_back(p.page_faults);
    prepare_cost.push_back(p.prepare_ns);
  }
  std::printf("process with %zu extra shared libraries loaded (plus the program's own), first call at depth 10,\n",
              libs.size());
  std::printf("median of %d fresh processes:\n", runs);
  std::printf("  framewalk_backtrace first call: %8.1f us, %3.0f page faults\n", median(fw) / 1000, median(fw_faults));
  std::printf("  glibc backtrace first call:     %8.1f us, %3.0f page faults\n", median(gl) / 1000, median(gl_faults));
  std::printf("  after framewalk_backtrace_prepare() (which took %.1f us, in another frame):\n", median(prepare_cost) / 1000);
  std::printf("  framewalk_backtrace first call: %8.1f us, %3.0f page faults\n", median(prepared) / 1000,
              median(prepared_faults));
  return 0;
}
