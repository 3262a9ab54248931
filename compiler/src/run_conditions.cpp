// The pipelining pass's divisibility analysis; see run_conditions.h.
#include "irisc/run_conditions.h"

#include "irisc/tir_walk.h"

namespace irisc {

TirValue* RunConditions::uniform_runs(const TirValue& load, std::optional<int> element_bytes, int run_bytes) {
  const TirValue* ptr = load.operands[0];
  const TirValue* mask = load.operands.size() > 1 ? load.operands[1] : nullptr;
  if (!element_bytes || run_bytes % *element_bytes != 0 || row_stride(ptr, function_lets_) != 1) return nullptr;
  if (mask && !row_interval(mask, function_lets_)) return nullptr;
  run_elements_ = run_bytes / *element_bytes;
  element_size_ = *element_bytes;
  TirValue* aligned = multiple_of(ptr, run_bytes, Elements::RunStarts);
  TirValue* uniform = mask ? uniform_mask(mask) : b_.true_value();
  return aligned && uniform ? all_of(aligned, uniform) : nullptr;
}

// A mask's comparisons, each holding on whole rows or changing at a run's
// boundary (a conjunction of conditions; null where one is not shown).
TirValue* RunConditions::uniform_mask(const TirValue* m) {
  if (!m->type.is_tile()) return b_.true_value();
  switch (m->op) {
    case TirOp::Read: {
      const TirValue* let = let_value(m->var());
      return let ? uniform_mask(let) : nullptr;
    }
    case TirOp::Broadcast: return b_.true_value();
    case TirOp::AddAxis: return m->attrs<AxisAttrs>().axis == 1 ? b_.true_value() : uniform_mask(m->operands[0]);
    case TirOp::BroadcastTo:
      return m->operands[0]->type.dims.back().is_one() ? b_.true_value() : uniform_mask(m->operands[0]);
    case TirOp::ConvertLayout: return uniform_mask(m->operands[0]);
    case TirOp::LogicalAnd:
    case TirOp::BitAnd: return both(uniform_mask(m->operands[0]), uniform_mask(m->operands[1]));
    case TirOp::Lt:
    case TirOp::Le:
    case TirOp::Gt:
    case TirOp::Ge: {
      // x < y (x <= y), with x and y advancing by sx and sy along the row:
      // the same on the whole row where sx == sy; where sx - sy is 1, x < y
      // holds on the columns before y - x at the row's start, and where it
      // is -1, x <= y on those from x - y on.
      const bool swapped = m->op == TirOp::Gt || m->op == TirOp::Ge;
      const TirValue* x = m->operands[swapped ? 1 : 0];
      const TirValue* y = m->operands[swapped ? 0 : 1];
      const bool strict = m->op == TirOp::Lt || m->op == TirOp::Gt;
      const auto sx = row_stride(x, function_lets_), sy = row_stride(y, function_lets_);
      if (!sx || !sy) return nullptr;
      if (*sx == *sy) return b_.true_value();
      if (*sx - *sy == 1 && strict) return multiple_of(tile_difference(y, x), run_elements_, Elements::RunStarts);
      if (*sx - *sy == -1 && !strict) return multiple_of(tile_difference(x, y), run_elements_, Elements::RunStarts);
      return nullptr;
    }
    default: return nullptr;
  }
}

// a - b, for the analysis only (never printed).
TirValue* RunConditions::tile_difference(const TirValue* a, const TirValue* b) {
  TirValue* v = m_.make_value(TirOp::Sub, a->type, a->loc);
  v->operands = {const_cast<TirValue*>(a), const_cast<TirValue*>(b)};
  return v;
}

// A condition under which v's elements (pointers: their addresses) are
// multiples of d, built from the scalars of v's tree; null where none is
// known. Sums need both terms to be multiples, products one factor.
TirValue* RunConditions::multiple_of(const TirValue* v, int64_t d, Elements which) {
  if (d == 1) return b_.true_value();
  if (!v->type.is_tile()) return scalar_multiple_of(v, d);
  switch (v->op) {
    case TirOp::Read: {
      const TirValue* let = let_value(v->var());
      return let ? multiple_of(let, d, which) : nullptr;
    }
    case TirOp::Broadcast: return scalar_multiple_of(v->operands[0], d);
    case TirOp::Arange:
      return which == Elements::RunStarts && run_elements_ % d == 0 ? b_.true_value() : nullptr;
    case TirOp::AddAxis:  // v[None, :] has the columns of v, v[:, None] its rows
      return multiple_of(v->operands[0], d, v->attrs<AxisAttrs>().axis == 0 ? which : Elements::All);
    case TirOp::BroadcastTo:  // a tile of one column repeats it: every element counts
      return multiple_of(v->operands[0], d,
                         v->operands[0]->type.dims.back().is_one() ? Elements::All : which);
    case TirOp::ConvertLayout: return multiple_of(v->operands[0], d, which);
    default: return sum_or_product(v, d, [&](const TirValue* o, int64_t od) { return multiple_of(o, od, which); });
  }
}

TirValue* RunConditions::scalar_multiple_of(const TirValue* v, int64_t d) {
  if (d == 1) return b_.true_value();
  if (v->op == TirOp::Constant) {
    const auto& c = v->attrs<ConstantAttrs>();
    return c.literal != ConstantAttrs::Literal::Float && static_cast<int64_t>(c.int_bits) % d == 0 ? b_.true_value()
                                                                                                    : nullptr;
  }
  if (v->op == TirOp::Read && v->var() == loop_.var) {
    // lo + i * step, for every i: both are.
    TirValue* step = loop_.step ? scalar_multiple_of(loop_.step, d) : nullptr;
    return step ? both(scalar_multiple_of(loop_.low, d), step) : nullptr;
  }
  if (v->op == TirOp::Read)
    if (const TirValue* let = let_value(v->var())) return scalar_multiple_of(let, d);
  if (TirValue* c = sum_or_product(v, d, [&](const TirValue* o, int64_t od) { return scalar_multiple_of(o, od); }))
    return c;
  // A leaf that the loop does not change, tested as it is.
  if (reads_loop_var(v) || !recomputable(v)) return nullptr;
  if (v->type.is_pointer()) {
    TirValue* aligned = m_.make_value(TirOp::Aligned, v->type.with_scalar(ScalarKind::Bool), v->loc);
    aligned->type.kind = TirType::Kind::Scalar;
    aligned->operands = {copy_(v), b_.constant(static_cast<int>(d))};
    return aligned;
  }
  if (v->type.kind != TirType::Kind::Scalar || !scalar_info(v->type.scalar).is_integer) return nullptr;
  TirValue* rest = b_.binary(TirOp::Mod, copy_(v), b_.typed_constant(v->type, d));
  TirValue* zero = b_.binary(TirOp::Eq, rest, b_.typed_constant(v->type, 0));
  zero->type = zero->type.with_scalar(ScalarKind::Bool);
  return zero;
}

// Add, Sub, Neg and Mul, scalar or tile; pointer + offset needs the offset
// in elements. Null for anything else.
template <class Of>
TirValue* RunConditions::sum_or_product(const TirValue* v, int64_t d, Of of) {
  const auto& o = v->operands;
  switch (v->op) {
    case TirOp::Neg: return of(o[0], d);
    case TirOp::Add:
    case TirOp::Sub: {
      if (!v->type.is_pointer()) return both(of(o[0], d), of(o[1], d));
      if (d % element_size_ != 0) return nullptr;
      const bool first_is_pointer = o[0]->type.is_pointer();
      return both(of(o[first_is_pointer ? 0 : 1], d), of(o[first_is_pointer ? 1 : 0], d / element_size_));
    }
    case TirOp::Mul: {
      TirValue* a = of(o[0], d);
      TirValue* b = of(o[1], d);
      if (TirBuilder::is_true(a) || TirBuilder::is_true(b)) return b_.true_value();
      if (!a || !b) return a ? a : b;
      return b_.binary_bool(TirOp::LogicalOr, a, b);
    }
    default: return nullptr;
  }
}

// Whether v reads the loop variable, directly or through the body's lets.
bool RunConditions::reads_loop_var(const TirValue* v) const {
  if (v->op == TirOp::Read && v->var() == loop_.var) return true;
  if (v->op == TirOp::Read)
    if (auto let = lets_.find(v->var()); let != lets_.end()) return reads_loop_var(let->second);
  for (const TirValue* o : v->operands)
    if (o && reads_loop_var(o)) return true;
  return false;
}

// The value of a let of the loop body or the function; null for anything else.
const TirValue* RunConditions::let_value(const TirVar* var) const {
  if (auto it = lets_.find(var); it != lets_.end()) return it->second;
  if (auto it = function_lets_.find(var); it != function_lets_.end()) return it->second;
  return nullptr;
}

TirValue* RunConditions::both(TirValue* a, TirValue* b) {
  if (!a || !b) return nullptr;
  return all_of(a, b);
}

TirValue* RunConditions::all_of(TirValue* a, TirValue* b) {
  std::vector<TirValue*> terms;
  for (TirValue* v : {a, b}) conjuncts(v, terms);
  TirValue* all = nullptr;
  for (size_t i = 0; i < terms.size(); ++i) {
    bool repeated = false;
    for (size_t j = 0; j < i && !repeated; ++j) repeated = same_tree(terms[i], terms[j]);
    if (!repeated) all = all ? b_.binary_bool(TirOp::LogicalAnd, all, terms[i]) : terms[i];
  }
  return all ? all : b_.true_value();
}

// The terms of a conjunction, left to right, without the constant true.
void RunConditions::conjuncts(TirValue* v, std::vector<TirValue*>& terms) {
  if (v->op == TirOp::LogicalAnd) {
    for (TirValue* o : v->operands) conjuncts(o, terms);
  } else if (!TirBuilder::is_true(v)) {
    terms.push_back(v);
  }
}

}  // namespace irisc
