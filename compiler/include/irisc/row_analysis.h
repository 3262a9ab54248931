// What a tile's tree says of its elements along each row, for the passes
// that turn accesses of whole rows into vector accesses: copy_async's runs in
// pipelined loops (pass_pipeline_loads.cpp) and stores of dot's results
// (pass_assign_layouts.cpp). Both read the trees that the program wrote, so
// a pointer tile counts as contiguous only where it is built as
// base + rows[:, None] * ld + columns[None, :] from aranges, broadcasts and
// constants, and a mask as a run of columns only where it is a conjunction of
// comparisons of such trees.
#pragma once

#include "irisc/tir.h"

#include <cstdint>
#include <optional>
#include <unordered_map>

namespace irisc {

// The value of each `let` of a function, which is never assigned again.
using LetValues = std::unordered_map<const TirVar*, const TirValue*>;

// How far v's elements advance from one column to the next, in elements
// (pointers) or units: 0 where v is the same along each row, nullopt where
// it is not known. Pointer tiles built as base + rows[:, None] * ld +
// (k + arange(BK))[None, :] advance by 1.
std::optional<int64_t> row_stride(const TirValue* v, const LetValues& lets);

// Whether the mask v holds, along each row, one run of consecutive columns
// (possibly none): a comparison whose sides advance by constants from one
// column to the next (row_stride) holds on a prefix or a suffix of the row,
// and a conjunction of runs is a run. An access then looks only at the first
// and the last element of each of its runs (iris::RowIntervals).
bool row_interval(const TirValue* v, const LetValues& lets);

}  // namespace irisc
