// Dependency-file writing; see depfile.h.
#include "irisc/depfile.h"

#include <llvm/ADT/StringSet.h>

namespace irisc {

std::string escape_make_path(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    if (c == ' ' || c == '#') out += '\\';
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

void write_depfile(llvm::raw_ostream& out, std::string_view target,
                   const std::vector<std::string>& deps) {
  out << escape_make_path(target) << ":";
  llvm::StringSet<> seen;
  for (const std::string& dep : deps)
    if (seen.insert(dep).second) out << " \\\n  " << escape_make_path(dep);
  out << "\n";
}

}  // namespace irisc
