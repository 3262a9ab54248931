// Checked-mode marking: which operations the runtime checks and reports with
// their .iris location. Every translation (the rank and the pointer) and
// every fence and barrier (the race detector learns what it orders; a
// barrier that waits too long reports a hang on the GPU) is checked, and so is
// every access through a pointer into a symmetric heap, its own or another
// rank's; an access through any other pointer is the user's own memory, which
// the runtime cannot check.
#include "irisc/passes.h"
#include "irisc/tir_walk.h"

namespace irisc {
namespace {

bool checked_site(const TirValue& v) {
  const TirOpInfo& op = tir_op_info(v.op);
  if (op.has(tir_trait::Translates) || op.has(tir_trait::OrdersMemory)) return true;
  if (op.has(tir_trait::ReadsMemory) || op.has(tir_trait::WritesMemory))
    return v.operands[0]->type.space != AddressSpace::Local;
  return false;
}

}  // namespace

void mark_checked_sites(TirModule& module) {
  for (TirFunction* function : module.functions)
    for_each_value(*function, [](TirValue* v) { v->checked = checked_site(*v); });
}

}  // namespace irisc
