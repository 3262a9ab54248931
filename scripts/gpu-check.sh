#!/usr/bin/env bash
# Checks the GPU build on a machine with an NVIDIA GPU: the runtime smoke test, the
# tile library's unit tests (tests/tile, the same source as ctest's tile.unit), the
# host collectives' tests (tests/ccl_host: validation, and graph capture and replay;
# plain and checked) for 1, 2 and 4 ranks sharing the GPU, the fused operations'
# consumer project (tests/fused_consumer, built by ctest's package.fused.nvidia), then every GPU sample
# with --validate for 1, 2 and 4 ranks, as threads of one process (sample_<name>_gpu,
# run_threads) and as one process per rank under mpirun (sample_<name>_gpu_mpi,
# run_mpi; the collectives' validation too; WorldHandle), and the traces of the multinode
# sample built with TRACE (threads and mpirun) and of the fused operations'
# traced kernels (bench/fused_bench_traced), and the same untraced (bench/fused_bench) at every
# compiled tile shape, and two shared libraries holding the same kernel, loaded side by side
# (tests/gpu/two_libraries.cu). Prints a pass/fail table and exits
# non-zero if anything failed, timed out or is missing.
#
# It only runs programs of an existing build tree (made elsewhere with nvcc, see
# docs/gpu.md): no cmake or compiler is needed here, only the GPU driver and,
# for the MPI rows, Open MPI's mpirun.
#
# Environment: BUILD_DIR (default build), RANKS (default "1 2 4"), SIZES (default
# 1,1000,4097,65536), GEMM_SHAPES (gemm's --shape, default in scripts/samples.sh),
# TIMEOUT seconds per run (default 120; the log of a run that it ends says where
# its processes waited, scripts/run-limited.sh), MPIRUN (default mpirun),
# MPIRUN_FLAGS (default --allow-run-as-root --oversubscribe --bind-to none),
# NO_MPI=1 to skip the MPI rows; PYTHON_PACKAGE=<installed Iris package> adds the
# MPI row python_check: scripts/python-check.sh against it (iris_torch built and
# its tests run on RANKS, PYTHON_TIMEOUT seconds per run, default 300; the row's
# limit PYTHON_CHECK_LIMIT, default 7200). That row alone needs more than the
# GPU driver: cmake and ninja, nvcc and a C++ compiler, and a python3 whose torch
# has CUDA (python-check.sh says what it lacks). Logs go to $BUILD_DIR/gpu-check/.
#
# Where the build has the nvshmem provider's programs (target
# nvshmem_check_programs, docs/multi-node.md), the MPI rows end with them: the
# multinode sample and the collectives' validation as one node through NVSHMEM,
# as fake nodes of 2 and with every rank far, NVSHMEM's libraries from
# NVSHMEM_HOME (default: the nvidia-nvshmem-cu13 wheel of python3). ONLY=nvshmem
# runs those rows alone.
set -uo pipefail
package=${PYTHON_PACKAGE:+$(realpath -m "$PYTHON_PACKAGE")}  # (the caller's folder, before the cd)
cd "$(dirname "$0")/.." || exit 2

build=${BUILD_DIR:-build}
ranks_list=${RANKS:-1 2 4}
sizes=${SIZES:-1,1000,4097,65536}
limit=${TIMEOUT:-120}
mpirun=${MPIRUN:-mpirun}
read -r -a mpirun_flags <<< "${MPIRUN_FLAGS:---allow-run-as-root --oversubscribe --bind-to none}"
source scripts/samples.sh
# The arguments of a check after --ranks.
args_of() { echo "$(sample_args "$1" "$sizes" "$sizes" "$sizes" 200 200) --validate"; }
logs=$build/gpu-check
mkdir -p "$logs"

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no NVIDIA GPU visible (nvidia-smi -L failed)" >&2
  exit 2
fi
nvidia-smi -L

rows=()
failed=0

# run NAME MODE RANKS COMMAND...: runs one check under the time limit, records a row.
run() {
  local name=$1 mode=$2 ranks=$3
  shift 3
  local log="$logs/$name.$mode.$ranks.log" status result start end
  if [ ! -x "$1" ] && ! command -v "$1" >/dev/null 2>&1; then
    result=MISSING
    echo "missing: $1" > "$log"
    status=127
    start=0 end=0
  else
    start=$(date +%s.%N)
    scripts/run-limited.sh "$limit" "$@" > "$log" 2>&1
    status=$?
    end=$(date +%s.%N)
    case $status in
      0) result=PASS ;;
      124 | 137) result=TIMEOUT ;;
      *) result="FAIL($status)" ;;
    esac
  fi
  [ "$result" = PASS ] || failed=$((failed + 1))
  rows+=("$(printf '%-22s %-8s %5s  %-12s %8s' "$name" "$mode" "$ranks" "$result" \
             "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')")")
  printf '%s\n' "${rows[-1]}"
  [ "$result" = PASS ] || scripts/run-limited.sh --show "$log"
}

# The nvshmem provider's rows: one node through NVSHMEM, fake nodes of 2, every
# rank far (IRIS_RANKS_PER_NODE), for each world size of RANKS above 1. NVSHMEM
# reaches the GPUs of this host only (NVSHMEM_REMOTE_TRANSPORT=none: no network),
# and its NVLink multicast stays off (NVSHMEM_DISABLE_NVLS=1).
nvshmem_rows() {
  local sample=$build/tests/gpu/sample_multinode_gpu_nvshmem ccl=$build/tests/gpu/ccl_host_validation_gpu_nvshmem
  [ -x "$sample" ] || return 0
  local home=${NVSHMEM_HOME:-$(python3 -c 'import nvidia.nvshmem as m; print(m.__path__[0])' 2>/dev/null)}
  if [ -z "$home" ] || [ ! -d "$home/lib" ]; then
    # Without its libraries every row would fail at NVSHMEM's start: one clear row instead.
    echo "gpu-check: NVSHMEM's libraries not found (${home:+$home/lib: no such folder; }set NVSHMEM_HOME, or" \
         "install the nvidia-nvshmem-cu13 wheel for python3)" >&2
    failed=$((failed + 1))
    rows+=("$(printf '%-22s %-8s %5s  %-12s %8s' nvshmem_libraries nvshmem - MISSING 0.0)")
    printf '%s\n' "${rows[-1]}"
    return 0
  fi
  local env=(-x LD_LIBRARY_PATH="$home/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" -x NVSHMEM_REMOTE_TRANSPORT=none
             -x NVSHMEM_DISABLE_NVLS=1)
  local program ranks nodes
  for program in multinode ccl_validation; do
    for ranks in $ranks_list; do
      for nodes in 1 2 one_node; do
        # (ranks as one node through NVSHMEM: IRIS_TRANSPORT; a node of all ranks would be ipc's)
        [ "$ranks" -ge 2 ] && { [ "$nodes" = one_node ] || [ "$nodes" -lt "$ranks" ]; } || continue
        local team=(-x IRIS_TRANSPORT=nvshmem) mode=nvshmem
        [ "$nodes" = one_node ] || team=(-x IRIS_RANKS_PER_NODE="$nodes") mode=nvsh_rpn$nodes
        if [ "$program" = multinode ]; then
          run multinode "$mode" "$ranks" "$mpirun" "${mpirun_flags[@]}" -np "$ranks" "${env[@]}" "${team[@]}" \
            "$sample" --size 1,1000,4097 --validate
        else
          run ccl_validation "$mode" "$ranks" "$mpirun" "${mpirun_flags[@]}" -np "$ranks" "${env[@]}" "${team[@]}" "$ccl"
        fi
      done
    done
  done
}

echo
printf '%-22s %-8s %5s  %-12s %8s\n' check mode ranks result seconds
# Every other row.
all_rows() {
run smoke threads 2 "$build/tests/gpu/iris_gpu_smoke" --ranks 2
run smoke threads 4 "$build/tests/gpu/iris_gpu_smoke" --ranks 4
run checked_failure threads 2 "$build/tests/gpu/iris_gpu_smoke" --checked-failure
run abort threads 2 "$build/tests/gpu/iris_gpu_smoke" --abort
# A checked wait that nobody signals ends in a hang report (docs/debugging.md).
for ranks in $ranks_list; do
  run hang threads "$ranks" "$build/tests/gpu/iris_gpu_smoke" --hang --ranks "$ranks"
done
# A checked device barrier that one rank never reaches, likewise (2 ranks or more).
for ranks in $ranks_list; do
  [ "$ranks" -ge 2 ] && run barrier_hang threads "$ranks" "$build/tests/gpu/iris_gpu_smoke" --barrier-hang --ranks "$ranks"
done
# A kernel that reported and runs on is reported after World::kTrapGrace.
run report_without_end threads 1 "$build/tests/gpu/iris_gpu_smoke" --report-without-end
run tile_library threads 1 "$build/tests/tile/tile_unit_tests_gpu"
# The collectives' tests take their world sizes as arguments (threads) or mpirun's.
ccl_tests=(validation validation_checked graph graph_checked)
ccl_binary() { echo "$build/tests/gpu/ccl_host_$1_gpu$2"; }
for test in "${ccl_tests[@]}"; do
  for ranks in $ranks_list; do
    run "ccl_$test" threads "$ranks" "$(ccl_binary "$test" "")" "$ranks"
  done
done
# The fused operations back to back through one workspace, every element checked
# (tests/fused_consumer, built against the installed package by ctest's
# package.fused.nvidia): its world size is its argument.
for ranks in $ranks_list; do
  run fused_consumer threads "$ranks" "$build/tests/package/fused_nvidia/fused_consumer" "$ranks"
done
for name in "${samples[@]}"; do
  read -r -a args <<< "$(args_of "$name")"
  for ranks in $ranks_list; do
    run "$name" threads "$ranks" "$build/samples/sample_${name%%.*}_gpu" --ranks "$ranks" "${args[@]}"
  done
done
# Device traces (docs/debugging.md): the multinode sample built with TRACE, the
# trace of each run checked against its .iris sources (tests/trace/check_trace.py).
trace_check=(python3 tests/trace/check_trace.py --sources . --sources runtime/include --expect kernel --expect store
             --expect put_signal --expect wait_until --expect dot_loop --expect epilogue)
for ranks in $ranks_list; do
  run trace threads "$ranks" "${trace_check[@]}" --trace "$logs/trace.threads.$ranks.json" --ranks "$ranks" -- \
    "$build/tests/gpu/sample_multinode_gpu_traced" --ranks "$ranks" --size 1000,4097 --validate
done
# The fused operations' traced kernels (fused_bench_traced: iris_add_kernels TRACE),
# every operation validated; their spans name iris/fused/fused_gemm.iris.
for ranks in $ranks_list; do
  run trace_fused threads "$ranks" python3 tests/trace/check_trace.py --sources . --sources runtime/include \
    --expect kernel --expect dot_loop --expect epilogue --trace "$logs/trace_fused.threads.$ranks.json" --ranks "$ranks" -- \
    "$build/bench/fused_bench_traced" all_scatter all_scatter_split all_reduce reduce_scatter all_gather \
    all_gather_push --ranks "$ranks" --validate --shape 1024x1024x512 --tiles 128x256x64 --comm 2
done
# The same operations untraced, as iris::ops compiles them (at 128x256x64 a persistent kernel
# whose TMA copies a warpgroup of its own issues on sm_90a), at every compiled tile shape; at
# 1048x1056x512 tiles straddle two owners' rows and ranks differ in their columns, which the
# launch's iris_boxes_hold computes per rank.
for ranks in $ranks_list; do
  run fused threads "$ranks" "$build/bench/fused_bench" --ranks "$ranks" --validate --shape 1024x1024x512,1048x1056x512 \
    --comm 2
done
# Two shared libraries that hold the same kernel, loaded side by side (tests/gpu/two_libraries.cu).
run two_libraries threads 1 "$build/tests/gpu/iris_gpu_two_libraries" "$build/tests/gpu/libiris_gpu_library_a.so" \
  "$build/tests/gpu/libiris_gpu_library_b.so"
if [ "${NO_MPI:-0}" != 1 ]; then
  if ! command -v "$mpirun" >/dev/null 2>&1; then
    echo "gpu-check: $mpirun not found (set MPIRUN, or NO_MPI=1 to skip the MPI rows)" >&2
    failed=$((failed + 1))
  else
    for test in validation validation_checked; do
      for ranks in $ranks_list; do
        run "ccl_$test" mpi "$ranks" "$mpirun" "${mpirun_flags[@]}" -np "$ranks" "$(ccl_binary "$test" _mpi)"
      done
    done
    # run_mpi's world held open between calls (WorldHandle, iris_torch's world).
    for ranks in $ranks_list; do
      run handle mpi "$ranks" "$mpirun" "${mpirun_flags[@]}" -np "$ranks" "$build/tests/gpu/iris_gpu_handle_mpi"
    done
    # A checked wait that nobody signals, under mpirun: each rank reports its own hang.
    for ranks in $ranks_list; do
      run hang mpi "$ranks" "$mpirun" "${mpirun_flags[@]}" -np "$ranks" "$build/tests/gpu/iris_gpu_handle_mpi" --hang
    done
    for name in "${samples[@]}"; do
      read -r -a args <<< "$(args_of "$name")"
      for ranks in $ranks_list; do
        run "$name" mpi "$ranks" "$mpirun" "${mpirun_flags[@]}" -np "$ranks" \
          "$build/samples/sample_${name%%.*}_gpu_mpi" "${args[@]}"
      done
    done
    for ranks in $ranks_list; do
      run trace mpi "$ranks" "${trace_check[@]}" --trace "$logs/trace.mpi.$ranks.json" --ranks "$ranks" -- \
        "$mpirun" "${mpirun_flags[@]}" -np "$ranks" -x IRIS_TRACE "$build/tests/gpu/sample_multinode_gpu_traced_mpi" \
        --size 1000,4097 --validate
    done
    nvshmem_rows
  fi
fi
}
if [ "${ONLY:-}" = nvshmem ]; then
  nvshmem_rows
else
  all_rows
fi

# iris_torch, built against the installed Iris package PYTHON_PACKAGE names and
# the python3 on PATH (whose torch has CUDA), and its tests on the same ranks:
# scripts/python-check.sh, whose own table is in this row's log.
# (Its tests run under mpirun: skipped with the other MPI rows.)
if [ -n "$package" ] && [ "${NO_MPI:-0}" != 1 ] && [ "${ONLY:-}" != nvshmem ]; then
  # (limit: run's, for this call only)
  limit=${PYTHON_CHECK_LIMIT:-7200} run python_check mpi "$(tr ' ' ',' <<< "$ranks_list")" \
    env RANKS="$ranks_list" TIMEOUT="${PYTHON_TIMEOUT:-300}" MPIRUN="$mpirun" MPIRUN_FLAGS="${mpirun_flags[*]}" \
    scripts/python-check.sh "$package" "$logs/python"
fi

echo
echo "===================== summary ====================="
printf '%-22s %-8s %5s  %-12s %8s\n' check mode ranks result seconds
printf '%s\n' "${rows[@]}"
echo
if [ "$failed" -eq 0 ]; then
  echo "gpu-check: all ${#rows[@]} checks passed"
  exit 0
fi
echo "gpu-check: $failed of ${#rows[@]} checks FAILED (logs in $logs)"
exit 1
