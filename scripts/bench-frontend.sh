#!/usr/bin/env bash
# Front-end benchmark: builds irisc, then times it on the typical kernel (also
# with an import of a HIP header, which starts irisc-import-hip) and on
# generated 1k/10k/100k-line files, checking them (the summary) and emitting
# C++ (bench/frontend_bench.py prints the table).
#   scripts/bench-frontend.sh [runs]     default 5 (more for small inputs)
# IRISC=path/to/irisc benchmarks that binary instead (nothing is built).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${IRISC:-}" ]; then
  if [ -f build/build.ninja ]; then cmake --build build --target irisc irisc-import-hip >/dev/null; else bash scripts/build.sh; fi
fi
python3 bench/frontend_bench.py "${IRISC:-build/compiler/irisc}" "${1:-5}"
