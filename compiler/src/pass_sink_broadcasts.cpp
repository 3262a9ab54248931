// Broadcast sinking: a broadcast_to of an elementwise operation becomes the
// operation of broadcast operands, down to the leaves:
//   broadcast_to(lt(add_axis(rows), broadcast(m)))
//     ->  lt(broadcast_to(add_axis(rows)), broadcast(m))
// On a GPU, broadcasting a tile held in registers moves its elements between
// threads through shared memory (a barrier each time), whereas broadcasting
// an arange-based offset, a contiguous pointer tile or a scalar computes each
// element where it is needed. Sunk to the leaves, the broadcasts of offsets,
// pointers and masks built from arange (a 2-D block's addresses) move
// nothing; the elementwise operations then compute over the larger shape,
// which costs a few integer operations per element instead.
#include "irisc/passes.h"
#include "irisc/tir_walk.h"

namespace irisc {
namespace {

bool sinks_through(const TirValue& v) { return tir_op_info(v.op).has(tir_trait::Elementwise); }

class Sinker {
 public:
  explicit Sinker(TirModule& module) : m_(module) {}

  // `operand` broadcast to `to`'s shape, the broadcast as deep as it goes.
  TirValue* broadcast(TirValue* operand, const TirType& to, llvm::SMLoc loc) {
    if (operand->op == TirOp::Broadcast) {  // a scalar: now one of the larger shape
      operand->type = operand->type.shaped_like(to);
      return operand;
    }
    if (!operand->type.is_tile() || operand->type.dims == to.dims) return operand;
    if (sinks_through(*operand)) {
      const auto dims = operand->type.dims;
      for (TirValue*& o : operand->operands)
        if (o && (o->op == TirOp::Broadcast || o->type.dims == dims)) o = broadcast(o, to, loc);
      operand->type = operand->type.shaped_like(to);
      return operand;
    }
    TirValue* b = m_.make_value(TirOp::BroadcastTo, operand->type.shaped_like(to), loc);
    b->operands.push_back(operand);
    return b;
  }

 private:
  TirModule& m_;
};

}  // namespace

void sink_broadcasts(TirModule& module) {
  Sinker sinker(module);
  for (TirFunction* function : module.functions)
    rewrite_values(*function, [&](TirValue* v) {
      return v->op == TirOp::BroadcastTo ? sinker.broadcast(v->operands[0], v->type, v->loc) : v;
    });
}

}  // namespace irisc
