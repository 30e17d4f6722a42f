#!/usr/bin/env bash
# rowpath_ir.sh — instructions a row of gpu_sum(x) over sum(x) on the CPU
# path, for the extension as built at each given git revision (issue 13's row
# path; bench/RESULTS.md §5).
#
#   bench/rowpath_ir.sh [--rows N] [--csv FILE] REV...
#
# For each REV: `git archive REV` into a temporary folder, `make CUDA=0`
# there, then callgrind (valgrind --tool=callgrind: instruction counts are
# repeatable on a shared machine, unlike times) runs the sqlite3 CLI on a
# file table of N rows (default 1e6; sql_bench.py's data: reals
# ((i*2654435761) % 1000000007) * 1e-3, integers without the * 1e-3), one
# query per run: sum(x) and gpu_sum(x), REAL and INTEGER columns.  The whole
# process is counted (the load of the extension is the same for both
# queries, so the difference is the per-row work).  Valgrind reports no
# AVX-512, so engine/reduce/cpu_sum.c runs its AVX2 variant here.
# CSV columns: rev, kind, query, ir, ir_per_row, over_sum_per_row.
set -u
cd "$(dirname "$0")/.." || exit 2
ROWS=1000000
CSV=
REVS=()
while [ $# -gt 0 ]; do
  case $1 in
    --rows) ROWS=$2; shift 2 ;;
    --csv) CSV=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) REVS+=("$1"); shift ;;
  esac
done
[ ${#REVS[@]} -gt 0 ] || { echo "usage: bench/rowpath_ir.sh [--rows N] [--csv FILE] REV..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "SKIP: rowpath_ir needs valgrind"; exit 0; }
SQLITE3=${SQLITE3:-sqlite3}
TMP=$(mktemp -d /tmp/rowpath_ir.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
DB=$TMP/rows.db
"$SQLITE3" "$DB" "CREATE TABLE t_real(x); CREATE TABLE t_int(x);
  INSERT INTO t_real SELECT ((value * 2654435761) % 1000000007) * 1e-3 FROM generate_series(1, $ROWS);
  INSERT INTO t_int SELECT (value * 2654435761) % 1000000007 FROM generate_series(1, $ROWS);" || exit 1

ir() { # lib, query -> total instructions of the process
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$SQLITE3" "$DB" \
    ".load $1" "$2" 2>&1 >/dev/null | sed -n 's/.*I *refs: *//p' | tr -d ,
}

out="rev,kind,query,ir,ir_per_row,over_sum_per_row"
for rev in "${REVS[@]}"; do
  src=$TMP/src-$rev
  mkdir -p "$src"
  git archive "$rev" | tar -x -C "$src" || exit 1
  make -s -C "$src" CUDA=0 -j2 >/dev/null 2>&1 || { echo "FAIL: build of $rev" >&2; exit 1; }
  short=$(git rev-parse --short "$rev")
  for kind in real int; do
    base=$(ir "$src/libgpuagg" "SELECT sum(x) FROM t_$kind")
    for q in sum gpu_sum; do
      n=$([ $q = sum ] && echo "$base" || ir "$src/libgpuagg" "SELECT $q(x) FROM t_$kind")
      row=$(awk -v n="$n" -v b="$base" -v r="$ROWS" 'BEGIN{printf "%.1f,%.1f", n/r, (n-b)/r}')
      out="$out
$short,$kind,$q,$n,$row"
      echo "$short $kind $q: $n instructions, $row (a row, over sum() a row)"
    done
  done
done
[ -n "$CSV" ] && printf '%s\n' "$out" >"$CSV"
exit 0
