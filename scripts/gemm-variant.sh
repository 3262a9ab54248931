#!/usr/bin/env bash
# A variant of the GEMM benchmark's library for trying a change to the tile
# library by hand before teaching the compiler: bench/gemm_bench.cpp with only
# the persistent kernel of one config, compiled by nvcc (sm_90a) against a copy
# of runtime/include that you edited, and the generated kernels of the build
# tree (build/bench/iris_generated/iris_gemm_bench/gemm.iris.hpp, which
# `ninja -C build iris_gemm_bench` makes). Prints ptxas's registers and spills
# of each image of the kernel. Time it beside torch.matmul and both Tritons on
# the GPU machine, one process per library:
#   python3 bench/gemm_bench.py --lib OUT.so --dtypes bf16 --config 128x256x64/4p
#
#   scripts/gemm-variant.sh OUT.so [INCLUDE_DIR] [CONFIG]
#     INCLUDE_DIR  the headers (default runtime/include: the baseline)
#     CONFIG       "BM, BN, BK, STAGES" (default "128, 256, 64, 4")
# Environment: BUILD_DIR (default build), NVCC (default nvcc on PATH, else
# /usr/local/cuda/bin/nvcc).
set -euo pipefail
if [ $# -lt 1 ] || [ "$1" = --help ] || [ "$1" = -h ]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
  [ $# -ge 1 ] && exit 0 || exit 2
fi
out=$(realpath -m "$1")
include=$(realpath "${2:-$(dirname "$0")/../runtime/include}")
config=${3:-128, 256, 64, 4}
cd "$(dirname "$0")/.."
build=$(realpath "${BUILD_DIR:-build}")
generated=$build/bench/iris_generated/iris_gemm_bench
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ ! -f "$generated/gemm.iris.hpp" ] || [ ! -f "$build/runtime/libiris_runtime_gpu.a" ]; then
  echo "gemm-variant: $build has no GPU build of the GEMM benchmark (ninja -C $build iris_gemm_bench)" >&2
  exit 2
fi
if ! [[ $config =~ ^[0-9]+,\ *[0-9]+,\ *[0-9]+,\ *[0-9]+$ ]]; then
  echo "gemm-variant: CONFIG must be \"BM, BN, BK, STAGES\", got \"$config\"" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# (sed's c command: every config of the list replaced by the one persistent config.)
sed -e "/^constexpr Config kConfigs\[\] = {/,/^};/c\\constexpr Config kConfigs[] = {persistent_config<$config>()};" \
  bench/gemm_bench.cpp > "$work/gemm_bench.cu"
grep -q "persistent_config<$config>()};" "$work/gemm_bench.cu" || {
  echo "gemm-variant: bench/gemm_bench.cpp's kConfigs list was not found" >&2
  exit 1
}
"$nvcc" -DIRIS_WGMMA=1 -D__HIP_PLATFORM_NVIDIA__ -I"$generated" -I"$include" -I"$build/runtime/generated" \
  -isystem="$build/iris_hip_include" -O2 -DNDEBUG --generate-code=arch=compute_90a,code=[compute_90a,sm_90a] \
  -Xcompiler=-fPIC --expt-relaxed-constexpr -include "$include/iris/hip_compat.h" -std=c++20 -Xptxas -v \
  -x cu -c "$work/gemm_bench.cu" -o "$work/gemm_bench.o" 2> "$work/ptxas.txt" || {
  cat "$work/ptxas.txt" >&2
  exit 1
}
# Each image of the kernel (launch_gpu.hpp's Image: 0 usual, 1 boxes, 2 no_copier) per element type.
awk '/Compiling entry.*matmul_persistent/ {
       match($0, /Float16LikeIXadL_ZNS0_[0-9]+float_to_[a-z0-9]+/); type = substr($0, RSTART + 33, RLENGTH - 33)
       match($0, /ImageE[0-9]/); image = substr($0, RSTART + 6, 1); want = 3; next }
     want && /spill stores/ { spills = $5; want--; next }
     want && /Used [0-9]+ registers/ { match($0, /Used [0-9]+/); printf "%s image %s: %s registers, %s bytes of spill stores\n", type, image, substr($0, RSTART + 5, RLENGTH - 5), spills; want = 0 }' \
  "$work/ptxas.txt"
c++ -fPIC -O2 -shared -o "$out" "$work/gemm_bench.o" -L"$(dirname "$(dirname "$nvcc")")/targets/x86_64-linux/lib" \
  "$build/runtime/libiris_runtime_gpu.a" -lcudadevrt -lcudart_static -lrt -lpthread -ldl
echo "gemm-variant: $out (persistent $config, headers $include)"
