#!/usr/bin/env bash
# test_cli.sh — gpuagg from the sqlite3 command-line shell ($SQLITE3):
# examples/cli_example.sql, .load, -cmd, the load_extension() SQL function,
# and numbers that .import brings in as TEXT.
set -u
SUITE=cli
. "$(dirname "$0")/lib.sh"
CHECKS="example load_dot load_cmd load_sql import_text"
if ! command -v "$SQLITE3" >/dev/null 2>&1; then
  for c in $CHECKS; do skip "$c" "no sqlite3 shell ($SQLITE3)"; done
  finish
fi
echo "# $("$SQLITE3" -version | cut -c1-40), $LIB.so"
tmp=$(mktemp -d /tmp/gpuagg_cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# the example, its .load pointed at the library under test
sed "s|^\.load \./libgpuagg|.load $LIB|" "$ROOT/examples/cli_example.sql" >"$tmp/ex.sql"
out=$(cd "$tmp" && "$SQLITE3" -batch <ex.sql 2>&1)
case $out in
  *rror*) bad example "$(printf '%s' "$out" | grep -i error | head -3)" ;;
  *) check example "$out" "0.99999999999999989  1.0" ;;
esac

out=$(printf '.load %s\nSELECT sum(x), gpu_sum(x) FROM (SELECT column1 AS x FROM (VALUES (1e100), (1.0), (-1e100)));\n' "$LIB" |
      "$SQLITE3" -batch 2>&1)
check load_dot "$out" "0.0|1.0"

out=$("$SQLITE3" -batch -cmd ".load $LIB" :memory: \
      "SELECT gpu_sum(x), typeof(gpu_sum(x)) FROM (SELECT column1 AS x FROM (VALUES (9223372036854775807), (1), (-1)))" 2>&1)
check load_cmd "$out" "9223372036854775807|integer"

out=$("$SQLITE3" -batch :memory: "SELECT load_extension('$LIB');" \
      "SELECT gpuagg_version(), gpu_max(x), typeof(gpu_max(x)) FROM (SELECT column1 AS x FROM (VALUES (5), (5.0)))" 2>&1)
check load_sql "$out" "|5|integer"

# .import makes TEXT columns; gpu_sum reads numeric text as sum() does
printf '0.1\n%.0s' 1 2 3 4 5 6 7 8 9 10 >"$tmp/v.csv"
# (into an existing table, so that the first line is data, not a header)
out=$(printf '.load %s\nCREATE TABLE v(x);\n.import --csv %s v\nSELECT typeof(min(x)), gpu_sum(x), sum(x) = 1.0 FROM v;\n' \
      "$LIB" "$tmp/v.csv" | (cd "$tmp" && "$SQLITE3" -batch 2>&1))
check import_text "$out" "text|1.0|0"
finish
