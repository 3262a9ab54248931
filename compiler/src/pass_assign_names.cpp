// Naming: the C++ names of everything the printer declares.
//
// User names that are C++ keywords, names the generated C++ itself gives a
// meaning to (a kernel's members run and launch, launch's parameters grid,
// ctx and stream; the runtime's near, quiet, ...), or that start with the generated names' prefix `iris_` or
// the runtime macros' `IRIS_`, get a '_'. Names C++ reserves to the
// implementation (containing "__", or '_' and a capital first), which may be
// built-in macros that cannot be undefined, get the prefix iris_reserved.
// Every other macro is undefined around the generated code by the printer.
// C++ forbids what .iris allows: `let m = m * 2`
// reading an outer m, or a loop body rebinding the loop variable; so every
// binding of a function gets its own C++ name, and a name already given in
// the function gets a suffix (m, m_2, ...), as does one that would hide what
// the function's C++ names: a device function it calls, its own name.
// Two names that C++ spells alike (run and run_ are both run_) are told apart
// the same way, in a function and among a namespace's constants and
// functions; the C++ of types and compile-time values spells compile-time
// parameters by these names too (emit_cpp.cpp). Each loop's bound and step
// are held in variables of their own (iris_end<n>, iris_step<n>, numbered
// through the module), evaluated once.
#include "irisc/lower.h"
#include "irisc/passes.h"
#include "irisc/tir_walk.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <unordered_set>

namespace irisc {
namespace {

// C++ keywords, the names the generated C++ declares next to the user's,
// `defined`, which the preprocessor keeps, and the runtime's functions of the
// multi-node built-ins that take the program first, as a device function's
// C++ does: argument-dependent lookup would find both for a device function
// of that name.
bool is_taken_in_cpp(std::string_view name) {
  static const std::unordered_set<std::string_view> taken = {
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
      "std", "iris", "main", "run", "launch", "dynamic_shared_bytes", "grid", "ctx", "stream", "defined",
      "near", "node_rank", "node_size", "node_peer", "quiet"};
  return taken.contains(name);
}

bool is_reserved_in_cpp(std::string_view name) {
  return name.find("__") != std::string_view::npos ||
         (name.size() > 1 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1])));
}

// The prefixes of the generated C++'s own names and of the runtime's macros.
bool has_generated_prefix(std::string_view name) { return name.starts_with("iris_") || name.starts_with("IRIS_"); }

std::string cpp_name(std::string_view name) {
  if (is_reserved_in_cpp(name)) return fmt::format("iris_reserved{}", name);
  if (is_taken_in_cpp(name) || has_generated_prefix(name)) return fmt::format("{}_", name);
  return std::string(name);
}

// A file's name as an identifier: its name up to the first '.', other
// characters than letters and digits as single '_' inside it ("all_gather.iris"
// -> all_gather, "<stdin>" -> stdin, "2d.iris" -> m2d).
std::string file_identifier(std::string_view source_name) {
  std::string_view stem = source_name.substr(source_name.find_last_of("/\\") + 1);
  stem = stem.substr(0, stem.find('.'));
  std::string name;
  for (char c : stem) {
    if (std::isalnum(static_cast<unsigned char>(c))) name += c;
    else if (!name.empty() && name.back() != '_') name += '_';
  }
  if (!name.empty() && name.back() == '_') name.pop_back();
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "m" + name;
  return name;
}

// The C++ names of one scope: each is the name cpp_name spells, or, where
// the scope has given that name already or must not hide it, that name with
// the first free suffix (m, m_2, ...; where the program has its own m_2 too,
// the later of it and a second m is m_2_2 or m_3).
class Scope {
 public:
  // `hidden`: the names of the enclosing scope that the scope refers to.
  explicit Scope(std::unordered_set<std::string> hidden) : taken_(std::move(hidden)) {}

  std::string name(const std::string& base) {
    int& uses = uses_[base];
    if (uses++ == 0 && taken_.insert(base).second) return base;
    for (int n = std::max(uses, 2);; ++n) {
      std::string name = fmt::format("{}_{}", base, n);
      if (!taken_.insert(name).second) continue;
      uses = n;
      return name;
    }
  }

 private:
  std::unordered_set<std::string> taken_;  // the names given, and the hidden ones
  std::unordered_map<std::string, int> uses_;  // the last suffix of each base
};

// Each declaration of f's body, in order.
template <class F>
void for_each_declaration(TirFunction& f, F&& visit) {
  for_each_stmt(f.body, [&](TirStmt* s) {
    if (s->kind == TirStmtKind::Let || s->kind == TirStmtKind::Var || s->kind == TirStmtKind::For ||
        s->kind == TirStmtKind::Shared || s->kind == TirStmtKind::Specialize)
      visit(s);
  });
}

// The names of a function's parameters and bindings, of a specialised loop's
// body (flag_body) and of its loops' bounds. Its scope must not hide what its
// C++ refers to without a namespace: the device functions of its namespace
// that it calls, and its own name (a template parameter may not have it, and
// a kernel's launch() names the kernel).
void name_function(TirFunction& f, int& loops) {
  std::unordered_set<std::string> hidden = {f.cpp_name};
  for_each_value(f, [&](const TirValue* v) {
    if (v->op == TirOp::CallDevice && v->attrs<CallAttrs>().callee->module == f.module)
      hidden.insert(v->attrs<CallAttrs>().callee->cpp_name);
  });
  Scope scope(std::move(hidden));
  for (TirVar* v : f.ct_params) v->cpp_name = scope.name(cpp_name(v->name));
  for (TirVar* v : f.params) v->cpp_name = scope.name(cpp_name(v->name));
  for_each_declaration(f, [&](TirStmt* s) {
    s->var->cpp_name = scope.name(cpp_name(s->var->name));
    if (s->kind == TirStmtKind::Specialize) s->body_name = scope.name(s->var->cpp_name + "_body");
    if (s->kind != TirStmtKind::For) return;
    s->end_name = fmt::format("iris_end{}", loops);
    if (s->step) s->step_name = fmt::format("iris_step{}", loops);
    ++loops;
  });
}

// The names of the constants and functions of one namespace: the file's
// (module null) or an imported module's. The file's kernels are also named
// in iris_kernels, beside the file's namespace, which they must not hide.
void name_namespace(TirModule& module, const TirImportedModule* unit) {
  Scope scope(unit ? std::unordered_set<std::string>{} : std::unordered_set{module.namespace_name});
  for (TirConstant& c : module.constants)
    if (c.module == unit) c.var->cpp_name = scope.name(cpp_name(c.var->name));
  for (TirFunction* f : module.functions)
    if (f->module == unit) f->cpp_name = scope.name(cpp_name(f->name));
}

}  // namespace

// A namespace given on the command line is held to the rules of cpp_name, so
// that it can neither break the generated C++ nor hide what that C++ names
// (iris::, std::, the imported modules' iris_module_<module>).
std::string namespace_name_error(std::string_view name) {
  const bool identifier =
      !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
      std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  if (!identifier) return fmt::format("'{}' is not an identifier (letters, digits and '_', not a digit first)", name);
  if (is_reserved_in_cpp(name))
    return fmt::format("'{}' is reserved to the C++ implementation (it holds \"__\", or '_' and a capital first)", name);
  if (is_taken_in_cpp(name)) return fmt::format("'{}' is a C++ keyword or a name the generated C++ uses", name);
  if (has_generated_prefix(name))
    return fmt::format("'{}' starts with iris_ or IRIS_, the prefix of the generated C++'s own names", name);
  return "";
}

// The file's items live in namespace <file>_iris, or the one the command line
// names, and the items of each module it imports in iris_module_<module>
// inside it (numbered when two modules have one name): a name no .iris name
// can take, as those starting with iris_ get a '_'.
void assign_names(TirModule& module) {
  if (module.namespace_name.empty()) module.namespace_name = file_identifier(module.source_name) + "_iris";
  std::unordered_set<std::string> taken;
  for (TirImportedModule& imported : module.modules) {
    std::string base = "iris_module_" + file_identifier(imported.source_name);
    imported.namespace_name = base;
    for (int n = 2; !taken.insert(imported.namespace_name).second; ++n)
      imported.namespace_name = fmt::format("{}_{}", base, n);
  }
  for (const TirImportedModule& imported : module.modules) name_namespace(module, &imported);
  name_namespace(module, nullptr);
  int loops = 0;
  for (TirFunction* f : module.functions) name_function(*f, loops);
}

}  // namespace irisc
