// A second layout for the tile tests: the blocked one mirrored, a thread's
// element j at the other end of the tile. On the CPU, where one thread holds
// every element, a thread's elements run backwards, so an operation that
// assumed the default layout would read and write mirrored positions. No run
// of a thread's elements is consecutive upwards, so vec is 1 (no vector
// accesses). A 1-D layout: a tile of N is one row.
#pragma once

#include <iris/kernel.hpp>

namespace tile_test {

template <int N>
struct Mirrored {
  static constexpr int rank = 1;
  static constexpr int rows = 1;
  static constexpr int cols = N;
  static constexpr int size = N;
  static constexpr int per_thread = iris::Blocked<N>::per_thread;
  static constexpr int vec = 1;
  static IRIS_HD int index(int j) { return N - 1 - iris::Blocked<N>::index(j); }
  static IRIS_HD bool active() { return iris::Blocked<N>::active(); }
};

}  // namespace tile_test
