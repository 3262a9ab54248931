// The checker: resolves names, types every expression, folds compile-time
// values and enforces the language's rules (see docs/language.md). It
// annotates the Module in place; after a run without errors the tree is the
// typed program that lowering reads.
#pragma once

#include "irisc/ast.h"
#include "irisc/diagnostics.h"

namespace irisc {

// Largest tile the checker accepts (elements).
inline constexpr int64_t kMaxTileSize = int64_t{1} << 20;

// Checks the module; where it found no error, then checks its memory
// model (check_memory_model).
void check(Module& module, Diagnostics& diags);

// The memory model, checked (language.md 12.1): atomics, signals and waits on
// other ranks' memory at a scope narrower than `sys`, data published by a flag
// that does not release (and read after a wait that does not acquire), and
// flags set to a constant that is then reused. Runs on a checked module.
void check_memory_model(const Module& module, Diagnostics& diags);

}  // namespace irisc
