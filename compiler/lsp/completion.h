// irisc-lsp's completions, read from the text being typed (which need not
// parse): the built-ins of builtins.def and the keywords of tokens.def; inside
// a built-in's parentheses its parameters as named arguments, and after
// `sem =`, `scope =`, `op =` (or another enumeration's parameter) its
// enumerators.
#pragma once

#include "irisc/builtins.h"

#include <llvm/Support/JSON.h>

#include <string>
#include <string_view>

namespace irisc::lsp {

// `load(ptr, mask?, other?)`; an enumeration's parameter with its kind:
// `fence(sem: memory order, scope: scope)`.
std::string builtin_signature(const BuiltinInfo& builtin);

// The CompletionItems for the cursor at byte `offset` of `text`.
llvm::json::Array completions(std::string_view text, size_t offset);

}  // namespace irisc::lsp
