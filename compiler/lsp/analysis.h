// irisc-lsp: one analysis of an open document, the front end run in-process
// on its text, and what an editor asks of it: the diagnostics, the hover text
// and definition of the name at a position, the document's symbols. Positions
// are the protocol's: 0-based lines, columns in UTF-16 code units.
#pragma once

#include "irisc/frontend.h"

#include <llvm/Support/JSON.h>

#include <string>
#include <string_view>
#include <vector>

namespace irisc::lsp {

struct Position {
  unsigned line = 0;
  unsigned character = 0;
};

// The byte offset of `position` in `text`, held to the end of its line.
size_t offset_of(std::string_view text, Position position);
// file:///a%20b.iris <-> /a b.iris
std::string path_of_uri(std::string_view uri);
std::string uri_of_path(std::string_view path);

class Analysis {
 public:
  // Checks `text`, the document at `path` (absolute), importing through
  // `imports`, whose describe hook must be set: a header it does not know yet
  // leaves the analysis pending.
  Analysis(const std::string& path, const std::string& text, const ImportOptions& imports);
  Analysis(const Analysis&) = delete;
  Analysis& operator=(const Analysis&) = delete;

  // Some imported header was not described yet: its functions are missing.
  bool imports_pending() const { return imports_pending_; }
  // The errors as the protocol's Diagnostic objects, each with its notes as
  // related information; an error in an imported module is shown on the
  // import that led to it.
  llvm::json::Array diagnostics() const;
  // Hover over the name or call at `position`: its type or signature, or null.
  llvm::json::Value hover(Position position) const;
  // Where the name or function called at `position` is defined, or null.
  llvm::json::Value definition(Position position) const;
  // The imports, constants, kernels and device functions, as DocumentSymbols.
  llvm::json::Array symbols() const;

 private:
  // A name in the program: a use or a definition of a binding, a call of a
  // function or a built-in, or a function's name where it is defined.
  struct Occurrence {
    llvm::SMRange range;
    const Binding* binding = nullptr;
    const Function* function = nullptr;
    const BuiltinInfo* builtin = nullptr;
    const Type* type = nullptr;  // a call's result
  };

  void index(const Function& function);
  void index(const Stmt* stmt);
  void index(const Expr* expr);
  void index(const TypeSyntax* type);
  const Occurrence* occurrence_at(Position position) const;
  Position position_of(llvm::SMLoc loc, unsigned buffer) const;
  llvm::json::Object range_of(llvm::SMRange range, unsigned buffer) const;
  // A range anywhere (the document, a module, a header) as a Location.
  llvm::json::Value location_of(llvm::SMRange range) const;
  std::string path_of_buffer(unsigned buffer) const;

  std::string path_;
  llvm::SourceMgr sources_;
  unsigned buffer_ = 0;
  std::vector<Diagnostic> diagnostics_;
  FrontendResult result_;
  bool imports_pending_ = false;
  std::vector<Occurrence> occurrences_;
};

}  // namespace irisc::lsp
