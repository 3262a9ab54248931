// What a traced build (irisc --trace; docs/debugging.md, "Traces") records,
// decided on the lowered TIR for the C++ printer (emit_cpp.cpp), which wraps
// each of these statements in a span of the runtime's iris/ops/trace.hpp:
//   * the kernel's body;
//   * a statement whose operation has the trait Traced, or TracedWhenRemote
//     where it reaches another rank (tir_ops.def), its span named by the
//     operation's spelling;
//   * a dot loop: a `for` whose own body (not a nested loop's) holds a dot;
//   * an epilogue: the statements after one that computes a dot (a dot loop,
//     or a call of a device function that runs one), to the end of their
//     block, where they write memory.
#pragma once

#include <unordered_set>

#include "irisc/tir.h"

namespace irisc {

// The operation of statement s that gets a span of its own, or null.
const TirValue* traced_operation(const TirStmt& s);

bool is_dot_loop(const TirStmt& s);

class DotFunctions {
 public:
  // The functions of `module` that run a dot, themselves or through a call.
  explicit DotFunctions(const TirModule& module);
  // Whether statement s computes a dot, itself or through a call.
  bool computes_dot(const TirStmt& s) const;

 private:
  std::unordered_set<const TirFunction*> functions_;
};

// Whether a statement among `rest` writes memory (or calls a device function,
// which may): the statements after a dot are an epilogue worth a span then.
bool writes_memory(const std::vector<TirStmt*>& rest);

}  // namespace irisc
