// The affine analysis (affine.h): a tree's form, its stride along a row, and
// a mask's comparisons.
#include "irisc/affine.h"

#include <utility>

namespace irisc {
namespace {

using Kind = AffineFactor::Kind;

// More terms than any kernel writes: a form past it is a leaf, so that lets
// that read each other twice cannot make forms grow without end.
constexpr size_t kMaxTerms = 256;

// v as one factor the form does not look into; a pointer is a base.
AffineForm leaf(const TirValue* v, std::optional<int64_t> tile_stride = std::nullopt) {
  AffineForm f{.tile = v->type.is_tile()};
  if (!f.tile) f.scalar = v;
  const AffineFactor factor = f.tile ? AffineFactor{Kind::Tile, v, tile_stride} : AffineFactor{Kind::Symbol, v};
  if (v->type.is_pointer())
    f.base = factor;
  else
    f.terms.push_back({1, {factor}});
  return f;
}

AffineForm constant(const TirValue* v, int64_t value) {
  AffineForm f{.tile = v->type.is_tile(), .constant = value};
  if (!f.tile) f.scalar = v;
  return f;
}

// The form of a tile each of whose elements is the scalar of `s`. A scalar
// sum stays one factor: where its terms are not shown to be multiples of d,
// the scalar itself can be tested (RunConditions). A constant, a term or a
// bare pointer is the same whole or not.
AffineForm in_tile(AffineForm s) {
  if (s.tile) return s;
  AffineForm f{.tile = true};
  if (s.is_constant()) {
    f.constant = s.constant;
    return f;
  }
  if (s.constant == 0 && (s.base ? s.terms.empty() : s.terms.size() == 1)) {
    f.base = std::move(s.base);
    f.terms = std::move(s.terms);
    return f;
  }
  const bool pointer = s.base.has_value();
  AffineFactor whole{Kind::Sum, s.scalar, {}, std::make_shared<const AffineForm>(std::move(s))};
  if (pointer)
    f.base = std::move(whole);
  else
    f.terms.push_back({1, {std::move(whole)}});
  return f;
}

// The form of x[:, None], or of a tile of one column broadcast along each
// row: every element is x's at the element's row, the same along the row, so
// every tile factor advances by 0.
AffineFactor along_rows(AffineFactor x);

AffineForm along_rows(AffineForm f) {
  if (f.base) f.base = along_rows(std::move(*f.base));
  for (AffineTerm& t : f.terms)
    for (AffineFactor& factor : t.factors) factor = along_rows(std::move(factor));
  return f;
}

AffineFactor along_rows(AffineFactor x) {
  switch (x.kind) {
    case Kind::Column:
    case Kind::Tile: return {Kind::Tile, x.value, 0};
    case Kind::Symbol: return x;
    case Kind::Sum:
      if (x.sum->tile) x.sum = std::make_shared<const AffineForm>(along_rows(*x.sum));
      return x;
  }
  return x;
}

// -f; nullopt where a coefficient overflows.
std::optional<AffineForm> negated(AffineForm f) {
  if (__builtin_sub_overflow(int64_t{0}, f.constant, &f.constant)) return std::nullopt;
  for (AffineTerm& t : f.terms)
    if (__builtin_sub_overflow(int64_t{0}, t.coefficient, &t.coefficient)) return std::nullopt;
  return f;
}

// a + b (a - b where `subtract`), a scalar in a tile where the other is a
// tile; nullopt where a constant overflows.
std::optional<AffineForm> sum(AffineForm a, AffineForm b, bool subtract) {
  if (a.tile || b.tile) {
    a = in_tile(std::move(a));
    b = in_tile(std::move(b));
  }
  // An offset plus a pointer is the pointer plus the offset: its base and
  // terms first.
  if (!subtract && b.base) std::swap(a, b);
  if (subtract) {
    std::optional<AffineForm> minus_b = negated(std::move(b));
    if (!minus_b) return std::nullopt;
    b = std::move(*minus_b);
  }
  if (__builtin_add_overflow(a.constant, b.constant, &a.constant)) return std::nullopt;
  for (AffineTerm& t : b.terms) a.terms.push_back(std::move(t));
  return a;
}

// f as one term: a constant (no factors), a single term, or the whole sum.
AffineTerm as_term(AffineForm f) {
  if (f.is_constant()) return {f.constant, {}};
  if (!f.base && f.constant == 0 && f.terms.size() == 1) return std::move(f.terms.front());
  const TirValue* scalar = f.scalar;
  return {1, {AffineFactor{Kind::Sum, scalar, {}, std::make_shared<const AffineForm>(std::move(f))}}};
}

// a × b: one term, whose factors are a's then b's; nullopt where the
// coefficient overflows.
std::optional<AffineForm> product(AffineForm a, AffineForm b) {
  const bool tile = a.tile || b.tile;
  if (tile) {
    a = in_tile(std::move(a));
    b = in_tile(std::move(b));
  }
  AffineTerm x = as_term(std::move(a)), y = as_term(std::move(b));
  AffineForm f{.tile = tile};
  if (__builtin_mul_overflow(x.coefficient, y.coefficient, &x.coefficient)) return std::nullopt;
  if (x.coefficient == 0) return f;
  for (AffineFactor& factor : y.factors) x.factors.push_back(std::move(factor));
  if (x.factors.empty())
    f.constant = x.coefficient;
  else
    f.terms.push_back(std::move(x));
  return f;
}

class FormReader {
 public:
  explicit FormReader(const LetValues& lets) : lets_(lets) {}

  // Each tree once: lets that two trees read are read once.
  AffineForm form(const TirValue* v) {
    if (auto known = forms_.find(v); known != forms_.end()) return known->second;
    AffineForm f = read(v);
    if (f.terms.size() > kMaxTerms) f = leaf(v);
    return forms_.emplace(v, std::move(f)).first->second;
  }

 private:
  AffineForm read(const TirValue* v) {
    const auto& o = v->operands;
    switch (v->op) {
      case TirOp::Read: {
        auto let = lets_.find(v->var());
        return let == lets_.end() ? leaf(v) : form(let->second);
      }
      case TirOp::Constant: {
        const auto& c = v->attrs<ConstantAttrs>();
        if (c.literal == ConstantAttrs::Literal::Float || c.literal == ConstantAttrs::Literal::Bool) return leaf(v);
        return constant(v, static_cast<int64_t>(c.int_bits));
      }
      case TirOp::Arange: return {.tile = true, .terms = {{1, {AffineFactor{Kind::Column, v}}}}};
      case TirOp::Zeros: return constant(v, 0);
      case TirOp::Broadcast:
      case TirOp::Full: return in_tile(form(o[0]));
      case TirOp::ConvertLayout: return form(o[0]);
      case TirOp::AddAxis: return v->attrs<AxisAttrs>().axis == 1 ? along_rows(form(o[0])) : form(o[0]);
      case TirOp::BroadcastTo: return o[0]->type.dims.back().is_one() ? along_rows(form(o[0])) : form(o[0]);
      // A conversion or translation moves every element of a tile alike.
      case TirOp::Convert:
      case TirOp::Translate: return v->type.is_tile() ? leaf(v, form(o[0]).row_stride()) : leaf(v);
      case TirOp::Neg: return scalar_named(v, negated(form(o[0])));
      case TirOp::Add:
      case TirOp::Sub:
        // A difference of pointers counts elements between two bases.
        if (o[0]->type.is_pointer() && o[1]->type.is_pointer()) return leaf(v);
        return scalar_named(v, sum(form(o[0]), form(o[1]), v->op == TirOp::Sub));
      case TirOp::Mul: return scalar_named(v, product(form(o[0]), form(o[1])));
      default: return leaf(v);
    }
  }

  // An operation's form, which a scalar's run-time test copies as v; v as a
  // leaf where the operation's constants overflow.
  static AffineForm scalar_named(const TirValue* v, std::optional<AffineForm> f) {
    if (!f) return leaf(v);
    f->scalar = f->tile ? nullptr : v;
    return std::move(*f);
  }

  const LetValues& lets_;
  std::unordered_map<const TirValue*, AffineForm> forms_;
};

std::optional<int64_t> factor_stride(const AffineFactor& f) {
  switch (f.kind) {
    case Kind::Column: return 1;
    case Kind::Tile: return f.stride;
    case Kind::Symbol: return 0;
    case Kind::Sum: return f.sum->row_stride();
  }
  return std::nullopt;
}

// A term advances by its coefficient times its one factor's stride, and not
// at all where no factor does.
std::optional<int64_t> term_stride(const AffineTerm& t) {
  bool advances = false;
  for (const AffineFactor& f : t.factors) {
    std::optional<int64_t> s = factor_stride(f);
    if (!s) return std::nullopt;
    advances |= *s != 0;
  }
  if (!advances) return 0;
  if (t.factors.size() != 1) return std::nullopt;
  int64_t stride;
  if (__builtin_mul_overflow(t.coefficient, *factor_stride(t.factors.front()), &stride)) return std::nullopt;
  return stride;
}

class IntervalFinder {
 public:
  explicit IntervalFinder(const LetValues& lets) : lets_(lets), forms_(lets) {}

  // Adds the comparisons of mask v to `out`; false where v is not shown to
  // hold on one run of columns per row.
  bool find(const TirValue* v, std::vector<RowComparison>& out) {
    if (!v->type.is_tile()) return true;
    switch (v->op) {
      case TirOp::Read: {
        auto let = lets_.find(v->var());
        return let != lets_.end() && find(let->second, out);
      }
      case TirOp::Broadcast: return true;
      case TirOp::AddAxis: return v->attrs<AxisAttrs>().axis == 1 || find(v->operands[0], out);
      case TirOp::BroadcastTo: return v->operands[0]->type.dims.back().is_one() || find(v->operands[0], out);
      case TirOp::ConvertLayout: return find(v->operands[0], out);
      case TirOp::LogicalAnd:
      case TirOp::BitAnd: return find(v->operands[0], out) && find(v->operands[1], out);
      case TirOp::Lt:
      case TirOp::Le:
      case TirOp::Gt:
      case TirOp::Ge: {
        const bool swapped = v->op == TirOp::Gt || v->op == TirOp::Ge;
        RowComparison c{forms_.form(v->operands[swapped ? 1 : 0]), forms_.form(v->operands[swapped ? 0 : 1]),
                        v->op == TirOp::Lt || v->op == TirOp::Gt};
        if (!c.lower.row_stride() || !c.upper.row_stride()) return false;
        out.push_back(std::move(c));
        return true;
      }
      default: return false;
    }
  }

 private:
  const LetValues& lets_;
  FormReader forms_;
};

}  // namespace

AffineForm AffineForm::of(const TirValue* v, const LetValues& lets) { return FormReader(lets).form(v); }

std::optional<int64_t> AffineForm::row_stride() const {
  if (!tile) return 0;
  int64_t stride = 0;
  auto add = [&](std::optional<int64_t> s) { return s && !__builtin_add_overflow(stride, *s, &stride); };
  if (base && !add(factor_stride(*base))) return std::nullopt;
  for (const AffineTerm& t : terms)
    if (!add(term_stride(t))) return std::nullopt;
  return stride;
}

std::optional<AffineForm> difference(const AffineForm& a, const AffineForm& b) {
  if (a.base || b.base) return std::nullopt;
  std::optional<AffineForm> d = sum(a, b, true);
  if (d) d->scalar = nullptr;
  return d;
}

std::optional<std::vector<RowComparison>> row_intervals(const TirValue* v, const LetValues& lets) {
  std::vector<RowComparison> comparisons;
  if (!IntervalFinder(lets).find(v, comparisons)) return std::nullopt;
  return comparisons;
}

}  // namespace irisc
