#!/usr/bin/env bash
# The main job: set up, build irisc, and compile a sample.
# Code emission and the runtime are not wired up yet (issues 3 and 4): for now
# the job checks samples/all_gather.iris and prints what it found in it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
sample=${1:-samples/all_gather.iris}
echo "== irisc $sample"
./build/compiler/irisc "$sample"
