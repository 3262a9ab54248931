// Own-rank elision: `p @ rank()` addresses the calling rank's own heap, so it
// is p itself and needs no translation. The rank must be the rank() query
// itself; a value equal to it at run time is not known here.
#include "irisc/passes.h"
#include "irisc/tir_walk.h"

namespace irisc {

void elide_own_rank(TirModule& module) {
  for (TirFunction* function : module.functions)
    rewrite_values(*function, [](TirValue* v) {
      if (v->op != TirOp::Translate || v->operands[1]->op != TirOp::Rank) return v;
      return v->operands[0];
    });
}

}  // namespace irisc
