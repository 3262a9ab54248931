#!/usr/bin/env bash
# Builds the front-end fuzzer (clang-19, libFuzzer + ASan + UBSan) into
# build-fuzz/ (FUZZ_BUILD_DIR overrides) and runs it for a bounded time.
#   scripts/fuzz.sh [seconds]    default 60
# Seeds: the samples, tests/valid and tests/diagnostics, copied into a fresh
# corpus directory (FUZZ_CORPUS keeps one between runs). Exits non-zero on any
# finding; the input that caused it is saved under build-fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${FUZZ_BUILD_DIR:-build-fuzz}

# Only the front end is needed: the GPU part stays off (and forgets any nvcc
# an earlier configure found).
cmake -S . -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DCMAKE_BUILD_TYPE=Fuzz -DIRIS_FUZZ=ON -DIRIS_GPU=OFF -UCMAKE_CUDA_COMPILER >/dev/null
cmake --build "$build" --target irisc_frontend_fuzzer --parallel "$(nproc)"

corpus=${FUZZ_CORPUS:-$(mktemp -d)}
[ -n "${FUZZ_CORPUS:-}" ] || trap 'rm -rf "$corpus"' EXIT
mkdir -p "$corpus" "$build/artifacts"
shopt -s nullglob
cp samples/*.iris runtime/include/iris/fused/*.iris tests/valid/*.iris tests/diagnostics/*.iris "$corpus"/

echo "== fuzzing the front end for ${seconds}s"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# libFuzzer exits non-zero (and set -e with it) on a crash, a sanitizer report,
# a leak, a timeout (-timeout seconds per input) or memory over -rss_limit_mb.
"$build/tests/fuzz/irisc_frontend_fuzzer" "$corpus" \
  -dict=tests/fuzz/iris.dict -max_total_time="$seconds" -timeout=5 \
  -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
  -artifact_prefix="$build/artifacts/"
echo "== fuzz: no findings in ${seconds}s"
