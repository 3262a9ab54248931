// doctest's main for the tile tests. The GPU build exits 77 (ctest: skipped)
// where no GPU is visible.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "tile_target.hpp"

int main(int argc, char** argv) {
#if IRIS_GPU
  int devices = 0;
  if (hipGetDeviceCount(&devices) != hipSuccess || devices == 0) {
    std::fprintf(stderr, "tile tests: no GPU visible, skipped\n");
    return 77;
  }
#endif
  return doctest::Context(argc, argv).run();
}
