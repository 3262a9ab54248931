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
# Environment: BUILD_DIR (default build). The compile and link commands are
# the build tree's own (ninja -t commands), with the variant's headers.
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
# The build tree's own compile and link commands of the library (so that its
# flags are the build's), with the variant's source, headers and output.
commands=$(ninja -C "$build" -t commands bench/libiris_gemm_bench.so)
compile=$(grep -m1 -- ' -c .*gemm_bench\.cpp\.cu ' <<< "$commands")
link=$(grep -m1 -- '-o bench/libiris_gemm_bench\.so ' <<< "$commands")
if [ -z "$compile" ] || [ -z "$link" ]; then
  echo "gemm-variant: ninja has no compile and link commands of bench/libiris_gemm_bench.so in $build" >&2
  exit 1
fi
compile=${compile//-I$PWD\/runtime\/include /-I$include }
compile=${compile//-include $PWD\/runtime\/include\//-include $include\/}
compile=$(sed -E 's/ -MD -MT [^ ]+ -MF [^ ]+//; s/ -c [^ ]+ -o [^ ]+$//' <<< "$compile")
(cd "$build" && eval "$compile -Xptxas -v -c '$work/gemm_bench.cu' -o '$work/gemm_bench.o'") 2> "$work/ptxas.txt" || {
  cat "$work/ptxas.txt" >&2
  exit 1
}
# Each image of the kernel (launch_gpu.hpp's Image: 0 usual, 1 boxes, 2 no_copier) per element type.
awk '/Compiling entry.*matmul_persistent/ {
       match($0, /float_to_[a-z0-9]+/); type = substr($0, RSTART + 9, RLENGTH - 9)
       match($0, /ImageE[0-9]/); image = substr($0, RSTART + 6, 1); want = 1; next }
     want && /spill stores/ { spills = $5; next }
     want && /Used [0-9]+ registers/ {
       match($0, /Used [0-9]+/); want = 0
       printf "%s image %s: %s registers, %s bytes of spill stores\n", type, image, substr($0, RSTART + 5, RLENGTH - 5), spills }' \
  "$work/ptxas.txt"
link=$(sed -E "s#-o bench/libiris_gemm_bench\.so [^ ]+\.o #-o '$out' '$work/gemm_bench.o' #; s/ -Wl,-soname,[^ ]+//; s/ && :\$//; s/^: && //" <<< "$link")
(cd "$build" && eval "$link")
echo "gemm-variant: $out (persistent $config, headers $include)"
