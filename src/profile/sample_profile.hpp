// A sampled profile once unwound: what `framewalk record` builds and
// `framewalk report` shows (docs/report.md). Plain tables addressed by
// 32-bit ids:
//
//  - strings, interned (id 0 is the empty string);
//  - modules: path, build-id, load range and file offset;
//  - frames: one code address of one module (link-time), with what the
//    symbolizer said of it: one or more named lines, innermost first (the
//    functions inlined at that address, then the function they are in);
//  - stack nodes: a deduplicated tree, each node a frame and its caller's
//    node; a sample points at its leaf (innermost) node;
//  - threads, samples (time, thread, CPU, weight, on- or off-CPU);
//  - the recording's accounting: lost samples, walks by stop reason, the
//    event and its rate, duration, command line.
//
// The builder API (intern_frame, push_stack, add_sample) is what the
// recorder calls per sample: a hash probe a frame, then one probe for the
// whole stack and a walk up its nodes to check it (a new stack: a probe a
// frame not shared with the previous stack); no allocation once the tables
// have grown. 1M samples of depth 30 take about 0.6 s (docs/report.md).
// Ids are dense and never change: the recording file (profile_file.hpp)
// writes the tables incrementally by id.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace framewalk::profile {

using StringId = uint32_t;
inline constexpr uint32_t kNoModule = UINT32_MAX;
inline constexpr uint32_t kNoNode = UINT32_MAX;  // a root node's parent

struct SampleModule {
  StringId path = 0;
  StringId build_id = 0;  // hex, or 0 when unknown
  uint64_t start = 0;     // load range [start, end) in the process
  uint64_t end = 0;
  uint64_t file_offset = 0;  // of the mapping's first byte
  uint64_t bias = 0;         // load bias: runtime address = link-time address + bias
};

// One named frame: a function and the position in it.
struct SourceLine {
  StringId function = 0;  // 0: not known
  StringId file = 0;
  uint32_t line = 0;
  uint32_t column = 0;
};

struct SampleFrame {
  uint32_t module = kNoModule;
  uint64_t address = 0;     // link-time (module-relative) address the names are for
  uint32_t first_line = 0;  // into SampleProfile::lines()
  uint32_t line_count = 0;  // 0: not symbolized
};

struct StackNode {
  uint32_t parent = kNoNode;
  uint32_t frame = 0;
};

struct SampleThread {
  uint32_t pid = 0;
  uint32_t tid = 0;
  StringId name = 0;
};

enum class SampleKind : uint8_t { kOnCpu = 0, kOffCpu = 1 };

struct Sample {
  uint64_t time_ns = 0;  // since the recording's start_time_ns
  uint64_t weight = 0;   // on-CPU: the period (ns for a clock event); off-CPU: ns off the CPU
  uint32_t stack = kNoNode;  // leaf node; kNoNode: no frame at all
  uint32_t tid = 0;
  uint16_t cpu = 0;
  SampleKind kind = SampleKind::kOnCpu;
};
static_assert(sizeof(Sample) == 32);

struct StopReasonCount {
  StringId reason = 0;  // "outermost", "no-unwind-info at 0x…", "stack copy ended", "truncated"
  uint64_t count = 0;
};

struct RecordingInfo {
  StringId event = 0;        // "cpu-clock", "cycles", …
  uint64_t frequency = 0;    // samples a second asked for (0: a period was asked)
  uint64_t period = 0;       // events a sample, when fixed
  StringId weight_unit = 0;  // "nanoseconds" (clock events) or "events"
  uint64_t start_time_ns = 0;  // wall clock (ns since the epoch) of time 0
  uint64_t duration_ns = 0;
  std::vector<StringId> command_line;
  StringId hostname = 0;
};

class SampleProfile {
 public:
  SampleProfile();

  // --- building (the recorder) ---
  StringId intern(std::string_view s);
  uint32_t add_module(std::string_view path, std::string_view build_id_hex, uint64_t start, uint64_t end,
                      uint64_t file_offset, uint64_t bias);
  // The frame at `address` of `module` (kNoModule: none), made on first use.
  // `address` is link-time (runtime address - the module's bias) and is the
  // one the names are for: a caller's frame is looked up inside its call
  // (the return address minus one), which is the recorder's to choose.
  uint32_t intern_frame(uint32_t module, uint64_t address);
  // Names a frame: `lines` innermost first. Replaces what it had.
  void set_frame_lines(uint32_t frame, std::span<const SourceLine> lines);
  // The node of this stack, frames innermost first (index 0 is the leaf);
  // kNoNode for an empty stack. O(depth), one hash probe for a stack seen
  // before.
  uint32_t push_stack(std::span<const uint32_t> frames_innermost_first);
  // The node of `frame` called from `parent` (kNoNode: a root).
  uint32_t child_node(uint32_t parent, uint32_t frame);
  // A thread seen; a second call for a tid renames it.
  void add_thread(uint32_t pid, uint32_t tid, std::string_view name);
  void add_sample(const Sample& s) { samples_.push_back(s); }
  void add_sample(uint32_t stack, uint64_t time_ns, uint32_t tid, uint16_t cpu, uint64_t weight,
                  SampleKind kind = SampleKind::kOnCpu) {
    samples_.push_back(Sample{time_ns, weight, stack, tid, cpu, kind});
  }
  void add_lost_samples(uint64_t n) { lost_samples_ += n; }
  void add_stop_reason(std::string_view reason, uint64_t count = 1);
  RecordingInfo& info() { return info_; }
  // Reserve for about this many samples, nodes and frames (optional).
  void reserve(size_t samples, size_t nodes, size_t frames);

  // --- reading ---
  std::string_view string(StringId id) const { return id < strings_.size() ? std::string_view(strings_[id]) : ""; }
  size_t string_count() const { return strings_.size(); }
  const std::vector<SampleModule>& modules() const { return modules_; }
  const std::vector<SampleFrame>& frames() const { return frames_; }
  std::span<const SourceLine> lines_of(const SampleFrame& f) const {
    return std::span<const SourceLine>(lines_).subspan(f.first_line, f.line_count);
  }
  const std::vector<SourceLine>& lines() const { return lines_; }
  const std::vector<StackNode>& nodes() const { return nodes_; }
  const std::vector<SampleThread>& threads() const { return threads_; }
  const SampleThread* thread(uint32_t tid) const;
  const std::vector<Sample>& samples() const { return samples_; }
  uint64_t lost_samples() const { return lost_samples_; }
  const std::vector<StopReasonCount>& stop_reasons() const { return stop_reasons_; }
  const RecordingInfo& info() const { return info_; }
  // Frames named since the profile began, in order (the file writer's log).
  const std::vector<uint32_t>& named_frames_log() const { return named_log_; }
  // Threads added or renamed, in order (the file writer's log).
  const std::vector<uint32_t>& thread_log() const { return thread_log_; }
  // Bytes held by the tables (not the strings' characters).
  size_t memory_bytes() const;

  // --- the file reader's raw access (ids checked by the reader) ---
  void set_lost_samples(uint64_t n) { lost_samples_ = n; }
  void clear_stop_reasons() {
    stop_reasons_.clear();
    stop_index_.clear();
  }
  // Appended as they are, duplicates included, so that ids stay the file's.
  StringId append_string(std::string_view s);
  uint32_t append_frame(uint32_t module, uint64_t address);
  void append_node(StackNode n);
  void add_module(const SampleModule& m) { modules_.push_back(m); }

 private:
  void grow_node_index();
  void insert_node_slot(uint32_t id);
  void grow_frame_index();
  void insert_frame_slot(uint32_t id);

  std::deque<std::string> strings_;
  std::unordered_map<std::string_view, StringId> string_index_;
  std::vector<SampleModule> modules_;
  std::vector<SampleFrame> frames_;
  std::vector<SourceLine> lines_;
  // Open addressing, the key in the slot (one cache miss a probe).
  struct FrameSlot {
    uint64_t address;
    uint32_t module;
    uint32_t id;  // frame id + 1; 0: empty
  };
  struct NodeSlot {
    uint32_t parent;
    uint32_t frame;
    uint32_t id;  // node id + 1; 0: empty
  };
  std::vector<FrameSlot> frame_slots_;
  std::vector<StackNode> nodes_;
  std::vector<NodeSlot> node_slots_;
  // Whole stacks seen before, by a hash of their frames: a stack seen
  // before costs one probe and a walk up its (mostly adjacent) nodes to
  // check it, instead of a probe a frame.
  struct StackSlot {
    uint64_t hash;
    uint32_t leaf;  // node id + 1; 0: empty
  };
  std::vector<StackSlot> stack_slots_;
  size_t stacks_ = 0;
  // The last stack pushed, outermost first, and its nodes: a new stack
  // sharing its callers with the previous one skips their lookups.
  std::vector<uint32_t> last_frames_, last_nodes_;
  uint32_t build_stack(std::span<const uint32_t> frames);
  std::vector<SampleThread> threads_;
  std::unordered_map<uint32_t, uint32_t> thread_index_;  // tid -> index
  std::vector<Sample> samples_;
  uint64_t lost_samples_ = 0;
  std::vector<StopReasonCount> stop_reasons_;
  std::unordered_map<StringId, uint32_t> stop_index_;
  RecordingInfo info_;
  std::vector<uint32_t> named_log_;
  std::vector<uint32_t> thread_log_;
};

// The display name of a frame's line `i` (innermost first): its function,
// else "module+0xADDR" (or "0xADDR") for a frame nobody named.
std::string frame_name(const SampleProfile& p, const SampleFrame& f, size_t line);

}  // namespace framewalk::profile
