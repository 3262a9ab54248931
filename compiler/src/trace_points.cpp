// What a traced build records (see trace_points.h).
#include "irisc/trace_points.h"

#include "irisc/emit.h"
#include "irisc/tir_walk.h"

namespace irisc {
namespace {

// Calls visit(value) for every value of statement s and the statements in it.
template <class Visit>
void for_each_value_in(const TirStmt* s, Visit&& visit) {
  for_each_stmt(const_cast<TirStmt*>(s), [&](TirStmt* t) {
    for (TirValue** slot : {&t->value, &t->low, &t->high, &t->step}) {
      rewrite_value(*slot, [&](TirValue* v) {
        visit(*v);
        return v;
      });
    }
  });
}

// Whether a value of s, outside the loops nested in it, is a dot.
bool holds_dot_outside_loops(const TirStmt* s) {
  if (!s) return false;
  if (s->kind != TirStmtKind::For) {
    bool found = false;
    for (const TirValue* v : {s->value, s->low, s->high, s->step}) {
      rewrite_value(const_cast<TirValue*&>(v), [&](TirValue* x) {
        found |= x->op == TirOp::Dot;
        return x;
      });
    }
    if (found) return true;
  }
  for (const TirStmt* t : s->stmts)
    if (t->kind != TirStmtKind::For && holds_dot_outside_loops(t)) return true;
  if (s->kind != TirStmtKind::For && holds_dot_outside_loops(s->body)) return true;
  return holds_dot_outside_loops(s->else_body);
}

}  // namespace

const TirValue* traced_operation(const TirStmt& s) {
  if (s.kind != TirStmtKind::Eval && s.kind != TirStmtKind::Let && s.kind != TirStmtKind::Var) return nullptr;
  const TirValue* v = s.value;
  if (!v) return nullptr;
  const TirOpInfo& info = tir_op_info(v->op);
  if (info.has(tir_trait::Traced)) return v;
  if (info.has(tir_trait::TracedWhenRemote) && memory_route(*v) != MemoryRoute::Own) return v;
  return nullptr;
}

bool is_dot_loop(const TirStmt& s) { return s.kind == TirStmtKind::For && holds_dot_outside_loops(s.body); }

DotFunctions::DotFunctions(const TirModule& module) {
  // Until nothing changes: a function that calls one that runs a dot runs one.
  for (bool changed = true; changed;) {
    changed = false;
    for (const TirFunction* f : module.functions) {
      if (functions_.contains(f)) continue;
      bool runs = false;
      for_each_value_in(f->body, [&](const TirValue& v) {
        runs |= v.op == TirOp::Dot ||
                (v.op == TirOp::CallDevice && functions_.contains(v.attrs<CallAttrs>().callee));
      });
      if (runs) changed = functions_.insert(f).second;
    }
  }
}

bool DotFunctions::computes_dot(const TirStmt& s) const {
  bool computes = false;
  for_each_value_in(&s, [&](const TirValue& v) {
    computes |= v.op == TirOp::Dot || (v.op == TirOp::CallDevice && functions_.contains(v.attrs<CallAttrs>().callee));
  });
  return computes;
}

bool writes_memory(const std::vector<TirStmt*>& rest) {
  bool writes = false;
  for (const TirStmt* s : rest) {
    for_each_value_in(s, [&](const TirValue& v) {
      writes |= tir_op_info(v.op).has(tir_trait::WritesMemory) || v.op == TirOp::CallDevice;
    });
  }
  return writes;
}

}  // namespace irisc
