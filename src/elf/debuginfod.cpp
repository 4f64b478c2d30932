#include "elf/debuginfod.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

namespace framewalk::elf {

namespace {

std::atomic<bool> g_enabled{false};

// The part of libdebuginfod's C API used here (elfutils/debuginfod.h), declared
// here so that building needs no -dev package.
struct debuginfod_client;
using DebuginfodBegin = debuginfod_client* (*)();
using DebuginfodFindDebuginfo = int (*)(debuginfod_client*, const unsigned char* build_id, int build_id_len,
                                        char** path);
constexpr const char* kSoname = "libdebuginfod.so.1";

// libdebuginfod, loaded once; a client is not thread-safe, hence the lock.
struct Client {
  DebuginfodBegin begin = nullptr;
  DebuginfodFindDebuginfo find_debuginfo = nullptr;
  debuginfod_client* client = nullptr;
  std::mutex lock;
};

Client* client() {
  static Client* const loaded = [] () -> Client* {
    void* lib = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    auto* c = new Client;  // kept for the process's life, as the library is
    c->begin = reinterpret_cast<decltype(c->begin)>(dlsym(lib, "debuginfod_begin"));
    c->find_debuginfo = reinterpret_cast<decltype(c->find_debuginfo)>(dlsym(lib, "debuginfod_find_debuginfo"));
    if (c->begin && c->find_debuginfo) c->client = c->begin();
    if (!c->client) {
      delete c;
      return nullptr;
    }
    return c;
  }();
  return loaded;
}

}  // namespace

void enable_debuginfod(bool on) { g_enabled.store(on, std::memory_order_relaxed); }
bool debuginfod_enabled() { return g_enabled.load(std::memory_order_relaxed); }

std::optional<std::string> debuginfod_find_debuginfo(const std::vector<uint8_t>& build_id) {
  if (build_id.empty()) return std::nullopt;
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  if (!urls || !*urls) return std::nullopt;
  Client* c = client();
  if (!c) return std::nullopt;
  std::lock_guard<std::mutex> hold(c->lock);
  char* path = nullptr;
  const int fd = c->find_debuginfo(c->client, build_id.data(), static_cast<int>(build_id.size()), &path);
  if (fd < 0) return std::nullopt;
  close(fd);
  if (!path) return std::nullopt;
  std::string out(path);
  std::free(path);
  return out;
}

}  // namespace framewalk::elf
