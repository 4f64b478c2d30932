// fuzz_backend: a user back-end that lies, through the C API. The bytes say
// which threads next_thread lists (repeats, negatives, ids that do not
// exist), which register ranges set_initial_registers sets (any numbers, any
// counts), what memory holds and how many bytes memory_read claims (more
// than asked, too), and where a real ELF file (this program) is mapped. Every
// walk must end within its frame limit with a reason, and nothing the
// back-end says may crash, hang or be believed past what was asked.
#include <algorithm>
#include <cstring>
#include <vector>

#include "framewalk/framewalk.h"
#include "fuzz_bodies.hpp"

namespace framewalk::fuzz {

namespace {

struct Input {
  const uint8_t* data;
  size_t size;
  size_t at = 0;
  uint8_t u8() { return at < size ? data[at++] : 0; }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{u8()} << (8 * i);
    return v;
  }
};

struct Lies {
  std::vector<int> threads;  // what next_thread answers, in turn
  size_t next_call = 0;
  struct Registers {
    unsigned first = 0;
    std::vector<uint64_t> values;
  };
  std::vector<Registers> registers;  // per thread, in order
  uint64_t memory_base = 0;
  std::vector<uint8_t> memory;
  unsigned overclaim = 0;  // bytes memory_read claims beyond what it copied
  uint64_t map_start = 0, map_end = 0;
  bool map_exe = false;
  int mappings_status = 0;
};

int next_thread(void* arg, int after) {
  auto* l = static_cast<Lies*>(arg);
  (void)after;
  if (l->next_call >= l->threads.size() || l->next_call > 64) return 0;
  return l->threads[l->next_call++];
}

int set_initial_registers(void* arg, int tid, fw_thread_state* state) {
  auto* l = static_cast<Lies*>(arg);
  const size_t i = static_cast<size_t>(tid > 0 ? tid : -tid) % (l->registers.size() + 1);
  if (i == l->registers.size()) return tid & 1;  // no registers: success or a failure
  const Lies::Registers& r = l->registers[i];
  (void)fw_thread_state_set_registers(state, r.first, static_cast<unsigned>(r.values.size()), r.values.data());
  return 0;
}

size_t memory_read(void* arg, uint64_t address, void* out, size_t size) {
  auto* l = static_cast<Lies*>(arg);
  if (address < l->memory_base || address - l->memory_base >= l->memory.size()) return l->overclaim;
  const size_t off = static_cast<size_t>(address - l->memory_base);
  const size_t n = std::min(size, l->memory.size() - off);
  std::memcpy(out, l->memory.data() + off, n);
  return n + l->overclaim;  // a back-end that claims more than it copied
}

int report_mappings(void* arg, fw_mappings* mappings) {
  auto* l = static_cast<Lies*>(arg);
  if (l->map_exe) fw_mappings_add(mappings, l->map_start, l->map_end, 0, "/proc/self/exe");
  fw_mappings_add(mappings, l->map_end, l->map_start, 0, "/nonexistent-framewalk-fuzz");  // refused: empty range
  return l->mappings_status;
}

fw_walk_action on_frame(const fw_frame* frame, void* arg) {
  auto* count = static_cast<size_t*>(arg);
  ++*count;
  fw_frame_info info;
  fw_frame_get_info(frame, &info);
  fw_module_info module;
  if (fw_frame_module(frame, &module)) FUZZ_CHECK(module.path != nullptr);
  uint64_t offset = 0;
  (void)fw_frame_function(frame, &offset);
  unsigned numbers[8];
  uint64_t values[8];
  (void)fw_frame_registers(frame, numbers, values, 8);
  return *count < 40 ? FW_CONTINUE : FW_STOP;
}

}  // namespace

int fuzz_backend(const uint8_t* data, size_t size) {
  Input in{data, size};
  static const int kMachines[] = {62, 183, 40};
  const uint8_t head = in.u8();
  Lies l;
  const unsigned thread_count = head >> 4;
  for (unsigned i = 0; i < thread_count; ++i) l.threads.push_back(static_cast<int8_t>(in.u8()));
  const unsigned register_sets = in.u8() % 5;
  for (unsigned i = 0; i < register_sets; ++i) {
    Lies::Registers r;
    r.first = in.u8() | (in.u8() & 3) << 8;  // 0..1023: past every register file
    const unsigned count = in.u8() % 48;
    for (unsigned k = 0; k < count; ++k) r.values.push_back(in.u64());
    l.registers.push_back(std::move(r));
  }
  l.overclaim = (head & 4) ? in.u8() : 0;
  l.map_exe = head & 8;
  l.map_start = in.u64() & ~uint64_t{0xfff};
  l.map_end = l.map_start + (uint64_t{in.u8()} << 16) + 0x1000;
  l.mappings_status = (head & 2) ? -1 : 0;
  l.memory_base = in.u64();
  if (in.at < size) l.memory.assign(data + in.at, data + size);

  fw_backend backend{};
  backend.struct_size = sizeof backend;
  backend.machine = kMachines[head % 3];
  backend.next_thread = next_thread;
  backend.set_initial_registers = set_initial_registers;
  backend.memory_read = memory_read;
  backend.report_mappings = report_mappings;
  fw_context* context = fw_context_new();
  fw_target* target = nullptr;
  FUZZ_CHECK(fw_target_backend(context, &backend, &l, &target) == FW_OK);
  int tid = 0;
  for (int listed = 0; listed < 70; ++listed) {
    int next = 0;
    if (fw_next_thread(target, tid, &next) != FW_OK) {
      FUZZ_CHECK(fw_last_error()[0] != '\0');
      break;
    }
    if (next == 0) break;
    tid = next;
    size_t frames = 0;
    fw_walk_end end;
    const fw_walk_options options{sizeof options, 32, static_cast<size_t>(listed & 1)};
    if (fw_walk(target, tid, on_frame, &frames, &options, &end) != FW_OK) {
      FUZZ_CHECK(fw_last_error()[0] != '\0');
      continue;
    }
    FUZZ_CHECK(frames <= 40 && frames <= 32);
    FUZZ_CHECK(end.frames == frames);
    FUZZ_CHECK(std::memchr(end.message, 0, sizeof end.message) != nullptr);
    if (end.end == FW_END_CALLBACK) FUZZ_CHECK(end.reason == FW_STOP_CALLBACK);
    fw_frame_info array[8];
    size_t count = 0;
    if (fw_backtrace(target, tid, array, 8, &count, nullptr) == FW_OK) FUZZ_CHECK(count <= 8);
  }
  fw_target_free(target);
  fw_context_free(context);
  return 0;
}

}  // namespace framewalk::fuzz
