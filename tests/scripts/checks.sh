# What the script tests of this folder share (sourced): a scratch folder
# $work, removed at exit, and check WHAT CONDITION..., which counts and
# prints each check; checks_done prints the counts and fails if any failed.
set -u
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passes=0 failures=0
check() {
  local what=$1
  shift
  if "$@"; then
    echo "ok: $what"
    passes=$((passes + 1))
  else
    echo "FAILED: $what"
    failures=$((failures + 1))
  fi
}
checks_done() {
  echo "$passes passed, $failures failed"
  [ "$failures" -eq 0 ]
}
