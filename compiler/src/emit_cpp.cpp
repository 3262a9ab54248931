// The C++ printer: TIR to C++, one line of output per decision already made.
//
// Every kernel becomes a struct template over its compile-time parameters,
// holding `run` (the body of one program instance) and `launch` (the typed
// host entry point). Device functions become inline functions (function
// templates over their compile-time parameters, called with explicit
// arguments), each before its callers, those of each imported .iris module
// in a namespace of the module's. A type parameter is a `class` template parameter, printed
// wherever a type is (the checker marked the types that are it). Each TIR
// operation is the tile library's function of tir_ops.def (iris::add,
// iris::load, ...; a memory access the function of its route, memory_route),
// and each expression tree one C++ expression: the library
// keeps offsets built from arange symbolic, so contiguous accesses vectorise
// without analysis here. A Broadcast that is an operation's operand prints as
// its scalar, which the library's operations take as it is; one that is
// stored prints as an iris::full tile. Each statement is preceded by a #line
// directive so that C++ compiler errors and debuggers point into the .iris
// file.
#include "irisc/emit.h"
#include "irisc/trace_points.h"
#include "irisc/tir_walk.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace irisc {
namespace {

// `text` escaped for a C++ string literal (file names).
std::string c_string(std::string_view text) {
  std::string s;
  for (char c : text) {
    if (c == '"' || c == '\\') s += '\\';
    s += c;
  }
  return s;
}

std::string scalar_cpp(ScalarKind s) { return std::string(scalar_info(s).cpp_type); }

// How one function's C++ spells types and compile-time values. The checker
// writes a compile-time parameter in them by its .iris name (a type
// parameter T, a size "(BLOCK * 2)"); the C++ names it as the naming pass
// did (a parameter named class is class_; one named like a device function
// that the function calls gets a suffix).
class Spelling {
 public:
  Spelling() = default;  // outside functions: no compile-time parameters
  explicit Spelling(const TirFunction& f) {
    for (const TirVar* p : f.ct_params) names_.emplace(p->name, p->cpp_name);
  }

  // A compile-time value's canonical text: numbers, operators, parentheses
  // and the names of compile-time parameters.
  std::string value(std::string_view text) const {
    std::string out;
    for (size_t i = 0; i < text.size();) {
      size_t end = i;
      while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
      if (end == i) {
        out += text[i++];
        continue;
      }
      const std::string_view word = text.substr(i, end - i);
      out += std::isdigit(static_cast<unsigned char>(word[0])) ? std::string(word) : parameter(word);
      i = end;
    }
    return out;
  }

  // A scalar, or the type parameter that stands for it.
  std::string scalar(ScalarKind s, std::string_view type_param) const {
    return type_param.empty() ? scalar_cpp(s) : parameter(type_param);
  }

  std::string element(const TirType& t) const {
    std::string scalar = this->scalar(t.scalar, t.type_param);
    return t.is_pointer() ? scalar + "*" : scalar;
  }

  // A shape as template arguments: "64", "BLOCK_M, 64".
  std::string dims(const TirType& t) const {
    std::vector<std::string> dims;
    for (const Shape& d : t.dims) dims.push_back(d.symbol.empty() ? d.text() : value(d.symbol));
    return fmt::format("{}", fmt::join(dims, ", "));
  }

  // A layout other than the default one, as the runtime's layout class; empty
  // for the default (iris::Blocked of the shape).
  std::string layout(const TirType& t) const {
    std::string operand = scalar(t.dot_operand, t.dot_operand_param);
    if (t.layout == TirLayout::Copy) return fmt::format("iris::CopyLayout<{}, {}>", operand, dims(t));
    if (t.layout == TirLayout::DotRows) return fmt::format("iris::RowsOf<iris::DotLayout<{}, {}>>", operand, dims(t));
    if (t.layout != TirLayout::Dot) return "";
    return fmt::format("iris::DotLayout<{}, {}>", operand, dims(t));
  }

  // The template arguments that create a tile of t's shape and layout:
  // "float, 64, 64", or "float, iris::DotLayout<...>" in another layout.
  std::string shape_args(const TirType& t, bool with_element) const {
    std::string layout = this->layout(t);
    std::string shape = layout.empty() ? dims(t) : layout;
    return with_element ? element(t) + ", " + shape : shape;
  }

  std::string type(const TirType& t) const {
    if (t.is_void()) return "void";
    if (!t.is_tile()) return element(t);
    if (t.layout == TirLayout::Shared) return fmt::format("iris::SharedTile<{}, {}>", element(t), dims(t));
    if (t.layout == TirLayout::Stages)
      return fmt::format("iris::SharedStages<{}, {}, {}>", element(t), dims(t), value(t.stages.text()));
    std::string layout = this->layout(t);
    return fmt::format("iris::{}<{}, {}{}>", t.dims.size() == 1 ? "Tile" : "Tile2", element(t), dims(t),
                       layout.empty() ? "" : ", " + layout);
  }

 private:
  std::string parameter(std::string_view name) const {
    auto it = names_.find(name);
    if (it == names_.end())
      throw std::logic_error(fmt::format("C++ printer: '{}' is not a compile-time parameter here", name));
    return std::string(it->second);
  }

  std::unordered_map<std::string_view, std::string_view> names_;  // .iris name -> C++ name
};

// The trailing arguments of a load, copy_async or store that say what the passes
// proved of its pointers and mask (iris::ContiguousRows, iris::RowIntervals),
// each written where it or a later argument (`more`) is.
std::string known_cpp(const TirValue& v, bool more) {
  std::string known;
  const auto& access = v.attrs<AccessAttrs>();
  if (access.contiguous_rows || access.row_interval_mask || more)
    known = access.contiguous_rows ? ", iris::ContiguousRows{}" : ", iris::AnyPointers{}";
  if (access.row_interval_mask || more)
    known += access.row_interval_mask ? ", iris::RowIntervals{}" : ", iris::AnyMask{}";
  return known;
}

class Printer {
 public:
  Printer(const TirModule& m, const llvm::SourceMgr& sources, llvm::raw_ostream& out, const EmitOptions& options)
      : m_(m), sources_(sources), out_(out), trace_(options.trace) {}

  void module() {
    out_ << fmt::format(
        "// Generated by irisc from {}. Do not edit: change the .iris file and run irisc "
        "again.\n#pragma once\n\n#include <iris/kernel.hpp>\n",
        m_.source_name);
    // Imported headers after the runtime, which defines HIP's function
    // qualifiers for the CPU target; by absolute path, so the generated file
    // builds from any folder.
    for (const std::string& header : m_.headers) out_ << fmt::format("#include \"{}\"\n", c_string(header));
    // A user's name may be a macro of the C++ library or the target's
    // (NULL, EOF, assert, errno, ...; too many to rename): each is undefined
    // for the generated code and restored after it, for the code that
    // includes the file.
    const std::set<std::string> names = user_names();
    if (!names.empty()) out_ << "\n";
    for (const std::string& name : names) out_ << fmt::format("#pragma push_macro(\"{0}\")\n#undef {0}\n", name);
    // The file's items live in a namespace of their own, so that the constants
    // and device functions of several .iris files can share names in one
    // program; the kernels are also named in iris_kernels, for host code.
    out_ << fmt::format("\nnamespace iris_kernels {{\nnamespace {} {{\n", m_.namespace_name);
    // Each imported module's constants and device functions, in a namespace of
    // their own inside the file's: every file that imports a module has its
    // own copy, so that several such files build into one program, and their
    // generated headers into one source file, without a definition shared
    // between them (that a checked and an unchecked file would make differ).
    for (const TirImportedModule& imported : m_.modules) {
      out_ << fmt::format("\n// {}\nnamespace {} {{\n", imported.source_name, imported.namespace_name);
      items(&imported);
      out_ << fmt::format("\n}}  // namespace {}\n", imported.namespace_name);
    }
    items(nullptr);
    out_ << fmt::format("\n}}  // namespace {}\n\n", m_.namespace_name);
    for (const TirFunction* f : m_.functions)
      if (f->is_kernel) out_ << fmt::format("using {}::{};\n", m_.namespace_name, f->cpp_name);
    out_ << "\n}  // namespace iris_kernels\n";
    instantiations();
    if (!names.empty()) out_ << "\n";
    for (const std::string& name : names) out_ << fmt::format("#pragma pop_macro(\"{}\")\n", name);
  }

 private:
  // The C++ names of the user's items, parameters and bindings, and those
  // the printer makes of them (a specialised loop's flag_body).
  std::set<std::string> user_names() const {
    std::set<std::string> names;
    for (const TirConstant& c : m_.constants) names.insert(c.var->cpp_name);
    for (TirFunction* f : m_.functions) {
      names.insert(f->cpp_name);
      for (const TirVar* v : f->ct_params) names.insert(v->cpp_name);
      for (const TirVar* v : f->params) names.insert(v->cpp_name);
      for_each_stmt(f->body, [&](const TirStmt* s) {
        if (s->var) names.insert(s->var->cpp_name);
        if (s->kind == TirStmtKind::Specialize) names.insert(s->body_name);
      });
    }
    return names;
  }

  // ------------------------------------------------------------- items
  // The constants and functions of an imported module, or (null) of the file.
  void items(const TirImportedModule* module) {
    module_ = module;
    file_ = c_string(module ? module->source_name : m_.source_name);
    cpp_ = Spelling();
    if (trace_) trace_file(module);
    for (const TirConstant& c : m_.constants)
      if (c.module == module)
        out_ << fmt::format("\ninline constexpr {} {} = {};\n", cpp_.type(c.var->type), c.var->cpp_name, c.value);
    Callees callees;  // each function's, walked once
    for (const TirFunction* f : m_.functions)
      if (f->module == module) callees[f] = callees_in_module(*f);
    const std::vector<const TirFunction*> order = callees_first(module, callees);
    declare_later_callees(order, callees);
    for (const TirFunction* f : order) f->is_kernel ? kernel(*f) : device_function(*f);
  }

  // --trace: the id of the file's path in the events of its spans, and the
  // path and the kernels' names for the trace writer (iris/ops/trace.hpp).
  void trace_file(const TirImportedModule* module) {
    std::vector<std::string> kernels;
    for (const TirFunction* f : m_.functions)
      if (f->is_kernel && f->module == module)
        kernels.push_back(fmt::format("{{{}, \"{}\"}}", sources_.getLineAndColumn(f->loc).first, c_string(f->name)));
    out_ << fmt::format(
        "\ninline constexpr std::uint32_t iris_trace_file = iris::trace_file_id(\"{0}\");\n"
        "[[maybe_unused]] inline const bool iris_trace_registered =\n"
        "    iris::detail::register_trace_file(iris_trace_file, \"{0}\", {{{1}}});\n",
        file_, fmt::join(kernels, ", "));
  }

  // The functions of a module (null: the file) in source order, except that
  // a device function comes before the functions of its module that call it,
  // so that C++ sees it, and the shared-memory constant emitted after it,
  // first (.iris lets a function call one defined later). Only the functions
  // of a call cycle still call one that follows them.
  using Callees = std::unordered_map<const TirFunction*, std::vector<const TirFunction*>>;
  std::vector<const TirFunction*> callees_first(const TirImportedModule* module, const Callees& calls) const {
    std::vector<const TirFunction*> order;
    std::unordered_set<const TirFunction*> seen;
    std::vector<std::pair<const TirFunction*, std::vector<const TirFunction*>>> stack;  // (function, callees left)
    for (const TirFunction* root : m_.functions) {
      if (root->module != module || !seen.insert(root).second) continue;
      stack.push_back({root, calls.at(root)});
      while (!stack.empty()) {
        auto& [f, callees] = stack.back();
        if (callees.empty()) {
          order.push_back(f);
          stack.pop_back();
          continue;
        }
        const TirFunction* callee = callees.back();
        callees.pop_back();
        if (seen.insert(callee).second) stack.push_back({callee, calls.at(callee)});
      }
    }
    return order;
  }

  // The device functions f calls in its own module, the first call last.
  static std::vector<const TirFunction*> callees_in_module(const TirFunction& f) {
    std::vector<const TirFunction*> callees;
    const auto add = [&](const TirValue* v) {
      if (v->op == TirOp::CallDevice && v->attrs<CallAttrs>().callee->module == f.module)
        callees.push_back(v->attrs<CallAttrs>().callee);
    };
    for_each_value(const_cast<TirFunction&>(f), add);
    if (f.copier) for_each_value(*f.copier, add);  // printed in f's struct
    std::reverse(callees.begin(), callees.end());
    return callees;
  }

  // A declaration of each function of `order` that one before it calls (in
  // a call cycle), ahead of them all.
  void declare_later_callees(const std::vector<const TirFunction*>& order, const Callees& calls) {
    std::unordered_set<const TirFunction*> defined, declared;
    std::vector<const TirFunction*> declarations;  // in the order of their first calls
    for (const TirFunction* f : order) {
      for (const TirFunction* callee : calls.at(f))
        if (callee != f && !defined.contains(callee) && declared.insert(callee).second)
          declarations.push_back(callee);
      defined.insert(f);
    }
    if (!declarations.empty()) out_ << "\n// Called before their definitions, in a call cycle.\n";
    for (const TirFunction* f : declarations) {
      cpp_ = Spelling(*f);
      out_ << template_head(*f, false) << signature(*f) << ";\n";
    }
  }

  // The parameters of a generated function, led by the program. `auto`: the
  // program's type says whether a copier issues its box copies
  // (iris::CopierProgram, ops/copy_box.hpp), which with_uniform_boxes reads at
  // compile time; the host's iris_boxes_hold takes an iris::Program (the
  // launch's rank and world), and is no template, so that the launch can ask
  // for its address.
  std::string params(const TirFunction& f, std::string_view program = "const auto&") const {
    std::string s = fmt::format("[[maybe_unused]] {} iris_program", program);
    for (const TirVar* p : f.params) s += fmt::format(", [[maybe_unused]] {} {}", cpp_.type(p->type), p->cpp_name);
    return s;
  }

  // `template <int32_t BLOCK = 1024, class T>`: the compile-time parameters,
  // with their defaults where `with_defaults`; empty without any.
  std::string template_head(const TirFunction& f, bool with_defaults) const {
    if (f.ct_params.empty()) return "";
    std::vector<std::string> ct;
    for (size_t i = 0; i < f.ct_params.size(); ++i) {
      const TirVar* p = f.ct_params[i];
      std::string decl = f.ct_admitted[i].empty() ? fmt::format("{} {}", cpp_.type(p->type), p->cpp_name)
                                                  : fmt::format("class {}", p->cpp_name);
      if (with_defaults && !f.ct_defaults[i].empty()) decl += " = " + cpp_.value(f.ct_defaults[i]);
      ct.push_back(decl);
    }
    return fmt::format("template <{}>\n", fmt::join(ct, ", "));
  }

  std::string signature(const TirFunction& f) const {
    return fmt::format("[[maybe_unused]] IRIS_HD inline {} {}({})", cpp_.type(f.result), f.cpp_name, params(f));
  }

  void device_function(const TirFunction& f) {
    cpp_ = Spelling(f);
    out_ << "\n";
    line_directive(f.loc);
    out_ << template_head(f, false) << signature(f) << " ";
    block(f.body, 0);
    out_ << "\n";
    const SharedBytes shared = shared_bytes(f);
    if (!shared.bytes.empty()) {
      out_ << template_head(f, false);
      line_directive(shared.first);
      out_ << fmt::format("inline constexpr std::size_t {} = {};\n", shared_bytes_name(f), shared.bytes);
    }
  }

  void kernel(const TirFunction& f) {
    cpp_ = Spelling(f);
    std::vector<std::string> args, arg_names;
    for (const TirVar* p : f.params) {
      args.push_back(fmt::format("{} {}", cpp_.type(p->type), p->cpp_name));
      arg_names.push_back(p->cpp_name);
    }
    out_ << "\n";
    line_directive(f.loc);
    out_ << template_head(f, true);
    out_ << fmt::format("struct {} {{\n", f.cpp_name);
    dynamic_shared_bytes(f);
    out_ << fmt::format("  IRIS_KERNEL_RUN static void run({}) ", params(f));
    std::string span;
    if (trace_) {
      span = fmt::format(
          "iris::TraceKernel<iris_trace_file, {}> iris_trace_kernel{{iris_program, {}}};\n",
          traces_++, sources_.getLineAndColumn(f.loc).first);
    }
    block(f.body, 1, span);
    out_ << "\n\n";
    if (f.copier) {
      out_ << "  // Its copier slice, which a warpgroup of its own runs where the copies go\n"
              "  // by TMA (iris/ops/copy_box.hpp).\n";
      out_ << fmt::format("  IRIS_KERNEL_RUN static void copies({}) ", params(f));
      block(f.copier->body, 1);
      out_ << "\n  static constexpr bool iris_copier = true;\n\n";
    }
    if (f.boxes_hold) {
      out_ << "  // Whether every copy of its box loops may go by TMA at a launch with these\n"
              "  // arguments: there its instances run the copier's version of the loops\n"
              "  // alone (iris/launch_gpu.hpp).\n";
      out_ << fmt::format("  static bool iris_boxes_hold({}) {{\n    return {};\n  }}\n\n", params(f, "const iris::Program&"),
                          expr(f.boxes_hold));
    }
    // What the launch checks: a node-local kernel on a world of several
    // nodes is an error that names it (iris::launch_kernel).
    out_ << fmt::format(
        "  static constexpr bool iris_node_local = {};\n"
        "  static constexpr const char* iris_kernel_name = \"{}\";\n\n",
        f.multinode ? "false" : "true", c_string(f.name));
    out_ << fmt::format(
        "  // Launches one program instance per grid cell on the calling rank.\n"
        "  static void launch(iris::Grid grid, const iris::DeviceContext& ctx{}{}, "
        "iris::Stream stream = {{}}) {{\n"
        "    iris::launch_kernel<{}>(grid, stream, ctx{}{});\n  }}\n}};\n",
        args.empty() ? "" : ", ", fmt::join(args, ", "), f.cpp_name, arg_names.empty() ? "" : ", ",
        fmt::join(arg_names, ", "));
  }

  // What the kernel's pipelined loops need of dynamic shared memory, its
  // own and those of the device functions it calls (iris/types/shared.hpp).
  void dynamic_shared_bytes(const TirFunction& f) {
    const SharedBytes shared = shared_bytes(f);
    if (shared.bytes.empty()) return;
    out_ << "  // The stages of its pipelined loops (iris/types/shared.hpp).\n";
    line_directive(shared.first);
    out_ << fmt::format("  static constexpr std::size_t dynamic_shared_bytes = {};\n", shared.bytes);
    line_directive(f.loc);
  }

  // The C++ of the shared memory that f's pipelined loops need, with those of
  // the device functions it calls, each at the compile-time arguments of the
  // call (a device function's own is the constant shared_bytes_name names,
  // emitted after it): one loop runs at a time, so the most that one holds.
  // Empty where f needs none. `first` is where the first such loop or call
  // is: the constant's #line, so that a C++ error in its instantiation (too
  // few stages, too much shared memory) names that line of the .iris file.
  struct SharedBytes {
    std::string bytes;
    llvm::SMLoc first;
  };
  SharedBytes shared_bytes(const TirFunction& f) {
    std::vector<std::string> loops;
    llvm::SMLoc first;
    for (const TirFunction::StageLoop& loop : f.stage_loops) {
      std::vector<std::string> bytes;
      for (const TirVar* ring : loop.rings) bytes.push_back(cpp_.type(ring->type) + "::bytes");
      loops.push_back(fmt::format("{}", fmt::join(bytes, " + ")));
      if (!first.isValid()) first = loop.loc;
    }
    std::unordered_set<std::string> called;
    for_each_value(const_cast<TirFunction&>(f), [&](const TirValue* v) {
      if (v->op != TirOp::CallDevice || !needs_shared(*v->attrs<CallAttrs>().callee)) return;
      std::string callee = callee_reference(v, shared_bytes_name(*v->attrs<CallAttrs>().callee));
      if (called.insert(callee).second) loops.push_back(std::move(callee));
      if (!first.isValid()) first = v->loc;
    });
    if (loops.size() < 2) return {loops.empty() ? "" : loops[0], first};
    return {fmt::format("std::max({{{}}})", fmt::join(loops, ", ")), first};
  }

  static std::string shared_bytes_name(const TirFunction& f) { return "iris_shared_bytes_" + f.cpp_name; }

  // `name`, an item of the module of call v's callee, with the call's
  // compile-time arguments: through the module's namespace where the callee
  // is a module's function called from outside it (that namespace is the
  // caller's or a sibling of it).
  std::string callee_reference(const TirValue* v, const std::string& name) const {
    const auto& call = v->attrs<CallAttrs>();
    const TirImportedModule* callee_module = call.callee->module;
    std::vector<std::string> template_args;
    for (const TirTemplateArg& arg : call.template_args)
      template_args.push_back(arg.value.empty() ? cpp_.element(arg.type) : cpp_.value(arg.value));
    return fmt::format("{}{}{}", callee_module && callee_module != module_ ? callee_module->namespace_name + "::" : "",
                       name, template_args.empty() ? "" : fmt::format("<{}>", fmt::join(template_args, ", ")));
  }

  bool needs_shared(const TirFunction& f) const { return needing_shared_.contains(&f); }

  // The functions that run a pipelined loop, their own or one of a function
  // they call, directly or not: those with rings of stages, and every caller
  // of one.
  static std::unordered_set<const TirFunction*> needing_shared(const TirModule& m) {
    return with_callers(m.functions, [](const TirFunction& f) { return !f.stage_loops.empty(); });
  }

  // Explicit instantiations of every kernel whose compile-time values all
  // have defaults, for builds that want each kernel compiled without a launch
  // (the project's tests compile every generated file this way): one per
  // instance of its type parameters, the values before the last of them at
  // their defaults.
  void instantiations() {
    out_ << "\n#ifdef IRIS_INSTANTIATE_KERNELS\n";
    for (const TirFunction* f : m_.functions) {
      if (!f->is_kernel) continue;
      cpp_ = Spelling(*f);
      bool all_defaults = true;
      for (size_t i = 0; i < f->ct_params.size(); ++i) all_defaults &= !f->ct_admitted[i].empty() || !f->ct_defaults[i].empty();
      std::vector<std::string> types;
      for (const TirVar* p : f->params) types.push_back(cpp_.type(p->type));
      if (f->ct_params.empty())
        out_ << fmt::format("template void iris::launch_kernel<iris_kernels::{}::{}>(iris::Grid, iris::Stream, "
                            "const iris::DeviceContext&{}{});\n",
                            m_.namespace_name, f->cpp_name, types.empty() ? "" : ", ", fmt::join(types, ", "));
      else if (all_defaults)
        for (const std::string& args : instance_arguments(*f))
          out_ << fmt::format("template struct iris_kernels::{}::{}<{}>;\n", m_.namespace_name, f->cpp_name, args);
    }
    out_ << "#endif\n";
  }

  // The template arguments of every instance of a kernel's type parameters
  // ("float, 1024", "iris::bfloat16, 1024"): up to the last type parameter.
  static std::vector<std::string> instance_arguments(const TirFunction& f) {
    size_t count = 0;
    for (size_t i = 0; i < f.ct_params.size(); ++i)
      if (!f.ct_admitted[i].empty()) count = i + 1;
    std::vector<std::string> instances = {""};
    for (size_t i = 0; i < count; ++i) {
      std::vector<std::string> choices = {f.ct_default_values[i]};
      if (!f.ct_admitted[i].empty()) {
        choices.clear();
        for (ScalarKind s : f.ct_admitted[i]) choices.push_back(scalar_cpp(s));
      }
      std::vector<std::string> longer;
      for (const std::string& instance : instances)
        for (const std::string& choice : choices) longer.push_back(instance.empty() ? choice : instance + ", " + choice);
      instances = std::move(longer);
    }
    return instances;
  }

  // -------------------------------------------------------- statements
  void line_directive(llvm::SMLoc loc) {
    if (!loc.isValid()) return;
    out_ << fmt::format("#line {} \"{}\"\n", sources_.getLineAndColumn(loc).first, file_);
  }
  void indent(int depth) { out_ << std::string(2 * depth, ' '); }

  // A block; `first`, a statement that comes before its own (a span of it).
  void block(const TirStmt* b, int depth, std::string_view first = {}) {
    out_ << "{\n";
    if (!first.empty()) {
      indent(depth + 1);
      out_ << first;
    }
    bool in_epilogue = false;
    for (size_t i = 0; i < b->stmts.size(); ++i) {
      const TirStmt* s = b->stmts[i];
      traced_stmt(s, depth + 1);
      if (trace_ && !in_epilogue && dot_functions_.computes_dot(*s) &&
          writes_memory({b->stmts.begin() + static_cast<std::ptrdiff_t>(i) + 1, b->stmts.end()})) {
        in_epilogue = true;
        indent(depth + 1);
        out_ << fmt::format("iris::TraceScope<iris_trace_file, {0}> iris_trace_{0}{{iris_program, iris::TraceKind::epilogue, {1}}};\n",
                            traces_++, sources_.getLineAndColumn(b->stmts[i + 1]->loc).first);
      }
    }
    indent(depth);
    out_ << "}";
  }

  // A statement, in a span of its own where a traced build records one
  // (trace_points.h). The span of an access reads its pointer, which a
  // variable holds for both.
  void traced_stmt(const TirStmt* s, int depth) {
    const TirValue* access = trace_ ? traced_operation(*s) : nullptr;
    if (!access && !(trace_ && is_dot_loop(*s))) return stmt(s, depth);
    const int span_number = traces_++;
    const std::string span = fmt::format("iris_trace_{}", span_number);
    std::string kind = "dot_loop", pointer, signalled;
    unsigned line = sources_.getLineAndColumn(s->loc).first;
    // An operand, evaluated once into a variable that the span reads too.
    const auto hold = [&](const TirValue* v, std::string_view what) {
      if (v->op == TirOp::Broadcast) v = v->operands[0];
      std::string name = fmt::format("{}_{}", span, what);
      indent(depth);
      out_ << fmt::format("[[maybe_unused]] auto const {} = {};\n", name, expr(v));
      named_[v] = name;
      return name;
    };
    if (access) {
      const TirOpInfo& info = tir_op_info(access->op);
      kind = std::string(info.spelling);
      line = line_of(access);
      if (info.has(tir_trait::ReadsMemory) || info.has(tir_trait::WritesMemory)) pointer = hold(access->operands[0], "pointer");
      if (access->op == TirOp::Signal) signalled = hold(access->operands[1], "value");
      if (access->op == TirOp::PutSignal) signalled = hold(access->operands[4], "value");
    }
    indent(depth);
    out_ << fmt::format("iris::TraceSpan<iris_trace_file, {}> {}{{iris_program}};\n", span_number, span);
    stmt(s, depth);
    // What the span shows: the value a wait saw, a signal's peer and value,
    // an access's peer; as lambdas, which only a recorded span calls.
    const std::string peer = fmt::format("[&] {{ return iris::trace_peer(iris_program, {}); }}", pointer);
    std::string what;
    if (access && access->op == TirOp::WaitUntil)
      what = fmt::format(", iris::NoPeer{{}}, [&] {{ return iris::trace_value({}); }}", pointer);
    else if (!signalled.empty())
      what = fmt::format(", {}, [&] {{ return static_cast<std::int64_t>({}); }}", peer, signalled);
    else if (!pointer.empty()) what = ", " + peer;
    indent(depth);
    out_ << fmt::format("{}.end(iris::TraceKind::{}, {}{});\n", span, kind, line, what);
    named_.clear();
  }

  void stmt(const TirStmt* s, int depth) {
    line_directive(s->loc);
    indent(depth);
    switch (s->kind) {
      case TirStmtKind::Let:
        out_ << fmt::format("[[maybe_unused]] {} const {} = {};\n",
                            s->keeps_value_type ? "auto" : cpp_.type(s->var->type), s->var->cpp_name, stored(s->value));
        return;
      case TirStmtKind::Var:
        out_ << fmt::format("[[maybe_unused]] {} {} = {};\n", cpp_.type(s->var->type), s->var->cpp_name,
                            stored(s->value));
        return;
      case TirStmtKind::Assign: out_ << fmt::format("{} = {};\n", s->var->cpp_name, stored(s->value)); return;
      case TirStmtKind::Eval:
        out_ << fmt::format("{}{};\n", s->value->type.is_void() ? "" : "(void)", expr(s->value));
        return;
      case TirStmtKind::If: {
        out_ << fmt::format("if ({}) ", expr(s->value));
        block(s->body, depth);
        if (const TirStmt* e = s->else_body) {
          out_ << " else ";
          if (e->kind == TirStmtKind::If) {
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
      case TirStmtKind::For: {
        const std::string& var = s->var->cpp_name;
        std::string step = s->step ? fmt::format(", {} = {}", s->step_name, expr(s->step)) : "";
        std::string next = s->step ? fmt::format("{} += {}", var, s->step_name) : "++" + var;
        out_ << fmt::format("for ({} {} = {}, {} = {}{}; {} < {}; {}) ", cpp_.type(s->var->type), var, expr(s->low),
                            s->end_name, expr(s->high), step, var, s->end_name, next);
        block(s->body, depth);
        out_ << "\n";
        return;
      }
      case TirStmtKind::While:
        out_ << fmt::format("while ({}) ", expr(s->value));
        block(s->body, depth);
        out_ << "\n";
        return;
      case TirStmtKind::Break: out_ << "break;\n"; return;
      case TirStmtKind::Continue: out_ << "continue;\n"; return;
      case TirStmtKind::Return:
        out_ << (s->value ? fmt::format("return {};\n", stored(s->value)) : "return;\n");
        return;
      case TirStmtKind::Block:
        block(s, depth);
        out_ << "\n";
        return;
      case TirStmtKind::Shared:
        out_ << fmt::format("const {} {}{{{}}};\n", cpp_.type(s->var->type), s->var->cpp_name,
                            s->value ? expr(s->value) + ".end()" : "iris::dynamic_shared()");
        return;
      case TirStmtKind::Specialize: {
        // The body as a generic lambda of the flag, called with each value.
        const std::string& flag = s->var->cpp_name;
        const std::string& body = s->body_name;
        out_ << fmt::format("auto const {} = [&](auto {}) ", body, flag);
        block(s->body, depth);
        out_ << ";\n";
        indent(depth);
        // A loop whose copies are boxes lets the runtime choose the flag's
        // type: a copier's (ops/copy_box.hpp).
        if (binds_boxes(s->body))
          out_ << fmt::format("iris::with_uniform_boxes(iris_program, {}, {});\n", expr(s->value), body);
        else
          out_ << fmt::format("if ({}) {}(std::true_type{{}}); else {}(std::false_type{{}});\n",
                              expr(s->value), body, body);
        return;
      }
    }
  }

  // ------------------------------------------------------- expressions
  // A value stored into a variable, returned or passed to a device function:
  // a broadcast becomes a tile of the stored type.
  std::string stored(const TirValue* v) {
    if (v->op != TirOp::Broadcast) return expr(v);
    std::string element = cpp_.element(v->type);
    return fmt::format("iris::full<{}>(static_cast<{}>({}))", cpp_.shape_args(v->type, true), element,
                       expr(v->operands[0]));
  }

  // An operation's operand: the library's operations broadcast scalars.
  std::string operand(const TirValue* v) { return expr(v->op == TirOp::Broadcast ? v->operands[0] : v); }

  // Whether a loop body binds a ring to a box (its copies are boxes).
  static bool binds_boxes(const TirStmt* body) {
    bool found = false;
    for_each_stmt(const_cast<TirStmt*>(body), [&](TirStmt* s) {
      if (s->kind == TirStmtKind::Eval && (s->value->op == TirOp::BindBox || s->value->op == TirOp::BindCopies))
        found = true;
    });
    return found;
  }

  // An optional operand, or the library's "absent" tag.
  std::string optional(const TirValue* v, std::string_view absent) {
    return v ? operand(v) : std::string(absent);
  }

  // A literal in its type, which C++ would not infer from the digits (int64_t(1), float(2)).
  std::string constant(const TirValue* v) const {
    if (v->attrs<ConstantAttrs>().literal == ConstantAttrs::Literal::Bool) return literal_text(*v);
    return fmt::format("{}({})", cpp_.element(v->type), literal_text(*v));
  }

  // The check argument of a memory operation: its .iris location where the
  // checked-marking pass marked it.
  std::string site(const TirValue* v) {
    if (!v->checked) return "iris::Unchecked{}";
    return fmt::format("iris::Checked{{iris_program, \"{}\", {}}}", file_, line_of(v));
  }
  // A wait's: its location in unchecked builds too, which the CPU emulation
  // names in a deadlock report (and the GPU ignores).
  std::string wait_site(const TirValue* v) {
    if (!v->checked) return fmt::format("iris::UncheckedAt{{\"{}\", {}}}", file_, line_of(v));
    return site(v);
  }
  unsigned line_of(const TirValue* v) const { return sources_.getLineAndColumn(v->loc).first; }

  // The program, which the transport's functions take first.
  static std::string program_first(const TirValue& access) {
    return memory_route(access) == MemoryRoute::Transport ? "iris_program, " : "";
  }
  // What the passes proved of a load's or store's pointers and mask, which
  // the tile library's functions take and the transport's do not.
  static std::string known(const TirValue& access) {
    return memory_route(access) == MemoryRoute::Transport ? "" : known_cpp(access, false);
  }

  static std::string order(const MemorySemantics& o) { return fmt::format("iris::Sem::{}, iris::Scope::{}", o.sem, o.scope); }

  std::string expr(const TirValue* v) {
    if (const auto found = named_.find(v); found != named_.end()) return found->second;
    const TirOpInfo& info = tir_op_info(v->op);
    const auto& a = v->operands;
    switch (info.category) {
      case TirCategory::Unary: return fmt::format("{}({})", info.runtime, operand(a[0]));
      case TirCategory::Binary: return fmt::format("{}({}, {})", info.runtime, operand(a[0]), operand(a[1]));
      case TirCategory::Reduce:
        if (int axis = v->attrs<AxisAttrs>().axis; axis >= 0) return fmt::format("{}<{}>({})", info.runtime, axis, operand(a[0]));
        return fmt::format("{}({})", info.runtime, operand(a[0]));
      case TirCategory::Contract:
        return fmt::format("{}({}, {}, {}{})", info.runtime, operand(a[0]), operand(a[1]), stored(a[2]),
                           v->attrs<DotAttrs>().pipelined ? ", iris::Pipelined{}" : "");
      case TirCategory::Elementwise: {
        std::vector<std::string> operands;
        for (const TirValue* x : a) operands.push_back(operand(x));
        return fmt::format("{}({})", info.runtime, fmt::join(operands, ", "));
      }
      default: break;
    }
    switch (v->op) {
      case TirOp::Constant: return constant(v);
      case TirOp::NamedConstant: return cpp_.value(v->attrs<TextAttrs>().text);
      case TirOp::Read: return v->var()->cpp_name;
      case TirOp::Convert: return fmt::format("{}<{}>({})", info.runtime, cpp_.element(v->type), expr(a[0]));
      case TirOp::Broadcast: return stored(v);
      case TirOp::Translate:
        return fmt::format("{}(iris_program, {}, {}, {})", info.runtime, expr(a[0]), expr(a[1]), site(v));
      case TirOp::ProgramId:
      case TirOp::NumPrograms:
      case TirOp::Near:
      case TirOp::NodePeer: return fmt::format("{}(iris_program, {})", info.runtime, expr(a[0]));
      case TirOp::Aligned: return fmt::format("{}<{}>({})", info.runtime, expr(a[1]), expr(a[0]));
      case TirOp::Rank:
      case TirOp::WorldSize:
      case TirOp::NodeRank:
      case TirOp::NodeSize:
      case TirOp::Quiet: return fmt::format("{}(iris_program)", info.runtime);
      case TirOp::Barrier:  // checked builds' barriers report a hang with their location
        return fmt::format("{}(iris_program{})", info.runtime, v->checked ? ", " + site(v) : "");
      case TirOp::BroadcastTo:
      case TirOp::Reshape: return fmt::format("{}<{}>({})", info.runtime, cpp_.shape_args(v->type, false), expr(a[0]));
      case TirOp::ConvertLayout: {
        std::string layout = cpp_.layout(v->type);
        if (layout.empty()) layout = fmt::format("iris::Blocked<{}>", cpp_.dims(v->type));
        return fmt::format("{}<{}>({})", info.runtime, layout, expr(a[0]));
      }
      case TirOp::AddAxis: return fmt::format("{}<{}>({})", info.runtime, v->attrs<AxisAttrs>().axis, expr(a[0]));
      case TirOp::Trans: return fmt::format("{}({})", info.runtime, expr(a[0]));
      case TirOp::Arange: return fmt::format("{}<{}>()", info.runtime, cpp_.shape_args(v->type, false));
      case TirOp::Zeros: return fmt::format("{}<{}>()", info.runtime, cpp_.shape_args(v->type, true));
      case TirOp::Full: return fmt::format("{}<{}>({})", info.runtime, cpp_.shape_args(v->type, true), expr(a[0]));
      case TirOp::Load:
        return fmt::format("{}({}{}, {}, {}, {}{})", access_function(*v), program_first(*v), expr(a[0]),
                           optional(a[1], "iris::NoMask{}"), optional(a[2], "iris::NoOther{}"), site(v), known(*v));
      case TirOp::CopyAsync: {
        // What the pipelining pass proved of the pointers and the mask, and
        // the flag of a specialised loop that says its runs are uniform.
        const bool uniform_runs = a.size() > 4;
        std::string known = known_cpp(*v, uniform_runs);
        if (uniform_runs) known += ", " + expr(a[4]);
        // A box goes right after the stage (copy_async's overload of ops/copy_box.hpp).
        const std::string box = a.size() > 5 ? ", " + expr(a[5]) : "";
        return fmt::format("{}({}{}, {}, {}, {}, {}{})", access_function(*v), expr(a[3]), box, expr(a[0]),
                           optional(a[1], "iris::NoMask{}"), optional(a[2], "iris::NoOther{}"), site(v), known);
      }
      case TirOp::BoxAt:
      case TirOp::ReleaseBoxes:
      case TirOp::CopyBox: {
        std::vector<std::string> args;
        for (const TirValue* arg : a) args.push_back(expr(arg));
        return fmt::format("{}({})", info.runtime, fmt::join(args, ", "));
      }
      // A constant first operand, as the template argument.
      case TirOp::BindBox:
      case TirOp::BindCopies:
      case TirOp::WaitBoxes: {
        std::vector<std::string> args;
        for (size_t i = 1; i < a.size(); ++i) args.push_back(expr(a[i]));
        return fmt::format("{}<{}>({})", info.runtime, expr(a[0]), fmt::join(args, ", "));
      }
      // A loop without the flag has no uniform runs.
      case TirOp::EndBoxes:
      case TirOp::EndCopies: {
        std::vector<std::string> args{optional(a[0], "std::false_type{}")};
        for (size_t i = 1; i < a.size(); ++i) args.push_back(expr(a[i]));
        return fmt::format("{}({})", info.runtime, fmt::join(args, ", "));
      }
      case TirOp::StageAt: return fmt::format("{}[{}]", expr(a[0]), expr(a[1]));
      case TirOp::CommitAsync: return fmt::format("{}()", info.runtime);
      case TirOp::WaitAsync: return fmt::format("{}<{}>()", info.runtime, expr(a[0]));
      case TirOp::WaitDots: {
        std::vector<std::string> accumulators;
        for (size_t i = 1; i < a.size(); ++i) accumulators.push_back(expr(a[i]));
        return fmt::format("{}<{}>({})", info.runtime, expr(a[0]), fmt::join(accumulators, ", "));
      }
      case TirOp::Store: {
        // What layout assignment proved of the pointers and the mask.
        return fmt::format("{}({}{}, {}, {}, {}{})", access_function(*v), program_first(*v), expr(a[0]),
                           operand(a[1]), optional(a[2], "iris::NoMask{}"), site(v), known(*v));
      }
      case TirOp::AtomicRmw: {
        const auto& rmw = v->attrs<RmwAttrs>();
        return fmt::format("{}<iris::AtomicOp::{}, {}>({}{}, {}, {}, {})", access_function(*v), rmw.atomic_op,
                           order(rmw.order), program_first(*v), expr(a[0]), operand(a[1]),
                           optional(a[2], "iris::NoMask{}"), site(v));
      }
      case TirOp::AtomicCas:
        return fmt::format("{}<{}>({}{}, {}, {}, {})", access_function(*v), order(v->attrs<OrderAttrs>().order),
                           program_first(*v), expr(a[0]), operand(a[1]), operand(a[2]), site(v));
      case TirOp::AtomicLoad:
        return fmt::format("{}<{}>({}{}, {})", access_function(*v), order(v->attrs<OrderAttrs>().order),
                           program_first(*v), expr(a[0]), site(v));
      case TirOp::AtomicStore:
        return fmt::format("{}<{}>({}{}, {}, {})", access_function(*v), order(v->attrs<OrderAttrs>().order),
                           program_first(*v), expr(a[0]), operand(a[1]), site(v));
      case TirOp::WaitUntil: {
        const auto& wait = v->attrs<WaitAttrs>();
        return fmt::format("{}<{}>({}, iris::Cmp::{}, {}, {})", access_function(*v), order(wait.order), expr(a[0]),
                           wait.cmp, operand(a[1]), wait_site(v));
      }
      case TirOp::Signal: {
        const auto& signal = v->attrs<SignalAttrs>();
        return fmt::format("{}<{}, {}>({}{}, {}, {})", access_function(*v), signal.add ? "true" : "false",
                           order(signal.order), program_first(*v), expr(a[0]), operand(a[1]), site(v));
      }
      case TirOp::PutSignal: {
        const auto& signal = v->attrs<SignalAttrs>();
        if (memory_route(*v) == MemoryRoute::Transport)
          return fmt::format("{}<{}>(iris_program, {}, {}, {}, {}, {}, {})", access_function(*v),
                             signal.add ? "true" : "false", expr(a[0]), operand(a[1]), optional(a[2], "iris::NoMask{}"),
                             expr(a[3]), operand(a[4]), site(v));
        // Where loads and stores reach the rank: the store, then the flag
        // raised with release, which orders the store before it.
        return fmt::format("({}({}, {}, {}, {}), {}<{}, {}>({}, {}, {}))", tir_op_info(TirOp::Store).runtime,
                           expr(a[0]), operand(a[1]), optional(a[2], "iris::NoMask{}"), site(v),
                           tir_op_info(TirOp::Signal).runtime, signal.add ? "true" : "false", order(signal.order),
                           expr(a[3]), operand(a[4]), site(v));
      }
      case TirOp::Fence:  // checked builds tell the race detector what it orders
        return fmt::format("{}<{}>({})", info.runtime, order(v->attrs<OrderAttrs>().order), v->checked ? site(v) : "");
      case TirOp::CallDevice: {
        std::string s = callee_reference(v, v->attrs<CallAttrs>().callee->cpp_name) + "(iris_program";
        for (const TirValue* arg : a) s += ", " + stored(arg);
        return s + ")";
      }
      case TirOp::CallImported: return imported_call(v);
#define TIR_UNARY(Name, Spelling, Token, Runtime) case TirOp::Name:
#define TIR_BINARY(Name, Spelling, Token, Runtime, Traits) case TirOp::Name:
#include "irisc/tir_ops.def"
      case TirOp::Sum:
      case TirOp::Max:
      case TirOp::Min:
      case TirOp::Dot:
      case TirOp::Where:
#define BUILTIN(Name, Spelling, Params)
#define ELEMENTWISE(Name, Spelling, Params, Runtime) case TirOp::Name:
#include "irisc/builtins.def"
        break;  // printed by their category, above
    }
    // Every operation has its case above, and no default: a new TIR operation
    // is a compile error here (-Wswitch, -Werror) until it has its C++.
    throw std::logic_error(fmt::format("C++ printer: no C++ for TIR operation '{}'", info.spelling));
  }

  // A function of an imported header, by its C++ name at global scope; over
  // tiles, applied elementwise by the library's zip.
  std::string imported_call(const TirValue* v) {
    std::vector<std::string> args;
    for (const TirValue* arg : v->operands) args.push_back(operand(arg));
    const std::string_view function = v->attrs<TextAttrs>().text;
    if (!v->type.is_tile()) return fmt::format("::{}({})", function, fmt::join(args, ", "));
    return fmt::format("iris::zip([](auto... iris_x) {{ return ::{}(iris_x...); }}, {})", function,
                       fmt::join(args, ", "));
  }

  const TirModule& m_;
  const llvm::SourceMgr& sources_;
  llvm::raw_ostream& out_;
  // What is being printed: an imported module (null: the file), and the name
  // of its source, escaped.
  const TirImportedModule* module_ = nullptr;
  std::string file_;
  Spelling cpp_;  // of the function being printed
  const std::unordered_set<const TirFunction*> needing_shared_ = needing_shared(m_);
  // --trace: the functions that run a dot, the spans printed so far (for
  // their names), and the values printed by the name of a variable that holds
  // them (a traced access's pointer, which its span reads too).
  const bool trace_;
  const DotFunctions dot_functions_{m_};
  int traces_ = 0;
  std::unordered_map<const TirValue*, std::string> named_;
};

}  // namespace

MemoryRoute memory_route(const TirValue& access) {
  const bool flag_far = access.op == TirOp::PutSignal && access.operands[3]->type.space == AddressSpace::AnyRank;
  switch (access.operands[0]->type.space) {
    case AddressSpace::AnyRank: return MemoryRoute::Transport;
    case AddressSpace::Remote: return flag_far ? MemoryRoute::Transport : MemoryRoute::Peer;
    default: return flag_far ? MemoryRoute::Transport : MemoryRoute::Own;
  }
}

namespace {

// The transport's function of each access that may take it (the checker
// refuses the others through a pointer that may address a far rank).
std::string_view transport_function(TirOp op) {
  switch (op) {
    case TirOp::Load: return "iris::remote_load";
    case TirOp::Store: return "iris::remote_store";
    case TirOp::AtomicRmw: return "iris::remote_atomic_rmw";
    case TirOp::AtomicCas: return "iris::remote_atomic_compare_exchange";
    case TirOp::AtomicLoad: return "iris::remote_atomic_read";
    case TirOp::AtomicStore: return "iris::remote_atomic_write";
    case TirOp::Signal: return "iris::remote_raise_signal";
    case TirOp::PutSignal: return "iris::remote_put_signal";
    default: throw std::logic_error(fmt::format("C++ printer: '{}' has no transport", tir_op_info(op).spelling));
  }
}

}  // namespace

std::string_view access_function(const TirValue& access) {
  switch (memory_route(access)) {
    case MemoryRoute::Own:
    case MemoryRoute::Peer: return tir_op_info(access.op).runtime;
    case MemoryRoute::Transport: return transport_function(access.op);
  }
  throw std::logic_error("C++ printer: unknown memory route");
}

void emit_cpp(const TirModule& module, const llvm::SourceMgr& sources, llvm::raw_ostream& out,
              const EmitOptions& options) {
  Printer(module, sources, out, options).module();
}

}  // namespace irisc
