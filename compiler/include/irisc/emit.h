// Code emission: the checked tree to C++ written against the runtime's tile
// library (runtime/include/iris/kernel.hpp). The same text builds for every
// target: a GPU compiler gets the GPU runtime, a host C++ compiler the CPU
// emulation.
#pragma once

#include "irisc/ast.h"

#include <string>

namespace irisc {

struct EmitOptions {
  std::string source_name;  // for #line directives and the header comment
  bool line_directives = true;
  // Check every access through a symmetric-heap pointer and every `@` at run
  // time, reporting violations with their .iris location.
  bool checked = false;
};

// Writes the generated C++ for a module that passed the checker.
void emit_cpp(const Module& module, const llvm::SourceMgr& sources, const EmitOptions& options,
              llvm::raw_ostream& out);

}  // namespace irisc
