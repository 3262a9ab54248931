// Lowering: the checked tree to TIR, through the list of passes in lower.cpp.
#pragma once

#include "irisc/ast.h"
#include "irisc/tir.h"

#include <span>
#include <string>
#include <string_view>

namespace irisc {

struct LowerOptions {
  std::string source_name;  // for #line directives, checked-mode reports and the default namespace
  // Check every access through a symmetric-heap pointer and every `@` at run
  // time, reporting violations with their .iris location.
  bool checked = false;
  // Stop after this pass (--emit=tir --stop-after); empty: run them all.
  std::string_view stop_after;
  // The namespace of the file's items inside iris_kernels (--namespace), one
  // that namespace_name_error accepts; empty: <file>_iris, after source_name.
  std::string namespace_name;
};

// Why `name` cannot be LowerOptions::namespace_name, or "" where it can: it
// must be a name that the naming pass gives unchanged to a user's item.
std::string namespace_name_error(std::string_view name);

// The passes' names, in the order they run: "build" first.
std::span<const std::string_view> pass_names();

// Lowers a module that passed the checker.
TirModule lower(const Module& module, const LowerOptions& options);

}  // namespace irisc
