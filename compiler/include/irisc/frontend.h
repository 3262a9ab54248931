// The front end's driver: the plain list of phases (lex, parse, import,
// check) run over one source buffer. Each phase stops the run when it reported errors, so
// later phases never see a broken input.
#pragma once

#include "irisc/ast.h"
#include "irisc/diagnostics.h"
#include "irisc/import.h"
#include "irisc/token.h"

#include <memory>

namespace irisc {

enum class Stage { Tokens, Ast, Checked };

struct FrontendResult {
  TokenList tokens;
  std::unique_ptr<Module> module;
  bool ok = false;  // no errors up to the last stage run
};

// Runs the phases up to `last` on `buffer_id` of `sources`. Stops early (ok =
// false) on errors, including when the error limit is reached. Without
// `imports` (unit tests, the fuzzer) the import phase does not run and
// imported names stay undeclared.
FrontendResult run_frontend(llvm::SourceMgr& sources, unsigned buffer_id, Diagnostics& diags,
                            Stage last, const ImportOptions* imports = nullptr);

}  // namespace irisc
