// Diagnostics: every message irisc prints about the user's program.
//
// Kinds are declared once in diagnostics.def. An error or a warning is
// emitted with a kind, a source range and the format arguments; notes attach
// to the error or warning before them. Printing goes through llvm::SourceMgr,
// which gives the familiar `file:line:col: error: message`, the source line
// and a caret under the range; or, for editors and other tools, into one JSON
// array or SARIF log written at the end (--diagnostics-format=json or sarif,
// docs/editors.md). A
// consumer hook lets the verifier, the language server and the tests observe
// diagnostics instead.
#pragma once

#include <fmt/format.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/SMLoc.h>
#include <llvm/Support/SourceMgr.h>

#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace irisc {

enum class DiagKind : uint16_t {
#define ERROR(Name, Format) Name,
#define WARNING(Name, Format) Name,
#define NOTE(Name, Format) Name,
#include "irisc/diagnostics.def"
};

enum class Severity : uint8_t { Error, Warning, Note };
// "error", "warning", "note": as printed, and as -verify's comments name them.
std::string_view severity_name(Severity severity);

// How diagnostics are written: as text, or as JSON (irisc's own array, or a
// SARIF log), held back until finish() so that each error carries its notes.
enum class DiagnosticsFormat : uint8_t { Text, Json, Sarif };

struct DiagKindInfo {
  std::string_view name;
  Severity severity;
  std::string_view format;
};
const DiagKindInfo& diag_info(DiagKind kind);
// Every kind, in declaration order (for coverage tests and --list-diagnostics).
std::span<const DiagKind> all_diag_kinds();

struct Diagnostic {
  DiagKind kind;
  Severity severity;
  llvm::SMRange range;
  std::string message;
};

// Thrown when the error limit is reached; the driver stops the run.
struct ErrorLimitReached : std::runtime_error {
  ErrorLimitReached() : std::runtime_error("error limit reached") {}
};

class Diagnostics {
 public:
  using Consumer = std::function<void(const Diagnostic&)>;

  // error_limit 0 means no limit.
  Diagnostics(llvm::SourceMgr& sources, llvm::raw_ostream& out, bool colors,
              unsigned error_limit, DiagnosticsFormat format = DiagnosticsFormat::Text);
  // Sends every diagnostic to `consumer` instead of printing it.
  void set_consumer(Consumer consumer) { consumer_ = std::move(consumer); }
  // While set, runs after every error, to add the notes that place it (the
  // instance of a generic function being checked); empty to stop.
  void set_error_context(std::function<void()> context) { error_context_ = std::move(context); }

  template <class... Args>
  void error(DiagKind kind, llvm::SMRange range, const Args&... args) {
    report(kind, range, format(kind, fmt::make_format_args(args...)));
  }
  template <class... Args>
  void warning(DiagKind kind, llvm::SMRange range, const Args&... args) {
    report(kind, range, format(kind, fmt::make_format_args(args...)));
  }
  template <class... Args>
  void note(DiagKind kind, llvm::SMRange range, const Args&... args) {
    report(kind, range, format(kind, fmt::make_format_args(args...)));
  }

  // Reports of `kind` (an error or a warning) and their notes are dropped:
  // the driver's -Wno-<check> switches.
  void suppress(DiagKind kind) { suppressed_.push_back(kind); }

  // Writes what the format holds back (the JSON array, the SARIF log); once,
  // after the run.
  void finish();

  unsigned error_count() const { return error_count_; }
  bool has_errors() const { return error_count_ > 0; }
  llvm::SourceMgr& sources() { return sources_; }

 private:
  static std::string format(DiagKind kind, fmt::format_args args);
  void report(DiagKind kind, llvm::SMRange range, std::string message);
  void print(DiagKind kind, Severity severity, llvm::SMRange range, std::string message);
  void add_json(llvm::json::Object entry, Severity severity);

  llvm::SourceMgr& sources_;
  llvm::raw_ostream& out_;
  bool colors_;
  unsigned error_limit_;
  DiagnosticsFormat format_;
  llvm::json::Array json_;  // Json, Sarif: the errors so far, each with its notes
  unsigned error_count_ = 0;
  Consumer consumer_;
  std::function<void()> error_context_;
  std::vector<DiagKind> suppressed_;
  bool suppressing_notes_ = false;  // the last error or warning was suppressed
};

}  // namespace irisc
