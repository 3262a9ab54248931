// TIR's op table and types; see tir.h.
#include "irisc/tir.h"

#include <algorithm>

#include <fmt/format.h>

namespace irisc {
namespace {
constexpr TirOpInfo kOpInfos[] = {
#define TIR_LEAF(Name, Spelling) {Spelling, TirCategory::Leaf, ""},
#define TIR_UNARY(Name, Spelling, Token, Runtime) {Spelling, TirCategory::Unary, Runtime},
#define TIR_BINARY(Name, Spelling, Token, Runtime) {Spelling, TirCategory::Binary, Runtime},
#define TIR_OP(Name, Spelling, Category, Runtime) {Spelling, TirCategory::Category, Runtime},
#include "irisc/tir_ops.def"
};
}  // namespace

const TirOpInfo& tir_op_info(TirOp op) { return kOpInfos[static_cast<size_t>(op)]; }

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
      constexpr std::string_view kSpaces[] = {"", "sym ", "remote "};
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
  switch (constant.literal) {
    case TirValue::Literal::Int: return std::to_string(constant.int_bits);
    case TirValue::Literal::SignedInt: return std::to_string(static_cast<int64_t>(constant.int_bits));
    case TirValue::Literal::Float: return fmt::format("{:.17g}", constant.float_value);
    case TirValue::Literal::Bool: return constant.bool_value ? "true" : "false";
  }
  return "";
}

bool same_tree(const TirValue* a, const TirValue* b) {
  const auto same_args = [](const TirTemplateArg& x, const TirTemplateArg& y) {
    return x.value == y.value && x.type == y.type;
  };
  if (a->op != b->op || !(a->type == b->type) || a->literal != b->literal || a->int_bits != b->int_bits ||
      a->float_value != b->float_value || a->bool_value != b->bool_value || a->text != b->text ||
      a->var != b->var || a->callee != b->callee ||
      !std::equal(a->template_args.begin(), a->template_args.end(), b->template_args.begin(),
                  b->template_args.end(), same_args) ||
      a->sem != b->sem || a->scope != b->scope || a->cmp != b->cmp || a->atomic_op != b->atomic_op ||
      a->signal_add != b->signal_add || a->contiguous_rows != b->contiguous_rows ||
      a->row_interval_mask != b->row_interval_mask || a->pipelined != b->pipelined || a->axis != b->axis ||
      a->checked != b->checked || a->operands.size() != b->operands.size())
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
