// TIR's op table and types; see tir.h.
#include "irisc/tir.h"

#include <llvm/ADT/StringRef.h>

#include <algorithm>

#include <fmt/format.h>

namespace irisc {
namespace {
using namespace tir_trait;
constexpr uint16_t kOperatorTraits = Elementwise | SameLayout | Relayable | Recomputable | OnHost;
constexpr TirOpInfo kOpInfos[] = {
#define TIR_LEAF(Name, Spelling, Attrs) {Spelling, TirCategory::Leaf, "", "", Recomputable | OnHost},
#define TIR_UNARY(Name, Spelling, Token, Runtime) {Spelling, TirCategory::Unary, Runtime, "x", kOperatorTraits},
#define TIR_BINARY(Name, Spelling, Token, Runtime, Traits) \
  {Spelling, TirCategory::Binary, Runtime, "x, y", kOperatorTraits | (Traits)},
#define TIR_OP(Name, Spelling, Category, Runtime, Operands, Attrs, Traits) \
  {Spelling, TirCategory::Category, Runtime, Operands, Traits},
#include "irisc/tir_ops.def"
};
}  // namespace

const TirOpInfo& tir_op_info(TirOp op) { return kOpInfos[static_cast<size_t>(op)]; }

TirAttrs default_attrs(TirOp op) {
  switch (op) {
#define TIR_LEAF(Name, Spelling, Attrs) \
  case TirOp::Name: return Attrs{};
#define TIR_UNARY(Name, Spelling, Token, Runtime) case TirOp::Name:
#define TIR_BINARY(Name, Spelling, Token, Runtime, Traits) case TirOp::Name:
#include "irisc/tir_ops.def"
    return NoAttrs{};
#define TIR_OP(Name, Spelling, Category, Runtime, Operands, Attrs, Traits) \
  case TirOp::Name: return Attrs{};
#include "irisc/tir_ops.def"
  }
  return NoAttrs{};
}

TirType TirType::element() const {
  TirType t = *this;
  t.dims.clear();
  t.layout = TirLayout::None;
  return t;
}

TirType TirType::shaped_like(const TirType& shape) const {
  TirType t = *this;
  t.dims = shape.dims;
  return t.laid_out_like(shape);
}

TirType TirType::laid_out_like(const TirType& other) const {
  TirType t = *this;
  t.layout = other.layout;
  t.dot_operand = other.dot_operand;
  t.dot_operand_param = other.dot_operand_param;
  t.stages = other.stages;
  return t;
}

bool TirType::operator==(const TirType& other) const {
  return kind == other.kind && scalar == other.scalar && type_param == other.type_param && space == other.space &&
         dims == other.dims && same_layout(other);
}

std::string TirType::str() const {
  std::string element;
  std::string_view spelling = type_param.empty() ? scalar_info(scalar).spelling : type_param;
  std::string_view operand = dot_operand_param.empty() ? scalar_info(dot_operand).spelling : dot_operand_param;
  switch (kind) {
    case Kind::Void: return "void";
    case Kind::Scalar: element = std::string(spelling); break;
    case Kind::Pointer: {
      constexpr std::string_view kSpaces[] = {"", "sym ", "remote ", "anyrank "};
      element = fmt::format("{}*{}", kSpaces[static_cast<int>(space)], spelling);
      break;
    }
  }
  if (dims.empty()) return element;
  std::string shape;
  for (const Shape& d : dims) shape += d.text() + ", ";
  std::string laid_out;
  switch (layout) {
    case TirLayout::None: laid_out = "none"; break;
    case TirLayout::Blocked: laid_out = "blocked"; break;
    case TirLayout::Dot: laid_out = fmt::format("dot({})", operand); break;
    case TirLayout::Shared: laid_out = "shared"; break;
    case TirLayout::Stages: laid_out = fmt::format("stages({})", stages.text()); break;
    case TirLayout::Copy: laid_out = fmt::format("copy({})", operand); break;
    case TirLayout::DotRows: laid_out = fmt::format("dot_rows({})", operand); break;
  }
  return fmt::format("tile<{}, {}{}>", element, shape, laid_out);
}

std::optional<int> element_bytes(const TirType& t, const TirFunction& function) {
  if (t.type_param.empty()) return scalar_info(t.scalar).bits / 8;
  std::optional<int> bytes;
  for (size_t i = 0; i < function.ct_params.size(); ++i) {
    if (function.ct_params[i]->name != t.type_param) continue;
    for (ScalarKind k : function.ct_admitted[i]) {
      const int b = scalar_info(k).bits / 8;
      if (bytes && *bytes != b) return std::nullopt;
      bytes = b;
    }
  }
  return bytes;
}

std::string literal_text(const TirValue& constant) {
  const auto& c = constant.attrs<ConstantAttrs>();
  switch (c.literal) {
    case ConstantAttrs::Literal::Int: return std::to_string(c.int_bits);
    case ConstantAttrs::Literal::SignedInt: return std::to_string(static_cast<int64_t>(c.int_bits));
    case ConstantAttrs::Literal::Float: return fmt::format("{:.17g}", c.float_value);
    case ConstantAttrs::Literal::Bool: return c.bool_value ? "true" : "false";
  }
  return "";
}

std::string operand_error(const TirValue& v) {
  const TirOpInfo& info = tir_op_info(v.op);
  llvm::SmallVector<llvm::StringRef, 6> names;
  llvm::StringRef(info.operands).split(names, ", ", -1, false);
  const bool variadic = !names.empty() && names.back().ends_with("...");
  const size_t fixed = names.size() - variadic;
  size_t required = 0;  // the operands up to the last one that is not optional
  for (size_t i = 0; i < fixed; ++i)
    if (!names[i].ends_with("?")) required = i + 1;
  const size_t n = v.operands.size();
  if (n < required || (!variadic && n > fixed))
    return fmt::format("{} has {} operands, and tir_ops.def gives it ({})", info.spelling, n, info.operands);
  for (size_t i = 0; i < n; ++i) {
    const llvm::StringRef name = names[std::min(i, names.size() - 1)];
    if (!v.operands[i] && !name.ends_with("?"))
      return fmt::format("{} has no operand {} (tir_ops.def: {})", info.spelling, name.str(), info.operands);
  }
  return "";
}

bool same_tree(const TirValue* a, const TirValue* b) {
  if (a->op != b->op || !(a->type == b->type) || a->payload != b->payload || a->checked != b->checked ||
      a->operands.size() != b->operands.size())
    return false;
  for (size_t i = 0; i < a->operands.size(); ++i) {
    const TirValue *x = a->operands[i], *y = b->operands[i];
    if (x != y && (!x || !y || !same_tree(x, y))) return false;
  }
  return true;
}

TirType tir_type(const Type& type) {
  TirType t;
  t.kind = type.is_void() || type.is_error() ? TirType::Kind::Void
           : type.is_pointer()               ? TirType::Kind::Pointer
                                             : TirType::Kind::Scalar;
  t.scalar = type.scalar;
  t.type_param = type.type_param;
  t.space = type.sym ? AddressSpace::Heap : AddressSpace::Local;
  if (type.shape) {
    for (const Shape& d : type.shape->list()) t.dims.push_back(d);
    t.layout = TirLayout::Blocked;
  }
  return t;
}

}  // namespace irisc
