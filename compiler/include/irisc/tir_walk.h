// Walks over a function's TIR, for the passes: every statement in order, and
// every value slot, operands before the value that uses them.
#pragma once

#include "irisc/tir.h"

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

}  // namespace irisc
