// The -verify mode; see verify.h.
#include "irisc/verify.h"

#include <llvm/Support/Regex.h>

namespace irisc {
namespace {

struct Expectation {
  Severity severity;
  unsigned line;
  std::string text;
  bool matched = false;
};

std::vector<Expectation> read_expectations(const llvm::SourceMgr& sources, unsigned buffer_id) {
  std::vector<Expectation> out;
  llvm::StringRef rest = sources.getMemoryBuffer(buffer_id)->getBuffer();
  llvm::Regex pattern(R"(expected-(error|note)(@([+-]?)([0-9]+))? *\{\{(.*)\}\})");
  for (unsigned line = 1; !rest.empty(); ++line) {
    auto [text, next] = rest.split('\n');
    rest = next;
    // A line may hold several expectations: match them one by one.
    while (true) {
      llvm::SmallVector<llvm::StringRef, 6> m;
      if (!pattern.match(text, &m)) break;
      // The greedy (.*) may swallow a later expectation: cut at the first "}}".
      llvm::StringRef body = m[5];
      size_t close = body.find("}}");
      llvm::StringRef message = body.substr(0, close);
      unsigned target = line;
      if (!m[2].empty()) {
        unsigned offset = 0;
        m[4].getAsInteger(10, offset);
        target = m[3] == "+" ? line + offset : m[3] == "-" ? line - offset : offset;
      }
      out.push_back({m[1] == "error" ? Severity::Error : Severity::Note, target, message.str()});
      size_t consumed = message.end() - text.begin() + 2;
      text = text.substr(std::min(consumed, text.size()));
    }
  }
  return out;
}

}  // namespace

bool verify_diagnostics(const llvm::SourceMgr& sources, unsigned buffer_id,
                        const std::vector<Diagnostic>& seen, llvm::raw_ostream& out) {
  std::vector<Expectation> expected = read_expectations(sources, buffer_id);
  auto name = sources.getMemoryBuffer(buffer_id)->getBufferIdentifier();
  bool ok = true;
  for (const Diagnostic& d : seen) {
    unsigned line = sources.getLineAndColumn(d.range.Start, buffer_id).first;
    auto it = std::find_if(expected.begin(), expected.end(), [&](const Expectation& e) {
      return !e.matched && e.severity == d.severity && e.line == line &&
             llvm::StringRef(d.message).contains(e.text);
    });
    if (it != expected.end()) {
      it->matched = true;
      continue;
    }
    ok = false;
    out << fmt::format("{}:{}: {} seen but not expected: {}\n", name.str(), line,
                       d.severity == Severity::Error ? "error" : "note", d.message);
  }
  for (const Expectation& e : expected) {
    if (e.matched) continue;
    ok = false;
    out << fmt::format("{}:{}: {} expected but not seen: {}\n", name.str(), e.line,
                       e.severity == Severity::Error ? "error" : "note", e.text);
  }
  return ok;
}

}  // namespace irisc
