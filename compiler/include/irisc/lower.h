// Lowering: the checked tree to TIR, through the list of passes in lower.cpp.
#pragma once

#include "irisc/ast.h"
#include "irisc/tir.h"

#include <span>
#include <string>
#include <string_view>

namespace irisc {

struct LowerOptions {
  std::string source_name;  // for #line directives, checked-mode reports and the namespace
  // Check every access through a symmetric-heap pointer and every `@` at run
  // time, reporting violations with their .iris location.
  bool checked = false;
  // Stop after this pass (--emit=tir --stop-after); empty: run them all.
  std::string_view stop_after;
};

// The passes' names, in the order they run: "build" first.
std::span<const std::string_view> pass_names();

// Lowers a module that passed the checker.
TirModule lower(const Module& module, const LowerOptions& options);

}  // namespace irisc
