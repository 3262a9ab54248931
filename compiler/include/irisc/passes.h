// The lowering passes, each in its own file (tir_build.cpp, pass_*.cpp);
// lower.cpp runs them in order.
#pragma once

#include "irisc/ast.h"
#include "irisc/tir.h"

namespace irisc {

// The checked tree as TIR, every conversion, broadcast and translation explicit.
TirModule build_tir(const Module& module, std::string_view source_name);

// `p @ rank()` is p: its translations go (unchecked builds only, so that a
// checked build still checks the pointer).
void elide_own_rank(TirModule& module);

// Moves each translation from a pointer tile to the scalar pointer it is
// built from, so that it happens once per tile (unchecked builds only).
void hoist_translations(TirModule& module);

// Moves each broadcast_to of an elementwise operation down to its operands,
// so that offsets and masks built from arange broadcast without moving data.
void sink_broadcasts(TirModule& module);

// In a K loop that only loads tiles and accumulates their dot, issues the
// next iteration's loads before this iteration's dot; copies of boxes of a
// matrix also say so, for TMA (not in checked builds, whose copies' pointers
// the runtime checks).
void pipeline_loads(TirModule& module);

// Puts each dot's accumulator, and the values computed with it, in the
// layout of the target's matrix units (TirLayout::Dot), converting where an
// operation needs another layout.
void assign_layouts(TirModule& module);

// In a loop whose copies read pointers that move by the same amount every
// iteration, computes them once before the loop and advances them.
void advance_pointers(TirModule& module);

// Marks the operations the runtime checks in a checked build: translations,
// fences, and accesses through pointers into a symmetric heap.
void mark_checked_sites(TirModule& module);

// Beside each kernel whose pipelined loops copy boxes, its copier slice: the
// same control flow with only those copies, which a warpgroup of its own
// issues while the program computes (ops/copy_box.hpp); device functions
// that run such loops get one too. None where the copier cannot compute what
// the program decides its copies by.
void split_copier(TirModule& module);

// The C++ names of the module's namespace, functions, variables and loop
// bounds, free of C++ keywords and of shadowing.
void assign_names(TirModule& module);

}  // namespace irisc
