// The C++ emitter: one visitor over the checked tree.
//
// Every kernel becomes a struct template over its compile-time parameters,
// holding `run` (the body of one program instance) and `launch` (the typed
// host entry point). Device functions become inline functions. Expressions map
// one to one onto the tile library's named operations (iris::add, iris::load,
// ...); the library keeps offsets built from arange symbolic, so contiguous
// accesses vectorise without analysis here. `p @ r` becomes one
// iris::translate_to per pointer or pointer tile, and none at all when r is
// rank(). Each statement is preceded by a #line directive so that C++
// compiler errors and debuggers point into the .iris file.
#include "irisc/emit.h"

#include "irisc/builtins.h"

#include <fmt/format.h>

#include <cctype>
#include <unordered_map>
#include <unordered_set>

namespace irisc {
namespace {

bool is_cpp_keyword(std::string_view name) {
  static const std::unordered_set<std::string_view> keywords = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "case",
      "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const",
      "consteval", "constexpr", "constinit", "const_cast", "co_await", "co_return", "co_yield",
      "decltype", "default", "delete", "do", "double", "dynamic_cast", "enum", "explicit",
      "export", "extern", "float", "friend", "goto", "inline", "int", "long", "mutable",
      "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq",
      "private", "protected", "public", "register", "reinterpret_cast", "requires", "short",
      "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch",
      "template", "this", "thread_local", "throw", "try", "typedef", "typeid", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "xor", "xor_eq",
      "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
      "std", "iris", "main"};
  return keywords.contains(name);
}

// User names that would collide with C++ or with generated names get a '_'.
std::string cpp_name(std::string_view name) {
  if (is_cpp_keyword(name) || name.starts_with("iris_")) return fmt::format("{}_", name);
  return std::string(name);
}

// `text` escaped for a C++ string literal (file names).
std::string c_string(std::string_view text) {
  std::string s;
  for (char c : text) {
    if (c == '"' || c == '\\') s += '\\';
    s += c;
  }
  return s;
}

// The namespace of a file's items: its name up to the first '.', other
// characters than letters and digits as single '_' inside it, and "_iris"
// ("all_gather.iris" -> all_gather_iris, "<stdin>" -> stdin_iris).
std::string module_namespace(std::string_view source_name) {
  std::string_view stem = source_name.substr(source_name.find_last_of("/\\") + 1);
  stem = stem.substr(0, stem.find('.'));
  std::string name;
  for (char c : stem) {
    if (std::isalnum(static_cast<unsigned char>(c))) name += c;
    else if (!name.empty() && name.back() != '_') name += '_';
  }
  if (!name.empty() && name.back() == '_') name.pop_back();
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name.insert(0, "m");
  return name + "_iris";
}

std::string scalar_cpp(ScalarKind s) { return std::string(scalar_info(s).cpp_type); }

std::string element_cpp(const Type& t) {
  return t.is_pointer() ? scalar_cpp(t.scalar) + "*" : scalar_cpp(t.scalar);
}

std::string type_cpp(const Type& t) {
  if (t.is_void()) return "void";
  if (!t.is_tile()) return element_cpp(t);
  return fmt::format("iris::Tile<{}, {}>", element_cpp(t), t.shape->text());
}

std::string_view op_function(TokenKind op) {
  switch (op) {
    case TokenKind::Plus: return "add";
    case TokenKind::Minus: return "sub";
    case TokenKind::Star: return "mul";
    case TokenKind::Slash: return "div";
    case TokenKind::Percent: return "mod";
    case TokenKind::Amp: return "bit_and";
    case TokenKind::Pipe: return "bit_or";
    case TokenKind::Caret: return "bit_xor";
    case TokenKind::Shl: return "shl";
    case TokenKind::Shr: return "shr";
    case TokenKind::Less: return "lt";
    case TokenKind::LessEq: return "le";
    case TokenKind::Greater: return "gt";
    case TokenKind::GreaterEq: return "ge";
    case TokenKind::EqEq: return "eq";
    case TokenKind::BangEq: return "ne";
    case TokenKind::AmpAmp: return "logical_and";
    case TokenKind::PipePipe: return "logical_or";
    case TokenKind::Bang: return "logical_not";
    case TokenKind::Tilde: return "bit_not";
    default: return "";
  }
}

// Element types that C++ arithmetic keeps as they are (no promotion to int).
bool arithmetic_keeps(ScalarKind s) {
  return s == ScalarKind::I32 || s == ScalarKind::I64 || s == ScalarKind::U32 ||
         s == ScalarKind::U64 || s == ScalarKind::F32 || s == ScalarKind::F64;
}

class Emitter {
 public:
  Emitter(const llvm::SourceMgr& sources, const EmitOptions& options, llvm::raw_ostream& out)
      : sources_(sources), options_(options), out_(out), module_namespace_(module_namespace(options.source_name)) {}

  void module(const Module& m) {
    out_ << fmt::format(
        "// Generated by irisc from {}. Do not edit: change the .iris file and run irisc "
        "again.\n#pragma once\n\n#include <iris/kernel.hpp>\n",
        options_.source_name);
    // Imported headers after the runtime, which defines HIP's function
    // qualifiers for the CPU target; by absolute path, so the generated file
    // builds from any folder.
    for (const Item& item : m.items)
      if (item.kind == Item::Kind::Import && !item.import->header.empty())
        out_ << fmt::format("#include \"{}\"\n", c_string(item.import->header));
    // The file's items live in a namespace of their own, so that the constants
    // and device functions of several .iris files can share names in one
    // program; the kernels are also named in iris_kernels, for host code.
    out_ << fmt::format("\nnamespace iris_kernels {{\nnamespace {} {{\n", module_namespace_);
    for (const Item& item : m.items) {
      if (item.kind == Item::Kind::Const) constant(*item.constant);
    }
    for (const Item& item : m.items)
      if (item.kind == Item::Kind::Function && !item.function->is_kernel) device_function(*item.function);
    for (const Item& item : m.items)
      if (item.kind == Item::Kind::Function && item.function->is_kernel) kernel(*item.function);
    out_ << fmt::format("\n}}  // namespace {}\n\n", module_namespace_);
    for (const Item& item : m.items)
      if (item.kind == Item::Kind::Function && item.function->is_kernel)
        out_ << fmt::format("using {}::{};\n", module_namespace_, cpp_name(item.function->name));
    out_ << "\n}  // namespace iris_kernels\n";
    instantiations(m);
  }

 private:
  // ------------------------------------------------------------- items
  void constant(const ConstDecl& c) {
    out_ << fmt::format("\ninline constexpr {} {} = {};\n", type_cpp(c.binding->type),
                        cpp_name(c.name), c.binding->constant->text());
  }

  std::string params(const Function& fn) {
    std::string s = "[[maybe_unused]] const iris::Program& iris_program";
    for (size_t i = 0; i < fn.params.size(); ++i)
      s += fmt::format(", [[maybe_unused]] {} {}", type_cpp(fn.param_types[i]), declare(fn.params[i].binding));
    return s;
  }

  void device_function(const Function& fn) {
    begin_function(fn);
    out_ << "\n";
    line_directive(fn.range.Start);
    out_ << fmt::format("[[maybe_unused]] IRIS_HD inline {} {}({}) ", type_cpp(fn.result),
                        cpp_name(fn.name), params(fn));
    block(fn.body, 0);
    out_ << "\n";
  }

  void kernel(const Function& fn) {
    begin_function(fn);
    std::string name = cpp_name(fn.name);
    std::vector<std::string> ct;
    for (const Param& p : fn.ct_params) {
      std::string decl = fmt::format("{} {}", type_cpp(p.binding->type), declare(p.binding));
      if (p.default_value) decl += " = " + p.default_value->constant->text();
      ct.push_back(decl);
    }
    std::vector<std::string> args, arg_names;
    for (size_t i = 0; i < fn.params.size(); ++i) {
      args.push_back(fmt::format("{} {}", type_cpp(fn.param_types[i]), cpp_name(fn.params[i].name)));
      arg_names.push_back(cpp_name(fn.params[i].name));
    }
    out_ << "\n";
    line_directive(fn.range.Start);
    if (!ct.empty()) out_ << fmt::format("template <{}>\n", fmt::join(ct, ", "));
    out_ << fmt::format("struct {} {{\n", name);
    out_ << fmt::format("  IRIS_DEVICE static void run({}) ", params(fn));
    block(fn.body, 1);
    out_ << "\n\n";
    out_ << fmt::format(
        "  // Launches one program instance per grid cell on the calling rank.\n"
        "  static void launch(iris::Grid grid, const iris::DeviceContext& ctx{}{}, "
        "iris::Stream stream = {{}}) {{\n"
        "    iris::launch_kernel<{}>(grid, stream, ctx{}{});\n  }}\n}};\n",
        args.empty() ? "" : ", ", fmt::join(args, ", "), name, arg_names.empty() ? "" : ", ",
        fmt::join(arg_names, ", "));
  }

  // Explicit instantiations of every kernel whose compile-time parameters all
  // have defaults, for builds that want each kernel compiled without a launch
  // (the project's tests compile every generated file this way).
  void instantiations(const Module& m) {
    out_ << "\n#ifdef IRIS_INSTANTIATE_KERNELS\n";
    for (const Item& item : m.items) {
      if (item.kind != Item::Kind::Function || !item.function->is_kernel) continue;
      const Function& fn = *item.function;
      bool all_defaults = true;
      for (const Param& p : fn.ct_params) all_defaults &= p.default_value != nullptr;
      if (fn.ct_params.empty())
        out_ << fmt::format("template void iris::launch_kernel<iris_kernels::{}::{}>(iris::Grid, iris::Stream, "
                            "const iris::DeviceContext&{}{});\n",
                            module_namespace_, cpp_name(fn.name), fn.params.empty() ? "" : ", ", param_types(fn));
      else if (all_defaults)
        out_ << fmt::format("template struct iris_kernels::{}::{}<>;\n", module_namespace_, cpp_name(fn.name));
    }
    out_ << "#endif\n";
  }

  std::string param_types(const Function& fn) {
    std::vector<std::string> types;
    for (const Type& t : fn.param_types) types.push_back(type_cpp(t));
    return fmt::format("{}", fmt::join(types, ", "));
  }

  // -------------------------------------------------------- statements
  void line_directive(llvm::SMLoc loc) {
    if (!options_.line_directives || !loc.isValid()) return;
    unsigned line = sources_.getLineAndColumn(loc).first;
    out_ << fmt::format("#line {} \"{}\"\n", line, escaped_name());
  }
  std::string escaped_name() const { return c_string(options_.source_name); }
  void indent(int depth) { out_ << std::string(2 * depth, ' '); }

  void block(const Stmt* b, int depth) {
    out_ << "{\n";
    for (const Stmt* s : b->stmts) stmt(s, depth + 1);
    indent(depth);
    out_ << "}";
  }

  void stmt(const Stmt* s, int depth) {
    line_directive(s->range.Start);
    indent(depth);
    switch (s->kind) {
      case StmtKind::Let: {
        const Binding& b = *s->binding;
        bool exact = !s->declared_type && !s->value->type.literal;
        // The value first: it may read an outer binding of the same name.
        std::string value = convert(expr(s->value, &b.type), s->value->type, b.type);
        out_ << fmt::format("[[maybe_unused]] {} const {} = {};\n", exact ? "auto" : type_cpp(b.type),
                            declare(&b), value);
        return;
      }
      case StmtKind::Var: {
        std::string value = convert(expr(s->value, &s->binding->type), s->value->type, s->binding->type);
        out_ << fmt::format("[[maybe_unused]] {} {} = {};\n", type_cpp(s->binding->type),
                            declare(s->binding), value);
        return;
      }
      case StmtKind::Assign: {
        const Binding& b = *s->target->binding;
        std::string value = convert(expr(s->value, &b.type), s->value->type, b.type);
        if (s->assign_op != TokenKind::Eq)
          value = combine(compound_operator(s->assign_op), name_of(&b), b.type, value, s->value->type, b.type);
        out_ << fmt::format("{} = {};\n", name_of(&b), value);
        return;
      }
      case StmtKind::ExprStmt:
        out_ << fmt::format("{}{};\n", s->value->type.is_void() ? "" : "(void)", expr(s->value));
        return;
      case StmtKind::If: {
        out_ << fmt::format("if ({}) ", expr(s->value));
        block(s->body, depth);
        const Stmt* e = s->else_body;
        if (e) {
          out_ << " else ";
          if (e->kind == StmtKind::If) {
            out_ << "{\n";
            stmt(e, depth + 1);
            indent(depth);
            out_ << "}";
          } else {
            block(e, depth);
          }
        }
        out_ << "\n";
        return;
      }
      case StmtKind::For: {
        std::string low = expr(s->low), high = expr(s->high);
        std::string var = declare(s->binding);
        std::string t = type_cpp(s->binding->type);
        int id = next_temp_++;
        out_ << fmt::format("for ({} {} = {}, iris_end{} = {}; {} < iris_end{}; ++{}) ", t, var, low,
                            id, high, var, id, var);
        block(s->body, depth);
        out_ << "\n";
        return;
      }
      case StmtKind::While:
        out_ << fmt::format("while ({}) ", expr(s->value));
        block(s->body, depth);
        out_ << "\n";
        return;
      case StmtKind::Break: out_ << "break;\n"; return;
      case StmtKind::Continue: out_ << "continue;\n"; return;
      case StmtKind::Return:
        out_ << (s->value ? fmt::format("return {};\n", convert(expr(s->value, &function_->result),
                                                                 s->value->type, function_->result))
                          : "return;\n");
        return;
      case StmtKind::Block:
        block(s, depth);
        out_ << "\n";
        return;
    }
  }

  // ------------------------------------------------------- expressions
  // A literal takes the type of the operation it is part of (`hint`).
  std::string literal(const Expr* e, const Type* hint) {
    ScalarKind s = hint && hint->is_scalar_kind() ? hint->scalar : e->type.scalar;
    if (e->kind == ExprKind::FloatLiteral)
      return fmt::format("{}({:.17g})", scalar_cpp(s), e->float_value);
    if (e->kind == ExprKind::BoolLiteral) return e->bool_value ? "true" : "false";
    return fmt::format("{}({})", scalar_cpp(s), e->int_value);
  }

  // The scalar type a wholly literal expression takes: its context's, where
  // that is arithmetic (`let big: i64 = 1 << 40` computes in 64 bits).
  static const Type* literal_context(const Expr* e, const Type* hint) {
    if (!e->type.literal || !e->type.is_arithmetic() || !hint || !hint->is_scalar_kind() ||
        !hint->is_arithmetic())
      return nullptr;
    return hint;
  }

  std::string expr(const Expr* e, const Type* hint = nullptr) {
    // An integer expression of literals was folded by the checker, which
    // also checked that the value fits the context.
    if ((e->kind == ExprKind::Binary || e->kind == ExprKind::Unary) && e->type.literal && e->type.is_integer() &&
        e->constant && !e->constant->symbolic && e->constant->value) {
      const Type* context = literal_context(e, hint);
      return fmt::format("{}({})", scalar_cpp(context ? context->scalar : e->type.scalar), *e->constant->value);
    }
    switch (e->kind) {
      case ExprKind::IntLiteral:
      case ExprKind::FloatLiteral:
      case ExprKind::BoolLiteral: return literal(e, hint);
      case ExprKind::Name:
        // Constants fold to their value; a compile-time parameter stays a name.
        if (e->constant && !e->constant->symbolic && e->binding->kind == Binding::Kind::Const)
          return e->constant->text();
        return name_of(e->binding);
      case ExprKind::Unary: {
        std::string operand = expr(e->operands[0], literal_context(e, hint));
        std::string_view function = e->op == TokenKind::Minus ? "neg" : op_function(e->op);
        std::string call = fmt::format("iris::{}({})", function, operand);
        return e->op == TokenKind::Bang ? call : cast_to(e->type, call);
      }
      case ExprKind::Binary: return binary(e, hint);
      case ExprKind::Cast:
        return fmt::format("iris::as<{}>({})", element_cpp(e->type), expr(e->operands[0]));
      case ExprKind::Translate: return translate(e);
      case ExprKind::Call:
        if (e->call->builtin) return builtin(e, hint);
        return e->call->callee->imported_from ? imported_call(e) : device_call(e);
      case ExprKind::TypeValue: return type_cpp(e->type_syntax->resolved);
    }
    return "";
  }

  // The element type an operation's literal operands take: the other side's.
  static const Type* literal_hint(const Expr* a, const Expr* b) {
    bool la = a->type.literal, lb = b->type.literal;
    if (la && !lb) return &b->type;
    if (lb && !la) return &a->type;
    return nullptr;
  }

  // A scalar where a tile is expected fills the tile (the checker allows it).
  static std::string convert(const std::string& value, const Type& from, const Type& to) {
    if (!to.is_tile() || from.is_tile()) return value;
    std::string element = element_cpp(to);
    return fmt::format("iris::full<{}, {}>(static_cast<{}>({}))", element, to.shape->text(), element, value);
  }

  std::string cast_to(const Type& t, const std::string& value) {
    if (t.is_pointer() || t.is_bool() || arithmetic_keeps(t.scalar)) return value;
    return fmt::format("iris::as<{}>({})", element_cpp(t), value);
  }

  // `lhs op rhs` as a library call, narrowed back to the checked result type
  // where C++ would promote (i8 + i8 is int in C++).
  std::string combine(TokenKind op, const std::string& lhs, const Type& lhs_type,
                      const std::string& rhs, const Type& rhs_type, const Type& result) {
    std::string call = fmt::format("iris::{}({}, {})", op_function(op), lhs, rhs);
    if (result.is_pointer() || result.is_bool()) return call;
    bool same = lhs_type.element().same(result.element()) && rhs_type.element().same(result.element());
    if (same && arithmetic_keeps(result.scalar)) return call;
    return fmt::format("iris::as<{}>({})", element_cpp(result), call);
  }

  std::string binary(const Expr* e, const Type* outer) {
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
    return combine(e->op, expr(a, hint), lt, expr(b, hint), rt, result);
  }

  static bool is_own_rank(const Expr* rank) {
    return rank->kind == ExprKind::Call && rank->call->builtin && rank->call->builtin->id == BuiltinId::Rank;
  }

  std::string translate(const Expr* e) {
    std::string pointer = expr(e->operands[0]);
    if (is_own_rank(e->operands[1]) && !options_.checked) return pointer;  // p @ rank() is p
    return fmt::format("iris::translate_to(iris_program, {}, {}, {})", pointer, expr(e->operands[1]),
                       site(e));
  }

  // Whether a pointer expression is known to point into a symmetric heap: it
  // derives from a `sym` pointer or from a translation.
  static bool heap_pointer(const Expr* e) {
    while (e->kind == ExprKind::Binary)
      e = e->operands[0]->type.is_pointer() ? e->operands[0] : e->operands[1];
    return e->kind == ExprKind::Translate || e->type.sym;
  }

  // An expression's .iris location as the library's check argument.
  std::string location(const Expr* e) {
    unsigned line = sources_.getLineAndColumn(e->range.Start).first;
    return fmt::format("iris::Checked{{iris_program, \"{}\", {}}}", escaped_name(), line);
  }

  // The check argument of a memory operation: its .iris location in checked
  // builds, for pointers into the heap; nothing otherwise.
  std::string site(const Expr* e) {
    if (!options_.checked) return "iris::Unchecked{}";
    if (e->kind == ExprKind::Call && !heap_pointer(e->call->resolved_args[0])) return "iris::Unchecked{}";
    return location(e);
  }

  // A function of an imported header, by its C++ name at global scope; over
  // tiles, applied elementwise by the library's zip.
  std::string imported_call(const Expr* e) {
    std::vector<std::string> args;
    for (size_t i = 0; i < e->call->resolved_args.size(); ++i)
      args.push_back(expr(e->call->resolved_args[i], &e->call->callee->param_types[i]));
    if (!e->type.is_tile()) return fmt::format("::{}({})", e->name, fmt::join(args, ", "));
    return fmt::format("iris::zip([](auto... iris_x) {{ return ::{}(iris_x...); }}, {})", e->name,
                       fmt::join(args, ", "));
  }

  std::string device_call(const Expr* e) {
    std::string s = fmt::format("{}(iris_program", cpp_name(e->name));
    for (size_t i = 0; i < e->call->resolved_args.size(); ++i) {
      const Type& param = e->call->callee->param_types[i];
      s += ", " + convert(expr(e->call->resolved_args[i], &param), e->call->resolved_args[i]->type, param);
    }
    return s + ")";
  }

  std::string enum_arg(const Expr* call, std::string_view param, std::string_view cpp_enum) {
    const auto& params = call->call->builtin->params;
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].name == param)
        return fmt::format("iris::{}::{}", cpp_enum, enumerators(params[i].kind)[call->call->enum_args[i]]);
    return "";
  }
  std::string order(const Expr* call) {
    return enum_arg(call, "sem", "Sem") + ", " + enum_arg(call, "scope", "Scope");
  }

  // Optional value arguments: the library's "absent" tags stand in.
  std::string optional_arg(const Expr* call, size_t index, std::string_view absent, const Type* hint) {
    const Expr* arg = call->call->resolved_args[index];
    return arg ? expr(arg, hint) : std::string(absent);
  }

  std::string builtin(const Expr* e, const Type* hint) {
    const auto& a = e->call->resolved_args;
    Type access = e->call->resolved_args.empty() || !a[0] ? Type::error() : a[0]->type.element();
    access.kind = Type::Kind::Scalar;  // the pointee, as a hint for literal values
    switch (e->call->builtin->id) {
      case BuiltinId::ProgramId: return fmt::format("iris::program_id(iris_program, {})", expr(a[0]));
      case BuiltinId::NumPrograms: return fmt::format("iris::num_programs(iris_program, {})", expr(a[0]));
      case BuiltinId::Rank: return "iris::rank(iris_program)";
      case BuiltinId::WorldSize: return "iris::world_size(iris_program)";
      case BuiltinId::Arange: return fmt::format("iris::arange<{}>()", e->type.shape->text());
      case BuiltinId::Zeros:
        return fmt::format("iris::zeros<{}, {}>()", element_cpp(e->type), e->type.shape->text());
      case BuiltinId::Full:
        return fmt::format("iris::full<{}, {}>({})", element_cpp(e->type), e->type.shape->text(),
                           expr(a[1], &e->type));
      case BuiltinId::Where: {  // literal branches take the context's type
        const Type* context = literal_context(e, hint);
        Type element = (context ? *context : e->type).element();
        return cast_to(e->type, fmt::format("iris::where({}, {}, {})", expr(a[0]), expr(a[1], &element),
                                            expr(a[2], &element)));
      }
      case BuiltinId::Sum:
      case BuiltinId::Max:
      case BuiltinId::Min: return fmt::format("iris::{}({})", e->call->builtin->name, expr(a[0]));
      case BuiltinId::Load:
        return fmt::format("iris::load({}, {}, {}, {})", expr(a[0]),
                           optional_arg(e, 1, "iris::NoMask{}", nullptr),
                           optional_arg(e, 2, "iris::NoOther{}", &access), site(e));
      case BuiltinId::Store:
        return fmt::format("iris::store({}, {}, {}, {})", expr(a[0]), expr(a[1], &access),
                           optional_arg(e, 2, "iris::NoMask{}", nullptr), site(e));
      case BuiltinId::AtomicCas:
        return fmt::format("iris::atomic_compare_exchange<{}>({}, {}, {}, {})", order(e), expr(a[0]),
                           expr(a[1], &access), expr(a[2], &access), site(e));
      case BuiltinId::AtomicLoad:
        return fmt::format("iris::atomic_read<{}>({}, {})", order(e), expr(a[0]), site(e));
      case BuiltinId::AtomicStore:
        return fmt::format("iris::atomic_write<{}>({}, {}, {})", order(e), expr(a[0]),
                           expr(a[1], &access), site(e));
      case BuiltinId::WaitUntil:
        return fmt::format("iris::wait<{}>({}, {}, {}, {})", order(e), expr(a[0]),
                           enum_arg(e, "op", "Cmp"), expr(a[2], &access), site(e));
      case BuiltinId::Signal: {
        bool add = a.size() > 2 && e->call->enum_args[2] == static_cast<int>(SignalOp::Add);
        return fmt::format("iris::raise_signal<{}, {}>({}, {}, {})", add ? "true" : "false",
                           order(e), expr(a[0]), expr(a[1], &access), site(e));
      }
      case BuiltinId::Fence:  // checked builds tell the race detector what it orders
        return fmt::format("iris::memory_fence<{}>({})", order(e), options_.checked ? location(e) : "");
      case BuiltinId::Barrier: return "iris::device_barrier(iris_program)";
#define ATOMIC_RMW(Name, Spelling, Params, Op)                                                       \
  case BuiltinId::Name:                                                                              \
    return fmt::format("iris::atomic_rmw<iris::AtomicOp::" #Op ", {}>({}, {}, {}, {})", order(e), \
                       expr(a[0]), expr(a[1], &access), optional_arg(e, 2, "iris::NoMask{}", nullptr), site(e));
#include "irisc/builtins.def"
      default: break;  // none: every built-in has a case above
    }
    return "";
  }

  // C++ forbids what .iris allows: `let m = m * 2` reading an outer m, or a
  // loop body rebinding the loop variable. Every binding of a function gets
  // its own C++ name; a name already used in the function gets a suffix.
  std::string declare(const Binding* b) {
    std::string base = cpp_name(b->name);
    int& uses = name_uses_[base];
    std::string name = uses++ == 0 ? base : fmt::format("{}_{}", base, uses);
    names_[b] = name;
    return name;
  }
  std::string name_of(const Binding* b) {
    auto it = names_.find(b);
    return it != names_.end() ? it->second : cpp_name(b->name);
  }
  void begin_function(const Function& fn) {
    function_ = &fn;
    name_uses_.clear();
    names_.clear();
  }

  const llvm::SourceMgr& sources_;
  const EmitOptions& options_;
  llvm::raw_ostream& out_;
  const std::string module_namespace_;
  int next_temp_ = 0;
  const Function* function_ = nullptr;
  std::unordered_map<std::string, int> name_uses_;
  std::unordered_map<const Binding*, std::string> names_;
};

}  // namespace

void emit_cpp(const Module& module, const llvm::SourceMgr& sources, const EmitOptions& options,
              llvm::raw_ostream& out) {
  Emitter(sources, options, out).module(module);
}

}  // namespace irisc
