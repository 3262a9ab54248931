// The checker's state, shared by its source files:
//   check_decls.cpp     items, statements, scopes and name lookup
//   check_expr.cpp      expressions, conversions and compile-time folding
//   check_builtins.cpp  calls: argument binding and the built-ins' rules
//   check_generics.cpp  compile-time parameters: instances of type parameters,
//                       compile-time arguments and the signatures they give
//   check_locality.cpp  multinode code: near and far ranks, and the pointers
//                       that loads and stores cannot reach
#pragma once

#include "irisc/builtins.h"
#include "irisc/checker.h"

#include <llvm/ADT/SetVector.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace irisc {

class Checker {
 public:
  Checker(Module& module, Diagnostics& diags) : module_(module), diags_(diags) {}
  void run();

 private:
  // ---- check_decls.cpp
  void declare_functions();
  void declare_imported(const ImportDecl& decl);
  void declare_module(const ImportDecl& decl);
  void resolve_signature(Function& fn);
  void resolve_params(Function& fn);
  void check_const(ConstDecl& decl);
  void check_function(Function& fn);
  void check_body(Function& fn);
  void check_stmt(Stmt* stmt);
  void check_block(Stmt* block);
  void check_binding(Stmt* stmt);
  void check_assign(Stmt* stmt);
  void check_for(Stmt* stmt);
  void check_return(Stmt* stmt);
  void check_condition(Expr* cond);
  static bool always_returns(const Stmt* stmt);

  Binding* bind(Binding::Kind kind, std::string_view name, llvm::SMRange range, Type type);
  const Binding* lookup(std::string_view name) const;
  const Binding* resolve_name(std::string_view name, llvm::SMRange use);
  void collect_later_bindings(const Stmt* stmt);
  void push_scope() { scopes_.emplace_back(); }
  void pop_scope() { scopes_.pop_back(); }

  // ---- check_expr.cpp
  Type check_expr(Expr* e);
  Type check_value(Expr* e);  // check_expr, rejecting void results
  Type check_name(Expr* e);
  Type check_unary(Expr* e);
  Type check_binary(Expr* e);
  Type check_cast(Expr* e);
  Type check_translate(Expr* e);
  Type resolve_type(const TypeSyntax* ts);
  // The result of `lhs op rhs`, or an error type (after a diagnostic at range).
  Type binary_result(TokenKind op, const Type& lhs, const Type& rhs, llvm::SMRange range);
  // The shape of an elementwise result, NumPy's broadcast of the operands'
  // shapes: false (after a diagnostic) when both are tiles whose shapes do
  // not broadcast.
  bool broadcast(const Type& a, const Type& b, std::optional<TileShape>& shape, std::string_view what,
                 llvm::SMRange range);
  std::optional<Type> unify(const Type& a, const Type& b);
  static bool convertible(const Type& from, const Type& to);
  bool require_convertible(const Type& from, const Type& to, std::string_view context,
                           llvm::SMRange range);
  // require_convertible for an expression, which also checks that an integer
  // literal (or a constant folded from literals) fits the type it adapts to.
  bool require_value_convertible(const Expr* value, const Type& to, std::string_view context);
  bool check_literal_fits(const Expr* value, const Type& to);
  bool check_fits(int64_t v, const Type& to, llvm::SMRange range);
  void check_folded_fits(Expr* e);
  static Type materialize(Type t);
  // Why a compile-time operation has no value.
  enum class FoldError : uint8_t { None, DivisionByZero, Overflow };
  void fold_binary(Expr* e);
  std::optional<ConstValue> fold_binary_value(TokenKind op, const ConstValue& l, const ConstValue& r,
                                              FoldError& error);
  static ConstValue wrap_constant(ConstValue c, ScalarKind target);
  void fold_unary(Expr* e);
  std::optional<ConstValue> fold_unary_value(TokenKind op, const ConstValue& operand, FoldError& error);
  void report_fold_error(FoldError error, llvm::SMRange range);
  bool check_tile_size(int64_t n, llvm::SMRange range);
  bool check_tile_elements(const TileShape& shape, llvm::SMRange range);
  std::optional<ConstValue> require_constant(Expr* e, std::string_view what);
  std::optional<TileShape> tile_shape(Expr* size, std::string_view what);
  std::optional<Shape> tile_dim(Expr* size, std::string_view what);
  void check_size(Expr* size);
  Type check_add_axis(Expr* e);
  static std::string_view source_text(llvm::SMRange range);
  void note_pointer_origin(const Expr* pointer);

  // ---- check_locality.cpp: ranks and pointers in multinode code (language.md 9.1)
  bool in_multinode() const { return function_ && function_->multinode; }
  Locality locality_of(const Expr* e) const;
  Locality rank_locality(const Expr* rank) const;
  static Locality param_locality(const Function& fn, const Type& type);
  static Locality binding_locality(const Stmt* binding);
  void guard_near_ranks(const Expr* cond);
  bool check_access_locality(const Expr* call);
  void check_argument_locality(const Expr* call);
  void check_assign_locality(const Stmt* assign, const Binding& target);
  void check_node_local_callees();
  bool translates(const Function& fn);

  // ---- check_generics.cpp
  void declare_ct_params(Function& fn);
  void check_instances(Function& fn);
  void set_instance(size_t index);
  std::string instance_text(size_t index) const;
  Type instance_type(const void* node, llvm::SMRange range, Type t);
  Type in_instance(Type t) const;
  std::optional<Type> type_argument(Expr* arg);
  bool bind_ct_arguments(Expr* call, const Function& fn);
  Type instantiate(const TypeSyntax* ts, const Function& fn, const Call& call);
  std::optional<ConstValue> substitute(const Expr* e, const Function& fn, const Call& call);
  void check_recursion();

  // ---- check_builtins.cpp
  Type check_call(Expr* e);
  const BuiltinInfo* called_builtin(std::string_view name) const;
  bool bind_arguments(Expr* call, std::string_view callee,
                      const std::vector<BuiltinParam>& params);
  Type check_builtin(Expr* call);
  Type check_device_call(Expr* call, const Function& fn);
  Type check_imported_call(Expr* call, const Function& fn);
  void note_declarations(const Function& fn);
  Type check_memory_op(Expr* call);
  bool check_mask(Expr* mask, const Type& access);
  static bool is_put_signal_flag(const BuiltinInfo& b, size_t param);
  bool check_put_signal_flag(Expr* call);
  Type check_reduction(Expr* call);
  Type check_elementwise(Expr* call);
  Type check_reshape(Expr* call);
  Type check_dot(Expr* call);
  std::optional<int64_t> require_axis(Expr* axis, const Expr* call, const Type& tile);
  bool check_order(Expr* call, size_t sem_index, bool is_load, bool is_store);
  std::string arg_name(const Expr* call, size_t index) const;

  Module& module_;
  Diagnostics& diags_;
  std::vector<std::unordered_map<std::string_view, const Binding*>> scopes_;
  // The names imported .iris modules declare, and the module of each.
  std::unordered_map<const Binding*, const Module*> module_of_;
  // Every name the function being checked binds, with the point where it
  // becomes visible, to tell "used before it is bound" from "undeclared".
  struct LaterBinding {
    llvm::SMRange name;
    const char* visible_from;
  };
  std::unordered_multimap<std::string_view, LaterBinding> later_bindings_;
  const Function* function_ = nullptr;
  // Each call of a device function and the function that makes it, once (a
  // body is checked once per instance), in order: the call graph.
  llvm::SetVector<std::pair<const Function*, const Expr*>> device_calls_;
  int loop_depth_ = 0;
  // The immutable ranks proven near by the `if near(r)` conditions around
  // the statement being checked, innermost last.
  std::vector<const Binding*> near_ranks_;
  // Node-local device functions and whether they translate, themselves or
  // through the node-local functions they call (false while being walked).
  std::unordered_map<const Function*, bool> translates_;

  // The instances of the function being checked (check_generics.cpp): each
  // gives every type parameter one of the types it admits. The body is
  // checked once per instance (Compare), recording the type of every
  // expression; then once more (Name) to mark the types that are a type
  // parameter in every instance.
  enum class InstancePass : uint8_t { None, Compare, Name };
  InstancePass instance_pass_ = InstancePass::None;
  std::vector<Binding*> type_params_;
  std::vector<std::vector<ScalarKind>> instances_;  // a scalar per type parameter
  size_t instance_ = 0;
  struct InstanceTypes {
    llvm::SMRange range;
    Type first;                   // in the first instance
    bool fixed = true;            // the same type in every instance
    std::vector<bool> is_param;   // per type parameter: that parameter's type in every instance
    Type differing;               // where not fixed: the first other type seen, and in which instance
    size_t differs_in = 0;
  };
  std::unordered_map<const void*, InstanceTypes> instance_types_;
};

}  // namespace irisc
