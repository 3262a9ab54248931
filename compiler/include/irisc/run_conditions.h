// The run-time conditions of the pipelining pass (pass_pipeline_loads.cpp),
// read off the affine forms of a copy's pointers and mask (affine.h): the
// conditions, on scalars a loop does not change, under which every run of a
// copy (16 bytes of a row, one cp.async) starts at an aligned address and is
// wholly masked on or off. A condition is TIR, a conjunction that the
// pipelined loop tests once at run time (`K % 8 == 0`, `BLOCK_K % 8 == 0`,
// `aligned<16>(a)`), or null where none is shown.
#pragma once

#include "irisc/affine.h"
#include "irisc/tir_builder.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

namespace irisc {

class RunConditions {
 public:
  // The lets of the loop's body, by variable.
  using LoopLets = std::unordered_map<const TirVar*, TirValue*>;
  // A copy of a tree that the loop does not change, for a condition to test.
  using Copy = std::function<TirValue*(const TirValue*)>;

  RunConditions(TirModule& module, TirBuilder& build, const TirStmt& loop, const LoopLets& loop_lets,
                const LetValues& function_lets, Copy copy)
      : m_(module), b_(build), loop_(loop), lets_(loop_lets), function_lets_(function_lets), copy_(std::move(copy)) {}

  // The condition under which every run of `run_bytes` of the copy of `load`
  // (of elements of `element_bytes`, nullopt where unknown) has an aligned
  // first pointer and one mask value: the pointers advance by one element
  // along each row, and each comparison of the mask either holds on whole
  // rows or changes at a column b with b % V == 0 (V: a run's elements).
  TirValue* uniform_runs(const TirValue& load, std::optional<int> element_bytes, int run_bytes);

  // a && b, each condition once (the copies of a GEMM ask K % 8 == 0 of
  // both their pointers and their masks).
  TirValue* all_of(TirValue* a, TirValue* b);

  // A scalar that the loop does not change, tested whole: a pointer's
  // address a multiple of d bytes, an integer a multiple of d (null where
  // the loop changes it, or it cannot be computed again before the loop).
  TirValue* tested(const TirValue* v, int64_t d);

 private:
  TirValue* uniform_mask(const std::vector<RowComparison>& comparisons);
  TirValue* uniform_comparison(const RowComparison& c);
  TirValue* multiple_of(const AffineForm& f, int64_t d);
  TirValue* parts_multiple_of(const AffineForm& f, int64_t d);
  TirValue* multiple_of(const AffineTerm& t, int64_t d);
  TirValue* multiple_of(const AffineFactor& f, int64_t d);
  bool reads_loop_var(const TirValue* v) const;
  TirValue* both(TirValue* a, TirValue* b);
  static void conjuncts(TirValue* v, std::vector<TirValue*>& terms);

  TirModule& m_;
  TirBuilder& b_;
  const TirStmt& loop_;
  const LoopLets& lets_;
  const LetValues& function_lets_;
  Copy copy_;
  int64_t run_elements_ = 0;  // the elements of a run of the load analysed
  int64_t element_size_ = 0;  // ... and its element's bytes
};

}  // namespace irisc
