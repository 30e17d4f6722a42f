# shellcheck shell=bash disable=SC2034
# tests/hosts/lib.sh — tiny reporter for the shell suites of tests/hosts/.
# Source it, set SUITE, call ok/bad/skip, end with finish.  Prints FAIL/SKIP
# lines (PASS with VERBOSE=1) and "RESULT <suite>: p passed, f failed, s skipped".
_p=0 _f=0 _s=0
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LIB=${GPUAGG_LIB:-$ROOT/libgpuagg}
SQLITE3=${SQLITE3:-sqlite3}
ok() { _p=$((_p + 1)); [ "${VERBOSE:-0}" = 1 ] && echo "PASS [$SUITE] $1"; return 0; }
bad() { _f=$((_f + 1)); echo "FAIL [$SUITE] $1: $2"; }
skip() { _s=$((_s + 1)); echo "SKIP: [$SUITE] $1 ($2)"; }
# check NAME TEXT NEEDLE: passes when TEXT contains the line fragment NEEDLE
check() {
  case $2 in *"$3"*) ok "$1" ;; *) bad "$1" "want '$3' in: $(printf '%s' "$2" | tail -c 400 | tr '\n' '|')" ;; esac
}
finish() {
  echo "RESULT $SUITE: $_p passed, $_f failed, $_s skipped"
  [ "$_f" -eq 0 ]
  exit
}
