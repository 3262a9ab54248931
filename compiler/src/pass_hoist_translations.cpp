// Translation hoisting: a translation moves from a pointer tile to the scalar
// pointer the tile is built from, so that it happens once per tile rather
// than once per element:
//   translate(add(broadcast(p), offs), r)  ->  add(broadcast(translate(p, r)), offs)
// and through broadcast_to, which repeats pointers without changing them.
// Translating is adding the distance between two heaps, which commutes with
// adding offsets. Unchecked builds only: a checked build checks every
// translated pointer, element by element.
#include "irisc/passes.h"
#include "irisc/tir_walk.h"

namespace irisc {
namespace {

class Hoister {
 public:
  explicit Hoister(TirModule& module) : m_(module) {}

  // `translate` with its translation moved as far towards the scalar base
  // pointer as pointer arithmetic and broadcasts allow.
  TirValue* hoist(TirValue* translate) {
    TirValue* pointer = translate->operands[0];
    bool offset = (pointer->op == TirOp::Add || pointer->op == TirOp::Sub) && pointer->operands[0]->type.is_pointer();
    bool broadcast = pointer->op == TirOp::Broadcast || pointer->op == TirOp::BroadcastTo;
    if (!offset && !broadcast) return translate;
    // The inner pointer, translated: translate(q, r) takes the place of q.
    TirValue* inner =
        m_.make_value(TirOp::Translate, in_space(pointer->operands[0]->type, translate->type.space), translate->loc);
    inner->operands = {pointer->operands[0], translate->operands[1]};
    pointer->operands[0] = hoist(inner);
    pointer->type = translate->type;
    return pointer;
  }

 private:
  static TirType in_space(TirType t, AddressSpace space) {
    t.space = space;
    return t;
  }

  TirModule& m_;
};

}  // namespace

void hoist_translations(TirModule& module) {
  Hoister hoister(module);
  for (TirFunction* function : module.functions)
    rewrite_values(*function, [&](TirValue* v) { return v->op == TirOp::Translate ? hoister.hoist(v) : v; });
}

}  // namespace irisc
