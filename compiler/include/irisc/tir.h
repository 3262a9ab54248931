// The tile IR (TIR): the program between the checker and the C++ printer.
//
// The checked tree says what the user wrote; TIR says what runs. The builder
// (tir_build.cpp) makes explicit what the tree leaves to context: every
// literal has its concrete type, every scalar used as a tile is a Broadcast,
// every narrowing after C++'s integer promotion is a Convert, every `@` is a
// Translate, and every built-in is the operation of the runtime that
// implements it (tir_ops.def). The passes of lower.cpp then rewrite it, each
// a small walk in its own file, and emit_cpp.cpp prints it as C++.
//
// Expressions stay trees, as in the source: the C++ printer writes each as
// one C++ expression, so the tile library's symbolic tiles (arange offsets,
// contiguous pointers) stay symbolic for the C++ compiler. --emit=tir prints
// them one operation a line.
//
// A value's type is its element (a scalar, or a pointer with its address
// space), its shape (one or two dimensions, row-major) and its layout. Nodes live in the TirModule's deques, so pointers to them are stable
// and the module frees them without recursion.
#pragma once

#include "irisc/types.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/Support/Allocator.h>
#include <llvm/Support/SMLoc.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace irisc {

enum class TirOp : uint8_t {
#define TIR_LEAF(Name, Spelling, Attrs) Name,
#define TIR_UNARY(Name, Spelling, Token, Runtime) Name,
#define TIR_BINARY(Name, Spelling, Token, Runtime, Traits) Name,
#define TIR_OP(Name, Spelling, Category, Runtime, Operands, Attrs, Traits) Name,
#include "irisc/tir_ops.def"
};

enum class TirCategory : uint8_t {
  Leaf, Unary, Binary, Convert, Broadcast, Translate, Query, Shape, Elementwise, Reduce, Contract, Memory,
  Atomic, Sync, Call,
};

// What the passes may assume of an operation (tir_ops.def's Traits).
namespace tir_trait {
enum : uint16_t {
  NoTraits = 0,
  // Each element of the result is a function of the same element of the
  // operands, and nothing else: a broadcast operand may sink through it.
  Elementwise = 1 << 0,
  // Its tile operands and result are in one layout, element by element
  // (accesses: the pointers, mask and values).
  SameLayout = 1 << 1,
  // It can compute its result directly in any layout, its operands of the
  // result's shape in that layout, instead of converting it afterwards.
  Relayable = 1 << 2,
  // It may be evaluated again, elsewhere, with the same result and no effect
  // (where its operands may: tir_walk.h's recomputable).
  Recomputable = 1 << 3,
  ReadsMemory = 1 << 4,   // through its first operand, a pointer
  WritesMemory = 1 << 5,  // through its first operand, a pointer
  Translates = 1 << 6,    // makes a pointer into another rank's heap
  OrdersMemory = 1 << 7,  // a fence or a barrier: orders this thread's accesses
  // Its tile operands must be in the blocked layout; AlongAxis: where it
  // reduces along one axis (AxisAttrs), not the whole tile.
  BlockedOperands = 1 << 8,
  BlockedOperandsAlongAxis = 1 << 9,
  // A traced build (irisc --trace) records its span: always (a wait, a
  // signal, a barrier), or only where it reaches another rank's memory (a
  // store or an atomic: emit.h's memory_route is not Own).
  Traced = 1 << 10,
  TracedWhenRemote = 1 << 11,
  // On scalars the host computes it as the device does, from its operands and
  // the launch's rank and world alone (no instance's id, no memory): a
  // launch's iris_boxes_hold may hold it (pass_split_copier.cpp).
  OnHost = 1 << 12,
  // Undefined for some values of its right operand, which the host must not
  // meet where the device's control flow may never compute it: a division or
  // remainder (by zero; INT_MIN by -1), a shift (by a negative count or the
  // width or more). pass_split_copier.cpp writes one into a launch's
  // iris_boxes_hold only where that operand is a constant it is defined for.
  DividesByRight = 1 << 13,
  ShiftsByRight = 1 << 14,
};
}  // namespace tir_trait

struct TirOpInfo {
  std::string_view spelling;
  TirCategory category;
  std::string_view runtime;  // the iris:: function the C++ printer calls; empty for leaves and calls
  std::string_view operands;  // their names, as tir_ops.def gives them
  uint16_t traits;            // tir_trait's
  bool has(uint16_t trait) const { return (traits & trait) == trait; }
};
const TirOpInfo& tir_op_info(TirOp op);

// Where a pointer points: a plain pointer, the calling rank's symmetric heap
// (`sym`), another rank's heap (a translation's result), or in multinode
// code a heap of a rank that may be on another node (AnyRank: a translation
// whose rank the checker did not prove near, and the values derived from it,
// let-bound ones included; language.md 9.1), which only the transport's
// functions reach.
enum class AddressSpace : uint8_t { Local, Heap, Remote, AnyRank };

// Which elements of a tile each thread holds. Blocked is the runtime's
// iris::Blocked (iris/types/layout.hpp); Dot is iris::DotLayout<T, M, N>, the
// layout in which `dot` of T tiles accumulates (tensor-core fragments where
// the target has them, Blocked elsewhere). The last two are tiles in shared
// memory, which no thread holds (iris/types/shared.hpp): Shared is one tile
// (iris::SharedTile, a dot operand), Stages a ring of `stages` of them that a
// pipelined loop fills ahead (iris::SharedStages). Copy is
// iris::CopyLayout<T, M, N>, the layout of copy_async's pointers and mask:
// runs of 16 bytes of T per thread, one cp.async each (T in dot_operand).
// DotRows is iris::RowsOf<iris::DotLayout<T, M, N>>, the layout of the
// pointers and mask of a store of a Dot tile of 2-byte elements through
// contiguous rows: the runs of rows each thread writes where the store passes
// the fragments through shared memory (NVIDIA), the Dot layout elsewhere.
enum class TirLayout : uint8_t { None, Blocked, Dot, Shared, Stages, Copy, DotRows };

struct TirType {
  enum class Kind : uint8_t { Void, Scalar, Pointer };
  Kind kind = Kind::Void;
  ScalarKind scalar = ScalarKind::I32;  // the scalar, or the pointee
  // The type parameter the scalar (or pointee) is, printed in its place; the
  // scalar is then that of one instance (Type::type_param).
  std::string_view type_param;
  AddressSpace space = AddressSpace::Local;  // pointers
  llvm::SmallVector<Shape, 2> dims;  // empty for a scalar
  TirLayout layout = TirLayout::None;
  ScalarKind dot_operand = ScalarKind::I32;  // Dot, DotRows: the element type of dot's operands; Copy: the copied type
  std::string_view dot_operand_param;        // ... where that is a type parameter
  Shape stages{{}, 0};                       // Stages: how many tiles the ring holds

  bool is_void() const { return kind == Kind::Void; }
  bool is_pointer() const { return kind == Kind::Pointer; }
  bool is_bool() const { return kind == Kind::Scalar && scalar == ScalarKind::Bool; }
  bool is_tile() const { return !dims.empty(); }
  bool in_shared_memory() const { return layout == TirLayout::Shared || layout == TirLayout::Stages; }
  TirType element() const;
  // The same element in `shape`'s shape and layout.
  TirType shaped_like(const TirType& shape) const;
  // The same type in the layout of `other` (a tile of the same shape).
  TirType laid_out_like(const TirType& other) const;
  bool same_layout(const TirType& other) const {
    return layout == other.layout &&
           ((layout != TirLayout::Dot && layout != TirLayout::Copy && layout != TirLayout::DotRows) ||
            (dot_operand == other.dot_operand && dot_operand_param == other.dot_operand_param)) &&
           stages == other.stages;
  }
  // The same type with another scalar (never a type parameter).
  TirType with_scalar(ScalarKind s) const {
    TirType t = *this;
    t.scalar = s;
    t.type_param = {};
    return t;
  }
  bool operator==(const TirType& other) const;
  std::string str() const;
};

// The checker's type as a TIR type (a `sym` pointer is in the Heap space).
TirType tir_type(const Type& type);

struct TirVar;
struct TirFunction;

// A compile-time argument of a call: an integer's canonical text, or a type.
struct TirTemplateArg {
  std::string_view value;  // empty for a type
  TirType type;
  bool operator==(const TirTemplateArg&) const = default;
};

// The attributes of each kind of operation (tir_ops.def's Attrs): one struct
// per kind, compared field by field by same_tree.
struct NoAttrs {
  bool operator==(const NoAttrs&) const = default;
};
// Constant: the literal as written (an int may be in a float's context).
struct ConstantAttrs {
  enum class Literal : uint8_t { Int, SignedInt, Float, Bool } literal = Literal::Int;
  uint64_t int_bits = 0;  // Int: the value; SignedInt: an int64_t's bits
  double float_value = 0;
  bool bool_value = false;
  bool operator==(const ConstantAttrs&) const = default;
};
// NamedConstant: the value; CallImported: the function's C++ name.
struct TextAttrs {
  std::string_view text;
  bool operator==(const TextAttrs&) const = default;
};
struct ReadAttrs {
  TirVar* var = nullptr;
  bool operator==(const ReadAttrs&) const = default;
};
struct CallAttrs {
  TirFunction* callee = nullptr;
  std::vector<TirTemplateArg> template_args;  // the callee's compile-time arguments
  bool operator==(const CallAttrs&) const = default;
};
// AddAxis: the new axis; Sum, Max, Min: the axis reduced (-1: all).
struct AxisAttrs {
  int axis = -1;
  bool operator==(const AxisAttrs&) const = default;
};
// CopyAsync and Store: what the layout and pipelining passes proved of the
// access (affine.h).
struct AccessAttrs {
  // The pointers advance by one element along each row, so a run of a row's
  // elements is one contiguous access.
  bool contiguous_rows = false;
  // Along each row the mask holds on one run of consecutive columns, so a run
  // of the access is whole where its ends are.
  bool row_interval_mask = false;
  bool operator==(const AccessAttrs&) const = default;
};
// Dot: a pipelined loop's, which may finish only at a later WaitDots, whose
// operands after the first are the accumulators it settles.
struct DotAttrs {
  bool pipelined = false;
  bool operator==(const DotAttrs&) const = default;
};
// The enumerators' spellings (iris/memory_model.def).
struct MemorySemantics {
  std::string_view sem, scope;
  bool operator==(const MemorySemantics&) const = default;
};
struct OrderAttrs {  // AtomicCas, AtomicLoad, AtomicStore, Fence
  MemorySemantics order;
  bool operator==(const OrderAttrs&) const = default;
};
struct RmwAttrs {  // AtomicRmw
  std::string_view atomic_op;
  MemorySemantics order;
  bool operator==(const RmwAttrs&) const = default;
};
struct WaitAttrs {  // WaitUntil
  std::string_view cmp;
  MemorySemantics order;
  bool operator==(const WaitAttrs&) const = default;
};
struct SignalAttrs {  // Signal
  bool add = false;  // add to the signal rather than set it
  MemorySemantics order;
  bool operator==(const SignalAttrs&) const = default;
};
using TirAttrs = std::variant<NoAttrs, ConstantAttrs, TextAttrs, ReadAttrs, CallAttrs, AxisAttrs, AccessAttrs,
                              DotAttrs, OrderAttrs, RmwAttrs, WaitAttrs, SignalAttrs>;

// The attributes that tir_ops.def gives `op`, with their defaults.
TirAttrs default_attrs(TirOp op);

// A visitor of TirAttrs from lambdas: std::visit(Overloaded{...}, v->payload).
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};

struct TirValue {
  TirOp op;
  TirType type;
  llvm::SMLoc loc;  // where the expression starts in the .iris file
  // In the op's order (tir_ops.def); nullptr where an optional operand (mask,
  // other) is left out.
  llvm::SmallVector<TirValue*, 3> operands;
  TirAttrs payload;  // the alternative that tir_ops.def gives op
  // Set by the checked-marking pass: the runtime checks this operation and
  // reports its .iris location.
  bool checked = false;

  // The op's attributes; A must be the struct tir_ops.def gives op.
  template <class A>
  A& attrs() { return std::get<A>(payload); }
  template <class A>
  const A& attrs() const { return std::get<A>(payload); }
  // A Read's variable.
  TirVar* var() const { return std::get<ReadAttrs>(payload).var; }
};

struct TirVar {
  std::string_view name;  // as in the .iris file
  TirType type;
  std::string cpp_name;   // the naming pass
};

// Shared declares `var`, a ring of stages (TirLayout::Stages) in the kernel's
// dynamic shared memory: right after the ring that `value` reads, or at its
// start where `value` is null. Specialize runs `body` once, compiled twice:
// with `var`, a compile-time bool, true where the run-time condition `value`
// holds and false where it does not (operations that read `var` take a
// faster path that only the condition makes right).
enum class TirStmtKind : uint8_t {
  Let, Var, Assign, Eval, If, For, While, Break, Continue, Return, Block, Shared, Specialize,
};

struct TirStmt {
  TirStmtKind kind;
  llvm::SMLoc loc;
  TirVar* var = nullptr;      // Let, Var, Assign, For, Shared, Specialize
  TirValue* value = nullptr;  // Let, Var, Assign, Eval, Return (may be null), If, While and Specialize (condition), Shared
  TirValue* low = nullptr;    // For
  TirValue* high = nullptr;   // For
  TirValue* step = nullptr;   // For; null: 1
  std::optional<Shape> stages;  // For: the tiles of each ring of its pipeline, where the program chose
  TirStmt* body = nullptr;    // If (then), For, While, Specialize
  TirStmt* else_body = nullptr;  // If
  std::vector<TirStmt*> stmts;   // Block
  // Let without a written type: the variable keeps the value's own C++ type,
  // so that a symbolic tile (arange offsets, contiguous pointers) stays one.
  bool keeps_value_type = false;
  // For: the variables holding the bound and the step (the naming pass).
  std::string end_name, step_name;
  // Specialize: the lambda of its body (the naming pass).
  std::string body_name;
  // Specialize of a loop whose copies are boxes: what TMA needs of them,
  // whatever their runs (a 16-byte aligned base, rows of whole 16 bytes, a
  // matrix of a row and a column at least, rows no longer than their pitch);
  // null where the pass could not write it.
  TirValue* boxes_condition = nullptr;
};

// An .iris module the file imports, directly or through another module: its
// constants and device functions are part of the file's TIR, and are printed
// in a namespace of their own (its kernels are not).
struct TirImportedModule {
  std::string source_name;     // for #line directives and checked-mode reports
  std::string namespace_name;  // the naming pass
};

struct TirFunction {
  const TirImportedModule* module = nullptr;  // where it is defined; null: the file itself
  bool is_kernel = false;
  bool multinode = false;  // `multinode`: may name ranks outside the caller's node
  std::string_view name;
  std::string cpp_name;  // the naming pass
  llvm::SMLoc loc;
  std::vector<TirVar*> ct_params;
  std::vector<std::string> ct_defaults;  // each ct_param's default value; empty if none
  // Each ct_param's default under the defaults before it ("2048" for
  // `2 * BLOCK`); empty if none, or if it is a type parameter.
  std::vector<std::string> ct_default_values;
  // Each ct_param's admitted types: a type parameter's; empty for a value.
  std::vector<std::vector<ScalarKind>> ct_admitted;
  std::vector<TirVar*> params;
  TirType result;
  TirStmt* body = nullptr;
  // The pipelined loops: where each is, and its rings (Shared statements),
  // which the dynamic shared memory holds one loop at a time.
  struct StageLoop {
    llvm::SMLoc loc;
    std::vector<const TirVar*> rings;
  };
  std::vector<StageLoop> stage_loops;
  // A kernel's copier slice, where it has one (pass_split_copier.cpp): a
  // function of the same parameters, printed in the kernel's struct. A device
  // function's copier is a function of the module of its own.
  TirFunction* copier = nullptr;
  // A kernel with a copier slice: the boxes_condition of every box loop it
  // runs, its own or a device function's, over the kernel's parameters; null
  // where one of them reads anything else (pass_split_copier.cpp). Where it
  // holds at a launch, the instances may run the copier's version of those
  // loops alone (iris_boxes_hold, launch_gpu.hpp).
  TirValue* boxes_hold = nullptr;
};

struct TirConstant {
  TirVar* var;
  std::string value;
  const TirImportedModule* module = nullptr;  // where it is defined; null: the file itself
};

struct TirModule {
  std::string source_name;     // for #line directives and checked-mode reports
  std::string namespace_name;  // --namespace, else the naming pass
  bool checked = false;        // --checked: the runtime checks every access
  std::vector<std::string> headers;  // imported, by absolute path
  std::deque<TirImportedModule> modules;  // each after the modules it imports
  std::vector<TirConstant> constants;  // the modules' first, in that order
  std::vector<TirFunction*> functions;  // the modules' device functions, the file's, then its kernels

  TirValue* make_value(TirOp op, TirType type, llvm::SMLoc loc) {
    return new (values_.Allocate()) TirValue{op, std::move(type), loc, {}, default_attrs(op)};
  }
  TirStmt* make_stmt(TirStmtKind kind, llvm::SMLoc loc) { return new (stmts_.Allocate()) TirStmt{kind, loc}; }
  TirVar* make_var(std::string_view name, TirType type) {
    return new (vars_.Allocate()) TirVar{name, std::move(type)};
  }
  TirFunction* make_function() { return &functions_.emplace_back(); }
  // Keeps a string as long as the module (TirValue::text).
  std::string_view save(std::string text) { return strings_.emplace_back(std::move(text)); }

 private:
  // Arenas, as the AST's nodes have: a std::deque of values this size (288
  // bytes) allocated each alone, and the arenas take an eighth off the CPU
  // time of --emit=cpp.
  llvm::SpecificBumpPtrAllocator<TirValue> values_;
  llvm::SpecificBumpPtrAllocator<TirStmt> stmts_;
  llvm::SpecificBumpPtrAllocator<TirVar> vars_;
  std::deque<TirFunction> functions_;
  std::deque<std::string> strings_;
};

// A Constant's value as written in C++ and in --emit=tir: "5", "-1",
// "0.10000000000000001" (every digit a double holds), "true".
std::string literal_text(const TirValue& constant);

// Whether two values compute the same thing the same way: the same operation,
// type and attributes (every field but the source location) over operands
// that are the same values or, in turn, the same trees.
bool same_tree(const TirValue* a, const TirValue* b);

// What is wrong with v's operands against tir_ops.def's list for its
// operation (their count, or a null slot where the operand is not optional);
// empty where nothing is. Lowering checks every value after the builder and
// after each pass, so a builder or pass that forgets an operand fails there.
std::string operand_error(const TirValue& v);

// The bytes of t's scalar (a pointer's pointee), where every type that
// `function` admits for it, a type parameter, has the same; nullopt where not.
std::optional<int> element_bytes(const TirType& t, const TirFunction& function);

// --emit=tir: one operation a line, typed.
void print_tir(const TirModule& module, const llvm::SourceMgr& sources, llvm::raw_ostream& out);

}  // namespace irisc
