// The launch's test of whether TMA may copy every box of a kernel
// (iris_boxes_hold, which irisc writes over the kernel's parameters:
// pass_split_copier.cpp) against TMA's rules for a row-major bf16 matrix,
// written here from the PTX ISA: a 16-byte aligned base, a row pitch of
// whole 16 bytes, at least one row and one column, and rows no longer than
// their pitch. bench/gemm.iris's persistent kernel reads A (M x K, pitch K)
// and B (K x N, pitch N); pitched.iris's, A with pitch lda and B with ldb;
// the fused all-scatter's (iris/fused/fused_gemm.iris), A (M x K, pitch lda)
// and rank r's columns of B (K x min(n_local, N - r n_local), pitch ldb), which
// its condition computes from the launch's rank; the fused reduce-scatter's,
// A's rows to M whatever the tile's owner.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "gemm.iris.hpp"
#include "pitched.iris.hpp"
#include "fused_gemm.iris.hpp"

namespace {

using Kernel = iris_kernels::matmul_persistent<iris::bfloat16>;
using Pitched = iris_kernels::pitched_product;
const iris::Program kLaunch{};  // what the launch passes: a rank and a world, which these kernels do not read

bool tma_may_copy(const void* base, int rows, int cols, int pitch) {
  return reinterpret_cast<std::uintptr_t>(base) % 16 == 0 && pitch * 2 % 16 == 0 && rows > 0 && cols > 0 &&
         cols <= pitch;
}

}  // namespace

int main() {
  alignas(16) static iris::bfloat16 storage[64];
  int failures = 0, cases = 0;
  for (int a_offset : {0, 1, 8})
    for (int b_offset : {0, 3, 8})
      for (int m : {0, 1, 64})
        for (int n : {0, 8, 12, 64})
          for (int k : {0, 7, 8, 24}) {
            iris::bfloat16* a = storage + a_offset;
            iris::bfloat16* b = storage + b_offset;
            const bool expected = tma_may_copy(a, m, k, k) && tma_may_copy(b, k, n, n);
            const bool got = Kernel::iris_boxes_hold(kLaunch, a, b, storage, m, n, k);
            ++cases;
            if (got != expected) {
              ++failures;
              std::printf("A at +%d, B at +%d, M %d, N %d, K %d: iris_boxes_hold %d, TMA's rules %d\n", a_offset,
                          b_offset, m, n, k, got, expected);
            }
          }
  for (int m : {0, 64})
    for (int n : {8, 64})
      for (int k : {8, 24})
        for (int lda : {8, 16, 24, 32})
          for (int ldb : {4, 8, 64, 72}) {
            const bool expected = tma_may_copy(storage, m, k, lda) && tma_may_copy(storage, k, n, ldb);
            const bool got = Pitched::iris_boxes_hold(kLaunch, storage, storage, storage, m, n, k, lda, ldb);
            ++cases;
            if (got != expected) {
              ++failures;
              std::printf("pitched: M %d, N %d, K %d, lda %d, ldb %d: iris_boxes_hold %d, TMA's rules %d\n", m, n, k,
                          lda, ldb, got, expected);
            }
          }
  for (int world : {1, 3})
    for (int rank = 0; rank < world; ++rank)
      for (int n : {24, 40, 48})
        for (int ldb : {16, 24}) {
          const int n_local = (n + world - 1) / world / 8 * 8 + 8;  // a last rank with fewer columns, or none
          const int n_mine = std::min(n_local, n - rank * n_local);
          const iris::Program launch{{nullptr, 0, rank, world, 0, world, nullptr, nullptr}, {0, 0, 0}, {1, 1, 1}};
          const bool expected = tma_may_copy(storage, 64, 32, 32) && tma_may_copy(storage, 32, n_mine, ldb);
          const bool got = iris_kernels::gemm_all_scatter<>::iris_boxes_hold(launch, storage, storage, storage, 64, n, 32,
                                                                            n_local, 32, ldb, n, 8, nullptr);
          ++cases;
          if (got != expected) {
            ++failures;
            std::printf("all_scatter: rank %d of %d, N %d, n_local %d, ldb %d: iris_boxes_hold %d, TMA's rules %d\n",
                        rank, world, n, n_local, ldb, got, expected);
          }
        }
  for (int m : {0, 48, 64})
    for (int lda : {24, 32, 36})
      for (int n : {16, 40}) {
        const iris::Program launch{};
        const bool expected = tma_may_copy(storage, m, 32, lda) && tma_may_copy(storage, 32, n, n);
        const bool got = iris_kernels::gemm_reduce_scatter<>::iris_boxes_hold(
            launch, storage, storage, storage, nullptr, nullptr, m, n, 32, 16, lda, n, n, 8, nullptr);
        ++cases;
        if (got != expected) {
          ++failures;
          std::printf("reduce_scatter: M %d, N %d, lda %d: iris_boxes_hold %d, TMA's rules %d\n", m, n, lda, got,
                      expected);
        }
      }
  std::printf("%d of %d cases as TMA's rules say\n", cases - failures, cases);
  return failures == 0 ? 0 : 1;
}
