// libFuzzer target for the whole front end: lex, parse and check one input.
//
// Besides the sanitizers' own findings (crashes, leaks, undefined behaviour,
// timeouts, running out of memory) it checks two invariants and aborts when
// one fails: every diagnostic is located inside the input, and the result is
// `ok` exactly when no error was reported. A checked module is also printed
// (to nowhere), so the tree printer and the summary run on checked trees, and
// lowered for unchecked and checked builds and printed as TIR and C++, so
// that every lowering pass runs on every program the checker accepts (an
// internal error there throws, which ends the run).
#include "irisc/emit.h"
#include "irisc/frontend.h"
#include "irisc/lower.h"
#include "irisc/summary.h"

#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace irisc;

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "frontend_fuzzer: invariant failed: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  llvm::SourceMgr sources;
  llvm::StringRef text(reinterpret_cast<const char*>(data), size);
  unsigned id = sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.iris"), llvm::SMLoc());
  llvm::StringRef buffer = sources.getMemoryBuffer(id)->getBuffer();
  const char* begin = buffer.begin();
  const char* end = buffer.end();

  // Error limit 0: no limit, so every recovery path runs.
  Diagnostics diags(sources, llvm::nulls(), /*colors=*/false, /*error_limit=*/0);
  unsigned errors = 0;
  diags.set_consumer([&](const Diagnostic& d) {
    errors += d.severity == Severity::Error;
    const char* start = d.range.Start.getPointer();
    if (!start || start < begin || start > end) fail("diagnostic outside the input");
    const char* stop = d.range.End.getPointer();
    if (stop && (stop < start || stop > end)) fail("diagnostic range ends outside the input");
    (void)sources.getLineAndColumn(d.range.Start, id);
  });

  FrontendResult result = run_frontend(sources, id, diags, Stage::Checked);
  if (result.ok != (errors == 0)) fail("result.ok disagrees with the errors reported");
  if (result.ok) {
    print_module(*result.module, sources, /*checked=*/true, llvm::nulls());
    print_summary(*result.module, "fuzz.iris", llvm::nulls());
    for (bool checked : {false, true}) {
      TirModule tir = lower(*result.module, {"fuzz.iris", checked, ""});
      print_tir(tir, sources, llvm::nulls());
      emit_cpp(tir, sources, llvm::nulls());
    }
  }
  return 0;
}
