#!/usr/bin/env bash
# The consumer project of docs/build-integration.md (tests/consumer) built
# against this build of Iris the ways a user builds it. Every step starts from
# an empty folder under <work>; the project's own program checks its results
# against values computed on the host.
#
#   consumer_test.sh install    <iris-build> <work>   cmake --install into <work>/prefix
#   consumer_test.sh installed  <iris-build> <work> <name> run|compile [cmake args...]
#                                  configure and build against <work>/prefix into
#                                  <work>/<name>; run: run it with 1, 2 and 4 ranks
#   consumer_test.sh arch90     <iris-build> <work> [cmake args...]
#                                  configure the consumer for NVIDIA with CUDA_ARCHITECTURES 90:
#                                  the package must warn that wgmma needs 90a
#   consumer_test.sh project    <iris-build> <work> <name> <source> [cmake args...]
#                                  the same for the project in <source> (tests/amd/samples)
#   consumer_test.sh fused      <iris-build> <work> <name> run|compile [cmake args...]
#                                  the fused operations' project (tests/fused_consumer)
#                                  against <work>/prefix into <work>/<name>; run: run it
#                                  with 1, 2 and 4 ranks, unchecked and checked, and build
#                                  its target that must not compile, for the message
#   consumer_test.sh ccl        <iris-build> <work> <name> run|compile [cmake args...]
#                                  the collectives' project (tests/ccl_consumer), the
#                                  same way; run: 1, 2 and 4 ranks, unchecked and checked
#   consumer_test.sh nvshmem    <iris-build> <work> built|absent [cmake args...]
#                                  the nvshmem provider's project (tests/nvshmem_consumer);
#                                  built: configured with a wrong IRIS_NVSHMEM_HOME (it must
#                                  say so), then built (not run); absent: Iris was built
#                                  without NVSHMEM, and configuring must say that
#   consumer_test.sh python     <iris-build> <work> [cmake args...]
#                                  iris_torch (python/) built on its own against <work>/prefix,
#                                  as a GPU machine whose torch is a pip wheel builds it
#                                  (scripts/python-check.sh), and its test python.own_kernel run there
#   consumer_test.sh subproject <iris-build> <work>   the same, Iris added with add_subdirectory
#   consumer_test.sh rebuild    <iris-build> <work>   after a build, touch one file at a time
#                                  and check which build steps ninja would run
set -euo pipefail
mode=$1 iris_build=$2 work=$3
shift 3
iris_source=$(cd "$(dirname "$0")/../.." && pwd)
consumer=$iris_source/tests/consumer

fail() { echo "FAILED: $*" >&2; exit 1; }

fresh() { rm -rf "$1" && mkdir -p "$1"; }

# build <source> <build> [cmake args...]
build() {
  local source=$1 dir=$2
  shift 2
  cmake -S "$source" -B "$dir" -G Ninja "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; fail "configure $source"; }
  cmake --build "$dir" || fail "build $source"
}

# run_ranks <program> <line>: runs it with 1, 2 and 4 ranks; each run must
# print <line> with RANKS replaced by its number of ranks.
run_ranks() {
  local program=$1 line=$2
  for ranks in 1 2 4; do
    output=$("$program" "$ranks") || fail "$program $ranks: $output"
    echo "$output"
    [[ $output == "${line//RANKS/$ranks}" ]] || fail "unexpected output"
  done
}

run() { run_ranks "$1" "consumer: RANKS ranks, every element checked: ok"; }

# expect <file to touch> <steps that must run> <steps that must not> (regexes of
# ninja's step descriptions, separated by '|'), then builds again.
expect() {
  local touched=$1 must=$2 must_not=$3 plan
  touch "$touched"
  plan=$(ninja -C "$work/rebuild/build" -n -d explain 2>&1)
  echo "--- after touching $(basename "$touched"):"
  echo "$plan"
  IFS='|' read -ra wanted <<<"$must"
  for step in "${wanted[@]}"; do
    grep -Eq "^\[[0-9]+/[0-9]+\] $step" <<<"$plan" || fail "'$step' does not run after touching $touched"
  done
  IFS='|' read -ra unwanted <<<"$must_not"
  for step in "${unwanted[@]}"; do
    ! grep -Eq "^\[[0-9]+/[0-9]+\] $step" <<<"$plan" || fail "'$step' runs after touching $touched"
  done
  cmake --build "$work/rebuild/build" >/dev/null
}

run_fused() { run_ranks "$1" "fused: RANKS ranks, 48 calls, every element checked, 12 errors checked: ok"; }
run_ccl() { run_ranks "$1" "ccl: RANKS ranks: ok"; }

case $mode in
  install)
    fresh "$work/prefix"
    cmake --install "$iris_build" --prefix "$work/prefix"
    ;;
  installed)
    name=$1 action=$2
    shift 2
    fresh "$work/$name"
    build "$consumer" "$work/$name" -DCMAKE_PREFIX_PATH="$work/prefix" "$@"
    if [[ $action == run ]]; then run "$work/$name/consumer"; fi
    ;;
  fused)
    name=$1 action=$2
    shift 2
    fresh "$work/$name"
    build "$iris_source/tests/fused_consumer" "$work/$name" -DCMAKE_PREFIX_PATH="$work/prefix" \
      -DIRIS_SAMPLES_HOST="$iris_source/samples/host" "$@"
    if [[ $action == run ]]; then
      run_fused "$work/$name/fused_consumer"
      run_fused "$work/$name/fused_consumer_checked"
      # A call with float matrices does not compile, and says why.
      wanted="the fused operations take iris::bfloat16 matrices only"
      if output=$(cmake --build "$work/$name" --target fused_wrong_type 2>&1); then
        fail "fused_wrong_type compiled"
      fi
      grep -q "$wanted" <<<"$output" || { echo "$output"; fail "no '$wanted' in the compiler's errors"; }
      echo "fused_wrong_type: does not compile: $wanted"
    fi
    ;;
  ccl)
    name=$1 action=$2
    shift 2
    fresh "$work/$name"
    build "$iris_source/tests/ccl_consumer" "$work/$name" -DCMAKE_PREFIX_PATH="$work/prefix" "$@"
    if [[ $action == run ]]; then
      run_ccl "$work/$name/ccl_consumer"
      run_ccl "$work/$name/ccl_consumer_checked"
    fi
    ;;
  arch90)
    # Hopper without 90a: the package warns at configure time (no build).
    fresh "$work/arch90"
    cmake -S "$consumer" -B "$work/arch90" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" "$@" \
      -DCMAKE_CUDA_ARCHITECTURES=90 >"$work/arch90.configure.log" 2>&1 ||
      { cat "$work/arch90.configure.log"; fail "configure with CMAKE_CUDA_ARCHITECTURES=90"; }
    # (CMake wraps a warning's lines: joined again before the search.)
    tr -s ' \n' ' ' <"$work/arch90.configure.log" | grep -q "CUDA_ARCHITECTURES '90' targets Hopper" ||
      { cat "$work/arch90.configure.log"; fail "no warning about 90 without 90a"; }
    echo "CMAKE_CUDA_ARCHITECTURES=90: warned"
    ;;
  project)
    name=$1 source=$2
    shift 2
    fresh "$work/$name"
    build "$source" "$work/$name" -DCMAKE_PREFIX_PATH="$work/prefix" "$@"
    ;;
  nvshmem)
    action=$1
    shift
    source=$iris_source/tests/nvshmem_consumer
    args=(-DCMAKE_PREFIX_PATH="$work/prefix" -DIRIS_SAMPLES="$iris_source/samples" "$@")
    # expect_refusal <name> <message> [cmake args...]: configuring must fail with <message>.
    expect_refusal() {
      local name=$1 wanted=$2
      shift 2
      fresh "$work/$name"
      if cmake -S "$source" -B "$work/$name" -G Ninja "${args[@]}" "$@" >"$work/$name.configure.log" 2>&1; then
        fail "configured: $name"
      fi
      tr -s ' \n' ' ' <"$work/$name.configure.log" | grep -qF "$wanted" ||
        { cat "$work/$name.configure.log"; fail "no '$wanted' in $name's configure output"; }
      echo "$name: refused: $wanted"
    }
    if [[ $action == absent ]]; then
      expect_refusal nvshmem_absent "this Iris was built without NVSHMEM"
    else
      expect_refusal nvshmem_wrong_home "is not in IRIS_NVSHMEM_HOME '$work/no-nvshmem'" \
        -DIRIS_NVSHMEM_HOME="$work/no-nvshmem"
      fresh "$work/nvshmem"
      build "$source" "$work/nvshmem" "${args[@]}"
      [[ -x $work/nvshmem/multinode ]] || fail "no multinode program"
      echo "nvshmem: built $work/nvshmem/multinode"
    fi
    ;;
  python)
    fresh "$work/python"
    build "$iris_source/python" "$work/python" -DCMAKE_PREFIX_PATH="$work/prefix" "$@"
    ctest --test-dir "$work/python" -R '^python\.own_kernel$' --no-tests=error --output-on-failure ||
      fail "python.own_kernel in iris_torch built against the installed package"
    ;;
  subproject)
    fresh "$work/subproject/source"
    cat >"$work/subproject/source/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(superproject LANGUAGES CXX)
add_subdirectory($iris_source iris EXCLUDE_FROM_ALL)
add_subdirectory($consumer consumer)
CMAKE
    build "$work/subproject/source" "$work/subproject/build" -DIRIS_GPU=OFF
    run "$work/subproject/build/consumer/consumer"
    ;;
  rebuild)
    # A copy of the project, as the test touches its files.
    fresh "$work/rebuild"
    cp -R "$consumer" "$work/rebuild/source"
    build "$work/rebuild/source" "$work/rebuild/build" -DCMAKE_PREFIX_PATH="$work/prefix"
    [[ $(ninja -C "$work/rebuild/build" -n) == *"no work to do"* ]] || fail "a second build is not empty"
    kernel='irisc scale\.iris' other='irisc ring\.iris'
    main='Building CXX object CMakeFiles/consumer\.dir/main\.cpp\.o'
    expect "$work/rebuild/source/helpers.hip" "$kernel|$main" "$other"
    expect "$work/rebuild/source/ring.iris" "$other|$main" "$kernel"
    expect "$work/rebuild/source/main.cpp" "$main" "irisc "
    ;;
  *) fail "unknown mode $mode" ;;
esac
