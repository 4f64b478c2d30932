#include "mcount/arc_table.hpp"

#include "mcount/page_memory.hpp"

namespace framewalk::mcount {

ArcTable* arc_table_create(std::size_t capacity) {
  if (capacity < 2 || (capacity & (capacity - 1)) != 0) return nullptr;
  std::size_t bytes = sizeof(ArcTable) + (capacity - 1) * sizeof(ArcSlot);
  auto* table = static_cast<ArcTable*>(map_zeroed(bytes));
  if (table == nullptr) return nullptr;
  unsigned log2 = 0;
  while ((std::size_t{1} << log2) < capacity) ++log2;
  table->capacity = capacity;
  table->used = 0;
  table->limit = capacity / 2;
  table->map_bytes = bytes;
  table->shift = static_cast<unsigned>(sizeof(uintptr_t) * 8) - log2;
  table->retired = nullptr;
  return table;
}

void arc_table_destroy(ArcTable* table) {
  if (table != nullptr) unmap(table, table->map_bytes);
}

ArcTable* arc_table_grown(const ArcTable& table) {
  ArcTable* bigger = arc_table_create(table.capacity * 2);
  if (bigger == nullptr) return nullptr;
  // Only the owning thread grows its table, so the arcs are read in place;
  // the bigger table's limit is above table.used, so every add succeeds.
  arc_table_for_each(table, [&](uintptr_t from_pc, uintptr_t self_pc, uint64_t count) {
    arc_table_add(*bigger, from_pc, self_pc, count);
  });
  return bigger;
}

}  // namespace framewalk::mcount
