// The checker's locality rules for multinode code (language.md 9.1): which
// ranks are provably in my node's team (Near) and which pointers loads and
// stores reach. A rank is Near when it is rank(), node_peer(k), an immutable
// binding of a Near rank, or an immutable name r inside `if near(r) ...` (or
// `near(r) && ...`); every other rank is Any. `p @ r` is Any where r is, and
// pointer arithmetic, casts, added axes, let bindings and the built-ins that
// pass pointers through (where, trans, reshape) keep their pointer's
// locality. What the rules cannot see through is Any: a pointer that a device
// function returns. An Any pointer never reaches a parameter (a call with one
// is refused), so a device function's pointer parameters are Near. Node-local
// code has no Any: there every rank is assumed near.
#include "checker_impl.h"

namespace irisc {

Locality Checker::locality_of(const Expr* e) const {
  if (e->type.is_pointer()) {
    switch (e->kind) {
      case ExprKind::Name: return e->binding ? e->binding->locality : Locality::Near;
      case ExprKind::Translate:
        return in_multinode() && rank_locality(e->operands[1]) == Locality::Any ? Locality::Any : Locality::Near;
      case ExprKind::Binary: {
        const Expr* pointer = e->operands[0]->type.is_pointer() ? e->operands[0] : e->operands[1];
        return pointer->locality;
      }
      case ExprKind::Cast:
      case ExprKind::AddAxis: return e->operands[0]->locality;
      case ExprKind::Call: {
        if (!e->call->builtin) {  // a device function's result: what it returns is not tracked
          if (e->type.sym) return Locality::Heap;
          return in_multinode() ? Locality::Any : Locality::Near;
        }
        Locality joined = Locality::Local;
        for (const Expr* arg : e->call->resolved_args)
          if (arg && arg->type.is_pointer()) joined = std::max(joined, arg->locality);
        return joined;
      }
      default: return Locality::Near;
    }
  }
  return rank_locality(e);
}

Locality Checker::rank_locality(const Expr* rank) const {
  if (rank->kind == ExprKind::Call && rank->call->builtin &&
      (rank->call->builtin->id == BuiltinId::Rank || rank->call->builtin->id == BuiltinId::NodePeer))
    return Locality::Near;
  if (rank->kind != ExprKind::Name || !rank->binding) return Locality::Any;
  if (std::find(near_ranks_.begin(), near_ranks_.end(), rank->binding) != near_ranks_.end()) return Locality::Near;
  return rank->binding->locality;
}

// A kernel's parameters are the caller's own memory; a device function's
// pointer may have been translated by its caller, to a near rank only.
Locality Checker::param_locality(const Function& fn, const Type& type) {
  if (!type.is_pointer()) return Locality::Any;
  if (type.sym) return Locality::Heap;
  return fn.is_kernel ? Locality::Local : Locality::Near;
}

// A `let` holds its value's locality. A `var` may be assigned again, so it is
// a rank no one proved near, and a pointer at best Near (assignments must not
// make it Any: check_assign_locality).
Locality Checker::binding_locality(const Stmt* binding) {
  const Expr* value = binding->value;
  if (binding->kind == StmtKind::Let) return value->locality;
  return value->type.is_pointer() ? std::max(value->locality, Locality::Near) : Locality::Any;
}

// `if near(r)`, or a condition of `&&`s with near(r) among them: r is Near in
// the then-branch, where r is immutable. A rank that is not such a name is
// not proven near by the condition, which in multinode code is an error.
void Checker::guard_near_ranks(const Expr* cond) {
  if (cond->kind == ExprKind::Binary && cond->op == TokenKind::AmpAmp) {
    guard_near_ranks(cond->operands[0]);
    guard_near_ranks(cond->operands[1]);
    return;
  }
  if (cond->kind != ExprKind::Call || !cond->call->builtin || cond->call->builtin->id != BuiltinId::Near ||
      cond->type.is_error() || !in_multinode())
    return;
  const Expr* rank = cond->call->resolved_args[0];
  const Binding* b = rank->kind == ExprKind::Name ? rank->binding : nullptr;
  if (b && (b->kind == Binding::Kind::Let || b->kind == Binding::Kind::Param || b->kind == Binding::Kind::LoopVar)) {
    near_ranks_.push_back(b);
    return;
  }
  diags_.error(DiagKind::NearProvesNothing, rank->range);
}

namespace {

// The name of the rank an Any pointer is translated to, where the pointer
// expression shows one ("r" where it does not: the guard needs a name).
std::string_view any_rank_name(const Expr* pointer) {
  while (pointer->kind == ExprKind::Binary || pointer->kind == ExprKind::Cast || pointer->kind == ExprKind::AddAxis)
    pointer = pointer->operands[0]->type.is_pointer() ? pointer->operands[0] : pointer->operands[1];
  const Expr* rank = pointer->kind == ExprKind::Translate ? pointer->operands[1] : nullptr;
  return rank && rank->kind == ExprKind::Name ? rank->name : "r";
}

}  // namespace

// Accesses through an Any pointer: loads, stores and tile atomics need a
// rank that loads and stores reach, and a wait spins on memory of my own;
// get, put, put_signal, signal and the scalar atomics go through the
// transport. put, get and put_signal through plain memory are a mistake.
bool Checker::check_access_locality(const Expr* call) {
  const BuiltinId id = call->call->builtin->id;
  const Expr* pointer = call->call->resolved_args[0];
  const bool remote_form = id == BuiltinId::Get || id == BuiltinId::Put || id == BuiltinId::PutSignal;
  if (remote_form && pointer->locality == Locality::Local) {
    diags_.error(DiagKind::PutGetLocalPointer, pointer->range, call->name, id == BuiltinId::Get ? "load" : "store");
    note_pointer_origin(pointer);
    return false;
  }
  if (pointer->locality != Locality::Any) return true;
  if (id == BuiltinId::WaitUntil) {
    diags_.error(DiagKind::AnyRankWait, pointer->range);
    diags_.note(DiagKind::WaitOnOwnFlag, call->range);
    return false;
  }
  const bool reaches_any_rank = remote_form || id == BuiltinId::Signal || (is_atomic(id) && !pointer->type.is_tile());
  if (reaches_any_rank) return true;
  diags_.error(DiagKind::AnyRankAccess, pointer->range, call->name);
  std::string_view fix = id == BuiltinId::Load    ? "use 'get', which reaches any rank"
                         : id == BuiltinId::Store ? "use 'put', which reaches any rank"
                                                  : "make it a scalar atomic, which reaches any rank";
  diags_.note(DiagKind::AnyRankFixes, call->range, any_rank_name(pointer), fix);
  note_pointer_origin(pointer);
  return false;
}

// A parameter is never Any (a device function's loads through it must be
// right), so an Any pointer cannot be an argument.
void Checker::check_argument_locality(const Expr* call) {
  for (const Expr* arg : call->call->resolved_args)
    if (arg && arg->type.is_pointer() && arg->locality == Locality::Any)
      diags_.error(DiagKind::AnyPointerEscapes, arg->range,
                   fmt::format("passed to '{}': pass the 'sym' pointer and the rank, and translate there", call->name));
}

void Checker::check_assign_locality(const Stmt* assign, const Binding& target) {
  if (target.type.is_pointer() && target.locality != Locality::Any && assign->value->locality == Locality::Any)
    diags_.error(DiagKind::AnyPointerEscapes, assign->value->range,
                 fmt::format("assigned to '{}', which holds pointers that loads and stores reach", target.name));
}

// A node-local device function assumes every rank near, so a multinode
// function may call it only where it translates no pointer, itself or
// through the node-local functions it calls.
void Checker::check_node_local_callees() {
  for (const auto& [caller, call] : device_calls_) {
    const Function& callee = *call->call->callee;
    if (!caller->multinode || callee.multinode || !translates(callee)) continue;
    diags_.error(DiagKind::NodeLocalCallee, call->call->name_range, caller->name, callee.name);
    diags_.note(DiagKind::MarkMultinode, callee.name_range, callee.name);
  }
}

bool Checker::translates(const Function& fn) {
  if (fn.multinode || !fn.body) return false;
  if (auto known = translates_.find(&fn); known != translates_.end()) return known->second;
  translates_[&fn] = false;  // a cycle of calls adds nothing
  bool found = false;
  for_each_expr(fn.body, [&](const Expr& e) {
    found = found || e.kind == ExprKind::Translate || (e.call && e.call->callee && translates(*e.call->callee));
  });
  translates_[&fn] = found;
  return found;
}

}  // namespace irisc
