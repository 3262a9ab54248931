#!/usr/bin/env bash
# The grammar test (tokenize.mjs) over every sample, valid test input and
# package module, or exit 77, which ctest reports as skipped, with the reason
# when Node.js or the npm packages are not there.
#   run.sh <irisc> <repository root>
set -euo pipefail
irisc=$1 root=$2
if ! command -v node >/dev/null; then
  echo "skipped: no node (Debian package nodejs, which scripts/setup.sh installs)"
  exit 77
fi
if [ ! -d "$root/grammar/node_modules/vscode-textmate" ] || [ ! -d "$root/grammar/node_modules/vscode-oniguruma" ]; then
  echo "skipped: no grammar/node_modules: run 'npm ci --prefix grammar' (scripts/test.sh does)"
  exit 77
fi
shopt -s nullglob
exec node "$root/grammar/test/tokenize.mjs" "$irisc" "$root" "$root"/samples/*.iris "$root"/tests/valid/*.iris \
  "$root"/tests/codegen/*.iris "$root"/runtime/include/iris/*.iris "$root"/runtime/include/iris/*/*.iris
