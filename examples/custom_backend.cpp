// Plugging in your own registers and memory: framewalk's unwinder only needs
// a RegisterFile, a Memory and a ModuleMap. Here the "target" is a snapshot:
// this program copies its own stack into a buffer, then unwinds the copy
// offline, the way a crash reporter unwinds a minidump.
#include <link.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "arch/x86_64/registers.hpp"
#include "base/memory.hpp"
#include "unwind/symbolize.hpp"
#include "unwind/unwinder.hpp"

extern "C" void framewalk_x86_64_capture(uint64_t out[17]);

namespace {

// The memory back-end: a copy of the stack, nothing else.
class SnapshotMemory final : public framewalk::Memory {
 public:
  SnapshotMemory(uint64_t base, std::vector<uint8_t> bytes) : base_(base), bytes_(std::move(bytes)) {}
  size_t read(uint64_t address, void* out, size_t size) override {
    if (address < base_ || address - base_ >= bytes_.size()) return 0;
    const size_t off = address - base_;
    const size_t n = std::min(size, bytes_.size() - off);
    std::memcpy(out, bytes_.data() + off, n);
    return n;
  }

 private:
  uint64_t base_;
  std::vector<uint8_t> bytes_;
};

int add_module(dl_phdr_info* info, size_t, void* data) {
  auto* ctx = static_cast<std::pair<framewalk::ModuleMap*, framewalk::ModuleCache*>*>(data);
  std::string path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
  if (path.find("linux-vdso") != std::string::npos) return 0;
  uint64_t lo = ~0ull, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_LOAD) continue;
    lo = std::min<uint64_t>(lo, info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    hi = std::max<uint64_t>(hi, info->dlpi_addr + info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz);
  }
  framewalk::Module m;
  m.start = lo;
  m.end = hi;
  m.bias = info->dlpi_addr;
  m.name = path;
  if (auto d = ctx->second->get(path, path, path)) m.data = *d;
  ctx->first->add(std::move(m));
  return 0;
}

__attribute__((noinline)) void snapshot_and_unwind() {
  // 1. Registers: where we are now (DWARF numbering).
  uint64_t raw[17];
  framewalk_x86_64_capture(raw);
  framewalk::arch::RegisterFile regs;
  for (unsigned i = 0; i < 17; ++i) regs.set(i, raw[i]);

  // 2. Memory: up to 64 KiB of stack from the stack pointer up (read with
  //    process_vm_readv, which stops at the end of the mapping instead of faulting).
  const uint64_t sp = raw[framewalk::arch::x86_64::kRsp];
  std::vector<uint8_t> stack(64 * 1024);
  iovec local{stack.data(), stack.size()};
  iovec remote{reinterpret_cast<void*>(sp), stack.size()};
  const ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  stack.resize(got > 0 ? static_cast<size_t>(got) : 0);
  SnapshotMemory memory(sp, std::move(stack));

  // 3. Modules: what is loaded where.
  framewalk::ModuleMap modules;
  framewalk::ModuleCache cache;
  std::pair<framewalk::ModuleMap*, framewalk::ModuleCache*> ctx{&modules, &cache};
  dl_iterate_phdr(add_module, &ctx);

  // 4. Walk.
  framewalk::Unwinder unwinder(modules, memory, 62 /* EM_X86_64 */);
  framewalk::UnwindOptions options;
  options.first_is_return_address = true;
  const framewalk::WalkResult result = unwinder.walk(regs, [](const framewalk::Frame& f) {
    const framewalk::FrameSymbol s = framewalk::symbolize(f);
    std::printf("0x%016llx %s [%s]\n", static_cast<unsigned long long>(f.pc), s.found ? s.function.c_str() : "??",
                framewalk::to_string(f.source));
    return true;
  }, options);
  std::printf("stopped: %s after %zu frames\n", framewalk::to_string(result.reason), result.frames);
}

}  // namespace

int main() {
  snapshot_and_unwind();
  return 0;
}
