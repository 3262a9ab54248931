// Pointer advancing (strength reduction): in a loop whose copies read a
// pointer tile that moves by the same amount every iteration, the tile is
// computed once before the loop and advanced at the end of each iteration,
// as Triton's `a_ptrs += BLOCK_K` does by hand:
//   for k in lo .. hi step s {             var x_pointers = P(lo);
//       ...                                for k in lo .. hi step s {
//       copy_async(stage, P(k), ...)  ->       ...
//       ...                                    copy_async(stage, x_pointers, ...)
//   }                                          ...
//                                              x_pointers = x_pointers + s * dP;
//                                          }
// P(k) is affine in k with a derivative dP that the loop does not change
// (a scalar, in elements): a K loop's `a + rows[:, None] * K + (k + arange)`
// advances by 1 a step and `b + (k + arange)[:, None] * N + cols` by N. Each
// iteration then adds one offset to each pointer it reads, where it computed
// every pointer again from the rows, columns and loop variable: a GEMM's K
// step issues half the instructions (docs/performance.md). The pointers
// are those of the original tree only where its integer arithmetic does not
// overflow, which an address into an allocation never does.
//
// Only copy_async's pointers are advanced, the loads that pipeline-loads
// made out of a K loop's (it runs after that pass, and after layout
// assignment, so that the advanced tile has the copy's layout): their masks
// are computed anew, and a copy's `contiguous_rows` holds of the advanced
// tile as of the tree it replaces. Those loops never `continue`, which would
// skip the advance: pipeline-loads makes copies only in loops of lets and
// dots, and in the loop over its prologue.
#include "irisc/passes.h"
#include "irisc/tir_builder.h"
#include "irisc/tir_walk.h"

#include <optional>
#include <unordered_set>

namespace irisc {
namespace {

class Advancer {
 public:
  explicit Advancer(TirModule& module) : m_(module), b_(module) {}

  // Advances the copies' pointers of `block.stmts[index]`, a For loop.
  void loop(TirStmt& block, size_t index) {
    loop_ = block.stmts[index];
    b_.set_location(loop_->loc);
    changed_.clear();
    changed_.insert(loop_->var);
    for_each_stmt(loop_->body, [&](TirStmt* s) {
      if (s->var) changed_.insert(s->var);
    });
    std::vector<TirValue*> copies;  // found first: advancing appends to the body
    for_each_copy(loop_->body, [&](TirValue* copy) { copies.push_back(copy); });
    std::vector<TirStmt*> before;
    for (TirValue* copy : copies) {
      TirValue*& pointers = copy->operands[0];
      std::optional<Derivative> d = derivative(pointers);
      if (!d || d->zero()) continue;
      TirVar* advanced = m_.make_var(m_.save(pointer_name(*copy)), pointers->type);
      TirStmt* declare = m_.make_stmt(TirStmtKind::Var, loop_->loc);
      declare->var = advanced;
      declare->value = at_low(pointers);
      before.push_back(declare);
      TirStmt* advance = m_.make_stmt(TirStmtKind::Assign, loop_->loc);
      advance->var = advanced;
      advance->value = b_.binary(TirOp::Add, b_.read(advanced), broadcast(step_times(d->value), pointers->type));
      loop_->body->stmts.push_back(advance);
      pointers = b_.read(advanced);
    }
    block.stmts.insert(block.stmts.begin() + static_cast<std::ptrdiff_t>(index), before.begin(), before.end());
  }

 private:
  // How much a value grows when the loop variable grows by one: a scalar
  // tree of values the loop does not change; `value` null: nothing.
  struct Derivative {
    TirValue* value = nullptr;
    bool zero() const { return value == nullptr; }
  };

  // Calls visit(copy) for the copies of `body`, but not of its nested loops.
  template <class Visit>
  void for_each_copy(TirStmt* s, Visit&& visit) {
    if (!s) return;
    if (s != loop_->body && (s->kind == TirStmtKind::For || s->kind == TirStmtKind::While)) return;
    if (s->value && s->value->op == TirOp::CopyAsync) visit(s->value);
    for_each_copy(s->body, visit);
    for_each_copy(s->else_body, visit);
    for (TirStmt* child : s->stmts) for_each_copy(child, visit);
  }

  // The derivative of v in the loop variable, where v is affine in it and
  // computes nothing else; nullopt where that is not shown.
  std::optional<Derivative> derivative(const TirValue* v) {
    if (!recomputable(v)) return std::nullopt;
    if (!reads_changed(v)) return Derivative{};
    const auto& o = v->operands;
    switch (v->op) {
      case TirOp::Read:
        if (v->var() == loop_->var) return Derivative{one()};
        return std::nullopt;  // something else the loop assigns
      case TirOp::Broadcast:
      case TirOp::BroadcastTo:
      case TirOp::AddAxis:
      case TirOp::ConvertLayout: return derivative(o[0]);
      case TirOp::Neg: {
        auto d = derivative(o[0]);
        if (!d || d->zero()) return d;
        return Derivative{b_.unary(TirOp::Neg, d->value)};
      }
      case TirOp::Add:
      case TirOp::Sub: {
        if (o[0]->type.is_pointer() && o[1]->type.is_pointer()) return std::nullopt;
        auto a = derivative(o[0]), b = derivative(o[1]);
        if (!a || !b || !same_scalar(*a, *b)) return std::nullopt;
        if (b->zero()) return a;
        if (a->zero()) return v->op == TirOp::Add ? b : Derivative{b_.unary(TirOp::Neg, b->value)};
        return Derivative{b_.binary(v->op, a->value, b->value)};
      }
      case TirOp::Mul: {
        // One factor the loop changes, times a scalar it does not: a
        // derivative that is the same for every element.
        auto a = derivative(o[0]), b = derivative(o[1]);
        if (!a || !b || (!a->zero() && !b->zero())) return std::nullopt;
        const Derivative& d = a->zero() ? *b : *a;
        const TirValue* factor = invariant_scalar(a->zero() ? o[0] : o[1]);
        if (!factor || factor->type.scalar != d.value->type.scalar) return std::nullopt;
        return Derivative{is_one(d.value) ? clone_tree(m_, factor) : b_.binary(TirOp::Mul, d.value, clone_tree(m_, factor))};
      }
      default: return std::nullopt;
    }
  }

  // v's scalar where v is a scalar, or a tile of one scalar (a broadcast);
  // null otherwise.
  static const TirValue* invariant_scalar(const TirValue* v) {
    while (v->type.is_tile() && (v->op == TirOp::Broadcast || v->op == TirOp::ConvertLayout)) v = v->operands[0];
    return v->type.is_tile() || v->type.is_pointer() ? nullptr : v;
  }

  static bool same_scalar(const Derivative& a, const Derivative& b) {
    return a.zero() || b.zero() || a.value->type.scalar == b.value->type.scalar;
  }

  bool reads_changed(const TirValue* v) const {
    if (v->op == TirOp::Read && changed_.count(v->var())) return true;
    for (const TirValue* o : v->operands)
      if (o && reads_changed(o)) return true;
    return false;
  }

  // The pointers' name: after the ring the copy fills (`x_stages`: `x_pointers`).
  static std::string pointer_name(const TirValue& copy) {
    const TirValue* stage = copy.operands[3];
    std::string_view ring = stage->op == TirOp::StageAt ? stage->operands[0]->var()->name : "copy";
    if (ring.ends_with("_stages")) ring.remove_suffix(std::string_view("_stages").size());
    return std::string(ring) + "_pointers";
  }

  // v's tree at the loop's first iteration.
  TirValue* at_low(const TirValue* v) {
    return clone_tree(m_, v, [&](const TirValue& node) -> TirValue* {
      return node.op == TirOp::Read && node.var() == loop_->var ? clone_tree(m_, loop_->low) : nullptr;
    });
  }

  // step * d (d without a step).
  TirValue* step_times(TirValue* d) {
    if (!loop_->step) return d;
    TirValue* step = clone_tree(m_, loop_->step);
    return is_one(d) ? step : b_.binary(TirOp::Mul, step, d);
  }

  // The scalar s as a tile of `shape`'s shape and layout.
  TirValue* broadcast(TirValue* s, const TirType& shape) {
    return b_.make(TirOp::Broadcast, s->type.shaped_like(shape), {s});
  }

  TirValue* one() {
    TirValue* c = b_.make(TirOp::Constant, loop_->var->type);
    c->attrs<ConstantAttrs>().int_bits = 1;
    return c;
  }

  static bool is_one(const TirValue* v) {
    if (v->op != TirOp::Constant) return false;
    const auto& c = v->attrs<ConstantAttrs>();
    return c.literal != ConstantAttrs::Literal::Float && c.int_bits == 1;
  }

  TirModule& m_;
  TirBuilder b_;  // leaves at the loop being rewritten
  TirStmt* loop_ = nullptr;
  std::unordered_set<const TirVar*> changed_;  // the loop variable and what the body assigns or declares
};

}  // namespace

void advance_pointers(TirModule& module) {
  Advancer advancer(module);
  for (TirFunction* function : module.functions)
    for_each_loop_last_first(function->body, [&](TirStmt& block, size_t index) { advancer.loop(block, index); });
}

}  // namespace irisc
