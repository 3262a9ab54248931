// The parser: tokens to a syntax tree, following grammar/iris.ebnf.
#pragma once

#include "irisc/ast.h"
#include "irisc/diagnostics.h"
#include "irisc/token.h"

namespace irisc {

// Deepest nesting of blocks, parentheses and unary operators, and tallest
// expression tree, that the parser accepts. Limits keep every later recursive
// phase far from the end of the stack on pathological input.
inline constexpr int kMaxNesting = 256;
inline constexpr int kMaxExprHeight = 1024;

// Parses `tokens` (ending in Eof) into `module`, reporting syntax errors to
// `diags` and recovering at statement and item boundaries.
void parse(const TokenList& tokens, Module& module, Diagnostics& diags);

}  // namespace irisc
