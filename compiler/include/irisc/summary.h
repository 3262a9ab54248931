// irisc's default output (no --emit): what the checked file holds (kernels and
// their signatures, and the communication each performs).
#pragma once

#include "irisc/ast.h"

namespace irisc {

void print_summary(const Module& module, std::string_view file, llvm::raw_ostream& out);

}  // namespace irisc
