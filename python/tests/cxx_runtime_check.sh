#!/usr/bin/env bash
# What check_cxx_runtime.cmake does with a library that links the C++ runtime
# shared (it passes) and one linked with -static-libstdc++ (it fails, naming
# the archive members, and removes the library).
#   cxx_runtime_check.sh <c++ compiler> <nm> <cmake> <check_cxx_runtime.cmake> <work folder>
set -uo pipefail
cxx=$1 nm=$2 cmake=$3 check=$4 work=$5
mkdir -p "$work" && cd "$work" || exit 2
cat > formats.cpp <<'CPP'
#include <sstream>
#include <string>
std::string formats(unsigned long n) { std::ostringstream s; s << n; return s.str(); }
CPP
check() {  # name, link flags...
  local name=$1
  shift
  "$cxx" -shared -fPIC formats.cpp -o "$name.so" -Wl,-Map="$name.map" "$@" || exit 2
  "$cmake" -DLIBRARY="$PWD/$name.so" -DMAP="$PWD/$name.map" -DNM="$nm" -P "$check" > "$name.out" 2>&1
}
if ! check shared; then
  cat shared.out
  echo "FAIL: a library with the shared C++ runtime was refused"
  exit 1
fi
if check static -static-libstdc++; then
  echo "FAIL: a library with a copy of libstdc++ passed"
  exit 1
fi
# (the message is wrapped at any space)
message=$(tr -s ' \n' ' ' < static.out)
for part in "holds a copy of libstdc++'s own code" "_ZNSo9_M_insertImEERSoT_" "libstdc++.a(" "needed by"; do
  if [[ $message != *"$part"* ]]; then
    cat static.out
    echo "FAIL: the message lacks: $part"
    exit 1
  fi
done
if [ -e static.so ]; then
  echo "FAIL: the refused library was left in place"
  exit 1
fi
echo "cxx runtime check: the shared runtime passes, a copy of libstdc++ is refused and named"
