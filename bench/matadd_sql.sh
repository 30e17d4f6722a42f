#!/bin/sh
# bench/matadd_sql.sh — gpu_matadd vs the plain SQL reference query on a
# 1080 x 1920 pair (the seeds' small size), median of 5 runs each, in the
# default config (CPU below cpu_max_rows) and forced onto the GPU.
#
#   SQLITE3=sqlite3 sh bench/matadd_sql.sh [rows cols] [--csv FILE]
#
# Every result is checked, untimed: gpu_matadd must give the reference's
# cells, each v equal (A + B rounded once is what both compute), and the same
# count; a forced run must report the GPU path when a GPU is usable.  A
# mismatch prints FAIL and exits 1.  The CSV has one row per query: the
# median wall time and the median CPU time (user + sys) of the process.
set -eu
cd "$(dirname "$0")/.."
SQLITE3=${SQLITE3:-sqlite3}
LIB=${GPUAGG_LIB:-./libgpuagg}
CSV=
ROWS=1080 COLS=1920 n=0
while [ $# -gt 0 ]; do
  case $1 in
    --csv) CSV=$2; shift 2 ;;
    *) if [ $n = 0 ]; then ROWS=$1; else COLS=$1; fi; n=$((n + 1)); shift ;;
  esac
done
DB=$(mktemp /tmp/matadd_sql.XXXXXX)
trap 'rm -f "$DB"' EXIT INT TERM

"$SQLITE3" "$DB" <<SQL
create table a(i integer, j integer, v real);
create table b(i integer, j integer, v real);
insert into a select x.value, y.value, (random() % 1000000 + 1000003) / 997.0 from generate_series(0, $ROWS - 1) x, generate_series(0, $COLS - 1) y;
insert into b select x.value, y.value, (random() % 1000000 + 1000003) / 983.0 from generate_series(0, $ROWS - 1) x, generate_series(0, $COLS - 1) y;
SQL

REF="select i, j, sum(v) as v from (select i, j, v from a union all select i, j, v from b) group by i, j"
# both read every cell's value (sum(v)), as a user of the result would
Q_GPU="select count(*), json_extract(gpu_matadd_info(), '\$.path'), sum(v) from gpu_matadd('a', 'b');"
Q_REF="select count(*), 'sql', sum(v) from ($REF);"
FORCE="select gpuagg_config('device', 'gpu'), gpuagg_config('cpu_max_rows', '0');"
# both sides into indexed temp tables, then one join (a join on the bare
# subquery would scan it once per row)
CHECK="create temp table r(i, j, v, primary key (i, j)) without rowid;
insert into r $REF;
create temp table g(i, j, v, primary key (i, j)) without rowid;
insert into g select i, j, v from gpu_matadd('a', 'b');
select (select count(*) from r) || '|' || (select count(*) from g) || '|' || (select count(*) from g join r using (i, j) where g.v is not r.v);"
GPU=$("$SQLITE3" :memory: ".load $LIB" "select json_extract(gpuagg_info(), '\$.gpu_usable')" 2>/dev/null || echo 0)

[ -n "$CSV" ] && echo "query,rows,cols,median_s,median_cpu_s,count,path,checked" >"$CSV"
fail=0
# time_query LABEL CONFIG-SQL QUERY: the median of 5 "real" times, then the
# check (untimed, same config)
time_query() {
  out=$( { printf '.load %s\n%s\n.timer on\n' "$LIB" "$2"
           for k in 1 2 3 4 5; do printf '%s\n' "$3"; done; } |
         "$SQLITE3" "$DB" 2>&1 )
  echo "$out" | grep -q 'rror' && { echo "$1: error: $out" >&2; exit 1; }
  t=$(echo "$out" | sed -n 's/^Run Time: real \([0-9.]*\).*/\1/p' | sort -n | sed -n 3p)
  # user + sys: the process's CPU time, which the neighbours' load leaves out
  c=$(echo "$out" | sed -n 's/^Run Time: real [0-9.]* user \([0-9.]*\) sys \([0-9.]*\).*/\1 \2/p' |
      awk '{ printf "%.6f\n", $1 + $2 }' | sort -n | sed -n 3p)
  info=$(echo "$out" | grep -v '^Run Time' | tail -1)
  count=$(echo "$info" | cut -d'|' -f1) path=$(echo "$info" | cut -d'|' -f2)
  chk=$(printf '.load %s\n%s\n%s\n' "$LIB" "$2" "$CHECK" | "$SQLITE3" "$DB" 2>&1 | tail -1)
  ref_n=${chk%%|*} rest=${chk#*|}
  got_n=${rest%%|*} diff=${rest#*|}
  checked="cells=reference"
  if [ "$count" != "$ref_n" ] || [ "$got_n" != "$ref_n" ] || [ "$diff" != 0 ]; then
    echo "FAIL: $1: count $count (gpu_matadd $got_n, reference $ref_n), $diff cells differ"
    checked=WRONG fail=1
  fi
  case "$1" in *forced*)
    if [ "$GPU" = 1 ] && [ "$path" != dense-gpu ]; then
      echo "FAIL: $1: forced run took path $path"; checked=WRONG fail=1
    fi ;;
  esac
  printf '%-28s %8.3f s (cpu %.3f s)   %s rows, path %s (%s)\n' "$1" "$t" "$c" "$count" "$path" "$checked"
  [ -n "$CSV" ] && echo "$1,$ROWS,$COLS,$t,$c,$count,$path,$checked" >>"$CSV"
  return 0
}

echo "gpu_matadd vs plain SQL, ${ROWS}x${COLS} doubles, median of 5 (seconds; load: $(cut -d' ' -f1-3 /proc/loadavg))"
time_query "reference SQL (GROUP BY)" "" "$Q_REF"
time_query "gpu_matadd (default)" "" "$Q_GPU"
time_query "gpu_matadd (forced gpu)" "$FORCE" "$Q_GPU"
exit $fail
