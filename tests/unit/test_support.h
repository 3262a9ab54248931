// Helpers for the front-end unit tests: run a phase over a string and
// collect the diagnostics it reports instead of printing them.
#pragma once

#include "irisc/frontend.h"

#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
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
  // How many diagnostics of `kind` were reported.
  size_t count(DiagKind kind) const {
    return static_cast<size_t>(std::count_if(diagnostics.begin(), diagnostics.end(),
                                             [&](const Diagnostic& d) { return d.kind == kind; }));
  }
  // "line:col" of a location in the test's buffer.
  std::string where(llvm::SMLoc loc) const {
    auto [line, col] = sources.getLineAndColumn(loc);
    return std::to_string(line) + ":" + std::to_string(col);
  }
  // "line:col-line:col" of a range.
  std::string where(llvm::SMRange range) const { return where(range.Start) + "-" + where(range.End); }
  // The source text a range covers.
  static std::string_view text(llvm::SMRange range) {
    return {range.Start.getPointer(),
            static_cast<size_t>(range.End.getPointer() - range.Start.getPointer())};
  }

  const Module& module() const { return *result.module; }
  // The function called `name`, or null.
  const Function* function(std::string_view name) const {
    if (!result.module) return nullptr;
    for (const Item& item : result.module->items)
      if (item.kind == Item::Kind::Function && item.function->name == name) return item.function;
    return nullptr;
  }
  // The constant called `name`, or null.
  const ConstDecl* constant(std::string_view name) const {
    if (!result.module) return nullptr;
    for (const Item& item : result.module->items)
      if (item.kind == Item::Kind::Const && item.constant->name == name) return item.constant;
    return nullptr;
  }
  // The first let/var/for statement binding `name` in any function (depth first).
  const Stmt* binding(std::string_view name) const {
    if (!result.module) return nullptr;
    for (const Item& item : result.module->items)
      if (item.kind == Item::Kind::Function)
        if (const Stmt* s = find(item.function->body, name)) return s;
    return nullptr;
  }

 private:
  static const Stmt* find(const Stmt* s, std::string_view name) {
    if (!s) return nullptr;
    if ((s->kind == StmtKind::Let || s->kind == StmtKind::Var || s->kind == StmtKind::For) &&
        s->name == name)
      return s;
    for (const Stmt* child : s->stmts)
      if (const Stmt* found = find(child, name)) return found;
    if (const Stmt* found = find(s->body, name)) return found;
    return find(s->else_body, name);
  }
};

// Runs the front end on `text`, named `name`; with `imports`, the import
// phase too (imports are found relative to `name`).
inline std::unique_ptr<Run> run(const std::string& text, Stage last = Stage::Checked,
                                const std::string& name = "test.iris",
                                const ImportOptions* imports = nullptr) {
  auto r = std::make_unique<Run>();
  unsigned id = r->sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name),
                                              llvm::SMLoc());
  Diagnostics diags(r->sources, llvm::nulls(), false, 0);
  diags.set_consumer([&](const Diagnostic& d) { r->diagnostics.push_back(d); });
  r->result = run_frontend(r->sources, id, diags, last, imports);
  return r;
}

// The import options of the build's irisc-import-hip.
inline const ImportOptions& import_options() {
  static const ImportOptions options{IRIS_IMPORT_HELPER, {}, ""};
  return options;
}

// `text` repeated `n` times.
inline std::string repeat(std::string_view text, size_t n) {
  std::string out;
  out.reserve(text.size() * n);
  for (size_t i = 0; i < n; ++i) out += text;
  return out;
}

}  // namespace irisc::test
