// Walks over a function's TIR, for the passes: every statement in order, and
// every value slot, operands before the value that uses them; and what the
// passes that move or copy values share: whether a tree may be evaluated
// again, and copying one.
#pragma once

#include "irisc/tir.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace irisc {

// Calls visit(stmt) for `stmt` and every statement nested in it, in order.
template <class Visit>
void for_each_stmt(TirStmt* stmt, Visit&& visit) {
  if (!stmt) return;
  visit(stmt);
  for_each_stmt(stmt->body, visit);
  for_each_stmt(stmt->else_body, visit);
  for (TirStmt* s : stmt->stmts) for_each_stmt(s, visit);
}

// Calls visit(block, index) for every For statement block.stmts[index] under
// `stmt`, the last first (inner loops before the loops around them), so that
// a visit may insert statements before its loop.
template <class Visit>
void for_each_loop_last_first(TirStmt* stmt, Visit&& visit) {
  std::vector<std::pair<TirStmt*, size_t>> loops;  // found first: visits insert statements
  for_each_stmt(stmt, [&](TirStmt* s) {
    if (s->kind != TirStmtKind::Block) return;
    for (size_t i = 0; i < s->stmts.size(); ++i)
      if (s->stmts[i]->kind == TirStmtKind::For) loops.emplace_back(s, i);
  });
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) visit(*it->first, it->second);
}

// Replaces every value under `slot` by rewrite(value), operands first; rewrite
// returns the value itself to keep it.
template <class Rewrite>
void rewrite_value(TirValue*& slot, Rewrite&& rewrite) {
  if (!slot) return;
  for (TirValue*& operand : slot->operands) rewrite_value(operand, rewrite);
  slot = rewrite(slot);
}

// rewrite_value over every value of `function`.
template <class Rewrite>
void rewrite_values(TirFunction& function, Rewrite&& rewrite) {
  for_each_stmt(function.body, [&](TirStmt* s) {
    for (TirValue** slot : {&s->value, &s->low, &s->high, &s->step}) rewrite_value(*slot, rewrite);
  });
}

// Calls visit(value) for every value of `function`, operands first.
template <class Visit>
void for_each_value(TirFunction& function, Visit&& visit) {
  rewrite_values(function, [&](TirValue* v) {
    visit(v);
    return v;
  });
}

// Whether v's tree may be evaluated again, elsewhere, with the same result
// and no effect: every operation Recomputable (tir_ops.def: no memory access,
// synchronisation, call, dot or reduction; a null slot is), and also(node)
// holds for every node.
template <class Also>
bool recomputable(const TirValue* v, Also&& also) {
  if (!v) return true;
  if (!tir_op_info(v->op).has(tir_trait::Recomputable) || !also(*v)) return false;
  for (const TirValue* o : v->operands)
    if (!recomputable(o, also)) return false;
  return true;
}
inline bool recomputable(const TirValue* v) {
  return recomputable(v, [](const TirValue&) { return true; });
}

// A copy of v's tree in `module`; where substitute(node) returns a value, that
// value stands for the node's copy (the loop variable advanced, a let inlined).
template <class Substitute>
TirValue* clone_tree(TirModule& module, const TirValue* v, Substitute&& substitute) {
  if (!v) return nullptr;
  if (TirValue* replaced = substitute(*v)) return replaced;
  TirValue* c = module.make_value(v->op, v->type, v->loc);
  *c = *v;
  for (TirValue*& o : c->operands) o = clone_tree(module, o, substitute);
  return c;
}
inline TirValue* clone_tree(TirModule& module, const TirValue* v) {
  return clone_tree(module, v, [](const TirValue&) -> TirValue* { return nullptr; });
}

// The functions of `functions` that has(f) holds of, and every function that
// calls one of them, directly or not: found by walking calls backwards with a
// list of work (a recursive walk down the calls overflowed the stack on a
// cycle of 30,000 functions).
template <class Has>
std::unordered_set<const TirFunction*> with_callers(const std::vector<TirFunction*>& functions, Has&& has) {
  std::unordered_map<const TirFunction*, std::vector<const TirFunction*>> callers;
  std::vector<const TirFunction*> work;
  for (TirFunction* f : functions) {
    for_each_value(*f, [&](const TirValue* v) {
      if (v->op == TirOp::CallDevice) callers[v->attrs<CallAttrs>().callee].push_back(f);
    });
    if (has(*f)) work.push_back(f);
  }
  std::unordered_set<const TirFunction*> with(work.begin(), work.end());
  while (!work.empty()) {
    const TirFunction* f = work.back();
    work.pop_back();
    for (const TirFunction* caller : callers[f])
      if (with.insert(caller).second) work.push_back(caller);
  }
  return with;
}

}  // namespace irisc
