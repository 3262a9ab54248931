// The summary printed by `irisc FILE`; see summary.h.
#include "irisc/summary.h"

#include "irisc/builtins.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <vector>

namespace irisc {
namespace {

// What code does: remote translations, loads, stores, atomics and
// synchronisation. A count stops at the largest int64_t: calls nested n deep,
// two per function, run 2^n of what the innermost one does.
struct Counts {
  int64_t translations = 0, loads = 0, stores = 0, atomics = 0, syncs = 0;

  void add(const Counts& other) {
    translations = sum(translations, other.translations);
    loads = sum(loads, other.loads);
    stores = sum(stores, other.stores);
    atomics = sum(atomics, other.atomics);
    syncs = sum(syncs, other.syncs);
  }

 private:
  static int64_t sum(int64_t a, int64_t b) {
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    return b > kMax - a ? kMax : a + b;
  }
};

// What a function body does itself, and the functions with a body that it
// calls, once per call site.
struct Body {
  Counts own;
  std::vector<const Function*> calls;

  explicit Body(const Function& fn) { stmt(fn.body); }

 private:
  void stmt(const Stmt* s) {
    if (!s) return;
    for (const Expr* e : {s->value, s->target, s->low, s->high}) expr(e);
    stmt(s->body);
    stmt(s->else_body);
    for (const Stmt* child : s->stmts) stmt(child);
  }
  void expr(const Expr* e) {
    if (!e) return;
    if (e->kind == ExprKind::Translate) ++own.translations;
    if (e->call && e->call->builtin) {
      BuiltinId id = e->call->builtin->id;
      if (id == BuiltinId::Load || id == BuiltinId::Get) ++own.loads;
      else if (id == BuiltinId::Store || id == BuiltinId::Put || id == BuiltinId::PutSignal) ++own.stores;
      else if (is_atomic(id)) ++own.atomics;
      else if (id == BuiltinId::WaitUntil || id == BuiltinId::Signal || id == BuiltinId::Fence ||
               id == BuiltinId::Barrier || id == BuiltinId::Quiet)
        ++own.syncs;
    }
    for (const Expr* op : e->operand_list()) expr(op);
    if (e->call)
      for (const CallArg& arg : e->call->args) expr(arg.value);
    if (const Function* callee = e->call ? e->call->callee : nullptr; callee && callee->body) calls.push_back(callee);
  }
};

// What each function of `module` does with what the functions it calls do,
// once per call site, as each call runs them, so that a kernel that
// communicates through a module's functions (iris/ccl.iris) says so. The
// functions of a call cycle count once each, with what they call outside the
// cycle. Each body is walked once: the cycles are the call graph's strongly
// connected components (Tarjan's algorithm, with a list of work in place of
// recursion, so that a chain of calls of any length cannot overflow the
// stack), which it finds callees first; a component's counts are then those
// of its functions and of the components they call, already known.
std::unordered_map<const Function*, Counts> counts_with_calls(const Module& module) {
  std::unordered_map<const Function*, Body> bodies;
  std::vector<const Function*> unwalked;
  auto reach = [&](const Function* fn) {
    if (bodies.try_emplace(fn, *fn).second) unwalked.push_back(fn);
  };
  for (const Item& item : module.items)
    if (item.kind == Item::Kind::Function) reach(item.function);
  while (!unwalked.empty()) {
    const Function* fn = unwalked.back();
    unwalked.pop_back();
    for (const Function* callee : bodies.at(fn).calls) reach(callee);
  }

  struct Visit {
    int index, low;
    bool on_stack = true;
  };
  std::unordered_map<const Function*, Visit> visits;
  std::unordered_map<const Function*, Counts> counts;
  std::vector<const Function*> stack;                     // Tarjan's: functions of open components
  std::vector<std::pair<const Function*, size_t>> walk;  // the path of calls, and each one's next call
  auto visit = [&](const Function* fn) {
    const int index = static_cast<int>(visits.size());
    visits.emplace(fn, Visit{index, index});
    stack.push_back(fn);
    walk.push_back({fn, 0});
  };
  for (const auto& [root, root_body] : bodies) {
    if (visits.contains(root)) continue;
    visit(root);
    while (!walk.empty()) {
      auto& [fn, next] = walk.back();
      const std::vector<const Function*>& calls = bodies.at(fn).calls;
      if (next < calls.size()) {
        const Function* callee = calls[next++];
        if (auto seen = visits.find(callee); seen == visits.end()) visit(callee);
        else if (seen->second.on_stack) visits.at(fn).low = std::min(visits.at(fn).low, seen->second.index);
        continue;
      }
      const Function* done = fn;
      walk.pop_back();
      const Visit& v = visits.at(done);
      if (!walk.empty()) visits.at(walk.back().first).low = std::min(visits.at(walk.back().first).low, v.low);
      if (v.low != v.index) continue;
      // `done` heads a component: its functions are on the stack from it up.
      std::vector<const Function*> component;
      do {
        component.push_back(stack.back());
        stack.pop_back();
        visits.at(component.back()).on_stack = false;
      } while (component.back() != done);
      Counts total;
      for (const Function* member : component) {
        total.add(bodies.at(member).own);
        for (const Function* callee : bodies.at(member).calls)
          if (auto known = counts.find(callee); known != counts.end()) total.add(known->second);
      }
      for (const Function* member : component) counts[member] = total;
    }
  }
  return counts;
}

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
  const std::unordered_map<const Function*, Counts> counts = counts_with_calls(module);
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
    const Counts& c = counts.at(&fn);
    out << fmt::format("  {}{} {}{}({}){}\n", fn.multinode ? "multinode " : "", fn.is_kernel ? "kernel" : "device",
                       fn.name, ct,
                       param_list(fn.params, fn.param_types),
                       fn.result.is_void() ? "" : " -> " + fn.result.str());
    out << fmt::format("    remote translations (@): {}, loads: {}, stores: {}, atomics: {}, "
                       "synchronisation: {}\n",
                       c.translations, c.loads, c.stores, c.atomics, c.syncs);
  }
}

}  // namespace irisc
