#!/usr/bin/env bash
# Configures and builds the project into build/ (BUILD_DIR overrides).
# Warnings are errors when CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
werror=OFF
[ "${CI:-}" = true ] && werror=ON
cmake -S . -B "$build" -G Ninja -DIRIS_WERROR=$werror >/dev/null
cmake --build "$build" --parallel "$(nproc)"
