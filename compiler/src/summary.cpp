// The summary printed by `irisc FILE`; see summary.h.
#include "irisc/summary.h"

#include "irisc/builtins.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

namespace irisc {
namespace {

// Counts what a function body does: remote translations, loads, stores,
// atomics and synchronisation, those of the device functions it calls
// included (once per call site, as each call runs them), so that a kernel
// that communicates through a module's functions (iris/ccl.iris) says so.
struct Counts {
  int translations = 0, loads = 0, stores = 0, atomics = 0, syncs = 0;
  std::vector<const Function*> calling;  // the functions being counted: a call cycle counts once

  void stmt(const Stmt* s) {
    if (!s) return;
    for (const Expr* e : {s->value, s->target, s->low, s->high}) expr(e);
    stmt(s->body);
    stmt(s->else_body);
    for (const Stmt* child : s->stmts) stmt(child);
  }
  void expr(const Expr* e) {
    if (!e) return;
    if (e->kind == ExprKind::Translate) ++translations;
    if (e->call && e->call->builtin) {
      BuiltinId id = e->call->builtin->id;
      if (id == BuiltinId::Load) ++loads;
      else if (id == BuiltinId::Store) ++stores;
      else if (is_atomic(id)) ++atomics;
      else if (id == BuiltinId::WaitUntil || id == BuiltinId::Signal || id == BuiltinId::Fence ||
               id == BuiltinId::Barrier)
        ++syncs;
    }
    for (const Expr* op : e->operand_list()) expr(op);
    if (e->call)
      for (const CallArg& arg : e->call->args) expr(arg.value);
    if (const Function* callee = e->call ? e->call->callee : nullptr;
        callee && callee->body && std::find(calling.begin(), calling.end(), callee) == calling.end()) {
      calling.push_back(callee);
      stmt(callee->body);
      calling.pop_back();
    }
  }
};

std::string param_list(const std::vector<Param>& params, const std::vector<Type>& types) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < params.size(); ++i) parts.push_back(fmt::format("{}: {}", params[i].name, types[i].str()));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

void print_summary(const Module& module, std::string_view file, llvm::raw_ostream& out) {
  std::map<Item::Kind, int> count;
  for (const Item& item : module.items) ++count[item.kind];
  int kernels = 0;
  for (const Item& item : module.items)
    kernels += item.kind == Item::Kind::Function && item.function->is_kernel;
  out << fmt::format("{}: ok: {} kernel(s), {} device function(s), {} constant(s), {} import(s)\n",
                     file, kernels, count[Item::Kind::Function] - kernels, count[Item::Kind::Const],
                     count[Item::Kind::Import]);
  for (const Item& item : module.items) {
    if (item.kind != Item::Kind::Function) continue;
    const Function& fn = *item.function;
    std::string ct;
    if (!fn.ct_params.empty()) {
      std::vector<std::string> parts;
      for (const Param& p : fn.ct_params) {
        if (p.is_type()) {
          parts.push_back(fmt::format("{}: type in {}", p.name, admitted_types(p)));
          continue;
        }
        std::string part = fmt::format("{}: {}", p.name, p.binding->type.str());
        if (auto value = p.binding->constant->value)
          part += p.binding->type.is_bool() ? fmt::format(" = {}", *value != 0) : fmt::format(" = {}", *value);
        parts.push_back(part);
      }
      ct = fmt::format("<{}>", fmt::join(parts, ", "));
    }
    Counts c;
    c.calling.push_back(&fn);
    c.stmt(fn.body);
    out << fmt::format("  {} {}{}({}){}\n", fn.is_kernel ? "kernel" : "device", fn.name, ct,
                       param_list(fn.params, fn.param_types),
                       fn.result.is_void() ? "" : " -> " + fn.result.str());
    out << fmt::format("    remote translations (@): {}, loads: {}, stores: {}, atomics: {}, "
                       "synchronisation: {}\n",
                       c.translations, c.loads, c.stores, c.atomics, c.syncs);
  }
}

}  // namespace irisc
