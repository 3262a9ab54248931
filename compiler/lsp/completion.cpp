// Completions; see completion.h.
#include "completion.h"

#include <algorithm>
#include <cctype>

namespace irisc::lsp {
namespace {

// CompletionItemKind.
constexpr int kFunction = 3, kField = 5, kKeyword = 14, kEnumMember = 20;

constexpr std::string_view kKeywords[] = {
#define KEYWORD(Name, Text) Text,
#include "irisc/tokens.def"
};

bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The word that ends just before `end`.
std::string_view word_before(std::string_view text, size_t end) {
  size_t start = end;
  while (start > 0 && is_word(text[start - 1])) --start;
  return text.substr(start, end - start);
}

size_t skip_spaces_back(std::string_view text, size_t end) {
  while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return end;
}

// The built-in whose call's parentheses hold `offset`, or null: the nearest
// '(' not closed before it, within the statement, after a built-in's name (and
// its compile-time arguments, `<...>`).
const BuiltinInfo* enclosing_builtin(std::string_view text, size_t offset) {
  int depth = 0;
  for (size_t i = offset; i > 0; --i) {
    char c = text[i - 1];
    if (c == ')') ++depth;
    if (c == ';' || c == '{' || c == '}') return nullptr;
    if (c != '(') continue;
    if (depth-- > 0) continue;
    size_t end = skip_spaces_back(text, i - 1);
    if (end > 0 && text[end - 1] == '>') {
      size_t open = text.rfind('<', end - 1);
      if (open == std::string_view::npos) return nullptr;
      end = skip_spaces_back(text, open);
    }
    return find_builtin(word_before(text, end));
  }
  return nullptr;
}

llvm::json::Object item(std::string_view label, int kind, std::string detail, std::string insert) {
  return llvm::json::Object{{"label", llvm::StringRef(label)}, {"kind", kind}, {"detail", std::move(detail)}, {"insertText", std::move(insert)}};
}

}  // namespace

std::string builtin_signature(const BuiltinInfo& builtin) {
  std::string params;
  for (const BuiltinParam& p : builtin.params) {
    params += (params.empty() ? "" : ", ") + std::string(p.name);
    if (!enumerators(p.kind).empty()) params += ": " + std::string(enum_kind_name(p.kind));
    if (p.optional) params += "?";
  }
  return std::string(builtin.name) + "(" + params + ")";
}

llvm::json::Array completions(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t word_start = offset - word_before(text, offset).size();
  llvm::json::Array items;
  if (const BuiltinInfo* builtin = enclosing_builtin(text, word_start)) {
    // After `name =`: the enumerators of that parameter.
    size_t before = skip_spaces_back(text, word_start);
    if (before > 0 && text[before - 1] == '=' && (before < 2 || std::string_view("=!<>").find(text[before - 2]) == std::string_view::npos)) {
      std::string_view name = word_before(text, skip_spaces_back(text, before - 1));
      for (const BuiltinParam& p : builtin->params)
        if (p.name == name)
          for (std::string_view e : enumerators(p.kind)) items.push_back(item(e, kEnumMember, std::string(enum_kind_name(p.kind)), std::string(e)));
      if (!items.empty()) return items;
    }
    for (const BuiltinParam& p : builtin->params) {
      std::string detail = std::string(enumerators(p.kind).empty() ? "argument" : enum_kind_name(p.kind)) +
                           (p.optional ? ", optional" : "") + " of " + builtin_signature(*builtin);
      items.push_back(item(p.name, kField, std::move(detail), std::string(p.name) + " = "));
    }
  }
  for (const BuiltinInfo* builtin : all_builtins())
    items.push_back(item(builtin->name, kFunction, "built-in " + builtin_signature(*builtin), std::string(builtin->name)));
  for (std::string_view keyword : kKeywords) items.push_back(item(keyword, kKeyword, "keyword", std::string(keyword)));
  return items;
}

}  // namespace irisc::lsp
