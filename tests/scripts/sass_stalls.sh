#!/usr/bin/env bash
# scripts/sass-stalls.py on a hand-made ncu source page of four instructions,
# whose totals are worked out here: 21 samples, of which barrier 7, long_sb 6,
# wait 4 and 4 that no reason names; the (Not Issued) columns, which repeat a
# share of the same samples, count for nothing; a CSV without ncu's header is
# refused.
source "$(dirname "$0")/checks.sh"
sass_stalls=$(dirname "$0")/../../scripts/sass-stalls.py

cat > "$work/sass.csv" <<'CSV'
"Kernel Name","void kernel_entry<matmul>(int)",
"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","Instructions Executed","stall_barrier","stall_long_sb","stall_wait","stall_barrier (Not Issued)","stall_wait (Not Issued)"
"0x7f0000001000","      WARPGROUP.DEPBAR.LE gsb0, 0x1","10","9","100","7","0","3","7","2"
"0x7f0000001010","      @!P0  BRA 0x7f0000002000","6","6","100","0","6","0","0","0"
"0x7f0000001020","      HGMMA.64x256x16.F32.BF16 R24, gdesc[UR16].tnspB, R24","5","5","20","0","0","1","0","1"
"0x7f0000001030","      EXIT","0","0","20","0","0","0","0","0"
CSV
python3 "$sass_stalls" "$work/sass.csv" --top 2 > "$work/out"
check "runs" test $? -eq 0
check "counts the instructions and samples" grep -qx '4 instructions, 21 samples' "$work/out"
check "barrier first, 7 of 21" grep -qE '^barrier +7 +33\.3$' "$work/out"
check "long_sb 6 of 21" grep -qE '^long_sb +6 +28\.6$' "$work/out"
check "wait 4 of 21 (Not Issued not added)" grep -qE '^wait +4 +19\.0$' "$work/out"
check "the unnamed rest" grep -qE '^\(unnamed\) +4 +19\.0$' "$work/out"
check "the loop run 100 times" grep -qE '^ +100 +2 +16 +76\.2$' "$work/out"
check "the code run 20 times" grep -qE '^ +20 +2 +5 +23\.8$' "$work/out"
check "the top instruction and its reasons" \
  grep -qE '^00001000  WARPGROUP\.DEPBAR\.LE gsb0, 0x1 +10 +100  barrier 7, wait 3$' "$work/out"
check "--top 2 lists two" test "$(grep -c '^0000' "$work/out")" -eq 2

printf 'a,b\n1,2\n' > "$work/bad.csv"
python3 "$sass_stalls" "$work/bad.csv" > "$work/bad.out" 2>&1
check "a CSV without ncu's header is refused" test $? -ne 0
check "saying what it wants" grep -q "no header with 'Source'" "$work/bad.out"

checks_done
