// The checker's expressions: typing, the conversion rules, broadcasting and
// compile-time folding. The rules are documented in docs/language.md
// ("Types and conversions"); keep the two in step.
#include "checker_impl.h"

#include <bit>

namespace irisc {
namespace {

bool is_comparison(TokenKind op) {
  return op == TokenKind::Less || op == TokenKind::LessEq || op == TokenKind::Greater ||
         op == TokenKind::GreaterEq || op == TokenKind::EqEq || op == TokenKind::BangEq;
}

// Float widening order; f16 and bf16 do not convert to each other.
int float_rank(ScalarKind s) {
  switch (s) {
    case ScalarKind::F16:
    case ScalarKind::BF16: return 0;
    case ScalarKind::F32: return 1;
    default: return 2;
  }
}

// Whether a typed scalar element converts implicitly to another.
bool scalar_widens(ScalarKind from, ScalarKind to) {
  if (from == to) return true;
  const ScalarInfo& f = scalar_info(from);
  const ScalarInfo& t = scalar_info(to);
  if (f.is_integer && t.is_integer) return f.is_signed == t.is_signed && f.bits <= t.bits;
  if (f.is_float && t.is_float)
    return float_rank(from) < float_rank(to);
  return false;
}

// Longest canonical text kept for a symbolic constant. `let b = a + a;` doubles
// it, so without a cap a few dozen lines take exponential time and memory;
// past the cap the expression is simply not a compile-time constant.
constexpr size_t kMaxSymbolLength = 4096;

size_t text_length(const ConstValue& c) {
  return c.symbolic ? c.symbol.size() : fmt::formatted_size("{}", *c.value);
}

}  // namespace

Type Checker::check_expr(Expr* e) {
  Type t = Type::error();
  switch (e->kind) {
    case ExprKind::IntLiteral:
      if (e->int_value > static_cast<uint64_t>(INT64_MAX)) {
        diags_.error(DiagKind::ConstantOverflow, e->range);
        break;
      }
      t = Type::scalar_of(ScalarKind::I32);
      t.literal = true;
      e->constant = ConstValue{{}, static_cast<int64_t>(e->int_value)};
      break;
    case ExprKind::FloatLiteral:
      t = Type::scalar_of(ScalarKind::F32);
      t.literal = true;
      break;
    case ExprKind::BoolLiteral:
      t = Type::scalar_of(ScalarKind::Bool);
      e->constant = ConstValue{{}, e->bool_value ? 1 : 0};
      break;
    case ExprKind::Name: t = check_name(e); break;
    case ExprKind::Call: t = check_call(e); break;
    case ExprKind::Unary: t = check_unary(e); break;
    case ExprKind::Binary: t = check_binary(e); break;
    case ExprKind::Cast: t = check_cast(e); break;
    case ExprKind::Translate: t = check_translate(e); break;
    case ExprKind::TypeValue:
      e->type_syntax->resolved = resolve_type(e->type_syntax);
      diags_.error(DiagKind::TypeUsedAsValue, e->range, e->type_syntax->resolved.str());
      break;
    case ExprKind::AddAxis: t = check_add_axis(e); break;
    case ExprKind::Shape:
      check_size(e);
      diags_.error(DiagKind::ShapeNotValue, e->range, source_text(e->range));
      break;
  }
  e->type = instance_type(e, e->range, t);
  e->locality = locality_of(e);
  return e->type;
}

Type Checker::check_value(Expr* e) {
  Type t = check_expr(e);
  if (t.is_void()) {
    diags_.error(DiagKind::NoValue, e->range, e->name);
    e->type = Type::error();
  }
  return e->type;
}

// x[:, None] and x[None, :]: a 1-D tile of N as a column (N, 1) or a row
// (1, N), the same elements in the same order.
Type Checker::check_add_axis(Expr* e) {
  Type t = check_value(e->operands[0]);
  if (t.is_error()) return t;
  if (!t.is_tile() || t.shape->rank != 1) {
    diags_.error(DiagKind::WrongTileRank, e->range, "adding an axis", "1-D tile", t.str());
    return Type::error();
  }
  const Shape n = t.shape->dims[0], one{{}, 1};
  return t.with_shape(e->int_value == 1 ? TileShape(n, one) : TileShape(one, n));
}

// A tile size where one is expected: a size, or a shape (M, N).
void Checker::check_size(Expr* size) {
  if (size->kind != ExprKind::Shape) {
    check_value(size);
    return;
  }
  for (Expr* dim : size->operand_list()) check_value(dim);
}

std::string_view Checker::source_text(llvm::SMRange range) {
  return {range.Start.getPointer(), static_cast<size_t>(range.End.getPointer() - range.Start.getPointer())};
}

Type Checker::check_name(Expr* e) {
  const Binding* b = resolve_name(e->name, e->range);
  if (!b) return Type::error();
  if (b->kind == Binding::Kind::Function) {
    diags_.error(DiagKind::FunctionAsValue, e->range, e->name);
    return Type::error();
  }
  if (b->kind == Binding::Kind::TypeParam) {
    diags_.error(DiagKind::TypeUsedAsValue, e->range, e->name);
    return Type::error();
  }
  e->binding = b;
  e->constant = b->constant;
  return b->type;
}

Type Checker::check_unary(Expr* e) {
  Type t = check_value(e->operands[0]);
  if (t.is_error()) return t;
  bool ok = e->op == TokenKind::Minus ? t.is_arithmetic()
            : e->op == TokenKind::Bang ? t.is_bool()
                                       : t.is_integer();
  if (!ok) {
    diags_.error(DiagKind::InvalidOperand, e->range, token_kind_text(e->op), t.str());
    return Type::error();
  }
  e->type = t;
  fold_unary(e);
  return e->type;  // an error when folding failed
}

Type Checker::check_binary(Expr* e) {
  Type lhs = check_value(e->operands[0]);
  Type rhs = check_value(e->operands[1]);
  Type t = binary_result(e->op, lhs, rhs, e->range);
  bool shift = e->op == TokenKind::Shl || e->op == TokenKind::Shr;
  if (!t.is_error() && !shift) {  // a literal side takes the other side's type
    if (!rhs.literal && !check_literal_fits(e->operands[0], rhs)) t = Type::error();
    if (!lhs.literal && !check_literal_fits(e->operands[1], lhs)) t = Type::error();
  }
  if (!t.is_error()) {
    e->type = t;
    fold_binary(e);
    t = e->type;  // an error when folding failed
  }
  return t;
}

bool Checker::broadcast(const Type& a, const Type& b, std::optional<TileShape>& shape,
                        std::string_view what, llvm::SMRange range) {
  if (a.is_tile() && b.is_tile()) {
    shape = broadcast_shapes(*a.shape, *b.shape);
    if (!shape) diags_.error(DiagKind::ShapeMismatch, range, what, a.str(), b.str());
    return shape.has_value();
  }
  shape = a.is_tile() ? a.shape : b.shape;
  return true;
}

std::optional<Type> Checker::unify(const Type& a, const Type& b) {
  if (!a.is_scalar_kind() || !b.is_scalar_kind()) return std::nullopt;
  Type ea = a.element(), eb = b.element();
  if (ea.scalar == eb.scalar) {
    ea.literal = ea.literal && eb.literal;
    return ea;
  }
  if (ea.literal && eb.literal) return ea.is_float() ? ea : eb;  // int and float literals
  if (eb.literal) std::swap(ea, eb);
  if (ea.literal) {  // a literal adapts to the typed side
    if (ea.is_integer() && eb.is_arithmetic()) return eb;
    if (ea.is_float() && eb.is_float()) return eb;
    return std::nullopt;
  }
  if (scalar_widens(ea.scalar, eb.scalar)) return eb;
  if (scalar_widens(eb.scalar, ea.scalar)) return ea;
  return std::nullopt;
}

Type Checker::binary_result(TokenKind op, const Type& lhs, const Type& rhs, llvm::SMRange range) {
  if (lhs.is_error() || rhs.is_error()) return Type::error();
  std::string op_text = fmt::format("'{}'", token_kind_text(op));
  std::optional<TileShape> shape;
  if (!broadcast(lhs, rhs, shape, op_text, range)) return Type::error();
  auto incompatible = [&] {
    diags_.error(DiagKind::IncompatibleOperands, range, token_kind_text(op), lhs.str(), rhs.str());
    return Type::error();
  };
  auto invalid = [&](const Type& operand) {
    diags_.error(DiagKind::InvalidOperand, range, token_kind_text(op), operand.str());
    return Type::error();
  };

  // Pointer arithmetic: pointer +/- integer, integer + pointer.
  if (lhs.is_pointer() || rhs.is_pointer()) {
    bool additive = op == TokenKind::Plus || op == TokenKind::Minus;
    if (!additive) return invalid(lhs.is_pointer() ? lhs : rhs);
    if (lhs.is_pointer() && rhs.is_integer()) return lhs.element().with_shape(shape);
    if (op == TokenKind::Plus && lhs.is_integer() && rhs.is_pointer())
      return rhs.element().with_shape(shape);
    return incompatible();
  }

  if (op == TokenKind::AmpAmp || op == TokenKind::PipePipe) {
    if (!lhs.is_bool()) return invalid(lhs);
    if (!rhs.is_bool()) return invalid(rhs);
    return Type::scalar_of(ScalarKind::Bool).with_shape(shape);
  }
  if (op == TokenKind::Shl || op == TokenKind::Shr) {
    if (!lhs.is_integer()) return invalid(lhs);
    if (!rhs.is_integer()) return invalid(rhs);
    return lhs.element().with_shape(shape);
  }

  auto common = unify(lhs, rhs);
  if (!common) return incompatible();
  if (is_comparison(op)) {
    bool equality = op == TokenKind::EqEq || op == TokenKind::BangEq;
    if (!common->is_arithmetic() && !(equality && common->is_bool())) return invalid(*common);
    return Type::scalar_of(ScalarKind::Bool).with_shape(shape);
  }
  switch (op) {
    case TokenKind::Plus:
    case TokenKind::Minus:
    case TokenKind::Star:
    case TokenKind::Slash:
      if (!common->is_arithmetic()) return invalid(*common);
      break;
    case TokenKind::Percent:
      if (!common->is_integer()) return invalid(*common);
      break;
    default:  // & | ^
      if (!common->is_integer() && !common->is_bool()) return invalid(*common);
      break;
  }
  return common->with_shape(shape);
}

bool Checker::convertible(const Type& from, const Type& to) {
  if (from.is_error() || to.is_error()) return true;
  if (from.is_void() || to.is_void()) return false;
  if (from.is_tile() && (!to.is_tile() || *from.shape != *to.shape)) return false;
  if (from.is_pointer() || to.is_pointer()) {
    // A symmetric pointer is also a plain pointer into my own heap.
    return from.is_pointer() && to.is_pointer() && from.scalar == to.scalar &&
           (from.sym == to.sym || !to.sym);
  }
  if (from.scalar == to.scalar) return true;
  if (from.literal) return from.is_integer() ? to.is_arithmetic() : to.is_float();
  return scalar_widens(from.scalar, to.scalar);
}

bool Checker::require_convertible(const Type& from, const Type& to, std::string_view context,
                                  llvm::SMRange range) {
  if (convertible(from, to)) return true;
  diags_.error(DiagKind::CannotConvert, range, from.str(), to.str(), context);
  return false;
}

bool Checker::require_value_convertible(const Expr* value, const Type& to,
                                        std::string_view context) {
  return require_convertible(value->type, to, context, value->range) &&
         check_literal_fits(value, to);
}

// A literal adapts to a typed context, so its value must be one that type
// holds: `let a: u8 = 300` would otherwise store 44. f16 is the only float
// type that a 64-bit integer can overflow (its largest finite value is 65504).
bool Checker::check_literal_fits(const Expr* value, const Type& to) {
  const Type& from = value->type;
  if (!from.literal || !from.is_integer() || !value->constant || !value->constant->value ||
      !to.is_arithmetic())
    return true;
  return check_fits(*value->constant->value, to, value->range);
}

// Whether type `to` holds integer `v`; an error at `range` if not.
bool Checker::check_fits(int64_t v, const Type& to, llvm::SMRange range) {
  const ScalarInfo& info = scalar_info(to.scalar);
  bool fits = true;
  if (info.is_integer && info.bits < 64) {
    int64_t max = info.is_signed ? (int64_t{1} << (info.bits - 1)) - 1 : (int64_t{1} << info.bits) - 1;
    int64_t min = info.is_signed ? -max - 1 : 0;
    fits = v >= min && v <= max;
  } else if (info.is_integer) {
    fits = info.is_signed || v >= 0;
  } else if (to.scalar == ScalarKind::F16) {
    fits = v >= -65504 && v <= 65504;
  }
  if (!fits) diags_.error(DiagKind::ConstantOutOfRange, range, v, to.element().str());
  return fits;
}

// A folded value of a typed operation must be one its type holds (`F * F`
// with an i32 F of 65536 would be 4294967296 here and 0 in C++); a literal's
// is checked where it meets its type. This includes a compile-time
// parameter's default, the value the symbol stands for.
void Checker::check_folded_fits(Expr* e) {
  if (e->type.literal || !e->type.is_integer() || !e->constant || !e->constant->value) return;
  if (!check_fits(*e->constant->value, e->type, e->range)) e->type = Type::error();
}

Type Checker::materialize(Type t) {
  t.literal = false;
  return t;
}

Type Checker::check_cast(Expr* e) {
  Type from = check_value(e->operands[0]);
  Type to = resolve_type(e->type_syntax);
  if (from.is_error() || to.is_error()) return Type::error();
  bool shape_ok = !to.is_tile() || !from.is_tile() || *to.shape == *from.shape;
  bool element_ok = from.is_scalar_kind() && to.is_scalar_kind();
  if (from.is_pointer() || to.is_pointer()) element_ok = convertible(from.element(), to.element());
  if (!shape_ok || !element_ok) {
    diags_.error(DiagKind::InvalidCast, e->range, from.str(), to.str());
    return Type::error();
  }
  Type result = to.is_tile() ? to : to.with_shape(from.shape);
  // Not folded into a type parameter, whose width changes between instances.
  if (e->operands[0]->constant && (result.is_integer() || result.is_bool()) && !result.is_tile() &&
      result.type_param.empty())
    e->constant = wrap_constant(*e->operands[0]->constant, result.scalar);
  return result;
}

// A compile-time value converted as the run-time `as` converts it: to 0 or 1
// for bool, else to the target's width and signedness (300 as u8 is 44).
ConstValue Checker::wrap_constant(ConstValue c, ScalarKind target) {
  if (!c.value || c.symbolic) return c;
  const ScalarInfo& info = scalar_info(target);
  uint64_t bits = static_cast<uint64_t>(*c.value);
  if (target == ScalarKind::Bool) {
    bits = bits != 0;
  } else if (info.bits < 64) {
    bits &= (uint64_t{1} << info.bits) - 1;
    if (info.is_signed && (bits >> (info.bits - 1)) != 0) bits |= ~uint64_t{0} << info.bits;
  }
  c.value = static_cast<int64_t>(bits);
  return c;
}

Type Checker::check_translate(Expr* e) {
  Expr* pointer = e->operands[0];
  Expr* rank = e->operands[1];
  Type p = check_value(pointer);
  Type r = check_value(rank);
  bool ok = !p.is_error();
  if (ok && !p.is_pointer()) {
    diags_.error(DiagKind::TranslateNonPointer, pointer->range, p.str());
    ok = false;
  } else if (ok && !p.sym) {
    diags_.error(DiagKind::TranslateNonSymmetric, pointer->range, p.str());
    note_pointer_origin(pointer);
    ok = false;
  }
  if (!r.is_error() && (!r.is_integer() || r.is_tile())) {
    diags_.error(DiagKind::RankNotIntegerScalar, rank->range, r.str());
    ok = false;
  }
  if (!ok) return Type::error();
  p.sym = false;  // a translated pointer addresses another rank's heap
  return p;
}

// Points at the binding a non-symmetric pointer came from.
void Checker::note_pointer_origin(const Expr* e) {
  while (e->kind == ExprKind::Binary)
    e = e->operands[0]->type.is_pointer() ? e->operands[0] : e->operands[1];
  if (e->kind == ExprKind::Translate) {
    diags_.note(DiagKind::PointerTranslatedHere, e->range);
  } else if (e->kind == ExprKind::Name && e->binding) {
    diags_.note(DiagKind::PointerFrom, e->binding->range, e->binding->name,
                e->binding->type.str());
  }
}

Type Checker::resolve_type(const TypeSyntax* ts) {
  if (!ts->type_param.empty()) {  // a type parameter, or a pointer to one
    const Binding* b = lookup(ts->type_param);
    if (!b || b->kind != Binding::Kind::TypeParam) {  // shadowed by a value
      diags_.error(DiagKind::NotAType, ts->range, ts->type_param);
      return Type::error();
    }
    if (ts->kind == TypeSyntax::Kind::Scalar) return b->type;
    Type pointer = Type::pointer_to(b->type.scalar, ts->sym);
    pointer.type_param = b->type.type_param;
    return pointer;
  }
  switch (ts->kind) {
    case TypeSyntax::Kind::Scalar: return Type::scalar_of(ts->scalar);
    case TypeSyntax::Kind::Pointer: return Type::pointer_to(ts->scalar, ts->sym);
    case TypeSyntax::Kind::Tile: {
      Type element = resolve_type(ts->element);
      check_size(ts->size);
      auto shape = tile_shape(ts->size, "the tile size");
      if (!shape) return Type::error();
      return element.with_shape(shape);
    }
  }
  return Type::error();
}

std::optional<ConstValue> Checker::require_constant(Expr* e, std::string_view what) {
  if (e->type.is_error()) return std::nullopt;
  if (!e->constant) diags_.error(DiagKind::NotCompileTime, e->range, what);
  return e->constant;
}

// A tile's shape: a size, or a shape (M, N) of two sizes, the elements in all
// not too many.
std::optional<TileShape> Checker::tile_shape(Expr* size, std::string_view what) {
  if (size->kind != ExprKind::Shape) return tile_dim(size, what);
  auto rows = tile_dim(size->operands[0], what);
  auto cols = tile_dim(size->operands[1], what);
  if (!rows || !cols) return std::nullopt;
  TileShape shape(*rows, *cols);
  if (!check_tile_elements(shape, size->range)) return std::nullopt;
  return shape;
}

bool Checker::check_tile_elements(const TileShape& shape, llvm::SMRange range) {
  if (auto n = shape.elements(); n && *n > kMaxTileSize) {
    diags_.error(DiagKind::TileSizeTooLarge, range, *n, kMaxTileSize);
    return false;
  }
  return true;
}

// One dimension of a tile: a compile-time integer, a positive power of two,
// not too large.
std::optional<Shape> Checker::tile_dim(Expr* size, std::string_view what) {
  if (size->type.is_error()) return std::nullopt;
  if (!size->type.is_integer() || size->type.is_tile()) {
    diags_.error(DiagKind::CannotConvert, size->range, size->type.str(), "i32", what);
    return std::nullopt;
  }
  auto constant = require_constant(size, what);
  if (!constant) return std::nullopt;
  if (constant->value && !check_tile_size(*constant->value, size->range)) return std::nullopt;
  return Shape{constant->symbol, constant->value};
}

// A tile size whose value is known: a positive power of two, not too large.
bool Checker::check_tile_size(int64_t n, llvm::SMRange range) {
  if (n <= 0 || !std::has_single_bit(static_cast<uint64_t>(n))) {
    diags_.error(DiagKind::TileSizeNotPowerOfTwo, range, n);
    return false;
  }
  if (n > kMaxTileSize) {
    diags_.error(DiagKind::TileSizeTooLarge, range, n, kMaxTileSize);
    return false;
  }
  return true;
}

void Checker::report_fold_error(FoldError error, llvm::SMRange range) {
  if (error == FoldError::DivisionByZero) diags_.error(DiagKind::ConstantDivisionByZero, range);
  if (error == FoldError::Overflow) diags_.error(DiagKind::ConstantOverflow, range);
}

void Checker::fold_unary(Expr* e) {
  const auto& operand = e->operands[0]->constant;
  if (!operand || e->type.is_tile() || e->type.is_float()) return;
  FoldError error = FoldError::None;
  e->constant = fold_unary_value(e->op, *operand, error);
  if (error == FoldError::None) return check_folded_fits(e);
  report_fold_error(error, e->range);
  e->type = Type::error();
}

// `op operand` as a compile-time value; none past the symbols' length cap.
std::optional<ConstValue> Checker::fold_unary_value(TokenKind op, const ConstValue& operand, FoldError& error) {
  ConstValue c{{}, std::nullopt, operand.symbolic};
  if (c.symbolic && operand.symbol.size() + 3 > kMaxSymbolLength) return std::nullopt;
  if (operand.value) {
    int64_t v = *operand.value;
    if (op == TokenKind::Minus && v == INT64_MIN) {
      error = FoldError::Overflow;
      return std::nullopt;
    }
    c.value = op == TokenKind::Minus ? -v : op == TokenKind::Bang ? !v : ~v;
  }
  if (c.symbolic) c.symbol = module_.save(fmt::format("({}{})", token_kind_text(op), operand.symbol));
  return c;
}

void Checker::fold_binary(Expr* e) {
  const auto& l = e->operands[0]->constant;
  const auto& r = e->operands[1]->constant;
  if (!l || !r || e->type.is_tile() || e->type.is_float() || e->type.is_pointer()) return;
  FoldError error = FoldError::None;
  e->constant = fold_binary_value(e->op, *l, *r, error);
  if (error == FoldError::None) return check_folded_fits(e);
  report_fold_error(error, e->range);
  e->type = Type::error();
}

// `l op r` as a compile-time value; none past the symbols' length cap, or
// for an operator that does not fold.
std::optional<ConstValue> Checker::fold_binary_value(TokenKind op, const ConstValue& l, const ConstValue& r,
                                                     FoldError& error) {
  ConstValue c{{}, std::nullopt, l.symbolic || r.symbolic};
  if (c.symbolic && text_length(l) + text_length(r) + 8 > kMaxSymbolLength) return std::nullopt;
  if (l.value && r.value) {
    int64_t a = *l.value, b = *r.value, v = 0;
    bool overflow = false;
    switch (op) {
      case TokenKind::Plus: overflow = __builtin_add_overflow(a, b, &v); break;
      case TokenKind::Minus: overflow = __builtin_sub_overflow(a, b, &v); break;
      case TokenKind::Star: overflow = __builtin_mul_overflow(a, b, &v); break;
      case TokenKind::Slash:
      case TokenKind::Percent:
        if (b == 0) {
          error = FoldError::DivisionByZero;
          return std::nullopt;
        }
        overflow = a == INT64_MIN && b == -1;
        if (!overflow) v = op == TokenKind::Slash ? a / b : a % b;
        break;
      case TokenKind::Shl:
      case TokenKind::Shr:
        overflow = b < 0 || b > 63;
        if (!overflow) v = op == TokenKind::Shl ? static_cast<int64_t>(static_cast<uint64_t>(a) << b) : a >> b;
        if (op == TokenKind::Shl && !overflow) overflow = (v >> b) != a;
        break;
      case TokenKind::Less: v = a < b; break;
      case TokenKind::LessEq: v = a <= b; break;
      case TokenKind::Greater: v = a > b; break;
      case TokenKind::GreaterEq: v = a >= b; break;
      case TokenKind::EqEq: v = a == b; break;
      case TokenKind::BangEq: v = a != b; break;
      case TokenKind::AmpAmp: v = a && b; break;
      case TokenKind::PipePipe: v = a || b; break;
      case TokenKind::Amp: v = a & b; break;
      case TokenKind::Pipe: v = a | b; break;
      case TokenKind::Caret: v = a ^ b; break;
      default: return std::nullopt;
    }
    if (overflow) {
      error = FoldError::Overflow;
      return std::nullopt;
    }
    c.value = v;
  }
  if (c.symbolic) c.symbol = module_.save(fmt::format("({} {} {})", l.text(), token_kind_text(op), r.text()));
  return c;
}

}  // namespace irisc
