// The protocol between irisc and irisc-import-hip, the helper that reads a
// HIP header with Clang (compiler/import/). Both sides include this header,
// so the format is written down once.
//
// irisc runs the helper only for a module with an `import`, so a kernel
// without imports never pays for Clang's start-up, and irisc itself links no
// Clang (and only LLVM's Support library, statically). The command line is
//
//   irisc-import-hip <header> [-p <build-dir>] [-- <clang arguments>...]
//
// (-p: take -I/-D/-isystem/-include/-std flags from the compile_commands.json
// in <build-dir>). The helper writes one record per line to standard output,
// fields separated by tabs:
//
//   file      <path>                               a file the parse read
//   function  <name> <file> <line> <col> <result> <param-name>:<type>...
//   rejected  <name> <file> <line> <col> <reason>
//
// Types are .iris scalar spellings (`void` for no result). `function` is a
// __device__ function callable from .iris; `rejected` one that is not, with
// the reason in words (a template, a host-only function, a parameter that is
// not a scalar...), so that a call can be diagnosed. Every function outside
// system headers at namespace scope is listed, each under the location of
// its first declaration; an overloaded name appears more than once. Clang's
// own diagnostics go to standard error, as Clang prints them. Exit status: 0
// parsed, 1 the header has errors, 2 usage.
#pragma once

#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace irisc::import_protocol {

inline constexpr std::string_view kTool = "irisc-import-hip";
inline constexpr int kExitHeaderErrors = 1;

struct Param {
  std::string_view name;
  std::string_view type;
};

struct Record {
  enum class Kind { File, Function, Rejected } kind;
  std::string_view name;  // File: the path
  std::string_view file;
  unsigned line = 0, col = 0;
  std::string_view result;  // Function
  std::vector<Param> params;  // Function
  std::string_view reason;  // Rejected
};

inline std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  for (size_t tab; (tab = line.find('\t')) != std::string_view::npos; line.remove_prefix(tab + 1))
    fields.push_back(line.substr(0, tab));
  fields.push_back(line);
  return fields;
}

inline bool parse_unsigned(std::string_view text, unsigned& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// One line of the helper's output; nullopt when it is malformed. The views
// point into `line`.
inline std::optional<Record> parse_record(std::string_view line) {
  std::vector<std::string_view> f = split_fields(line);
  Record r{};
  if (f[0] == "file" && f.size() == 2) {
    r.kind = Record::Kind::File;
    r.name = f[1];
    return r;
  }
  bool function = f[0] == "function" && f.size() >= 6;
  if (!function && !(f[0] == "rejected" && f.size() == 6)) return std::nullopt;
  r.kind = function ? Record::Kind::Function : Record::Kind::Rejected;
  r.name = f[1];
  r.file = f[2];
  if (!parse_unsigned(f[3], r.line) || !parse_unsigned(f[4], r.col)) return std::nullopt;
  if (!function) {
    r.reason = f[5];
    return r;
  }
  r.result = f[5];
  for (size_t i = 6; i < f.size(); ++i) {
    size_t colon = f[i].rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    r.params.push_back({f[i].substr(0, colon), f[i].substr(colon + 1)});
  }
  return r;
}

// The line for a function record (the helper's side).
inline std::string function_line(std::string_view name, std::string_view file, unsigned line,
                                 unsigned col, std::string_view result,
                                 const std::vector<Param>& params) {
  std::string out = fmt::format("function\t{}\t{}\t{}\t{}\t{}", name, file, line, col, result);
  for (const Param& p : params) out += fmt::format("\t{}:{}", p.name, p.type);
  return out + "\n";
}

inline std::string rejected_line(std::string_view name, std::string_view file, unsigned line,
                                 unsigned col, std::string_view reason) {
  return fmt::format("rejected\t{}\t{}\t{}\t{}\t{}\n", name, file, line, col, reason);
}

inline std::string file_line(std::string_view path) { return fmt::format("file\t{}\n", path); }

}  // namespace irisc::import_protocol
