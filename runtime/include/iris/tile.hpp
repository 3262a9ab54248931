// Tiles: the device library that irisc's generated code is written against,
// split the ThunderKittens way into the types (iris/types/) and the
// operations on them (iris/ops/); this header includes all of it.
//
// One lowering path for every target. A program instance computes on 1-D and
// 2-D tiles held in registers, spread over the threads that run the instance
// as the tile's layout, part of its type, says (types/layout.hpp). Values are
// plain scalars or tile-like objects (types/tile.hpp): register tiles,
// symbolic ranges and contiguous pointer tiles, so that contiguity is known at
// compile time.
//
//   types/layout.hpp     threads of an instance; layouts: which elements each holds
//   types/tile.hpp       Tile, Range, ContigPtrs (of a layout), Tile2 and their traits
//   types/program.hpp    Grid and Program (one program instance)
//   types/checked.hpp    Checked / Unchecked: what an access carries
//   types/shared.hpp     SharedTile, SharedStages: swizzled tiles in shared memory
//   ops/elementwise.hpp  conversion, creation, arithmetic, comparison, where
//   ops/program.hpp      program_id, num_programs, rank, world_size
//   ops/translate.hpp    `p @ r`
//   ops/block.hpp        block_reduce, single, the exchange of tiles between threads
//   ops/memory.hpp       load, store, checked mode's access checks
//   ops/atomic.hpp       read-modify-writes, compare-and-swap, atomic read/write
//   ops/sync.hpp         wait, signals, fences, the device barrier
//   ops/transport.hpp    put, get, put_signal, remote atomics and quiet on any
//                        rank, near ranks and node teams (multinode kernels)
//   ops/reduce.hpp       sum, max, min, of a whole tile or along an axis
//   ops/shape.hpp        expand_dims, reshape, broadcast_to, trans
//   ops/dot.hpp          dot: matrix product plus accumulator
//   ops/copy_async.hpp   copy_async, commit_async, wait_async: a K loop's stages
//   ops/copy_box.hpp     bind_box, box_at, wait_boxes: its stages by TMA on sm_90a
//   ops/trace.hpp        TraceSpan, TraceScope: what traced kernels record
//   types/trace.hpp      TraceEvent, TraceBuffer: a rank's recorded spans
//
// The operations use the target's primitives (iris/device.hpp).
#pragma once

#include "iris/ops/atomic.hpp"
#include "iris/ops/block.hpp"
#include "iris/ops/copy_async.hpp"
#include "iris/ops/copy_box.hpp"
#include "iris/ops/dot.hpp"
#include "iris/ops/elementwise.hpp"
#include "iris/ops/memory.hpp"
#include "iris/ops/program.hpp"
#include "iris/ops/reduce.hpp"
#include "iris/ops/shape.hpp"
#include "iris/ops/sync.hpp"
#include "iris/ops/trace.hpp"
#include "iris/ops/translate.hpp"
#include "iris/ops/transport.hpp"
#include "iris/types/checked.hpp"
#include "iris/types/layout.hpp"
#include "iris/types/program.hpp"
#include "iris/types/tile.hpp"
