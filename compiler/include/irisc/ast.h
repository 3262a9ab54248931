// The syntax tree: the parser's output, annotated in place by the checker.
//
// Every node has the source range it was parsed from. Nodes live in the
// Module's arenas, so they are plain structs linked by raw pointers and the tree
// is freed at once, without recursion (deep trees cannot overflow the stack
// when they are destroyed). Fields under "checker" are empty after parsing and
// filled by check(); together with the tree they are the typed program that
// lowering reads.
#pragma once

#include "irisc/token.h"
#include "irisc/types.h"

#include <llvm/Support/Allocator.h>
#include <llvm/Support/SMLoc.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace irisc {

struct Expr;
struct Stmt;

// Where a pointer may point, or whether a rank is provably in my node's team
// (language.md 9.1). Pointers: into plain memory (Local: a kernel's `*T`
// parameter), my own symmetric heap (Heap), memory loads and stores reach
// (Near: translated to a near rank, or a device function's parameter, which
// is never Any), or possibly a far rank's heap (Any). Ranks: Near or Any.
// Only multinode functions have Any ranks and pointers.
enum class Locality : uint8_t { Local, Heap, Near, Any };
struct Binding;
struct Function;
struct BuiltinInfo;
struct Call;

// `type` in the grammar, as written.
struct TypeSyntax {
  enum class Kind : uint8_t { Scalar, Pointer, Tile };
  Kind kind = Kind::Scalar;
  llvm::SMRange range;
  ScalarKind scalar = ScalarKind::I32;  // Scalar, Pointer (pointee)
  bool sym = false;                     // Pointer
  std::string_view type_param;          // Scalar, Pointer (pointee): a type parameter's name, not a keyword
  TypeSyntax* element = nullptr;        // Tile
  Expr* size = nullptr;                 // Tile: a size, or a Shape for 2-D
  int height = 0;                       // parser: the size's height + 1 (limits recursion)
  Type resolved;                        // checker: the type it names (TypeValue)
};

enum class ExprKind : uint8_t {
  IntLiteral, FloatLiteral, BoolLiteral, Name, Call, Unary, Binary, Cast, Translate, TypeValue,
  AddAxis,  // x[:, None] (int_value 1) or x[None, :] (int_value 0): the axis added
  Shape,    // (M, N): a 2-D tile's size, valid only where a tile size is expected
};

struct CallArg {
  std::string_view name;  // empty for a positional argument
  llvm::SMRange name_range;
  Expr* value = nullptr;
};

// A compile-time integer (or bool) value. `value` is known when it does not
// depend on a parameter without a default. A value that depends on
// compile-time parameters has a canonical text, `symbol`, in which they stay
// symbolic ("(BLOCK * 2)"), kept by the Module; a plain number has none, so
// folding literals allocates nothing.
struct ConstValue {
  std::string_view symbol;  // set when symbolic
  std::optional<int64_t> value;
  bool symbolic = false;  // depends on a compile-time parameter
  // The canonical text: the symbol, or the number in decimal.
  std::string text() const { return symbolic ? std::string(symbol) : std::to_string(*value); }
};

// An expression. Nodes are many (most of a program's memory), so a node holds
// only what every kind needs plus small kind-specific fields; a call's
// arguments live in their own node (Call).
struct Expr {
  ExprKind kind;
  TokenKind op = TokenKind::Eof;  // Unary, Binary
  int height = 0;                 // parser: tallest path to a leaf (limits recursion)
  llvm::SMRange range;
  std::string_view name;          // Name, Call (callee)
  union {
    uint64_t int_value = 0;       // IntLiteral; AddAxis: the new axis
    double float_value;           // FloatLiteral
    bool bool_value;              // BoolLiteral
  };
  // Unary, Cast, AddAxis: operands[0]; Binary: both; Translate: pointer, rank;
  // Shape: rows, columns.
  std::array<Expr*, 2> operands{};
  TypeSyntax* type_syntax = nullptr;  // Cast (target), TypeValue
  Call* call = nullptr;               // Call

  // checker
  Type type;
  std::optional<ConstValue> constant;   // set when compile-time
  const Binding* binding = nullptr;     // Name
  Locality locality = Locality::Near;   // of a pointer or a rank

  // The operands that are set, for walks over the tree.
  std::span<Expr* const> operand_list() const {
    return {operands.data(), operands[1] ? 2u : operands[0] ? 1u : 0u};
  }
};

// A call's own parts (an Expr of kind Call points to one).
struct Call {
  llvm::SMRange name_range;
  std::vector<Expr*> ct_args;    // f<64, f32>(...): the compile-time arguments
  llvm::SMRange ct_range;        // from '<' to '>'; invalid without them
  std::vector<CallArg> args;

  // checker
  const BuiltinInfo* builtin = nullptr;  // a call of a built-in
  const Function* callee = nullptr;      // a call of a device function
  // Arguments in parameter order (nullptr where an optional one is omitted),
  // and for enumeration parameters the chosen enumerator's index.
  std::vector<Expr*> resolved_args;
  std::vector<int> enum_args;
  // A device call: the callee's parameter and result types for this call's
  // compile-time arguments (the callee's own when it has none).
  std::vector<Type> param_types;
  // Each compile-time argument: an integer's value (symbolic in the caller's
  // parameters) or a type.
  std::vector<ConstValue> ct_values;
  std::vector<Type> ct_types;
};

enum class StmtKind : uint8_t {
  Let, Var, Assign, ExprStmt, If, For, While, Break, Continue, Return, Block,
};

struct Stmt {
  StmtKind kind;
  llvm::SMRange range;
  std::string_view name;            // Let, Var, For (loop variable)
  llvm::SMRange name_range;
  TypeSyntax* declared_type = nullptr;  // Let, Var
  Expr* value = nullptr;            // Let, Var, Assign (right side), ExprStmt, Return, If/While (condition)
  Expr* target = nullptr;           // Assign (left side)
  TokenKind assign_op = TokenKind::Eq;  // Assign
  Expr* low = nullptr;              // For
  Expr* high = nullptr;             // For
  Expr* step = nullptr;             // For (null: 1)
  Expr* stages = nullptr;           // For: its pipeline's stages (null: the compiler's choice)
  Stmt* body = nullptr;             // If (then), For, While
  Stmt* else_body = nullptr;        // If
  std::vector<Stmt*> stmts;         // Block

  // checker
  const Binding* binding = nullptr;  // Let, Var, For
};

// Where a name comes from.
struct Binding {
  enum class Kind : uint8_t { Let, Var, LoopVar, Param, CtParam, TypeParam, Const, Function };
  Kind kind;
  std::string_view name;
  llvm::SMRange range;  // the name at its definition
  Type type;                           // TypeParam: the type it stands for in the instance being checked
  std::optional<ConstValue> constant;  // Const, CtParam
  const Function* function = nullptr;  // Function
  Locality locality = Locality::Any;   // of the pointer or rank it holds
};

struct Param {
  std::string_view name;
  llvm::SMRange range;
  TypeSyntax* type = nullptr;        // null for a type parameter
  Expr* default_value = nullptr;  // compile-time parameters only
  // A type parameter (`T: type in (f32, bf16)`): the types it admits, as written.
  std::vector<TypeSyntax*> admitted;
  bool is_type() const { return type == nullptr; }
  Binding* binding = nullptr;  // checker
};

struct ImportDecl;

struct Function {
  bool is_kernel = false;
  // `multinode`: its ranks may be outside the caller's node, so the checker
  // tracks the locality of its ranks and translated pointers (language.md 9.1).
  bool multinode = false;
  std::string_view name;
  llvm::SMRange name_range;
  llvm::SMRange range;
  std::vector<Param> ct_params;
  std::vector<Param> params;
  TypeSyntax* return_type = nullptr;  // device functions only; null: no value
  Stmt* body = nullptr;
  // checker
  std::vector<Type> param_types;
  Type result = Type::void_type();
  // Functions declared in an imported header (import phase) have no body or
  // type syntax: their name and parameters point into the import's
  // description, their ranges into the header, and param_types/result are set
  // from the header's declaration.
  const ImportDecl* imported_from = nullptr;
  std::string_view rejection;  // why .iris cannot call it; empty if it can
  std::vector<llvm::SMRange> declarations;  // more than one: overloaded
};

struct ConstDecl {
  std::string_view name;
  llvm::SMRange range;
  TypeSyntax* type = nullptr;
  Expr* value = nullptr;
  const Binding* binding = nullptr;  // checker
};

class Module;

// `import "path";`: a HIP/C++ header, or, when the path ends in ".iris", an
// .iris module (import.h).
struct ImportDecl {
  std::string path;  // decoded
  llvm::SMRange range;
  llvm::SMRange path_range;  // the string literal
  // import phase
  std::string header;  // the file found, absolute; empty if not found or imported before
  // A module: the module, checked; null if it is not one, was not found, had
  // errors or was imported before by the same file.
  const Module* module = nullptr;
  std::string description;  // the helper's output (import_protocol.h)
  std::vector<Function*> functions;  // the functions first declared in this import
  std::vector<std::string_view> files;  // every file its parse read
};

struct Item {
  enum class Kind : uint8_t { Import, Const, Function };
  Kind kind;
  ImportDecl* import = nullptr;
  ConstDecl* constant = nullptr;
  Function* function = nullptr;
};

// A parsed file and the arenas that own its nodes.
class Module {
 public:
  template <class T, class... Args>
  T* make(Args&&... args) {
    return new (allocator<T>().Allocate()) T{std::forward<Args>(args)...};
  }

  // Keeps a string as long as the module (the checker's symbolic constants).
  // Copied here rather than through llvm::StringSaver: its save() is compiled
  // into the prebuilt LLVMSupport, whose allocator code does not unpoison
  // memory that this (possibly ASan-built) header's allocator code poisoned.
  std::string_view save(std::string_view text) {
    char* bytes = string_bytes_.Allocate<char>(text.size() + 1);
    std::copy(text.begin(), text.end(), bytes);
    bytes[text.size()] = '\0';
    return {bytes, text.size()};
  }

  std::vector<Item> items;
  // An imported .iris module's name in diagnostics and the generated code,
  // and its absolute path (set by the front end's module loader; empty for
  // the file compiled).
  std::string source_name;
  std::string path;

 private:
  template <class T>
  llvm::SpecificBumpPtrAllocator<T>& allocator();

  llvm::SpecificBumpPtrAllocator<Expr> exprs_;
  llvm::SpecificBumpPtrAllocator<Call> calls_;
  llvm::SpecificBumpPtrAllocator<Stmt> stmts_;
  llvm::SpecificBumpPtrAllocator<TypeSyntax> types_;
  llvm::SpecificBumpPtrAllocator<Binding> bindings_;
  llvm::SpecificBumpPtrAllocator<Function> functions_;
  llvm::SpecificBumpPtrAllocator<ConstDecl> consts_;
  llvm::SpecificBumpPtrAllocator<ImportDecl> imports_;
  llvm::BumpPtrAllocator string_bytes_;
};

template <> inline llvm::SpecificBumpPtrAllocator<Expr>& Module::allocator() { return exprs_; }
template <> inline llvm::SpecificBumpPtrAllocator<Call>& Module::allocator() { return calls_; }
template <> inline llvm::SpecificBumpPtrAllocator<Stmt>& Module::allocator() { return stmts_; }
template <> inline llvm::SpecificBumpPtrAllocator<TypeSyntax>& Module::allocator() { return types_; }
template <> inline llvm::SpecificBumpPtrAllocator<Binding>& Module::allocator() { return bindings_; }
template <> inline llvm::SpecificBumpPtrAllocator<Function>& Module::allocator() { return functions_; }
template <> inline llvm::SpecificBumpPtrAllocator<ConstDecl>& Module::allocator() { return consts_; }
template <> inline llvm::SpecificBumpPtrAllocator<ImportDecl>& Module::allocator() { return imports_; }

// The types a type parameter admits, as written: "(f32, bf16)".
std::string admitted_types(const Param& type_param);

// Calls visit(expr) for every expression under `body`: each statement's
// expressions, their operands and the arguments of their calls.
template <class Visit>
void for_each_expr(const Stmt* body, Visit&& visit) {
  std::vector<const Expr*> exprs;
  std::vector<const Stmt*> stmts;
  if (body) stmts.push_back(body);
  while (!stmts.empty()) {
    const Stmt* s = stmts.back();
    stmts.pop_back();
    for (const Expr* e : {s->value, s->target, s->low, s->high, s->step})
      if (e) exprs.push_back(e);
    for (const Stmt* child : {s->body, s->else_body})
      if (child) stmts.push_back(child);
    stmts.insert(stmts.end(), s->stmts.begin(), s->stmts.end());
  }
  while (!exprs.empty()) {
    const Expr* e = exprs.back();
    exprs.pop_back();
    visit(*e);
    for (const Expr* operand : e->operand_list()) exprs.push_back(operand);
    if (e->call)
      for (const CallArg& arg : e->call->args) exprs.push_back(arg.value);
  }
}

// Prints the tree (--emit=ast), with types and constants when `checked`.
void print_module(const Module& module, const llvm::SourceMgr& sources, bool checked,
                  llvm::raw_ostream& out);

}  // namespace irisc
