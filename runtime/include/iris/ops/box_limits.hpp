// The limits of pipelined loops whose copies are boxes (ops/copy_box.hpp),
// for the runtime and the compiler alike: a program instance keeps a TMA
// barrier per stage of at most kBoxRings rings of at most kBoxStages stages,
// so irisc's pipeline-loads copies no boxes in a loop of more rings
// (pass_pipeline_loads.cpp), and a ring of more stages copies through its
// pointers. Plain C++: irisc includes it too.
#pragma once

namespace iris::detail {
inline constexpr int kBoxRings = 4;
inline constexpr int kBoxStages = 8;
}  // namespace iris::detail
