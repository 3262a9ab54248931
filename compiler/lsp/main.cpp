// irisc-lsp: the language server of .iris files, over standard input and
// output (docs/editors.md). This file is the transport: JSON-RPC messages,
// each a Content-Length header, a blank line and that many bytes of JSON.
#include "server.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>

#include <iostream>
#include <mutex>

namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("irisc-lsp options");
cl::list<std::string> include_dirs("I", cl::desc("Add <dir> to the search path of imports"),
                                   cl::value_desc("dir"), cl::Prefix, cl::cat(category));
cl::opt<std::string> compile_commands(
    "p", cl::desc("Read the -I/-D flags for imported headers from <dir>/compile_commands.json"),
    cl::value_desc("dir"), cl::cat(category));

// The next message's body, or nothing at the end of the input.
std::optional<std::string> read_message(std::istream& in) {
  size_t length = 0;
  bool have_length = false;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      if (!have_length) continue;
      std::string body(length, '\0');
      if (!in.read(body.data(), static_cast<std::streamsize>(length))) return std::nullopt;
      return body;
    }
    constexpr std::string_view kLength = "Content-Length:";
    if (line.starts_with(kLength)) {
      length = std::stoul(line.substr(kLength.size()));
      have_length = true;
    }
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  cl::HideUnrelatedOptions(category);
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "irisc-lsp: the language server of .iris files, over standard input and output\n"))
    return 2;
  static int anchor;
  irisc::ImportOptions imports = irisc::installed_import_options(argv[0], &anchor);
  imports.include_dirs = include_dirs;
  imports.compile_commands_dir = compile_commands;

  std::ios::sync_with_stdio(false);
  std::mutex output;
  irisc::lsp::Server server(imports, [&output](const llvm::json::Value& message) {
    std::string body;
    llvm::raw_string_ostream(body) << message;
    std::lock_guard lock(output);
    std::cout << "Content-Length: " << body.size() << "\r\n\r\n" << body << std::flush;
  });
  while (!server.exited()) {
    std::optional<std::string> body = read_message(std::cin);
    if (!body) return 1;  // the client went away without `exit`
    llvm::Expected<llvm::json::Value> message = llvm::json::parse(*body);
    if (!message) {
      llvm::consumeError(message.takeError());
      std::string error = R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}})";
      std::lock_guard lock(output);
      std::cout << "Content-Length: " << error.size() << "\r\n\r\n" << error << std::flush;
      continue;
    }
    server.handle(*message);
  }
  return server.exit_status();
}
