// Where a program instance is: its ids in the grid, its rank and the world's size.
#pragma once

#include <cstdint>

#include "iris/types/program.hpp"

namespace iris {

IRIS_HD inline int32_t program_id(const Program& p, int axis) { return p.id[axis]; }
IRIS_HD inline int32_t num_programs(const Program& p, int axis) { return p.count[axis]; }
IRIS_HD inline int32_t rank(const Program& p) { return p.ctx.rank; }
IRIS_HD inline int32_t world_size(const Program& p) { return p.ctx.world_size; }

}  // namespace iris
