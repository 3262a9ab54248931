#!/usr/bin/env bash
# Fails when the build or the tests of a configured build tree run a program
# from a Debian package that scripts/setup.sh does not install, so that a fresh
# machine, which has only what setup.sh installs, can build and test.
#   scripts/check-packages.sh [--without PACKAGE] BUILD_DIR
# --without drops a name from setup.sh's list (how the test of this check shows
# that it fails when a name is missing).
#
# The programs: those configuration found (CMakeCache.txt), every command of
# the build (ninja -t commands) and of the tests (ctest --show-only), and what
# each compiler driver runs under them (its -### output: clang-19 runs
# clang-offload-bundler and lld for the AMD compile). A
# program belongs to the package that dpkg -S names for it; programs of no
# package (the project's own, nvcc from CUDA's installer) are not Debian's to
# install. A package is installed by setup.sh when setup.sh names it or a
# package that depends on it, or when it is Essential (on every Debian system).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
without=
if [ "${1:-}" = --without ]; then
  without=$2
  shift 2
fi
build=$(cd "${1:?usage: check-packages.sh [--without PACKAGE] BUILD_DIR}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# setup.sh's list: the words of its packages=( ... ) array, comments dropped.
sed -n '/^packages=(/,/^)/p' "$root/scripts/setup.sh" | sed -e 's/#.*//' -e 's/packages=(//' -e 's/)//' |
  tr -s ' \t' '\n' | grep -v '^$' | grep -vxF -e "$without" >"$work/named" || true

# Every command line: the build's, then the tests' (JSON arrays of arguments).
ninja -C "$build" -t commands >"$work/commands"
ctest --test-dir "$build" --show-only=json-v1 |
  python3 -c 'import json, shlex, sys
for test in json.load(sys.stdin)["tests"]:
    if test.get("command"): print(shlex.join(test["command"]))' >>"$work/commands"

# The programs that configuration found (FILEPATH entries of the cache that
# are executable files, libraries aside).
sed -n 's/^[A-Za-z0-9_]*:FILEPATH=\(.*\)$/\1/p' "$build/CMakeCache.txt" | while read -r path; do
  if [ -f "$path" ] && [ -x "$path" ] && [[ $path != *.so* && $path != *.a ]]; then echo "$path"; fi
done >"$work/programs"

# One pass over the commands, each split into its steps at ` && `: the
# program of every step (`cd DIR` and `:` aside) goes to programs; and, for
# what the compiler drivers run, one compile and one link of each driver (those
# with the most arguments: the AMD compile's offload flags) go to driver_runs,
# with the folder they run in.
python3 - "$work/commands" "$work/driver_runs" >>"$work/programs" <<'PY'
import shlex, sys
seen, best = set(), {}
for line in open(sys.argv[1]):
    directory = "."
    for step in line.rstrip("\n").split(" && "):
        try:
            words = shlex.split(step)
        except ValueError:  # a quote that a split step cut in two
            words = step.split()
        if not words or words[0] == ":":
            continue
        if words[0] == "cd":
            directory = words[1] if len(words) > 1 else directory
            continue
        if words[0] not in seen:
            seen.add(words[0])
            print(words[0])
        name = words[0].rsplit("/", 1)[-1]
        if "clang" in name or name.endswith(("g++", "gcc", "c++", "cc")):
            key = (words[0], "-c" in words)
            if len(words) > len(best.get(key, ("", []))[1]):
                best[key] = (directory, words)
with open(sys.argv[2], "w") as runs:
    for directory, words in best.values():
        print(shlex.join([directory] + words), file=runs)
PY
while read -r line; do
  eval "set -- $line"
  dir=$1
  shift
  # One line per program run, indented, its path quoted (clang) or not (gcc).
  (cd "$dir" && "$@" -### 2>&1) | sed -n 's/^ "\{0,1\}\([^" ]*\).*/\1/p' >>"$work/programs" || true
done <"$work/driver_runs"

# The package of each program that is a file on this machine.
: >"$work/owned"
sort -u "$work/programs" | while read -r program; do
  path=$(command -v "$program" 2>/dev/null || true)
  if [ -z "$path" ] || [ ! -f "$path" ]; then continue; fi
  real=$(readlink -f "$path")
  # Debian 12 merged /bin into /usr/bin, but dpkg still names some files by
  # their old path.
  for candidate in "$path" "$real" "${real#/usr}"; do
    if owner=$(dpkg-query -S "$candidate" 2>/dev/null | head -n 1); then
      echo "${owner%%:*} $program" >>"$work/owned"
      break
    fi
  done
done

# What installing setup.sh's list installs: the names and what they depend on.
# shellcheck disable=SC2046
apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances $(cat "$work/named") 2>/dev/null | grep -v '^ ' | tr -d '<>' >"$work/installed"
dpkg-query -W -f='${Package} ${Essential}\n' | awk '$2 == "yes" { print $1 }' >>"$work/installed"

missing=0
while read -r package program; do
  if ! grep -qxF "$package" "$work/installed"; then
    echo "check-packages: scripts/setup.sh does not name $package (it provides $program, which the build or the tests run)" >&2
    missing=1
  fi
done < <(sort -u "$work/owned")
if ((missing)); then
  exit 1
fi
sort -u "$work/owned" | awk '{ printf "  %-22s %s\n", $1, $2 }'
echo "check-packages: $(sort -u "$work/owned" | wc -l) programs of $(cut -d' ' -f1 "$work/owned" | sort -u | wc -l) Debian packages, all installed by scripts/setup.sh"
