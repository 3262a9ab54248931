// Naming: the C++ names of everything the printer declares.
//
// User names that are C++ keywords, names the generated C++ itself gives a
// meaning to (a kernel's members run and launch, launch's parameters grid,
// ctx and stream), or that start with the generated names' prefix `iris_` or
// the runtime macros' `IRIS_`, get a '_'. Names C++ reserves to the
// implementation (containing "__", or '_' and a capital first), which may be
// built-in macros that cannot be undefined, get the prefix iris_reserved.
// Every other macro is undefined around the generated code by the printer.
// C++ forbids what .iris allows: `let m = m * 2`
// reading an outer m, or a loop body rebinding the loop variable; so every
// binding of a function gets its own C++ name, and a name already used in the
// function gets a suffix (m, m_2, ...). Each loop's bound and step are held
// in variables of their own (iris_end<n>, iris_step<n>, numbered through the
// module), evaluated once.
#include "irisc/passes.h"
#include "irisc/tir_walk.h"

#include <fmt/format.h>

#include <cctype>
#include <unordered_map>
#include <unordered_set>

namespace irisc {
namespace {

// C++ keywords, the names the generated C++ declares next to the user's,
// and `defined`, which the preprocessor keeps.
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
      "std", "iris", "main", "run", "launch", "dynamic_shared_bytes", "grid", "ctx", "stream", "defined"};
  return taken.contains(name);
}

bool is_reserved_in_cpp(std::string_view name) {
  return name.find("__") != std::string_view::npos ||
         (name.size() > 1 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1])));
}

std::string cpp_name(std::string_view name) {
  if (is_reserved_in_cpp(name)) return fmt::format("iris_reserved{}", name);
  if (is_taken_in_cpp(name) || name.starts_with("iris_") || name.starts_with("IRIS_")) return fmt::format("{}_", name);
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

class Namer {
 public:
  void function(TirFunction& f) {
    uses_.clear();
    f.cpp_name = cpp_name(f.name);
    for (TirVar* v : f.ct_params) declare(v);
    for (TirVar* v : f.params) declare(v);
    for_each_stmt(f.body, [&](TirStmt* s) {
      if (s->kind == TirStmtKind::Let || s->kind == TirStmtKind::Var || s->kind == TirStmtKind::For ||
          s->kind == TirStmtKind::Shared || s->kind == TirStmtKind::Specialize)
        declare(s->var);
      if (s->kind != TirStmtKind::For) return;
      s->end_name = fmt::format("iris_end{}", loops_);
      if (s->step) s->step_name = fmt::format("iris_step{}", loops_);
      ++loops_;
    });
  }

 private:
  void declare(TirVar* v) {
    std::string base = cpp_name(v->name);
    int& uses = uses_[base];
    v->cpp_name = uses++ == 0 ? base : fmt::format("{}_{}", base, uses);
  }

  std::unordered_map<std::string, int> uses_;
  int loops_ = 0;
};

}  // namespace

// The file's items live in namespace <file>_iris, and the items of each
// module it imports in iris_module_<module> inside it (numbered when two
// modules have one name): a name no .iris name can take, as those starting
// with iris_ get a '_'.
void assign_names(TirModule& module) {
  module.namespace_name = file_identifier(module.source_name) + "_iris";
  std::unordered_set<std::string> taken;
  for (TirImportedModule& imported : module.modules) {
    std::string base = "iris_module_" + file_identifier(imported.source_name);
    imported.namespace_name = base;
    for (int n = 2; !taken.insert(imported.namespace_name).second; ++n)
      imported.namespace_name = fmt::format("{}_{}", base, n);
  }
  for (TirConstant& c : module.constants) c.var->cpp_name = cpp_name(c.var->name);
  Namer namer;
  for (TirFunction* f : module.functions) namer.function(*f);
}

}  // namespace irisc
