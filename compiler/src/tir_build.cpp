// The TIR builder: the checked tree to TIR, one visitor.
//
// The checker leaves some decisions to context; the builder takes each one
// here, once, so that no later pass or printer has to:
//   - Literal typing. A literal takes the type of the operation it is part of
//     (`x + 1` with x: i64 computes in i64), passed down as a hint; a wholly
//     literal expression takes its context's type (`let big: i64 = 1 << 40`).
//   - Broadcast. A scalar where a tile is expected becomes a Broadcast, and
//     a tile where a tile of a larger shape is expected a BroadcastTo.
//   - Narrowing. C++ promotes small integers and 16-bit floats before
//     arithmetic (i8 + i8 is int), so an operation on them computes in the
//     promoted type and a Convert narrows the result back to the .iris type.
//   - Translation. `p @ r` is a Translate whose result is in the Remote
//     address space, and pointer arithmetic keeps its pointer's space, so
//     later passes read from the type where a pointer points. In multinode
//     code a pointer that the checker found may address a far rank (Any), and
//     a variable that holds one, is in the AnyRank space.
//   - Built-ins become the TIR operation of the same name (builtins.def,
//     tir_ops.def), their enumeration arguments attributes.
#include "irisc/passes.h"

#include "irisc/builtins.h"

#include <llvm/Support/ErrorHandling.h>

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

namespace irisc {
namespace {

// How each built-in lowers: the TIR operation of its name, for the
// read-modify-write atomics AtomicRmw with the iris::AtomicOp, and for those
// of multi-node code the operation builtins.def names (put: Store).
struct BuiltinLowering {
  TirOp op;
  std::string_view atomic_op;
};
constexpr BuiltinLowering kBuiltinLowering[] = {
#define BUILTIN(Name, Spelling, Params) {TirOp::Name, ""},
#define ATOMIC_RMW(Name, Spelling, Params, Op) {TirOp::AtomicRmw, #Op},
#define MULTINODE(Name, Spelling, Params, Op) {TirOp::Op, ""},
#include "irisc/builtins.def"
};

TirOp operator_op(TokenKind token, bool unary) {
  if (unary) {
    switch (token) {
#define TIR_UNARY(Name, Spelling, Token, Runtime) \
  case TokenKind::Token: return TirOp::Name;
#include "irisc/tir_ops.def"
      default: break;
    }
  } else {
    switch (token) {
#define TIR_BINARY(Name, Spelling, Token, Runtime, Traits) \
  case TokenKind::Token: return TirOp::Name;
#include "irisc/tir_ops.def"
      default: break;
    }
  }
  throw std::logic_error("TIR builder: an operator without a TIR operation");
}

// The type C++ computes a scalar in: small integers and bool as int, 16-bit
// floats as float.
ScalarKind promoted(ScalarKind s) {
  switch (s) {
    case ScalarKind::Bool:
    case ScalarKind::I8:
    case ScalarKind::I16:
    case ScalarKind::U8:
    case ScalarKind::U16: return ScalarKind::I32;
    case ScalarKind::F16:
    case ScalarKind::BF16: return ScalarKind::F32;
    default: return s;
  }
}

// C++'s usual arithmetic conversions of two promoted scalars.
ScalarKind common_scalar(ScalarKind a, ScalarKind b) {
  const ScalarInfo &ia = scalar_info(a), &ib = scalar_info(b);
  if (ia.is_float || ib.is_float)
    return a == ScalarKind::F64 || b == ScalarKind::F64 ? ScalarKind::F64 : ScalarKind::F32;
  if (ia.is_signed == ib.is_signed) return ia.bits >= ib.bits ? a : b;
  ScalarKind u = ia.is_signed ? b : a, s = ia.is_signed ? a : b;
  return scalar_info(u).bits >= scalar_info(s).bits ? u : s;
}

// Whether C++ arithmetic on `t` yields another type, which must be narrowed
// back (pointers and bools never are). A type parameter is narrowed back
// always: for its instances that C++ promotes, and harmlessly for the others.
bool computes_promoted(const Type& t) {
  if (t.is_pointer()) return false;
  return !t.type_param.empty() || (!t.is_bool() && promoted(t.scalar) != t.scalar);
}

// The scalar type a wholly literal expression takes: its context's, where
// that is arithmetic.
const Type* literal_context(const Expr* e, const Type* hint) {
  if (!e->type.literal || !e->type.is_arithmetic() || !hint || !hint->is_scalar_kind() ||
      !hint->is_arithmetic())
    return nullptr;
  return hint;
}

// The type an operation's literal operands take: the other side's.
const Type* literal_hint(const Expr* a, const Expr* b) {
  bool la = a->type.literal, lb = b->type.literal;
  if (la && !lb) return &b->type;
  if (lb && !la) return &a->type;
  return nullptr;
}

class Builder {
 public:
  explicit Builder(TirModule& module) : m_(module) {}

  // The file's items, after the constants and device functions of every
  // module it imports (each once, after the modules it imports itself).
  void module(const Module& ast) {
    std::vector<const Module*> imported;
    collect_modules(ast, imported);
    std::vector<const Function*> order;
    for (const Module* module : imported) {
      TirImportedModule* unit = &m_.modules.emplace_back(TirImportedModule{module->source_name, ""});
      declare_items(*module, unit, /*kernels=*/false, order);
    }
    declare_items(ast, nullptr, /*kernels=*/false, order);
    declare_items(ast, nullptr, /*kernels=*/true, order);
    for (const Function* fn : order) function(*fn, *functions_.at(fn));
  }

 private:
  // The modules `ast` imports, depth first, each after those it imports.
  static void collect_modules(const Module& ast, std::vector<const Module*>& out) {
    for (const Item& item : ast.items) {
      const Module* imported = item.kind == Item::Kind::Import ? item.import->module : nullptr;
      if (!imported || std::find(out.begin(), out.end(), imported) != out.end()) continue;
      collect_modules(*imported, out);
      out.push_back(imported);
    }
  }

  // The imported headers and constants of `ast` (with its device functions)
  // or its kernels, declared before any body is built, so that a call may
  // precede its callee.
  void declare_items(const Module& ast, const TirImportedModule* unit, bool kernels,
                     std::vector<const Function*>& order) {
    for (const Item& item : ast.items) {
      if (kernels) {
        if (item.kind == Item::Kind::Function && item.function->is_kernel) declare_function(*item.function, unit, order);
        continue;
      }
      if (item.kind == Item::Kind::Import && !item.import->header.empty() &&
          std::find(m_.headers.begin(), m_.headers.end(), item.import->header) == m_.headers.end())
        m_.headers.push_back(item.import->header);
      if (item.kind == Item::Kind::Const) {
        const Binding* b = item.constant->binding;
        m_.constants.push_back({variable(b, b->type), b->constant->text(), unit});
      }
      if (item.kind == Item::Kind::Function && !item.function->is_kernel) declare_function(*item.function, unit, order);
    }
  }

  void declare_function(const Function& fn, const TirImportedModule* unit, std::vector<const Function*>& order) {
    order.push_back(&fn);
    TirFunction* f = functions_[&fn] = m_.functions.emplace_back(m_.make_function());
    f->module = unit;
  }

  // ------------------------------------------------------------ items
  TirVar* variable(const Binding* b, const Type& type) {
    TirVar* var = m_.make_var(b->name, tir_type(type));
    if (type.is_pointer() && b->locality == Locality::Any) var->type.space = AddressSpace::AnyRank;
    vars_[b] = var;
    return var;
  }

  void function(const Function& fn, TirFunction& f) {
    f.is_kernel = fn.is_kernel;
    f.multinode = fn.multinode;
    f.name = fn.name;
    f.loc = fn.range.Start;
    f.result = tir_type(fn.result);
    for (const Param& p : fn.ct_params) {
      f.ct_params.push_back(variable(p.binding, p.binding->type));
      f.ct_defaults.push_back(p.default_value ? p.default_value->constant->text() : "");
      const std::optional<int64_t>& value = p.is_type() ? std::nullopt : p.binding->constant->value;
      f.ct_default_values.push_back(p.default_value && value ? std::to_string(*value) : "");
      f.ct_admitted.emplace_back();
      for (const TypeSyntax* t : p.admitted) f.ct_admitted.back().push_back(t->scalar);
    }
    for (size_t i = 0; i < fn.params.size(); ++i) f.params.push_back(variable(fn.params[i].binding, fn.param_types[i]));
    function_ = &fn;
    f.body = block(fn.body);
  }

  // -------------------------------------------------------- statements
  TirStmt* block(const Stmt* b) {
    TirStmt* s = m_.make_stmt(TirStmtKind::Block, b->range.Start);
    for (const Stmt* inner : b->stmts) s->stmts.push_back(stmt(inner));
    return s;
  }

  static TirStmtKind tir_kind(StmtKind kind) {
    switch (kind) {
      case StmtKind::Let: return TirStmtKind::Let;
      case StmtKind::Var: return TirStmtKind::Var;
      case StmtKind::Assign: return TirStmtKind::Assign;
      case StmtKind::ExprStmt: return TirStmtKind::Eval;
      case StmtKind::If: return TirStmtKind::If;
      case StmtKind::For: return TirStmtKind::For;
      case StmtKind::While: return TirStmtKind::While;
      case StmtKind::Break: return TirStmtKind::Break;
      case StmtKind::Continue: return TirStmtKind::Continue;
      case StmtKind::Return: return TirStmtKind::Return;
      case StmtKind::Block: return TirStmtKind::Block;
    }
    throw std::logic_error("TIR builder: unknown statement kind");
  }

  TirStmt* stmt(const Stmt* s) {
    if (s->kind == StmtKind::Block) return block(s);
    TirStmt* t = m_.make_stmt(tir_kind(s->kind), s->range.Start);
    switch (s->kind) {
      case StmtKind::Let:
      case StmtKind::Var:
        // The value first: it may read an outer binding of the same name.
        t->value = bound(s->value, s->binding->type);
        t->var = variable(s->binding, s->binding->type);
        t->keeps_value_type = s->kind == StmtKind::Let && !s->declared_type && !s->value->type.literal;
        break;
      case StmtKind::Assign: {
        const Binding& b = *s->target->binding;
        t->var = vars_.at(&b);
        t->value = bound(s->value, b.type);
        if (s->assign_op != TokenKind::Eq) {
          TirValue* current = m_.make_value(TirOp::Read, t->var->type, s->target->range.Start);
          current->attrs<ReadAttrs>().var = t->var;
          t->value = combine(compound_operator(s->assign_op), current, b.type, t->value, s->value->type, b.type,
                             t->loc);
        }
        break;
      }
      case StmtKind::For:
        t->low = expr(s->low);
        t->high = expr(s->high);
        if (s->step) t->step = expr(s->step, &s->binding->type);
        if (const Expr* stages = s->stages; stages && stages->constant)
          t->stages = Shape{stages->constant->symbolic ? stages->constant->symbol : std::string_view{},
                            stages->constant->value};
        t->var = variable(s->binding, s->binding->type);
        break;
      case StmtKind::Return:
        if (s->value) t->value = bound(s->value, function_->result);
        break;
      default:  // ExprStmt, If, While: an expression, if any
        if (s->value) t->value = expr(s->value);
        break;
    }
    if (s->body) t->body = block(s->body);
    if (const Stmt* e = s->else_body) t->else_body = e->kind == StmtKind::If ? stmt(e) : block(e);
    return t;
  }

  // ------------------------------------------------------- expressions
  // `e` stored into something of type `to`: a scalar fills a tile.
  TirValue* bound(const Expr* e, const Type& to) {
    TirValue* v = expr(e, &to);
    if (!to.is_tile() || e->type.is_tile()) return v;
    TirValue* b = m_.make_value(TirOp::Broadcast, tir_type(to), v->loc);
    b->operands.push_back(v);
    return b;
  }

  // An operand of an elementwise operation over tiles shaped like `shape`.
  TirValue* broadcast_to(TirValue* v, const TirType& shape) {
    if (!v || !shape.is_tile() || v->type.dims == shape.dims) return v;
    TirOp op = v->type.is_tile() ? TirOp::BroadcastTo : TirOp::Broadcast;
    TirValue* b = m_.make_value(op, v->type.shaped_like(shape), v->loc);
    b->operands.push_back(v);
    return b;
  }

  TirValue* convert(TirValue* v, TirType to) {
    TirValue* c = m_.make_value(TirOp::Convert, std::move(to), v->loc);
    c->operands.push_back(v);
    return c;
  }

  // An operation whose C++ result may be promoted: computed in the promoted
  // type, then narrowed back to `result`.
  TirValue* narrowed(TirValue* v, const Type& result) {
    if (!computes_promoted(result)) return v;
    TirType t = v->type;
    v->type = v->type.with_scalar(promoted(result.scalar));
    return convert(v, t);
  }

  // A literal of the scalar type `type` (a type parameter's too).
  TirValue* constant(const Expr* e, const Type& type, ConstantAttrs::Literal literal) {
    TirValue* v = m_.make_value(TirOp::Constant, tir_type(type.element()), e->range.Start);
    v->attrs<ConstantAttrs>().literal = literal;
    return v;
  }

  // A literal takes the type of the operation it is part of (`hint`).
  TirValue* literal(const Expr* e, const Type* hint) {
    const Type& s = hint && hint->is_scalar_kind() ? *hint : e->type;
    switch (e->kind) {
      case ExprKind::FloatLiteral: {
        TirValue* v = constant(e, s, ConstantAttrs::Literal::Float);
        v->attrs<ConstantAttrs>().float_value = e->float_value;
        return v;
      }
      case ExprKind::BoolLiteral: {
        TirValue* v = constant(e, Type::scalar_of(ScalarKind::Bool), ConstantAttrs::Literal::Bool);
        v->attrs<ConstantAttrs>().bool_value = e->bool_value;
        return v;
      }
      default: {
        TirValue* v = constant(e, s, ConstantAttrs::Literal::Int);
        v->attrs<ConstantAttrs>().int_bits = e->int_value;
        return v;
      }
    }
  }

  TirValue* expr(const Expr* e, const Type* hint = nullptr) {
    TirValue* v = value_of(e, hint);
    if (e->type.is_pointer() && e->locality == Locality::Any) v->type.space = AddressSpace::AnyRank;
    return v;
  }

  TirValue* value_of(const Expr* e, const Type* hint) {
    // An integer expression of literals was folded by the checker, which
    // also checked that the value fits the context.
    if ((e->kind == ExprKind::Binary || e->kind == ExprKind::Unary) && e->type.literal && e->type.is_integer() &&
        e->constant && !e->constant->symbolic && e->constant->value) {
      const Type* context = literal_context(e, hint);
      TirValue* v = constant(e, context ? *context : e->type, ConstantAttrs::Literal::SignedInt);
      v->attrs<ConstantAttrs>().int_bits = static_cast<uint64_t>(*e->constant->value);
      return v;
    }
    switch (e->kind) {
      case ExprKind::IntLiteral:
      case ExprKind::FloatLiteral:
      case ExprKind::BoolLiteral: return literal(e, hint);
      case ExprKind::Name: {
        // A module constant is its value; a compile-time parameter stays a name.
        if (e->constant && !e->constant->symbolic && e->binding->kind == Binding::Kind::Const) {
          TirValue* v = m_.make_value(TirOp::NamedConstant, tir_type(e->type), e->range.Start);
          v->attrs<TextAttrs>().text = m_.save(e->constant->text());
          return v;
        }
        TirVar* var = vars_.at(e->binding);
        TirValue* v = m_.make_value(TirOp::Read, var->type, e->range.Start);
        v->attrs<ReadAttrs>().var = var;
        return v;
      }
      case ExprKind::Unary: {
        TirValue* v = m_.make_value(operator_op(e->op, true), tir_type(e->type), e->range.Start);
        v->operands.push_back(expr(e->operands[0], literal_context(e, hint)));
        return e->op == TokenKind::Bang ? v : narrowed(v, e->type);
      }
      case ExprKind::Binary: return binary(e, hint);
      case ExprKind::Cast: return convert(expr(e->operands[0]), tir_type(e->type));
      case ExprKind::Translate: {
        TirType type = tir_type(e->type);
        type.space = AddressSpace::Remote;
        TirValue* v = m_.make_value(TirOp::Translate, type, e->range.Start);
        v->operands = {expr(e->operands[0]), expr(e->operands[1])};
        return v;
      }
      case ExprKind::Call:
        if (e->call->builtin) return builtin(e, hint);
        return e->call->callee->imported_from ? imported_call(e) : device_call(e);
      case ExprKind::AddAxis: {
        TirValue* v = m_.make_value(TirOp::AddAxis, tir_type(e->type), e->range.Start);
        v->operands.push_back(expr(e->operands[0]));
        v->attrs<AxisAttrs>().axis = static_cast<int>(e->int_value);
        return v;
      }
      case ExprKind::TypeValue:  // only zeros takes one, and reads the call's type
      case ExprKind::Shape: break;  // only sizes are shapes, and they are part of the type
    }
    throw std::logic_error("TIR builder: a type or shape used as a value");
  }

  // `lhs op rhs`, narrowed back to the checked result type where C++ would
  // promote, and where the operands' types differ from it.
  TirValue* combine(TokenKind op, TirValue* lhs, const Type& lhs_type, TirValue* rhs, const Type& rhs_type,
                    const Type& result, llvm::SMLoc loc) {
    TirType type = tir_type(result);
    TirValue* v = m_.make_value(operator_op(op, false), type, loc);
    v->operands = {broadcast_to(lhs, type), broadcast_to(rhs, type)};
    if (result.is_pointer()) {
      v->type.space = (lhs->type.is_pointer() ? lhs : rhs)->type.space;
      return v;
    }
    if (result.is_bool()) return v;
    auto same = [&](const Type& operand) {
      return operand.element().same(result.element()) && operand.type_param == result.type_param;
    };
    if (same(lhs_type) && same(rhs_type) && !computes_promoted(result)) return v;
    v->type = v->type.with_scalar(common_scalar(promoted(lhs_type.scalar), promoted(rhs_type.scalar)));
    return convert(v, type);
  }

  TirValue* binary(const Expr* e, const Type* outer) {
    const Expr* a = e->operands[0];
    const Expr* b = e->operands[1];
    const Type* hint = literal_hint(a, b);
    Type result = e->type;
    if (const Type* context = literal_context(e, outer); context && !hint) {
      hint = context;  // wholly literal (floats: the checker folds integers only)
      result = context->element();
    }
    Type lt = a->type.literal && hint ? hint->element() : a->type;
    Type rt = b->type.literal && hint ? hint->element() : b->type;
    return combine(e->op, expr(a, hint), lt, expr(b, hint), rt, result, e->range.Start);
  }

  TirValue* imported_call(const Expr* e) {
    TirValue* v = m_.make_value(TirOp::CallImported, tir_type(e->type), e->range.Start);
    v->attrs<TextAttrs>().text = e->name;
    for (size_t i = 0; i < e->call->resolved_args.size(); ++i)
      v->operands.push_back(
          broadcast_to(expr(e->call->resolved_args[i], &e->call->callee->param_types[i]), v->type));
    return v;
  }

  TirValue* device_call(const Expr* e) {
    TirValue* v = m_.make_value(TirOp::CallDevice, tir_type(e->type), e->range.Start);
    auto& attrs = v->attrs<CallAttrs>();
    attrs.callee = functions_.at(e->call->callee);
    for (size_t i = 0; i < e->call->resolved_args.size(); ++i)
      v->operands.push_back(bound(e->call->resolved_args[i], e->call->param_types[i]));
    const Call& call = *e->call;
    for (size_t i = 0; i < call.ct_args.size(); ++i)
      attrs.template_args.push_back(call.callee->ct_params[i].is_type()
                                        ? TirTemplateArg{{}, tir_type(call.ct_types[i])}
                                        : TirTemplateArg{m_.save(call.ct_values[i].text()), {}});
    return v;
  }

  // The enumerator a built-in's argument of kind `kind` names; empty if none.
  static std::string_view enum_arg(const Expr* e, ParamKind kind) {
    const auto& params = e->call->builtin->params;
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].kind == kind && e->call->enum_args[i] >= 0)
        return enumerators(kind)[e->call->enum_args[i]];
    return "";
  }

  TirValue* builtin(const Expr* e, const Type* hint) {
    const auto& a = e->call->resolved_args;
    const BuiltinLowering& lowering = kBuiltinLowering[static_cast<size_t>(e->call->builtin->id)];
    TirValue* v = m_.make_value(lowering.op, tir_type(e->type), e->range.Start);
    const MemorySemantics order{enum_arg(e, ParamKind::Sem), enum_arg(e, ParamKind::Scope)};
    std::visit(Overloaded{
                   [&](OrderAttrs& o) { o.order = order; },
                   [&](RmwAttrs& rmw) { rmw = {lowering.atomic_op, order}; },
                   [&](WaitAttrs& wait) { wait = {enum_arg(e, ParamKind::Cmp), order}; },
                   [&](SignalAttrs& signal) {
                     signal = {enum_arg(e, ParamKind::SignalOp) == enumerators(ParamKind::SignalOp)[int(SignalOp::Add)],
                               order};
                   },
                   [](auto&) {},  // the other attributes come from the arguments, below
               },
               v->payload);
    // The pointee, as the type of literal values stored or compared.
    Type access = a.empty() || !a[0] ? Type::error() : a[0]->type.element();
    access.kind = Type::Kind::Scalar;
    auto operand = [&](size_t i, const Type* operand_hint = nullptr) -> TirValue* {
      return a[i] ? expr(a[i], operand_hint) : nullptr;
    };
    // Masks, values and `other` of a tile of pointers are tiles too.
    auto per_pointer = [&](size_t i, const Type* operand_hint = nullptr) {
      return broadcast_to(operand(i, operand_hint), v->operands[0]->type);
    };
    switch (e->call->builtin->id) {
      case BuiltinId::ProgramId:
      case BuiltinId::NumPrograms:
      case BuiltinId::Near:
      case BuiltinId::NodePeer:
      case BuiltinId::Trans:
      case BuiltinId::Reshape: v->operands = {operand(0)}; return v;
      case BuiltinId::Sum:
      case BuiltinId::Max:
      case BuiltinId::Min:
        v->operands = {operand(0)};
        // Along the only axis of a 1-D tile is the whole tile.
        if (a[1] && a[0]->type.shape->rank == 2) v->attrs<AxisAttrs>().axis = static_cast<int>(*a[1]->constant->value);
        return v;
      case BuiltinId::Dot: {
        TirValue* acc = operand(2);
        if (!acc) acc = m_.make_value(TirOp::Zeros, v->type, v->loc);
        v->operands = {operand(0), operand(1), acc};
        return v;
      }
      case BuiltinId::Full: v->operands = {operand(1, &e->type)}; return v;
      case BuiltinId::Where: {  // literal branches take the context's type
        const Type* context = literal_context(e, hint);
        Type element = (context ? *context : e->type).element();
        v->operands = {broadcast_to(operand(0), v->type), broadcast_to(operand(1, &element), v->type),
                       broadcast_to(operand(2, &element), v->type)};
        return narrowed(v, e->type);
      }
#define BUILTIN(Name, Spelling, Params)
#define ELEMENTWISE(Name, Spelling, Params, Runtime) case BuiltinId::Name:
#include "irisc/builtins.def"
      {  // every argument in the result's element type (literals take the context's), and shape
        const Type* context = literal_context(e, hint);
        const Type element = (context ? *context : e->type).element();
        for (size_t i = 0; i < a.size(); ++i) {
          TirValue* x = operand(i, &element);
          if (x->type.scalar != v->type.scalar || x->type.type_param != v->type.type_param)
            x = convert(x, x->type.with_scalar(v->type.scalar));
          v->operands.push_back(broadcast_to(x, v->type));
        }
        return v;
      }
      case BuiltinId::Load:
      case BuiltinId::Get:
        v->operands = {operand(0)};
        v->operands.append({per_pointer(1), per_pointer(2, &access)});
        return v;
      case BuiltinId::Store:
      case BuiltinId::Put:
        v->operands = {operand(0)};
        v->operands.append({per_pointer(1, &access), per_pointer(2)});
        return v;
      case BuiltinId::PutSignal: {  // (ptr, value, flag, signal_value, op, mask)
        v->attrs<SignalAttrs>().order = {"release", "sys"};  // the flag's, fixed (language.md 9.1)
        Type flag = a[2]->type.element();
        flag.kind = Type::Kind::Scalar;
        v->operands = {operand(0)};
        v->operands.append({per_pointer(1, &access), per_pointer(5), operand(2), operand(3, &flag)});
        return v;
      }
      case BuiltinId::AtomicCas:
        v->operands = {operand(0)};
        v->operands.append({per_pointer(1, &access), per_pointer(2, &access)});
        return v;
      case BuiltinId::AtomicLoad: v->operands = {operand(0)}; return v;
      case BuiltinId::AtomicStore:
      case BuiltinId::Signal:
        v->operands = {operand(0)};
        v->operands.push_back(per_pointer(1, &access));
        return v;
      case BuiltinId::WaitUntil:  // (ptr, op, value, ...)
        v->operands = {operand(0)};
        v->operands.push_back(per_pointer(2, &access));
        return v;
#define BUILTIN(Name, Spelling, Params)
#define ATOMIC_RMW(Name, Spelling, Params, Op) case BuiltinId::Name:
#include "irisc/builtins.def"
        v->operands = {operand(0)};
        v->operands.append({per_pointer(1, &access), per_pointer(2)});
        return v;
      case BuiltinId::Rank:
      case BuiltinId::WorldSize:
      case BuiltinId::NodeRank:
      case BuiltinId::NodeSize:
      case BuiltinId::Quiet:
      case BuiltinId::Arange:
      case BuiltinId::Zeros:
      case BuiltinId::Fence:
      case BuiltinId::Barrier: return v;  // no value operands
    }
    // Every built-in has its case above, and no default: a new built-in is a
    // compile error here (-Wswitch, -Werror) until its operands are built.
    llvm_unreachable("a built-in the TIR builder has no case for");
  }

  TirModule& m_;
  const Function* function_ = nullptr;
  std::unordered_map<const Binding*, TirVar*> vars_;
  std::unordered_map<const Function*, TirFunction*> functions_;
};

}  // namespace

TirModule build_tir(const Module& module, std::string_view source_name) {
  TirModule m;
  m.source_name = source_name;
  Builder(m).module(module);
  return m;
}

}  // namespace irisc
