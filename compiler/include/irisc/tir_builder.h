// Builds tile-IR values and statements in a module: the one set of
// IR-building helpers that the passes share (issue 30). Leaves (reads and
// constants) take the builder's location, which a pass sets to the loop or
// statement it rewrites; an operation takes its first operand's.
#pragma once

#include "irisc/tir.h"

#include <initializer_list>
#include <string_view>
#include <vector>

namespace irisc {

// The scalar type i32.
TirType i32_type();

class TirBuilder {
 public:
  explicit TirBuilder(TirModule& module, llvm::SMLoc loc = {}) : m_(module), loc_(loc) {}
  void set_location(llvm::SMLoc loc) { loc_ = loc; }

  // `op` of `type` over `operands`, at the builder's location.
  TirValue* make(TirOp op, TirType type, std::initializer_list<TirValue*> operands = {});
  TirValue* read(const TirVar* var);
  TirValue* constant(int value);  // an i32
  // An integer of `type`'s element (its type parameter dropped: the value is
  // written with the concrete type).
  TirValue* typed_constant(const TirType& type, int64_t value);
  TirValue* true_value();
  // An i32 given by its C++ text (a compile-time parameter's expression).
  TirValue* named_constant(std::string_view text);
  TirValue* unary(TirOp op, TirValue* a);                      // of a's type
  TirValue* binary(TirOp op, TirValue* a, TirValue* b);        // of a's type
  TirValue* binary_bool(TirOp op, TirValue* a, TirValue* b);   // a bool of a's shape

  TirStmt* eval(TirValue* value);
  TirStmt* assign(TirVar* var, TirValue* value);
  // if condition { stmts }
  TirStmt* guarded(TirValue* condition, const std::vector<TirStmt*>& stmts);

  // Whether v is the constant true.
  static bool is_true(const TirValue* v);

 private:
  TirModule& m_;
  llvm::SMLoc loc_;
};

}  // namespace irisc
