// The built-in table, read from builtins.def's parameter strings once.
#include "irisc/builtins.h"

#include <array>
#include <string>
#include <unordered_map>

namespace irisc {
namespace {

// The names .iris code writes are the runtime's enumerators.
constexpr std::string_view kSems[] = {
#define IRIS_SEM(name) #name,
#include "iris/memory_model.def"
};
constexpr std::string_view kScopes[] = {
#define IRIS_SCOPE(name) #name,
#include "iris/memory_model.def"
};
constexpr std::string_view kCmps[] = {
#define IRIS_CMP(name) #name,
#include "iris/memory_model.def"
};
constexpr std::string_view kSignalOps[] = {"set", "add"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

ParamKind kind_named(std::string_view name) {
  if (name == "mask") return ParamKind::Mask;
  if (name == "type") return ParamKind::Type;
  if (name == "shape") return ParamKind::Shape;
  if (name == "sem") return ParamKind::Sem;
  if (name == "scope") return ParamKind::Scope;
  if (name == "cmp") return ParamKind::Cmp;
  if (name == "signal_op") return ParamKind::SignalOp;
  return ParamKind::Value;
}

// "ptr, mask?, sem:sem" -> parameters.
std::vector<BuiltinParam> parse_params(std::string_view spec) {
  std::vector<BuiltinParam> params;
  while (!trim(spec).empty()) {
    size_t comma = spec.find(',');
    std::string_view item = trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    BuiltinParam p;
    if (item.ends_with('?')) {
      p.optional = true;
      item.remove_suffix(1);
    }
    size_t colon = item.find(':');
    p.name = item.substr(0, colon);
    if (colon != std::string_view::npos) p.kind = kind_named(item.substr(colon + 1));
    params.push_back(p);
  }
  return params;
}

const std::unordered_map<std::string_view, BuiltinInfo>& table() {
  static const auto builtins = [] {
    std::unordered_map<std::string_view, BuiltinInfo> map;
#define BUILTIN(Name, Spelling, Params) \
  map.emplace(Spelling, BuiltinInfo{BuiltinId::Name, Spelling, parse_params(Params)});
#define MULTINODE(Name, Spelling, Params, Op) \
  map.emplace(Spelling, BuiltinInfo{BuiltinId::Name, Spelling, parse_params(Params), true});
#include "irisc/builtins.def"
    return map;
  }();
  return builtins;
}

}  // namespace

std::span<const std::string_view> enumerators(ParamKind kind) {
  switch (kind) {
    case ParamKind::Sem: return kSems;
    case ParamKind::Scope: return kScopes;
    case ParamKind::Cmp: return kCmps;
    case ParamKind::SignalOp: return kSignalOps;
    default: return {};
  }
}

std::string_view enum_kind_name(ParamKind kind) {
  switch (kind) {
    case ParamKind::Sem: return "memory order";
    case ParamKind::Scope: return "scope";
    case ParamKind::Cmp: return "comparison";
    case ParamKind::SignalOp: return "signal operation";
    default: return "value";
  }
}

const BuiltinInfo* find_builtin(std::string_view name) {
  auto it = table().find(name);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<const BuiltinInfo*> all_builtins() {
  return {
#define BUILTIN(Name, Spelling, Params) find_builtin(Spelling),
#include "irisc/builtins.def"
  };
}

size_t param_of_kind(const BuiltinInfo& b, ParamKind kind) {
  for (size_t i = 0; i < b.params.size(); ++i)
    if (b.params[i].kind == kind) return i;
  return b.params.size();
}

bool is_elementwise(BuiltinId id) {
  switch (id) {
#define BUILTIN(Name, Spelling, Params)
#define ELEMENTWISE(Name, Spelling, Params, Runtime) case BuiltinId::Name:
#include "irisc/builtins.def"
      return true;
    default: return false;
  }
}

bool is_atomic_rmw(BuiltinId id) {
  switch (id) {
#define ATOMIC_RMW(Name, Spelling, Params, Op) case BuiltinId::Name:
#include "irisc/builtins.def"
      return true;
    default: return false;
  }
}

bool is_atomic(BuiltinId id) {
  return is_atomic_rmw(id) || id == BuiltinId::AtomicCas || id == BuiltinId::AtomicLoad ||
         id == BuiltinId::AtomicStore;
}

bool is_plain_access(BuiltinId id) {
  return id == BuiltinId::Load || id == BuiltinId::Store || id == BuiltinId::Get || id == BuiltinId::Put ||
         id == BuiltinId::PutSignal;
}

}  // namespace irisc
