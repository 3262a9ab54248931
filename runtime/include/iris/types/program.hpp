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
  // Whether a copier warpgroup issues the instance's box copies
  // (ops/copy_box.hpp): generated code takes the program as `const auto&`, so
  // that a kernel's functions are compiled with only the versions of their
  // loops that the instance may run.
  static constexpr bool copier = false;
  // Whether the launch found that every copy of the kernel's box loops may go
  // by TMA (Kernel::iris_boxes_hold), so that the instance runs the copier's
  // version of those loops alone.
  static constexpr bool boxes_hold = false;
};

// The program of an instance that has a copier warpgroup (kernel_entry).
struct CopierProgram : Program {
  IRIS_HD explicit CopierProgram(const Program& launched) : Program(launched) {}
  static constexpr bool copier = true;
};

// ... launched where Kernel::iris_boxes_hold held for its arguments.
struct CopierBoxesProgram : CopierProgram {
  using CopierProgram::CopierProgram;
  static constexpr bool boxes_hold = true;
};

}  // namespace iris
