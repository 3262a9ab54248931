// irisc: the command-line driver.
//
// Exit status: 0 success, 1 errors in the user's program (or files that
// cannot be read or written), 2 usage errors, 3 an internal compiler error.
// Command-line parsing, file reading and crash reporting come from LLVM's
// Support library.
#include "irisc/depfile.h"
#include "irisc/emit.h"
#include "irisc/frontend.h"
#include "irisc/lower.h"
#include "irisc/summary.h"
#include "irisc/verify.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/PrettyStackTrace.h>
#include <llvm/Support/Signals.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>

namespace cl = llvm::cl;
using namespace irisc;

namespace {

enum class Emit { Summary, Tokens, Ast, Checked, Tir, Cpp };

constexpr int kExitUserError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInternal = 3;

cl::OptionCategory category("irisc options");

cl::opt<std::string> input(cl::Positional, cl::desc("<input.iris | ->"), cl::init("-"),
                           cl::cat(category));
cl::opt<std::string> output("o", cl::desc("Write the output to <file> (default: standard output)"),
                            cl::value_desc("file"), cl::init("-"), cl::cat(category));
cl::list<std::string> include_dirs("I", cl::desc("Add <dir> to the search path of imports"),
                                   cl::value_desc("dir"), cl::Prefix, cl::cat(category));
cl::opt<std::string> compile_commands(
    "p", cl::desc("Read the -I/-D flags for imported headers from <dir>/compile_commands.json"),
    cl::value_desc("dir"), cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::desc("What to produce"), cl::init(Emit::Summary),
    cl::values(clEnumValN(Emit::Summary, "summary", "check the file and summarise its kernels (default)"),
               clEnumValN(Emit::Tokens, "tokens", "the lexer's tokens"),
               clEnumValN(Emit::Ast, "ast", "the syntax tree"),
               clEnumValN(Emit::Checked, "checked", "the typed tree after checking"),
               clEnumValN(Emit::Tir, "tir", "the tile IR after the lowering passes (see --stop-after)"),
               clEnumValN(Emit::Cpp, "cpp", "C++ for the runtime's tile library (GPU or CPU target)")),
    cl::cat(category));
cl::opt<bool> verify("verify",
                     cl::desc("Check diagnostics against expected-error/expected-note comments"),
                     cl::cat(category));
cl::opt<bool> checked("checked",
                      cl::desc("With --emit=cpp or tir: check heap accesses, ranks and translations at "
                               "run time, reporting the .iris location"),
                      cl::cat(category));
cl::opt<bool> trace("trace",
                    cl::desc("With --emit=cpp: record spans of each kernel, wait, signal, barrier, remote store "
                             "and atomic, dot loop and epilogue, which a run writes as a Perfetto trace where "
                             "IRIS_TRACE names a file (docs/debugging.md)"),
                    cl::cat(category));
cl::opt<std::string> namespace_name(
    "namespace",
    cl::desc("With --emit=cpp or tir: the namespace of the file's items, inside iris_kernels (default "
             "<file>_iris, after the input's name), so that variants of one file built into one program "
             "(--checked, --trace) keep their names apart"),
    cl::value_desc("name"), cl::cat(category));
cl::opt<std::string> stop_after("stop-after",
                                cl::desc("With --emit=tir: print the tile IR after lowering pass <pass> "
                                         "(build, then the passes of lower.cpp in order)"),
                                cl::value_desc("pass"), cl::cat(category));
// gcc's dependency-file options, so build systems can use irisc like a C
// compiler (CMake's DEPFILE, make's -include).
cl::opt<bool> write_deps("MD", cl::desc("Also write a dependency file (make rule) of the files read"),
                         cl::cat(category));
cl::opt<std::string> dep_file("MF", cl::desc("With -MD: the dependency file (default: <output>.d)"),
                              cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> dep_target("MT", cl::desc("With -MD: the rule's target (default: the -o path)"),
                                cl::value_desc("target"), cl::cat(category));
// The memory-model checks (language.md 12.1) are on by default; each switch
// drops the diagnostics of one.
cl::opt<bool> no_remote_scope("Wno-remote-scope",
                              cl::desc("Allow atomics, signals and waits on another rank's memory at a scope "
                                       "narrower than sys"),
                              cl::cat(category));
cl::opt<bool> no_publication("Wno-publication",
                             cl::desc("Allow stores published by a flag that does not release, and loads after "
                                      "a wait that does not acquire"),
                             cl::cat(category));
cl::opt<bool> no_flag_reuse("Wno-flag-reuse",
                            cl::desc("Allow flags set to a constant that a wait accepts, or that a loop sets "
                                     "again"),
                            cl::cat(category));
cl::opt<DiagnosticsFormat> diagnostics_format(
    "diagnostics-format", cl::desc("How errors and notes are written to standard error"),
    cl::init(DiagnosticsFormat::Text),
    cl::values(clEnumValN(DiagnosticsFormat::Text, "text", "file:line:col: error: ..., with the source line (default)"),
               clEnumValN(DiagnosticsFormat::Json, "json",
                          "one JSON array at the end: each error with its file, range and notes "
                          "(docs/editors.md)"),
               clEnumValN(DiagnosticsFormat::Sarif, "sarif", "the same as a SARIF 2.1.0 log, for code-scanning tools")),
    cl::cat(category));
cl::opt<unsigned> error_limit("error-limit",
                              cl::desc("Stop after <n> errors; 0 for no limit (default 20)"),
                              cl::value_desc("n"), cl::init(20), cl::cat(category));

void print_version(llvm::raw_ostream& out) {
  out << "irisc (Iris for C++) " IRIS_VERSION "\n";
}

int fail(const llvm::Twine& message, int status) {
  llvm::WithColor::error(llvm::errs(), "irisc") << message << "\n";
  return status;
}

void print_tokens(const FrontendResult& result, const llvm::SourceMgr& sources,
                  llvm::raw_ostream& out) {
  for (const Token& t : result.tokens) {
    auto [line, col] = sources.getLineAndColumn(t.loc());
    out << fmt::format("{}:{} {} '{}'\n", line, col, token_kind_name(t.kind), t.text);
  }
}

// The files the compilation read, for -MD: the input (unless it is standard
// input), the .iris modules it imports and every file the parses of the
// headers they all import read.
std::vector<std::string> files_read(const FrontendResult& result) {
  std::vector<std::string> files;
  if (input != "-") files.push_back(input);
  if (!result.module) return files;  // --emit=tokens
  std::vector<const Module*> modules = {result.module.get()};
  for (const auto& module : result.imported_modules) {
    files.push_back(module->path);
    modules.push_back(module.get());
  }
  for (const Module* module : modules)
    for (const Item& item : module->items)
      if (item.kind == Item::Kind::Import)
        files.insert(files.end(), item.import->files.begin(), item.import->files.end());
  return files;
}

// irisc-import-hip and the package's modules as installed beside irisc
// (cmake/IrisPackage.cmake), with the command line's -I and -p.
ImportOptions import_options(const char* argv0) {
  static int anchor;
  ImportOptions options = installed_import_options(argv0, &anchor);
  options.include_dirs = include_dirs;
  options.compile_commands_dir = compile_commands;
  return options;
}

// Checks the -MD options before any work; returns an error message or "".
std::string depfile_usage_error() {
  if (!write_deps)
    return dep_file.getNumOccurrences() || dep_target.getNumOccurrences() ? "-MF and -MT need -MD"
                                                                          : "";
  if (output == "-" && (dep_file.empty() || dep_target.empty()))
    return "-MD with output to standard output needs -MF <file> and -MT <target>";
  return "";
}

int write_deps_file(const FrontendResult& result) {
  std::string path = dep_file.empty() ? output + ".d" : dep_file.getValue();
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_Text);
  if (ec) return fail("cannot write '" + path + "': " + ec.message(), kExitUserError);
  write_depfile(out, dep_target.empty() ? output.getValue() : dep_target.getValue(),
                files_read(result));
  return 0;
}

// Writes the output to -o's file, or standard output for "-". A file that
// already holds exactly `text` is left alone, so that its time stamp stays
// and a build system that re-checks outputs after a command (Ninja's
// restat, which CMake sets for custom commands) rebuilds nothing that depends
// on it when a new irisc generates the same code.
int write_output(const std::string& text) {
  if (output == "-") {
    llvm::outs() << text;
    return 0;
  }
  if (auto old = llvm::MemoryBuffer::getFile(output, /*IsText=*/true); old && (*old)->getBuffer() == text) return 0;
  std::error_code ec;
  llvm::raw_fd_ostream out(output, ec, llvm::sys::fs::OF_Text);
  if (ec) return fail("cannot write '" + output + "': " + ec.message(), kExitUserError);
  out << text;
  return 0;
}

// Checks --stop-after; returns an error message or "".
std::string stop_after_usage_error() {
  if (stop_after.empty()) return "";
  if (emit != Emit::Tir) return "--stop-after needs --emit=tir";
  for (std::string_view pass : pass_names())
    if (pass == stop_after) return "";
  std::string known;
  for (std::string_view pass : pass_names()) known += (known.empty() ? "" : ", ") + std::string(pass);
  return "--stop-after: no pass named '" + stop_after + "' (the passes: " + known + ")";
}

int run(const char* argv0) {
  if (std::string error = depfile_usage_error(); !error.empty()) return fail(error, kExitUsage);
  if (std::string error = stop_after_usage_error(); !error.empty()) return fail(error, kExitUsage);
  if (namespace_name.getNumOccurrences())
    if (std::string error = namespace_name_error(namespace_name); !error.empty())
      return fail("--namespace: " + error, kExitUsage);

  auto buffer = read_source(input, input == "-" ? "<stdin>" : input.getValue());
  if (!buffer) return fail("cannot read '" + input + "': " + llvm::toString(buffer.takeError()), kExitUserError);

  llvm::SourceMgr sources;
  unsigned id = sources.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  // LLVM's own --color option decides; by default, colour on a terminal only.
  bool colors = llvm::WithColor(llvm::errs()).colorsEnabled();
  Diagnostics diags(sources, llvm::errs(), colors, verify ? 0 : error_limit.getValue(), diagnostics_format);

  if (no_remote_scope) diags.suppress(DiagKind::RemoteScope);
  if (no_publication) {
    diags.suppress(DiagKind::UnorderedPublication);
    diags.suppress(DiagKind::UnorderedFlagRead);
  }
  if (no_flag_reuse) diags.suppress(DiagKind::ConstantFlagReuse);

  std::vector<Diagnostic> seen;
  if (verify) diags.set_consumer([&](const Diagnostic& d) { seen.push_back(d); });
  Stage last = emit == Emit::Tokens ? Stage::Tokens : emit == Emit::Ast ? Stage::Ast : Stage::Checked;
  ImportOptions imports = import_options(argv0);
  FrontendResult result = run_frontend(sources, id, diags, last, &imports);
  diags.finish();
  if (verify) return verify_diagnostics(sources, id, seen, llvm::errs()) ? 0 : kExitUserError;
  if (!result.ok) return kExitUserError;

  std::string text;
  llvm::raw_string_ostream out(text);
  switch (emit) {
    case Emit::Tokens: print_tokens(result, sources, out); break;
    case Emit::Ast: print_module(*result.module, sources, false, out); break;
    case Emit::Checked: print_module(*result.module, sources, true, out); break;
    case Emit::Tir:
    case Emit::Cpp: {
      LowerOptions options;
      options.source_name = input == "-" ? "<stdin>" : input.getValue();
      options.checked = checked;
      options.stop_after = stop_after;
      options.namespace_name = namespace_name;
      TirModule tir = lower(*result.module, options);
      if (emit == Emit::Tir) print_tir(tir, sources, out);
      else emit_cpp(tir, sources, out, EmitOptions{.trace = trace});
      break;
    }
    case Emit::Summary: print_summary(*result.module, input == "-" ? "<stdin>" : input.getValue(), out); break;
  }
  if (int status = write_output(text)) return status;
  return write_deps ? write_deps_file(result) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  llvm::sys::PrintStackTraceOnErrorSignal(argv[0]);
  llvm::setBugReportMsg(
      "irisc: internal compiler error: this is a bug in irisc, not in your program; "
      "please report it with the input file and the stack dump below.\n");
  cl::HideUnrelatedOptions(category);
  // Show LLVM's --color (colour diagnostics: --color or --color=false) with ours.
  if (cl::Option* color = cl::getRegisteredOptions().lookup("color")) {
    color->addCategory(category);
    color->setHiddenFlag(cl::NotHidden);
  }
  cl::SetVersionPrinter(print_version);
  if (!cl::ParseCommandLineOptions(argc, argv, "irisc: the Iris tile-language compiler\n",
                                   &llvm::errs()))
    return kExitUsage;
  try {
    return run(argv[0]);
  } catch (const std::exception& e) {
    llvm::errs() << "irisc: internal compiler error: " << e.what()
                 << "\nthis is a bug in irisc, not in your program; please report it with the input file.\n";
    return kExitInternal;
  }
}
