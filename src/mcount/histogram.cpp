#include "mcount/histogram.hpp"

#include <csignal>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mcount/page_memory.hpp"
#include "mcount_context.hpp"  // src/arch/<host machine>/

namespace framewalk::mcount {

namespace {

struct Histogram {
  TextRange text;            // run-time range the bins cover (4-byte aligned)
  uint32_t* bins = nullptr;  // (text.high - text.low) / kBytesPerBin of them
  std::size_t nbins = 0;
  unsigned rate = 0;         // 0: no histogram
  int enabled = 1;
};

Histogram g_histogram;

int on_program_header(dl_phdr_info* info, std::size_t, void* data) {
  auto* out = static_cast<TextRange*>(data);
  uintptr_t low = UINTPTR_MAX, high = 0;
  for (unsigned i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    if (ph.p_vaddr < low) low = ph.p_vaddr;
    if (ph.p_vaddr + ph.p_memsz > high) high = ph.p_vaddr + ph.p_memsz;
  }
  if (low < high) {
    out->low = info->dlpi_addr + low;
    out->high = info->dlpi_addr + high;
    out->bias = info->dlpi_addr;
  }
  return 1;  // the first object is the program: stop
}

void on_sigprof(int, siginfo_t* info, void* context) {
  const Histogram& h = g_histogram;
  if (!__atomic_load_n(&h.enabled, __ATOMIC_RELAXED)) return;
  uintptr_t pc = host::interrupted_pc(context);
  if (!h.text.contains(pc)) return;
  uint32_t ticks = 1;
  if (info->si_code == SI_TIMER && info->si_overrun > 0) ticks += static_cast<uint32_t>(info->si_overrun);
  __atomic_fetch_add(&h.bins[(pc - h.text.low) / kBytesPerBin], ticks, __ATOMIC_RELAXED);
}

}  // namespace

bool find_executable_text(TextRange& out) {
  out = TextRange{};
  dl_iterate_phdr(on_program_header, &out);
  return out.low < out.high;
}

bool histogram_start(const TextRange& text, unsigned rate) {
  Histogram& h = g_histogram;
  if (rate == 0 || text.low >= text.high) return false;
  h.text.bias = text.bias;
  h.text.low = text.low & ~uintptr_t{kBytesPerBin - 1};
  h.text.high = (text.high + kBytesPerBin - 1) & ~uintptr_t{kBytesPerBin - 1};
  h.nbins = (h.text.high - h.text.low) / kBytesPerBin;
  h.bins = static_cast<uint32_t*>(map_zeroed(h.nbins * sizeof(uint32_t)));
  if (h.bins == nullptr) return false;
  struct sigaction action = {};
  action.sa_sigaction = on_sigprof;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&action.sa_mask);
  if (sigaction(SIGPROF, &action, nullptr) != 0) return false;
  h.rate = rate;
  return true;
}

void histogram_enable(bool on) { __atomic_store_n(&g_histogram.enabled, on ? 1 : 0, __ATOMIC_RELAXED); }

HistogramView histogram_view() {
  const Histogram& h = g_histogram;
  HistogramView view;
  if (h.rate == 0) return view;  // an empty histogram: gprof says "no time accumulated"
  view.low_pc = h.text.low - h.text.bias;
  view.high_pc = h.text.high - h.text.bias;
  view.bins = h.bins;
  view.nbins = h.nbins;
  view.rate = h.rate;
  return view;
}

uint64_t histogram_samples() {
  uint64_t total = 0;
  for (std::size_t i = 0; i < g_histogram.nbins; ++i) total += __atomic_load_n(&g_histogram.bins[i], __ATOMIC_RELAXED);
  return total;
}

bool start_thread_timer(timer_t& timer) {
  const Histogram& h = g_histogram;
  if (h.rate == 0) return false;
  struct sigevent event = {};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = SIGPROF;
  event._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &timer) != 0) return false;
  struct itimerspec spec = {};
  spec.it_interval.tv_nsec = 1000000000L / h.rate;
  spec.it_value = spec.it_interval;
  if (timer_settime(timer, 0, &spec, nullptr) != 0) {
    timer_delete(timer);
    return false;
  }
  return true;
}

void stop_thread_timer(timer_t timer) { timer_delete(timer); }

}  // namespace framewalk::mcount
