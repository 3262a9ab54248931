#!/usr/bin/env bash
# Packs the installed Iris package of a build tree (cmake --install, stripped)
# into one xz tarball, for a machine that builds against it without Iris's own
# build: a GPU machine whose torch is a pip wheel, where scripts/python-check.sh
# builds iris_torch (docs/gpu.md). Unpacked, the folder iris-package/ holds the
# package with what a machine without Debian's packages lacks: the HIP headers
# (the package links them from /usr/include/hip) and the libraries irisc loads
# beyond the C and C++ runtimes (libfmt), in iris-package/lib.
#   scripts/package-bundle.sh OUT.tar.xz
# Environment: BUILD_DIR (default build), built first (scripts/build.sh).
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: scripts/package-bundle.sh OUT.tar.xz" >&2
  exit 2
fi
out=$(realpath -m "$1")
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
package=$stage/iris-package
cmake --install "$build" --prefix "$package" --strip >/dev/null
# The HIP headers, copied where the package has its link to them.
for link in "$package"/include/iris/hip_include/hip; do
  [ -L "$link" ] || continue
  target=$(readlink -f "$link")
  rm "$link"
  cp -rL "$target" "$link"
done
# What irisc loads besides glibc and the C++ runtime.
while read -r library; do
  cp -L "$library" "$package/lib/"
done < <(ldd "$package/bin/irisc" | awk '$3 ~ /^\// && $1 !~ /^(libc|libm|libstdc\+\+|libgcc_s|ld-linux)/ { print $3 }')
tar -C "$stage" -cJf "$out" iris-package
echo "package-bundle: $(du -h "$out" | cut -f1) in $out"
