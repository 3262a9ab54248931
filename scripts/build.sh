#!/usr/bin/env bash
# Configures and builds the project into build/ (BUILD_DIR overrides),
# including the ThreadSanitizer builds of the runtime and two samples.
# Warnings are errors when CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
werror=OFF
[ "${CI:-}" = true ] && werror=ON
cmake -S . -B "$build" -G Ninja -DIRIS_WERROR=$werror -DIRIS_TSAN=ON >/dev/null
cmake --build "$build" --parallel "$(nproc)"
