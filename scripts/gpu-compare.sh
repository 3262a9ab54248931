#!/usr/bin/env bash
# Before and after a change, on one GPU, side by side in one run: the copy
# benchmark (bench/copy_bench) and every sample's --bench (scripts/bench-samples.sh)
# from two build trees, alternated round by round so that both see the same
# machine, then bench/compare_runs.py's table of median times and ratios
# (change / baseline). For refactorings that must stay within noise.
#   scripts/gpu-compare.sh BASE_BUILD NEW_BUILD [rounds] [out-dir]
# Environment: SIZES, ATOMIC_SIZES, STRESS, ROUNDS, REPEATS, HEAP as for
# bench-samples.sh (defaults here: issue 5's sizes, smaller heap); COPY_REPEATS
# for copy_bench [10].
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
base=${1:?usage: gpu-compare.sh BASE_BUILD NEW_BUILD [rounds] [out-dir]}
new=${2:?usage: gpu-compare.sh BASE_BUILD NEW_BUILD [rounds] [out-dir]}
rounds=${3:-2}
out=${4:-gpu-compare}
mkdir -p "$out"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} SUFFIX=_gpu
export SIZES=${SIZES:-256,65536,4194304,67108864} ATOMIC_SIZES=${ATOMIC_SIZES:-256,65536,1048576}
export STRESS=${STRESS:-1000} ROUNDS=${ROUNDS:-1000} HEAP=${HEAP:-2147483648}
# run BUILD LOG: one round of every benchmark of one build.
run() {
  {
    echo "== copy_bench"
    "$1/bench/copy_bench" "${COPY_REPEATS:-10}"
    bash scripts/bench-samples.sh "$1"
  } >"$2" 2>&1 || echo "gpu-compare: a benchmark of $1 failed (see $2)" >&2
}
base_logs=() new_logs=()
for ((k = 1; k <= rounds; k++)); do
  echo "gpu-compare: round $k of $rounds"
  run "$base" "$out/base.$k.log"
  base_logs+=("$out/base.$k.log")
  run "$new" "$out/new.$k.log"
  new_logs+=("$out/new.$k.log")
done
python3 bench/compare_runs.py "${base_logs[@]}" -- "${new_logs[@]}" | tee "$out/compare.txt"
