// Helpers for the front-end unit tests: run a phase over a string and
// collect the diagnostics it reports instead of printing them.
#pragma once

#include "irisc/frontend.h"

#include <llvm/Support/MemoryBuffer.h>

#include <string>
#include <vector>

namespace irisc::test {

struct Run {
  llvm::SourceMgr sources;
  std::vector<Diagnostic> diagnostics;
  FrontendResult result;

  // The kinds reported, in order.
  std::vector<DiagKind> kinds() const {
    std::vector<DiagKind> out;
    for (const Diagnostic& d : diagnostics) out.push_back(d.kind);
    return out;
  }
};

inline std::unique_ptr<Run> run(const std::string& text, Stage last = Stage::Checked) {
  auto r = std::make_unique<Run>();
  unsigned id = r->sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "test.iris"), llvm::SMLoc());
  Diagnostics diags(r->sources, llvm::nulls(), false, 0);
  diags.set_consumer([&](const Diagnostic& d) { r->diagnostics.push_back(d); });
  r->result = run_frontend(r->sources, id, diags, last);
  return r;
}

}  // namespace irisc::test
