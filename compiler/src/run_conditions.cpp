// The pipelining pass's run-time conditions; see run_conditions.h.
#include "irisc/run_conditions.h"

#include "irisc/tir_walk.h"

namespace irisc {

TirValue* RunConditions::uniform_runs(const TirValue& load, std::optional<int> element_bytes, int run_bytes) {
  const TirValue* mask = load.operands.size() > 1 ? load.operands[1] : nullptr;
  if (!element_bytes || run_bytes % *element_bytes != 0) return nullptr;
  const AffineForm pointers = AffineForm::of(load.operands[0], function_lets_);
  if (pointers.row_stride() != 1) return nullptr;
  std::optional<std::vector<RowComparison>> comparisons;
  if (mask && !(comparisons = row_intervals(mask, function_lets_))) return nullptr;
  run_elements_ = run_bytes / *element_bytes;
  element_size_ = *element_bytes;
  TirValue* aligned = multiple_of(pointers, run_bytes);
  TirValue* uniform = comparisons ? uniform_mask(*comparisons) : b_.true_value();
  return aligned && uniform ? all_of(aligned, uniform) : nullptr;
}

// A mask's comparisons, each holding on whole rows or changing at a run's
// boundary (a conjunction of conditions; null where one is not shown).
TirValue* RunConditions::uniform_mask(const std::vector<RowComparison>& comparisons) {
  TirValue* all = b_.true_value();
  for (const RowComparison& c : comparisons)
    if (!(all = both(all, uniform_comparison(c)))) return nullptr;
  return all;
}

// x < y (x <= y), with x and y advancing by sx and sy along the row: the
// same on the whole row where sx == sy; where sx - sy is 1, x < y holds on
// the columns before y - x at the row's start, and where it is -1, x <= y
// on those from x - y on.
TirValue* RunConditions::uniform_comparison(const RowComparison& c) {
  const int64_t sx = *c.lower.row_stride(), sy = *c.upper.row_stride();
  if (sx == sy) return b_.true_value();
  std::optional<AffineForm> boundary;
  if (sx - sy == 1 && c.strict) boundary = difference(c.upper, c.lower);
  if (sx - sy == -1 && !c.strict) boundary = difference(c.lower, c.upper);
  return boundary ? multiple_of(*boundary, run_elements_) : nullptr;
}

// A condition under which f's values (pointers: their addresses; tiles:
// those at the start of a run, in a column that is a multiple of
// run_elements_) are multiples of d, built from the scalars of f; null where
// none is known. A scalar whose parts are not shown to be is tested whole.
TirValue* RunConditions::multiple_of(const AffineForm& f, int64_t d) {
  if (d == 1) return b_.true_value();
  TirValue* parts = parts_multiple_of(f, d);
  if (parts || f.tile || !f.scalar || f.is_constant()) return parts;
  return tested(f.scalar, d);
}

// A sum needs every term, and a pointer's offsets, in elements, a multiple
// of d bytes' elements.
TirValue* RunConditions::parts_multiple_of(const AffineForm& f, int64_t d) {
  TirValue* all = b_.true_value();
  if (f.base) {
    all = multiple_of(*f.base, d);
    if (f.constant == 0 && f.terms.empty()) return all;
    if (d % element_size_ != 0) return nullptr;
    d /= element_size_;
  }
  if (f.constant % d != 0) return nullptr;
  for (const AffineTerm& t : f.terms)
    if (!(all = both(all, multiple_of(t, d)))) return nullptr;
  return all;
}

// A product needs one factor.
TirValue* RunConditions::multiple_of(const AffineTerm& t, int64_t d) {
  if (t.coefficient % d == 0) return b_.true_value();
  TirValue* any = nullptr;
  for (const AffineFactor& f : t.factors) {
    TirValue* c = multiple_of(f, d);
    if (TirBuilder::is_true(c)) return c;
    if (c) any = any ? b_.binary_bool(TirOp::LogicalOr, any, c) : c;
  }
  return any;
}

TirValue* RunConditions::multiple_of(const AffineFactor& f, int64_t d) {
  switch (f.kind) {
    case AffineFactor::Kind::Column: return run_elements_ % d == 0 ? b_.true_value() : nullptr;
    case AffineFactor::Kind::Tile: return nullptr;
    case AffineFactor::Kind::Sum: return multiple_of(*f.sum, d);
    case AffineFactor::Kind::Symbol: break;
  }
  if (f.value->op == TirOp::Read && f.value->var() == loop_.var) {
    // lo + i * step, for every i: both are.
    TirValue* step = loop_.step ? multiple_of(AffineForm::of(loop_.step, function_lets_), d) : nullptr;
    return step ? both(multiple_of(AffineForm::of(loop_.low, function_lets_), d), step) : nullptr;
  }
  return tested(f.value, d);
}

TirValue* RunConditions::tested(const TirValue* v, int64_t d) {
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

// Whether v reads the loop variable, directly or through the body's lets.
bool RunConditions::reads_loop_var(const TirValue* v) const {
  if (v->op == TirOp::Read && v->var() == loop_.var) return true;
  if (v->op == TirOp::Read)
    if (auto let = lets_.find(v->var()); let != lets_.end()) return reads_loop_var(let->second);
  for (const TirValue* o : v->operands)
    if (o && reads_loop_var(o)) return true;
  return false;
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
