#!/usr/bin/env bash
# Installs, with apt-get, every Debian 12 package the project needs that is
# not installed yet. Safe to run again: it does nothing when all are present.
# The test setup.packages (scripts/check-packages.sh) fails when the build or
# the tests run a program of a package that this list does not install.
#   scripts/setup.sh             the packages of the build and the tests
#   scripts/setup.sh --pictures  also picture_packages: Chromium, in which
#                                editor/screenshot/render.mjs renders the pictures
#                                of editor/vscode/README.md (about 400 MB; neither
#                                CI nor scripts/main.sh and test.sh ask for it)
set -euo pipefail

packages=(
  cmake ninja-build g++ git python3
  # LLVM 19: Support (SourceMgr, command line) for irisc; Clang LibTooling
  # (libclang-cpp, Clang's CMake package) for irisc-import-hip, which reads imports; clang-19 with libFuzzer and sanitizers for the fuzz target; lld for AMD.
  llvm-19-dev libclang-19-dev libclang-cpp19-dev clang-19 lld-19 libclang-rt-19-dev
  # clang-offload-bundler, which clang-19 runs to make the fat objects of the AMD compile
  # and tests/amd/check_executable.py to read the code objects of the AMD programs;
  # llvm-readelf, llvm-objcopy and llvm-objdump (llvm-19, which llvm-19-dev brings too), with
  # which tests/amd reads and disassembles them; FileCheck for the generated-code tests
  # (tests/codegen) and the AMD disassembly (tests/amd).
  clang-tools-19 llvm-19 llvm-19-tools
  # What LLVM 19's CMake package links against, and the programs its find
  # modules record (pkg-config, xmllint), so that every machine configures alike.
  libzstd-dev zlib1g-dev libz3-dev libxml2-dev libffi-dev pkgconf libxml2-utils
  libfmt-dev doctest-dev
  # HIP headers (AMD and the NVIDIA platform) and runtime (libamdhip64.so, which the AMD
  # runtime links) and OpenMPI for the runtime; ROCm's device libraries (bitcode) for
  # compiling for AMD (the AMD runtime, tests/amd).
  libamdhip64-dev openmpi-bin libopenmpi-dev rocm-device-libs
  # Node.js for the grammar test (grammar/test): it tokenizes with the npm packages VS Code uses.
  # Not 'npm' as well: the nodejs of these machines (NodeSource's) holds npm and conflicts with
  # Debian's npm package; with Debian's own nodejs and no npm, scripts/test.sh installs no npm
  # packages and ctest reports the grammar test skipped.
  nodejs
  # The Python package iris_torch (python/, docs/python.md): a torch C++ extension for
  # Debian's python3 (torch 1.13, CPU), built against libtorch's CMake package and
  # pybind11's headers; CMake skips it when they are missing. Its pip install test
  # (python.pip_install) makes a venv (python3-venv) and builds with Debian's setuptools
  # and wheel, offline.
  python3-torch libtorch-dev pybind11-dev python3-venv python3-setuptools python3-wheel
)

# With --pictures only: the browser editor/screenshot/render.mjs drives (with the npm
# packages of editor/screenshot/package-lock.json) and the editor font of its pictures.
picture_packages=(chromium fonts-dejavu-core)
case "${1:-}" in
  --pictures) packages+=("${picture_packages[@]}") ;;
  "") ;;
  *) echo "usage: scripts/setup.sh [--pictures]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
