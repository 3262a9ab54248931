// The import phase, between parsing and checking: for each `import "h.hip";`
// it finds the header (next to the .iris file, then in the -I directories),
// runs irisc-import-hip on it (see import_protocol.h: irisc itself links no
// Clang) and turns the helper's description into Function nodes without
// bodies, which the checker declares next to the file's own functions.
// Header locations become locations in the SourceMgr (the header is added as
// a buffer), so notes point into the header with its source line.
//
// An import whose path ends in ".iris" names an .iris module instead: it is
// found next to the file, in the -I directories, then among the Iris
// package's modules (ImportOptions::module_dir), and handed to a
// ModuleLoader, which runs the front end on it (frontend.cpp).
#pragma once

#include "irisc/ast.h"
#include "irisc/diagnostics.h"

#include <functional>
#include <string>
#include <vector>

namespace irisc {

// What the helper said of a header: its description (import_protocol.h), or
// why there is none.
struct HeaderDescription {
  std::string description;
  std::string failure;  // empty when it succeeded
};

struct ImportOptions {
  std::string helper;  // path of irisc-import-hip
  std::vector<std::string> include_dirs;  // searched for imports; passed to Clang as -I
  std::string compile_commands_dir;  // passed to the helper as -p when not empty
  std::string module_dir;  // the Iris package's .iris modules, searched last; empty: none
  // Where set, asked for a header's description instead of running the
  // helper (the language server's cache, which runs it in the background):
  // null while it is not known, which leaves the import without functions.
  std::function<const HeaderDescription*(const std::string& header)> describe;
};

// The options of a program installed next to irisc (argv0 and any function of
// the program as `anchor`): the helper in its folder, the package's modules in
// the include folder beside it (<prefix>/bin and <prefix>/include/iris, or
// compiler/ and include/ in the build tree).
ImportOptions installed_import_options(const char* argv0, void* anchor);

// Runs the helper on `header` (absolute) with `options`' flags.
HeaderDescription describe_header(const std::string& header, const ImportOptions& options);

// A file the import phase found (an .iris module, or a header).
struct FoundFile {
  std::string path;  // absolute, without dots
  // Its name in diagnostics and the generated code: the folder it was found
  // in joined with the import's path, or the import's path alone for a module
  // of the package (so that generated code names no folder of the machine).
  std::string name;
  std::string dir;  // the folder its own imports are relative to
};

// Runs the front end on the modules the import phase finds.
class ModuleLoader {
 public:
  virtual ~ModuleLoader() = default;
  // The module `import` names, checked; null when it has errors (reported).
  virtual const Module* load(const ImportDecl& import, const FoundFile& found) = 0;
};

// Resolves every import of `module`, whose imports are relative to `dir`
// ("" for the current folder).
void resolve_imports(Module& module, llvm::SourceMgr& sources, const std::string& dir,
                     Diagnostics& diags, const ImportOptions& options, ModuleLoader& modules);

}  // namespace irisc
