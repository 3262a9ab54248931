// The lexer: source text to tokens.
#pragma once

#include "irisc/diagnostics.h"
#include "irisc/token.h"

#include <llvm/ADT/StringRef.h>

namespace irisc {

// Splits `source` (which must stay alive as long as the tokens) into tokens,
// reporting malformed input to `diags`. The list always ends with an Eof token.
// Bad bytes are reported and skipped, so the parser sees a clean stream.
TokenList lex(llvm::StringRef source, Diagnostics& diags);

}  // namespace irisc
