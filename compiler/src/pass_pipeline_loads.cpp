// Load pipelining: in a K loop that only loads tiles and accumulates their
// dot product, the loads of the next iteration are issued before this
// iteration's dot, so that their latency hides behind its arithmetic (the
// registers of one iteration ahead: Triton's and CUTLASS's software
// pipelining with two stages):
//   for k in lo .. hi step s {             var a_next = zeros(...);
//       let ks = k + arange(BK);            if lo < hi { a_next = load(P(lo)); }
//       let a = load(P(k));        ->      for k in lo .. hi step s {
//       acc = dot(a, b, acc);                  let a = a_next;
//   }                                          if k + s < hi { a_next = load(P(k + s)); }
//                                              acc = dot(a, b, acc);
//                                          }
// P(k + s) is the load's tree with the loop variable advanced and the body's
// `let`s it reads inlined. A loop qualifies only when its body is lets, then
// dot accumulations, and nothing in it but its loads touches memory (no stores, atomics, waits or calls: a wait may be
// what makes the next tile ready) and its bounds and step are recomputable, so that
// the loads may move and the bounds may be evaluated again.
#include "irisc/passes.h"
#include "irisc/tir_walk.h"

#include <unordered_map>

namespace irisc {
namespace {

// A loop body's value that only loads: recomputable, or a load of
// recomputable pointers, mask and `other`.
bool only_loads(const TirValue* v) {
  if (!v) return true;
  if (v->op == TirOp::Load) {
    for (const TirValue* o : v->operands)
      if (!recomputable(o)) return false;
    return true;
  }
  return recomputable(v);
}

class Pipeliner {
 public:
  explicit Pipeliner(TirModule& module) : m_(module) {}

  // Pipelines `loop` (statement `index` of `block`) if it qualifies.
  void loop(TirStmt& block, size_t index) {
    TirStmt* loop = block.stmts[index];
    if (!qualifies(*loop)) return;
    loop_ = loop;
    lets_.clear();
    std::vector<TirStmt*> prologue_assigns, prefetch_assigns;
    std::vector<TirStmt*> declarations, copies;
    TirStmt* body = loop->body;
    size_t first_dot = body->stmts.size();
    for (size_t i = 0; i < body->stmts.size(); ++i) {
      TirStmt* s = body->stmts[i];
      if (s->kind == TirStmtKind::Let) {
        lets_[s->var] = s->value;
        continue;
      }
      first_dot = std::min(first_dot, i);
      for (size_t operand = 0; operand < 2; ++operand) {
        TirValue*& slot = s->value->operands[operand];
        TirValue* load = slot->op == TirOp::Read && lets_.count(slot->var) ? lets_.at(slot->var) : slot;
        if (load->op != TirOp::Load) continue;
        TirVar* next = m_.make_var(m_.save(std::string(name_of(slot)) + "_next"), load->type);
        TirStmt* declare = m_.make_stmt(TirStmtKind::Var, loop->loc);
        declare->var = next;
        declare->value = m_.make_value(TirOp::Zeros, load->type, loop->loc);
        declarations.push_back(declare);
        prologue_assigns.push_back(assign(next, clone(load, Advance::ToLow)));
        prefetch_assigns.push_back(assign(next, clone(load, Advance::ByStep)));
        // The dot now reads the tile loaded one iteration earlier, copied
        // (by its let, or a new one) before the next one is loaded.
        TirValue* read = m_.make_value(TirOp::Read, next->type, load->loc);
        read->var = next;
        if (load != slot) {
          replace_let_value(*body, slot->var, read);
          continue;
        }
        TirStmt* copy = m_.make_stmt(TirStmtKind::Let, load->loc);
        copy->var = m_.make_var("tile", load->type);
        copy->value = read;
        copy->keeps_value_type = true;
        copies.push_back(copy);
        slot = m_.make_value(TirOp::Read, load->type, load->loc);
        slot->var = copy->var;
      }
    }
    if (prefetch_assigns.empty()) return;
    TirValue* runs = compare(clone(loop->low, Advance::None), clone(loop->high, Advance::None));
    TirValue* more = compare(advanced_var(), clone(loop->high, Advance::None));
    copies.push_back(guarded(more, prefetch_assigns));
    body->stmts.insert(body->stmts.begin() + first_dot, copies.begin(), copies.end());
    std::vector<TirStmt*> before = declarations;
    before.push_back(guarded(runs, prologue_assigns));
    block.stmts.insert(block.stmts.begin() + index, before.begin(), before.end());
  }

 private:
  enum class Advance { None, ToLow, ByStep };

  bool qualifies(const TirStmt& loop) const {
    if (loop.kind != TirStmtKind::For || !recomputable(loop.low) || !recomputable(loop.high) ||
        !recomputable(loop.step))
      return false;
    bool dots = false;
    for (const TirStmt* s : loop.body->stmts) {
      // Lets first, then dots: the next tiles load between the two.
      if (s->kind == TirStmtKind::Let && only_loads(s->value) && !dots) continue;
      bool accumulates = s->kind == TirStmtKind::Assign && s->value->op == TirOp::Dot &&
                         only_loads(s->value->operands[0]) && only_loads(s->value->operands[1]) &&
                         recomputable(s->value->operands[2]);
      if (!accumulates) return false;
      dots = true;
    }
    return dots;
  }

  static std::string_view name_of(const TirValue* operand) {
    return operand->op == TirOp::Read ? operand->var->name : std::string_view("tile");
  }

  static void replace_let_value(TirStmt& body, const TirVar* var, TirValue* value) {
    for (TirStmt* s : body.stmts)
      if (s->kind == TirStmtKind::Let && s->var == var) s->value = value;
  }

  TirStmt* assign(TirVar* var, TirValue* value) {
    TirStmt* s = m_.make_stmt(TirStmtKind::Assign, value->loc);
    s->var = var;
    s->value = value;
    return s;
  }

  TirStmt* guarded(TirValue* condition, const std::vector<TirStmt*>& stmts) {
    TirStmt* then = m_.make_stmt(TirStmtKind::Block, condition->loc);
    then->stmts = stmts;
    TirStmt* s = m_.make_stmt(TirStmtKind::If, condition->loc);
    s->value = condition;
    s->body = then;
    return s;
  }

  TirValue* compare(TirValue* a, TirValue* b) {
    TirType boolean = a->type;
    boolean.scalar = ScalarKind::Bool;
    TirValue* lt = m_.make_value(TirOp::Lt, boolean, a->loc);
    lt->operands = {a, b};
    return lt;
  }

  // k + step (k + 1 without a step).
  TirValue* advanced_var() {
    TirValue* k = m_.make_value(TirOp::Read, loop_->var->type, loop_->loc);
    k->var = loop_->var;
    TirValue* step = loop_->step ? clone(loop_->step, Advance::None) : nullptr;
    if (!step) {
      step = m_.make_value(TirOp::Constant, loop_->var->type, loop_->loc);
      step->int_bits = 1;
    }
    TirValue* sum = m_.make_value(TirOp::Add, loop_->var->type, loop_->loc);
    sum->operands = {k, step};
    return sum;
  }

  // A copy of v's tree, the body's lets inlined and the loop variable
  // replaced as `advance` says.
  TirValue* clone(const TirValue* v, Advance advance) {
    return clone_tree(m_, v, [&](const TirValue& node) -> TirValue* {
      if (node.op != TirOp::Read) return nullptr;
      if (node.var == loop_->var && advance != Advance::None)
        return advance == Advance::ToLow ? clone(loop_->low, Advance::None) : advanced_var();
      return lets_.count(node.var) ? clone(lets_.at(node.var), advance) : nullptr;
    });
  }

  TirModule& m_;
  const TirStmt* loop_ = nullptr;
  std::unordered_map<const TirVar*, TirValue*> lets_;  // the loop body's lets, by variable
};

}  // namespace

void pipeline_loads(TirModule& module) {
  Pipeliner pipeliner(module);
  for (TirFunction* function : module.functions) {
    std::vector<std::pair<TirStmt*, size_t>> loops;  // (block, index), found first: pipelining inserts statements
    for_each_stmt(function->body, [&](TirStmt* s) {
      if (s->kind != TirStmtKind::Block) return;
      for (size_t i = 0; i < s->stmts.size(); ++i)
        if (s->stmts[i]->kind == TirStmtKind::For) loops.emplace_back(s, i);
    });
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) pipeliner.loop(*it->first, it->second);
  }
}

}  // namespace irisc
