// Formatting and printing of diagnostics; see diagnostics.h.
#include "irisc/diagnostics.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/WithColor.h>

#include <algorithm>
#include <array>

namespace irisc {
namespace {

constexpr DiagKindInfo kInfos[] = {
#define ERROR(Name, Format) {#Name, Severity::Error, Format},
#define WARNING(Name, Format) {#Name, Severity::Warning, Format},
#define NOTE(Name, Format) {#Name, Severity::Note, Format},
#include "irisc/diagnostics.def"
};

constexpr auto kAllKinds = [] {
  std::array<DiagKind, std::size(kInfos)> kinds{};
  for (size_t i = 0; i < kinds.size(); ++i) kinds[i] = static_cast<DiagKind>(i);
  return kinds;
}();

// A string stream that claims colour support when told to, so that a
// diagnostic formatted into it keeps its colours.
class ColorStringStream : public llvm::raw_string_ostream {
 public:
  ColorStringStream(std::string& text, bool colors) : raw_string_ostream(text), colors_(colors) {
    enable_colors(colors);
  }
  bool has_colors() const override { return colors_; }

 private:
  bool colors_;
};

// A place as JSON: 1-based line and column, the column in bytes.
llvm::json::Object json_position(const llvm::SourceMgr& sources, llvm::SMLoc loc, unsigned buffer) {
  auto [line, column] = sources.getLineAndColumn(loc, buffer);
  return llvm::json::Object{{"line", line}, {"column", column}};
}

// A diagnostic as JSON: its severity, kind (diagnostics.def's name) and
// message, and where it is: the file and the range, whose end is one past its
// last character. A diagnostic of no place (the error limit) has no kind,
// file or range.
llvm::json::Object json_entry(const llvm::SourceMgr& sources, const DiagKind* kind, Severity severity,
                              llvm::SMRange range, std::string message) {
  llvm::json::Object entry{{"severity", llvm::StringRef(severity_name(severity))},
                           {"message", std::move(message)}};
  if (kind) entry["kind"] = llvm::StringRef(diag_info(*kind).name);
  unsigned buffer = range.Start.isValid() ? sources.FindBufferContainingLoc(range.Start) : 0;
  if (buffer == 0) return entry;
  llvm::SMLoc end = range.End.isValid() ? range.End : range.Start;
  entry["file"] = sources.getMemoryBuffer(buffer)->getBufferIdentifier();
  entry["range"] = llvm::json::Object{{"start", json_position(sources, range.Start, buffer)},
                                      {"end", json_position(sources, end, buffer)}};
  return entry;
}

// An entry's place as a SARIF location, or null when it has none.
llvm::json::Value sarif_location(const llvm::json::Object& entry) {
  const llvm::json::Object* range = entry.getObject("range");
  std::optional<llvm::StringRef> file = entry.getString("file");
  if (!range || !file) return nullptr;
  auto at = [&](llvm::StringRef end, llvm::StringRef key) { return *range->getObject(end)->getInteger(key); };
  llvm::json::Object region{{"startLine", at("start", "line")}, {"startColumn", at("start", "column")},
                            {"endLine", at("end", "line")}, {"endColumn", at("end", "column")}};
  return llvm::json::Object{{"physicalLocation", llvm::json::Object{{"artifactLocation", llvm::json::Object{{"uri", *file}}},
                                                                    {"region", std::move(region)}}}};
}

// SARIF 2.1.0 (GitHub code scanning and other viewers) of the JSON entries:
// a result per error or warning (SARIF's levels have the same names),
// ruled by its kind, its notes as related locations.
llvm::json::Value sarif(const llvm::json::Array& entries) {
  llvm::json::Array results;
  for (const llvm::json::Value& value : entries) {
    const llvm::json::Object& entry = *value.getAsObject();
    llvm::json::Object result{{"level", *entry.getString("severity")},
                              {"message", llvm::json::Object{{"text", *entry.getString("message")}}}};
    if (std::optional<llvm::StringRef> kind = entry.getString("kind")) result["ruleId"] = *kind;
    if (llvm::json::Value location = sarif_location(entry); location.kind() != llvm::json::Value::Null)
      result["locations"] = llvm::json::Array{std::move(location)};
    llvm::json::Array related;
    for (const llvm::json::Value& note : *entry.getArray("notes")) {
      llvm::json::Value location = sarif_location(*note.getAsObject());
      if (location.kind() == llvm::json::Value::Null) continue;
      (*location.getAsObject())["message"] = llvm::json::Object{{"text", *note.getAsObject()->getString("message")}};
      related.push_back(std::move(location));
    }
    if (!related.empty()) result["relatedLocations"] = std::move(related);
    results.push_back(std::move(result));
  }
  llvm::json::Object run{{"tool", llvm::json::Object{{"driver", llvm::json::Object{{"name", "irisc"}}}}},
                         {"columnKind", "unicodeCodePoints"},
                         {"results", std::move(results)}};
  return llvm::json::Object{{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
                            {"version", "2.1.0"},
                            {"runs", llvm::json::Array{std::move(run)}}};
}

}  // namespace

const DiagKindInfo& diag_info(DiagKind kind) { return kInfos[static_cast<size_t>(kind)]; }

std::span<const DiagKind> all_diag_kinds() { return kAllKinds; }

std::string_view severity_name(Severity severity) {
  switch (severity) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "";
}

Diagnostics::Diagnostics(llvm::SourceMgr& sources, llvm::raw_ostream& out, bool colors,
                         unsigned error_limit, DiagnosticsFormat format)
    : sources_(sources), out_(out), colors_(colors), error_limit_(error_limit), format_(format) {}

std::string Diagnostics::format(DiagKind kind, fmt::format_args args) {
  return fmt::vformat(diag_info(kind).format, args);
}

void Diagnostics::report(DiagKind kind, llvm::SMRange range, std::string message) {
  Severity severity = diag_info(kind).severity;
  if (severity != Severity::Note)
    suppressing_notes_ = std::find(suppressed_.begin(), suppressed_.end(), kind) != suppressed_.end();
  if (suppressing_notes_) return;
  if (severity == Severity::Error) {
    if (error_limit_ != 0 && error_count_ >= error_limit_) {
      std::string stop = fmt::format("too many errors emitted, stopping now [--error-limit={}]", error_limit_);
      if (format_ != DiagnosticsFormat::Text) add_json(json_entry(sources_, nullptr, severity, {}, stop), severity);
      else llvm::WithColor::error(out_, "irisc", !colors_) << stop << "\n";
      throw ErrorLimitReached();
    }
    ++error_count_;
  }

  print(kind, severity, range, std::move(message));
  if (severity == Severity::Error && error_context_) error_context_();  // notes: no recursion
}

void Diagnostics::print(DiagKind kind, Severity severity, llvm::SMRange range, std::string message) {
  if (consumer_) {
    consumer_(Diagnostic{kind, severity, range, std::move(message)});
    return;
  }
  if (format_ != DiagnosticsFormat::Text) {
    add_json(json_entry(sources_, &kind, severity, range, std::move(message)), severity);
    return;
  }
  auto sm_kind = severity == Severity::Error     ? llvm::SourceMgr::DK_Error
                 : severity == Severity::Warning ? llvm::SourceMgr::DK_Warning
                                                 : llvm::SourceMgr::DK_Note;
  // A caret at the start, tildes under the rest of the range.
  llvm::SmallVector<llvm::SMRange, 1> ranges;
  if (range.Start.isValid() && range.End.isValid() &&
      range.End.getPointer() > range.Start.getPointer() + 1)
    ranges.push_back(range);
  // Formatted first and written at once: SourceMgr writes the caret line a
  // character at a time, one system call each on unbuffered stderr (a minute
  // for an error at the end of a 10 MB line).
  std::string text;
  ColorStringStream buffer(text, colors_);
  sources_.PrintMessage(buffer, range.Start, sm_kind, message, ranges, {}, colors_);
  out_ << buffer.str();
}

// An error or a warning starts an entry; a note joins the one before it.
void Diagnostics::add_json(llvm::json::Object entry, Severity severity) {
  llvm::json::Object* error = json_.empty() ? nullptr : json_.back().getAsObject();
  if (severity == Severity::Note && error) {
    error->getArray("notes")->push_back(std::move(entry));
    return;
  }
  entry["notes"] = llvm::json::Array();
  json_.push_back(std::move(entry));
}

void Diagnostics::finish() {
  if (format_ == DiagnosticsFormat::Text) return;
  llvm::json::Value document = format_ == DiagnosticsFormat::Sarif ? sarif(json_) : llvm::json::Value(std::move(json_));
  out_ << llvm::formatv("{0:2}", document) << "\n";
  json_ = {};
}

}  // namespace irisc
