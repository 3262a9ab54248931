#!/usr/bin/env bash
# `pip install` of the folder iris_torch was built in, into a fresh venv that
# sees the system's packages (Debian's torch), then test_ops.py on 2 ranks run
# by the venv's python from another folder without PYTHONPATH, so that the
# iris_torch it imports is the installed copy (checked first).
#   pip_install.sh <python> <folder the package was built in> <work folder> <mpirun and its options...>
# pip builds in the folder it is given, so it is given a copy of the built one.
set -euo pipefail
python=$1 built=$2 work=$3
shift 3
tests=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work/source"
"$python" -m venv --system-site-packages "$work/venv"
cp -r "$built/pyproject.toml" "$built/setup.py" "$built/iris_torch" "$work/source/"
"$work/venv/bin/pip" install --quiet --no-index --no-build-isolation "$work/source"
rm -rf "$work/source"
cd "$work"
found=$(env -u PYTHONPATH "$work/venv/bin/python" -c "import iris_torch; print(iris_torch.__file__)")
case $found in
  "$work/venv/"*) echo "iris_torch installed at $found" ;;
  *) echo "iris_torch was imported from $found, not from the venv" >&2; exit 1 ;;
esac
env -u PYTHONPATH "$@" "$work/venv/bin/python" "$tests/test_ops.py"
