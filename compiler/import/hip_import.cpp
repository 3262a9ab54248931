// irisc-import-hip: reads one HIP header with Clang and describes, in the
// line protocol of irisc/import_protocol.h, the functions .iris code may
// call and the files the parse read.
//
// This is the only part of the compiler that depends on Clang. It is a
// separate executable so that irisc links no Clang and starts as fast as
// before: irisc runs it only for a module with an `import`. The header is
// parsed as the host side of a HIP compilation (`-x hip --cuda-host-only`,
// the real HIP headers under --rocm-path, no device libraries), where the
// AST still holds every __device__ function with its attributes; no code is
// generated.
#include "irisc/import_protocol.h"

#include <fmt/format.h>

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Frontend/Utils.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <string>
#include <vector>

namespace protocol = irisc::import_protocol;
using namespace clang;

namespace {

// The .iris spelling of a scalar C++ type, or "" when there is none.
// Integers go by width and signedness (so `long` is i64 on the 64-bit
// targets); _Float16, __half and __hip_bfloat16 are not mapped: the emitted
// code's iris::half and iris::bfloat16 do not convert to them.
std::string iris_scalar(QualType type, const ASTContext& ctx) {
  type = type.getCanonicalType().getUnqualifiedType();
  const auto* builtin = type->getAs<BuiltinType>();
  if (!builtin) return "";
  if (builtin->getKind() == BuiltinType::Void) return "void";
  if (type->isBooleanType()) return "bool";
  if (builtin->getKind() == BuiltinType::Float) return "f32";
  if (builtin->getKind() == BuiltinType::Double) return "f64";
  if (!builtin->isInteger()) return "";
  uint64_t bits = ctx.getTypeSize(type);
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64) return "";
  return fmt::format("{}{}", type->isSignedIntegerType() ? 'i' : 'u', bits);
}

// Collects the functions of the translation unit, outside system headers,
// at namespace scope (extern "C" blocks included), each under its first
// declaration.
class FunctionLister : public ASTConsumer {
 public:
  explicit FunctionLister(std::string& out) : out_(out) {}

  void HandleTranslationUnit(ASTContext& ctx) override {
    ctx_ = &ctx;
    visit(ctx.getTranslationUnitDecl());
  }

 private:
  void visit(const DeclContext* context) {
    for (const Decl* decl : context->decls()) {
      if (const auto* linkage = dyn_cast<LinkageSpecDecl>(decl)) visit(linkage);
      else if (const auto* tmpl = dyn_cast<FunctionTemplateDecl>(decl)) {
        if (tmpl->isCanonicalDecl() && listed(tmpl->getTemplatedDecl()))
          list(tmpl->getTemplatedDecl(), "it is a function template");
      } else if (const auto* fn = dyn_cast<FunctionDecl>(decl); fn && fn->isFirstDecl() && listed(fn)) {
        list(fn, why_not_callable(fn->getMostRecentDecl()));
      }
    }
  }

  // Whether the user's code declares `fn` (not a system header, not Clang).
  bool listed(const FunctionDecl* fn) const {
    const SourceManager& sm = ctx_->getSourceManager();
    return !sm.isInSystemHeader(sm.getFileLoc(fn->getLocation())) && !fn->isImplicit() &&
           fn->getDeclName().isIdentifier();
  }

  // Why .iris code cannot call `fn`, or "" when it can.
  std::string why_not_callable(const FunctionDecl* fn) const {
    if (fn->hasAttr<CUDAGlobalAttr>()) return "it is a __global__ kernel";
    if (!fn->hasAttr<CUDADeviceAttr>()) return "it is not a __device__ function";
    if (fn->isVariadic()) return "it is variadic";
    if (fn->isDeleted()) return "it is deleted";
    for (const ParmVarDecl* p : fn->parameters()) {
      std::string type = iris_scalar(p->getType(), *ctx_);
      if (type.empty() || type == "void")
        return "parameter '" + p->getNameAsString() + "' has type '" +
               p->getType().getAsString() + "', which is not an .iris scalar type";
    }
    if (iris_scalar(fn->getReturnType(), *ctx_).empty())
      return "its result type '" + fn->getReturnType().getAsString() +
             "' is not an .iris scalar type";
    return "";
  }

  void list(const FunctionDecl* fn, const std::string& rejection) {
    const SourceManager& sm = ctx_->getSourceManager();
    PresumedLoc at = sm.getPresumedLoc(sm.getFileLoc(fn->getLocation()));
    std::string name = fn->getNameAsString();
    if (!rejection.empty()) {
      out_ += protocol::rejected_line(name, at.getFilename(), at.getLine(), at.getColumn(), rejection);
      return;
    }
    const FunctionDecl* last = fn->getMostRecentDecl();
    std::vector<std::string> names, types;
    for (const ParmVarDecl* p : last->parameters()) {
      // An unnamed parameter is named by its position, for messages.
      names.push_back(p->getName().empty() ? fmt::format("#{}", names.size() + 1)
                                           : p->getNameAsString());
      types.push_back(iris_scalar(p->getType(), *ctx_));
    }
    std::vector<protocol::Param> params;
    for (size_t i = 0; i < types.size(); ++i) params.push_back({names[i], types[i]});
    out_ += protocol::function_line(name, at.getFilename(), at.getLine(), at.getColumn(),
                                    iris_scalar(last->getReturnType(), *ctx_), params);
  }

  std::string& out_;
  const ASTContext* ctx_ = nullptr;
};

// Every file the preprocessor entered, system headers included (as gcc's
// -MD does), for irisc's dependency file.
class AllFiles : public DependencyCollector {
  bool needSystemDependencies() override { return true; }
  bool sawDependency(StringRef, bool, bool, bool, bool is_missing) override { return !is_missing; }
};

class ListAction : public ASTFrontendAction {
 public:
  ListAction(std::string& out, std::shared_ptr<AllFiles> files) : out_(out), files_(std::move(files)) {}

 protected:
  bool BeginSourceFileAction(CompilerInstance& ci) override {
    files_->attachToPreprocessor(ci.getPreprocessor());
    return true;
  }
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance&, StringRef) override {
    return std::make_unique<FunctionLister>(out_);
  }

 private:
  std::string& out_;
  std::shared_ptr<AllFiles> files_;
};

class ListActionFactory : public tooling::FrontendActionFactory {
 public:
  ListActionFactory(std::string& out, std::shared_ptr<AllFiles> files) : out_(out), files_(std::move(files)) {}
  std::unique_ptr<FrontendAction> create() override { return std::make_unique<ListAction>(out_, files_); }

 private:
  std::string& out_;
  std::shared_ptr<AllFiles> files_;
};

// The search-path and macro flags of the compile command that
// compile_commands.json in `dir` gives (or infers from a neighbouring source
// file) for `header`, with relative paths made absolute.
bool flags_from_compile_commands(const std::string& dir, const std::string& header,
                                 std::vector<std::string>& flags) {
  std::string error;
  auto db = tooling::CompilationDatabase::loadFromDirectory(dir, error);
  if (!db) {
    llvm::errs() << protocol::kTool << ": " << error << "\n";
    return false;
  }
  db = tooling::inferMissingCompileCommands(std::move(db));
  std::vector<tooling::CompileCommand> commands = db->getCompileCommands(header);
  if (commands.empty()) return true;
  const tooling::CompileCommand& command = commands.front();
  auto absolute = [&](llvm::StringRef path) {
    llvm::SmallString<256> out(path);
    llvm::sys::fs::make_absolute(command.Directory, out);
    return std::string(out);
  };
  const std::vector<std::string>& args = command.CommandLine;
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef arg = args[i];
    for (llvm::StringRef path_flag : {"-I", "-isystem", "-iquote", "-include"}) {
      if (arg == path_flag && i + 1 < args.size()) {
        flags.push_back(arg.str());
        flags.push_back(absolute(args[++i]));
      } else if (path_flag == "-I" && arg.starts_with("-I") && arg.size() > 2) {
        flags.push_back("-I" + absolute(arg.drop_front(2)));
      }
    }
    if (arg.starts_with("-D") || arg.starts_with("-U") || arg.starts_with("-std=")) {
      flags.push_back(arg.str());
      if ((arg == "-D" || arg == "-U") && i + 1 < args.size()) flags.push_back(args[++i]);
    }
  }
  return true;
}

int usage() {
  llvm::errs() << "usage: " << protocol::kTool
               << " <header> [-p <build-dir>] [-- <clang arguments>...]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  std::string header = argv[1];
  std::vector<std::string> args = {
      "-x", "hip", "--cuda-host-only", "-nogpulib", "--rocm-path=" IRIS_ROCM_PATH,
      "-resource-dir=" IRIS_CLANG_RESOURCE_DIR, "-std=c++20", "-fsyntax-only",
      // The header is Clang's main file here, but a header everywhere else.
      "-Wno-pragma-once-outside-header"};
  int i = 2;
  if (i + 1 < argc && llvm::StringRef(argv[i]) == "-p") {
    if (!flags_from_compile_commands(argv[i + 1], header, args)) return 2;
    i += 2;
  }
  if (i < argc && llvm::StringRef(argv[i]) != "--") return usage();
  for (++i; i < argc; ++i) args.push_back(argv[i]);

  tooling::FixedCompilationDatabase db(".", args);
  tooling::ClangTool tool(db, {header});
  std::string out;
  auto files = std::make_shared<AllFiles>();
  ListActionFactory factory(out, files);
  if (tool.run(&factory) != 0) return protocol::kExitHeaderErrors;
  for (const std::string& file : files->getDependencies()) out += protocol::file_line(file);
  llvm::outs() << out;
  return 0;
}
