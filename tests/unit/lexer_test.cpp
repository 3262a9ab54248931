// Lexer unit tests: token kinds, literal values and lexical errors.
#include "test_support.h"

#include <doctest/doctest.h>

using namespace irisc;

namespace {
std::vector<TokenKind> kinds_of(const TokenList& tokens) {
  std::vector<TokenKind> out;
  for (const Token& t : tokens) out.push_back(t.kind);
  return out;
}
}  // namespace

TEST_CASE("lexer: maximal munch on operators") {
  auto r = test::run("a <<= b .. c -> d @ e", Stage::Tokens);
  CHECK(r->diagnostics.empty());
  CHECK(kinds_of(r->result.tokens) ==
        std::vector<TokenKind>{TokenKind::Identifier, TokenKind::ShlEq, TokenKind::Identifier,
                               TokenKind::DotDot, TokenKind::Identifier, TokenKind::Arrow,
                               TokenKind::Identifier, TokenKind::At, TokenKind::Identifier,
                               TokenKind::Eof});
}

TEST_CASE("lexer: integer and float literal values") {
  auto r = test::run("0x1F 0b101 1_000 2.5e1 7", Stage::Tokens);
  REQUIRE(r->result.tokens.size() == 6);
  CHECK(r->result.tokens[0].int_value == 31);
  CHECK(r->result.tokens[1].int_value == 5);
  CHECK(r->result.tokens[2].int_value == 1000);
  CHECK(r->result.tokens[3].kind == TokenKind::FloatLiteral);
  CHECK(r->result.tokens[3].float_value == doctest::Approx(25.0));
  CHECK(r->result.tokens[4].int_value == 7);
}

TEST_CASE("lexer: keywords are not identifiers") {
  auto r = test::run("kernel sym tile bf16 kernels", Stage::Tokens);
  CHECK(kinds_of(r->result.tokens) ==
        std::vector<TokenKind>{TokenKind::Kernel, TokenKind::Sym, TokenKind::Tile,
                               TokenKind::BF16, TokenKind::Identifier, TokenKind::Eof});
}

TEST_CASE("lexer: a range is not a float") {
  auto r = test::run("0..4", Stage::Tokens);
  CHECK(kinds_of(r->result.tokens) == std::vector<TokenKind>{TokenKind::IntLiteral, TokenKind::DotDot,
                                                             TokenKind::IntLiteral, TokenKind::Eof});
}

TEST_CASE("lexer: errors are located and reported once per run of bad bytes") {
  auto r = test::run("let a = 1; $$$ /* open", Stage::Tokens);
  CHECK(r->kinds() == std::vector<DiagKind>{DiagKind::InvalidCharacter, DiagKind::InvalidCharacter,
                                            DiagKind::InvalidCharacter,
                                            DiagKind::UnterminatedComment});
  auto overflow = test::run("18446744073709551616", Stage::Tokens);
  CHECK(overflow->kinds() == std::vector<DiagKind>{DiagKind::IntegerTooLarge});
}
