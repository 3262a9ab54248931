// The state of one program instance: which instance of which grid, and the
// symmetric heaps it may address.
#pragma once

#include "iris/host.hpp"
#include "iris/target.hpp"

namespace iris {

// The grid of program instances that a launch runs.
struct Grid {
  int x = 1, y = 1, z = 1;
};

// The state of one program instance: which instance, of how many, and the
// symmetric heaps it may address.
struct Program {
  DeviceContext ctx;
  int id[3];
  int count[3];
  IRIS_HD int linear_id() const { return id[0] + count[0] * (id[1] + count[1] * id[2]); }
};

}  // namespace iris
