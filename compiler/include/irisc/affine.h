// The affine analysis of TIR's integer and pointer trees, for the passes that
// turn accesses of whole rows into vector accesses: copy_async's runs in
// pipelined loops (pass_pipeline_loads.cpp, and its run-time conditions,
// run_conditions.h) and stores of dot's results (pass_assign_layouts.cpp).
//
// A tree, a scalar or each element (row, column) of a tile, is read once
// into an AffineForm, a base pointer (pointers only) plus
//     constant + Σ coefficient × factor × factor ...
// whose factors are the element's column, tiles and scalars the form does not
// look into, and sums kept whole. Each user reads the form: how far the
// elements advance from one column to the next (row_stride: pointers that
// advance by one element are contiguous rows), and what is known of its
// divisibility (the constant and the coefficients exactly, a column at the
// start of a run as a multiple of the run, the scalars as run-time tests:
// RunConditions). A mask holds on one run of columns per row where it is a
// conjunction of comparisons whose sides advance by constants
// (row_intervals), and the comparisons keep their sides' forms for the
// conditions under which each run is wholly on or off.
//
// Both read the trees the program wrote, so a pointer tile counts as
// contiguous only where it is built as base + rows[:, None] * ld +
// columns[None, :] from aranges, broadcasts and constants.
#pragma once

#include "irisc/tir.h"

#include <llvm/ADT/SmallVector.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace irisc {

// The value of each `let` of a function, which is never assigned again.
using LetValues = std::unordered_map<const TirVar*, const TirValue*>;

struct AffineForm;

// What a term multiplies.
struct AffineFactor {
  enum class Kind : uint8_t {
    // The element's column: an arange along the row.
    Column,
    // A tile the form does not look into (a load, a quotient, a variable),
    // or one the same along each row (an arange across the rows, x[:, None];
    // a tile of one column broadcast along the row): stride 0.
    Tile,
    // A scalar the form does not look into: a parameter, the loop variable,
    // a pointer, a quotient, a conversion.
    Symbol,
    // A sum that a product multiplies, or a scalar sum broadcast into a tile:
    // its own form, kept whole (a product is a multiple of d where one factor
    // is; a scalar can be tested whole where its terms are not shown to be).
    Sum,
  };
  Kind kind;
  const TirValue* value = nullptr;        // Column: the arange; Tile, Symbol: what it stands for; Sum: its scalar
  std::optional<int64_t> stride;          // Tile: how far its elements advance along a row, where known
  std::shared_ptr<const AffineForm> sum;  // Sum
};

struct AffineTerm {
  int64_t coefficient = 1;
  llvm::SmallVector<AffineFactor, 2> factors;  // at least one: a constant term is AffineForm::constant
};

struct AffineForm {
  // The scalar tree it is the form of, which a run-time test may copy; null
  // for a tile and for a difference.
  const TirValue* scalar = nullptr;
  bool tile = false;  // of each element of a tile, not of a scalar
  // A pointer's form: the pointer that its terms and constant, in elements,
  // are added to (a symbol, a scalar sum, or a tile the form does not look into).
  std::optional<AffineFactor> base;
  int64_t constant = 0;
  std::vector<AffineTerm> terms;

  // The form of v, through the lets of `lets`, broadcasts, axes and layouts.
  static AffineForm of(const TirValue* v, const LetValues& lets);

  // How far the elements advance from one column to the next, in elements
  // (pointers) or units: 0 for a scalar, nullopt where not known (a term
  // that multiplies an advancing factor by anything but a constant). Pointer
  // tiles built as base + rows[:, None] * ld + (k + arange(BK))[None, :]
  // advance by 1.
  std::optional<int64_t> row_stride() const;

  // Whether the form is a constant, with nothing to test at run time.
  bool is_constant() const { return !base && terms.empty(); }
};

// a - b, of integers (both tiles, or both scalars); nullopt for pointers.
std::optional<AffineForm> difference(const AffineForm& a, const AffineForm& b);

// A comparison of a mask, `lower < upper` (strict) or `lower <= upper`
// (`x > y` is `y < x`), and the forms of its sides.
struct RowComparison {
  AffineForm lower, upper;
  bool strict;
};

// The comparisons of the mask `v` where it holds, along each row, one run of
// consecutive columns (possibly none): a conjunction of comparisons whose
// sides advance by constants from one column to the next (a comparison holds
// on a prefix or a suffix of the row, and a conjunction of runs is a run),
// and of parts that are the same along each row. nullopt where that is not
// shown. An access then looks only at the first and the last element of each
// of its runs (iris::RowIntervals).
std::optional<std::vector<RowComparison>> row_intervals(const TirValue* v, const LetValues& lets);

}  // namespace irisc
