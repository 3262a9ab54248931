// The import phase, between parsing and checking: for each `import "h.hip";`
// it finds the header (next to the .iris file, then in the -I directories),
// runs irisc-import-hip on it (see import_protocol.h: irisc itself links no
// Clang) and turns the helper's description into Function nodes without
// bodies, which the checker declares next to the file's own functions.
// Header locations become locations in the SourceMgr (the header is added as
// a buffer), so notes point into the header with its source line.
#pragma once

#include "irisc/ast.h"
#include "irisc/diagnostics.h"

#include <string>
#include <vector>

namespace irisc {

struct ImportOptions {
  std::string helper;  // path of irisc-import-hip
  std::vector<std::string> include_dirs;  // searched for imports; passed to Clang as -I
  std::string compile_commands_dir;  // passed to the helper as -p when not empty
};

// Resolves every import of `module`, whose source is buffer `main_id`.
void resolve_imports(Module& module, llvm::SourceMgr& sources, unsigned main_id,
                     Diagnostics& diags, const ImportOptions& options);

}  // namespace irisc
