// The passes' IR-building helpers; see tir_builder.h.
#include "irisc/tir_builder.h"

namespace irisc {

TirType i32_type() {
  TirType t;
  t.kind = TirType::Kind::Scalar;
  t.scalar = ScalarKind::I32;
  return t;
}

TirValue* TirBuilder::make(TirOp op, TirType type, std::initializer_list<TirValue*> operands) {
  TirValue* v = m_.make_value(op, std::move(type), loc_);
  v->operands.assign(operands.begin(), operands.end());
  return v;
}

TirValue* TirBuilder::read(const TirVar* var) {
  TirValue* v = make(TirOp::Read, var->type);
  v->attrs<ReadAttrs>().var = const_cast<TirVar*>(var);
  return v;
}

TirValue* TirBuilder::constant(int value) {
  TirValue* c = make(TirOp::Constant, i32_type());
  c->attrs<ConstantAttrs>().int_bits = static_cast<uint64_t>(value);
  return c;
}

TirValue* TirBuilder::typed_constant(const TirType& type, int64_t value) {
  TirValue* c = make(TirOp::Constant, type);
  c->type.type_param = {};
  c->attrs<ConstantAttrs>() = {
      scalar_info(type.scalar).is_signed ? ConstantAttrs::Literal::SignedInt : ConstantAttrs::Literal::Int,
      static_cast<uint64_t>(value)};
  return c;
}

TirValue* TirBuilder::true_value() {
  TirValue* t = make(TirOp::Constant, i32_type().with_scalar(ScalarKind::Bool));
  t->attrs<ConstantAttrs>() = {.literal = ConstantAttrs::Literal::Bool, .bool_value = true};
  return t;
}

TirValue* TirBuilder::named_constant(std::string_view text) {
  TirValue* v = make(TirOp::NamedConstant, i32_type());
  v->attrs<TextAttrs>().text = text;
  return v;
}

TirValue* TirBuilder::unary(TirOp op, TirValue* a) {
  TirValue* v = m_.make_value(op, a->type, a->loc);
  v->operands = {a};
  return v;
}

TirValue* TirBuilder::binary(TirOp op, TirValue* a, TirValue* b) {
  TirValue* v = m_.make_value(op, a->type, a->loc);
  v->operands = {a, b};
  return v;
}

TirValue* TirBuilder::binary_bool(TirOp op, TirValue* a, TirValue* b) {
  TirValue* v = binary(op, a, b);
  v->type = a->type.with_scalar(ScalarKind::Bool);
  return v;
}

TirStmt* TirBuilder::eval(TirValue* value) {
  TirStmt* s = m_.make_stmt(TirStmtKind::Eval, value->loc);
  s->value = value;
  return s;
}

TirStmt* TirBuilder::assign(TirVar* var, TirValue* value) {
  TirStmt* s = m_.make_stmt(TirStmtKind::Assign, value->loc);
  s->var = var;
  s->value = value;
  return s;
}

TirStmt* TirBuilder::guarded(TirValue* condition, const std::vector<TirStmt*>& stmts) {
  TirStmt* then = m_.make_stmt(TirStmtKind::Block, condition->loc);
  then->stmts = stmts;
  TirStmt* s = m_.make_stmt(TirStmtKind::If, condition->loc);
  s->value = condition;
  s->body = then;
  return s;
}

bool TirBuilder::is_true(const TirValue* v) {
  if (!v || v->op != TirOp::Constant) return false;
  const auto& c = v->attrs<ConstantAttrs>();
  return c.literal == ConstantAttrs::Literal::Bool && c.bool_value;
}

}  // namespace irisc
