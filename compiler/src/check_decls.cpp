// The checker's items and statements: scopes, bindings and control flow.
#include "checker_impl.h"

namespace irisc {
namespace {

std::string_view binding_description(Binding::Kind kind) {
  switch (kind) {
    case Binding::Kind::Let: return "bound with 'let'";
    case Binding::Kind::Var: return "a 'var'";
    case Binding::Kind::LoopVar: return "a loop variable";
    case Binding::Kind::Param: return "a parameter";
    case Binding::Kind::CtParam: return "a compile-time parameter";
    case Binding::Kind::TypeParam: return "a type parameter";
    case Binding::Kind::Const: return "a constant";
    case Binding::Kind::Function: return "a function";
  }
  return "";
}

}  // namespace

void check(Module& module, Diagnostics& diags) {
  unsigned errors = diags.error_count();
  Checker(module, diags).run();
  if (diags.error_count() == errors) check_memory_model(module, diags);
}

// Constants first, in order (a constant may use earlier ones); then every
// function, which may call device functions defined anywhere in the file.
void Checker::run() {
  push_scope();
  for (const Item& item : module_.items)
    if (item.kind == Item::Kind::Const)
      later_bindings_.emplace(item.constant->name,
                              LaterBinding{item.constant->range, item.constant->range.End.getPointer()});
  declare_functions();
  for (Item& item : module_.items)
    if (item.kind == Item::Kind::Const) check_const(*item.constant);
  // Device functions' signatures before any body, so calls can be checked
  // wherever the callee is defined; a kernel's may use its compile-time
  // parameters, so it is typed with its body.
  for (Item& item : module_.items)
    if (item.kind == Item::Kind::Function && !item.function->is_kernel)
      resolve_signature(*item.function);
  for (Item& item : module_.items)
    if (item.kind == Item::Kind::Function) check_function(*item.function);
  check_recursion();
  check_node_local_callees();
  pop_scope();
}

void Checker::declare_functions() {
  // The modules' names before the file's own, so that the file's definition
  // is the one reported as taking a module's name, wherever the import is.
  for (const Item& item : module_.items)
    if (item.kind == Item::Kind::Import && item.import->module) declare_module(*item.import);
  for (Item& item : module_.items) {
    if (item.kind == Item::Kind::Import) declare_imported(*item.import);
    if (item.kind != Item::Kind::Function) continue;
    Function& fn = *item.function;
    if (const BuiltinInfo* builtin = find_builtin(fn.name); builtin && !builtin->yields_to_functions) {
      diags_.error(DiagKind::Redefinition, fn.name_range, fn.name);
      continue;
    }
    Binding* b = bind(Binding::Kind::Function, fn.name, fn.name_range, Type::void_type());
    b->function = &fn;
  }
}

// A header's functions share the global scope with the file's own; one named
// like a built-in could never be called.
void Checker::declare_imported(const ImportDecl& decl) {
  for (Function* fn : decl.functions) {
    if (const BuiltinInfo* builtin = find_builtin(fn->name); builtin && !builtin->yields_to_functions) {
      diags_.error(DiagKind::ImportedBuiltinName, decl.range, fn->name, decl.path);
      diags_.note(DiagKind::DeclaredInHeader, fn->name_range, fn->name);
      continue;
    }
    Binding* b = bind(Binding::Kind::Function, fn->name, fn->name_range, Type::void_type());
    b->function = fn;
  }
}

// A module's device functions and constants join the file's global scope
// (the module was checked first); its kernels, which cannot be called, and the
// modules it imports in turn stay its own.
void Checker::declare_module(const ImportDecl& decl) {
  auto& scope = scopes_.back();
  for (const Item& item : decl.module->items) {
    const Binding* b = nullptr;
    if (item.kind == Item::Kind::Const) b = item.constant->binding;
    if (item.kind == Item::Kind::Function && !item.function->is_kernel) {
      Binding* function = module_.make<Binding>();
      function->kind = Binding::Kind::Function;
      function->name = item.function->name;
      function->range = item.function->name_range;
      function->function = item.function;
      b = function;
    }
    if (!b) continue;
    if (auto it = scope.find(b->name); it != scope.end()) {  // another module's
      diags_.error(DiagKind::DefinedInModule, decl.path_range, b->name,
                   module_of_.at(it->second)->source_name);
      diags_.note(DiagKind::PreviousDefinition, it->second->range, b->name);
      continue;
    }
    scope[b->name] = b;
    module_of_[b] = decl.module;
  }
}

// const_decl: the value must be a compile-time integer or bool.
void Checker::check_const(ConstDecl& decl) {
  function_ = nullptr;
  Type t = check_value(decl.value);
  bool converts = true;
  if (decl.type) {
    Type declared = resolve_type(decl.type);
    converts = require_value_convertible(decl.value, declared,
                                         fmt::format("the constant '{}'", decl.name));
    t = declared;
  } else {
    converts = check_literal_fits(decl.value, materialize(t));  // bound as i32
  }
  t = materialize(t);
  std::optional<ConstValue> constant;
  // One error per mistake: a value of the wrong type is not also "not constant".
  if (!t.is_error() && ((!t.is_integer() && !t.is_bool()) || t.is_tile())) {
    diags_.error(DiagKind::ParamTypeNotAllowed, decl.range, "constant", decl.name, t.str());
    t = Type::error();
  } else if (converts) {
    constant = require_constant(decl.value, fmt::format("the value of constant '{}'", decl.name));
  }
  Binding* b = bind(Binding::Kind::Const, decl.name, decl.range, t);
  b->constant = constant;
  decl.binding = b;
  later_bindings_.erase(decl.name);
}

void Checker::check_function(Function& fn) {
  function_ = &fn;
  push_scope();
  declare_ct_params(fn);
  if (fn.is_kernel) resolve_params(fn);
  check_instances(fn);
  pop_scope();
  function_ = nullptr;
}

// The parameters and body, in the instance of the type parameters set (once
// without them). The parameters share the compile-time parameters' scope,
// which each instance leaves as it found it.
void Checker::check_body(Function& fn) {
  auto ct_scope = scopes_.back();
  for (size_t i = 0; i < fn.params.size(); ++i) {
    Param& p = fn.params[i];
    p.binding = bind(Binding::Kind::Param, p.name, p.range, in_instance(fn.param_types[i]));
    p.binding->locality = param_locality(fn, p.binding->type);
  }
  later_bindings_.clear();
  collect_later_bindings(fn.body);
  loop_depth_ = 0;
  check_block(fn.body);
  if (!fn.is_kernel && fn.return_type && !always_returns(fn.body))
    diags_.error(DiagKind::MissingReturn, fn.name_range, fn.name);
  scopes_.back() = std::move(ct_scope);
}

// A device function's signature, before any body: in the scope of its
// compile-time parameters, which its body then shares.
void Checker::resolve_signature(Function& fn) {
  push_scope();
  declare_ct_params(fn);
  resolve_params(fn);
  pop_scope();
}

void Checker::resolve_params(Function& fn) {
  for (Param& p : fn.params) {
    Type t = resolve_type(p.type);
    if (fn.is_kernel && t.is_tile()) {
      diags_.error(DiagKind::ParamTypeNotAllowed, p.range, "kernel parameter", p.name, t.str());
      t = Type::error();
    }
    fn.param_types.push_back(t);
  }
  fn.result = fn.return_type ? resolve_type(fn.return_type) : Type::void_type();
}

void Checker::collect_later_bindings(const Stmt* s) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::Let:
    case StmtKind::Var:
      later_bindings_.emplace(s->name, LaterBinding{s->name_range, s->range.End.getPointer()});
      break;
    case StmtKind::For:
      later_bindings_.emplace(s->name,
                              LaterBinding{s->name_range, s->body->range.Start.getPointer()});
      break;
    default: break;
  }
  collect_later_bindings(s->body);
  collect_later_bindings(s->else_body);
  for (const Stmt* child : s->stmts) collect_later_bindings(child);
}

// A device function with a result must end in a return on every path.
bool Checker::always_returns(const Stmt* s) {
  switch (s->kind) {
    case StmtKind::Return: return true;
    case StmtKind::Block:
      for (const Stmt* child : s->stmts)
        if (always_returns(child)) return true;
      return false;
    case StmtKind::If: return s->else_body && always_returns(s->body) && always_returns(s->else_body);
    default: return false;
  }
}

Binding* Checker::bind(Binding::Kind kind, std::string_view name, llvm::SMRange range, Type type) {
  auto& scope = scopes_.back();
  if (auto it = scope.find(name); it != scope.end()) {
    if (auto module = module_of_.find(it->second); module != module_of_.end())
      diags_.error(DiagKind::DefinedInModule, range, name, module->second->source_name);
    else
      diags_.error(DiagKind::Redefinition, range, name);
    diags_.note(DiagKind::PreviousDefinition, it->second->range, name);
  }
  Binding* b = module_.make<Binding>();
  b->kind = kind;
  b->name = name;
  b->range = range;
  b->type = std::move(type);
  scope[name] = b;
  return b;
}

const Binding* Checker::lookup(std::string_view name) const {
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope)
    if (auto it = scope->find(name); it != scope->end()) return it->second;
  return nullptr;
}

const Binding* Checker::resolve_name(std::string_view name, llvm::SMRange use) {
  if (const Binding* b = lookup(name)) return b;
  auto [first, last] = later_bindings_.equal_range(name);
  for (auto it = first; it != last; ++it) {
    if (use.Start.getPointer() < it->second.visible_from) {
      diags_.error(DiagKind::UsedBeforeBound, use, name);
      diags_.note(DiagKind::BoundHere, it->second.name, name);
      return nullptr;
    }
  }
  diags_.error(DiagKind::UndeclaredName, use, name);
  return nullptr;
}

void Checker::check_block(Stmt* block) {
  push_scope();
  for (Stmt* s : block->stmts) check_stmt(s);
  pop_scope();
}

void Checker::check_stmt(Stmt* s) {
  switch (s->kind) {
    case StmtKind::Let:
    case StmtKind::Var: check_binding(s); break;
    case StmtKind::Assign: check_assign(s); break;
    case StmtKind::ExprStmt: check_expr(s->value); break;
    case StmtKind::If: {
      check_condition(s->value);
      const size_t outer_near_ranks = near_ranks_.size();
      guard_near_ranks(s->value);
      check_block(s->body);
      near_ranks_.resize(outer_near_ranks);
      if (s->else_body) check_stmt(s->else_body);
      break;
    }
    case StmtKind::For: check_for(s); break;
    case StmtKind::While:
      check_condition(s->value);
      ++loop_depth_;
      check_block(s->body);
      --loop_depth_;
      break;
    case StmtKind::Break:
    case StmtKind::Continue:
      if (loop_depth_ == 0)
        diags_.error(DiagKind::JumpOutsideLoop, s->range,
                     s->kind == StmtKind::Break ? "break" : "continue");
      break;
    case StmtKind::Return: check_return(s); break;
    case StmtKind::Block: check_block(s); break;
  }
}

// let_stmt / var_stmt
void Checker::check_binding(Stmt* s) {
  Type t = check_value(s->value);
  if (s->declared_type) {
    Type declared = resolve_type(s->declared_type);
    require_value_convertible(s->value, declared, fmt::format("the binding of '{}'", s->name));
    t = declared;
  } else {
    check_literal_fits(s->value, materialize(t));  // bound as i32
  }
  t = materialize(t);
  bool is_let = s->kind == StmtKind::Let;
  Binding* b = bind(is_let ? Binding::Kind::Let : Binding::Kind::Var, s->name, s->name_range, t);
  if (is_let && (t.is_integer() || t.is_bool()) && !t.is_tile()) b->constant = s->value->constant;
  b->locality = binding_locality(s);
  s->binding = b;
}

void Checker::check_assign(Stmt* s) {
  Expr* target = s->target;
  Type value = check_value(s->value);
  if (target->kind != ExprKind::Name) {
    diags_.error(DiagKind::AssignToNonName, target->range);
    return;
  }
  const Binding* b = resolve_name(target->name, target->range);
  if (!b) return;
  target->binding = b;
  target->type = b->type;
  if (b->kind != Binding::Kind::Var) {
    diags_.error(DiagKind::AssignToImmutable, target->range, target->name,
                 binding_description(b->kind));
    diags_.note(DiagKind::BoundHere, b->range, b->name);
    return;
  }
  check_assign_locality(s, *b);
  TokenKind op = s->assign_op == TokenKind::Eq ? TokenKind::Eq : compound_operator(s->assign_op);
  if (op != TokenKind::Eq) value = binary_result(op, b->type, value, s->range);
  bool shift = op == TokenKind::Shl || op == TokenKind::Shr;
  if (require_convertible(value, b->type, fmt::format("the assignment to '{}'", b->name),
                          s->value->range) &&
      !shift)
    check_literal_fits(s->value, b->type);  // the literal adapts to the variable's type
}

// for_stmt: the loop variable takes the bounds' common integer type.
void Checker::check_for(Stmt* s) {
  Type low = check_value(s->low);
  Type high = check_value(s->high);
  Type step = s->step ? check_value(s->step) : Type::error();
  Type t = Type::error();
  bool ok = true;
  for (auto [bound, type] : {std::pair{s->low, low}, std::pair{s->high, high}, std::pair{s->step, step}}) {
    if (bound && !type.is_error() && (!type.is_integer() || type.is_tile())) {
      diags_.error(DiagKind::LoopBoundNotInteger, bound->range, type.str());
      ok = false;
    }
  }
  if (ok && !low.is_error() && !high.is_error()) {
    if (auto common = unify(low, high)) {
      t = materialize(*common);
      check_literal_fits(s->low, t);
      check_literal_fits(s->high, t);
    } else
      diags_.error(DiagKind::IncompatibleOperands, s->range, "..", low.str(), high.str());
  }
  // A step takes the loop variable's type; a constant one must move the loop
  // on (a run-time one is the program's to keep positive, as in Triton).
  if (ok && !t.is_error() && !step.is_error()) {
    auto common = unify(t, step);
    if (!common || !materialize(*common).same(t)) {
      diags_.error(DiagKind::IncompatibleOperands, s->step->range, "step", t.str(), step.str());
    } else {
      check_literal_fits(s->step, t);
      const std::optional<ConstValue>& c = s->step->constant;
      if (c && c->value && *c->value <= 0)  // a compile-time parameter's default too
        diags_.error(DiagKind::LoopStepNotPositive, s->step->range, *c->value);
    }
  }
  // The stages of the loop's pipeline (where it gets one): a compile-time
  // integer, at least one ring tile being filled, one being read and one
  // that the last iteration's dot may still read.
  if (s->stages) {
    Type stages = check_value(s->stages);
    if (!stages.is_error() && (!stages.is_integer() || stages.is_tile())) {
      diags_.error(DiagKind::LoopStagesInvalid, s->stages->range, fmt::format("'{}'", stages.str()));
    } else if (!stages.is_error() && check_literal_fits(s->stages, materialize(stages))) {
      auto c = require_constant(s->stages, "a loop's stages");
      if (c && c->value && *c->value < 3)  // a compile-time parameter's default too
        diags_.error(DiagKind::LoopStagesInvalid, s->stages->range, *c->value);
    }
  }
  push_scope();
  s->binding = bind(Binding::Kind::LoopVar, s->name, s->name_range, instance_type(s, s->name_range, t));
  ++loop_depth_;
  check_block(s->body);
  --loop_depth_;
  pop_scope();
}

void Checker::check_return(Stmt* s) {
  const Function& fn = *function_;
  Type result = in_instance(fn.result);
  if (fn.is_kernel || result.is_void()) {
    if (s->value) {
      check_expr(s->value);
      diags_.error(DiagKind::ReturnValueNotAllowed, s->value->range, fn.name,
                   fn.is_kernel ? "a kernel" : "declared without a result type");
    }
    return;
  }
  if (!s->value) {
    diags_.error(DiagKind::ReturnWithoutValue, s->range, fn.name, result.str());
    return;
  }
  check_value(s->value);
  require_value_convertible(s->value, result, "the return value");
}

void Checker::check_condition(Expr* cond) {
  Type t = check_value(cond);
  if (!t.is_error() && (!t.is_bool() || t.is_tile()))
    diags_.error(DiagKind::ConditionNotBool, cond->range, t.str());
}

}  // namespace irisc
