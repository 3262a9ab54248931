# shellcheck shell=bash
# The runs of every sample that scripts/gpu-check.sh and scripts/bench-samples.sh
# make (sourced by both). An entry is a sample (samples/README.md), or
# sample.variant for a second command line of the same program, as in
# samples/CMakeLists.txt.
# shellcheck disable=SC2034 # used by the scripts that source this file
samples=(all_gather all_reduce atomic_counter message_passing message_passing.stress
         point_to_point atomics collectives barrier copy gemm fused_gemm)
# gemm's shapes (MxNxK[+P], see sample_gemm --help): the ctest shapes, and one of
# 16x16 tiles, more than a GPU's multiprocessors, so that the persistent kernel's
# instances walk several tiles. GEMM_SHAPES replaces them (4096x4096x4096 to bench).
# fused_gemm runs the same shapes (its grids: multiprocessor_count() instances per
# rank, an eighth of them communication programs in the role-split kernels).
gemm_shapes=${GEMM_SHAPES:-1x1x1,100x70x45+3,70x90x7,600x130x96+1,70x90x300+2,1000x1000x40}

# sample_args ENTRY SIZES ATOMIC_SIZES STRESS_SIZES STRESS ROUNDS: the arguments
# of an entry after --ranks N. The barrier's work is ROUNDS rounds; the
# message_passing stress variant sends STRESS messages of each of STRESS_SIZES;
# atomic_counter and atomics run one program instance per 256 of ATOMIC_SIZES;
# gemm and fused_gemm run $gemm_shapes.
sample_args() {
  case $1 in
    gemm | fused_gemm) echo "--shape $gemm_shapes" ;;
    barrier) echo "--rounds $6" ;;
    message_passing.stress) echo "--size $4 --stress $5" ;;
    atomic_counter | atomics) echo "--size $3" ;;
    *) echo "--size $2" ;;
  esac
}
