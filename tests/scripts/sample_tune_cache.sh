#!/usr/bin/env bash
# sample_gemm's autotuned mode keys its choice by the shape and the ranks:
# IRIS_TUNE_CACHE's file gets one line a shape, with exactly that key, and a
# second run finds every key there (tuning nothing, the file unchanged).
# Usage: sample_tune_cache.sh SAMPLE_GEMM
source "$(dirname "$0")/checks.sh"
sample_gemm=$1
export IRIS_TUNE_CACHE=$work/cache

run() { "$sample_gemm" autotuned --ranks 2 --shape 100x70x45+3,70x90x7 --validate > /dev/null; }
run
check "the first run passes" test $? -eq 0
cut -f 2- "$IRIS_TUNE_CACHE" > "$work/keys"
printf '%s\n' "samples/gemm 100x70x45+3 on 2 ranks on the CPU emulation" \
  "samples/gemm 70x90x7 on 2 ranks on the CPU emulation" > "$work/expected"
check "the cache holds one key a shape, as the sample names it" cmp -s "$work/keys" "$work/expected"
cp "$IRIS_TUNE_CACHE" "$work/first"
run
check "a second run finds every key (the file unchanged)" cmp -s "$IRIS_TUNE_CACHE" "$work/first"

checks_done
