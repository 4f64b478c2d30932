// dlclose, interposed: once a library is unloaded, the rule cache forgets the
// return addresses in its range, so that code loaded there later is never
// stepped with the rules of the code that was there before. Exported from
// the shared library (which comes before libc in the lookup order) and from
// programs linking the static one (see CMakeLists.txt), so that every
// caller's dlclose comes here.
#include <dlfcn.h>
#include <link.h>

#include <cstdint>

#include "local/fast_unwinder.hpp"

namespace framewalk::local {
// Referenced from fast_unwinder.cpp, so that a program linking the static
// library gets this file whenever it gets framewalk_backtrace.
void keep_dlclose_hook() {}
}  // namespace framewalk::local

extern "C" __attribute__((visibility("default"))) int dlclose(void* handle) {
  using Dlclose = int (*)(void*);
  static const auto real = reinterpret_cast<Dlclose>(dlsym(RTLD_NEXT, "dlclose"));
  if (!real) return -1;
  // The library's range, found before it goes.
  uint64_t start = 0, end = 0;
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_ld) {
    dl_find_object found;
    if (_dl_find_object(map->l_ld, &found) == 0) {
      start = reinterpret_cast<uintptr_t>(found.dlfo_map_start);
      end = reinterpret_cast<uintptr_t>(found.dlfo_map_end);
    }
  }
  const int result = real(handle);
  // Whether or not this call unloaded it (other handles may keep it), its
  // rules are dropped: at worst they are looked up again.
  if (result == 0 && end > start) framewalk::local::forget_rules_between(start, end);
  return result;
}
