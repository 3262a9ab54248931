// Code emission: TIR, after the lowering passes, printed as C++ written
// against the runtime's tile library (runtime/include/iris/kernel.hpp). The
// same text builds for every target: a GPU compiler gets the GPU runtime, a
// host C++ compiler the CPU emulation.
#pragma once

#include "irisc/tir.h"

namespace irisc {

// Writes the generated C++ for a lowered module (lower.h).
void emit_cpp(const TirModule& module, const llvm::SourceMgr& sources, llvm::raw_ostream& out);

}  // namespace irisc
