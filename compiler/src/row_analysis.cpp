// The row analyses (row_analysis.h): walks over a tile's tree that follow
// how its elements change along a row.
#include "irisc/row_analysis.h"

namespace irisc {

std::optional<int64_t> row_stride(const TirValue* v, const LetValues& lets) {
  if (!v->type.is_tile()) return 0;
  auto of = [&](size_t i) { return row_stride(v->operands[i], lets); };
  switch (v->op) {
    case TirOp::Read: {
      auto let = lets.find(v->var());
      return let == lets.end() ? std::nullopt : row_stride(let->second, lets);
    }
    case TirOp::Arange: return 1;
    case TirOp::Broadcast:
    case TirOp::Zeros:
    case TirOp::Full: return 0;
    case TirOp::AddAxis: return v->attrs<AxisAttrs>().axis == 1 ? std::optional<int64_t>(0) : of(0);
    case TirOp::BroadcastTo: return v->operands[0]->type.dims.back().is_one() ? std::optional<int64_t>(0) : of(0);
    case TirOp::Convert:
    case TirOp::ConvertLayout:
    case TirOp::Translate: return of(0);  // a translation moves every pointer by the same distance
    case TirOp::Add:
    case TirOp::Sub: {
      auto a = of(0), b = of(1);
      if (!a || !b) return std::nullopt;
      return v->op == TirOp::Add ? *a + *b : *a - *b;
    }
    case TirOp::Mul: {
      auto a = of(0), b = of(1);
      if (a == 0 && b == 0) return 0;
      // By a constant: stride times the constant.
      for (auto [stride, other] : {std::pair{a, v->operands[1]}, std::pair{b, v->operands[0]}}) {
        const TirValue* c = other->op == TirOp::Broadcast ? other->operands[0] : other;
        if (stride && c->op == TirOp::Constant && c->attrs<ConstantAttrs>().literal != ConstantAttrs::Literal::Float)
          return *stride * static_cast<int64_t>(c->attrs<ConstantAttrs>().int_bits);
      }
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

bool row_interval(const TirValue* v, const LetValues& lets) {
  if (!v->type.is_tile()) return true;
  auto of = [&](size_t i) { return row_interval(v->operands[i], lets); };
  switch (v->op) {
    case TirOp::Read: {
      auto let = lets.find(v->var());
      return let != lets.end() && row_interval(let->second, lets);
    }
    case TirOp::Broadcast: return true;
    case TirOp::AddAxis:
    case TirOp::ConvertLayout: return of(0);
    case TirOp::BroadcastTo: return v->operands[0]->type.dims.back().is_one() || of(0);
    case TirOp::LogicalAnd:
    case TirOp::BitAnd: return of(0) && of(1);
    case TirOp::Lt:
    case TirOp::Le:
    case TirOp::Gt:
    case TirOp::Ge: return row_stride(v->operands[0], lets) && row_stride(v->operands[1], lets);
    default: return false;
  }
}

}  // namespace irisc
