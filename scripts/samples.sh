# shellcheck shell=bash
# The runs of every sample that scripts/gpu-check.sh and scripts/bench-samples.sh
# make (sourced by both). An entry is a sample (samples/README.md), or
# sample.variant for a second command line of the same program, as in
# samples/CMakeLists.txt.
# shellcheck disable=SC2034 # used by the scripts that source this file
samples=(all_gather all_reduce atomic_counter message_passing message_passing.stress
         point_to_point atomics collectives barrier copy)

# sample_args ENTRY SIZES ATOMIC_SIZES STRESS_SIZES STRESS ROUNDS: the arguments
# of an entry after --ranks N. The barrier's work is ROUNDS rounds; the
# message_passing stress variant sends STRESS messages of each of STRESS_SIZES;
# atomic_counter and atomics run one program instance per 256 of ATOMIC_SIZES.
sample_args() {
  case $1 in
    barrier) echo "--rounds $6" ;;
    message_passing.stress) echo "--size $4 --stress $5" ;;
    atomic_counter | atomics) echo "--size $3" ;;
    *) echo "--size $2" ;;
  esac
}
