#include "profile/recorder.hpp"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>

#include "perf/perf_data.hpp"
#include "profile/profile_file.hpp"
#include "profile/sample_builder.hpp"
#include "symbol/kernel_symbols.hpp"
#include "target/proc_maps.hpp"
#include "walk/perf_samples.hpp"

namespace framewalk::profile {

namespace {

constexpr uint32_t kRecordMmap2 = 10, kRecordComm = 3;
constexpr uint16_t kMiscUser = 2;

void put16(std::string* out, uint16_t v) { out->append(reinterpret_cast<const char*>(&v), 2); }
void put32(std::string* out, uint32_t v) { out->append(reinterpret_cast<const char*>(&v), 4); }
void put64(std::string* out, uint64_t v) { out->append(reinterpret_cast<const char*>(&v), 8); }
// A NUL-terminated string padded to 8 bytes, as the kernel writes names.
void put_name(std::string* out, const std::string& s) {
  const size_t n = (s.size() + 1 + 7) & ~size_t{7};
  out->append(s);
  out->append(n - s.size(), '\0');
}
// A record: its header, then `body`; false when it is larger than a record's 16-bit size.
bool put_record(std::string* out, uint32_t type, uint16_t misc, const std::string& body) {
  if (body.size() + 8 > 0xffff) return false;
  put32(out, type);
  put16(out, misc);
  put16(out, static_cast<uint16_t>(body.size() + 8));
  out->append(body);
  return true;
}
// The sample_id trailer of a record made here, for the Sampler's attributes
// (TID, TIME, CPU, IDENTIFIER; in the kernel's order).
void put_trailer(std::string* body, const perf_event_attr& attr, uint32_t pid, uint32_t tid, uint64_t identifier) {
  if (!attr.sample_id_all) return;
  const uint64_t t = attr.sample_type;
  if (t & PERF_SAMPLE_TID) {
    put32(body, pid);
    put32(body, tid);
  }
  if (t & PERF_SAMPLE_TIME) put64(body, 0);
  if (t & PERF_SAMPLE_ID) put64(body, identifier);
  if (t & PERF_SAMPLE_STREAM_ID) put64(body, identifier);
  if (t & PERF_SAMPLE_CPU) put64(body, 0);
  if (t & PERF_SAMPLE_IDENTIFIER) put64(body, identifier);
}


std::string read_first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// This process's CPU time (or the calling thread's), user and system.
double own_cpu_seconds(int who = RUSAGE_SELF) {
  struct rusage u {};
  getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

uint64_t now_ms() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

std::string synthesize_process_records(pid_t pid, const perf_event_attr& attr, uint64_t identifier) {
  std::string out;
  const std::vector<pid_t> tids = record::threads_of(pid);
  for (pid_t tid : tids) {
    std::string body;
    put32(&body, static_cast<uint32_t>(pid));
    put32(&body, static_cast<uint32_t>(tid));
    put_name(&body, read_first_line("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm"));
    put_trailer(&body, attr, static_cast<uint32_t>(pid), static_cast<uint32_t>(tid), identifier);
    put_record(&out, kRecordComm, 0, body);
  }
  for (const MapEntry& e : read_proc_maps(pid)) {
    if (e.perms.size() < 3 || e.perms[2] != 'x') continue;
    std::string body;
    put32(&body, static_cast<uint32_t>(pid));
    put32(&body, static_cast<uint32_t>(pid));
    put64(&body, e.start);
    put64(&body, e.end - e.start);
    put64(&body, e.offset);
    unsigned major = 0, minor = 0;
    std::sscanf(e.device.c_str(), "%x:%x", &major, &minor);
    put32(&body, major);
    put32(&body, minor);
    put64(&body, e.inode);
    put64(&body, 0);  // inode generation
    const uint32_t prot = (e.perms[0] == 'r' ? 1u : 0u) | (e.perms[1] == 'w' ? 2u : 0u) | 4u;
    put32(&body, prot);
    put32(&body, e.perms.size() > 3 && e.perms[3] == 's' ? 1u : 2u);  // MAP_SHARED or MAP_PRIVATE
    put_name(&body, e.path.empty() ? "//anon" : e.path);  // anonymous code as perf names it
    put_trailer(&body, attr, static_cast<uint32_t>(pid), static_cast<uint32_t>(pid), identifier);
    put_record(&out, kRecordMmap2, kMiscUser, body);
  }
  return out;
}

Result<RecordResult> record_samples(record::Sampler& sampler, const std::vector<pid_t>& existing,
                                    const RecordOptions& options, int fd, FunctionRef<bool()> keep_going,
                                    FunctionRef<void(const RecordStatus&)> on_status) {
  const perf_event_attr& attr = sampler.attr();
  // What a perf.data header would say: the events (their ids tell a
  // record's event), this machine's kernel release and name.
  perf::FileInfo info;
  info.pipe = true;
  for (const record::Sampler::Event& e : sampler.events()) {
    auto parsed = perf::parse_event_attr(Bytes(reinterpret_cast<const uint8_t*>(&e.attr), e.attr.size));
    if (!parsed) return Error{ErrorCode::kBadArgument, 0};
    parsed->ids = e.ids;
    info.attrs.add(std::move(*parsed));
  }
  struct utsname u {};
  if (uname(&u) == 0) {
    info.osrelease = u.release;
    info.hostname = u.nodename;
  }
  const uint64_t identifier = sampler.events()[0].ids.empty() ? 0 : sampler.events()[0].ids[0];
  // What the processes already have, as the kernel would have said it.
  std::string prelude;
  for (pid_t pid : existing) prelude += synthesize_process_records(pid, attr, identifier);

  RecordResult result;
  RecordStatus& status = result.status;
  symbol::KernelSymbols kernel(options.kallsyms);
  SampleProfileBuilder builder(kernel, options.symbols, /*defer_names=*/true);
  builder.start_background_naming();
  // What the recording is, in the file's first chunks already (a recording
  // cut short keeps them).
  auto describe = [&] {
    RecordingInfo& info = builder.profile().info();
    info.event = builder.profile().intern(options.event);
    info.frequency = attr.freq ? attr.sample_freq : 0;
    info.period = attr.freq ? 0 : attr.sample_period;
    info.weight_unit = builder.profile().intern(options.event_is_clock ? "nanoseconds" : "events");
    info.command_line.clear();
    for (const std::string& a : options.command_line) info.command_line.push_back(builder.profile().intern(a));
    if (uname(&u) == 0) info.hostname = builder.profile().intern(u.nodename);
  };
  describe();
  ProfileWriterOptions wo;
  wo.compress = options.compress;
  ProfileFileWriter writer(wo);
  std::string bytes;
  std::optional<Error> write_error;
  auto write_out = [&] {
    size_t at = 0;
    while (at < bytes.size() && !write_error) {
      const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
      if (n < 0) {
        if (errno == EINTR) continue;
        write_error = Error{ErrorCode::kIoError, static_cast<uint64_t>(errno)};
        break;
      }
      at += static_cast<size_t>(n);
    }
    status.bytes_written += at;
    bytes.clear();
  };
  const uint64_t start_ms = now_ms();
  const double cpu_seconds_start = own_cpu_seconds();
  const double thread_cpu_seconds_start = own_cpu_seconds(RUSAGE_THREAD);
  uint64_t last_flush = start_ms, last_status = 0;
  auto tick = [&] {
    const uint64_t now = now_ms();
    status.seconds = static_cast<double>(now - start_ms) / 1000;
    builder.collect_names();
    if (now - last_flush >= options.flush_interval_ms) {
      writer.flush(builder.profile(), &bytes);
      write_out();
      last_flush = now;
    }
    if (now - last_status >= options.status_interval_ms) {
      last_status = now;
      on_status(status);
    }
  };
  PerfUnwindOptions po;
  po.max_frames = options.max_frames;
  po.files.buildid_dir.clear();  // the files are here, as mapped
  po.live = true;                 // and the processes are running: their memory can be read
  auto on_switch = [&](const ThreadSwitch& t) { builder.add_switch(t); };
  auto on_sample = [&](const UnwoundSample& s) {
    builder.add(s);
    ++status.samples;
    if (s.event && is_context_switch_event(*s.event)) ++status.switch_samples;
    if (s.walked) {
      if (s.walk.reason == StopReason::kOutermost || s.walk.reason == StopReason::kCannotUnwind) ++status.complete;
      else ++status.truncated;
    }
    return true;
  };
  PerfSampleUnwinder unwinder(po, on_sample, on_switch);
  unwinder.begin(info);
  // Each record from the ring buffers (or the prelude), decoded where it
  // is and handed to the unwinder, which keeps a copy until its round is
  // over (a sample's stack copy cut to its valid bytes): one copy in all.
  perf::Record record;
  auto feed = [&](const uint8_t* bytes, size_t size) {
    const Bytes b(bytes, size);
    if (auto decoded = perf::decode_record(b, info.attrs, &record); !decoded) {
      if (!result.read_error)
        result.read_error = "record " + std::to_string(status.records) + " (" + perf::record_type_name(record.type) +
                            "): " + to_string(decoded.error().code) + " at offset " +
                            std::to_string(decoded.error().offset);
      ++status.records;
      return;
    }
    record.index = status.records++;
    record.file_offset = 0;
    unwinder.record(record);
  };
  for (size_t at = 0; at + sizeof(perf_event_header) <= prelude.size();) {
    perf_event_header h;
    std::memcpy(&h, prelude.data() + at, sizeof h);
    if (h.size < sizeof h || at + h.size > prelude.size()) break;
    feed(reinterpret_cast<const uint8_t*>(prelude.data() + at), h.size);
    at += h.size;
  }
  unwinder.end_round();
  // Batches until the recording is to stop or every thread has ended, then
  // one more read: what the rings hold at the end.
  while (true) {
    const bool go_on = keep_going() && !write_error.has_value();
    const bool alive = sampler.read(go_on ? 100 : 0, feed);
    unwinder.end_round();
    tick();
    if (!go_on || !alive) break;
  }
  unwinder.finish();
  status.lost = unwinder.stats().lost_samples;
  const double cpu_while_sampling = own_cpu_seconds() - cpu_seconds_start;
  status.sampling_cpu_seconds = own_cpu_seconds(RUSAGE_THREAD) - thread_cpu_seconds_start;
  status.naming_cpu_seconds = std::max(0.0, cpu_while_sampling - status.sampling_cpu_seconds);
  builder.finish(status.lost);
  builder.name_pending();  // what the background thread had not named yet
  describe();
  writer.finish(builder.profile(), &bytes);
  write_out();
  if (write_error) return *write_error;
  for (const StopReasonCount& r : builder.profile().stop_reasons())
    result.stop_reasons.emplace_back(std::string(builder.profile().string(r.reason)), r.count);
  result.warnings = unwinder.warnings();
  for (std::string& w : builder.warnings()) result.warnings.push_back(std::move(w));
  if (!kernel.problem().empty()) result.warnings.push_back(kernel.problem());
  status.seconds = static_cast<double>(now_ms() - start_ms) / 1000;
  status.finishing_cpu_seconds = own_cpu_seconds() - cpu_seconds_start - cpu_while_sampling;
  on_status(status);
  return result;
}

}  // namespace framewalk::profile
