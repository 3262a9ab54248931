// The front end's driver: the plain list of phases (lex, parse, import,
// check) run over one source buffer, and over each .iris module it imports.
// Each phase stops the run when it reported errors, so later phases never see
// a broken input.
#pragma once

#include "irisc/ast.h"
#include "irisc/diagnostics.h"
#include "irisc/import.h"
#include "irisc/token.h"

#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <memory>
#include <vector>

namespace irisc {

enum class Stage { Tokens, Ast, Checked };

struct FrontendResult {
  TokenList tokens;
  std::unique_ptr<Module> module;
  // The .iris modules it imports, directly or through other modules, each
  // once; the imports of `module` and of these point to them.
  std::vector<std::unique_ptr<Module>> imported_modules;
  bool ok = false;  // no errors up to the last stage run
};

// The most bytes a source file may hold (256 MiB), so that an endless input
// (`irisc - < /dev/zero`) is an error rather than all the memory.
constexpr size_t kMaxSourceBytes = size_t{256} << 20;

// The longest chain of imports: the file compiled and the modules it imports
// one inside the other, as loading a module recurses through the phases.
constexpr size_t kMaxImportDepth = 256;

// Reads source file `path` ("-": standard input), named `name`, whole; fails
// past kMaxSourceBytes. A bare CR becomes LF, so that a file with old Mac line
// ends has lines (CR LF needs nothing: SourceMgr counts LFs).
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> read_source(const std::string& path, const std::string& name);

// Runs the phases up to `last` on `buffer_id` of `sources`. Stops early (ok =
// false) on errors, including when the error limit is reached. Without
// `imports` (unit tests, the fuzzer) the import phase does not run and
// imported names stay undeclared.
FrontendResult run_frontend(llvm::SourceMgr& sources, unsigned buffer_id, Diagnostics& diags,
                            Stage last, const ImportOptions* imports = nullptr);

}  // namespace irisc
