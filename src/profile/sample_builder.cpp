#include "profile/sample_builder.hpp"

#include <sched.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "base/text.hpp"
#include "elf/debug_file.hpp"
#include "target/jitdump_modules.hpp"
#include "unwind/symbolize.hpp"

namespace framewalk::profile {

namespace {

// The file offset of the module's first mapped byte.
std::optional<uint64_t> file_offset_of(const Module& m) {
  const uint64_t link = m.start - m.bias;
  for (const elf::Segment& seg : m.data->elf().segments())
    if (seg.type == elf::kPtLoad && link >= seg.vaddr && link < seg.vaddr + seg.memsz) return seg.offset + (link - seg.vaddr);
  return std::nullopt;
}

}  // namespace

void SampleProfileBuilder::add(const UnwoundSample& u) {
  if (!first_time_) first_time_ = u.time;
  last_time_ = std::max(last_time_, u.time);
  const bool switched_out = u.event && is_context_switch_event(*u.event);
  if (u.event && !event_set_ && !switched_out) {
    event_set_ = true;
    RecordingInfo& info = profile_.info();
    if (!u.event->name.empty() || info.event == 0) info.event = profile_.intern(u.event->name);
    if (u.event->freq()) info.frequency = u.event->sample_period;
    else info.period = u.event->sample_period;
    // The software clocks count nanoseconds.
    info.weight_unit = profile_.intern(u.event->type == 1 && u.event->config <= 1 ? "nanoseconds" : "events");
    for (const std::string& a : u.file->cmdline) info.command_line.push_back(profile_.intern(a));
    info.hostname = profile_.intern(u.file->hostname);
  }
  if (auto [it, added] = thread_names_.try_emplace(u.tid, *u.comm); added || it->second != *u.comm) {
    it->second = *u.comm;
    profile_.add_thread(u.pid, u.tid, *u.comm);
  }
  // Frames at the same depth from the root as the previous sample's, and
  // the same (pc, module, kind): the same frame (samples share their callers).
  // Their stack nodes too, as long as every frame from the root matched
  // the previous sample's; below that, one probe a frame (child_node).
  const size_t n = u.frames.size();
  if (previous_.size() < n) previous_.resize(n);
  bool same_so_far = true;
  uint32_t node = kNoNode;
  for (size_t k = 0; k < n; ++k) {
    const framewalk::SampleFrame& f = u.frames[n - 1 - k];
    const FrameKey key{f.frame.pc, f.frame.module ? f.frame.module->id : 0, f.kind, f.frame.activation};
    PreviousFrame& p = previous_[k];
    if (!(p.key == key)) {
      p.key = key;
      p.id = frame(f, u);
      same_so_far = false;
    } else if (same_so_far && k < previous_depth_) {
      node = p.node;
      continue;
    } else {
      same_so_far = false;
    }
    node = p.node = profile_.child_node(node, p.id);
  }
  previous_depth_ = n;
  const uint32_t stack = node;
  if (u.walked) profile_.add_stop_reason(to_string(u.walk.reason));
  if (switched_out) {
    if (auto gone = exited_.find(u.tid); gone != exited_.end() && u.time >= gone->second) return;  // its end
    auto [it, added] = away_.try_emplace(u.tid);
    if (!added) ++untimed_off_cpu_;  // the switch back in of the one before was lost
    it->second = Away{stack, u.time, static_cast<uint16_t>(u.cpu)};
    return;
  }
  // A fixed period (perf record -c) is not in the samples: the event's.
  uint64_t weight = u.period;
  if (!(u.sample->sample_type & perf::sample::kPeriod) && u.event && !u.event->freq()) weight = u.event->sample_period;
  profile_.add_sample(stack, relative(u.time), u.tid, static_cast<uint16_t>(u.cpu), weight ? weight : 1);
}

void SampleProfileBuilder::add_switch(const ThreadSwitch& s) {
  if (!first_time_) first_time_ = s.time;
  last_time_ = std::max(last_time_, s.time);
  if (s.kind == ThreadSwitch::Kind::kFork) {
    exited_.erase(s.tid);
    return;
  }
  if (s.kind == ThreadSwitch::Kind::kExit) {
    exited_[s.tid] = s.time;
    away_.erase(s.tid);  // its last switch back in was lost: it ran to its end
    return;
  }
  if (s.kind == ThreadSwitch::Kind::kOut) {
    // The sample of this switch came just before it: it was preempted, not blocked.
    if (s.preempted) away_.erase(s.tid);
    return;
  }
  auto it = away_.find(s.tid);
  if (it == away_.end()) return;
  const Away& a = it->second;
  profile_.add_sample(a.stack, relative(a.time), s.tid, a.cpu, s.time > a.time ? s.time - a.time : 0,
                      SampleKind::kOffCpu);
  away_.erase(it);
}

// Threads still away when the recording ends were blocked until its end.
void SampleProfileBuilder::end_off_cpu() {
  std::vector<std::pair<uint32_t, Away>> left(away_.begin(), away_.end());
  std::sort(left.begin(), left.end(), [](const auto& a, const auto& b) { return a.second.time < b.second.time; });
  for (const auto& [tid, a] : left)
    profile_.add_sample(a.stack, relative(a.time), tid, a.cpu, last_time_ > a.time ? last_time_ - a.time : 0,
                        SampleKind::kOffCpu);
  away_.clear();
  if (untimed_off_cpu_) profile_.add_stop_reason("off-CPU sample not timed (its switch back lost)", untimed_off_cpu_);
  untimed_off_cpu_ = 0;
}

void SampleProfileBuilder::finish(const PerfUnwindResult& result) {
  end_off_cpu();
  profile_.add_lost_samples(result.stats.lost_samples);
  profile_.info().duration_ns = first_time_ ? last_time_ - *first_time_ : 0;
}

void SampleProfileBuilder::finish(uint64_t lost_samples) {
  end_off_cpu();
  profile_.add_lost_samples(lost_samples);
  profile_.info().duration_ns = first_time_ ? last_time_ - *first_time_ : 0;
}

uint32_t SampleProfileBuilder::module(const Module* m) {
  const uint64_t key = m ? m->id : 0;
  if (key == last_module_key_ && last_module_ != kNoModule) return last_module_;  // frames come in runs of one module
  auto [it, added] = modules_.try_emplace(key, kNoModule);
  last_module_key_ = key;
  if (!added) return last_module_ = it->second;
  last_module_ = kNoModule;  // set below, once made
  if (!m) return it->second = profile_.add_module("[kernel.kallsyms]", "", 0, 0, 0, 0);
  std::string build_id;
  uint64_t file_offset = 0;
  if (m->data) {
    if (auto id = m->data->elf().build_id()) build_id = elf::build_id_hex(*id);
    if (auto off = file_offset_of(*m)) file_offset = *off;
  }
  return it->second = profile_.add_module(m->name, build_id, m->start, m->end, file_offset, m->bias);
}

uint32_t SampleProfileBuilder::frame(const framewalk::SampleFrame& f, const UnwoundSample& u) {
  const bool kernel = f.kind == SampleFrameKind::kKernel;
  const Module* m = kernel ? nullptr : f.frame.module;
  const uint32_t mod = kernel ? module(nullptr) : m ? module(m) : kNoModule;
  const uint64_t address = kernel ? f.frame.pc : m ? f.frame.lookup_pc - m->bias : f.frame.lookup_pc;
  const uint32_t id = profile_.intern_frame(mod, address);
  if (id >= named_.size()) named_.resize(std::max<size_t>(id + 1, named_.size() * 2), 0);
  if (named_[id]) return id;
  named_[id] = 1;
  if (!symbols_) return id;
  Pending p;
  p.frame = id;
  p.kernel = kernel;
  p.pc = f.frame.pc;
  p.lookup_pc = f.frame.lookup_pc;
  p.symbol_pc = f.frame.symbol_pc;
  p.activation = f.frame.activation;
  if (m && m->data) {
    // Kept alive by a copy until the frame is named.
    auto [it, added] = kept_modules_.try_emplace(m->id);
    if (added) it->second = std::make_shared<const Module>(*m);
    p.module = it->second;
  }
  if (!kernel && (!m || m->jit)) {  // anonymous code: a JIT's, named by its perf map and jitdump
    p.jit_pid = u.pid;
    if (u.jitdump) p.jitdump = *u.jitdump;
  }
  if (defer_names_) {  // named by the background thread, or name_pending
    if (kernel) osrelease_ = u.file->osrelease;
    if (kernel || p.module || p.jit_pid) pending_.push_back(std::move(p));
    return id;
  }
  apply(names_of(p, u.file->osrelease));
  return id;
}

// The background thread: a queue of frames to name in, names out.
class SampleProfileBuilder::Background {
 public:
  Background(SampleProfileBuilder& owner, bool idle) : owner_(owner), idle_(idle), thread_([this] { run(); }) {}
  ~Background() { stop(); }

  void give(std::vector<Pending>& pending, const std::string& osrelease) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Pending& p : pending) in_.push_back(std::move(p));
    osrelease_ = osrelease;
    pending.clear();
    wake_.notify_one();
  }
  void take(std::vector<Named>* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Named& n : out_) out->push_back(std::move(n));
    out_.clear();
  }
  // Stops after the frame in hand; what was not named is left in `rest`.
  void stop(std::vector<Pending>* rest = nullptr) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      wake_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
    if (rest)
      for (Pending& p : in_) rest->push_back(std::move(p));
    in_.clear();
  }

 private:
  void run() {
    // Below the program: it names with what the CPUs have left. SCHED_IDLE
    // weighs a fifth of nice 19 against a busy program (3 against 15, where
    // the program's thread weighs 1024); what it cannot do meanwhile is
    // done when the recording ends.
    sched_param param{};
    if (idle_ && sched_setscheduler(0, SCHED_IDLE, &param) != 0)
      setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return stopping_ || !in_.empty(); });
      if (stopping_) return;
      Pending p = std::move(in_.front());
      in_.pop_front();
      const std::string osrelease = osrelease_;
      lock.unlock();
      Named named = owner_.names_of(p, osrelease);
      p.module.reset();
      lock.lock();
      out_.push_back(std::move(named));
    }
  }

  SampleProfileBuilder& owner_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Pending> in_;
  std::vector<Named> out_;
  std::string osrelease_;
  bool stopping_ = false;
  bool idle_;           // at idle priority
  std::thread thread_;  // last: started once the rest is made
};

SampleProfileBuilder::SampleProfileBuilder(symbol::KernelSymbols& kernel, bool symbols, bool defer_names)
    : kernel_(kernel), symbols_(symbols), defer_names_(defer_names) {}

SampleProfileBuilder::~SampleProfileBuilder() { stop_background_naming(); }

void SampleProfileBuilder::start_background_naming(bool idle) {
  if (defer_names_ && symbols_ && !background_) background_ = std::make_unique<Background>(*this, idle);
}

void SampleProfileBuilder::collect_names() {
  if (!background_) return;
  background_->give(pending_, osrelease_);
  kept_modules_.clear();  // the pending frames hold their modules
  std::vector<Named> named;
  background_->take(&named);
  for (const Named& n : named) apply(n);
}

void SampleProfileBuilder::stop_background_naming() {
  if (!background_) return;
  std::vector<Pending> rest;
  background_->stop(&rest);
  std::vector<Named> named;
  background_->take(&named);
  background_.reset();
  for (const Named& n : named) apply(n);
  rest.insert(rest.end(), std::make_move_iterator(pending_.begin()), std::make_move_iterator(pending_.end()));
  pending_ = std::move(rest);
}

void SampleProfileBuilder::name_pending() {
  stop_background_naming();
  for (const Pending& p : pending_) apply(names_of(p, osrelease_));
  // Jit frames whose names were not written yet when they were named.
  retrying_ = true;
  for (const Pending& p : unnamed_jit_) apply(names_of(p, osrelease_));
  unnamed_jit_.clear();
  retrying_ = false;
  pending_.clear();
  pending_.shrink_to_fit();
  kept_modules_.clear();
}

SampleProfileBuilder::Named SampleProfileBuilder::names_of(const Pending& p, const std::string& osrelease) {
  Named out;
  out.frame = p.frame;
  if (p.kernel) {
    kernel_.load_if(osrelease);
    std::string n = kernel_.name(p.pc);
    if (const size_t plus = n.rfind("+0x"); plus != std::string::npos) n.resize(plus);
    if (n != "[unknown]") out.lines.push_back({std::move(n), {}, 0, 0});
    return out;
  }
  if (p.jit_pid) {
    // A JIT names its code in its perf map; read again for a name not yet there.
    if (const symbol::PerfMap* map = perf_map(p.jit_pid, p.lookup_pc, p.jitdump))
      if (const symbol::PerfMap::Entry* e = map->find(p.lookup_pc)) {
        // With the source line a jitdump's DEBUG_INFO gives, where it does.
        const symbol::PerfMap::SourceLine* l = map->source_line(p.symbol_pc);
        out.lines.push_back({std::string(e->name), l ? std::string(l->file) : std::string(), l ? l->line : 0, 0});
      }
    if (out.lines.empty() && !retrying_) unnamed_jit_.push_back(p);
    return out;
  }
  if (!p.module || !p.module->data) return out;
  Frame frame;
  frame.pc = p.pc;
  frame.lookup_pc = p.lookup_pc;
  frame.symbol_pc = p.symbol_pc;
  frame.activation = p.activation;
  frame.module = p.module.get();
  const FrameSymbol symbol = symbolize(frame);
  for (const SourceFrame& sf : source_frames(frame, true))
    out.lines.push_back({sf.function.empty() ? symbol.function : sf.function, sf.file, sf.line, sf.column});
  if (out.lines.size() == 1 && out.lines[0].function.empty() && out.lines[0].file.empty()) out.lines.clear();
  return out;
}

const symbol::PerfMap* SampleProfileBuilder::perf_map(uint32_t pid, uint64_t address, const std::string& jitdump) {
  auto [it, added] = perf_maps_.try_emplace(pid);
  JitNames& names = it->second;
  if (added) names.map = std::make_unique<symbol::PerfMap>(symbol::PerfMap::path_of(pid));
  else if (names.map->find(address)) return names.map.get();
  (void)names.map->refresh();  // none, or unreadable: no names; else the lines appended since
  struct stat st {};
  if (!jitdump.empty() && ::stat(jitdump.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_size) > names.jitdump_bytes) {
    names.jitdump_bytes = static_cast<uint64_t>(st.st_size);
    auto file = read_jitdump(jitdump);
    if (file) {
      names.map->add_jitdump((*file)->dump, names.jitdump_records);
      names.jitdump_records = (*file)->dump.records;
      names.jitdump_problem.clear();
    } else {
      names.jitdump_problem = jitdump + ": " + to_string(file.error().code) + " at offset 0x" +
                              hex_digits(file.error().offset) + ": its names are not read";
    }
  }
  return names.map.get();
}

std::vector<std::string> SampleProfileBuilder::warnings() const {
  std::vector<std::string> out;
  for (const auto& [pid, names] : perf_maps_) {
    if (names.map->malformed()) out.push_back(names.map->path() + ": " + names.map->malformed_text());
    if (!names.jitdump_problem.empty()) out.push_back(names.jitdump_problem);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void SampleProfileBuilder::apply(const Named& named) {
  if (named.lines.empty()) return;
  lines_.clear();
  for (const NamedLine& l : named.lines)
    lines_.push_back({l.function.empty() ? 0 : profile_.intern(l.function), l.file.empty() ? 0 : profile_.intern(l.file),
                      l.line, l.column});
  profile_.set_frame_lines(named.frame, lines_);
}

}  // namespace framewalk::profile
