// The memory model, checked (language.md 12.1): the mistakes of memory order
// and scope that the checker can see in a function's body, after the checker
// has typed it.
//
// * Remote scope: an atomic, signal or wait through `p @ r` at a scope
//   narrower than `sys`. Ranks are separate GPUs, and only `sys` orders an
//   access with another GPU. A rank that is provably mine (`rank()`, a `let`
//   of it) is exempt: `p @ rank()` is `p`.
//
// The walk follows one function body in program order. Pointers are followed
// through arithmetic, casts, added axes and `let`; a pointer a device function
// was passed as `*T` may have been translated by its caller, so its rank is
// unknown and it is not checked.
#include "irisc/builtins.h"
#include "irisc/checker.h"

#include <unordered_map>
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

  const Expr* rank() const { return translation->operands[1]; }
};

class MemoryModelChecker {
 public:
  explicit MemoryModelChecker(Diagnostics& diags) : diags_(diags) {}

  void check_function(const Function& fn) { walk(fn.body); }

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
  // literals, operators and rank built-ins.
  bool same_value(const Expr* a, const Expr* b) const {
    a = resolved(a);
    b = resolved(b);
    if (a == b) return true;
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
                                                          [&](const Expr* x, const Expr* y) { return same_value(x, y); });
      case ExprKind::Cast:
        return text_of(a->type_syntax->range) == text_of(b->type_syntax->range) &&
               same_value(a->operands[0], b->operands[0]);
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
          return p && q ? same_value(p, q) : p == q;
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
        case ExprKind::Translate:
          t.translation = e;
          t.where = is_own_rank(e->operands[1]) ? Target::Where::Own : Target::Where::Translated;
          return t;
        default: return t;  // this rank's memory, or a pointer the walk does not follow
      }
    }
  }

  // ---- the built-ins' scopes

  static int enum_arg(const Expr* call, ParamKind kind) {
    size_t index = param_of_kind(*call->call->builtin, kind);
    return index < call->call->enum_args.size() ? call->call->enum_args[index] : -1;
  }
  static const Expr* arg_of_kind(const Expr* call, ParamKind kind) {
    return call->call->resolved_args[param_of_kind(*call->call->builtin, kind)];
  }
  static std::string_view scope_name(const Expr* call) {
    return enumerators(ParamKind::Scope)[enum_arg(call, ParamKind::Scope)];
  }

  // ---- the walk

  void walk(const Stmt* s) {
    switch (s->kind) {
      case StmtKind::Let:
      case StmtKind::Var:
        walk(s->value);
        if (s->kind == StmtKind::Let) let_values_[s->binding] = s->value;
        break;
      case StmtKind::Assign:
      case StmtKind::ExprStmt:
      case StmtKind::Return:
        if (s->value) walk(s->value);
        break;
      case StmtKind::Block:
        for (const Stmt* child : s->stmts) walk(child);
        break;
      case StmtKind::If: {
        walk(s->value);
        size_t guards = other_ranks_.size();
        add_other_ranks(s->value, TokenKind::BangEq);
        walk(s->body);
        other_ranks_.resize(guards);
        if (s->else_body) {
          add_other_ranks(s->value, TokenKind::EqEq);
          walk(s->else_body);
          other_ranks_.resize(guards);
        }
        break;
      }
      case StmtKind::For:
      case StmtKind::While:
        for (const Expr* e : {s->low, s->high, s->step, s->value})
          if (e) walk(e);
        walk(s->body);
        break;
      case StmtKind::Break:
      case StmtKind::Continue: break;
    }
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
  void walk(const Expr* e) {
    for (const Expr* operand : e->operand_list()) walk(operand);
    if (e->kind != ExprKind::Call) return;
    for (const CallArg& arg : e->call->args) walk(arg.value);
    if (!e->call->builtin) return;
    const BuiltinId id = e->call->builtin->id;
    if (is_atomic(id) || id == BuiltinId::Signal || id == BuiltinId::WaitUntil)
      check_remote_scope(e, target_of(e->call->resolved_args[0]));
  }

  // ---- the checks

  void check_remote_scope(const Expr* call, const Target& target) {
    if (target.where != Target::Where::Translated || enum_arg(call, ParamKind::Scope) < 0 ||
        scope_name(call) == "sys")
      return;
    diags_.error(DiagKind::RemoteScope, arg_of_kind(call, ParamKind::Scope)->range, call->name, scope_name(call));
    std::string_view rank = text_of(target.rank()->range);
    if (is_other_rank(target.rank()))
      diags_.note(DiagKind::RemoteScopeFix, target.translation->range, rank, "another GPU", "");
    else
      diags_.note(DiagKind::RemoteScopeFix, target.translation->range, rank, "which may be this rank or another",
                  fmt::format(" (where '{}' is always this rank, drop the '@')", rank));
  }

  Diagnostics& diags_;
  std::unordered_map<const Binding*, const Expr*> let_values_;
  std::vector<const Expr*> other_ranks_;  // ranks proven not mine around the walk's position
};

}  // namespace

void check_memory_model(const Module& module, Diagnostics& diags) {
  MemoryModelChecker checker(diags);
  for (const Item& item : module.items)
    if (item.kind == Item::Kind::Function && item.function->body) checker.check_function(*item.function);
}

}  // namespace irisc
