// Call sites on hand-written .debug_info (DWARF 5's DW_TAG_call_site and the
// GNU forms of DWARF 4: return addresses, tail-call flags, targets by origin
// with and without code, by address and by expression, under lexical blocks
// and inlined subroutines but not nested subprograms), and the tail-call
// chain search on hand-made call graphs: a unique chain, chains agreeing at
// both ends, chains agreeing on nothing, a cycle, the depth limit, and what
// stops the search (an unknown target, a function without call sites).
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <vector>

#include "support/section_builder.hpp"
#include "symbol/call_sites.hpp"
#include "symbol/debug_info.hpp"
#include "symbol/function_index.hpp"
#include "symbol/line_program.hpp"

namespace framewalk::symbol {
namespace {

using test::Label;
using test::SectionBuilder;

constexpr uint64_t kLexicalBlockTag = 0x0b;

// Abbreviations 1 (the unit: a name, children) and 2 (a function with code,
// children, and the flag `all_calls`: DW_AT_call_all_calls or a GNU form).
void unit_and_function_abbrevs(SectionBuilder& a, uint64_t all_calls) {
  a.uleb(1).uleb(tag::kCompileUnit).u8(1).uleb(at::kName).uleb(form::kString).uleb(0).uleb(0);
  a.uleb(2).uleb(tag::kSubprogram).u8(1).uleb(at::kName).uleb(form::kString).uleb(at::kLowPc).uleb(form::kAddr)
      .uleb(at::kHighPc).uleb(form::kData4).uleb(all_calls).uleb(form::kFlagPresent).uleb(0).uleb(0);
}

DwarfSections sections(const std::vector<uint8_t>& info, const std::vector<uint8_t>& abbrev) {
  DwarfSections s;
  s.info = info;
  s.abbrev = abbrev;
  return s;
}

TEST(CallSites, Dwarf5CallSitesOfAFunction) {
  SectionBuilder a;
  unit_and_function_abbrevs(a, at::kCallAllCalls);
  // 3: a tail call by origin, with its call pc
  a.uleb(3).uleb(tag::kCallSite).u8(0).uleb(at::kCallReturnPc).uleb(form::kAddr).uleb(at::kCallOrigin)
      .uleb(form::kRef4).uleb(at::kCallTailCall).uleb(form::kFlagPresent).uleb(at::kCallPc).uleb(form::kAddr)
      .uleb(0).uleb(0);
  // 4: an indirect call: the target is an expression
  a.uleb(4).uleb(tag::kCallSite).u8(0).uleb(at::kCallReturnPc).uleb(form::kAddr).uleb(at::kCallTarget)
      .uleb(form::kExprloc).uleb(0).uleb(0);
  // 5: lexical block, children
  a.uleb(5).uleb(kLexicalBlockTag).u8(1).uleb(at::kLowPc).uleb(form::kAddr).uleb(at::kHighPc).uleb(form::kData4)
      .uleb(0).uleb(0);
  // 6: inlined subroutine, children
  a.uleb(6).uleb(tag::kInlinedSubroutine).u8(1).uleb(at::kAbstractOrigin).uleb(form::kRef4).uleb(at::kLowPc)
      .uleb(form::kAddr).uleb(at::kHighPc).uleb(form::kData4).uleb(0).uleb(0);
  // 7: a declaration
  a.uleb(7).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kString).uleb(at::kDeclaration)
      .uleb(form::kFlagPresent).uleb(0).uleb(0);
  // 8: a function with code, no children
  a.uleb(8).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kString).uleb(at::kLowPc).uleb(form::kAddr)
      .uleb(at::kHighPc).uleb(form::kData4).uleb(0).uleb(0);
  // 9: an abstract instance (no code)
  a.uleb(9).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kString).uleb(0).uleb(0);
  // 10: a call to a constant address
  a.uleb(10).uleb(tag::kCallSite).u8(0).uleb(at::kCallReturnPc).uleb(form::kAddr).uleb(at::kCallTarget)
      .uleb(form::kAddr).uleb(0).uleb(0);
  // 11: a call site without a return address
  a.uleb(11).uleb(tag::kCallSite).u8(0).uleb(at::kCallOrigin).uleb(form::kRef4).uleb(at::kCallPc)
      .uleb(form::kAddr).uleb(at::kCallTailCall).uleb(form::kFlagPresent).uleb(0).uleb(0);
  a.uleb(0);
  const std::vector<uint8_t> abbrev = a.finish();

  SectionBuilder b;
  Label end = b.new_label(), start = b.new_label();
  b.diff32(end, start).mark(start).u16(5).u8(ut::kCompile).u8(8).u32(0);
  b.uleb(1).str("t.c");
  Label callee = b.new_label(), declared = b.new_label(), abstract = b.new_label();
  const uint64_t caller = b.size();
  b.uleb(2).str("caller").u64(0x1000).u32(0x100);
  const uint64_t first_site = b.size();
  b.uleb(3).u64(0x1010).offset32(callee).u64(0x100b);
  b.uleb(4).u64(0x1020).uleb(2).u8(0x70).u8(0);  // DW_OP_breg0 0
  b.uleb(5).u64(0x1030).u32(0x30);
  b.uleb(3).u64(0x1040).offset32(declared).u64(0x103b);
  b.uleb(6).offset32(abstract).u64(0x1048).u32(0x10);
  b.uleb(10).u64(0x1050).u64(0x3000);
  b.uleb(0);  // end of the inlined subroutine
  b.uleb(0);  // end of the lexical block
  b.uleb(11).offset32(callee).u64(0x1060);
  const uint64_t nested = b.size();
  b.uleb(2).str("nested").u64(0x1080).u32(0x10);
  b.uleb(3).u64(0x1088).offset32(callee).u64(0x1084);
  b.uleb(0);  // end of nested
  b.uleb(0);  // end of caller
  b.mark(callee);
  const uint64_t callee_die = b.size();
  b.uleb(8).str("callee").u64(0x2000).u32(0x10);
  b.mark(declared).uleb(7).str("declared");
  b.mark(abstract).uleb(9).str("abstract");
  b.uleb(0);
  b.mark(end);
  const std::vector<uint8_t> info = b.finish();

  CallSiteIndex index(sections(info, abbrev));
  const FunctionCallSites* sites = index.sites(caller);
  ASSERT_NE(sites, nullptr);
  EXPECT_FALSE(sites->problem.has_value());
  EXPECT_TRUE(sites->all_tail_calls);
  ASSERT_EQ(sites->sites.size(), 4u);  // not the one without a return address, not the nested function's
  const CallSite& direct = sites->sites[0];
  EXPECT_EQ(direct.die, first_site);
  EXPECT_EQ(direct.return_pc, 0x1010u);
  EXPECT_EQ(direct.call_pc, 0x100bu);
  EXPECT_TRUE(direct.tail_call);
  EXPECT_EQ(direct.target, CallTargetKind::kAddress);
  EXPECT_EQ(direct.address, 0x2000u);
  const CallSite& indirect = sites->sites[1];
  EXPECT_EQ(indirect.return_pc, 0x1020u);
  EXPECT_FALSE(indirect.tail_call);
  EXPECT_EQ(indirect.target, CallTargetKind::kUnknown);
  const CallSite& by_name = sites->sites[2];  // inside the lexical block
  EXPECT_EQ(by_name.return_pc, 0x1040u);
  EXPECT_EQ(by_name.target, CallTargetKind::kName);
  EXPECT_EQ(by_name.name, "declared");
  const CallSite& constant = sites->sites[3];  // inside the inlined subroutine
  EXPECT_EQ(constant.return_pc, 0x1050u);
  EXPECT_EQ(constant.target, CallTargetKind::kAddress);
  EXPECT_EQ(constant.address, 0x3000u);
  EXPECT_EQ(sites->at_return(0x1040), &by_name);
  EXPECT_EQ(sites->at_return(0x1041), nullptr);
  EXPECT_EQ(index.sites(caller), sites);  // kept

  const FunctionCallSites* inner = index.sites(nested);
  ASSERT_NE(inner, nullptr);
  ASSERT_EQ(inner->sites.size(), 1u);
  EXPECT_EQ(inner->sites[0].return_pc, 0x1088u);
  const FunctionCallSites* leaf = index.sites(callee_die);
  ASSERT_NE(leaf, nullptr);
  EXPECT_TRUE(leaf->sites.empty());
  EXPECT_FALSE(leaf->all_tail_calls);
  EXPECT_EQ(index.sites(first_site), nullptr);  // a call site, not a subprogram
  EXPECT_EQ(index.sites(0x100000), nullptr);
}

TEST(CallSites, GnuCallSitesOfDwarf4) {
  constexpr uint64_t kBlock1 = 0x0a;
  SectionBuilder a;
  unit_and_function_abbrevs(a, at::kGnuAllCallSites);
  // 3: GNU tail call: the return address as low_pc, the origin as abstract_origin
  a.uleb(3).uleb(tag::kGnuCallSite).u8(0).uleb(at::kLowPc).uleb(form::kAddr).uleb(at::kAbstractOrigin)
      .uleb(form::kRef4).uleb(at::kGnuTailCall).uleb(form::kFlagPresent).uleb(0).uleb(0);
  // 4: GNU indirect call
  a.uleb(4).uleb(tag::kGnuCallSite).u8(0).uleb(at::kLowPc).uleb(form::kAddr).uleb(at::kGnuCallSiteTarget)
      .uleb(kBlock1).uleb(0).uleb(0);
  // 5: a declaration with a linkage name
  a.uleb(5).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kString).uleb(at::kLinkageName)
      .uleb(form::kString).uleb(at::kDeclaration).uleb(form::kFlag).uleb(0).uleb(0);
  // 6: a DIE of no code of its own naming its declaration
  a.uleb(6).uleb(tag::kSubprogram).u8(0).uleb(at::kSpecification).uleb(form::kRef4).uleb(0).uleb(0);
  a.uleb(0);
  const std::vector<uint8_t> abbrev = a.finish();

  SectionBuilder b;
  Label end = b.new_label(), start = b.new_label();
  b.diff32(end, start).mark(start).u16(4).u32(0).u8(8);
  b.uleb(1).str("t.cc");
  Label spec = b.new_label(), decl = b.new_label();
  const uint64_t caller = b.size();
  b.uleb(2).str("caller").u64(0x1000).u32(0x100);
  b.uleb(3).u64(0x1010).offset32(spec);
  b.uleb(4).u64(0x1020).u8(2).u8(0x71).u8(0);  // DW_OP_breg1 0
  b.uleb(0);
  b.mark(decl).uleb(5).str("foo").str("_Z3foov").u8(1);
  b.mark(spec).uleb(6).offset32(decl);
  b.uleb(0);
  b.mark(end);
  const std::vector<uint8_t> info = b.finish();

  CallSiteIndex index(sections(info, abbrev));
  const FunctionCallSites* sites = index.sites(caller);
  ASSERT_NE(sites, nullptr);
  EXPECT_TRUE(sites->all_tail_calls);
  ASSERT_EQ(sites->sites.size(), 2u);
  EXPECT_EQ(sites->sites[0].return_pc, 0x1010u);
  EXPECT_TRUE(sites->sites[0].tail_call);
  EXPECT_EQ(sites->sites[0].target, CallTargetKind::kName);
  EXPECT_EQ(sites->sites[0].name, "_Z3foov");  // the linkage name, through the specification
  EXPECT_EQ(sites->sites[1].return_pc, 0x1020u);
  EXPECT_FALSE(sites->sites[1].tail_call);
  EXPECT_EQ(sites->sites[1].target, CallTargetKind::kUnknown);
}

TEST(CallSites, TruncatedTreeKeepsWhatWasRead) {
  SectionBuilder a;
  a.uleb(1).uleb(tag::kCompileUnit).u8(1).uleb(0).uleb(0);
  a.uleb(2).uleb(tag::kSubprogram).u8(1).uleb(at::kLowPc).uleb(form::kAddr).uleb(0).uleb(0);
  a.uleb(3).uleb(tag::kCallSite).u8(0).uleb(at::kCallReturnPc).uleb(form::kAddr).uleb(0).uleb(0);
  a.uleb(0);
  const std::vector<uint8_t> abbrev = a.finish();
  SectionBuilder b;
  Label end = b.new_label(), start = b.new_label();
  b.diff32(end, start).mark(start).u16(5).u8(ut::kCompile).u8(8).u32(0);
  b.uleb(1);
  const uint64_t caller = b.size();
  b.uleb(2).u64(0x1000);
  b.uleb(3).u64(0x1010);
  b.mark(end);  // the unit ends inside caller's children
  const std::vector<uint8_t> info = b.finish();
  CallSiteIndex index(sections(info, abbrev));
  const FunctionCallSites* sites = index.sites(caller);
  ASSERT_NE(sites, nullptr);
  ASSERT_EQ(sites->sites.size(), 1u);
  ASSERT_TRUE(sites->problem.has_value());
  EXPECT_STREQ(sites->problem->section, ".debug_info");
}

TEST(CallSites, ModuleCallGraphFromDwarf) {
  // caller calls b (b jmp c, c jmp callee) and ext, known by name only (ext jmp callee).
  SectionBuilder a;
  unit_and_function_abbrevs(a, at::kCallAllCalls);
  a.uleb(3).uleb(tag::kCallSite).u8(0).uleb(at::kCallReturnPc).uleb(form::kAddr).uleb(at::kCallOrigin)
      .uleb(form::kRef4).uleb(at::kCallTailCall).uleb(form::kFlagPresent).uleb(0).uleb(0);
  a.uleb(4).uleb(tag::kCallSite).u8(0).uleb(at::kCallReturnPc).uleb(form::kAddr).uleb(at::kCallOrigin)
      .uleb(form::kRef4).uleb(0).uleb(0);
  a.uleb(5).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kString).uleb(at::kLowPc).uleb(form::kAddr)
      .uleb(at::kHighPc).uleb(form::kData4).uleb(0).uleb(0);
  a.uleb(6).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kString).uleb(at::kDeclaration)
      .uleb(form::kFlagPresent).uleb(0).uleb(0);
  a.uleb(0);
  const std::vector<uint8_t> abbrev = a.finish();
  SectionBuilder b;
  Label end = b.new_label(), start = b.new_label();
  b.diff32(end, start).mark(start).u16(5).u8(ut::kCompile).u8(8).u32(0);
  b.uleb(1).str("m.c");
  Label fb = b.new_label(), fc = b.new_label(), callee = b.new_label(), ext = b.new_label();
  b.uleb(2).str("caller").u64(0x1000).u32(0x40);
  b.uleb(4).u64(0x1010).offset32(fb);
  b.uleb(4).u64(0x1020).offset32(ext);
  b.uleb(0);
  b.mark(fb).uleb(2).str("b").u64(0x2000).u32(0x20);
  b.uleb(3).u64(0x2010).offset32(fc);
  b.uleb(0);
  b.mark(fc).uleb(2).str("c").u64(0x3000).u32(0x20);
  b.uleb(3).u64(0x3010).offset32(callee);
  b.uleb(0);
  b.mark(callee).uleb(5).str("callee").u64(0x4000).u32(0x20);
  b.mark(ext).uleb(6).str("ext");
  b.uleb(2).str("ext_code").u64(0x5000).u32(0x20);  // what the symbol table says "ext" is
  b.uleb(3).u64(0x5010).offset32(callee);
  b.uleb(0);
  b.uleb(0);
  b.mark(end);
  const std::vector<uint8_t> info = b.finish();

  const DwarfSections s = sections(info, abbrev);
  FunctionIndex functions(s);
  CallSiteIndex call_sites(s);
  auto named = [](std::string_view name) -> std::optional<uint64_t> {
    if (name == "ext") return 0x5000;
    return std::nullopt;
  };
  const ModuleCallGraph graph{functions, call_sites, named};
  auto frames = [&](uint64_t return_address, uint64_t callee_entry) {
    std::vector<std::pair<uint64_t, uint64_t>> out;  // (function entry, pc)
    for (const TailCallFrame& f : graph.tail_call_frames(return_address, callee_entry))
      out.emplace_back(f.function_entry, f.pc);
    return out;
  };
  using Frames = std::vector<std::pair<uint64_t, uint64_t>>;
  ASSERT_NE(graph.call_site_at(0x1010), nullptr);
  EXPECT_EQ(graph.call_site_at(0x1011), nullptr);
  EXPECT_EQ(frames(0x1010, 0x4000), (Frames{{0x3000, 0x3010}, {0x2000, 0x2010}}));
  EXPECT_EQ(frames(0x1010, 0x3000), (Frames{{0x2000, 0x2010}}));
  EXPECT_TRUE(frames(0x1010, 0x2000).empty());  // b itself: a direct call
  EXPECT_EQ(frames(0x1020, 0x4000), (Frames{{0x5000, 0x5010}}));  // through the name
  EXPECT_TRUE(frames(0x1011, 0x4000).empty());  // no call site returns there
  EXPECT_TRUE(frames(0x9000, 0x4000).empty());  // no function there
  auto unnamed = [](std::string_view) -> std::optional<uint64_t> { return std::nullopt; };
  const ModuleCallGraph without_symbols{functions, call_sites, unnamed};
  EXPECT_TRUE(without_symbols.tail_call_frames(0x1020, 0x4000).empty());
}

// A hand-made call graph: functions by entry, each with its tail calls.
struct Graph {
  std::map<uint64_t, FunctionCallSites> functions;
  // A tail call from `from` to `to`, returning to `return_pc`.
  Graph& tail(uint64_t from, uint64_t to, uint64_t return_pc) {
    FunctionCallSites& f = functions[from];
    f.die = from + 1;
    f.all_tail_calls = true;
    CallSite s;
    s.return_pc = return_pc;
    s.tail_call = true;
    s.target = CallTargetKind::kAddress;
    s.address = to;
    f.sites.push_back(s);
    return *this;
  }
  Graph& function(uint64_t entry) {
    functions[entry].die = entry + 1;
    functions[entry].all_tail_calls = true;
    return *this;
  }
  std::vector<uint64_t> search(uint64_t first, uint64_t callee, TailCallLimits limits = {}) {
    auto sites_of = [&](uint64_t entry) -> const FunctionCallSites* {
      auto it = functions.find(entry);
      return it == functions.end() ? nullptr : &it->second;
    };
    auto target_of = [](const CallSite& s) -> std::optional<uint64_t> {
      if (s.target == CallTargetKind::kAddress) return s.address;
      return std::nullopt;
    };
    std::vector<uint64_t> pcs;
    for (const TailCallFrame& f : find_tail_call_frames(first, callee, TailCallGraph{sites_of, target_of}, limits)) {
      EXPECT_EQ(f.function_die, f.function_entry + 1);
      pcs.push_back(f.pc);
    }
    return pcs;
  }
};

constexpr uint64_t kA = 0x100, kB = 0x200, kC = 0x300, kCallee = 0x900;

TEST(TailCallSearch, UniqueChainInnermostFirst) {
  Graph g;
  g.tail(kA, kB, 0x110).tail(kB, kC, 0x210).tail(kC, kCallee, 0x310).function(kCallee);
  EXPECT_EQ(g.search(kA, kCallee), (std::vector<uint64_t>{0x310, 0x210, 0x110}));
  EXPECT_EQ(g.search(kC, kCallee), (std::vector<uint64_t>{0x310}));
  EXPECT_TRUE(g.search(kCallee, kCallee).empty());  // a direct call
  EXPECT_TRUE(g.search(kA, 0x999).empty());         // no chain reaches it
}

TEST(TailCallSearch, DeadEndsAreNotChains) {
  Graph g;
  // A jumps to B or to D; only B leads on to the callee.
  g.tail(kA, kB, 0x110).tail(kA, 0x400, 0x120).function(0x400).tail(kB, kCallee, 0x210);
  EXPECT_EQ(g.search(kA, kCallee), (std::vector<uint64_t>{0x210, 0x110}));
}

TEST(TailCallSearch, AmbiguousChainsAgreeOnNothing) {
  Graph g;
  g.tail(kA, kB, 0x110).tail(kA, kC, 0x120).tail(kB, kCallee, 0x210).tail(kC, kCallee, 0x310);
  EXPECT_TRUE(g.search(kA, kCallee).empty());
}

TEST(TailCallSearch, AmbiguousChainsKeepWhatTheyShare) {
  // A -> R -> (N1 | N2) -> K -> callee: A's and K's jumps are on both chains.
  constexpr uint64_t kR = 0x400, kN1 = 0x500, kN2 = 0x600, kK = 0x700;
  Graph g;
  g.tail(kA, kR, 0x110).tail(kR, kN1, 0x410).tail(kR, kN2, 0x420).tail(kN1, kK, 0x510).tail(kN2, kK, 0x610);
  g.tail(kK, kCallee, 0x710);
  EXPECT_EQ(g.search(kA, kCallee), (std::vector<uint64_t>{0x710, 0x110}));
  // Sharing the caller side only.
  Graph h;
  h.tail(kA, kR, 0x110).tail(kR, kN1, 0x410).tail(kR, kN2, 0x420).tail(kN1, kCallee, 0x510);
  h.tail(kN2, kCallee, 0x610);
  EXPECT_EQ(h.search(kA, kCallee), (std::vector<uint64_t>{0x110}));
}

TEST(TailCallSearch, CyclesEnd) {
  Graph g;
  g.tail(kA, kB, 0x110).tail(kB, kA, 0x210).tail(kB, kC, 0x220).tail(kC, kC, 0x310).tail(kC, kCallee, 0x320);
  // A -> B -> C -> callee, and A -> B -> C -> C -> callee (C's jump to itself,
  // entered once): they share the jumps of A and B and the last one of C.
  EXPECT_EQ(g.search(kA, kCallee), (std::vector<uint64_t>{0x320, 0x220, 0x110}));
  Graph loop;  // a cycle that never reaches the callee
  loop.tail(kA, kB, 0x110).tail(kB, kA, 0x210);
  EXPECT_TRUE(loop.search(kA, kCallee).empty());
}

TEST(TailCallSearch, LimitsGiveNoAnswer) {
  Graph g;
  for (uint64_t i = 0; i < 6; ++i) g.tail(0x1000 * (i + 1), 0x1000 * (i + 2), 0x1000 * (i + 1) + 0x10);
  const uint64_t last = 0x1000 * 7;
  TailCallLimits limits;
  limits.max_depth = 6;
  EXPECT_EQ(g.search(0x1000, last, limits).size(), 6u);
  limits.max_depth = 5;
  EXPECT_TRUE(g.search(0x1000, last, limits).empty());
  limits = {};
  limits.max_steps = 3;
  EXPECT_TRUE(g.search(0x1000, last, limits).empty());
}

TEST(TailCallSearch, WhatCannotBeFollowedGivesNoAnswer) {
  Graph unknown;  // a jump through a register on the way
  unknown.tail(kA, kB, 0x110).tail(kB, kCallee, 0x210);
  CallSite indirect;
  indirect.return_pc = 0x120;
  indirect.tail_call = true;
  unknown.functions[kA].sites.push_back(indirect);
  EXPECT_TRUE(unknown.search(kA, kCallee).empty());

  Graph missing;  // a target with no function (no call-site information) at its address
  missing.tail(kA, kB, 0x110).tail(kA, 0x444, 0x120).tail(kB, kCallee, 0x210);
  EXPECT_TRUE(missing.search(kA, kCallee).empty());

  Graph incomplete;  // B does not say it describes all its calls: its jumps are not followed
  incomplete.tail(kA, kB, 0x110).tail(kB, kCallee, 0x210);
  incomplete.functions[kB].all_tail_calls = false;
  EXPECT_TRUE(incomplete.search(kA, kCallee).empty());

  Graph ordinary;  // a call that is not a tail call is not a chain
  ordinary.tail(kA, kCallee, 0x110);
  ordinary.functions[kA].sites[0].tail_call = false;
  EXPECT_TRUE(ordinary.search(kA, kCallee).empty());
}

}  // namespace
}  // namespace framewalk::symbol
