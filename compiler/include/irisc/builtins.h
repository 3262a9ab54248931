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

// What an argument of a built-in is.
enum class ParamKind : uint8_t { Value, Type, Sem, Scope, Cmp, SignalOp };

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
};

// The built-in called `name`, or null.
const BuiltinInfo* find_builtin(std::string_view name);

}  // namespace irisc
