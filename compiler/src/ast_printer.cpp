// --emit=ast and --emit=checked: the tree, one node a line, indented by depth.
// Each line names the node, its details and its range as line:col-line:col;
// the checked form adds ": type" and "= constant" where the checker set them.
#include "irisc/ast.h"
#include "irisc/builtins.h"

#include <fmt/format.h>

namespace irisc {
namespace {

class Printer {
 public:
  Printer(const llvm::SourceMgr& sources, bool checked, llvm::raw_ostream& out)
      : sources_(sources), checked_(checked), out_(out) {}

  void module(const Module& m) {
    for (const Item& item : m.items) {
      switch (item.kind) {
        case Item::Kind::Import:
          line(0, fmt::format("Import \"{}\"", item.import->path), item.import->range);
          break;
        case Item::Kind::Const: {
          const ConstDecl& c = *item.constant;
          line(0, fmt::format("Const {}{}", c.name, binding_suffix(c.binding)), c.range);
          expr(c.value, 1);
          break;
        }
        case Item::Kind::Function: function(*item.function); break;
      }
    }
  }

 private:
  std::string where(llvm::SMRange r) const {
    if (!r.Start.isValid()) return "";
    auto [l1, c1] = sources_.getLineAndColumn(r.Start);
    auto [l2, c2] = sources_.getLineAndColumn(r.End);
    return fmt::format(" <{}:{}-{}:{}>", l1, c1, l2, c2);
  }
  void line(int depth, std::string_view text, llvm::SMRange r) {
    out_ << std::string(2 * depth, ' ') << text << where(r) << "\n";
  }
  std::string binding_suffix(const Binding* b) const {
    if (!checked_ || !b) return "";
    std::string s = " : " + b->type.str();
    if (b->constant) s += " = " + b->constant->text();
    return s;
  }
  std::string type_syntax(const TypeSyntax* t) const {
    if (!t) return "";
    std::string_view scalar = t->type_param.empty() ? scalar_info(t->scalar).spelling : t->type_param;
    switch (t->kind) {
      case TypeSyntax::Kind::Scalar: return std::string(scalar);
      case TypeSyntax::Kind::Pointer: return fmt::format("{}*{}", t->sym ? "sym " : "", scalar);
      case TypeSyntax::Kind::Tile: return fmt::format("tile<{}, ...>", type_syntax(t->element));
    }
    return "";
  }

  void function(const Function& fn) {
    std::string head = fmt::format("{}{} {}", fn.multinode ? "Multinode " : "", fn.is_kernel ? "Kernel" : "Device",
                                   fn.name);
    if (fn.return_type) head += " -> " + type_syntax(fn.return_type);
    line(0, head, fn.range);
    for (const Param& p : fn.ct_params) {
      std::string type = p.is_type() ? "type in " + admitted_types(p) : type_syntax(p.type);
      line(1, fmt::format("CtParam {}: {}{}", p.name, type, p.is_type() ? "" : binding_suffix(p.binding)), p.range);
      if (p.default_value) expr(p.default_value, 2);
    }
    for (const Param& p : fn.params)
      line(1, fmt::format("Param {}: {}{}", p.name, type_syntax(p.type), binding_suffix(p.binding)),
           p.range);
    stmt(fn.body, 1);
  }

  void stmt(const Stmt* s, int depth) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::Let:
      case StmtKind::Var:
        line(depth, fmt::format("{} {}{}", s->kind == StmtKind::Let ? "Let" : "Var", s->name,
                                binding_suffix(s->binding)),
             s->range);
        expr(s->value, depth + 1);
        return;
      case StmtKind::Assign:
        line(depth, fmt::format("Assign '{}'", token_kind_text(s->assign_op)), s->range);
        expr(s->target, depth + 1);
        expr(s->value, depth + 1);
        return;
      case StmtKind::ExprStmt:
        line(depth, "ExprStmt", s->range);
        expr(s->value, depth + 1);
        return;
      case StmtKind::If:
        line(depth, "If", s->range);
        expr(s->value, depth + 1);
        stmt(s->body, depth + 1);
        stmt(s->else_body, depth + 1);
        return;
      case StmtKind::For:
        line(depth, fmt::format("For {}{}", s->name, binding_suffix(s->binding)), s->range);
        expr(s->low, depth + 1);
        expr(s->high, depth + 1);
        if (s->step) expr(s->step, depth + 1);
        stmt(s->body, depth + 1);
        return;
      case StmtKind::While:
        line(depth, "While", s->range);
        expr(s->value, depth + 1);
        stmt(s->body, depth + 1);
        return;
      case StmtKind::Break: line(depth, "Break", s->range); return;
      case StmtKind::Continue: line(depth, "Continue", s->range); return;
      case StmtKind::Return:
        line(depth, "Return", s->range);
        if (s->value) expr(s->value, depth + 1);
        return;
      case StmtKind::Block:
        line(depth, "Block", s->range);
        for (const Stmt* child : s->stmts) stmt(child, depth + 1);
        return;
    }
  }

  std::string expr_head(const Expr* e) const {
    switch (e->kind) {
      case ExprKind::IntLiteral: return fmt::format("IntLiteral {}", e->int_value);
      case ExprKind::FloatLiteral: return fmt::format("FloatLiteral {}", e->float_value);
      case ExprKind::BoolLiteral: return fmt::format("BoolLiteral {}", e->bool_value);
      case ExprKind::Name: return fmt::format("Name {}", e->name);
      case ExprKind::Call: return fmt::format("Call {}", e->name);
      case ExprKind::Unary: return fmt::format("Unary '{}'", token_kind_text(e->op));
      case ExprKind::Binary: return fmt::format("Binary '{}'", token_kind_text(e->op));
      case ExprKind::Cast: return fmt::format("Cast {}", type_syntax(e->type_syntax));
      case ExprKind::Translate: return "Translate '@'";
      case ExprKind::TypeValue: return fmt::format("Type {}", type_syntax(e->type_syntax));
      case ExprKind::AddAxis: return fmt::format("AddAxis {}", e->int_value);
      case ExprKind::Shape: return "Shape";
    }
    return "";
  }

  void expr(const Expr* e, int depth) {
    std::string head = expr_head(e);
    if (checked_ && e->kind != ExprKind::TypeValue && e->kind != ExprKind::Shape) {  // neither has a value
      head += " : " + e->type.str();
      if (e->constant) head += " = " + e->constant->text();
    }
    line(depth, head, e->range);
    for (const Expr* op : e->operand_list()) expr(op, depth + 1);
    if (!e->call) return;
    for (const CallArg& arg : e->call->args) {
      if (!arg.name.empty()) line(depth + 1, fmt::format("NamedArg {}", arg.name), arg.name_range);
      expr(arg.value, depth + (arg.name.empty() ? 1 : 2));
    }
  }

  const llvm::SourceMgr& sources_;
  bool checked_;
  llvm::raw_ostream& out_;
};

}  // namespace

std::string admitted_types(const Param& type_param) {
  std::vector<std::string_view> names;
  for (const TypeSyntax* t : type_param.admitted) names.push_back(scalar_info(t->scalar).spelling);
  return fmt::format("({})", fmt::join(names, ", "));
}

void print_module(const Module& module, const llvm::SourceMgr& sources, bool checked,
                  llvm::raw_ostream& out) {
  Printer(sources, checked, out).module(module);
}

}  // namespace irisc
