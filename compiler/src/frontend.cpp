// The front end's list of phases; see frontend.h.
//
// The import phase hands each .iris module it finds back here (ModuleLoader),
// and the same phases run on the module, which is then checked before the
// file that imports it: a module is a file of its own, with its own scope,
// whose device functions and constants the checker declares in the importer.
// Each module is loaded once, by absolute path, however many files import it;
// a module that imports itself, directly or through others, is an error.
#include "irisc/frontend.h"

#include "irisc/checker.h"
#include "irisc/lexer.h"
#include "irisc/parser.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

namespace irisc {
namespace {

class Frontend final : public ModuleLoader {
 public:
  Frontend(llvm::SourceMgr& sources, Diagnostics& diags, const ImportOptions* imports,
           std::vector<std::unique_ptr<Module>>& modules)
      : sources_(sources), diags_(diags), imports_(imports), modules_(modules) {}

  // The phases up to `last` on buffer `id`, the file `path` (absolute; empty
  // for standard input), whose imports are relative to `dir`.
  void run(unsigned id, const std::string& path, const std::string& dir, Stage last, FrontendResult& result) {
    loading_.push_back({path, std::string(sources_.getMemoryBuffer(id)->getBufferIdentifier())});
    if (last == Stage::Tokens) {
      result.tokens = lex(sources_.getMemoryBuffer(id)->getBuffer(), diags_);
      return;
    }
    result.module = std::make_unique<Module>();
    phases(id, result.tokens, *result.module, dir, last);
  }

  const Module* load(const ImportDecl& import, const FoundFile& found) override {
    for (auto it = loading_.begin(); it != loading_.end(); ++it) {
      if (it->path != found.path) continue;
      std::string cycle;
      for (; it != loading_.end(); ++it) cycle += it->name + " -> ";
      diags_.error(DiagKind::ImportCycle, import.path_range, cycle + found.name);
      return nullptr;
    }
    if (auto it = loaded_.find(found.path); it != loaded_.end()) return it->second;
    if (loading_.size() >= kMaxImportDepth) {
      diags_.error(DiagKind::ImportFailed, import.path_range, import.path,
                   "imports nest deeper than " + std::to_string(kMaxImportDepth) + " modules");
      return nullptr;
    }
    // Named as found; included from the import, so that a diagnostic in the
    // module also says where it was imported from.
    auto file = read_source(found.path, found.name);
    if (!file) {
      diags_.error(DiagKind::ImportFailed, import.path_range, import.path, llvm::toString(file.takeError()));
      return nullptr;
    }
    unsigned id = sources_.AddNewSourceBuffer(std::move(*file), import.path_range.Start);
    Module& module = *modules_.emplace_back(std::make_unique<Module>());
    module.source_name = found.name;
    module.path = found.path;
    loading_.push_back({found.path, found.name});
    TokenList tokens;
    bool ok = phases(id, tokens, module, found.dir, Stage::Checked);
    loading_.pop_back();
    return loaded_[found.path] = ok ? &module : nullptr;
  }

 private:
  // Lexes buffer `id` into `tokens`, then parses, imports and checks it into
  // `module` up to `last`, each phase only if those before it found no error
  // in this file; true when none did.
  bool phases(unsigned id, TokenList& tokens, Module& module, const std::string& dir, Stage last) {
    unsigned errors = diags_.error_count();
    auto clean = [&] { return diags_.error_count() == errors; };
    tokens = lex(sources_.getMemoryBuffer(id)->getBuffer(), diags_);
    if (!clean()) return false;
    parse(tokens, module, diags_);
    if (!clean() || last == Stage::Ast) return clean();
    if (imports_) resolve_imports(module, sources_, dir, diags_, *imports_, *this);
    if (!clean()) return false;
    check(module, diags_);
    return clean();
  }

  struct Loading {
    std::string path, name;
  };

  llvm::SourceMgr& sources_;
  Diagnostics& diags_;
  const ImportOptions* imports_;
  std::vector<std::unique_ptr<Module>>& modules_;
  std::vector<Loading> loading_;  // the file compiled, then the modules being loaded, innermost last
  llvm::StringMap<const Module*> loaded_;  // by absolute path; null: it has errors
};

}  // namespace

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> read_source(const std::string& path, const std::string& name) {
  llvm::sys::fs::file_t file = llvm::sys::fs::getStdinHandle();
  if (path != "-") {
    auto opened = llvm::sys::fs::openNativeFileForRead(path);
    if (!opened) return opened.takeError();
    file = *opened;
  }
  // Read in chunks, not by the file's size, which a pipe or a device lacks.
  std::string text;
  llvm::Error error = llvm::Error::success();
  for (size_t size = 0;; size = text.size()) {
    text.resize(size + (size_t{1} << 16));
    auto read = llvm::sys::fs::readNativeFile(file, llvm::MutableArrayRef<char>(&text[size], text.size() - size));
    if (!read) error = read.takeError();
    text.resize(size + (read ? *read : 0));
    if (!read || *read == 0) break;
    if (text.size() > kMaxSourceBytes) {
      error = llvm::createStringError("larger than the limit of " + std::to_string(kMaxSourceBytes >> 20) + " MiB");
      break;
    }
  }
  if (path != "-") llvm::sys::fs::closeFile(file);
  if (error) return error;
  for (size_t i = text.find('\r'); i != std::string::npos; i = text.find('\r', i + 1))
    if (i + 1 == text.size() || text[i + 1] != '\n') text[i] = '\n';
  return llvm::MemoryBuffer::getMemBufferCopy(text, name);
}

FrontendResult run_frontend(llvm::SourceMgr& sources, unsigned buffer_id, Diagnostics& diags,
                            Stage last, const ImportOptions* imports) {
  FrontendResult result;
  llvm::StringRef name = sources.getMemoryBuffer(buffer_id)->getBufferIdentifier();
  // Standard input has no folder or path: its imports are relative to the
  // current folder, and no module can be it.
  std::string dir, path;
  if (name != "<stdin>") {
    dir = llvm::sys::path::parent_path(name).str();
    llvm::SmallString<256> absolute(name);
    llvm::sys::fs::make_absolute(absolute);
    llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
    path = std::string(absolute);
  }
  try {
    Frontend(sources, diags, imports, result.imported_modules).run(buffer_id, path, dir, last, result);
    result.ok = !diags.has_errors();
  } catch (const ErrorLimitReached&) {
    result.ok = false;
  }
  return result;
}

}  // namespace irisc
