// The lexer: one pass over the bytes with maximal munch.
//
// Design notes:
// - Outside comments and string literals only ASCII is allowed; inside them the
//   bytes must be valid UTF-8. NUL bytes are rejected everywhere.
// - A run of bad bytes gets one error, not one per byte, so a binary file does
//   not bury the user in messages (the error limit stops it in any case).
// - Numbers are checked here (overflow, stray letters), so the parser only sees
//   well-formed literals.
#include "irisc/lexer.h"

#include <llvm/Support/ConvertUTF.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

namespace irisc {
namespace {

constexpr std::string_view kKindText[] = {
#define TOKEN(Name, Text) Text,
#define KEYWORD(Name, Text) Text,
#define PUNCT(Name, Text) Text,
#include "irisc/tokens.def"
};

constexpr std::string_view kKindName[] = {
#define TOKEN(Name, Text) #Name,
#define KEYWORD(Name, Text) #Name,
#define PUNCT(Name, Text) #Name,
#include "irisc/tokens.def"
};

struct Punct {
  std::string_view text;
  TokenKind kind;
};
constexpr Punct kPuncts[] = {
#define PUNCT(Name, Text) {Text, TokenKind::Name},
#include "irisc/tokens.def"
};

// The punctuators that start with each byte, longest first, so the first
// match is the maximal munch (a scan of every punctuator per token was half
// of the front end's instructions).
const std::vector<const Punct*>& puncts_starting_with(char c) {
  static const auto table = [] {
    std::array<std::vector<const Punct*>, 256> t;
    for (const Punct& p : kPuncts) t[static_cast<unsigned char>(p.text[0])].push_back(&p);
    for (auto& list : t)
      std::stable_sort(list.begin(), list.end(),
                       [](const Punct* a, const Punct* b) { return a->text.size() > b->text.size(); });
    return t;
  }();
  return table[static_cast<unsigned char>(c)];
}

const std::unordered_map<std::string_view, TokenKind>& keywords() {
  static const std::unordered_map<std::string_view, TokenKind> table = {
#define KEYWORD(Name, Text) {Text, TokenKind::Name},
#include "irisc/tokens.def"
  };
  return table;
}

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
bool is_hex_digit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

llvm::SMRange range_of(const char* begin, const char* end) {
  return {llvm::SMLoc::getFromPointer(begin), llvm::SMLoc::getFromPointer(end)};
}

class Lexer {
 public:
  Lexer(llvm::StringRef source, Diagnostics& diags)
      : cur_(source.begin()), end_(source.end()), diags_(diags) {}

  TokenList run() {
    TokenList tokens;
    tokens.reserve(static_cast<size_t>(end_ - cur_) / 4 + 1);  // about one token per 4 bytes
    while (true) {
      skip_trivia();
      if (cur_ >= end_) break;
      if (auto token = next()) tokens.push_back(*token);
    }
    tokens.push_back(Token{TokenKind::Eof, std::string_view(end_, 0)});
    return tokens;
  }

 private:
  // Whitespace and comments.
  void skip_trivia() {
    while (cur_ < end_) {
      char c = *cur_;
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        ++cur_;
      } else if (c == '/' && peek(1) == '/') {
        const char* begin = cur_;
        while (cur_ < end_ && *cur_ != '\n') ++cur_;
        check_utf8(begin, cur_, "comment");
      } else if (c == '/' && peek(1) == '*') {
        skip_block_comment();
      } else {
        return;
      }
    }
  }

  void skip_block_comment() {
    const char* begin = cur_;
    cur_ += 2;
    while (cur_ < end_ && !(*cur_ == '*' && peek(1) == '/')) ++cur_;
    if (cur_ >= end_) {
      diags_.error(DiagKind::UnterminatedComment, range_of(begin, begin + 2));
      return;
    }
    cur_ += 2;
    check_utf8(begin, cur_, "comment");
  }

  // Reports NULs and invalid UTF-8 inside a comment or string literal.
  void check_utf8(const char* begin, const char* end, std::string_view what) {
    for (const char* p = begin; p < end; ++p)
      if (*p == '\0') diags_.error(DiagKind::NulCharacter, range_of(p, p + 1));
    auto* first = reinterpret_cast<const llvm::UTF8*>(begin);
    if (!llvm::isLegalUTF8String(&first, reinterpret_cast<const llvm::UTF8*>(end))) {
      auto* bad = reinterpret_cast<const char*>(first);
      diags_.error(DiagKind::InvalidUtf8, range_of(bad, bad + 1), what);
    }
  }

  char peek(size_t ahead) const { return cur_ + ahead < end_ ? cur_[ahead] : '\0'; }

  std::optional<Token> next() {
    char c = *cur_;
    if (is_ident_start(c)) return identifier();
    if (is_digit(c)) return number();
    if (c == '"') return string();
    if (auto token = punct()) return token;
    bad_bytes();
    return std::nullopt;
  }

  Token make(TokenKind kind, const char* begin) {
    return Token{kind, std::string_view(begin, cur_ - begin)};
  }

  Token identifier() {
    const char* begin = cur_;
    while (cur_ < end_ && is_ident_char(*cur_)) ++cur_;
    Token token = make(TokenKind::Identifier, begin);
    if (auto it = keywords().find(token.text); it != keywords().end()) token.kind = it->second;
    return token;
  }

  // INT and FLOAT of the grammar; a trailing letter or digit makes it malformed.
  std::optional<Token> number() {
    const char* begin = cur_;
    int base = 10;
    if (*cur_ == '0' && (peek(1) == 'x' || peek(1) == 'X')) base = 16;
    if (*cur_ == '0' && (peek(1) == 'b' || peek(1) == 'B')) base = 2;
    if (base != 10) cur_ += 2;
    auto digit_ok = [&](char ch) {
      return base == 16 ? is_hex_digit(ch) : base == 2 ? (ch == '0' || ch == '1') : is_digit(ch);
    };
    const char* digits = cur_;
    while (cur_ < end_ && (digit_ok(*cur_) || (*cur_ == '_' && cur_ > digits))) ++cur_;
    bool is_float = false;
    if (base == 10 && cur_ < end_ && *cur_ == '.' && is_digit(peek(1))) {
      is_float = true;
      ++cur_;
      while (cur_ < end_ && (is_digit(*cur_) || *cur_ == '_')) ++cur_;
    }
    if (base == 10 && cur_ < end_ && (*cur_ == 'e' || *cur_ == 'E')) {
      const char* exp = cur_ + 1;
      if (exp < end_ && (*exp == '+' || *exp == '-')) ++exp;
      if (exp < end_ && is_digit(*exp)) {
        is_float = true;
        cur_ = exp;
        while (cur_ < end_ && is_digit(*cur_)) ++cur_;
      }
    }
    bool malformed = cur_ == digits || cur_[-1] == '_';
    while (cur_ < end_ && is_ident_char(*cur_)) {
      malformed = true;
      ++cur_;
    }
    Token token = make(is_float ? TokenKind::FloatLiteral : TokenKind::IntLiteral, begin);
    if (malformed) {
      diags_.error(DiagKind::MalformedNumber, token.range(), token.text);
      return std::nullopt;
    }
    std::string clean;
    for (char ch : std::string_view(digits, cur_ - digits))
      if (ch != '_') clean += ch;
    if (is_float) {
      token.float_value = std::strtod(clean.c_str(), nullptr);
      return token;
    }
    uint64_t value = 0;
    for (char ch : clean) {
      uint64_t d = is_digit(ch) ? ch - '0' : (ch | 0x20) - 'a' + 10;
      if (value > (UINT64_MAX - d) / base) {
        diags_.error(DiagKind::IntegerTooLarge, token.range(), token.text);
        return std::nullopt;
      }
      value = value * base + d;
    }
    token.int_value = value;
    return token;
  }

  // STRING: the token keeps its quotes; escapes are validated here and decoded
  // by the parser.
  std::optional<Token> string() {
    const char* begin = cur_++;
    bool ok = true;
    while (cur_ < end_ && *cur_ != '"' && *cur_ != '\n') {
      if (*cur_ == '\\') {
        char e = peek(1);
        if (e != '"' && e != '\\' && e != 'n' && e != 't' && e != '0') {
          if (cur_ + 1 >= end_ || e == '\n') break;
          diags_.error(DiagKind::InvalidEscape, range_of(cur_, cur_ + 2), std::string(1, e));
          ok = false;
        }
        cur_ += 2;
        continue;
      }
      ++cur_;
    }
    if (cur_ >= end_ || *cur_ != '"') {
      diags_.error(DiagKind::UnterminatedString, range_of(begin, begin + 1));
      return std::nullopt;
    }
    ++cur_;
    check_utf8(begin, cur_, "string literal");
    if (!ok) return std::nullopt;
    return make(TokenKind::StringLiteral, begin);
  }

  std::optional<Token> punct() {
    for (const Punct* p : puncts_starting_with(*cur_)) {
      if (static_cast<size_t>(end_ - cur_) >= p->text.size() &&
          std::string_view(cur_, p->text.size()) == p->text) {
        const char* begin = cur_;
        cur_ += p->text.size();
        return make(p->kind, begin);
      }
    }
    return std::nullopt;
  }

  // One error for a run of bytes that cannot start a token.
  void bad_bytes() {
    const char* begin = cur_;
    unsigned char c = *cur_;
    auto same_class = [&](unsigned char b) {
      if (c == 0) return b == 0;
      if (c >= 0x80) return b >= 0x80;
      return false;
    };
    ++cur_;
    while (cur_ < end_ && same_class(static_cast<unsigned char>(*cur_))) ++cur_;
    auto range = range_of(begin, cur_);
    if (c == 0)
      diags_.error(DiagKind::NulCharacter, range);
    else if (c >= 0x80)
      diags_.error(DiagKind::NonAsciiCharacter, range, c);
    else if (c < 0x20 || c == 0x7f)
      diags_.error(DiagKind::InvalidCharacter, range, fmt::format("\\x{:02x}", c));
    else
      diags_.error(DiagKind::InvalidCharacter, range, std::string(1, static_cast<char>(c)));
  }

  const char* cur_;
  const char* end_;
  Diagnostics& diags_;
};

}  // namespace

std::string_view token_kind_text(TokenKind kind) { return kKindText[static_cast<size_t>(kind)]; }
std::string_view token_kind_name(TokenKind kind) { return kKindName[static_cast<size_t>(kind)]; }

TokenKind compound_operator(TokenKind op) {
  switch (op) {
    case TokenKind::PlusEq: return TokenKind::Plus;
    case TokenKind::MinusEq: return TokenKind::Minus;
    case TokenKind::StarEq: return TokenKind::Star;
    case TokenKind::SlashEq: return TokenKind::Slash;
    case TokenKind::PercentEq: return TokenKind::Percent;
    case TokenKind::AmpEq: return TokenKind::Amp;
    case TokenKind::PipeEq: return TokenKind::Pipe;
    case TokenKind::CaretEq: return TokenKind::Caret;
    case TokenKind::ShlEq: return TokenKind::Shl;
    case TokenKind::ShrEq: return TokenKind::Shr;
    default: return op;
  }
}

TokenList lex(llvm::StringRef source, Diagnostics& diags) { return Lexer(source, diags).run(); }

}  // namespace irisc
