// Every diagnostic kind is exercised: the front end runs over each file in
// tests/diagnostics and the kinds it reports are collected. Every error,
// warning and note of diagnostics.def must be among them, and each kind has its own file,
// named after it in snake_case, that reports it. (ctest separately runs
// `irisc --verify` on each file, which checks the messages and lines.)
#include "test_support.h"

#include <doctest/doctest.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

using namespace irisc;

namespace {

const std::filesystem::path kDir = std::filesystem::path(IRIS_SOURCE_DIR) / "tests" / "diagnostics";

// "UsedBeforeBound" -> "used_before_bound", "InvalidUtf8" -> "invalid_utf8".
std::string snake_case(std::string_view name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (i > 0) out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

// The kinds each diagnostics file reports, by file stem.
const std::map<std::string, std::set<DiagKind>>& reported() {
  static const auto files = [] {
    std::map<std::string, std::set<DiagKind>> out;
    for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
      if (entry.path().extension() != ".iris") continue;
      auto buffer = llvm::MemoryBuffer::getFile(entry.path().string(), /*IsText=*/true);
      REQUIRE_MESSAGE(buffer, "cannot read " << entry.path().string());
      auto r = test::run(std::string((*buffer)->getBuffer()), Stage::Checked, entry.path().string(),
                         &test::import_options());
      auto& kinds = out[entry.path().stem().string()];
      for (const Diagnostic& d : r->diagnostics) kinds.insert(d.kind);
    }
    return out;
  }();
  return files;
}

}  // namespace

TEST_CASE("diagnostics: the test inputs are found") {
  CHECK_MESSAGE(reported().size() >= all_diag_kinds().size(),
                "expected a file per kind in " << kDir.string());
}

TEST_CASE("diagnostics: every kind is reported by some test input") {
  std::set<DiagKind> seen;
  for (const auto& [file, kinds] : reported()) seen.insert(kinds.begin(), kinds.end());
  std::string missing;
  for (DiagKind kind : all_diag_kinds())
    if (!seen.count(kind)) missing += " " + std::string(diag_info(kind).name);
  CHECK_MESSAGE(missing.empty(), "kinds no file in tests/diagnostics reports:" << missing);
}

TEST_CASE("diagnostics: each kind has a file named after it that reports it") {
  std::string missing_file, not_reported;
  for (DiagKind kind : all_diag_kinds()) {
    std::string name = snake_case(diag_info(kind).name);
    auto it = reported().find(name);
    if (it == reported().end())
      missing_file += " " + name + ".iris";
    else if (!it->second.count(kind))
      not_reported += " " + name + ".iris (" + std::string(diag_info(kind).name) + ")";
  }
  CHECK_MESSAGE(missing_file.empty(), "missing files in tests/diagnostics:" << missing_file);
  CHECK_MESSAGE(not_reported.empty(), "files that do not report their kind:" << not_reported);
}

TEST_CASE("diagnostics: snake_case names") {
  CHECK(snake_case("UsedBeforeBound") == "used_before_bound");
  CHECK(snake_case("InvalidUtf8") == "invalid_utf8");
  CHECK(snake_case("NulCharacter") == "nul_character");
}
