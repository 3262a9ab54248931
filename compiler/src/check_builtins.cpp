// The checker's calls: binding arguments to parameters (positional, then
// named), device-function calls, and the rules of each built-in: memory
// accesses, masks, atomics and their memory orders.
#include "checker_impl.h"

namespace irisc {
namespace {

// Element types each atomic operation supports (32- and 64-bit only: what
// both GPU vendors implement natively at system scope).
bool atomic_supports(BuiltinId id, ScalarKind s) {
  const ScalarInfo& info = scalar_info(s);
  bool wide = info.bits == 32 || info.bits == 64;
  switch (id) {
    case BuiltinId::AtomicAdd:
    case BuiltinId::AtomicSub:
    case BuiltinId::AtomicXchg:
    case BuiltinId::AtomicLoad:
    case BuiltinId::AtomicStore: return wide && (info.is_integer || info.is_float);
    default: return wide && info.is_integer;
  }
}

}  // namespace

std::string Checker::arg_name(const Expr* call, size_t index) const {
  std::string_view param = call->call->builtin ? call->call->builtin->params[index].name
                                         : call->call->callee->params[index].name;
  return fmt::format("argument '{}' of '{}'", param, call->name);
}

// The built-in a call of `name` reaches: none where a function of the
// program takes the name of a built-in that yields to functions.
const BuiltinInfo* Checker::called_builtin(std::string_view name) const {
  const BuiltinInfo* builtin = find_builtin(name);
  if (!builtin || !builtin->yields_to_functions) return builtin;
  const Binding* b = lookup(name);
  return b && b->kind == Binding::Kind::Function ? nullptr : builtin;
}

Type Checker::check_call(Expr* e) {
  if ((e->call->builtin = called_builtin(e->name))) {
    if (!e->call->ct_args.empty()) {
      diags_.error(DiagKind::WrongCtArgumentCount, e->call->ct_range, e->name, 0, "s", e->call->ct_args.size());
      return Type::error();
    }
    if (!bind_arguments(e, e->name, e->call->builtin->params)) return Type::error();
    return check_builtin(e);
  }
  const Binding* b = resolve_name(e->name, e->call->name_range);
  if (b && b->kind != Binding::Kind::Function) {
    diags_.error(DiagKind::NotCallable, e->call->name_range, e->name);
    diags_.note(DiagKind::BoundHere, b->range, b->name);
    b = nullptr;
  } else if (b && b->function->is_kernel) {
    diags_.error(DiagKind::KernelCalled, e->call->name_range, e->name);
    b = nullptr;
  }
  if (!b) {
    for (CallArg& arg : e->call->args) check_expr(arg.value);
    return Type::error();
  }
  if (b->function->imported_from) {
    if (!e->call->ct_args.empty()) {
      diags_.error(DiagKind::WrongCtArgumentCount, e->call->ct_range, e->name, 0, "s", e->call->ct_args.size());
      return Type::error();
    }
    return check_imported_call(e, *b->function);
  }
  return check_device_call(e, *b->function);
}

// A call to a function of an imported header: like a device call, and
// elementwise when arguments are tiles (each element converts to the
// parameter's scalar type; the result is a tile of the same shape). Every
// error gets a note at the declaration in the header.
Type Checker::check_imported_call(Expr* call, const Function& fn) {
  call->call->callee = &fn;
  bool overloaded = fn.declarations.size() > 1;
  if (overloaded || !fn.rejection.empty()) {
    if (overloaded) diags_.error(DiagKind::ImportedOverloaded, call->call->name_range, fn.name);
    else diags_.error(DiagKind::ImportedNotCallable, call->call->name_range, fn.name, fn.rejection);
    note_declarations(fn);
    for (CallArg& arg : call->call->args) check_expr(arg.value);
    return Type::error();
  }
  std::vector<BuiltinParam> params;
  for (const Param& p : fn.params) params.push_back({p.name});
  if (!bind_arguments(call, fn.name, params)) {
    note_declarations(fn);
    return Type::error();
  }
  std::optional<TileShape> shape;
  const Expr* tile_arg = nullptr;
  bool ok = true;
  std::string what = fmt::format("the arguments of '{}'", fn.name);
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const Expr* arg = call->call->resolved_args[i];
    if (!tile_arg && arg->type.is_tile()) tile_arg = arg;
    std::optional<TileShape> joined;
    if (!broadcast(fn.param_types[i].with_shape(shape), arg->type, joined, what, arg->range)) {
      note_declarations(fn);
      return Type::error();
    }
    shape = joined;
    if (!require_convertible(arg->type, fn.param_types[i].with_shape(arg->type.shape),
                             arg_name(call, i), arg->range))
      ok = false;
  }
  if (ok && shape && fn.result.is_void()) {
    diags_.error(DiagKind::NeedsScalar, call->range,
                 fmt::format("an argument of '{}', which has no result,", fn.name),
                 tile_arg->type.str());
    ok = false;
  }
  if (!ok) {
    note_declarations(fn);
    return Type::error();
  }
  check_argument_locality(call);
  return fn.result.with_shape(shape);
}

void Checker::note_declarations(const Function& fn) {
  for (llvm::SMRange at : fn.declarations) diags_.note(DiagKind::DeclaredInHeader, at, fn.name);
}

Type Checker::check_device_call(Expr* call, const Function& fn) {
  call->call->callee = &fn;
  // Outside a body (a constant's value, a device signature's tile size) the
  // value must be compile-time, which a call is not; and the callee's
  // signature may not be resolved yet.
  if (!function_) {
    for (CallArg& arg : call->call->args) check_expr(arg.value);
    diags_.error(DiagKind::NotCompileTime, call->range, fmt::format("the result of '{}'", fn.name));
    return Type::error();
  }
  bool ct_ok = bind_ct_arguments(call, fn);
  std::vector<BuiltinParam> params;
  for (const Param& p : fn.params) params.push_back({p.name});
  if (!bind_arguments(call, fn.name, params) || !ct_ok) return Type::error();
  device_calls_.insert({function_, call});
  Call& c = *call->call;
  c.param_types = fn.param_types;
  Type result = fn.result;
  if (!fn.ct_params.empty()) {  // the signature for these compile-time arguments
    for (size_t i = 0; i < fn.params.size(); ++i) c.param_types[i] = instantiate(fn.params[i].type, fn, c);
    if (fn.return_type) result = instantiate(fn.return_type, fn, c);
    if (result.is_error() || std::any_of(c.param_types.begin(), c.param_types.end(),
                                         [](const Type& t) { return t.is_error(); }))
      return Type::error();
  }
  for (size_t i = 0; i < fn.params.size(); ++i)
    require_value_convertible(c.resolved_args[i], c.param_types[i], arg_name(call, i));
  check_argument_locality(call);
  return result;
}

// Matches arguments to parameters, then checks each by its parameter's kind.
bool Checker::bind_arguments(Expr* call, std::string_view callee,
                             const std::vector<BuiltinParam>& params) {
  call->call->resolved_args.assign(params.size(), nullptr);
  call->call->enum_args.assign(params.size(), -1);
  bool ok = true;
  size_t next_positional = 0;
  size_t required = 0;
  for (const BuiltinParam& p : params) required += !p.optional;
  for (CallArg& arg : call->call->args) {
    size_t index = params.size();
    if (!arg.name.empty()) {
      for (size_t i = 0; i < params.size(); ++i)
        if (params[i].name == arg.name) index = i;
      if (index == params.size()) {
        diags_.error(DiagKind::UnknownNamedArgument, arg.name_range, callee, arg.name);
        ok = false;
        continue;
      }
    } else {
      index = next_positional++;
      if (index >= params.size()) {
        std::string count = required == params.size()
                                ? fmt::format("{} argument{}", required, required == 1 ? "" : "s")
                                : fmt::format("{} to {} arguments", required, params.size());
        diags_.error(DiagKind::WrongArgumentCount, arg.value->range, callee, count,
                     call->call->args.size());
        return false;
      }
    }
    if (call->call->resolved_args[index]) {
      diags_.error(DiagKind::DuplicateArgument, arg.value->range, params[index].name, callee);
      ok = false;
      continue;
    }
    call->call->resolved_args[index] = arg.value;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    Expr* arg = call->call->resolved_args[i];
    const BuiltinParam& p = params[i];
    if (!arg) {
      if (!p.optional) {
        diags_.error(DiagKind::MissingArgument, call->range, p.name, callee);
        ok = false;
      }
      continue;
    }
    switch (p.kind) {
      case ParamKind::Value:
      case ParamKind::Mask:
        ok &= !check_value(arg).is_error();
        break;
      case ParamKind::Shape:
        check_size(arg);
        break;
      case ParamKind::Type:
        if (auto t = type_argument(arg)) {
          ok &= !t->is_error();
        } else {
          diags_.error(DiagKind::ExpectedTypeArgument, arg->range, p.name, callee);
          ok = false;
        }
        break;
      default: {
        auto names = enumerators(p.kind);
        std::string_view text = source_text(arg->range);
        for (size_t k = 0; k < names.size(); ++k)
          if (arg->kind == ExprKind::Name && names[k] == arg->name) call->call->enum_args[i] = static_cast<int>(k);
        if (call->call->enum_args[i] < 0) {
          diags_.error(DiagKind::InvalidEnumArgument, arg->range, text, enum_kind_name(p.kind),
                       fmt::format("{}", fmt::join(names, ", ")));
          ok = false;
        }
      }
    }
  }
  return ok;
}

// An ELEMENTWISE built-in (clamp): numbers, scalars or tiles whose shapes
// broadcast; the result has their common type and shape.
Type Checker::check_elementwise(Expr* call) {
  const auto& a = call->call->resolved_args;
  const std::string_view name = call->call->builtin->name;
  const std::string what = fmt::format("'{}'", name);
  Type common = a[0]->type;
  std::optional<TileShape> shape = common.shape;
  for (size_t i = 0; i < a.size(); ++i) {
    const Type& t = a[i]->type;
    if (t.is_error()) return Type::error();
    if (!t.is_arithmetic()) {
      diags_.error(DiagKind::InvalidOperand, a[i]->range, name, t.str());
      return Type::error();
    }
    if (i == 0) continue;
    std::optional<TileShape> joined;
    if (!broadcast(common.with_shape(shape), t, joined, what, call->range)) return Type::error();
    const std::optional<Type> unified = unify(common, t);
    if (!unified) {
      diags_.error(DiagKind::IncompatibleOperands, call->range, name, common.str(), t.str());
      return Type::error();
    }
    common = *unified;
    shape = joined;
  }
  return common.element().with_shape(shape);
}

Type Checker::check_builtin(Expr* call) {
  const auto& a = call->call->resolved_args;
  const Type i32 = Type::scalar_of(ScalarKind::I32);
  if (is_elementwise(call->call->builtin->id)) return check_elementwise(call);
  switch (call->call->builtin->id) {
    case BuiltinId::ProgramId:
    case BuiltinId::NumPrograms: {
      if (!a[0]->type.is_integer() || a[0]->type.is_tile()) {
        diags_.error(DiagKind::CannotConvert, a[0]->range, a[0]->type.str(), "i32", "the program axis");
        return Type::error();
      }
      auto axis = require_constant(a[0], "the program axis");
      if (axis && axis->value && (*axis->value < 0 || *axis->value > 2))
        diags_.error(DiagKind::AxisOutOfRange, a[0]->range, *axis->value);
      return i32;
    }
    case BuiltinId::Rank:
    case BuiltinId::WorldSize: return i32;
    case BuiltinId::Arange: {
      auto shape = tile_shape(a[0], "the size of 'arange'");
      return shape ? i32.with_shape(shape) : Type::error();
    }
    case BuiltinId::Zeros:
    case BuiltinId::Full: {
      auto shape = tile_shape(a[0], fmt::format("the size of '{}'", call->name));
      Type element = a[1]->kind == ExprKind::TypeValue ? a[1]->type_syntax->resolved : a[1]->type;
      if (element.is_tile()) {
        diags_.error(DiagKind::NeedsScalar, a[1]->range, arg_name(call, 1), element.str());
        return Type::error();
      }
      if (element.is_pointer()) {
        diags_.error(DiagKind::ParamTypeNotAllowed, a[1]->range, "tile element of",
                     call->name, element.str());
        return Type::error();
      }
      if (a[1]->kind != ExprKind::TypeValue && !check_literal_fits(a[1], materialize(element))) return Type::error();
      return shape ? materialize(element).with_shape(shape) : Type::error();
    }
    case BuiltinId::Where: {
      const Type &c = a[0]->type, &x = a[1]->type, &y = a[2]->type;
      if (!c.is_bool()) {
        diags_.error(DiagKind::CannotConvert, a[0]->range, c.str(), "bool", "the condition of 'where'");
        return Type::error();
      }
      std::optional<TileShape> cx, shape;
      if (!broadcast(c, x, cx, "'where'", call->range) ||
          !broadcast(x.with_shape(cx), y, shape, "'where'", call->range))
        return Type::error();
      auto common = x.is_pointer() && y.is_pointer() && x.element().same(y.element())
                        ? std::optional<Type>(x.element())
                        : unify(x, y);
      if (!common) {
        diags_.error(DiagKind::IncompatibleOperands, call->range, "where", x.str(), y.str());
        return Type::error();
      }
      return common->with_shape(shape);
    }
    case BuiltinId::Sum:
    case BuiltinId::Max:
    case BuiltinId::Min: return check_reduction(call);
    case BuiltinId::Trans: {
      const Type& t = a[0]->type;
      if (!t.is_tile() || t.shape->rank != 2) {
        diags_.error(DiagKind::WrongTileRank, a[0]->range, "'trans'", "2-D tile", t.str());
        return Type::error();
      }
      return t.with_shape(TileShape(t.shape->dims[1], t.shape->dims[0]));
    }
    case BuiltinId::Reshape: return check_reshape(call);
    case BuiltinId::Dot: return check_dot(call);
    case BuiltinId::Fence:
      if (call->call->enum_args[0] == static_cast<int>(MemoryOrder::Relaxed))
        diags_.error(DiagKind::RelaxedFence, a[0]->range);
      return Type::void_type();
    case BuiltinId::Barrier:
    case BuiltinId::Quiet: return Type::void_type();
    case BuiltinId::NodeRank:
    case BuiltinId::NodeSize: return i32;
    case BuiltinId::Near:
    case BuiltinId::NodePeer:
      // A rank, or a member of my node's team: one integer, as after '@'.
      if (!a[0]->type.is_integer() || a[0]->type.is_tile()) {
        diags_.error(DiagKind::CannotConvert, a[0]->range, a[0]->type.str(), "i32", arg_name(call, 0));
        return Type::error();
      }
      return call->call->builtin->id == BuiltinId::Near ? Type::scalar_of(ScalarKind::Bool) : i32;
    default: return check_memory_op(call);
  }
}

// sum, max and min: of the whole tile, or along an axis (of a 2-D tile, the
// other axis remains; of a 1-D tile, a scalar remains).
Type Checker::check_reduction(Expr* call) {
  const auto& a = call->call->resolved_args;
  const Type& t = a[0]->type;
  if (!t.is_tile()) {
    diags_.error(DiagKind::NeedsTile, a[0]->range, call->name, t.str());
    return Type::error();
  }
  if (!t.is_arithmetic()) {
    diags_.error(DiagKind::InvalidOperand, call->range, call->name, t.str());
    return Type::error();
  }
  Type element = materialize(t.element());
  if (!a[1]) return element;
  auto axis = require_axis(a[1], call, t);
  if (!axis) return Type::error();
  if (t.shape->rank == 1) return element;
  return element.with_shape(TileShape(t.shape->dims[1 - *axis]));
}

// The axis argument of an operation on `tile`: a compile-time integer (not a
// parameter: the result's type depends on it) that names one of its axes.
std::optional<int64_t> Checker::require_axis(Expr* axis, const Expr* call, const Type& tile) {
  if (axis->type.is_error()) return std::nullopt;
  if (!axis->type.is_integer() || axis->type.is_tile()) {
    diags_.error(DiagKind::CannotConvert, axis->range, axis->type.str(), "i32", "the axis");
    return std::nullopt;
  }
  auto c = require_constant(axis, "the axis");
  if (!c) return std::nullopt;
  if (c->symbolic) {
    diags_.error(DiagKind::NotCompileTime, axis->range, "the axis (a number, not a compile-time parameter)");
    return std::nullopt;
  }
  if (*c->value < 0 || *c->value >= tile.shape->rank) {
    diags_.error(DiagKind::TileAxisOutOfRange, axis->range, *c->value, call->name, tile.str());
    return std::nullopt;
  }
  return *c->value;
}

// reshape(x, shape): the same elements, in row-major order, in another shape.
Type Checker::check_reshape(Expr* call) {
  const auto& a = call->call->resolved_args;
  const Type& t = a[0]->type;
  if (!t.is_tile()) {
    diags_.error(DiagKind::NeedsTile, a[0]->range, call->name, t.str());
    return Type::error();
  }
  auto shape = tile_shape(a[1], "the shape of 'reshape'");
  if (!shape) return Type::error();
  auto from = t.shape->elements(), to = shape->elements();
  if (from && to && *from != *to) {
    diags_.error(DiagKind::ReshapeSize, a[1]->range, t.str(), *from, shape->text(), *to);
    return Type::error();
  }
  return t.with_shape(shape);
}

// dot(a, b, acc): (M, K) x (K, N), accumulated into (M, N) in f32 (i32 for i8).
Type Checker::check_dot(Expr* call) {
  const auto& args = call->call->resolved_args;
  const Type &a = args[0]->type, &b = args[1]->type;
  for (const Expr* operand : {args[0], args[1]}) {
    if (!operand->type.is_tile() || operand->type.shape->rank != 2) {
      diags_.error(DiagKind::WrongTileRank, operand->range, "'dot'", "2-D tile", operand->type.str());
      return Type::error();
    }
  }
  auto multipliable = [](const Type& t) {
    return t.is_scalar_kind() && (t.scalar == ScalarKind::F16 || t.scalar == ScalarKind::BF16 ||
                                  t.scalar == ScalarKind::F32 || t.scalar == ScalarKind::I8);
  };
  if (!multipliable(a) || !multipliable(b) || a.scalar != b.scalar) {
    diags_.error(DiagKind::DotElementType, call->range, a.str(), b.str());
    return Type::error();
  }
  if (!(a.shape->dims[1] == b.shape->dims[0])) {
    diags_.error(DiagKind::DotShapeMismatch, call->range, a.str(), b.str());
    return Type::error();
  }
  Type result = Type::scalar_of(a.scalar == ScalarKind::I8 ? ScalarKind::I32 : ScalarKind::F32)
                    .with_shape(TileShape(a.shape->dims[0], b.shape->dims[1]));
  if (const Expr* acc = args[2]; acc && !acc->type.is_error() && !acc->type.same(result)) {
    diags_.error(DiagKind::DotAccumulator, acc->range, result.str(), acc->type.str());
    return Type::error();
  }
  return result;
}

// load, store, the atomics, wait_until and signal.
Type Checker::check_memory_op(Expr* call) {
  const BuiltinInfo& b = *call->call->builtin;
  const auto& a = call->call->resolved_args;
  const Type& pointer = a[0]->type;
  if (!pointer.is_pointer()) {
    diags_.error(DiagKind::NeedsPointer, a[0]->range, call->name, pointer.str());
    return Type::error();
  }
  bool ok = true;
  if ((b.id == BuiltinId::WaitUntil || b.id == BuiltinId::Signal) && pointer.is_tile()) {
    diags_.error(DiagKind::NeedsScalar, a[0]->range, arg_name(call, 0), pointer.str());
    ok = false;
  }
  if (!is_plain_access(b.id) && !atomic_supports(b.id, pointer.scalar)) {
    diags_.error(DiagKind::AtomicElementType, a[0]->range, call->name,
                 scalar_info(pointer.scalar).spelling);
    ok = false;
  }
  Type access = Type::scalar_of(pointer.scalar).with_shape(pointer.shape);
  access.type_param = pointer.type_param;
  if (b.id == BuiltinId::PutSignal) ok &= check_put_signal_flag(call);
  for (size_t i = 1; i < b.params.size(); ++i) {
    if (!a[i] || is_put_signal_flag(b, i)) continue;
    if (b.params[i].kind == ParamKind::Mask) {
      ok &= check_mask(a[i], access);
    } else if (b.params[i].kind == ParamKind::Value) {
      // A value broadcasts to the access's shape, as an operand of an
      // elementwise operation does.
      const Type& v = a[i]->type;
      bool broadcasts = v.is_tile() && access.is_tile() && broadcast_shapes(*v.shape, *access.shape) == access.shape;
      ok &= require_value_convertible(a[i], broadcasts ? access.with_shape(v.shape) : access, arg_name(call, i));
    }
  }
  ok &= check_access_locality(call);
  ok &= check_order(call, param_of_kind(b, ParamKind::Sem),
                    b.id == BuiltinId::AtomicLoad || b.id == BuiltinId::WaitUntil,
                    b.id == BuiltinId::AtomicStore ||
                        (b.id == BuiltinId::Signal &&
                         call->call->enum_args[param_of_kind(b, ParamKind::SignalOp)] !=
                             static_cast<int>(SignalOp::Add)));
  if (!ok) return Type::error();
  bool returns_value = b.id == BuiltinId::Load || b.id == BuiltinId::Get || b.id == BuiltinId::AtomicLoad ||
                       is_atomic_rmw(b.id) || b.id == BuiltinId::AtomicCas;
  return returns_value ? access : Type::void_type();
}

// put_signal's flag and the value it is raised with, which are not part of
// the access through its pointer.
bool Checker::is_put_signal_flag(const BuiltinInfo& b, size_t param) {
  return b.id == BuiltinId::PutSignal && (b.params[param].name == "flag" || b.params[param].name == "signal_value");
}

// put_signal's flag is a signal's pointer: a scalar pointer to a 32- or
// 64-bit integer, which signal_value converts to.
bool Checker::check_put_signal_flag(Expr* call) {
  const BuiltinInfo& b = *call->call->builtin;
  const size_t flag_index = 2;
  Expr* flag = call->call->resolved_args[flag_index];
  Expr* value = call->call->resolved_args[flag_index + 1];
  const Type& pointer = flag->type;
  if (!pointer.is_pointer()) {
    diags_.error(DiagKind::NeedsPointer, flag->range, call->name, pointer.str());
    return false;
  }
  if (pointer.is_tile()) {
    diags_.error(DiagKind::NeedsScalar, flag->range, arg_name(call, flag_index), pointer.str());
    return false;
  }
  if (!atomic_supports(BuiltinId::Signal, pointer.scalar)) {
    diags_.error(DiagKind::AtomicElementType, flag->range, b.name, scalar_info(pointer.scalar).spelling);
    return false;
  }
  Type flag_value = Type::scalar_of(pointer.scalar);
  flag_value.type_param = pointer.type_param;
  return require_value_convertible(value, flag_value, arg_name(call, flag_index + 1));
}

bool Checker::check_mask(Expr* mask, const Type& access) {
  const Type& m = mask->type;
  if (!m.is_bool()) {
    diags_.error(DiagKind::MaskNotBool, mask->range, m.str());
    return false;
  }
  if (m.is_tile() && (!access.is_tile() || broadcast_shapes(*m.shape, *access.shape) != access.shape)) {
    diags_.error(DiagKind::MaskShapeMismatch, mask->range, m.str(), access.str());
    return false;
  }
  return true;
}

// A load can only acquire and a store can only release.
bool Checker::check_order(Expr* call, size_t sem_index, bool is_load, bool is_store) {
  if (sem_index >= call->call->enum_args.size() || call->call->enum_args[sem_index] < 0) return true;
  auto order = static_cast<MemoryOrder>(call->call->enum_args[sem_index]);
  std::string_view name = enumerators(ParamKind::Sem)[call->call->enum_args[sem_index]];
  std::string what = fmt::format("'{}'", call->name);
  llvm::SMRange range = call->call->resolved_args[sem_index]->range;
  if (is_load && (order == MemoryOrder::Release || order == MemoryOrder::AcqRel)) {
    diags_.error(DiagKind::OrderNotForLoad, range, name, what);
    return false;
  }
  if (is_store && (order == MemoryOrder::Acquire || order == MemoryOrder::AcqRel)) {
    diags_.error(DiagKind::OrderNotForStore, range, name, what);
    return false;
  }
  return true;
}

}  // namespace irisc
