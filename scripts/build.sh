#!/usr/bin/env bash
# Configures the project into build/ (BUILD_DIR overrides) and builds the given
# targets, or everything: irisc, the runtime, samples, benchmarks, tests, the
# ThreadSanitizer builds and the AMD compile checks.
#   scripts/build.sh [--quiet] [target...]
# A target written `name?` is built when the configuration defines it (the GPU
# targets exist only where nvcc was found).
# --quiet prints a line at each quarter of the build instead of every step; the
# whole output goes to $build/build.log, and its end is printed on a failure.
#
# Every caller gets the same configuration, with warnings as errors: the main
# job, the test command and CI share one build tree, and a build for one never
# invalidates the other's (a flag that differs between them would change every
# compile command and rebuild the whole tree).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
quiet=false
if [ "${1:-}" = --quiet ]; then
  quiet=true
  shift
fi

cmake -S . -B "$build" -G Ninja -DIRIS_WERROR=ON -DIRIS_TSAN=ON >/dev/null
targets=()
for target in "$@"; do
  if [[ $target == *\? ]]; then
    target=${target%\?}
    # (grep reads all of it: an early exit would fail the pipe under pipefail)
    ninja -C "$build" -t targets all | grep "^$target:" >/dev/null || continue
  fi
  targets+=("$target")
done
((${#targets[@]})) && targets=(--target "${targets[@]}")
if ! $quiet; then
  cmake --build "$build" --parallel "$(nproc)" "${targets[@]}"
  exit
fi
log=$build/build.log
# Ninja's status lines start with [done/total].
if ! cmake --build "$build" --parallel "$(nproc)" "${targets[@]}" 2>&1 | tee "$log" | awk '
    /^ninja: no work to do/ { print "build: up to date"; fflush() }
    /^\[[0-9]+\/[0-9]+\]/ {
      split(substr($1, 2), step, "/"); done = step[1] + 0; total = step[2] + 0
      quarter = int(4 * done / total)
      if (quarter > shown) { shown = quarter; printf "build: %d of %d steps\n", done, total; fflush() }
    }'; then
  echo "build: failed; the end of $log:" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
