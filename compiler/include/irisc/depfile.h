// Dependency files in the format of gcc's -MD/-MF: one make rule,
//   target: dep1 dep2 ...
// naming every file the compilation read, so that make and ninja (CMake's
// DEPFILE) rebuild the output when any of them changes. Paths are escaped the
// way gcc does it: a space or '#' gets a backslash, '$' is doubled.
#pragma once

#include <llvm/Support/raw_ostream.h>

#include <string>
#include <string_view>
#include <vector>

namespace irisc {

// `path` escaped for a make rule.
std::string escape_make_path(std::string_view path);

// Writes `target: deps...` with one dependency per continuation line.
// Duplicates are written once, in first-seen order.
void write_depfile(llvm::raw_ostream& out, std::string_view target,
                   const std::vector<std::string>& deps);

}  // namespace irisc
