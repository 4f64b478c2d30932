#include "profile/sample_profile.hpp"

#include "base/text.hpp"

namespace framewalk::profile {

namespace {

inline uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}
inline uint64_t node_hash(uint32_t parent, uint32_t frame) { return mix((uint64_t{parent} << 32) | frame); }
inline uint64_t frame_hash(uint32_t module, uint64_t address) { return mix(address * 31 + module); }

}  // namespace

SampleProfile::SampleProfile() {
  strings_.emplace_back();
  string_index_.emplace(std::string_view(strings_.back()), 0);
  node_slots_.assign(1024, 0);
  frame_slots_.assign(1024, 0);
}

StringId SampleProfile::intern(std::string_view s) {
  if (auto it = string_index_.find(s); it != string_index_.end()) return it->second;
  return append_string(s);
}

StringId SampleProfile::append_string(std::string_view s) {
  const auto id = static_cast<StringId>(strings_.size());
  strings_.emplace_back(s);
  string_index_.emplace(std::string_view(strings_.back()), id);  // a duplicate keeps the first id
  return id;
}

uint32_t SampleProfile::add_module(std::string_view path, std::string_view build_id_hex, uint64_t start,
                                   uint64_t end, uint64_t file_offset, uint64_t bias) {
  modules_.push_back(SampleModule{intern(path), intern(build_id_hex), start, end, file_offset, bias});
  return static_cast<uint32_t>(modules_.size() - 1);
}

void SampleProfile::grow_frame_index() {
  std::vector<uint32_t> slots(frame_slots_.size() * 2, 0);
  const size_t mask = slots.size() - 1;
  for (uint32_t id = 0; id < frames_.size(); ++id) {
    size_t i = frame_hash(frames_[id].module, frames_[id].address) & mask;
    while (slots[i]) i = (i + 1) & mask;
    slots[i] = id + 1;
  }
  frame_slots_ = std::move(slots);
}

uint32_t SampleProfile::intern_frame(uint32_t module, uint64_t address) {
  const size_t mask = frame_slots_.size() - 1;
  size_t i = frame_hash(module, address) & mask;
  while (const uint32_t slot = frame_slots_[i]) {
    const SampleFrame& f = frames_[slot - 1];
    if (f.address == address && f.module == module) return slot - 1;
    i = (i + 1) & mask;
  }
  return append_frame(module, address);
}

uint32_t SampleProfile::append_frame(uint32_t module, uint64_t address) {
  const auto id = static_cast<uint32_t>(frames_.size());
  frames_.push_back(SampleFrame{module, address, 0, 0});
  if ((frames_.size()) * 2 > frame_slots_.size()) {
    grow_frame_index();
  } else {
    const size_t mask = frame_slots_.size() - 1;
    size_t i = frame_hash(module, address) & mask;
    while (frame_slots_[i]) i = (i + 1) & mask;
    frame_slots_[i] = id + 1;
  }
  return id;
}

void SampleProfile::set_frame_lines(uint32_t frame, std::span<const SourceLine> lines) {
  if (frame >= frames_.size()) return;
  SampleFrame& f = frames_[frame];
  if (lines.size() <= f.line_count) {  // reuse its place
    std::copy(lines.begin(), lines.end(), lines_.begin() + f.first_line);
  } else {
    f.first_line = static_cast<uint32_t>(lines_.size());
    lines_.insert(lines_.end(), lines.begin(), lines.end());
  }
  f.line_count = static_cast<uint32_t>(lines.size());
  named_log_.push_back(frame);
}

void SampleProfile::grow_node_index() {
  std::vector<uint32_t> slots(node_slots_.size() * 2, 0);
  const size_t mask = slots.size() - 1;
  for (uint32_t id = 0; id < nodes_.size(); ++id) {
    size_t i = node_hash(nodes_[id].parent, nodes_[id].frame) & mask;
    while (slots[i]) i = (i + 1) & mask;
    slots[i] = id + 1;
  }
  node_slots_ = std::move(slots);
}

uint32_t SampleProfile::child_node(uint32_t parent, uint32_t frame) {
  const size_t mask = node_slots_.size() - 1;
  size_t i = node_hash(parent, frame) & mask;
  while (const uint32_t slot = node_slots_[i]) {
    const StackNode& n = nodes_[slot - 1];
    if (n.parent == parent && n.frame == frame) return slot - 1;
    i = (i + 1) & mask;
  }
  const auto id = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(StackNode{parent, frame});
  if (nodes_.size() * 2 > node_slots_.size()) {
    grow_node_index();
  } else {
    node_slots_[i] = id + 1;
  }
  return id;
}

void SampleProfile::append_node(StackNode n) {
  const auto id = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(n);
  if (nodes_.size() * 2 > node_slots_.size()) {
    grow_node_index();
    return;
  }
  const size_t mask = node_slots_.size() - 1;
  size_t i = node_hash(n.parent, n.frame) & mask;
  while (node_slots_[i]) i = (i + 1) & mask;
  node_slots_[i] = id + 1;
}

uint32_t SampleProfile::push_stack(std::span<const uint32_t> frames) {
  uint32_t node = kNoNode;
  for (size_t i = frames.size(); i-- > 0;) node = child_node(node, frames[i]);
  return node;
}

void SampleProfile::add_thread(uint32_t pid, uint32_t tid, std::string_view name) {
  const StringId n = intern(name);
  auto [it, added] = thread_index_.try_emplace(tid, static_cast<uint32_t>(threads_.size()));
  if (added) {
    threads_.push_back(SampleThread{pid, tid, n});
  } else {
    if (threads_[it->second].name == n && threads_[it->second].pid == pid) return;
    threads_[it->second].name = n;
    threads_[it->second].pid = pid;
  }
  thread_log_.push_back(it->second);
}

const SampleThread* SampleProfile::thread(uint32_t tid) const {
  auto it = thread_index_.find(tid);
  return it == thread_index_.end() ? nullptr : &threads_[it->second];
}

void SampleProfile::add_stop_reason(std::string_view reason, uint64_t count) {
  const StringId r = intern(reason);
  auto [it, added] = stop_index_.try_emplace(r, static_cast<uint32_t>(stop_reasons_.size()));
  if (added) stop_reasons_.push_back(StopReasonCount{r, 0});
  stop_reasons_[it->second].count += count;
}

void SampleProfile::reserve(size_t samples, size_t nodes, size_t frames) {
  samples_.reserve(samples);
  nodes_.reserve(nodes);
  frames_.reserve(frames);
  size_t slots = node_slots_.size();
  while (slots < nodes * 2) slots *= 2;
  if (slots != node_slots_.size()) {
    node_slots_.assign(slots / 2, 0);
    grow_node_index();
  }
}

size_t SampleProfile::memory_bytes() const {
  return samples_.capacity() * sizeof(Sample) + nodes_.capacity() * sizeof(StackNode) +
         node_slots_.capacity() * 4 + frames_.capacity() * sizeof(SampleFrame) + frame_slots_.capacity() * 4 +
         lines_.capacity() * sizeof(SourceLine) + strings_.size() * sizeof(std::string);
}

std::string frame_name(const SampleProfile& p, const SampleFrame& f, size_t line) {
  const std::span<const SourceLine> lines = p.lines_of(f);
  if (line < lines.size() && lines[line].function != 0) return std::string(p.string(lines[line].function));
  if (f.module < p.modules().size()) {
    std::string_view path = p.string(p.modules()[f.module].path);
    if (const size_t slash = path.rfind('/'); slash != std::string_view::npos) path.remove_prefix(slash + 1);
    return std::string(path) + "+" + hex(f.address);
  }
  return hex(f.address);
}

}  // namespace framewalk::profile
