#include "mcount/function_times.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include "mcount/digits.hpp"
#include "mcount/page_memory.hpp"

namespace framewalk::mcount {

namespace {

std::size_t function_hash(const FunctionTable& table, uintptr_t function) {
  uint64_t mixed = static_cast<uint64_t>(function) * 0x9E3779B97F4A7C15ull;
  return static_cast<std::size_t>(mixed >> 32) & (table.capacity - 1);
}

// Text for write(2), without stdio (a dump may run in a signal handler).
class TextOut {
 public:
  explicit TextOut(int fd) : fd_(fd) {}
  TextOut& text(const char* s) {
    while (*s != '\0') put(*s++);
    return *this;
  }
  TextOut& decimal(uint64_t v) {
    char digits[20];
    for (unsigned n = decimal_digits_reversed(v, digits); n > 0;) put(digits[--n]);
    return *this;
  }
  TextOut& hex(uint64_t v) {
    char digits[16];
    unsigned n = 0;
    do {
      digits[n++] = "0123456789abcdef"[v & 15];
      v >>= 4;
    } while (v != 0);
    text("0x");
    while (n > 0) put(digits[--n]);
    return *this;
  }
  bool finish() {
    flush();
    return !failed_;
  }

 private:
  void put(char c) {
    if (used_ == sizeof buffer_) flush();
    buffer_[used_++] = c;
  }
  void flush() {
    std::size_t done = 0;
    while (done < used_ && !failed_) {
      ssize_t n = write(fd_, buffer_ + done, used_ - done);
      if (n <= 0) {
        failed_ = true;
      } else {
        done += static_cast<std::size_t>(n);
      }
    }
    used_ = 0;
  }

  int fd_;
  bool failed_ = false;
  std::size_t used_ = 0;
  char buffer_[4096];
};

}  // namespace

FunctionTable* function_table_create(std::size_t capacity) {
  if (capacity < 2 || (capacity & (capacity - 1)) != 0) return nullptr;
  std::size_t bytes = sizeof(FunctionTable) + (capacity - 1) * sizeof(FunctionSlot);
  auto* table = static_cast<FunctionTable*>(map_zeroed(bytes));
  if (table == nullptr) return nullptr;
  table->capacity = capacity;
  table->limit = capacity / 2;
  table->map_bytes = bytes;
  return table;
}

void function_table_destroy(FunctionTable* table) {
  if (table != nullptr) unmap(table, table->map_bytes);
}

FunctionTable* function_table_grown(const FunctionTable& table) {
  FunctionTable* bigger = function_table_create(table.capacity * 2);
  if (bigger == nullptr) return nullptr;
  function_table_for_each(table, [&](const FunctionSlot& s) {
    FunctionSlot* copy = function_table_slot(*bigger, s.function);
    copy->calls = s.calls;
    copy->inclusive_ns = s.inclusive_ns;
    copy->self_ns = s.self_ns;
    copy->active = s.active;
  });
  return bigger;
}

FunctionSlot* function_table_slot(FunctionTable& table, uintptr_t function) {
  const std::size_t mask = table.capacity - 1;
  for (std::size_t i = function_hash(table, function);; i = (i + 1) & mask) {
    FunctionSlot& slot = table.slots[i];
    if (slot.function == function) return &slot;
    if (slot.function == 0) {
      if (table.used >= table.limit) return nullptr;
      __atomic_store_n(&slot.function, function, __ATOMIC_RELEASE);
      ++table.used;
      return &slot;
    }
  }
}

// The file of the loaded module (a shared library) that holds `address`,
// and the address as that file's link-time one: _dl_find_object, which is
// async-signal-safe (a dump may run in a signal handler). False for code
// of no module the loader knows (the vDSO, a JIT's) or a name that a line
// cannot carry.
bool module_address(uintptr_t address, const char** path, uintptr_t* link_address) {
  struct dl_find_object found;
  if (_dl_find_object(reinterpret_cast<void*>(address), &found) != 0 || found.dlfo_link_map == nullptr) return false;
  const char* name = found.dlfo_link_map->l_name;
  if (name == nullptr || name[0] != '/') return false;  // the executable (""), or a name with no file to read
  for (const char* c = name; *c != '\0'; ++c) {
    if (*c == '\n') return false;
  }
  *path = name;
  *link_address = address - found.dlfo_link_map->l_addr;
  return true;
}

bool write_function_times(int fd, const FunctionTable& merged, uintptr_t text_low, uintptr_t text_high,
                          uintptr_t bias, const char* clock_name) {
  TextOut out(fd);
  out.text("# framewalk mcount function times 2\n# clock ").text(clock_name);
  out.text("\n# address calls inclusive_ns self_ns [module]\n");
  uint64_t outside = 0;
  function_table_for_each(merged, [&](const FunctionSlot& s) {
    const char* module = nullptr;
    uintptr_t address = s.function - bias;
    if ((s.function < text_low || s.function >= text_high) && !module_address(s.function, &module, &address)) {
      ++outside;
      return;
    }
    out.hex(address).text(" ").decimal(s.calls).text(" ").decimal(s.inclusive_ns);
    out.text(" ").decimal(s.self_ns);
    if (module != nullptr) out.text(" ").text(module);
    out.text("\n");
  });
  if (outside != 0) out.text("# ").decimal(outside).text(" functions of no loaded file not listed\n");
  return out.finish();
}

}  // namespace framewalk::mcount
