// The memory model, checked (language.md 12.1): the mistakes of memory order
// and scope that the checker can see in a function's body, after the checker
// has typed it.
//
// * Remote scope: an atomic, signal or wait through `p @ r` at a scope
//   narrower than `sys`. Ranks are separate GPUs, and only `sys` orders an
//   access with another GPU. A rank that is provably mine (`rank()`, a `let`
//   of it) is exempt: `p @ rank()` is `p`.
// * Publication: a store (or put) into a rank's symmetric heap followed by a
//   flag (a signal or an atomic_store) to the same rank that does not
//   release, with no release in between, is an error: the flag may arrive
//   before the data. The mirror is a warning: a load from a rank's heap after
//   a relaxed wait on a flag of that rank, with no acquire in between.
// * Flag reuse: a flag set to a constant is a warning where the walk sees it
//   reused: a wait in the same function that the constant satisfies (so a
//   second launch of the kernel finds the flag already raised: the host's
//   loop is out of sight, but nothing resets the flag in between), or a loop
//   that sets the same flag to the same value again.
//
// The walk follows one function body in program order, through both
// branches of an `if` (what either leaves pending stays pending) and twice
// through a loop's body (what an iteration leaves pending meets the next).
// A device function's call orders what its body (transitively) orders: its
// releases and acquires end what is pending, and an imported C++ function is
// assumed to do both; the stores and flags inside it are checked in its own
// body. Pointers are followed through arithmetic, casts, added axes and `let`;
// a pointer a device function was passed as `*T` may have been translated by
// its caller, so its rank is unknown and it is not checked.
#include "irisc/builtins.h"
#include "irisc/checker.h"

#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace irisc {
namespace {

std::string_view text_of(llvm::SMRange range) {
  return {range.Start.getPointer(), static_cast<size_t>(range.End.getPointer() - range.Start.getPointer())};
}

// Where an access's pointer points: this rank's memory, the rank after an
// `@`, or a place the walk cannot tell.
struct Target {
  enum class Where : uint8_t { Own, Translated, Unknown };
  Where where = Where::Unknown;
  const Expr* translation = nullptr;  // Translated: the `p @ r`
  const Binding* root = nullptr;      // the parameter the pointer comes from
  bool heap = false;                  // into the symmetric heap

  const Expr* rank() const { return translation->operands[1]; }
};

// An access that has yet to be ordered: a store waiting for a release, a
// relaxed wait waiting for an acquire.
struct Pending {
  const Expr* call;
  Target target;
};

// A flag set to a constant: the signal, atomic_store or put_signal, its
// flag's target and the value.
struct ConstantSet {
  const Expr* call;
  Target target;
  const Expr* value;
};

struct State {
  std::vector<Pending> stores;
  std::vector<Pending> relaxed_waits;

  void join(const State& other) {
    auto add = [](std::vector<Pending>& into, const std::vector<Pending>& from) {
      for (const Pending& p : from)
        if (std::none_of(into.begin(), into.end(), [&](const Pending& q) { return q.call == p.call; }))
          into.push_back(p);
    };
    add(stores, other.stores);
    add(relaxed_waits, other.relaxed_waits);
  }
};

// What a device function's body orders, itself or through its callees.
struct Orders {
  bool releases = false;
  bool acquires = false;
};

class MemoryModelChecker {
 public:
  explicit MemoryModelChecker(Diagnostics& diags) : diags_(diags) {}

  void check_function(const Function& fn) {
    function_ = &fn;
    constant_sets_.clear();
    waits_.clear();
    State state;
    walk(fn.body, state);
    check_waited_constants();
  }

 private:
  // ---- values and ranks

  // A `let` name stands for its value.
  const Expr* resolved(const Expr* e) const {
    while (e->kind == ExprKind::Name && e->binding) {
      auto it = let_values_.find(e->binding);
      if (it == let_values_.end()) break;
      e = it->second;
    }
    return e;
  }

  static bool is_builtin(const Expr* e, BuiltinId id) {
    return e->kind == ExprKind::Call && e->call->builtin && e->call->builtin->id == id;
  }

  // Whether a and b surely have the same value: the same immutable names,
  // literals, operators and rank built-ins. Ranks are short expressions; the
  // comparison gives up (not the same) past kSameValueBudget pairs of nodes,
  // as `let`s that each use the one before twice would make it exponential.
  static constexpr int kSameValueBudget = 4096;
  bool same_value(const Expr* a, const Expr* b) const {
    int budget = kSameValueBudget;
    return same_value(a, b, budget);
  }
  bool same_value(const Expr* a, const Expr* b, int& budget) const {
    a = resolved(a);
    b = resolved(b);
    if (a == b) return true;
    if (--budget < 0) return false;
    if (a->constant && b->constant && a->constant->value && b->constant->value)
      return *a->constant->value == *b->constant->value;
    if (a->kind != b->kind || a->op != b->op) return false;
    switch (a->kind) {
      case ExprKind::Name:
        return a->binding && a->binding == b->binding && a->binding->kind != Binding::Kind::Var;
      case ExprKind::Unary:
      case ExprKind::Binary:
      case ExprKind::AddAxis:
        return a->int_value == b->int_value && std::equal(a->operand_list().begin(), a->operand_list().end(),
                                                          b->operand_list().begin(), b->operand_list().end(),
                                                          [&](const Expr* x, const Expr* y) { return same_value(x, y, budget); });
      case ExprKind::Cast:
        return text_of(a->type_syntax->range) == text_of(b->type_syntax->range) &&
               same_value(a->operands[0], b->operands[0], budget);
      case ExprKind::Call: {
        const BuiltinInfo* builtin = a->call->builtin;
        if (!builtin || builtin != b->call->builtin) return false;
        switch (builtin->id) {
          case BuiltinId::Rank:
          case BuiltinId::WorldSize:
          case BuiltinId::ProgramId:
          case BuiltinId::NumPrograms:
          case BuiltinId::NodeRank:
          case BuiltinId::NodeSize:
          case BuiltinId::NodePeer: break;
          default: return false;
        }
        const auto& x = a->call->resolved_args;
        const auto& y = b->call->resolved_args;
        return std::equal(x.begin(), x.end(), y.begin(), y.end(), [&](const Expr* p, const Expr* q) {
          return p && q ? same_value(p, q, budget) : p == q;
        });
      }
      default: return false;
    }
  }

  bool is_own_rank(const Expr* rank) const { return is_builtin(resolved(rank), BuiltinId::Rank); }

  // A rank that an enclosing `if r != rank()` (or the else of `==`) proves is
  // not mine.
  bool is_other_rank(const Expr* rank) const {
    return std::any_of(other_ranks_.begin(), other_ranks_.end(), [&](const Expr* r) { return same_value(r, rank); });
  }

  Target target_of(const Expr* pointer) const {
    Target t;
    for (const Expr* e = resolved(pointer);; e = resolved(e)) {
      switch (e->kind) {
        case ExprKind::Binary: e = e->operands[0]->type.is_pointer() ? e->operands[0] : e->operands[1]; continue;
        case ExprKind::Cast:
        case ExprKind::AddAxis: e = e->operands[0]; continue;
        case ExprKind::Translate: {
          Target base = target_of(e->operands[0]);
          t.root = base.root;
          t.heap = true;
          t.translation = e;
          t.where = is_own_rank(e->operands[1]) ? Target::Where::Own : Target::Where::Translated;
          return t;
        }
        case ExprKind::Name: {
          const Binding* b = e->binding;
          if (!b || b->kind != Binding::Kind::Param) return t;
          t.root = b;
          t.heap = b->type.sym;
          // A device function's `*T` may have been translated by its caller.
          t.where = function_->is_kernel || b->type.sym ? Target::Where::Own : Target::Where::Unknown;
          return t;
        }
        default: return t;
      }
    }
  }

  bool same_rank(const Target& a, const Target& b) const {
    if (a.where == Target::Where::Own || b.where == Target::Where::Own) return a.where == b.where;
    return a.where == Target::Where::Translated && b.where == Target::Where::Translated &&
           same_value(a.rank(), b.rank());
  }

  // ---- the built-ins' orders and scopes

  static int enum_arg(const Expr* call, ParamKind kind) {
    size_t index = param_of_kind(*call->call->builtin, kind);
    return index < call->call->enum_args.size() ? call->call->enum_args[index] : -1;
  }
  static const Expr* arg_of_kind(const Expr* call, ParamKind kind) {
    return call->call->resolved_args[param_of_kind(*call->call->builtin, kind)];
  }
  static bool releases(MemoryOrder order) { return order == MemoryOrder::Release || order == MemoryOrder::AcqRel; }
  static bool acquires(MemoryOrder order) { return order == MemoryOrder::Acquire || order == MemoryOrder::AcqRel; }
  static std::string_view scope_name(const Expr* call) {
    return enumerators(ParamKind::Scope)[enum_arg(call, ParamKind::Scope)];
  }

  // What a call of a device function orders: its body's releases and
  // acquires, through its own calls; an imported function may do both.
  // Without recursion, as a chain of calls may be as long as the program:
  // the functions `fn` reaches that are not known yet get their own orders
  // and the known callees', then spread them to their callers until nothing
  // changes.
  Orders orders_of(const Function& fn) {
    if (auto known = orders_.find(&fn); known != orders_.end()) return known->second;
    std::unordered_map<const Function*, std::vector<const Function*>> callers;  // of the functions found
    std::vector<const Function*> found = {&fn}, pending = {&fn};
    callers[&fn];
    while (!pending.empty()) {
      const Function* f = pending.back();
      pending.pop_back();
      Orders own{!f->body, !f->body};
      for (const Expr* call : calls_in(*f)) {
        if (const Function* callee = call->call->callee) {
          if (auto it = callers.find(callee); it != callers.end()) {
            it->second.push_back(f);
          } else if (auto known = orders_.find(callee); known != orders_.end()) {
            own.releases |= known->second.releases;
            own.acquires |= known->second.acquires;
          } else {
            callers[callee].push_back(f);
            found.push_back(callee);
            pending.push_back(callee);
          }
        } else if (call->call->builtin->id == BuiltinId::PutSignal) {
          own.releases = true;
        } else if (enum_arg(call, ParamKind::Sem) >= 0) {
          auto order = static_cast<MemoryOrder>(enum_arg(call, ParamKind::Sem));
          own.releases |= releases(order);
          own.acquires |= acquires(order);
        }
      }
      orders_[f] = own;
    }
    for (std::vector<const Function*> changed = found; !changed.empty();) {
      const Orders callee = orders_[changed.back()];
      const std::vector<const Function*>& to = callers[changed.back()];
      changed.pop_back();
      for (const Function* caller : to) {
        Orders& orders = orders_[caller];
        if ((callee.releases && !orders.releases) || (callee.acquires && !orders.acquires)) {
          orders.releases |= callee.releases;
          orders.acquires |= callee.acquires;
          changed.push_back(caller);
        }
      }
    }
    return orders_[&fn];
  }

  // The calls of built-ins and device functions in a function's body.
  static std::vector<const Expr*> calls_in(const Function& fn) {
    std::vector<const Expr*> calls;
    for_each_expr(fn.body, [&](const Expr& e) {
      if (e.call && (e.call->callee || e.call->builtin)) calls.push_back(&e);
    });
    return calls;
  }

  // ---- the walk

  void walk(const Stmt* s, State& state) {
    switch (s->kind) {
      case StmtKind::Let:
      case StmtKind::Var:
        walk(s->value, state);
        if (s->kind == StmtKind::Let) let_values_[s->binding] = s->value;
        break;
      case StmtKind::Assign:
      case StmtKind::ExprStmt:
      case StmtKind::Return:
        if (s->value) walk(s->value, state);
        break;
      case StmtKind::Block:
        for (const Stmt* child : s->stmts) walk(child, state);
        break;
      case StmtKind::If: {
        walk(s->value, state);
        State otherwise = state;
        size_t guards = other_ranks_.size();
        add_other_ranks(s->value, TokenKind::BangEq);
        walk(s->body, state);
        other_ranks_.resize(guards);
        if (s->else_body) {
          add_other_ranks(s->value, TokenKind::EqEq);
          walk(s->else_body, otherwise);
          other_ranks_.resize(guards);
        }
        state.join(otherwise);
        break;
      }
      case StmtKind::For:
      case StmtKind::While:
        for (const Expr* e : {s->low, s->high, s->step})
          if (e) walk(e, state);
        loops_.push_back(s);
        walk_iteration(s, state);
        // The second iteration carries what the first left pending to the
        // top of the body. Inside an enclosing loop's second iteration one is
        // enough: the first found what the loop itself leaves, and walking
        // nested loops twice in each would take 2^depth walks.
        if (!in_second_iteration_) {
          in_second_iteration_ = true;
          walk_iteration(s, state);
          in_second_iteration_ = false;
        }
        loops_.pop_back();
        break;
      case StmtKind::Break:
      case StmtKind::Continue: break;
    }
  }

  void walk_iteration(const Stmt* loop, State& state) {
    State iteration = state;
    if (loop->kind == StmtKind::While) walk(loop->value, iteration);
    walk(loop->body, iteration);
    state.join(iteration);
  }

  // `a != b` (`op` BangEq) or `a == b` (EqEq, for the else branch), alone or
  // among the terms of `&&`, where one side is rank(): the other is not my
  // rank.
  void add_other_ranks(const Expr* cond, TokenKind op) {
    if (cond->kind != ExprKind::Binary) return;
    if (cond->op == TokenKind::AmpAmp && op == TokenKind::BangEq) {
      add_other_ranks(cond->operands[0], op);
      add_other_ranks(cond->operands[1], op);
      return;
    }
    if (cond->op != op) return;
    if (is_own_rank(cond->operands[0])) other_ranks_.push_back(cond->operands[1]);
    if (is_own_rank(cond->operands[1])) other_ranks_.push_back(cond->operands[0]);
  }

  // An expression's calls, in the order they run: arguments first.
  void walk(const Expr* e, State& state) {
    for (const Expr* operand : e->operand_list()) walk(operand, state);
    if (e->kind != ExprKind::Call) return;
    for (const CallArg& arg : e->call->args) walk(arg.value, state);
    if (e->call->callee) {
      Orders orders = orders_of(*e->call->callee);
      if (orders.releases) state.stores.clear();
      if (orders.acquires) state.relaxed_waits.clear();
    } else if (e->call->builtin) {
      check_builtin(e, state);
    }
  }

  void check_builtin(const Expr* call, State& state) {
    const BuiltinId id = call->call->builtin->id;
    if (id == BuiltinId::Store || id == BuiltinId::Put) {
      Target target = target_of(call->call->resolved_args[0]);
      if (target.heap && target.where != Target::Where::Unknown) state.stores.push_back({call, target});
      return;
    }
    if (id == BuiltinId::Load || id == BuiltinId::Get) {
      check_guarded_load(call, target_of(call->call->resolved_args[0]), state);
      return;
    }
    if (id == BuiltinId::PutSignal) {
      const auto& args = call->call->resolved_args;
      check_flag_value(call, args[2], args[3]);
      state.stores.clear();  // the put, then a release signal
      return;
    }
    if (enum_arg(call, ParamKind::Sem) < 0) return;
    auto order = static_cast<MemoryOrder>(enum_arg(call, ParamKind::Sem));
    const bool accesses = id != BuiltinId::Fence;
    Target target = accesses ? target_of(call->call->resolved_args[0]) : Target{};
    if (accesses) check_remote_scope(call, target);
    if (id == BuiltinId::Signal || id == BuiltinId::AtomicStore) {
      check_flag_value(call, call->call->resolved_args[0], call->call->resolved_args[1]);
      if (!releases(order)) check_publication(call, target, state);
    }
    if (id == BuiltinId::WaitUntil) {
      waits_.push_back({call, target});
      if (order == MemoryOrder::Relaxed && target.where != Target::Where::Unknown)
        state.relaxed_waits.push_back({call, target});
    }
    if (releases(order)) state.stores.clear();
    if (acquires(order)) state.relaxed_waits.clear();
  }

  // ---- the checks

  bool first_report(DiagKind kind, const Expr* at) { return reported_.insert({kind, at}).second; }

  void check_remote_scope(const Expr* call, const Target& target) {
    if (target.where != Target::Where::Translated || enum_arg(call, ParamKind::Scope) < 0 ||
        scope_name(call) == "sys" || !first_report(DiagKind::RemoteScope, call))
      return;
    diags_.error(DiagKind::RemoteScope, arg_of_kind(call, ParamKind::Scope)->range, call->name, scope_name(call));
    std::string_view rank = text_of(target.rank()->range);
    if (is_other_rank(target.rank()))
      diags_.note(DiagKind::RemoteScopeFix, target.translation->range, rank, "another GPU", "");
    else
      diags_.note(DiagKind::RemoteScopeFix, target.translation->range, rank, "which may be this rank or another",
                  fmt::format(" (where '{}' is always this rank, drop the '@')", rank));
  }

  void check_publication(const Expr* flag, const Target& target, State& state) {
    if (target.where == Target::Where::Unknown) return;
    // The latest such store, the one nearest the flag.
    auto store = std::find_if(state.stores.rbegin(), state.stores.rend(),
                              [&](const Pending& p) { return same_rank(p.target, target); });
    if (store == state.stores.rend() || !first_report(DiagKind::UnorderedPublication, flag)) return;
    diags_.error(DiagKind::UnorderedPublication, arg_of_kind(flag, ParamKind::Sem)->range, flag->name,
                 enumerators(ParamKind::Sem)[enum_arg(flag, ParamKind::Sem)]);
    diags_.note(DiagKind::PublishWithRelease, store->call->range, scope_name(flag));
  }

  void check_guarded_load(const Expr* load, const Target& target, State& state) {
    if (!target.heap || target.where == Target::Where::Unknown) return;
    auto wait = std::find_if(state.relaxed_waits.begin(), state.relaxed_waits.end(),
                             [&](const Pending& p) { return same_rank(p.target, target); });
    if (wait == state.relaxed_waits.end()) return;
    const Expr* wait_call = wait->call;
    state.relaxed_waits.erase(wait);  // one warning per wait
    if (!first_report(DiagKind::UnorderedFlagRead, wait_call)) return;
    diags_.warning(DiagKind::UnorderedFlagRead, load->range, load->name);
    diags_.note(DiagKind::AcquireAfterWait, wait_call->range, scope_name(wait_call));
  }

  // A constant flag value: a wait in the same function that it satisfies is
  // matched once the walk is over; a loop that sets the same flag again is
  // reported here.
  void check_flag_value(const Expr* flag, const Expr* pointer, const Expr* value) {
    const bool sets = flag->call->builtin->id == BuiltinId::AtomicStore ||
                      enum_arg(flag, ParamKind::SignalOp) != static_cast<int>(SignalOp::Add);
    if (!sets || !value->constant || !value->constant->value) return;
    constant_sets_.push_back({flag, target_of(pointer), value});
    const Stmt* loop = reusing_loop(pointer);
    if (!loop || !first_report(DiagKind::ConstantFlagReuse, flag)) return;
    diags_.warning(DiagKind::ConstantFlagReuse, value->range, flag->name, *value->constant->value,
                   "every iteration of the loop sets the same flag to the same value, so a waiter cannot tell "
                   "the iterations apart");
    diags_.note(DiagKind::UseEpoch, loop->range, "this loop sets it again", "iteration and every launch",
                "the launch's 'epoch' of begin_epoch (iris/ccl.iris) combined with the iteration");
  }

  // The outermost loop around the walk's position whose iterations all set
  // the flag `pointer`: a `for` whose variable the pointer does not use, or a
  // `while`; none where the pointer depends on a `var`.
  const Stmt* reusing_loop(const Expr* pointer) const {
    std::vector<const Binding*> names;
    if (!collect_names(pointer, names)) return nullptr;
    for (const Stmt* loop : loops_)
      if (loop->kind == StmtKind::While || std::find(names.begin(), names.end(), loop->binding) == names.end())
        return loop;
    return nullptr;
  }

  // The names `e` depends on, through `let`s; false when one is a `var`.
  // Each node once, without recursion: a `let` may use the one before it
  // twice, a million times over.
  bool collect_names(const Expr* e, std::vector<const Binding*>& names) const {
    std::unordered_set<const Expr*> seen;
    std::vector<const Expr*> exprs = {e};
    while (!exprs.empty()) {
      const Expr* next = resolved(exprs.back());
      exprs.pop_back();
      if (!seen.insert(next).second) continue;
      if (next->kind == ExprKind::Name && next->binding) {
        if (next->binding->kind == Binding::Kind::Var) return false;
        names.push_back(next->binding);
      }
      for (const Expr* operand : next->operand_list()) exprs.push_back(operand);
      if (next->kind == ExprKind::Call)
        for (const CallArg& arg : next->call->args) exprs.push_back(arg.value);
    }
    return true;
  }

  static bool compares_true(int cmp, int64_t left, int64_t right) {
    switch (cmp) {
      case 0: return left == right;
      case 1: return left != right;
      case 2: return left < right;
      case 3: return left <= right;
      case 4: return left > right;
      case 5: return left >= right;
      default: return false;
    }
  }

  // A flag of the function set to a constant that a wait of the function on
  // a flag of the same parameter accepts. Flags start at zero: a wait that
  // accepts 0 passes at once in the first launch too (a lock's "is it free"),
  // so it is no sign of a flag that needs a new value at every launch.
  void check_waited_constants() {
    for (const ConstantSet& set : constant_sets_) {
      const Expr* value = set.value;
      for (const Pending& wait : waits_) {
        const Expr* expected = wait.call->call->resolved_args[2];
        if (!set.target.root || set.target.root != wait.target.root || !expected->constant ||
            !expected->constant->value)
          continue;
        const int cmp = enum_arg(wait.call, ParamKind::Cmp);
        if (!compares_true(cmp, *value->constant->value, *expected->constant->value) ||
            compares_true(cmp, 0, *expected->constant->value))
          continue;
        if (!first_report(DiagKind::ConstantFlagReuse, set.call)) break;
        diags_.warning(DiagKind::ConstantFlagReuse, value->range, set.call->name, *value->constant->value,
                       "once the kernel has run, the flag holds it, and the wait on it passes at once in the next "
                       "launch");
        diags_.note(DiagKind::UseEpoch, wait.call->range, "this wait accepts the value an earlier launch left",
                    "launch", "'let epoch = begin_epoch(sync);' of iris/ccl.iris");
        break;
      }
    }
  }

  Diagnostics& diags_;
  const Function* function_ = nullptr;
  std::unordered_map<const Binding*, const Expr*> let_values_;
  std::unordered_map<const Function*, Orders> orders_;
  std::vector<const Expr*> other_ranks_;  // ranks proven not mine around the walk's position
  std::vector<const Stmt*> loops_;        // the loops around the walk's position, outermost first
  bool in_second_iteration_ = false;      // of a loop around the walk's position
  std::vector<ConstantSet> constant_sets_;  // of the function
  std::vector<Pending> waits_;            // of the function
  std::set<std::pair<DiagKind, const Expr*>> reported_;
};

}  // namespace

void check_memory_model(const Module& module, Diagnostics& diags) {
  MemoryModelChecker checker(diags);
  for (const Item& item : module.items)
    if (item.kind == Item::Kind::Function && item.function->body) checker.check_function(*item.function);
}

}  // namespace irisc
