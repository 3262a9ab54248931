// The -verify mode; see verify.h.
#include "irisc/verify.h"

#include <llvm/Support/Regex.h>

namespace irisc {
namespace {

struct Expectation {
  unsigned buffer;
  Severity severity;
  unsigned line;
  std::string text;
  bool matched = false;
};

void read_expectations(const llvm::SourceMgr& sources, unsigned buffer_id,
                       std::vector<Expectation>& out) {
  llvm::StringRef rest = sources.getMemoryBuffer(buffer_id)->getBuffer();
  llvm::Regex pattern(R"(expected-(error|warning|note)(@([+-]?)([0-9]+))? *\{\{(.*)\}\})");
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
      Severity severity = m[1] == "error" ? Severity::Error : m[1] == "warning" ? Severity::Warning : Severity::Note;
      out.push_back({buffer_id, severity, target, message.str()});
      size_t consumed = message.end() - text.begin() + 2;
      text = text.substr(std::min(consumed, text.size()));
    }
  }
}

}  // namespace

bool verify_diagnostics(const llvm::SourceMgr& sources, unsigned buffer_id,
                        const std::vector<Diagnostic>& seen, llvm::raw_ostream& out) {
  // The input's expectations, then those in the headers its imports loaded
  // (buffers after it), for notes that point into a header.
  std::vector<Expectation> expected;
  for (unsigned id = buffer_id; id <= sources.getNumBuffers(); ++id)
    read_expectations(sources, id, expected);
  auto name = [&](unsigned id) { return sources.getMemoryBuffer(id)->getBufferIdentifier().str(); };
  bool ok = true;
  for (const Diagnostic& d : seen) {
    unsigned buffer = sources.FindBufferContainingLoc(d.range.Start);
    if (buffer == 0) buffer = buffer_id;
    unsigned line = sources.getLineAndColumn(d.range.Start, buffer).first;
    auto it = std::find_if(expected.begin(), expected.end(), [&](const Expectation& e) {
      return !e.matched && e.buffer == buffer && e.severity == d.severity && e.line == line &&
             llvm::StringRef(d.message).contains(e.text);
    });
    if (it != expected.end()) {
      it->matched = true;
      continue;
    }
    ok = false;
    out << fmt::format("{}:{}: {} seen but not expected: {}\n", name(buffer), line,
                       severity_name(d.severity), d.message);
  }
  for (const Expectation& e : expected) {
    if (e.matched) continue;
    ok = false;
    out << fmt::format("{}:{}: {} expected but not seen: {}\n", name(e.buffer), e.line,
                       severity_name(e.severity), e.text);
  }
  return ok;
}

}  // namespace irisc
