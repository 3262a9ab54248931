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

void check(Module& module, Diagnostics& diags);

}  // namespace irisc
