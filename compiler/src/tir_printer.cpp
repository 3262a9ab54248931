// --emit=tir: TIR as text, for people and for the codegen tests' FileCheck
// lines. Each statement's expression trees are printed one operation a line,
// operands first, as numbered values with their types:
//   %2 = add %0, %1 : tile<sym *f32, B, blocked>
//   let p = %2
// Attributes follow the operation's name in brackets; `_` is an optional
// operand left out. Names are the C++ names once the naming pass has run.
#include "irisc/tir.h"

#include <fmt/format.h>


namespace irisc {
namespace {

class TirPrinter {
 public:
  TirPrinter(const llvm::SourceMgr& sources, llvm::raw_ostream& out) : sources_(sources), out_(out) {}

  void module(const TirModule& m) {
    out_ << fmt::format("module \"{}\"", m.source_name);
    if (!m.namespace_name.empty()) out_ << fmt::format(" namespace {}", m.namespace_name);
    out_ << "\n";
    for (const std::string& header : m.headers) out_ << fmt::format("import \"{}\"\n", header);
    for (const TirImportedModule& imported : m.modules) {
      out_ << fmt::format("import module \"{}\"", imported.source_name);
      if (!imported.namespace_name.empty()) out_ << fmt::format(" namespace {}", imported.namespace_name);
      out_ << "\n";
    }
    for (const TirConstant& c : m.constants)
      out_ << fmt::format("const {}{}: {} = {}\n", qualifier(c.module), name(c.var), c.var->type.str(), c.value);
    for (const TirFunction* f : m.functions) {
      function(*f);
      if (f->is_kernel && f->copier) function(*f->copier);
    }
  }

 private:
  // The C++ name once the naming pass has given one, else the .iris name.
  template <class Named>
  static std::string name(const Named* n) { return n->cpp_name.empty() ? std::string(n->name) : n->cpp_name; }

  // What precedes the name of an imported module's item: the module's
  // namespace once the naming pass has given one, else its quoted name.
  static std::string qualifier(const TirImportedModule* module) {
    if (!module) return "";
    if (module->namespace_name.empty()) return fmt::format("\"{}\"::", module->source_name);
    return module->namespace_name + "::";
  }

  void function(const TirFunction& f) {
    next_ = 0;
    std::vector<std::string> ct, params;
    for (size_t i = 0; i < f.ct_params.size(); ++i) {
      std::vector<std::string_view> admitted;
      for (ScalarKind s : f.ct_admitted[i]) admitted.push_back(scalar_info(s).spelling);
      std::string type = admitted.empty() ? f.ct_params[i]->type.str() : fmt::format("type in ({})", fmt::join(admitted, ", "));
      ct.push_back(fmt::format("{}: {}{}", name(f.ct_params[i]), type,
                               f.ct_defaults[i].empty() ? "" : " = " + f.ct_defaults[i]));
    }
    for (const TirVar* p : f.params) params.push_back(fmt::format("{}: {}", name(p), p->type.str()));
    out_ << fmt::format("\n{}{} {}{}{}({})", f.multinode ? "multinode " : "", f.is_kernel ? "kernel" : "func",
                        qualifier(f.module),
                        name(&f),
                        ct.empty() ? "" : fmt::format("<{}>", fmt::join(ct, ", ")), fmt::join(params, ", "));
    if (!f.result.is_void()) out_ << " -> " << f.result.str();
    out_ << ":\n";
    body(f.body, 0);
  }

  void indent(int depth) { out_ << std::string(2 * depth, ' '); }

  // A nested body: its statements indented one level deeper.
  void body(const TirStmt* b, int depth) {
    for (const TirStmt* s : b->stmts) stmt(s, depth + 1);
  }

  void stmt(const TirStmt* s, int depth) {
    std::string value = s->value ? values(s->value, depth) : "";
    std::string low = s->low ? values(s->low, depth) : "", high = s->high ? values(s->high, depth) : "";
    std::string step = s->step ? " step " + values(s->step, depth) : "";
    if (s->kind == TirStmtKind::Eval && s->value->type.is_void()) return;  // its operation's line says it all
    indent(depth);
    switch (s->kind) {
      case TirStmtKind::Let:
      case TirStmtKind::Var:
        out_ << fmt::format("{} {}: {}{} = {}\n", s->kind == TirStmtKind::Let ? "let" : "var", name(s->var),
                            s->var->type.str(), s->keeps_value_type ? " [keeps value type]" : "", value);
        return;
      case TirStmtKind::Assign: out_ << fmt::format("{} = {}\n", name(s->var), value); return;
      case TirStmtKind::Eval: out_ << fmt::format("discard {}\n", value); return;
      case TirStmtKind::If:
        out_ << fmt::format("if {}:\n", value);
        body(s->body, depth);
        if (s->else_body) {
          indent(depth);
          out_ << "else:\n";
          if (s->else_body->kind == TirStmtKind::If) stmt(s->else_body, depth + 1);
          else body(s->else_body, depth);
        }
        return;
      case TirStmtKind::For:
        out_ << fmt::format("for {}: {} in {} .. {}{}{}{}:\n", name(s->var), s->var->type.str(), low, high, step,
                            s->stages ? " stages " + s->stages->text() : "",
                            s->end_name.empty() ? "" : " [end " + s->end_name + "]");
        body(s->body, depth);
        return;
      case TirStmtKind::While:
        out_ << fmt::format("while {}:\n", value);
        body(s->body, depth);
        return;
      case TirStmtKind::Break: out_ << "break\n"; return;
      case TirStmtKind::Continue: out_ << "continue\n"; return;
      case TirStmtKind::Return: out_ << (s->value ? "return " + value + "\n" : "return\n"); return;
      case TirStmtKind::Block:
        out_ << "block:\n";
        body(s, depth);
        return;
      case TirStmtKind::Shared:
        out_ << fmt::format("shared {}: {} {}\n", name(s->var), s->var->type.str(),
                            s->value ? "after " + value : "at dynamic shared memory");
        return;
      case TirStmtKind::Specialize:
        out_ << fmt::format("specialize {} = {}:\n", name(s->var), value);
        body(s->body, depth);
        return;
    }
  }

  // Prints the operations of `v`'s tree, operands first; returns v's name.
  std::string values(const TirValue* v, int depth) {
    std::vector<std::string> operands;
    for (const TirValue* o : v->operands) operands.push_back(o ? values(o, depth) : "_");
    std::string result = fmt::format("%{}", next_++);
    indent(depth);
    out_ << fmt::format("{} = {}{} {}: {}\n", result, tir_op_info(v->op).spelling, attributes(v),
                        operands.empty() ? "" : fmt::format("{} ", fmt::join(operands, ", ")), v->type.str());
    return result;
  }

  std::string attributes(const TirValue* v) {
    std::vector<std::string> attrs;
    auto order = [&](const MemorySemantics& o) { attrs.insert(attrs.end(), {std::string(o.sem), std::string(o.scope)}); };
    std::visit(Overloaded{
                   [](const NoAttrs&) {},
                   [&](const ConstantAttrs&) { attrs.push_back(literal_text(*v)); },
                   [&](const TextAttrs& a) { attrs.push_back(std::string(a.text)); },
                   [&](const ReadAttrs& a) { attrs.push_back(name(a.var)); },
                   [&](const CallAttrs& a) {
                     std::vector<std::string> args;
                     for (const TirTemplateArg& arg : a.template_args)
                       args.push_back(arg.value.empty() ? arg.type.str() : std::string(arg.value));
                     attrs.push_back(qualifier(a.callee->module) + name(a.callee) +
                                     (args.empty() ? "" : fmt::format("<{}>", fmt::join(args, ", "))));
                   },
                   [&](const AxisAttrs& a) {
                     if (a.axis >= 0) attrs.push_back(fmt::format("axis {}", a.axis));
                   },
                   [&](const AccessAttrs& a) {
                     if (a.contiguous_rows) attrs.push_back("contiguous rows");
                     if (a.row_interval_mask) attrs.push_back("row intervals");
                   },
                   [&](const DotAttrs& a) {
                     if (a.pipelined) attrs.push_back("pipelined");
                   },
                   [&](const OrderAttrs& a) { order(a.order); },
                   [&](const RmwAttrs& a) {
                     attrs.push_back(std::string(a.atomic_op));
                     order(a.order);
                   },
                   [&](const WaitAttrs& a) {
                     attrs.push_back(std::string(a.cmp));
                     order(a.order);
                   },
                   [&](const SignalAttrs& a) {
                     order(a.order);
                     attrs.push_back(a.add ? "add" : "set");
                   },
               },
               v->payload);
    if (v->checked) attrs.push_back(fmt::format("checked line {}", sources_.getLineAndColumn(v->loc).first));
    return attrs.empty() ? "" : fmt::format("[{}]", fmt::join(attrs, ", "));
  }

  const llvm::SourceMgr& sources_;
  llvm::raw_ostream& out_;
  int next_ = 0;
};

}  // namespace

void print_tir(const TirModule& module, const llvm::SourceMgr& sources, llvm::raw_ostream& out) {
  TirPrinter(sources, out).module(module);
}

}  // namespace irisc
