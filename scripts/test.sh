#!/usr/bin/env bash
# Every test: set up, build, run the CTest suite, then fuzz the front end for a
# bounded time (FUZZ_SECONDS, default 60; 0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
# The npm packages of the grammar test (grammar/package-lock.json, about a
# second); where npm is missing, ctest reports that test skipped.
if command -v npm >/dev/null; then npm ci --prefix grammar --no-audit --no-fund --loglevel=error; fi
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
if [ "${FUZZ_SECONDS:-60}" -gt 0 ]; then
  bash scripts/fuzz.sh "${FUZZ_SECONDS:-60}"
fi
