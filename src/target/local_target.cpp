#include "target/local_target.hpp"

#include <link.h>
#include <sched.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

#include "arch/machine.hpp"
#include "arch/capture.hpp"
#include "base/own_memory.hpp"


namespace framewalk {

namespace {

// Reads our own memory without faulting.
class SelfMemory final : public Memory {
 public:
  size_t read(uint64_t address, void* out, size_t size) override { return read_own_memory(address, out, size); }
};

struct PhdrModule {
  uint64_t start, end, bias;
  std::string path;
  bool vdso;
};

int collect(dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::vector<PhdrModule>*>(data);
  uint64_t lo = ~uint64_t{0}, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& p = info->dlpi_phdr[i];
    if (p.p_type != PT_LOAD) continue;
    lo = std::min<uint64_t>(lo, info->dlpi_addr + p.p_vaddr);
    hi = std::max<uint64_t>(hi, info->dlpi_addr + p.p_vaddr + p.p_memsz);
  }
  if (lo >= hi) return 0;
  PhdrModule m{lo, hi, info->dlpi_addr, info->dlpi_name ? info->dlpi_name : "", false};
  m.vdso = m.path.find("linux-vdso") != std::string::npos || m.path.find("linux-gate") != std::string::npos;
  if (m.path.empty()) {
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) m.path.assign(exe, static_cast<size_t>(n));
  }
  if (m.vdso) m.path = "[vdso]";
  out->push_back(std::move(m));
  return 0;
}

Module open_own_module(const PhdrModule& p, ModuleCache& cache, Memory& memory) {
  Module m;
  m.start = p.start;
  m.end = p.end;
  m.bias = p.bias;
  m.name = p.path;
  Result<std::shared_ptr<const ModuleData>> data = Error{ErrorCode::kNotFound, 0};
  if (p.vdso) {
    std::vector<uint8_t> bytes(p.end - p.start);
    bytes.resize(memory.read(p.start, bytes.data(), bytes.size()));
    data = cache.from_bytes(std::move(bytes), "[vdso]", "[vdso]");
    if (data) {
      // The vDSO image starts at its first PT_LOAD; its bias is its start.
      if (auto b = load_bias(**data, p.start, 0)) m.bias = *b;
    }
  } else {
    data = cache.get(p.path, p.path, p.path);
  }
  if (data) m.data = *data;
  else m.problem = to_string(data.error().code);
  return m;
}

}  // namespace

bool update_own_modules(ModuleMap& map, ModuleCache& cache, Memory& memory) {
  std::vector<PhdrModule> found;
  dl_iterate_phdr(collect, &found);
  std::sort(found.begin(), found.end(), [](const PhdrModule& a, const PhdrModule& b) { return a.start < b.start; });
  auto same = [](const Module& m, const PhdrModule& p) {
    return m.start == p.start && m.end == p.end && m.bias == p.bias && m.name == p.path;
  };
  // Gone (or replaced): every module the linker no longer lists as it was.
  std::vector<uint64_t> gone;
  for (const auto& m : map.modules()) {
    const auto it = std::lower_bound(found.begin(), found.end(), m->start,
                                     [](const PhdrModule& p, uint64_t start) { return p.start < start; });
    if (it == found.end() || !same(*m, *it)) gone.push_back(m->id);
  }
  for (const uint64_t id : gone) map.remove(id);
  size_t added = 0;
  for (const PhdrModule& p : found) {
    const Module* m = map.find(p.start);
    if (m && same(*m, p)) continue;
    map.add(open_own_module(p, cache, memory));
    ++added;
  }
  return added != 0 || !gone.empty();
}

struct LocalUnwinder::State {
  SelfMemory memory;
  ModuleMap modules;
  std::unique_ptr<Unwinder> unwinder;
};

// A walk's hold on the current state: refresh() publishes a new state and
// frees the old one only once no walk that may have taken it is running.
// Walks count themselves in one of two counters, by the parity of the epoch
// they read; refresh() stores the new state, flips the epoch, and waits for
// the old parity's walks to end. Lock-free and allocation-free for the walk
// (a signal handler may walk while refresh() waits: it counts itself under
// the new parity).
class LocalUnwinder::Hold {
 public:
  explicit Hold(LocalUnwinder& u) : u_(u) {
    parity_ = static_cast<int>(u_.epoch_.load() & 1);
    u_.walking_[parity_].fetch_add(1);
    state_ = u_.current_.load();
  }
  ~Hold() { u_.walking_[parity_].fetch_sub(1); }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  State& state() const { return *state_; }

 private:
  LocalUnwinder& u_;
  int parity_;
  State* state_;
};

LocalUnwinder& LocalUnwinder::instance() {
  static LocalUnwinder* unwinder = new LocalUnwinder();  // never destroyed: usable until exit
  return *unwinder;
}

LocalUnwinder::LocalUnwinder() { refresh(); }

LocalUnwinder::~LocalUnwinder() { delete current_.load(); }

void LocalUnwinder::refresh() {
  std::lock_guard<std::mutex> one_at_a_time(refresh_mutex_);
  auto state = std::make_unique<State>();
  // Modules still loaded keep their ids and loaded tables.
  if (State* previous = current_.load()) state->modules = previous->modules;
  update_own_modules(state->modules, cache_, state->memory);
  for (const auto& m : state->modules.modules()) {
    if (!m->data) continue;
    // Load everything now, so that unwinding later neither allocates nor
    // locks (idempotent for modules loaded by an earlier refresh).
    if (const ElfCfi* cfi = m->data->cfi()) {
      for (const auto& src : cfi->sources()) {
        if (!src->section) continue;
        (void)src->get_index();
        src->section->for_each([](const dwarf::CfiSection::Entry&) { return true; }, nullptr);
        src->section->freeze();
      }
    }
    (void)m->data->symbols();
    (void)m->data->sframe();  // the step loop reads it where CFI has no row
  }
  state->unwinder = std::make_unique<Unwinder>(state->modules, state->memory, arch::host_machine().key());
  State* old = current_.exchange(state.release());
  // Walks that began before the flip may still hold `old`.
  const int old_parity = static_cast<int>(epoch_.fetch_add(1) & 1);
  while (walking_[old_parity].load() != 0) sched_yield();
  delete old;
}

const ModuleMap& LocalUnwinder::modules() const { return current_.load()->modules; }

int LocalUnwinder::backtrace(void** buffer, int size) {
  if (size <= 0) return 0;
  uint64_t raw[arch::kCaptureWords];
  arch::framewalk_capture(raw);
  const arch::RegisterFile regs = arch::from_host_capture(raw);
  int n = 0;
  UnwindOptions o;
  o.max_frames = static_cast<size_t>(size);
  o.first_is_return_address = true;
  const Hold hold(*this);
  hold.state().unwinder->walk(regs, [&](const Frame& f) {
    buffer[n++] = reinterpret_cast<void*>(f.pc);
    return n < size;
  }, o);
  return n;
}

namespace {
arch::RegisterFile from_ucontext(const ucontext_t* uc) {
  return arch::host_machine().registers_from_ucontext(Bytes(reinterpret_cast<const uint8_t*>(uc), sizeof *uc));
}
}  // namespace

int LocalUnwinder::backtrace(const ucontext_t* context, void** buffer, int size) {
  if (size <= 0 || !context) return 0;
  int n = 0;
  UnwindOptions o;
  o.max_frames = static_cast<size_t>(size);
  const Hold hold(*this);
  hold.state().unwinder->walk(from_ucontext(context), [&](const Frame& f) {
    buffer[n++] = reinterpret_cast<void*>(f.pc);
    return n < size;
  }, o);
  return n;
}

WalkResult LocalUnwinder::walk(const ucontext_t* context, FunctionRef<bool(const Frame&)> on_frame, size_t max_frames) {
  UnwindOptions o;
  o.max_frames = max_frames;
  const Hold hold(*this);
  return hold.state().unwinder->walk(from_ucontext(context), on_frame, o);
}

int backtrace(void** buffer, int size) { return LocalUnwinder::instance().backtrace(buffer, size); }
int backtrace(const ucontext_t* context, void** buffer, int size) {
  return LocalUnwinder::instance().backtrace(context, buffer, size);
}

}  // namespace framewalk
