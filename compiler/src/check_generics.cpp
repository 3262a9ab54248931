// The checker's compile-time parameters: those of device functions, type
// parameters, and the compile-time arguments of calls.
//
// An integer (or bool) parameter is checked symbolically, as a kernel's always
// was: the body is checked once, and sizes that depend on the parameter keep
// their canonical text ("BLOCK", "(BLOCK * 2)"), which the printer emits as the
// C++ template parameter of the same name.
//
// A type parameter `T: type in (f32, bf16, i32)` admits a list of types, and
// the body is checked once per instance (every combination of the admitted
// types of every type parameter), with T standing for that instance's type;
// an error names its instance in a note ("in the instance of 'f' where T is
// bf16"), and the first instance with errors ends the checking. So every
// admitted type is checked, as if the function were written for it. The
// printer emits one C++ template, so each expression's type must be one it
// can name: the same type in every instance, or T itself (the type of T's
// instance in every instance). The Compare passes record each expression's
// type; an expression that is neither is an error (`x + y` with x: T and
// y: f16 is f32 when T is f32 but f16 when T is f16). A last pass, Name, then
// marks the types that are T (Type::type_param), which lowering follows: the
// printer writes T for them, and narrows T's results as it narrows those of
// every type that C++ promotes, so every instance computes what the function
// written for its type would.
//
// A call gives every compile-time argument explicitly, `f<64, f32>(x)`. The
// callee's parameter and result types for those arguments come from its type
// syntax, with the arguments substituted: its sizes are folded again with the
// caller's values (which may be symbolic in the caller's own parameters), and
// T becomes the argument's type, so a tile<T, BLOCK> parameter called with
// <f32, 64> is a tile<f32, 64>.
#include "checker_impl.h"

#include <algorithm>
#include <unordered_set>

namespace irisc {
namespace {

// More instances than this are refused: each is a pass over the body.
constexpr size_t kMaxInstances = 256;

// Whether `t` is the type of a type parameter whose instance is `scalar`:
// that scalar, or a pointer to it, or a tile of either.
bool names_scalar(const Type& t, ScalarKind scalar) {
  return (t.is_scalar_kind() || t.is_pointer()) && t.scalar == scalar;
}

// The same kind of type, but for the scalar: a tile of the same shape, a
// pointer into the same memory.
bool same_structure(const Type& a, const Type& b) {
  return a.kind == b.kind && a.sym == b.sym && a.shape == b.shape;
}

}  // namespace

// A function's compile-time parameters, in the current scope. A device
// function's were declared with its signature, before any body; its body
// sees the same bindings, which its signature's sizes refer to.
void Checker::declare_ct_params(Function& fn) {
  // A kernel is a C++ class template, whose parameters with defaults come last.
  const Param* defaulted = nullptr;
  for (Param& p : fn.ct_params) {
    if (!fn.is_kernel || p.binding) continue;
    if (p.default_value) {
      defaulted = &p;
    } else if (defaulted) {
      diags_.error(DiagKind::CtParamAfterDefault, p.range, p.name, defaulted->name);
    }
  }
  for (Param& p : fn.ct_params) {
    if (p.binding) {
      scopes_.back()[p.name] = p.binding;
      continue;
    }
    if (p.is_type()) {
      for (size_t i = 0; i < p.admitted.size(); ++i)
        for (size_t j = 0; j < i; ++j)
          if (p.admitted[j]->scalar == p.admitted[i]->scalar)
            diags_.error(DiagKind::DuplicateAdmittedType, p.admitted[i]->range, p.name,
                         scalar_info(p.admitted[i]->scalar).spelling);
      Type t = Type::scalar_of(p.admitted[0]->scalar);
      t.type_param = p.name;
      p.binding = bind(Binding::Kind::TypeParam, p.name, p.range, t);
      continue;
    }
    Type t = resolve_type(p.type);
    if (!t.is_error() && ((!t.is_integer() && !t.is_bool()) || t.is_tile() || !t.type_param.empty())) {
      diags_.error(DiagKind::ParamTypeNotAllowed, p.range, "compile-time parameter", p.name, t.str());
      t = Type::error();
    }
    ConstValue value{p.name, std::nullopt, true};
    if (p.default_value && !fn.is_kernel) {
      diags_.error(DiagKind::DeviceCtParamDefault, p.default_value->range, p.name);
    } else if (p.default_value) {
      check_value(p.default_value);
      bool converts = require_value_convertible(p.default_value, t, fmt::format("the default of '{}'", p.name));
      if (converts && !t.is_error())
        if (auto d = require_constant(p.default_value, fmt::format("the default of '{}'", p.name)))
          value.value = d->value;
    }
    p.binding = bind(Binding::Kind::CtParam, p.name, p.range, t);
    p.binding->constant = value;
  }
}

void Checker::check_instances(Function& fn) {
  type_params_.clear();
  instances_ = {{}};
  for (Param& p : fn.ct_params) {
    if (!p.is_type()) continue;
    type_params_.push_back(p.binding);
    std::vector<std::vector<ScalarKind>> longer;
    for (const auto& instance : instances_)
      for (const TypeSyntax* admitted : p.admitted) {
        longer.push_back(instance);
        longer.back().push_back(admitted->scalar);
      }
    if (longer.size() > kMaxInstances) {
      diags_.error(DiagKind::TooManyInstances, fn.name_range, fn.name, fmt::format("more than {}", kMaxInstances),
                   kMaxInstances);
      return;
    }
    instances_ = std::move(longer);
  }
  if (type_params_.empty()) {
    check_body(fn);
    return;
  }
  instance_types_.clear();
  instance_pass_ = InstancePass::Compare;
  for (size_t i = 0; i < instances_.size(); ++i) {
    set_instance(i);
    diags_.set_error_context([&] { diags_.note(DiagKind::InInstance, fn.name_range, fn.name, instance_text(i)); });
    unsigned errors = diags_.error_count();
    check_body(fn);
    diags_.set_error_context({});
    if (diags_.error_count() > errors) {
      instance_pass_ = InstancePass::None;
      return;
    }
  }
  // Every type the printer cannot name, in source order.
  std::vector<const InstanceTypes*> unnamed;
  for (const auto& [node, seen] : instance_types_)
    if (!seen.fixed && std::find(seen.is_param.begin(), seen.is_param.end(), true) == seen.is_param.end())
      unnamed.push_back(&seen);
  std::sort(unnamed.begin(), unnamed.end(), [](const InstanceTypes* a, const InstanceTypes* b) {
    return a->range.Start.getPointer() < b->range.Start.getPointer();
  });
  for (const InstanceTypes* seen : unnamed)
    diags_.error(DiagKind::TypeDependsOnInstance, seen->range, seen->first.str(), instance_text(0),
                 seen->differing.str(), instance_text(seen->differs_in));
  if (unnamed.empty()) {
    instance_pass_ = InstancePass::Name;
    set_instance(0);
    check_body(fn);
  }
  instance_pass_ = InstancePass::None;
}

void Checker::set_instance(size_t index) {
  instance_ = index;
  for (size_t j = 0; j < type_params_.size(); ++j) type_params_[j]->type.scalar = instances_[index][j];
}

// "T is bf16, U is i32"
std::string Checker::instance_text(size_t index) const {
  std::vector<std::string> parts;
  for (size_t j = 0; j < type_params_.size(); ++j)
    parts.push_back(fmt::format("{} is {}", type_params_[j]->name, scalar_info(instances_[index][j]).spelling));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The type of `node` (an expression, or a loop's variable) in this instance:
// recorded while comparing; marked with its type parameter while naming.
Type Checker::instance_type(const void* node, llvm::SMRange range, Type t) {
  if (instance_pass_ == InstancePass::None) return t;
  Type concrete = t;
  concrete.type_param = {};
  if (instance_pass_ == InstancePass::Name) {
    const InstanceTypes& seen = instance_types_.at(node);
    if (!seen.fixed)
      for (size_t j = 0; j < type_params_.size(); ++j)
        if (seen.is_param[j]) concrete.type_param = type_params_[j]->name;
    return concrete;
  }
  auto [it, first] = instance_types_.try_emplace(node);
  InstanceTypes& seen = it->second;
  if (first) {
    seen.range = range;
    seen.first = concrete;
    for (const Binding* param : type_params_) seen.is_param.push_back(names_scalar(concrete, param->type.scalar));
    return t;
  }
  if (seen.fixed && !concrete.same(seen.first)) {
    seen.fixed = false;
    seen.differing = concrete;
    seen.differs_in = instance_;
  }
  for (size_t j = 0; j < type_params_.size(); ++j)
    seen.is_param[j] =
        seen.is_param[j] && names_scalar(concrete, type_params_[j]->type.scalar) && same_structure(concrete, seen.first);
  return t;
}

// A signature's type in this instance: T is the instance's type.
Type Checker::in_instance(Type t) const {
  for (const Binding* param : type_params_)
    if (!t.type_param.empty() && t.type_param == param->name) t.scalar = param->type.scalar;
  return t;
}

// A type given as an argument: a type, or a type parameter's name. None (and
// no diagnostic) for anything else.
std::optional<Type> Checker::type_argument(Expr* arg) {
  if (arg->kind == ExprKind::TypeValue) return arg->type_syntax->resolved = resolve_type(arg->type_syntax);
  if (arg->kind != ExprKind::Name) return std::nullopt;
  const Binding* b = lookup(arg->name);
  if (!b || b->kind != Binding::Kind::TypeParam) return std::nullopt;
  arg->binding = b;
  return arg->type = b->type;
}

// Matches a call's compile-time arguments to the callee's compile-time
// parameters: a type the parameter admits, or a compile-time value of the
// parameter's type.
bool Checker::bind_ct_arguments(Expr* call, const Function& fn) {
  Call& c = *call->call;
  if (c.ct_args.size() != fn.ct_params.size()) {
    diags_.error(DiagKind::WrongCtArgumentCount, c.ct_args.empty() ? c.name_range : c.ct_range, fn.name,
                 fn.ct_params.size(), fn.ct_params.size() == 1 ? "" : "s", c.ct_args.size());
    return false;
  }
  c.ct_values.assign(fn.ct_params.size(), ConstValue{});
  c.ct_types.assign(fn.ct_params.size(), Type::error());
  bool ok = true;
  for (size_t i = 0; i < fn.ct_params.size(); ++i) {
    const Param& p = fn.ct_params[i];
    Expr* arg = c.ct_args[i];
    if (p.is_type()) {
      std::optional<Type> t = type_argument(arg);
      if (!t) {
        diags_.error(DiagKind::ExpectedTypeArgument, arg->range, p.name, fn.name);
        ok = false;
      } else if (!t->is_error() &&
                 (!t->is_scalar_kind() || t->is_tile() ||
                  std::none_of(p.admitted.begin(), p.admitted.end(),
                               [&](const TypeSyntax* a) { return a->scalar == t->scalar; }))) {
        diags_.error(DiagKind::TypeNotAdmitted, arg->range, p.name, fn.name, admitted_types(p), t->str());
        ok = false;
      } else {
        c.ct_types[i] = *t;
        ok &= !t->is_error();
      }
      continue;
    }
    std::string what = fmt::format("the compile-time argument '{}' of '{}'", p.name, fn.name);
    if (check_value(arg).is_error() || !require_value_convertible(arg, p.binding->type, what)) {
      ok = false;
      continue;
    }
    if (auto value = require_constant(arg, what)) c.ct_values[i] = *value;
    else ok = false;
  }
  return ok;
}

// A type of the callee's signature for the call's compile-time arguments.
Type Checker::instantiate(const TypeSyntax* ts, const Function& fn, const Call& call) {
  auto ct_index = [&](std::string_view name) {
    size_t i = 0;
    while (fn.ct_params[i].name != name) ++i;
    return i;
  };
  switch (ts->kind) {
    case TypeSyntax::Kind::Scalar:
    case TypeSyntax::Kind::Pointer: {
      Type t = ts->kind == TypeSyntax::Kind::Scalar ? Type::scalar_of(ts->scalar) : Type::pointer_to(ts->scalar, ts->sym);
      if (!ts->type_param.empty()) {
        const Type& arg = call.ct_types[ct_index(ts->type_param)];
        t.scalar = arg.scalar;
        t.type_param = arg.type_param;
      }
      return t;
    }
    case TypeSyntax::Kind::Tile: {
      Type element = instantiate(ts->element, fn, call);
      auto dim = [&](const Expr* size) -> std::optional<Shape> {
        auto v = substitute(size, fn, call);
        if (!v) return std::nullopt;
        if (v->value && !check_tile_size(*v->value, call.ct_range)) return std::nullopt;
        return Shape{v->symbol, v->value};
      };
      std::optional<TileShape> shape;
      if (ts->size->kind != ExprKind::Shape) {
        if (auto n = dim(ts->size)) shape = TileShape(*n);
      } else if (auto rows = dim(ts->size->operands[0]), cols = rows ? dim(ts->size->operands[1]) : std::nullopt;
                 rows && cols) {
        shape = TileShape(*rows, *cols);
        if (!check_tile_elements(*shape, call.ct_range)) shape.reset();
      }
      return shape ? element.with_shape(shape) : Type::error();
    }
  }
  return Type::error();
}

// A compile-time value of the callee's signature (a tile size) with the
// call's arguments for the callee's parameters, folded as the checker folds.
std::optional<ConstValue> Checker::substitute(const Expr* e, const Function& fn, const Call& call) {
  FoldError error = FoldError::None;
  std::optional<ConstValue> value;
  switch (e->kind) {
    case ExprKind::Name:
      for (size_t i = 0; i < fn.ct_params.size(); ++i)
        if (e->binding == fn.ct_params[i].binding) return call.ct_values[i];
      return e->constant;
    case ExprKind::Unary:
      if (auto operand = substitute(e->operands[0], fn, call)) value = fold_unary_value(e->op, *operand, error);
      else return std::nullopt;
      break;
    case ExprKind::Binary: {
      auto l = substitute(e->operands[0], fn, call);
      auto r = l ? substitute(e->operands[1], fn, call) : std::nullopt;
      if (!r) return std::nullopt;
      value = fold_binary_value(e->op, *l, *r, error);
      break;
    }
    case ExprKind::Cast:
      if (auto operand = substitute(e->operands[0], fn, call)) return wrap_constant(*operand, e->type.scalar);
      return std::nullopt;
    default: return e->constant;
  }
  report_fold_error(error, call.ct_range);
  if (!value && error == FoldError::None)
    diags_.error(DiagKind::NotCompileTime, call.ct_range, fmt::format("the tile size of '{}'", fn.name));
  return value;
}


// A call in a cycle of calls whose compile-time argument is neither a constant
// nor one of the caller's compile-time parameters as is (`grow<N * 2>` in
// `grow`) asks C++ for new instances without end; with constants and
// parameters only, the instances of a cycle are finitely many.
void Checker::check_recursion() {
  std::unordered_map<const Function*, std::vector<const Function*>> callees;
  for (auto [caller, call] : device_calls_) callees[caller].push_back(call->call->callee);
  auto reaches = [&](const Function* from, const Function* to) {
    std::unordered_set<const Function*> seen;
    std::vector<const Function*> stack{from};
    while (!stack.empty()) {
      const Function* f = stack.back();
      stack.pop_back();
      if (f == to) return true;
      if (!seen.insert(f).second) continue;
      if (auto it = callees.find(f); it != callees.end()) stack.insert(stack.end(), it->second.begin(), it->second.end());
    }
    return false;
  };
  for (auto [caller, call] : device_calls_) {
    const Call& c = *call->call;
    for (size_t i = 0; i < c.ct_values.size(); ++i) {
      const ConstValue& v = c.ct_values[i];
      if (!v.symbolic || std::any_of(caller->ct_params.begin(), caller->ct_params.end(),
                                     [&](const Param& p) { return p.name == v.symbol; }))
        continue;
      if (!reaches(c.callee, caller)) break;
      diags_.error(DiagKind::GrowingRecursion, c.ct_args[i]->range, c.callee->name, v.symbol);
    }
  }
}

}  // namespace irisc
