// The front end's list of phases; see frontend.h.
#include "irisc/frontend.h"

#include "irisc/checker.h"
#include "irisc/lexer.h"
#include "irisc/parser.h"

namespace irisc {

FrontendResult run_frontend(llvm::SourceMgr& sources, unsigned buffer_id, Diagnostics& diags,
                            Stage last, const ImportOptions* imports) {
  FrontendResult result;
  try {
    result.tokens = lex(sources.getMemoryBuffer(buffer_id)->getBuffer(), diags);
    if (!diags.has_errors() && last != Stage::Tokens) {
      result.module = std::make_unique<Module>();
      parse(result.tokens, *result.module, diags);
      if (!diags.has_errors() && last != Stage::Ast && imports)
        resolve_imports(*result.module, sources, buffer_id, diags, *imports);
      if (!diags.has_errors() && last != Stage::Ast) check(*result.module, diags);
    }
    result.ok = !diags.has_errors();
  } catch (const ErrorLimitReached&) {
    result.ok = false;
  }
  return result;
}

}  // namespace irisc
