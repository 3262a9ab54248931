// Tokens: the output of the lexer and the input of the parser.
#pragma once

#include <llvm/Support/SMLoc.h>

#include <cstdint>
#include <string_view>
#include <vector>

namespace irisc {

enum class TokenKind : uint8_t {
#define TOKEN(Name, Text) Name,
#define KEYWORD(Name, Text) Name,
#define PUNCT(Name, Text) Name,
#include "irisc/tokens.def"
};

// The spelling of a keyword or punctuator, or a description of the other kinds.
std::string_view token_kind_text(TokenKind kind);
// The enumerator name, e.g. "Identifier" (for --emit=tokens).
std::string_view token_kind_name(TokenKind kind);
// The binary operator of a compound assignment (PlusEq -> Plus); others unchanged.
TokenKind compound_operator(TokenKind op);

struct Token {
  TokenKind kind = TokenKind::Eof;
  std::string_view text;  // points into the source buffer
  union {
    uint64_t int_value = 0;  // IntLiteral
    double float_value;      // FloatLiteral
  };

  llvm::SMLoc loc() const { return llvm::SMLoc::getFromPointer(text.data()); }
  llvm::SMRange range() const {
    return {loc(), llvm::SMLoc::getFromPointer(text.data() + text.size())};
  }
  bool is(TokenKind k) const { return kind == k; }
};

using TokenList = std::vector<Token>;

}  // namespace irisc
