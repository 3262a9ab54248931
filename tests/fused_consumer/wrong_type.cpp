// Must not compile: the fused operations take iris::bfloat16 matrices only, and
// say so (built by the test package.fused.cpu, which expects the message).
#include <iris/fused.hpp>

void multiply(iris::ops::FusedWorkspace& workspace, const float* a, const float* b, float* c) {
  iris::ops::matmul_all_scatter(workspace, a, b, c, 64, 64, 64);
}

int main() { return 0; }
