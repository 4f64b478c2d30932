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
  node_slots_.assign(1024, NodeSlot{0, 0, 0});
  frame_slots_.assign(1024, FrameSlot{0, 0, 0});
  stack_slots_.assign(1024, StackSlot{0, 0});
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

void SampleProfile::insert_frame_slot(uint32_t id) {
  const size_t mask = frame_slots_.size() - 1;
  const SampleFrame& f = frames_[id];
  size_t i = frame_hash(f.module, f.address) & mask;
  while (frame_slots_[i].id) i = (i + 1) & mask;
  frame_slots_[i] = FrameSlot{f.address, f.module, id + 1};
}

void SampleProfile::grow_frame_index() {
  frame_slots_.assign(frame_slots_.size() * 2, FrameSlot{0, 0, 0});
  for (uint32_t id = 0; id < frames_.size(); ++id) insert_frame_slot(id);
}

uint32_t SampleProfile::intern_frame(uint32_t module, uint64_t address) {
  const size_t mask = frame_slots_.size() - 1;
  for (size_t i = frame_hash(module, address) & mask;; i = (i + 1) & mask) {
    const FrameSlot& slot = frame_slots_[i];
    if (!slot.id) break;
    if (slot.address == address && slot.module == module) return slot.id - 1;
  }
  return append_frame(module, address);
}

uint32_t SampleProfile::append_frame(uint32_t module, uint64_t address) {
  const auto id = static_cast<uint32_t>(frames_.size());
  frames_.push_back(SampleFrame{module, address, 0, 0});
  if (frames_.size() * 2 > frame_slots_.size()) {
    grow_frame_index();
  } else {
    insert_frame_slot(id);
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

void SampleProfile::insert_node_slot(uint32_t id) {
  const size_t mask = node_slots_.size() - 1;
  const StackNode& n = nodes_[id];
  size_t i = node_hash(n.parent, n.frame) & mask;
  while (node_slots_[i].id) i = (i + 1) & mask;
  node_slots_[i] = NodeSlot{n.parent, n.frame, id + 1};
}

void SampleProfile::grow_node_index() {
  node_slots_.assign(node_slots_.size() * 2, NodeSlot{0, 0, 0});
  for (uint32_t id = 0; id < nodes_.size(); ++id) insert_node_slot(id);
}

uint32_t SampleProfile::child_node(uint32_t parent, uint32_t frame) {
  const size_t mask = node_slots_.size() - 1;
  for (size_t i = node_hash(parent, frame) & mask;; i = (i + 1) & mask) {
    const NodeSlot& slot = node_slots_[i];
    if (!slot.id) break;
    if (slot.parent == parent && slot.frame == frame) return slot.id - 1;
  }
  const auto id = static_cast<uint32_t>(nodes_.size());
  append_node(StackNode{parent, frame});
  return id;
}

void SampleProfile::append_node(StackNode n) {
  const auto id = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(n);
  if (nodes_.size() * 2 > node_slots_.size()) {
    grow_node_index();
  } else {
    insert_node_slot(id);
  }
}

uint32_t SampleProfile::push_stack(std::span<const uint32_t> frames) {
  if (frames.empty()) return kNoNode;
  uint64_t h = frames.size();
  for (uint32_t f : frames) h = (h ^ f) * 0x9e3779b97f4a7c15ULL;
  h = mix(h);
  size_t mask = stack_slots_.size() - 1;
  size_t i = h & mask;
  for (;; i = (i + 1) & mask) {
    const StackSlot& slot = stack_slots_[i];
    if (!slot.leaf) break;
    if (slot.hash != h) continue;
    uint32_t node = slot.leaf - 1;
    size_t k = 0;
    for (; k < frames.size() && node != kNoNode && nodes_[node].frame == frames[k]; ++k) node = nodes_[node].parent;
    if (k == frames.size() && node == kNoNode) return slot.leaf - 1;
  }
  const uint32_t leaf = build_stack(frames);
  if (++stacks_ * 2 > stack_slots_.size()) {
    std::vector<StackSlot> old(stack_slots_.size() * 2, StackSlot{0, 0});
    old.swap(stack_slots_);
    mask = stack_slots_.size() - 1;
    for (const StackSlot& s : old) {
      if (!s.leaf) continue;
      size_t j = s.hash & mask;
      while (stack_slots_[j].leaf) j = (j + 1) & mask;
      stack_slots_[j] = s;
    }
    i = h & mask;
    while (stack_slots_[i].leaf) i = (i + 1) & mask;
  }
  stack_slots_[i] = StackSlot{h, leaf + 1};
  return leaf;
}

uint32_t SampleProfile::build_stack(std::span<const uint32_t> frames) {
  // The callers shared with the previous stack first, without a lookup.
  const size_t depth = frames.size();
  size_t same = 0;
  while (same < depth && same < last_frames_.size() && last_frames_[same] == frames[depth - 1 - same]) ++same;
  last_frames_.resize(depth);
  last_nodes_.resize(depth);
  uint32_t node = same ? last_nodes_[same - 1] : kNoNode;
  for (size_t k = same; k < depth; ++k) {
    const uint32_t frame = frames[depth - 1 - k];
    node = child_node(node, frame);
    last_frames_[k] = frame;
    last_nodes_[k] = node;
  }
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
    node_slots_.resize(slots / 2);
    grow_node_index();
  }
}

size_t SampleProfile::memory_bytes() const {
  return samples_.capacity() * sizeof(Sample) + nodes_.capacity() * sizeof(StackNode) +
         node_slots_.capacity() * sizeof(NodeSlot) + frames_.capacity() * sizeof(SampleFrame) + frame_slots_.capacity() * sizeof(FrameSlot) + stack_slots_.capacity() * sizeof(StackSlot) +
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
