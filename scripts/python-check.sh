#!/usr/bin/env bash
# Builds iris_torch (python/) on its own against an installed Iris package and
# the python3 on PATH (its torch, and the pybind11 headers torch ships, else
# Debian's pybind11-dev), then runs its tests under mpirun with 1, 2
# and 4 ranks, and test_ops.py also joined through torch.distributed (gloo;
# the processes started by python/tests/launch.py, as torchrun starts them),
# then the example of docs/python.md on 4 ranks, and prints a pass/fail table. Where torch has CUDA, the package
# is built for the GPU target (CUDA tensors; the Iris package must have it) and
# the ranks share the machine's GPUs; else for the CPU. A GPU machine gets the
# package from scripts/package-bundle.sh (docs/gpu.md); here it is
# `cmake --install build-cpu --prefix <prefix>`.
#   scripts/python-check.sh <iris prefix> [build folder, default build-python]
# Environment: RANKS (default "1 2 4"), TIMEOUT seconds per run (default 300),
# MPIRUN (default mpirun), MPIRUN_FLAGS (default --allow-run-as-root
# --oversubscribe --bind-to none), PYTHON (default python3).
set -uo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: scripts/python-check.sh <iris prefix> [build folder]" >&2
  exit 2
fi
prefix=$(realpath "$1") || exit 2
build=$(realpath -m "${2:-build-python}")
cd "$(dirname "$0")/.." || exit 2
python=$(command -v "${PYTHON:-python3}") || { echo "python-check: no ${PYTHON:-python3} on PATH" >&2; exit 2; }
ranks_list=${RANKS:-1 2 4}
limit=${TIMEOUT:-300}
mpirun=${MPIRUN:-mpirun}
read -r -a mpirun_flags <<< "${MPIRUN_FLAGS:---allow-run-as-root --oversubscribe --bind-to none}"
# The package's irisc may come with the libraries it needs in <prefix>/lib (package-bundle.sh).
export LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

torch_prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)') ||
  { echo "python-check: $python cannot import torch" >&2; exit 2; }
mkdir -p "$build"
echo "python-check: building iris_torch in $build against $prefix and $python"
if ! cmake -S python -B "$build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix;$torch_prefix" -DIRIS_TORCH_PYTHON="$python" \
     >"$build/configure.log" 2>&1; then
  cat "$build/configure.log"
  echo "python-check: configure failed" >&2
  exit 1
fi
grep "iris_torch:" "$build/configure.log"
if [ ! -f "$build/iris_torch/__init__.py" ]; then
  echo "python-check: the package is not built (see the line above)" >&2
  exit 1
fi
cmake --build "$build" >"$build/build.log" 2>&1 || { tail -n 40 "$build/build.log"; echo "python-check: build failed" >&2; exit 1; }

rows=()
failed=0
# run NAME RANKS SCRIPT [ARGS...]: one test under mpirun (under launch.py
# where NAME ends in _dist) and the time limit.
run() {
  local name=$1 ranks=$2 log="$build/$1.$2.log" status result
  shift 2
  # (PYTHONFAULTHANDLER: a crash prints the Python stack where it happened)
  if [[ $name == *_dist ]]; then
    PYTHONFAULTHANDLER=1 PYTHONPATH="$build" timeout --kill-after=10 "$limit" "$python" python/tests/launch.py "$ranks" "$@" >"$log" 2>&1
  else
    timeout --kill-after=10 "$limit" "$mpirun" "${mpirun_flags[@]}" -np "$ranks" \
      -x PYTHONPATH="$build:$build/examples/gemm_bias_relu" -x LD_LIBRARY_PATH -x PYTHONFAULTHANDLER=1 \
      "$python" "$@" >"$log" 2>&1
  fi
  status=$?
  case $status in
    0) result=PASS ;;
    124 | 137) result=TIMEOUT ;;
    *) result="FAIL($status)" ;;
  esac
  [ "$result" = PASS ] || failed=$((failed + 1))
  rows+=("$(printf '%-12s %5s  %-12s %s' "$name" "$ranks" "$result" "$(tail -n 1 "$log")")")
  printf '%s\n' "${rows[-1]}"
  [ "$result" = PASS ] || grep -v "^\[[^]]*\] \(\[ *[0-9]*\]\|\*\*\*\)" "$log" | sed 's/^/    | /' | tail -n 25
}
printf '%-12s %5s  %-12s %s\n' test ranks result "last line"
for ranks in $ranks_list; do
  run ops "$ranks" python/tests/test_ops.py tracing
done
for ranks in $ranks_list; do
  run ops_dist "$ranks" python/tests/test_ops.py torch.distributed
done
for ranks in $ranks_list; do
  run own_kernel "$ranks" python/tests/test_own_kernel.py
done
# The example of docs/python.md, on the 4 ranks the page runs it with, printing what the page shows.
run docs_example 4 python/tests/docs_example.py docs/python.md
if [ "$failed" -eq 0 ]; then
  echo "python-check: all ${#rows[@]} runs passed"
  exit 0
fi
echo "python-check: $failed of ${#rows[@]} runs FAILED (logs in $build)"
exit 1
