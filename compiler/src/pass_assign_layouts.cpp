// Layout assignment: `dot` accumulates in the layout of its target's matrix
// units (iris::DotLayout<T, M, N>: tensor-core fragments on NVIDIA GPUs and
// MFMA ones on AMD GPUs for f16 and bf16, the blocked layout elsewhere), and
// this pass makes the values around each dot live in that layout too, so that
// the accumulator never moves between threads inside a K loop:
//   - A dot's result is in the Dot layout of its operands' element type.
//   - A variable that a dot accumulates into (`acc = dot(a, b, acc)`) is in
//     that layout, and so is every value assigned to it (`zeros(...)`). So
//     is a `var` whose first value is in the Dot layout (`var total =
//     partial;` after a K loop), and every value assigned to it.
//   - An elementwise operation with an operand in the Dot layout computes in
//     it, and its other operands are laid out again: trees of creations,
//     broadcasts, elementwise operations and loads simply compute each element
//     where the new layout puts it (offsets and masks of a store of the
//     accumulator, for one), a `let` of offsets or a mask built from aranges
//     and scalars is computed again in it, and anything else gets a
//     convert_layout.
//   - copy_async's pointers, mask and `other` are computed in the copy layout
//     (iris::CopyLayout: runs of 16 bytes of the copied type per thread, one
//     cp.async each), laid out again as above.
//   - A store of a Dot-layout tile of 2-byte elements whose pointers advance
//     by one element along each row (affine.h: C + rows * ld +
//     columns) is marked so, and its pointers and mask are computed in
//     DotRows (iris::RowsOf: on NVIDIA GPUs the runs of rows that each
//     thread writes once the warp has passed its fragments through shared
//     memory, so that iris::store writes whole 16-byte runs of rows), its
//     mask marked where it holds on one run of columns per row (rows < M &&
//     cols < N: a run is whole where its ends are).
//   - Any other load or store through pointers in the Dot layout that
//     advance by one element along each row is marked so too (iris::load
//     and iris::store then compute one pointer per row of a thread's
//     fragments, not one per element).
//   - Operations that need the blocked layout (trans, reshape, reductions
//     along an axis, adding an axis, dot's operands, a call's arguments,
//     variables of other layouts) get a convert_layout of a Dot operand.
//   - A device function whose first `return` returns a 2-D tile in the Dot
//     layout returns that layout (its other returns are converted to it), and
//     its calls' results are in it, with the callee's type parameter replaced
//     by the call's type argument: a K loop written as a device function
//     (iris/gemm.iris's tile_product) hands its accumulator to the caller's
//     epilogue as the tensor cores left it. Callees come before their callers
//     (modules first, then the file in order).
// The walk is in program order, so a `let` without a written type takes its
// value's layout before its first read.
#include "irisc/passes.h"
#include "irisc/affine.h"
#include "irisc/tir_walk.h"

#include <unordered_map>
#include <unordered_set>

namespace irisc {
namespace {

bool has(const TirValue& v, uint16_t trait) { return tir_op_info(v.op).has(trait); }

// Operations whose operands must be in the blocked layout.
bool needs_blocked_operands(const TirValue& v) {
  return has(v, tir_trait::BlockedOperands) ||
         (has(v, tir_trait::BlockedOperandsAlongAxis) && v.attrs<AxisAttrs>().axis >= 0);
}

class LayoutAssigner {
 public:
  explicit LayoutAssigner(TirModule& module) : m_(module) {}

  void function(TirFunction& f) {
    f_ = &f;
    accumulators(f);
    mutable_.clear();
    let_values_.clear();
    lets_.clear();
    for_each_stmt(f.body, [&](TirStmt* s) {
      if (s->kind == TirStmtKind::Var || s->kind == TirStmtKind::Assign) mutable_.insert(s->var);
      if (s->kind == TirStmtKind::Let) lets_[s->var] = s->value;
    });
    returned_ = false;
    for_each_stmt(f.body, [&](TirStmt* s) {
      for (TirValue** slot : {&s->value, &s->low, &s->high, &s->step}) rewrite_value(*slot, [&](TirValue* v) {
        return value(v);
      });
      statement(*s, f.result);
    });
    mark_rows_of_dot_accesses(f);
  }

 private:
  // The variables that dots accumulate into, in their dot's layout; and each
  // dot's result.
  void accumulators(TirFunction& f) {
    for_each_value(f, [&](TirValue* v) {
      if (v->op != TirOp::Dot) return;
      v->type.layout = TirLayout::Dot;
      v->type.dot_operand = v->operands[0]->type.scalar;
      v->type.dot_operand_param = v->operands[0]->type.type_param;
      TirValue* acc = v->operands[2];
      if (acc->op == TirOp::Read && !is_param(f, acc->var())) acc->var()->type = acc->var()->type.laid_out_like(v->type);
    });
  }

  static bool is_param(const TirFunction& f, const TirVar* var) {
    for (const TirVar* p : f.params)
      if (p == var) return true;
    return false;
  }

  // After its operands: v in the layout its operands and uses call for.
  TirValue* value(TirValue* v) {
    if (v->op == TirOp::Read) {
      if (v->type.is_tile()) v->type = v->type.laid_out_like(v->var()->type);
      return v;
    }
    if (v->op == TirOp::Dot) {
      // Operands in shared memory (pipelined stages) stay there.
      for (TirValue*& operand : llvm::MutableArrayRef(v->operands).take_front(2))
        if (!operand->type.in_shared_memory()) operand = in_layout(operand, blocked(operand->type));
      v->operands[2] = in_layout(v->operands[2], v->type);
      return v;
    }
    if (v->op == TirOp::CopyAsync) {
      // Pointers, mask and `other` in runs of 16 bytes of the copied type.
      for (TirValue*& operand : llvm::MutableArrayRef(v->operands).take_front(3)) {
        if (!operand || !operand->type.is_tile()) continue;
        TirType runs = operand->type;
        runs.layout = TirLayout::Copy;
        runs.dot_operand = v->operands[3]->type.scalar;
        runs.dot_operand_param = v->operands[3]->type.type_param;
        operand = in_layout(operand, runs);
      }
      return v;
    }
    if (needs_blocked_operands(*v)) {
      for (TirValue*& operand : v->operands)
        if (operand && operand->type.is_tile()) operand = in_layout(operand, blocked(operand->type));
      if (v->op == TirOp::CallDevice && v->type.is_tile()) v->type = call_result_layout(*v);
      return v;
    }
    // A dot's result leaves in 16-byte runs of rows where its pointers allow
    // (iris::store with ContiguousRows), not element by element: its
    // pointers and mask go straight into the runs each thread writes.
    if (v->op == TirOp::Store && stores_dot_rows(*v)) {
      auto& access = v->attrs<AccessAttrs>();
      access.contiguous_rows = true;
      TirType rows = v->operands[1]->type;
      rows.layout = TirLayout::DotRows;
      for (size_t i : {0, 2})
        if (v->operands[i]) v->operands[i] = in_layout(v->operands[i], v->operands[i]->type.laid_out_like(rows));
      access.row_interval_mask = v->operands[2] && row_intervals(v->operands[2], lets_);
      return v;
    }
    if (!has(*v, tir_trait::SameLayout)) return v;
    // An elementwise operation computes in the Dot layout of any operand of
    // its shape that has one.
    const TirValue* shape = v->type.is_tile() ? v : v->operands[0];
    for (const TirValue* operand : v->operands)
      if (operand && operand->type.dims == shape->type.dims && operand->type.layout == TirLayout::Dot) {
        if (v->type.is_tile()) v->type = v->type.laid_out_like(operand->type);
        for (TirValue*& other : v->operands)
          if (other && other->type.dims == shape->type.dims) other = in_layout(other, operand->type);
        break;
      }
    return v;
  }

  // A statement's value into its variable's (or function's result's)
  // layout; a `let` of a value whose C++ type it keeps takes the value's
  // layout, unless a dot accumulates into it, and a `var` whose first value
  // is in the Dot layout takes that layout (a sum that starts from a dot's
  // result, as the fused all-reduce's does, stays in the fragments: a 128×256
  // f32 tile does not fit through shared memory).
  void statement(TirStmt& s, TirType& result) {
    if (s.kind == TirStmtKind::Return && s.value && s.value->type.is_tile()) {
      if (!returned_ && s.value->type.layout == TirLayout::Dot && result.dims.size() == 2)
        result = result.laid_out_like(s.value->type);
      returned_ = true;
      s.value = in_layout(s.value, result);
      return;
    }
    if (!s.var || !s.value || !s.var->type.is_tile()) return;
    if (s.kind == TirStmtKind::Let && s.keeps_value_type && s.var->type.layout != TirLayout::Dot) {
      s.var->type = s.var->type.laid_out_like(s.value->type);
      if (recomputable_here(*s.value)) let_values_[s.var] = s.value;
      return;
    }
    if (s.kind == TirStmtKind::Var && s.value->type.layout == TirLayout::Dot)
      s.var->type = s.var->type.laid_out_like(s.value->type);
    if (s.kind == TirStmtKind::Let || s.kind == TirStmtKind::Var || s.kind == TirStmtKind::Assign)
      s.value = in_layout(s.value, s.var->type);
  }

  // The result of call v in its callee's result layout, the callee's type
  // parameter of a Dot layout replaced by the call's type argument.
  static TirType call_result_layout(const TirValue& v) {
    const auto& call = v.attrs<CallAttrs>();
    TirType layout = call.callee->result;
    if (!layout.dot_operand_param.empty()) {
      for (size_t i = 0; i < call.callee->ct_params.size() && i < call.template_args.size(); ++i) {
        if (call.callee->ct_params[i]->name != layout.dot_operand_param) continue;
        layout.dot_operand = call.template_args[i].type.scalar;
        layout.dot_operand_param = call.template_args[i].type.type_param;
      }
    }
    return v.type.laid_out_like(layout);
  }

  // A store of a 2-D tile of 2-byte elements in the Dot layout through
  // pointers that advance by one element along each row.
  // Loads and stores through pointers in the Dot layout (the 2-byte stores
  // of stores_dot_rows are in DotRows) that advance by one element along
  // each row are marked so: iris::load and iris::store then compute one
  // pointer per row of a thread's fragments instead of one per element
  // (iris::RowHeads), which for the f32 partial sums of the fused all-reduce
  // at 128x256 would be 128 pointers a thread beside the 128 values.
  void mark_rows_of_dot_accesses(TirFunction& f) {
    for_each_value(f, [&](TirValue* v) {
      if (v->op != TirOp::Load && v->op != TirOp::Store) return;
      const TirValue* ptr = v->operands[0];
      if (ptr->type.is_tile() && ptr->type.dims.size() == 2 && ptr->type.layout == TirLayout::Dot &&
          AffineForm::of(ptr, lets_).row_stride() == 1)
        v->attrs<AccessAttrs>().contiguous_rows = true;
    });
  }

  bool stores_dot_rows(const TirValue& store) const {
    const TirValue* ptr = store.operands[0];
    const TirValue* value = store.operands[1];
    // Not through the transport (multinode `put`), which stores element by element.
    return value->type.is_tile() && value->type.dims.size() == 2 && value->type.layout == TirLayout::Dot &&
           ptr->type.is_tile() && ptr->type.space != AddressSpace::AnyRank && element_bytes(ptr->type, *f_) == 2 && AffineForm::of(ptr, lets_).row_stride() == 1;
  }

  static TirType blocked(TirType t) {
    t.layout = TirLayout::Blocked;
    return t;
  }

  // v in the layout of `to` (a tile of v's shape): laid out again where every
  // element can be computed where it is needed, converted otherwise.
  TirValue* in_layout(TirValue* v, const TirType& to) {
    if (!v->type.is_tile() || v->type.same_layout(to)) return v;
    // A let computed from aranges and scalars (a block's offsets or mask) is
    // computed again in the new layout rather than moved between threads.
    if (v->op == TirOp::Read && let_values_.count(v->var())) return in_layout(clone_tree(m_, let_values_.at(v->var())), to);
    if (has(*v, tir_trait::Relayable)) {
      v->type = v->type.laid_out_like(to);
      for (TirValue*& operand : v->operands)
        if (operand && operand->type.dims == v->type.dims) operand = in_layout(operand, to);
      return v;
    }
    TirValue* c = m_.make_value(TirOp::ConvertLayout, v->type.laid_out_like(to), v->loc);
    c->operands.push_back(v);
    return c;
  }

  // Computable again later with the same result: recomputable, and reading
  // no variable that an assignment may have changed since.
  bool recomputable_here(const TirValue& v) const {
    return recomputable(&v, [&](const TirValue& node) { return node.op != TirOp::Read || !mutable_.count(node.var()); });
  }


  TirModule& m_;
  const TirFunction* f_ = nullptr;  // the function assigned
  // Lets (of a kept value type) that recomputable_here() allows to compute again.
  std::unordered_map<const TirVar*, const TirValue*> let_values_;
  std::unordered_set<const TirVar*> mutable_;  // variables of `var` statements
  LetValues lets_;                             // every let of the function
  bool returned_ = false;                      // a `return` of the function seen (its first sets the layout)
};

}  // namespace

void assign_layouts(TirModule& module) {
  LayoutAssigner assigner(module);
  for (TirFunction* function : module.functions) assigner.function(*function);
}

}  // namespace irisc
