// The built-in functions and the enumerations their arguments name.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace irisc {

enum class BuiltinId : uint8_t {
#define BUILTIN(Name, Spelling, Params) Name,
#include "irisc/builtins.def"
};

// What an argument of a built-in is: a value; a mask (a bool value, or tile,
// that switches elements off); a type; a tile size or shape; an enumerator.
enum class ParamKind : uint8_t { Value, Mask, Type, Shape, Sem, Scope, Cmp, SignalOp };

// The enumerators that a Sem, Scope, Cmp or SignalOp argument may name, in the
// order that Call::enum_args indexes.
std::span<const std::string_view> enumerators(ParamKind kind);
// "memory order", "scope", ...
std::string_view enum_kind_name(ParamKind kind);

// Memory orders, in enumerators(ParamKind::Sem) order.
enum class MemoryOrder : uint8_t { Relaxed, Acquire, Release, AcqRel };
enum class SignalOp : uint8_t { Set, Add };

struct BuiltinParam {
  std::string_view name;
  ParamKind kind = ParamKind::Value;
  bool optional = false;
};

struct BuiltinInfo {
  BuiltinId id;
  std::string_view name;
  std::vector<BuiltinParam> params;
  // A built-in of multi-node code (MULTINODE in builtins.def): a function of
  // the program may take its name, and calls then reach the function.
  bool yields_to_functions = false;
};

// The built-in called `name`, or null.
const BuiltinInfo* find_builtin(std::string_view name);
// Every built-in, in builtins.def's order (the language server's completions).
std::vector<const BuiltinInfo*> all_builtins();

// The index of b's parameter of kind `kind` (the first), or b.params.size().
size_t param_of_kind(const BuiltinInfo& b, ParamKind kind);

// A read-modify-write atomic (ATOMIC_RMW in builtins.def).
bool is_atomic_rmw(BuiltinId id);
// An elementwise function of numbers (ELEMENTWISE in builtins.def).
bool is_elementwise(BuiltinId id);
// Any atomic access: the read-modify-writes, atomic_cas, atomic_load, atomic_store.
bool is_atomic(BuiltinId id);
// A plain access, local or remote: load, store, get, put, put_signal's data.
bool is_plain_access(BuiltinId id);

}  // namespace irisc
