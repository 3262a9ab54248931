#!/usr/bin/env bash
# irisc leaves an output file that already holds what it would write alone (its
# time stamp too), so that Ninja's restat skips what depends on it, and rewrites
# one that differs.
#   unchanged_output.sh <irisc> <input.iris> <work folder>
set -euo pipefail
irisc=$1 input=$2 work=$3
mkdir -p "$work"
out=$work/unchanged.hpp
fail() { echo "FAILED: $*" >&2; exit 1; }

"$irisc" --emit=cpp -o "$out" "$input"
cp "$out" "$work/fresh.hpp"
touch -d "2001-01-01 00:00:00" "$out"
"$irisc" --emit=cpp -o "$out" "$input"
[[ $(stat -c %Y "$out") == $(date -d "2001-01-01 00:00:00" +%s) ]] || fail "the same output was written again"
cmp -s "$out" "$work/fresh.hpp" || fail "the output changed"

echo "// stale" >> "$out"
touch -d "2001-01-01 00:00:00" "$out"
"$irisc" --emit=cpp -o "$out" "$input"
cmp -s "$out" "$work/fresh.hpp" || fail "a stale output was not rewritten"
[[ $(stat -c %Y "$out") != $(date -d "2001-01-01 00:00:00" +%s) ]] || fail "the rewritten output kept its old time"
echo "unchanged output kept, changed output rewritten: ok"
