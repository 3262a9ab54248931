// The import phase; see import.h and import_protocol.h.
#include "irisc/import.h"

#include "irisc/import_protocol.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>

#include <optional>

namespace irisc {
namespace {

namespace protocol = import_protocol;

// The .iris scalar type spelled `name` ("void" for no result).
std::optional<Type> scalar_type(std::string_view name) {
  if (name == "void") return Type::void_type();
#define SCALAR(Name, Spelling, Bits, IsInteger, IsSigned, IsFloat, CppType) \
  if (name == Spelling) return Type::scalar_of(ScalarKind::Name);
#include "irisc/scalars.def"
  return std::nullopt;
}

class Importer {
 public:
  Importer(Module& module, llvm::SourceMgr& sources, const std::string& dir, Diagnostics& diags,
           const ImportOptions& options, ModuleLoader& modules)
      : module_(module), sources_(sources), diags_(diags), options_(options), modules_(modules),
        base_dir_(dir) {}

  void run() {
    for (Item& item : module_.items) {
      if (item.kind != Item::Kind::Import || item.import->path.empty()) continue;
      if (llvm::StringRef(item.import->path).ends_with(".iris")) import_module(*item.import);
      else import(*item.import);
    }
  }

 private:
  // The file `path` names: relative to the .iris file, then to each -I
  // directory, then (modules only) among the package's modules.
  std::optional<FoundFile> find(std::string_view path, bool is_module) const {
    std::vector<std::string> dirs = {base_dir_};
    dirs.insert(dirs.end(), options_.include_dirs.begin(), options_.include_dirs.end());
    bool search_package = is_module && !options_.module_dir.empty();
    if (search_package) dirs.push_back(options_.module_dir);
    for (const std::string& dir : dirs) {
      llvm::SmallString<256> candidate(path);
      if (!llvm::sys::path::is_absolute(candidate)) {
        candidate = dir;
        llvm::sys::path::append(candidate, path);
      }
      if (!llvm::sys::fs::is_regular_file(candidate)) continue;
      bool from_package = search_package && &dir == &dirs.back();
      llvm::sys::path::remove_dots(candidate, /*remove_dot_dot=*/true);
      FoundFile found;
      found.name = from_package ? std::string(path) : std::string(candidate);
      llvm::sys::fs::make_absolute(candidate);
      llvm::sys::path::remove_dots(candidate, /*remove_dot_dot=*/true);
      found.path = std::string(candidate);
      // A package module's name is no folder of this machine: its own
      // imports go by its absolute path.
      found.dir = llvm::sys::path::parent_path(from_package ? found.path : found.name).str();
      return found;
    }
    return std::nullopt;
  }

  // An .iris module: the loader checks it once, whichever file imports it
  // first; a second import of it in this file changes nothing.
  void import_module(ImportDecl& decl) {
    std::optional<FoundFile> found = find(decl.path, /*is_module=*/true);
    if (!found) {
      diags_.error(DiagKind::ModuleNotFound, decl.path_range, decl.path);
      return;
    }
    if (imported_.insert(found->path).second) decl.module = modules_.load(decl, *found);
  }

  void import(ImportDecl& decl) {
    std::optional<FoundFile> found = find(decl.path, /*is_module=*/false);
    if (!found) {
      diags_.error(DiagKind::ImportNotFound, decl.range, decl.path);
      return;
    }
    decl.header = found->path;
    if (!imported_.insert(decl.header).second) {  // imported twice: the first one does it all
      decl.header.clear();
      return;
    }
    // Loaded now so that --verify also reads the expectations it holds.
    buffer_of(decl.header);
    HeaderDescription ran;
    const HeaderDescription* described =
        options_.describe ? options_.describe(decl.header) : &(ran = describe_header(decl.header, options_));
    if (!described) return;
    if (!described->failure.empty()) {
      diags_.error(DiagKind::ImportFailed, decl.range, decl.path, described->failure);
      return;
    }
    decl.description = described->description;
    read_description(decl);
  }

  void read_description(ImportDecl& decl) {
    std::string_view rest = decl.description;
    while (!rest.empty()) {
      size_t end = rest.find('\n');
      std::string_view line = rest.substr(0, end);
      rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
      std::optional<protocol::Record> record = protocol::parse_record(line);
      if (!record) {
        diags_.error(DiagKind::ImportFailed, decl.range, decl.path,
                     "unexpected line from the helper: '" + std::string(line) + "'");
        return;
      }
      if (record->kind == protocol::Record::Kind::File) decl.files.push_back(record->name);
      else declare(decl, *record);
    }
  }

  // A function of the header; a second one of the same name (in any import)
  // makes the first overloaded.
  void declare(ImportDecl& decl, const protocol::Record& record) {
    llvm::SMRange at = location(record, decl.range);
    if (auto it = by_name_.find(record.name); it != by_name_.end()) {
      it->second->declarations.push_back(at);
      return;
    }
    Function* fn = module_.make<Function>();
    fn->name = record.name;
    fn->name_range = fn->range = at;
    fn->imported_from = &decl;
    fn->declarations.push_back(at);
    fn->rejection = record.reason;
    if (record.kind == protocol::Record::Kind::Function) typed(*fn, record);
    by_name_[record.name] = fn;
    decl.functions.push_back(fn);
  }

  void typed(Function& fn, const protocol::Record& record) {
    std::optional<Type> result = scalar_type(record.result);
    for (const protocol::Param& p : record.params) {
      std::optional<Type> type = scalar_type(p.type);
      if (!type || type->is_void()) {
        fn.rejection = "the helper described a parameter type that .iris does not know";
        return;
      }
      fn.params.push_back(Param{p.name, fn.name_range});
      fn.param_types.push_back(*type);
    }
    if (!result) fn.rejection = "the helper described a result type that .iris does not know";
    else fn.result = *result;
  }

  // The record's declaration as a range over the name in the header; the
  // import itself when the header cannot be read.
  llvm::SMRange location(const protocol::Record& record, llvm::SMRange fallback) {
    unsigned id = buffer_of(std::string(record.file));
    if (id == 0) return fallback;
    llvm::SMLoc loc = sources_.FindLocForLineAndColumn(id, record.line, record.col);
    if (!loc.isValid()) return fallback;
    return {loc, llvm::SMLoc::getFromPointer(loc.getPointer() + record.name.size())};
  }

  // The SourceMgr buffer holding `path`, loaded on first use; 0 if unreadable.
  unsigned buffer_of(const std::string& path) {
    auto [it, inserted] = buffers_.try_emplace(path, 0);
    if (!inserted) return it->second;
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
    if (buffer) it->second = sources_.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
    return it->second;
  }

  Module& module_;
  llvm::SourceMgr& sources_;
  Diagnostics& diags_;
  const ImportOptions& options_;
  ModuleLoader& modules_;
  std::string base_dir_;
  llvm::StringSet<> imported_;
  llvm::StringMap<unsigned> buffers_;
  llvm::StringMap<Function*> by_name_;
};

}  // namespace

ImportOptions installed_import_options(const char* argv0, void* anchor) {
  llvm::SmallString<256> dir(llvm::sys::fs::getMainExecutable(argv0, anchor));
  llvm::sys::path::remove_filename(dir);
  llvm::SmallString<256> helper(dir);
  llvm::sys::path::append(helper, protocol::kTool);
  llvm::SmallString<256> modules(dir), module_dir;
  llvm::sys::path::append(modules, "..", "include");
  if (llvm::sys::fs::real_path(modules, module_dir)) module_dir.clear();
  ImportOptions options;
  options.helper = std::string(helper);
  options.module_dir = std::string(module_dir);
  return options;
}

// irisc-import-hip's standard output goes to a temporary file, its standard
// error (Clang's diagnostics) to ours.
HeaderDescription describe_header(const std::string& header, const ImportOptions& options) {
  llvm::SmallString<128> output;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("irisc-import", "txt", output))
    return {"", "cannot create a temporary file: " + ec.message()};
  std::vector<std::string> args = {options.helper, header};
  if (!options.compile_commands_dir.empty()) {
    args.push_back("-p");
    args.push_back(options.compile_commands_dir);
  }
  args.push_back("--");
  for (const std::string& dir : options.include_dirs) args.push_back("-I" + dir);
  std::vector<llvm::StringRef> argv(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(output), std::nullopt};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(options.helper, argv, std::nullopt, redirects, 0, 0, &error);
  auto text = llvm::MemoryBuffer::getFile(output, /*IsText=*/true);
  llvm::sys::fs::remove(output);
  if (status == protocol::kExitHeaderErrors) return {"", "Clang reported errors in the header"};
  if (status < 0) return {"", "cannot run '" + options.helper + "': " + error};
  if (status != 0) return {"", "'" + options.helper + "' failed with status " + std::to_string(status)};
  if (!text) return {"", "cannot read the output of '" + options.helper + "'"};
  return {(*text)->getBuffer().str(), ""};
}

void resolve_imports(Module& module, llvm::SourceMgr& sources, const std::string& dir,
                     Diagnostics& diags, const ImportOptions& options, ModuleLoader& modules) {
  Importer(module, sources, dir, diags, options, modules).run();
}

}  // namespace irisc
