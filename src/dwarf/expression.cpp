#include "dwarf/expression.hpp"

#include <array>
#include <cstdio>

namespace framewalk::dwarf {

namespace {

enum class Operand : uint8_t { kNone, kU8, kS8, kU16, kS16, kU32, kS32, kU64, kS64, kUleb, kSleb, kAddr, kUlebSleb, kUlebUleb, kSkip, kBlock };

struct OpInfo {
  const char* name = nullptr;
  Operand operand = Operand::kNone;
  uint8_t min_stack = 0;  // entries the operator pops (checked before it runs)
  bool allowed_in_cfi = true;
};

constexpr uint8_t kOpAddr = 0x03, kOpDeref = 0x06, kOpConst1u = 0x08, kOpConst1s = 0x09,
    kOpConst2u = 0x0a, kOpConst2s = 0x0b, kOpConst4u = 0x0c, kOpConst4s = 0x0d, kOpConst8u = 0x0e,
    kOpConst8s = 0x0f, kOpConstu = 0x10, kOpConsts = 0x11, kOpDup = 0x12, kOpDrop = 0x13,
    kOpOver = 0x14, kOpPick = 0x15, kOpSwap = 0x16, kOpRot = 0x17, kOpXderef = 0x18, kOpAbs = 0x19,
    kOpAnd = 0x1a, kOpDiv = 0x1b, kOpMinus = 0x1c, kOpMod = 0x1d, kOpMul = 0x1e, kOpNeg = 0x1f,
    kOpNot = 0x20, kOpOr = 0x21, kOpPlus = 0x22, kOpPlusUconst = 0x23, kOpShl = 0x24, kOpShr = 0x25,
    kOpShra = 0x26, kOpXor = 0x27, kOpBra = 0x28, kOpEq = 0x29, kOpGe = 0x2a, kOpGt = 0x2b,
    kOpLe = 0x2c, kOpLt = 0x2d, kOpNe = 0x2e, kOpSkip = 0x2f, kOpLit0 = 0x30, kOpLit31 = 0x4f,
    kOpReg0 = 0x50, kOpReg31 = 0x6f, kOpBreg0 = 0x70, kOpBreg31 = 0x8f, kOpRegx = 0x90,
    kOpFbreg = 0x91, kOpBregx = 0x92, kOpPiece = 0x93, kOpDerefSize = 0x94, kOpXderefSize = 0x95,
    kOpNop = 0x96, kOpPushObjectAddress = 0x97, kOpCall2 = 0x98, kOpCall4 = 0x99,
    kOpCallRef = 0x9a, kOpFormTlsAddress = 0x9b, kOpCallFrameCfa = 0x9c, kOpBitPiece = 0x9d,
    kOpImplicitValue = 0x9e, kOpStackValue = 0x9f, kOpGnuPushTlsAddress = 0xe0;

constexpr const char* kLit[32] = {"DW_OP_lit0","DW_OP_lit1","DW_OP_lit2","DW_OP_lit3","DW_OP_lit4","DW_OP_lit5","DW_OP_lit6","DW_OP_lit7","DW_OP_lit8","DW_OP_lit9","DW_OP_lit10","DW_OP_lit11","DW_OP_lit12","DW_OP_lit13","DW_OP_lit14","DW_OP_lit15","DW_OP_lit16","DW_OP_lit17","DW_OP_lit18","DW_OP_lit19","DW_OP_lit20","DW_OP_lit21","DW_OP_lit22","DW_OP_lit23","DW_OP_lit24","DW_OP_lit25","DW_OP_lit26","DW_OP_lit27","DW_OP_lit28","DW_OP_lit29","DW_OP_lit30","DW_OP_lit31"};
constexpr const char* kReg[32] = {"DW_OP_reg0","DW_OP_reg1","DW_OP_reg2","DW_OP_reg3","DW_OP_reg4","DW_OP_reg5","DW_OP_reg6","DW_OP_reg7","DW_OP_reg8","DW_OP_reg9","DW_OP_reg10","DW_OP_reg11","DW_OP_reg12","DW_OP_reg13","DW_OP_reg14","DW_OP_reg15","DW_OP_reg16","DW_OP_reg17","DW_OP_reg18","DW_OP_reg19","DW_OP_reg20","DW_OP_reg21","DW_OP_reg22","DW_OP_reg23","DW_OP_reg24","DW_OP_reg25","DW_OP_reg26","DW_OP_reg27","DW_OP_reg28","DW_OP_reg29","DW_OP_reg30","DW_OP_reg31"};
constexpr const char* kBreg[32] = {"DW_OP_breg0","DW_OP_breg1","DW_OP_breg2","DW_OP_breg3","DW_OP_breg4","DW_OP_breg5","DW_OP_breg6","DW_OP_breg7","DW_OP_breg8","DW_OP_breg9","DW_OP_breg10","DW_OP_breg11","DW_OP_breg12","DW_OP_breg13","DW_OP_breg14","DW_OP_breg15","DW_OP_breg16","DW_OP_breg17","DW_OP_breg18","DW_OP_breg19","DW_OP_breg20","DW_OP_breg21","DW_OP_breg22","DW_OP_breg23","DW_OP_breg24","DW_OP_breg25","DW_OP_breg26","DW_OP_breg27","DW_OP_breg28","DW_OP_breg29","DW_OP_breg30","DW_OP_breg31"};
// Each table runs from its op0 to its op31.
static_assert(kOpLit0 + 31 == kOpLit31 && kOpReg0 + 31 == kOpReg31 && kOpBreg0 + 31 == kOpBreg31);

constexpr std::array<OpInfo, 256> make_ops() {
  std::array<OpInfo, 256> t{};
  auto set = [&t](uint8_t op, const char* name, Operand operand, uint8_t pops, bool cfi = true) {
    t[op] = OpInfo{name, operand, pops, cfi};
  };
  set(kOpAddr, "DW_OP_addr", Operand::kAddr, 0);
  set(kOpDeref, "DW_OP_deref", Operand::kNone, 1);
  set(kOpConst1u, "DW_OP_const1u", Operand::kU8, 0);
  set(kOpConst1s, "DW_OP_const1s", Operand::kS8, 0);
  set(kOpConst2u, "DW_OP_const2u", Operand::kU16, 0);
  set(kOpConst2s, "DW_OP_const2s", Operand::kS16, 0);
  set(kOpConst4u, "DW_OP_const4u", Operand::kU32, 0);
  set(kOpConst4s, "DW_OP_const4s", Operand::kS32, 0);
  set(kOpConst8u, "DW_OP_const8u", Operand::kU64, 0);
  set(kOpConst8s, "DW_OP_const8s", Operand::kS64, 0);
  set(kOpConstu, "DW_OP_constu", Operand::kUleb, 0);
  set(kOpConsts, "DW_OP_consts", Operand::kSleb, 0);
  set(kOpDup, "DW_OP_dup", Operand::kNone, 1);
  set(kOpDrop, "DW_OP_drop", Operand::kNone, 1);
  set(kOpOver, "DW_OP_over", Operand::kNone, 2);
  set(kOpPick, "DW_OP_pick", Operand::kU8, 0);
  set(kOpSwap, "DW_OP_swap", Operand::kNone, 2);
  set(kOpRot, "DW_OP_rot", Operand::kNone, 3);
  set(kOpXderef, "DW_OP_xderef", Operand::kNone, 2, false);
  set(kOpAbs, "DW_OP_abs", Operand::kNone, 1);
  set(kOpAnd, "DW_OP_and", Operand::kNone, 2);
  set(kOpDiv, "DW_OP_div", Operand::kNone, 2);
  set(kOpMinus, "DW_OP_minus", Operand::kNone, 2);
  set(kOpMod, "DW_OP_mod", Operand::kNone, 2);
  set(kOpMul, "DW_OP_mul", Operand::kNone, 2);
  set(kOpNeg, "DW_OP_neg", Operand::kNone, 1);
  set(kOpNot, "DW_OP_not", Operand::kNone, 1);
  set(kOpOr, "DW_OP_or", Operand::kNone, 2);
  set(kOpPlus, "DW_OP_plus", Operand::kNone, 2);
  set(kOpPlusUconst, "DW_OP_plus_uconst", Operand::kUleb, 1);
  set(kOpShl, "DW_OP_shl", Operand::kNone, 2);
  set(kOpShr, "DW_OP_shr", Operand::kNone, 2);
  set(kOpShra, "DW_OP_shra", Operand::kNone, 2);
  set(kOpXor, "DW_OP_xor", Operand::kNone, 2);
  set(kOpBra, "DW_OP_bra", Operand::kSkip, 1);
  set(kOpEq, "DW_OP_eq", Operand::kNone, 2);
  set(kOpGe, "DW_OP_ge", Operand::kNone, 2);
  set(kOpGt, "DW_OP_gt", Operand::kNone, 2);
  set(kOpLe, "DW_OP_le", Operand::kNone, 2);
  set(kOpLt, "DW_OP_lt", Operand::kNone, 2);
  set(kOpNe, "DW_OP_ne", Operand::kNone, 2);
  set(kOpSkip, "DW_OP_skip", Operand::kSkip, 0);
  for (int i = 0; i < 32; ++i) {
    set(static_cast<uint8_t>(kOpLit0 + i), kLit[i], Operand::kNone, 0);
    // DW_OP_regN names a location, not a value: not valid in CFI expressions.
    set(static_cast<uint8_t>(kOpReg0 + i), kReg[i], Operand::kNone, 0, false);
    set(static_cast<uint8_t>(kOpBreg0 + i), kBreg[i], Operand::kSleb, 0);
  }
  set(kOpRegx, "DW_OP_regx", Operand::kUleb, 0, false);
  set(kOpFbreg, "DW_OP_fbreg", Operand::kSleb, 0, false);
  set(kOpBregx, "DW_OP_bregx", Operand::kUlebSleb, 0);
  set(kOpPiece, "DW_OP_piece", Operand::kUleb, 0, false);
  set(kOpDerefSize, "DW_OP_deref_size", Operand::kU8, 1);
  set(kOpXderefSize, "DW_OP_xderef_size", Operand::kU8, 2, false);
  set(kOpNop, "DW_OP_nop", Operand::kNone, 0);
  set(kOpPushObjectAddress, "DW_OP_push_object_address", Operand::kNone, 0, false);
  set(kOpCall2, "DW_OP_call2", Operand::kU16, 0, false);
  set(kOpCall4, "DW_OP_call4", Operand::kU32, 0, false);
  set(kOpCallRef, "DW_OP_call_ref", Operand::kU32, 0, false);
  set(kOpFormTlsAddress, "DW_OP_form_tls_address", Operand::kNone, 1, false);
  set(kOpCallFrameCfa, "DW_OP_call_frame_cfa", Operand::kNone, 0, false);
  set(kOpBitPiece, "DW_OP_bit_piece", Operand::kUlebUleb, 0, false);
  set(kOpImplicitValue, "DW_OP_implicit_value", Operand::kBlock, 0, false);
  set(kOpStackValue, "DW_OP_stack_value", Operand::kNone, 1, false);
  set(kOpGnuPushTlsAddress, "DW_OP_GNU_push_tls_address", Operand::kNone, 1, false);
  return t;
}

// Built at compile time: no guard variable, nothing to initialise at run time
// (the evaluator runs in signal handlers).
constexpr std::array<OpInfo, 256> kOps = make_ops();
constexpr const std::array<OpInfo, 256>& ops() { return kOps; }

struct Decoded {
  uint8_t op;
  uint64_t a = 0;  // first operand (raw bits; sign-extended for signed forms)
  uint64_t b = 0;  // second operand
  Bytes block;
};

Result<Decoded> decode(ByteReader& r, const ExpressionOptions& o) {
  Decoded d;
  FW_TRY(d.op, r.u8());
  const OpInfo& info = ops()[d.op];
  if (!info.name) return Error{ErrorCode::kExprUnknownOpcode, r.absolute_offset() - 1};
  switch (info.operand) {
    case Operand::kNone: break;
    case Operand::kU8: { FW_TRY(uint8_t v, r.u8()); d.a = v; break; }
    case Operand::kS8: { FW_TRY(uint8_t v, r.u8()); d.a = static_cast<uint64_t>(int64_t{static_cast<int8_t>(v)}); break; }
    case Operand::kU16: { FW_TRY(uint16_t v, r.u16()); d.a = v; break; }
    case Operand::kS16: { FW_TRY(uint16_t v, r.u16()); d.a = static_cast<uint64_t>(int64_t{static_cast<int16_t>(v)}); break; }
    case Operand::kU32: { FW_TRY(uint32_t v, r.u32()); d.a = v; break; }
    case Operand::kS32: { FW_TRY(uint32_t v, r.u32()); d.a = static_cast<uint64_t>(int64_t{static_cast<int32_t>(v)}); break; }
    case Operand::kU64: case Operand::kS64: { FW_TRY(d.a, r.u64()); break; }
    case Operand::kUleb: { FW_TRY(d.a, r.uleb128()); break; }
    case Operand::kSleb: { FW_TRY(int64_t v, r.sleb128()); d.a = static_cast<uint64_t>(v); break; }
    case Operand::kAddr: { FW_TRY(d.a, r.address(o.address_size)); break; }
    case Operand::kUlebSleb: {
      FW_TRY(d.a, r.uleb128());
      FW_TRY(int64_t v, r.sleb128());
      d.b = static_cast<uint64_t>(v);
      break;
    }
    case Operand::kUlebUleb: { FW_TRY(d.a, r.uleb128()); FW_TRY(d.b, r.uleb128()); break; }
    case Operand::kSkip: { FW_TRY(uint16_t v, r.u16()); d.a = static_cast<uint64_t>(int64_t{static_cast<int16_t>(v)}); break; }
    case Operand::kBlock: { FW_TRY(uint64_t n, r.uleb128()); FW_TRY(d.block, r.bytes(n)); d.a = n; break; }
  }
  return d;
}

}  // namespace

const char* op_name(uint8_t op) { return ops()[op].name; }

Result<uint64_t> evaluate_expression(Bytes expr, uint64_t base_offset, const ExpressionOptions& o,
                                     ExpressionInputs* inputs) {
  uint64_t stack[ExpressionLimits::kStackSize];
  int sp = 0;  // number of entries
  const uint64_t mask = o.address_size >= 8 ? ~uint64_t{0} : ((uint64_t{1} << (8 * o.address_size)) - 1);
  const unsigned bits = o.address_size >= 8 ? 64 : 8 * o.address_size;
  auto sign_extend = [&](uint64_t v) -> int64_t {
    if (bits == 64) return static_cast<int64_t>(v);
    const uint64_t m = uint64_t{1} << (bits - 1);
    return static_cast<int64_t>(((v & mask) ^ m) - m);
  };
  if (o.push_initial) stack[sp++] = o.initial & mask;
  ByteReader r(expr, o.endian, base_offset);
  int steps = 0;
  while (!r.at_end()) {
    if (++steps > o.limits.max_steps) return r.error(ErrorCode::kExprTooManySteps);
    const uint64_t op_offset = r.absolute_offset();
    FW_TRY(Decoded d, decode(r, o));
    const OpInfo& info = ops()[d.op];
    if (!info.allowed_in_cfi) return Error{ErrorCode::kExprUnsupported, op_offset};
    if (sp < info.min_stack) return Error{ErrorCode::kExprStackUnderflow, op_offset};
    auto push = [&](uint64_t v) -> Result<void> {
      if (sp >= ExpressionLimits::kStackSize) return Error{ErrorCode::kExprStackOverflow, op_offset};
      stack[sp++] = v & mask;
      return ok();
    };
    auto reg_value = [&](uint64_t reg) -> Result<uint64_t> {
      if (!inputs || reg > 0xffff) return Error{ErrorCode::kExprNeedsRegister, op_offset};
      auto v = inputs->register_value(static_cast<uint16_t>(reg));
      if (!v) return Error{v.error().code, op_offset};
      return *v;
    };
    const uint8_t op = d.op;
    if (op >= kOpLit0 && op <= kOpLit31) { FW_CHECK(push(op - kOpLit0)); continue; }
    if (op >= kOpBreg0 && op <= kOpBreg31) {
      FW_TRY(uint64_t v, reg_value(op - kOpBreg0));
      FW_CHECK(push(v + d.a));
      continue;
    }
    uint64_t& top = stack[sp > 0 ? sp - 1 : 0];
    switch (op) {
      case kOpAddr: case kOpConst1u: case kOpConst1s: case kOpConst2u: case kOpConst2s:
      case kOpConst4u: case kOpConst4s: case kOpConst8u: case kOpConst8s: case kOpConstu: case kOpConsts:
        FW_CHECK(push(d.a));
        break;
      case kOpBregx: {
        FW_TRY(uint64_t v, reg_value(d.a));
        FW_CHECK(push(v + d.b));
        break;
      }
      case kOpDeref: case kOpDerefSize: {
        const unsigned size = op == kOpDeref ? o.address_size : static_cast<unsigned>(d.a);
        if (size == 0 || size > 8) return Error{ErrorCode::kExprUnsupported, op_offset};
        if (!inputs) return Error{ErrorCode::kExprNeedsMemory, op_offset};
        auto v = inputs->read_memory(top, size);
        if (!v) return Error{v.error().code, op_offset};
        top = *v & mask;
        break;
      }
      case kOpDup: FW_CHECK(push(top)); break;
      case kOpDrop: --sp; break;
      case kOpOver: FW_CHECK(push(stack[sp - 2])); break;
      case kOpPick:
        if (d.a >= static_cast<uint64_t>(sp)) return Error{ErrorCode::kExprStackUnderflow, op_offset};
        FW_CHECK(push(stack[sp - 1 - static_cast<int>(d.a)]));
        break;
      case kOpSwap: std::swap(stack[sp - 1], stack[sp - 2]); break;
      case kOpRot: {
        const uint64_t t = stack[sp - 1];
        stack[sp - 1] = stack[sp - 2];
        stack[sp - 2] = stack[sp - 3];
        stack[sp - 3] = t;
        break;
      }
      case kOpAbs: { const int64_t v = sign_extend(top); top = (v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v)) & mask; break; }
      case kOpNeg: top = (0 - top) & mask; break;
      case kOpNot: top = ~top & mask; break;
      case kOpPlusUconst: top = (top + d.a) & mask; break;
      case kOpAnd: case kOpDiv: case kOpMinus: case kOpMod: case kOpMul: case kOpOr: case kOpPlus:
      case kOpShl: case kOpShr: case kOpShra: case kOpXor: case kOpEq: case kOpGe: case kOpGt:
      case kOpLe: case kOpLt: case kOpNe: {
        const uint64_t b = stack[sp - 1];
        const uint64_t a = stack[sp - 2];
        --sp;
        uint64_t v = 0;
        switch (op) {
          case kOpAnd: v = a & b; break;
          case kOpOr: v = a | b; break;
          case kOpXor: v = a ^ b; break;
          case kOpPlus: v = a + b; break;
          case kOpMinus: v = a - b; break;
          case kOpMul: v = a * b; break;
          case kOpDiv: {
            const int64_t sa = sign_extend(a), sb = sign_extend(b);
            if (sb == 0) return Error{ErrorCode::kExprDivideByZero, op_offset};
            if (sa == INT64_MIN && sb == -1) v = static_cast<uint64_t>(sa);
            else v = static_cast<uint64_t>(sa / sb);
            break;
          }
          case kOpMod:
            if (b == 0) return Error{ErrorCode::kExprDivideByZero, op_offset};
            v = a % b;
            break;
          case kOpShl: v = b >= 64 ? 0 : a << b; break;
          case kOpShr: v = b >= 64 ? 0 : (a & mask) >> b; break;
          case kOpShra: {
            const int64_t sa = sign_extend(a);
            v = static_cast<uint64_t>(b >= 64 ? (sa < 0 ? -1 : 0) : sa >> b);
            break;
          }
          case kOpEq: v = sign_extend(a) == sign_extend(b); break;
          case kOpGe: v = sign_extend(a) >= sign_extend(b); break;
          case kOpGt: v = sign_extend(a) > sign_extend(b); break;
          case kOpLe: v = sign_extend(a) <= sign_extend(b); break;
          case kOpLt: v = sign_extend(a) < sign_extend(b); break;
          case kOpNe: v = sign_extend(a) != sign_extend(b); break;
        }
        stack[sp - 1] = v & mask;
        break;
      }
      case kOpSkip: case kOpBra: {
        bool take = true;
        if (op == kOpBra) {
          take = stack[sp - 1] != 0;
          --sp;
        }
        if (take) {
          const int64_t target = static_cast<int64_t>(r.offset()) + static_cast<int64_t>(d.a);
          if (target < 0 || target > static_cast<int64_t>(expr.size()))
            return Error{ErrorCode::kExprBadBranch, op_offset};
          FW_CHECK(r.seek(static_cast<size_t>(target)));
        }
        break;
      }
      case kOpNop: break;
      default: return Error{ErrorCode::kExprUnsupported, op_offset};
    }
  }
  if (sp == 0) return Error{ErrorCode::kExprEmptyStack, base_offset + expr.size()};
  return stack[sp - 1];
}

std::string disassemble_expression(Bytes expr, const ExpressionOptions& o,
                                   const arch::ArchInfo* arch) {
  std::string out;
  ByteReader r(expr, o.endian);
  char buf[96];
  while (!r.at_end()) {
    auto d = decode(r, o);
    if (!out.empty()) out += "; ";
    if (!d) {
      out += "<bad>";
      break;
    }
    const uint8_t op = d->op;
    out += ops()[op].name;
    const char* rn = nullptr;
    if (op >= kOpBreg0 && op <= kOpBreg31) {
      rn = arch::dwarf_register_name(arch, op - kOpBreg0);
      std::snprintf(buf, sizeof buf, " (%s): %lld", rn ? rn : "?", static_cast<long long>(d->a));
      out += buf;
      continue;
    }
    switch (ops()[op].operand) {
      case Operand::kNone: break;
      case Operand::kS8: case Operand::kS16: case Operand::kS32: case Operand::kS64: case Operand::kSleb: case Operand::kSkip:
        std::snprintf(buf, sizeof buf, ": %lld", static_cast<long long>(d->a));
        out += buf;
        break;
      case Operand::kAddr:
        std::snprintf(buf, sizeof buf, ": 0x%llx", static_cast<unsigned long long>(d->a));
        out += buf;
        break;
      case Operand::kUlebSleb:
        rn = arch::dwarf_register_name(arch, static_cast<unsigned>(d->a));
        std::snprintf(buf, sizeof buf, ": %llu (%s) %lld", static_cast<unsigned long long>(d->a),
                      rn ? rn : "?", static_cast<long long>(d->b));
        out += buf;
        break;
      case Operand::kUlebUleb:
        std::snprintf(buf, sizeof buf, ": %llu %llu", static_cast<unsigned long long>(d->a),
                      static_cast<unsigned long long>(d->b));
        out += buf;
        break;
      default:
        std::snprintf(buf, sizeof buf, ": %llu", static_cast<unsigned long long>(d->a));
        out += buf;
        break;
    }
  }
  return out;
}

}  // namespace framewalk::dwarf
